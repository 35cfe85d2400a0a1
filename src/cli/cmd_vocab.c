/* cmd_vocab.c — 'jsmf vocab' (placeholder until the vocab stage lands; says so and fails). */
#include "cli.h"

int cmd_vocab(int argc, char **argv)
{
    (void)argc, (void)argv;
    fprintf(stderr, "%s: not built yet in this version\n", cli_prog);
    return EXIT_FAIL;
}
