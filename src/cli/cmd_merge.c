/* cmd_merge.c — 'jsmf merge' (placeholder until the merge stage lands; says so and fails). */
#include "cli.h"

int cmd_merge(int argc, char **argv)
{
    (void)argc, (void)argv;
    fprintf(stderr, "%s: not built yet in this version\n", cli_prog);
    return EXIT_FAIL;
}
