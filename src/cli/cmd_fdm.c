/* cmd_fdm.c — 'jsmf fdm' (placeholder until the fdm stage lands; says so and fails). */
#include "cli.h"

int cmd_fdm(int argc, char **argv)
{
    (void)argc, (void)argv;
    fprintf(stderr, "%s: not built yet in this version\n", cli_prog);
    return EXIT_FAIL;
}
