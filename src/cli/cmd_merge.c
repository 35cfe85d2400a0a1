/* cmd_merge.c — 'jsmf merge OUT STORE...': combine stores built with the same vocabulary
 * (shards ingested anywhere) into a new store; C, counters and input records add. */
#include "cli.h"
#include "jsmf_store.h"

int cmd_merge(int argc, char **argv)
{
    const char *out = NULL, **in = NULL;
    uint32_t n = 0;
    const cli_option options[] = {
        {CLI_OPT("OUT", 0, CLI_ARG, &out)},
        {CLI_OPT("STORE", 0, CLI_ARGS, &in), .count = &n},
        {0},
    };
    int rc = cli_parse(options, argc, argv);
    if (rc)
        return rc;
    for (uint32_t i = 0; i < n; i++)
        cli_note_unchecked_store(in[i]);
    if ((rc = jsmf_store_merge(out, in, n)))
        return cli_fail(rc);
    cli_info("merged %u store%s into %s", n, n == 1 ? "" : "s", out);
    return EXIT_OK;
}
