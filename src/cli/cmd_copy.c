/* cmd_copy.c — 'jsmf copy STORE DEST': a backup of a store at one checkpoint, also while an
 * ingest writes it (jsmf_store_copy), checked before it appears; DEST '-' streams it to stdout. */
#include <inttypes.h>
#include <string.h>

#include "cli.h"
#include "jsmf_store.h"

int cmd_copy(int argc, char **argv)
{
    const char *store = NULL, *dest = NULL;
    const cli_option options[] = {
        {CLI_OPT("STORE", 0, CLI_ARG, &store)},
        {CLI_OPT("DEST", 0, CLI_ARG, &dest)},
        {0},
    };
    int rc = cli_parse(options, argc, argv);
    if (rc)
        return rc;
    jsmf_store_stats st;
    jsmf_store_check_result cr;
    if ((rc = jsmf_store_copy(store, dest, &st, &cr)))
        return cli_fail(rc);
    if (!strcmp(dest, "-")) {
        cli_info("wrote %s to standard output (%" PRIu64 " bytes): the checkpoint of %" PRIu64
                 " documents and %u input records or a later one", store, st.bytes, st.docs,
                 st.n_inputs);
        return cli_finish_stdout();
    }
    if (!cli_quiet)
        jsmf_store_check_write(stderr, cli_prog, dest, &cr);
    cli_info("copied %s to %s: %" PRIu64 " bytes, the checkpoint of %" PRIu64 " documents and "
             "%u input records (fingerprint %016" PRIx64 ")", store, dest, st.bytes, st.docs,
             st.n_inputs, st.fingerprint);
    return EXIT_OK;
}
