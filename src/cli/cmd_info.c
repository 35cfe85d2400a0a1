/* cmd_info.c — 'jsmf info STORE [--json] [--check]': what a store holds
 * (jsmf_store_info_write), and with --check one timed read of C. */
#include <inttypes.h>
#include <stdlib.h>

#include "cli.h"
#include "jsmf_store.h"

/* --check: one timed read of C, reported on stderr. */
static int check_c(jsmf_store *s)
{
    jsmf_store_check_result r;
    double t0 = cli_now();
    int rc = jsmf_store_check(s, &r);
    double t = cli_now() - t0;
    if (!rc) {
        cli_info("%s: C read and checked: %" PRIu64 " entries summing to %.6f,",
                 jsmf_store_path(s), r.entries, r.sum);
        cli_info("  content digest %016" PRIx64 ", %.2f GB of store in %.2f s (%.2f GB/s)",
                 r.digest, r.bytes / 1e9, t, t > 0 ? r.bytes / 1e9 / t : 0.0);
    }
    return rc;
}

int cmd_info(int argc, char **argv)
{
    int json = 0, check = 0;
    const char *path = NULL;
    const cli_option options[] = {
        {CLI_OPT("STORE", 0, CLI_ARG, &path)},
        {CLI_OPT("--json", 0, CLI_FLAG, &json)},
        {CLI_OPT("--check", 0, CLI_FLAG, &check)},
        {0},
    };
    int rc = cli_parse(options, argc, argv);
    if (rc)
        return rc;
    jsmf_store *s;
    jsmf_store_stats st;
    jsmf_store_input *in = NULL;
    uint32_t n = 0;
    rc = jsmf_store_open(path, JSMF_STORE_RDONLY, &s);
    if (rc)
        return cli_fail(rc);
    if (!(rc = jsmf_store_stats_get(s, &st)))
        rc = jsmf_store_inputs(s, &in, &n);
    if (!rc && check)
        rc = check_c(s);
    jsmf_store_close(s);
    if (rc) {
        free(in);
        return cli_fail(rc);
    }
    jsmf_store_info_write(stdout, path, &st, in, n, json);
    free(in);
    return cli_finish_stdout();
}
