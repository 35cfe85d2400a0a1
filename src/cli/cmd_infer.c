/* cmd_infer.c — 'jsmf infer' (placeholder until the infer stage lands; says so and fails). */
#include "cli.h"

int cmd_infer(int argc, char **argv)
{
    (void)argc, (void)argv;
    fprintf(stderr, "%s: not built yet in this version\n", cli_prog);
    return EXIT_FAIL;
}
