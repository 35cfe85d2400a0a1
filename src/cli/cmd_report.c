/* cmd_report.c — 'jsmf report' (placeholder until the report stage lands; says so and fails). */
#include "cli.h"

int cmd_report(int argc, char **argv)
{
    (void)argc, (void)argv;
    fprintf(stderr, "%s: not built yet in this version\n", cli_prog);
    return EXIT_FAIL;
}
