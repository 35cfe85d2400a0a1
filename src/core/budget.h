/* budget.h — the machine's memory as the budget rules read it (budget.c). */
#ifndef JSMF_CORE_BUDGET_H
#define JSMF_CORE_BUDGET_H

#include <stdint.h>

/* The machine's physical memory in bytes, 0 when the system does not say. */
uint64_t mem_physical(void);

/* The fit's default budget: half the machine's memory (at least 512 MiB; 2 GiB where the system
 * does not say). A fit is one process whose N-row blocks grow with N x K, and its plan refuses
 * before any work what does not fit (formats/fit.md, "Memory"): at N=800k, K=200 the least is
 * 8 GiB, which the ingest's cap of 4 GiB would refuse on any machine. */
uint64_t mem_default_fit(void);

#endif
