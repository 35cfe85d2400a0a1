/* test_core_budget.c — ingest's default --mem (jsmf_mem_default) is a quarter of the machine's
 * memory as /proc/meminfo reports it, within [512 MiB, 4 GiB]; fit's (jsmf_fit_opts.mem_bytes)
 * is half of it, at least 512 MiB. */
#include <string.h>

#include "check.h"
#include "jsmf_fit.h"

static unsigned long long mem_total_bytes(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb * 1024;
}

int main(void)
{
    uint64_t m = jsmf_mem_default(), lo = 512ull << 20, hi = 4ull << 30;
    CHECK(m >= lo && m <= hi);
    unsigned long long total = mem_total_bytes();
    if (total) { /* MemTotal leaves out what the kernel reserved: within 5% of sysconf's */
        double want = total / 4.0;
        want = want < lo ? lo : want > hi ? hi : want;
        CHECK(m >= 0.95 * want && m <= 1.05 * want);
    }
    jsmf_fit_opts o;
    jsmf_fit_opts_init(&o, 10);
    CHECK(o.mem_bytes >= lo);
    if (total)
        CHECK(o.mem_bytes >= 0.95 * (total / 2.0 < lo ? lo : total / 2.0) &&
              o.mem_bytes <= 1.05 * (total / 2.0 < lo ? lo : total / 2.0));
    CHECK_DONE();
}
