/* cmd_export.c — 'jsmf export' (placeholder until the export stage lands; says so and fails). */
#include "cli.h"

int cmd_export(int argc, char **argv)
{
    (void)argc, (void)argv;
    fprintf(stderr, "%s: not built yet in this version\n", cli_prog);
    return EXIT_FAIL;
}
