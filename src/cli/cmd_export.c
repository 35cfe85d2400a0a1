/* cmd_export.c — 'jsmf export STORE -o FILE [--format npy|mm]': the normalised C (entries sum
 * to 1) for other tools, plus FILE.vocab.txt (one word per line, row order). */
#include <string.h>

#include "cli.h"
#include "jsmf_store.h"

int cmd_export(int argc, char **argv)
{
    const char *store = NULL, *out = NULL;
    int format = 1; /* the index in "npy|mm" */
    const cli_option options[] = {
        {CLI_OPT("STORE", 0, CLI_ARG, &store)},
        {CLI_OPT("--format", 0, CLI_CHOICE, &format), .choices = "npy|mm"},
        {CLI_OPT("--output", 'o', CLI_STRING, &out), .required = 1},
        {0},
    };
    int rc = cli_parse(options, argc, argv);
    if (rc)
        return rc;
    cli_note_unchecked_store(store);
    int npy = format == 0;
    int to_stdout = !strcmp(out, "-");
    if (to_stdout && npy)
        return cli_usage_error("npy cannot be written to standard output; give -o FILE");
    jsmf_store *s;
    rc = jsmf_store_open(store, JSMF_STORE_RDONLY, &s);
    if (rc)
        return cli_fail(rc);
    rc = jsmf_store_export(s, out, npy);
    jsmf_store_close(s);
    if (rc)
        return cli_fail(rc);
    return to_stdout ? cli_finish_stdout() : EXIT_OK;
}
