/* cmd_merge.c — 'jsmf merge OUT STORE...': combine stores built with the same vocabulary
 * (shards ingested anywhere) into a new store; C, counters and input records add. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jsmf_store.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: jsmf merge OUT STORE... [--quiet]\n\n"
               "Create the store OUT holding the sum of the STOREs: their co-occurrence sums,\n"
               "counters, word statistics and input records. The STOREs must have identical\n"
               "vocabularies and minimum document length; OUT must not exist. The result equals\n"
               "ingesting all their inputs into one store.\n");
}

int cmd_merge(int argc, char **argv)
{
    const char *out = NULL;
    const char **in = calloc((size_t)argc, sizeof *in);
    uint32_t n = 0;
    if (!in)
        return cli_fail(jsmf_error(JSMF_ENOMEM, "out of memory"));
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            free(in);
            usage(stdout);
            return cli_finish_stdout();
        }
        if (cli_common_option(argv[i]))
            continue;
        if (argv[i][0] == '-' && argv[i][1]) {
            free(in);
            return cli_usage_error("unknown option '%s'", argv[i]);
        }
        if (!out)
            out = argv[i];
        else
            in[n++] = argv[i];
    }
    if (!out || n == 0) {
        free(in);
        return cli_usage_error("need OUT and at least one STORE");
    }
    int rc = jsmf_store_merge(out, in, n);
    free(in);
    if (rc)
        return cli_fail(rc);
    cli_info("merged %u store%s into %s", n, n == 1 ? "" : "s", out);
    return EXIT_OK;
}
