/* cli_mpi.c — the job's communicator for the commands that run on several MPI ranks (ingest,
 * fit): opened on first use, closed when the command returns; ranks other than 0 stay quiet
 * except for their own errors, which name the rank. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jsmf_comm.h"

jsmf_comm *cli_world = NULL;

int cli_comm(jsmf_comm **out)
{
    if (!cli_world) {
        int rc = jsmf_comm_open(&cli_world);
        if (rc) {
            cli_world = NULL;
            return cli_fail(rc);
        }
        int rank = jsmf_comm_rank(cli_world);
        if (rank > 0) {
            static char prog[96];
            snprintf(prog, sizeof prog, "%s (rank %d)", cli_prog, rank);
            cli_prog = prog;
            cli_quiet = 1, cli_progress = 0;
        }
    }
    *out = cli_world;
    return 0;
}

void cli_comm_close(void)
{
    jsmf_comm_close(cli_world);
    cli_world = NULL;
}

uint64_t cli_test_piece_bytes(void)
{
    const char *e = getenv("JSMF_TEST_PIECE_BYTES"); /* tests: pieces of small files */
    return e && *e ? strtoull(e, NULL, 10) : 0;
}
