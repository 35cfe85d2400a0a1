/* cmd_topics.c — 'jsmf topics': the topics of a model (top words, anchor, size p(z) = A 1,
 * alpha) as text for people, TSV for scripts or JSON with the A matrix; --matrix prints A. */
#include <string.h>

#include "cli.h"
#include "jsmf_model.h"

/* --rank prob|relevance[:LAMBDA]: the lambda of the ranking. */
static int parse_rank(const cli_option *opt, const char *v)
{
    double *lambda = opt->field;
    if (!strcmp(v, "prob")) {
        *lambda = 1;
    } else if (!strcmp(v, "relevance")) {
        *lambda = JSMF_TOPWORDS_LAMBDA;
    } else if (!strncmp(v, "relevance:", 10)) {
        return cli_parse_double("--rank lambda", v + 10, "[0, 1]", lambda);
    } else {
        return cli_usage_error("--rank: unknown value '%s' (prob, relevance[:LAMBDA])", v);
    }
    return 0;
}

static int parse_topics_args(int argc, char **argv, jsmf_topics_opts *o)
{
    o->top = 10, o->format = JSMF_TOPICS_TEXT, o->lambda = JSMF_TOPWORDS_LAMBDA;
    const cli_option options[] = {
        {CLI_OPT("MODEL", 0, CLI_ARG, &o->name)},
        {CLI_OPT("--top", 'n', CLI_U32, &o->top)},
        {CLI_OPT("--rank", 0, CLI_CALL, &o->lambda), .call = parse_rank},
        {CLI_OPT("--format", 'f', CLI_CHOICE, &o->format), .choices = "text|tsv|json"},
        {CLI_OPT("--level", 0, CLI_U32, &o->level)},
        {CLI_OPT("--matrix", 0, CLI_FLAG, &o->matrix)},
        {0},
    };
    return cli_parse(options, argc, argv);
}

int cmd_topics(int argc, char **argv)
{
    jsmf_topics_opts o = {0};
    int rc = parse_topics_args(argc, argv, &o);
    if (rc)
        return rc;
    jsmf_model *model = NULL;
    if ((rc = jsmf_model_load(o.name, &model)))
        return cli_fail(rc);
    cli_note_unchecked_model(o.name);
    rc = jsmf_model_topics_write(stdout, model, &o);
    jsmf_model_free(model);
    return rc ? cli_fail(rc) : cli_finish_stdout();
}
