/* budget.h — the machine's memory as the budget rules read it (budget.c). */
#ifndef JSMF_CORE_BUDGET_H
#define JSMF_CORE_BUDGET_H

#include <stdint.h>

/* The machine's physical memory in bytes, 0 when the system does not say. */
uint64_t mem_physical(void);

#endif
