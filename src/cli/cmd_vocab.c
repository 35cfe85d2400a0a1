/* cmd_vocab.c — 'jsmf vocab': one counting pass over the inputs, curation, and the vocabulary
 * file (formats/vocab.md) written to a file or stdout. */
#include <string.h>

#include "cli.h"
#include "jsmf_io.h"

typedef struct vocab_args {
    const char **inputs;
    uint32_t ninputs;
    const char *output, *stopwords;
    jsmf_read_opts ro;
    jsmf_vocab_opts vo;
    int stopwords_given, max_df_given;
} vocab_args;

static int parse_args(int argc, char **argv, vocab_args *a)
{
    a->ro = (jsmf_read_opts)JSMF_READ_OPTS_DEFAULT;
    a->vo = (jsmf_vocab_opts)JSMF_VOCAB_OPTS_DEFAULT;
    a->stopwords = "en";
    const cli_option options[] = {
        {CLI_OPT("INPUT", 0, CLI_ARGS, &a->inputs), .count = &a->ninputs, .stdin_once = 1},
        {CLI_OPT("--output", 'o', CLI_STRING, &a->output), .required = 1,
         .hint = "(or -o - for stdout)"},
        {CLI_OPT("--format", 0, CLI_CALL, &a->ro.format), .call = cli_format_option},
        {CLI_OPT("--uci-vocab", 0, CLI_STRING, &a->ro.uci_vocab), .alias = "--input-vocab"},
        {CLI_OPT("--stopwords", 0, CLI_STRING, &a->stopwords), .given = &a->stopwords_given},
        {CLI_OPT("--min-df", 0, CLI_U64, &a->vo.min_df)},
        {CLI_OPT("--max-df-frac", 0, CLI_DOUBLE, &a->vo.max_df_frac), .range = "(0, inf)",
         .given = &a->max_df_given},
        {CLI_OPT("--max-words", 0, CLI_U32, &a->vo.max_words)},
        {CLI_OPT("--min-doc-len", 0, CLI_U32, &a->vo.min_doc_len)},
        {CLI_OPT("--min-word-len", 0, CLI_U32, &a->ro.tok.min_len), .min = 1},
        {CLI_OPT("--max-word-len", 0, CLI_U32, &a->ro.tok.max_len)},
        {CLI_OPT("--threads", 0, CLI_INT, &a->ro.threads), .min = 1},
        {0},
    };
    int rc = cli_parse(options, argc, argv);
    if (rc)
        return rc;
    if (a->ro.tok.max_len < a->ro.tok.min_len)
        return cli_usage_error("--max-word-len is below --min-word-len");
    /* the format's own defaults (items: no stopwords, no max-df cut) where none was given */
    jsmf_format_vocab_defaults(a->ro.format, a->stopwords_given ? NULL : &a->stopwords,
                               a->max_df_given ? NULL : &a->vo.max_df_frac);
    return 0;
}

int cmd_vocab(int argc, char **argv)
{
    vocab_args a;
    memset(&a, 0, sizeof a);
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc;
    jsmf_vocab *stop = NULL;
    jsmf_vocab_stats st;
    if (!(rc = jsmf_stopwords_load(a.stopwords, &stop))) {
        a.vo.stopwords = stop;
        a.vo.warn = cli_warn;
        rc = jsmf_vocab_build(a.inputs, (uint32_t)a.ninputs, &a.ro, &a.vo, a.output,
                              cli_step_progress, NULL, &st);
    }
    cli_progress_done();
    jsmf_vocab_free(stop);
    if (rc)
        return cli_fail(rc);
    int status = strcmp(a.output, "-") ? EXIT_OK : cli_finish_stdout();
    if (!cli_quiet)
        jsmf_vocab_stats_write(stderr, cli_prog, &st);
    return status;
}
