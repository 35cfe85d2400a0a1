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

int cmd_ingest(int argc, char **argv)
{
    const char *store = NULL, **inputs = NULL;
    uint32_t n = 0;
    jsmf_ingest_run_opts o = {
        .ingest = {.mem = jsmf_mem_default(), .progress = cli_step_progress, .warn = cli_warn,
                   .mem_below_need = cli_mem_below_min()},
        .min_doc_len = 5, .dist = {.piece_bytes = cli_test_piece_bytes()}, .counted = on_counted};
    jsmf_ingest_opts *io = &o.ingest;
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
        {CLI_OPT("--accumulator", 0, CLI_CHOICE, &io->accumulator),
         .choices = "auto|hash|dense|docs"}, /* jsmf_ingest_opts.accumulator's order */
        {0},
    };
    jsmf_comm *c;
    jsmf_ingest_run_summary r;
    int rc = cli_parse(options, argc, argv);
    if (rc || (rc = cli_comm(&c)))
        return rc;
    rc = jsmf_ingest_run(store, inputs, n, &o, c, &r);
    cli_progress_done();
    if (rc)
        return cli_fail(rc);
    if (!cli_quiet)
        jsmf_ingest_run_write(stderr, cli_prog, store, io->mem, &r);
    return EXIT_OK;
}
