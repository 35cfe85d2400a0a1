/* cmd_ingest.c — 'jsmf ingest STORE INPUT...': create the store on first use (vocabulary from
 * --vocab or a counting pass over the inputs), then accumulate the inputs' co-occurrence with
 * checkpoints; the same command resumes an interrupted ingest. */
#include <inttypes.h>
#include <stdlib.h>

#include "cli.h"
#include "jsmf_comm.h"
#include "jsmf_ingest.h"
#include "jsmf_io.h"
#include "jsmf_store.h"

typedef struct ingest_args {
    const char *store, *vocab, *uci_vocab, *shard_dir;
    const char **inputs;
    uint32_t n_inputs, min_doc_len, threads;
    int have_min_doc_len, force, accumulator;
    jsmf_format format;
    uint64_t mem;
} ingest_args;

/* --min-doc-len: also noted as given, for the check against an existing store. */
static int parse_min_doc_len(const cli_option *o, const char *v)
{
    ingest_args *a = o->field;
    uint64_t len;
    if (cli_parse_uint(o->name, v, 0, UINT32_MAX, &len))
        return EXIT_USAGE;
    a->have_min_doc_len = 1;
    a->min_doc_len = (uint32_t)len;
    return 0;
}

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
        {CLI_OPT("--min-doc-len", 0, CLI_CALL, a), .call = parse_min_doc_len},
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

static void progress(void *arg, const char *input, uint64_t done, uint64_t total)
{
    (void)arg;
    cli_progress_update(input, (double)done / 1e6, (double)total / 1e6, "MB");
}

static void vocab_progress(void *arg, const char *input, uint64_t done, uint64_t total)
{
    (void)arg, (void)input;
    cli_progress_update("vocabulary", (double)done / 1e6, (double)total / 1e6, "MB");
}

/* STORE opened, or created with its vocabulary (--vocab, or a counting pass over the inputs,
 * shared by the ranks under mpirun: c not NULL). */
static int open_store(const ingest_args *a, jsmf_comm *c, jsmf_store **s, uint64_t **df)
{
    jsmf_ingest_store_opts so = {a->vocab, a->min_doc_len, a->have_min_doc_len, a->format,
                                 a->uci_vocab, a->mem, cli_mem_below_min(), vocab_progress, NULL,
                                 NULL};
    jsmf_vocab_stats st;
    int rc = c ? jsmf_ingest_open_store_dist(c, a->store, a->inputs, a->n_inputs, &so, s, df, &st)
               : jsmf_ingest_open_store(a->store, a->inputs, a->n_inputs, &so, s, df, &st);
    cli_progress_done();
    if (!rc && st.words_kept)
        cli_info("vocabulary: %" PRIu64 " words kept of %" PRIu64 " seen in %" PRIu64
                 " documents", st.words_kept, st.words_seen, st.docs_counted);
    return rc;
}

static jsmf_ingest_opts ingest_opts(const ingest_args *a, uint64_t *df)
{
    return (jsmf_ingest_opts){.mem = a->mem, .threads = (int)a->threads, .force = a->force,
                              .format = a->format, .uci_vocab = a->uci_vocab,
                              .progress = progress, .accumulator = a->accumulator, .df = df,
                              .warn = cli_warn, .mem_below_need = cli_mem_below_min()};
}

/* Under mpirun: rank 0 opens (or creates) the store, all ranks ingest a share of the inputs,
 * rank 0 commits the sum. */
static int ingest_mpi(const ingest_args *a, jsmf_comm *c)
{
    int rank = jsmf_comm_rank(c), rc = JSMF_OK;
    jsmf_store *s = NULL;
    uint64_t *df = NULL;
    jsmf_ingest_target target;
    if (rank == 0)
        jsmf_ingest_target_note(a->store, &target);
    rc = open_store(a, c, &s, &df); /* a new store's counting pass shared by the ranks */
    free(df); /* the job plans by the store's vocabulary counts */
    jsmf_ingest_opts o = ingest_opts(a, NULL);
    jsmf_ingest_dist_opts d = {a->shard_dir, cli_test_piece_bytes()};
    jsmf_ingest_dist_summary r;
    if (!rc)
        rc = jsmf_ingest_dist(c, s, a->store, a->inputs, a->n_inputs, &o, &d, &r);
    cli_progress_done();
    if (rank == 0 && rc)
        jsmf_ingest_target_discard(a->store, &target, s);
    else if (rank == 0)
        jsmf_store_close(s);
    if (rc)
        return cli_fail(rc);
    if (r.restarted)
        cli_info("shards of an earlier job with other inputs or ranks were dropped");
    if (!cli_quiet)
        jsmf_ingest_summary_write(stderr, cli_prog, a->store, a->mem, &r.ingest);
    cli_info("%d ranks, %u pieces: ingest %.2f s, exchange %.2f s in %u rounds,",
             jsmf_comm_size(c), r.pieces, r.seconds_ingest, r.seconds_exchange, r.rounds);
    cli_info("  rank 0 sent %.1f MB, %.2f s in MPI; commit %.2f s", r.comm.bytes_sent / 1e6,
             r.comm.seconds, r.seconds_commit);
    return EXIT_OK;
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
    if (jsmf_comm_size(c) > 1)
        return ingest_mpi(&a, c);
    jsmf_store *s = NULL;
    uint64_t *df = NULL;
    jsmf_ingest_target target; /* a new store whose first ingest fails leaves nothing behind */
    jsmf_ingest_target_note(a.store, &target);
    if ((rc = open_store(&a, NULL, &s, &df))) {
        jsmf_ingest_target_discard(a.store, &target, s);
        return cli_fail(rc);
    }
    jsmf_ingest_opts o = ingest_opts(&a, df);
    jsmf_ingest_summary r;
    rc = jsmf_ingest_files(s, a.inputs, a.n_inputs, &o, &r);
    free(df);
    cli_progress_done();
    if (rc)
        jsmf_ingest_target_discard(a.store, &target, s);
    else
        jsmf_store_close(s);
    if (rc)
        return cli_fail(rc);
    if (r.inputs_repeated) /* a warning: shown with --quiet too */
        fprintf(stderr, "%s: warning: stdin repeated content that %s already held completely; "
                "a checkpoint had stored part of it before its end showed that, so it was "
                "completed again as a new occurrence (`jsmf info` lists both; ingest a file "
                "to have a repeat refused up front)\n", cli_prog, a.store);
    if (!cli_quiet)
        jsmf_ingest_summary_write(stderr, cli_prog, a.store, a.mem, &r);
    return EXIT_OK;
}
