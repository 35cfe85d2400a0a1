/* budget.c — the default memory budget (--mem) from the machine: a share of its physical memory
 * (fit's and ingest's default). */
#include "jsmf.h"

#include <unistd.h>

/* A quarter leaves the rest to the page cache that serves the store and to other processes; the
 * cap keeps a fit's peak under 4 GB on large machines (tools/bench/fit-results.md). */
#define BUDGET_SHARE 4
#define BUDGET_MIN (512ull << 20)
#define BUDGET_MAX (4ull << 30)

uint64_t jsmf_default_mem(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    uint64_t m = pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size / BUDGET_SHARE
                                       : 1ull << 30;
    return m < BUDGET_MIN ? BUDGET_MIN : m > BUDGET_MAX ? BUDGET_MAX : m;
}
