/* cmd_fit.c — 'jsmf fit' (placeholder until the fit stage lands; says so and fails). */
#include "cli.h"

int cmd_fit(int argc, char **argv)
{
    (void)argc, (void)argv;
    fprintf(stderr, "%s: not built yet in this version\n", cli_prog);
    return EXIT_FAIL;
}
