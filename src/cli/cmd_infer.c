/* cmd_infer.c — 'jsmf infer': the topic mixture theta_d of every document of the inputs, by the
 * per-document convex fit of Fisher et al. 2020 App. E; batches of documents are read in order,
 * fitted in parallel and written in input order. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jsmf_eval.h"

typedef struct {
    const char *model;
    const char **inputs;
    uint32_t ninputs;
    jsmf_read_opts read;
    int jsonl, header;
    uint32_t threads, batch;
    jsmf_infer_opts infer;
} infer_args;

static int parse_output(const cli_option *o, const char *v)
{
    if (strcmp(v, "tsv") && strcmp(v, "jsonl"))
        return cli_usage_error("unknown --output '%s' (tsv, jsonl)", v);
    *(int *)o->field = !strcmp(v, "jsonl");
    return 0;
}

static int parse_args(int argc, char **argv, infer_args *a)
{
    jsmf_tokenizer tok = JSMF_TOKENIZER_DEFAULT;
    jsmf_infer_opts io = JSMF_INFER_OPTS_DEFAULT;
    a->read.tok = tok;
    a->read.warn = cli_warn;
    a->infer = io;
    a->batch = 4096;
    const cli_option options[] = {
        {CLI_OPT("--format", 0, "F", CLI_CALL, &a->read.format,
                 "input format: text, uci, ldac or auto (default auto)"),
         .call = cli_format_option},
        {CLI_OPT("--uci-vocab", 0, "F", CLI_STRING, &a->read.uci_vocab,
                 "vocabulary file of UCI input (default vocab.X.txt beside docword.X.txt)")},
        {CLI_OPT("--output", 'O', "O", CLI_CALL, &a->jsonl,
                 "tsv: 'doc_index<TAB>theta_1 ... theta_K' (default)\n"
                 "jsonl: {\"doc\":i,\"tokens\":n,\"oov\":m,\"theta\":[...]}"),
         .call = parse_output},
        {CLI_OPT("--header", 0, NULL, CLI_FLAG, &a->header,
                 "tsv: first line 'doc<TAB>t0<TAB>t1...'")},
        {CLI_OPT("--threads", 'j', "N", CLI_U32, &a->threads,
                 "OpenMP threads (default: all cores)")},
        {CLI_OPT("--iters", 0, "N", CLI_U32, &a->infer.max_iters,
                 "EM iterations per document at most (default 1000)")},
        {CLI_OPT("--tol", 0, "X", CLI_DOUBLE, &a->infer.tol,
                 "stop when the duality gap per token is below X (default 1e-5): the "
                 "log-likelihood per token is then within X of the optimum")},
        {CLI_OPT("--batch", 0, "N", CLI_U32, &a->batch,
                 "documents per parallel batch (default 4096)"),
         .min = 1},
        {0},
    };
    const cli_spec spec = {
        "usage: jsmf infer MODEL INPUT... [options]\n"
        "\n"
        "Topic mixture theta_d of each document of INPUT (a path, or - for stdin; zstd\n"
        "detected from content): the theta on the simplex maximising the document's\n"
        "likelihood sum_w n_w log sum_k theta_k B_wk (EM, certified by the duality\n"
        "gap). Words are looked up in the model's vocabulary; other words are ignored\n"
        "and counted. One line per document on stdout, in input order.\n"
        "\n"
        "options:\n",
        options,
        "Documents without in-vocabulary words get the uniform theta (1/K each) and are\n"
        "counted in the summary on stderr.\n"};
    int n, rc = cli_parse(&spec, argc, argv, &n);
    if (rc)
        return rc;
    if (n < 2)
        return cli_usage_error("needs a MODEL and at least one INPUT");
    a->model = argv[1];
    a->inputs = (const char **)argv + 2;
    a->ninputs = (uint32_t)n - 1;
    return 0;
}

/* A weight of theta: below 1e-7 (far inside the fit's tolerance) printed as 0, not as the
 * residue EM leaves on topics it drives towards zero. */
static void put_weight(const char *sep, double v)
{
    if (v < 1e-7)
        printf("%s0", sep);
    else
        printf("%s%.6g", sep, v);
}

