/* budget.c — the memory budget (--mem): its default from the machine (a share of its physical
 * memory, fit's and ingest's default), and the one parser every command's --mem goes through. */
#include "jsmf.h"
#include "budget.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

/* A quarter leaves the rest to the page cache that serves the store and to other processes; the
 * cap keeps a fit's peak under 4 GB on large machines (tools/bench/fit-results.md). */
#define BUDGET_SHARE 4
#define BUDGET_MIN (512ull << 20)
#define BUDGET_MAX (4ull << 30)

uint64_t mem_physical(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
}

uint64_t jsmf_mem_default(void)
{
    uint64_t phys = mem_physical();
    uint64_t m = phys ? phys / BUDGET_SHARE : 1ull << 30;
    return m < BUDGET_MIN ? BUDGET_MIN : m > BUDGET_MAX ? BUDGET_MAX : m;
}

uint64_t mem_default_fit(void)
{
    uint64_t phys = mem_physical();
    uint64_t m = phys ? phys / 2 : 2ull << 30;
    return m < BUDGET_MIN ? BUDGET_MIN : m;
}

/* The multiplier of a size suffix (K, M, G, T: powers of 1024, then an optional B or iB), or 0
 * when the text after the number is anything else. */
static double size_unit(const char *end)
{
    double mult = 1;
    switch (*end) {
    case 0: return 1;
    case 'k': case 'K': mult = 1024.0; break;
    case 'm': case 'M': mult = 1024.0 * 1024; break;
    case 'g': case 'G': mult = 1024.0 * 1024 * 1024; break;
    case 't': case 'T': mult = 1024.0 * 1024 * 1024 * 1024; break;
    default: return 0;
    }
    end++;
    if (*end == 'i' && end[1] == 'B')
        end++;
    if (*end == 'B' || *end == 'b')
        end++;
    return *end ? 0 : mult;
}

int jsmf_mem_parse(const char *opt, const char *text, int below_min, uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    double v = text && *text ? strtod(text, &end) : -1;
    double mult = end && end != text ? size_unit(end) : 0;
    if (errno || !(v >= 0) || !isfinite(v) || !mult || v * mult >= 0x1p64)
        return jsmf_error(JSMF_EINVAL, "%s expects a size like 512M or 2G, got '%s'", opt,
                          text ? text : "");
    uint64_t bytes = (uint64_t)(v * mult);
    if (bytes < JSMF_MEM_MIN && !below_min)
        return jsmf_error(JSMF_EINVAL, "%s %s is below the minimum, %lluM: smaller budgets "
                          "cannot be kept to", opt, text,
                          (unsigned long long)(JSMF_MEM_MIN >> 20));
    *out = bytes;
    return JSMF_OK;
}
