/* cmd_topics.c — 'jsmf topics' (placeholder until the topics stage lands; says so and fails). */
#include "cli.h"

int cmd_topics(int argc, char **argv)
{
    (void)argc, (void)argv;
    fprintf(stderr, "%s: not built yet in this version\n", cli_prog);
    return EXIT_FAIL;
}
