/* cmd_info.c — 'jsmf info' (placeholder until the info stage lands; says so and fails). */
#include "cli.h"

int cmd_info(int argc, char **argv)
{
    (void)argc, (void)argv;
    fprintf(stderr, "%s: not built yet in this version\n", cli_prog);
    return EXIT_FAIL;
}