static void write_theta(const infer_args *a, uint64_t index, const double *theta, uint32_t k,
                        uint64_t tokens, uint64_t oov)
{
    if (a->jsonl) {
        printf("{\"doc\":%llu,\"tokens\":%llu,\"oov\":%llu,\"theta\":[", (unsigned long long)index,
               (unsigned long long)tokens, (unsigned long long)oov);
        for (uint32_t t = 0; t < k; t++)
            put_weight(t ? "," : "", theta[t]);
        fputs("]}\n", stdout);
    } else {
        printf("%llu", (unsigned long long)index);
        for (uint32_t t = 0; t < k; t++)
            put_weight("\t", theta[t]);
        putchar('\n');
    }
}

/* Progress in MiB of the inputs when their sizes are known, else in documents. */
static void show_progress(const jsmf_docreader *r, uint64_t docs)
{
    double done, total;
    jsmf_docreader_bytes(r, &done, &total);
    if (total > 0)
        cli_progress_update("inferring", done / 1048576, total / 1048576, "MiB");
    else
        cli_progress_update("inferring", (double)docs, 0, "documents");
}

/* Above this share of out-of-vocabulary tokens, theta rests on too little of the text to pass
 * in silence (formats/outputs.md). A model's own corpus is typically 40-65% out of its
 * vocabulary, stopwords included (61% for examples/), so only a mismatch goes above it. */
#define OOV_WARN_SHARE 0.8

static void warn_oov(const char *model, uint32_t n_words, uint64_t in_vocab, uint64_t oov)
{
    uint64_t all = in_vocab + oov;
    if (!all || (double)oov <= OOV_WARN_SHARE * (double)all)
        return;
    char msg[1024];
    snprintf(msg, sizeof msg, "%.1f%% of the tokens (%llu of %llu) are outside the vocabulary of "
             "%s (%u words): theta rests on the other %.1f%%; is the text in the model's "
             "language and tokenised the same way? (warned above %.0f%%)",
             100.0 * (double)oov / (double)all, (unsigned long long)oov, (unsigned long long)all,
             model, n_words, 100.0 * (double)in_vocab / (double)all, 100 * OOV_WARN_SHARE);
    cli_warn(NULL, msg);
}

static int run_infer(const infer_args *a)
{
    jsmf_model *m = NULL;
    jsmf_docreader *r = NULL;
    jsmf_docbatch b = {0};
    double *theta = NULL;
    uint64_t empty = 0, docs = 0, in_vocab = 0;
    int rc = jsmf_model_load(a->model, &m);
    if (!rc)
        rc = jsmf_docreader_open(a->inputs, a->ninputs, &a->read, m->vocab, &r);
    if (!rc && !(theta = malloc((uint64_t)a->batch * m->k * sizeof *theta)))
        rc = jsmf_error(JSMF_ENOMEM, "out of memory for %u documents of %u topics", a->batch, m->k);
    if (!rc && a->header && !a->jsonl) {
        fputs("doc", stdout);
        for (uint32_t t = 0; t < m->k; t++)
            printf("\tt%u", t);
        putchar('\n');
    }
    int n = 0;
    while (!rc && (n = jsmf_docreader_next(r, &b, a->batch)) > 0) {
        if ((rc = jsmf_infer_batch(m, &b, &a->infer, theta)))
            break;
        for (uint32_t d = 0; d < b.ndocs; d++) {
            uint64_t tokens = 0;
            for (uint64_t i = b.start[d]; i < b.start[d + 1]; i++)
                tokens += b.counts[i];
            empty += tokens == 0;
            in_vocab += tokens;
            write_theta(a, b.first_index + d, theta + (uint64_t)d * m->k, m->k, tokens, b.oov[d]);
        }
        docs += b.ndocs;
        show_progress(r, docs);
        if (ferror(stdout))
            break;
    }
    if (!rc && n < 0)
        rc = n;
    cli_progress_done();
    if (!rc)
        cli_info("%llu documents, %llu without in-vocabulary words (uniform theta), %llu "
                 "out-of-vocabulary tokens ignored",
                 (unsigned long long)docs, (unsigned long long)empty,
                 (unsigned long long)(r ? jsmf_docreader_oov(r) : 0));
    if (!rc)
        warn_oov(a->model, m->n, in_vocab, jsmf_docreader_oov(r));
    free(theta);
    jsmf_docbatch_free(&b);
    jsmf_docreader_close(r);
    jsmf_model_free(m);
    return rc;
}

int cmd_infer(int argc, char **argv)
{
    infer_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc < 0 ? cli_finish_stdout() : rc;
    if (a.threads)
        omp_set_num_threads((int)a.threads);
    rc = run_infer(&a);
    if (rc)
        return cli_fail(rc);
    return cli_finish_stdout();
}
