/* cmd_merge.c — 'jsmf merge OUT STORE...': combine stores built with the same vocabulary
 * (shards ingested anywhere) into a new store; C, counters and input records add. */
#include "cli.h"
#include "jsmf_store.h"

static const cli_option options[] = {{0}};

int cmd_merge(int argc, char **argv)
{
    int n, rc = cli_parse(options, argc, argv, &n);
    if (rc)
        return rc < 0 ? cli_finish_stdout() : rc;
    if (n < 2)
        return cli_usage_error("need OUT and at least one STORE");
    const char *out = argv[1], **in = (const char **)argv + 2;
    n -= 1;
    if ((rc = jsmf_store_merge(out, in, (uint32_t)n)))
        return cli_fail(rc);
    cli_info("merged %d store%s into %s", n, n == 1 ? "" : "s", out);
    return EXIT_OK;
}
