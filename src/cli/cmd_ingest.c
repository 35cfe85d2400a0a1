/* cmd_ingest.c — 'jsmf ingest STORE INPUT...': its options, then one jsmf_ingest_run (the store
 * created on first use with its vocabulary from --vocab or a counting pass, the inputs'
 * co-occurrence accumulated with checkpoints); the same command resumes an interrupted ingest. */

#include "cli.h"
#include "jsmf_ingest.h"

/* The counting pass's line as soon as it is done: the ingest that follows takes longer. */
static void on_counted(void *arg, const jsmf_vocab_stats *st)
{
    (void)arg;
    cli_progress_done();
    if (!cli_quiet)
        jsmf_ingest_vocab_write(stderr, cli_prog, st);
}

/* The rule options as rule text (jsmf_ingest_run_opts.rule), NULL when none was given. */
static const char *rule_text(char *buf, size_t n, uint64_t min_df, int min_df_given,
                             double max_df_frac, int frac_given, uint64_t max_words,
                             int max_words_given, int freeze, int unfreeze)
{
    size_t len = 0;
    buf[0] = 0;
    if (freeze)
        len += (size_t)snprintf(buf + len, n - len, "frozen ");
    if (unfreeze)
        len += (size_t)snprintf(buf + len, n - len, "grow ");
    if (min_df_given)
        len += (size_t)snprintf(buf + len, n - len, "min-df=%llu ", (unsigned long long)min_df);
    if (frac_given)
        len += (size_t)snprintf(buf + len, n - len, "max-df-frac=%.17g ", max_df_frac); /* exact */
    if (max_words_given)
        len += (size_t)snprintf(buf + len, n - len, "max-words=%llu ",
                                (unsigned long long)max_words);
    return len ? buf : NULL;
}

int cmd_ingest(int argc, char **argv)
{
    const char *store = NULL, **inputs = NULL;
    uint32_t n = 0;
    jsmf_ingest_run_opts o = {
        .ingest = {.mem = jsmf_mem_default(), .progress = cli_step_progress, .warn = cli_warn,
                   .mem_below_need = cli_mem_below_min()},
        .min_doc_len = 5, .dist = {.piece_bytes = cli_test_piece_bytes()}, .counted = on_counted};
    jsmf_ingest_opts *io = &o.ingest;
    uint64_t min_df = 5, max_words = 0;
    double max_df_frac = 0.5;
    int min_df_given = 0, frac_given = 0, max_words_given = 0, freeze = 0, unfreeze = 0;
    char rule[256];
    int hold = 0; /* JSMF_HOLD_*'s order */
    const cli_option options[] = {
        {CLI_OPT("STORE", 0, CLI_ARG, &store)},
        {CLI_OPT("INPUT", 0, CLI_ARGS, &inputs), .count = &n, .stdin_once = 1,
         .hint = "(a path, or '-' for stdin)"},
        {CLI_OPT("--vocab", 0, CLI_STRING, &o.vocab)},
        {CLI_OPT("--format", 0, CLI_CALL, &io->format), .call = cli_format_option},
        {CLI_OPT("--uci-vocab", 0, CLI_STRING, &io->uci_vocab)},
        {CLI_OPT("--min-doc-len", 0, CLI_U32, &o.min_doc_len), .given = &o.min_doc_len_given},
        {CLI_OPT("--mem", 0, CLI_MEM, &io->mem)},
        {CLI_OPT("--threads", 'j', CLI_INT, &io->threads)},
        {CLI_OPT("--force", 0, CLI_FLAG, &io->force)},
        {CLI_OPT("--shard-dir", 0, CLI_STRING, &o.dist.shard_dir)},
        {CLI_OPT("--min-df", 0, CLI_U64, &min_df), .given = &min_df_given, .min = 1},
        {CLI_OPT("--max-df-frac", 0, CLI_DOUBLE, &max_df_frac), .given = &frac_given,
         .range = "(0, inf)"},
        {CLI_OPT("--max-words", 0, CLI_U64, &max_words), .given = &max_words_given},
        {CLI_OPT("--freeze", 0, CLI_FLAG, &freeze)},
        {CLI_OPT("--unfreeze", 0, CLI_FLAG, &unfreeze)},
        {CLI_OPT("--hold", 0, CLI_CHOICE, &hold), .choices = "default|rows|docs|both"},
        {CLI_OPT("--accumulator", 0, CLI_CHOICE, &io->accumulator),
         .choices = "auto|hash|dense|docs"}, /* jsmf_ingest_opts.accumulator's order */
        {0},
    };
    jsmf_comm *c;
    jsmf_ingest_run_summary r;
    int rc = cli_parse(options, argc, argv);
    if (rc)
        return rc;
    cli_note_unchecked_store(store);
    if (freeze && (unfreeze || min_df_given || frac_given || max_words_given))
        return cli_usage_error("--freeze stops the vocabulary growing: it takes no --unfreeze, "
                               "--min-df, --max-df-frac or --max-words");
    o.rule = rule_text(rule, sizeof rule, min_df, min_df_given, max_df_frac, frac_given,
                       max_words, max_words_given, freeze, unfreeze);
    o.hold = (uint32_t)hold;
    if ((rc = cli_comm(&c)))
        return rc;
    rc = jsmf_ingest_run(store, inputs, n, &o, c, &r);
    cli_progress_done();
    if (rc)
        return cli_fail(rc);
    if (!cli_quiet)
        jsmf_ingest_run_write(stderr, cli_prog, store, io->mem, &r);
    return EXIT_OK;
}
