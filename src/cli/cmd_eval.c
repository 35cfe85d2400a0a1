/* cmd_eval.c — 'jsmf eval' (placeholder until the eval stage lands; says so and fails). */
#include "cli.h"

int cmd_eval(int argc, char **argv)
{
    (void)argc, (void)argv;
    fprintf(stderr, "%s: not built yet in this version\n", cli_prog);
    return EXIT_FAIL;
}
