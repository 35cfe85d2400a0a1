/* cmd_eval.c — 'jsmf eval': every quality metric of a model (jsmf_evaluate_*, jsmf_eval.h):
 * against a store's C, over a corpus, against a ground truth; text or JSON on stdout. */
#include <omp.h>
#include <stdlib.h>

#include "cli.h"
#include "jsmf_eval.h"

typedef struct {
    const char *model, *store, *truth;
    cli_list corpus; /* --corpus INPUT... */
    uint32_t top, threads;
    double eps;
    int json;
    jsmf_read_opts read;
    jsmf_infer_opts infer;
} eval_args;

static int parse_args(int argc, char **argv, eval_args *a)
{
    jsmf_tokenizer tok = JSMF_TOKENIZER_DEFAULT;
    jsmf_infer_opts io = JSMF_INFER_OPTS_DEFAULT;
    a->read.tok = tok;
    a->read.warn = cli_warn;
    a->infer = io;
    a->top = 20;
    a->eps = 0.01;
    const cli_option options[] = {
        {CLI_OPT("--store", 0, "STORE", CLI_STRING, &a->store,
                 "Recovery, Approximation, Dominancy, Specificity, Dissimilarity, Sparsity, "
                 "Entropy against the co-occurrence C of STORE (same vocabulary as the "
                 "model), or of a C written by 'jsmf export'")},
        {CLI_OPT("--corpus", 0, "INPUT...", CLI_LIST, &a->corpus,
                 "Coherence (top words, epsilon) and held-out log-likelihood per token, in "
                 "one streamed pass over the documents (paths, or - for stdin; every "
                 "following argument not starting with '-' is an input)")},
        {CLI_OPT("--truth", 0, "MODEL", CLI_STRING, &a->truth,
                 "l1 error against a ground-truth model after optimal (Hungarian) matching "
                 "of topics:\n(1/K) min_tau sum_t |mu_t - nu_tau(t)|_1")},
        {.help = "options:"},
        {CLI_OPT("--json", 0, NULL, CLI_FLAG, &a->json,
                 "one JSON object on stdout instead of text")},
        {CLI_OPT("--format", 0, "F", CLI_CALL, &a->read.format,
                 "corpus format: text, uci, ldac or auto (default auto)"),
         .call = cli_format_option},
        {CLI_OPT("--uci-vocab", 0, "F", CLI_STRING, &a->read.uci_vocab,
                 "vocabulary file of UCI corpus input")},
        {CLI_OPT("--top", 0, "N", CLI_U32, &a->top,
                 "top words per topic for coherence (default 20)"),
         .min = 2},
        {CLI_OPT("--epsilon", 0, "X", CLI_DOUBLE, &a->eps, "coherence smoothing (default 0.01)")},
        {CLI_OPT("--iters", 0, "N", CLI_U32, &a->infer.max_iters,
                 "EM iterations per document for held-out theta (default 1000)")},
        {CLI_OPT("--tol", 0, "X", CLI_DOUBLE, &a->infer.tol,
                 "duality-gap tolerance of that fit (default 1e-5)")},
        {CLI_OPT("--threads", 'j', "N", CLI_U32, &a->threads,
                 "OpenMP threads (default: all cores)")},
        {0},
    };
    const cli_spec spec = {
        "usage: jsmf eval MODEL [--store STORE] [--corpus INPUT...] [--truth MODEL]\n"
        "                 [options]\n"
        "\n"
        "Quality metrics of MODEL (Lee, Bindel & Mimno 2015; Lee et al. 2019; Arora et\n"
        "al. 2013; Fisher et al. 2020; formats/references.md):\n",
        options,
        "Coherence = mean over topics of sum over ordered pairs x1 != x2 of the topic's\n"
        "top words of log((D(x1,x2) + epsilon) / D(x2)), D = document frequencies in\n"
        "the corpus. Held-out log-likelihood: each document's in-vocabulary tokens,\n"
        "ordered by word id, are split alternately; theta is fitted on the even\n"
        "positions and the odd positions are scored with log sum_k theta_k B_wk\n"
        "(documents of < 2 tokens skipped).\n"};
    int n, rc = cli_parse(&spec, argc, argv, &n);
    if (rc)
        return rc;
    if (n == 0)
        return cli_usage_error("needs a MODEL");
    if (n > 1)
        return cli_usage_error("unexpected argument '%s' (corpus inputs follow --corpus)",
                               argv[2]);
    a->model = argv[1];
    if (!(a->eps > 0))
        return cli_usage_error("--epsilon must be positive");
    if (!a->store && !a->corpus.n && !a->truth)
        return cli_usage_error("nothing to evaluate: give --store, --corpus and/or --truth");
    return 0;
}

int cmd_eval(int argc, char **argv)
{
    eval_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc) {
        free(a.corpus.items);
        return rc < 0 ? cli_finish_stdout() : rc;
    }
    if (a.threads)
        omp_set_num_threads((int)a.threads);
    jsmf_model *m = NULL;
    jsmf_evaluation e = {.model = a.model, .store = a.store, .truth = a.truth,
                         .progress = cli_step_progress, .top = a.top, .eps = a.eps};
    rc = jsmf_model_load(a.model, &m);
    if (!rc && a.store)
        rc = jsmf_evaluate_store(&e, m);
    cli_progress_done();
    if (!rc && a.corpus.n)
        rc = jsmf_evaluate_corpus(&e, m, a.corpus.items, a.corpus.n, &a.read, &a.infer);
    cli_progress_done();
    if (!rc && a.truth)
        rc = jsmf_evaluate_truth(&e, m);
    if (!rc)
        jsmf_evaluation_write(stdout, &e, m, a.json);
    jsmf_evaluation_free(&e);
    free(a.corpus.items);
    jsmf_model_free(m);
    return rc ? cli_fail(rc) : cli_finish_stdout();
}
