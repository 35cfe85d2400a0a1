/* cmd_ingest.c — 'jsmf ingest STORE INPUT...': its options, then one jsmf_ingest_run (the store
 * created on first use with its vocabulary from --vocab or a counting pass, the inputs'
 * co-occurrence accumulated with checkpoints); the same command resumes an interrupted ingest. */

#include "cli.h"
#include "jsmf_ingest.h"

typedef struct ingest_args {
    const char *store, *vocab, *uci_vocab, *shard_dir;
    const char **inputs;
    uint32_t n_inputs, min_doc_len, threads;
    int have_min_doc_len, force, accumulator;
    jsmf_format format;
    uint64_t mem;
} ingest_args;

static int parse_args(int argc, char **argv, ingest_args *a)
{
    a->mem = jsmf_default_mem();
    a->min_doc_len = 5;
    int accumulator = -1; /* the index in "hash|dense|docs"; -1: chosen by the ingest */
    const cli_option options[] = {
        {CLI_OPT("STORE", 0, CLI_ARG, &a->store)},
        {CLI_OPT("INPUT", 0, CLI_ARGS, &a->inputs), .count = &a->n_inputs, .stdin_once = 1,
         .hint = "(a path, or '-' for stdin)"},
        {CLI_OPT("--vocab", 0, CLI_STRING, &a->vocab)},
        {CLI_OPT("--format", 0, CLI_CALL, &a->format), .call = cli_format_option},
        {CLI_OPT("--uci-vocab", 0, CLI_STRING, &a->uci_vocab)},
        {CLI_OPT("--min-doc-len", 0, CLI_U32, &a->min_doc_len), .given = &a->have_min_doc_len},
        {CLI_OPT("--mem", 0, CLI_MEM, &a->mem)},
        {CLI_OPT("--threads", 'j', CLI_U32, &a->threads)},
        {CLI_OPT("--force", 0, CLI_FLAG, &a->force)},
        {CLI_OPT("--shard-dir", 0, CLI_STRING, &a->shard_dir)},
        {CLI_OPT("--accumulator", 0, CLI_CHOICE, &accumulator), .choices = "hash|dense|docs"},
        {0},
    };
    int rc = cli_parse(options, argc, argv);
    a->accumulator = accumulator + 1; /* jsmf_ingest_opts: 1 hash, 2 dense, 3 docs */
    return rc;
}

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
    ingest_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc;
    jsmf_comm *c;
    if ((rc = cli_comm(&c)))
        return rc;
    jsmf_ingest_run_opts o = {
        .ingest = {.mem = a.mem, .threads = (int)a.threads, .force = a.force, .format = a.format,
                   .uci_vocab = a.uci_vocab, .progress = cli_step_progress,
                   .accumulator = a.accumulator, .warn = cli_warn,
                   .mem_below_need = cli_mem_below_min()},
        .vocab = a.vocab, .min_doc_len = a.min_doc_len, .min_doc_len_given = a.have_min_doc_len,
        .dist = {a.shard_dir, cli_test_piece_bytes()}, .counted = on_counted};
    jsmf_ingest_run_summary r;
    rc = jsmf_ingest_run(a.store, a.inputs, a.n_inputs, &o, c, &r);
    cli_progress_done();
    if (rc)
        return cli_fail(rc);
    if (!cli_quiet)
        jsmf_ingest_run_write(stderr, cli_prog, a.store, a.mem, &r);
    return EXIT_OK;
}
