/* cmd_diff.c — 'jsmf diff OLD NEW': what changed between two models (jsmf_model_diff):
 * continuing, new and retired topics, sizes, rising and falling words, new words. */
#include "cli.h"
#include "jsmf_model.h"

static int parse_diff_args(int argc, char **argv, jsmf_diff_opts *o)
{
    jsmf_diff_opts_init(o);
    const cli_option options[] = {
        {CLI_OPT("OLD", 0, CLI_ARG, &o->old_name)},
        {CLI_OPT("NEW", 0, CLI_ARG, &o->new_name)},
        {CLI_OPT("--top", 'n', CLI_U32, &o->top)},
        {CLI_OPT("--format", 'f', CLI_CHOICE, &o->format), .choices = "text|tsv|json"},
        {0},
    };
    return cli_parse(options, argc, argv);
}

int cmd_diff(int argc, char **argv)
{
    jsmf_diff_opts o;
    int rc = parse_diff_args(argc, argv, &o);
    if (rc)
        return rc;
    jsmf_model *old = NULL, *nw = NULL;
    jsmf_diff *d = NULL;
    if (!(rc = jsmf_model_load(o.old_name, &old)) && !(rc = jsmf_model_load(o.new_name, &nw))) {
        cli_note_unchecked_model(o.old_name), cli_note_unchecked_model(o.new_name);
        rc = jsmf_model_diff(old, nw, &o, &d);
    }
    if (!rc)
        jsmf_diff_write(stdout, d, &o);
    jsmf_diff_free(d);
    jsmf_model_free(old), jsmf_model_free(nw);
    return rc ? cli_fail(rc) : cli_finish_stdout();
}
