/* cmd_merge.c — 'jsmf merge OUT STORE...': combine stores built with the same vocabulary
 * (shards ingested anywhere) into a new store; C, counters and input records add. */
#include "cli.h"
#include "jsmf_store.h"

static const cli_option options[] = {{0}};

static const cli_spec spec = {
    "usage: jsmf merge OUT STORE... [--quiet]\n\n"
    "Create the store OUT holding the sum of the STOREs: their co-occurrence sums,\n"
    "counters, word statistics and input records. The STOREs must have identical\n"
    "vocabularies and minimum document length; OUT must not exist. The result equals\n"
    "ingesting all their inputs into one store.\n\n",
    options, NULL};

int cmd_merge(int argc, char **argv)
{
    int n, rc = cli_parse(&spec, argc, argv, &n);
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
