/* cmd_ingest.c — 'jsmf ingest' (placeholder until the ingest stage lands; says so and fails). */
#include "cli.h"

int cmd_ingest(int argc, char **argv)
{
    (void)argc, (void)argv;
    fprintf(stderr, "%s: not built yet in this version\n", cli_prog);
    return EXIT_FAIL;
}
