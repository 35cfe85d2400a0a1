/* cmd_eval.c — 'jsmf eval': every quality metric of a model. Store-based ones through
 * jsmf_model_metrics (jsmf_fit.h); coherence and held-out likelihood by one streamed pass over
 * documents; l1 error against a ground-truth model after Hungarian matching. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jsmf_eval.h"
#include "jsmf_fit.h"
#include "jsmf_store.h"

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

typedef struct {
    int have_store, have_corpus, have_truth;
    jsmf_metrics sm;
    uint64_t store_docs;
    int store_is_matrix; /* --store named an exported C: no document count */
    jsmf_docmetrics *dm;
    jsmf_docmetrics_result dr;
    double l1;
    uint32_t *match;
    double *dist;
} eval_results;

/* C's rows must be the model's words, row for row: C and B index the same words. */
static int eval_store(const eval_args *a, const jsmf_model *m, eval_results *res)
{
    jsmf_source_input in;
    int rc = jsmf_source_open(a->store, 0, &in);
    if (rc)
        return rc;
    if (in.vocab)
        rc = jsmf_vocab_compare(in.vocab, a->store, m->vocab, "the model");
    else if (in.src.n != m->n)
        rc = jsmf_error(JSMF_EMISMATCH, "%s has %u rows, the model %u words", a->store, in.src.n,
                        m->n);
    if (!rc) {
        cli_progress_update("store metrics", 0, 0, "");
        rc = jsmf_model_metrics(m, &in.src, &res->sm);
        cli_progress_done();
    }
    if (!rc)
        res->have_store = 1, res->store_docs = in.stats.docs,
        res->store_is_matrix = in.kind != JSMF_SOURCE_STORE;
    jsmf_source_close(&in);
    return rc;
}

static int eval_corpus(const eval_args *a, const jsmf_model *m, eval_results *res)
{
    jsmf_docreader *r = NULL;
    jsmf_docbatch b = {0};
    int rc = jsmf_docmetrics_new(m, a->top, a->eps, &a->infer, &res->dm);
    if (!rc)
        rc = jsmf_docreader_open(a->corpus.items, a->corpus.n, &a->read, m->vocab, &r);
    int n = 0;
    while (!rc && (n = jsmf_docreader_next(r, &b, 4096)) > 0) {
        rc = jsmf_docmetrics_add(res->dm, &b);
        double done, total;
        jsmf_docreader_bytes(r, &done, &total);
        if (total > 0)
            cli_progress_update("corpus", done / 1048576, total / 1048576, "MiB");
        else
            cli_progress_update("corpus", (double)jsmf_docreader_docs(r), 0, "documents");
    }
    if (!rc && n < 0)
        rc = n;
    cli_progress_done();
    if (!rc)
        rc = jsmf_docmetrics_result_get(res->dm, &res->dr);
    if (!rc)
        res->have_corpus = 1;
    jsmf_docbatch_free(&b);
    jsmf_docreader_close(r);
    return rc;
}

static int eval_truth(const eval_args *a, const jsmf_model *m, eval_results *res)
{
    jsmf_model *t = NULL;
    int rc = jsmf_model_load(a->truth, &t);
    if (!rc) {
        res->match = malloc(m->k * sizeof *res->match);
        res->dist = malloc(m->k * sizeof *res->dist);
        rc = res->match && res->dist ? jsmf_eval_l1_error(t, m, &res->l1, res->match, res->dist)
                                     : jsmf_error(JSMF_ENOMEM, "out of memory");
    }
    if (rc)
        rc = jsmf_error_context(rc, "against --truth %s", a->truth);
    else
        res->have_truth = 1;
    jsmf_model_free(t);
    return rc;
}

static void print_text(const eval_args *a, const jsmf_model *m, const eval_results *r)
{
    printf("model %s: %u topics over %u words\n", a->model, m->k, m->n);
    if (r->have_store) {
        if (r->store_is_matrix)
            printf("\nagainst the co-occurrence of %s:\n", a->store);
        else
            printf("\nagainst the co-occurrence of %s (%llu documents):\n", a->store,
                   (unsigned long long)r->store_docs);
        printf("  %-28s %.6g\n", "recovery", r->sm.recovery);
        printf("  %-28s %.6g\n", "approximation", r->sm.approximation);
        printf("  %-28s %.6g\n", "dominancy", r->sm.dominancy);
        printf("  %-28s %.6g\n", "specificity", r->sm.specificity);
        printf("  %-28s %.6g\n", "dissimilarity", r->sm.dissimilarity);
        printf("  %-28s %.6g\n", "sparsity", r->sm.sparsity);
        printf("  %-28s %.6g\n", "entropy", r->sm.entropy);
    }
    if (r->have_corpus) {
        const jsmf_docmetrics_result *d = &r->dr;
        printf("\nover the corpus (%llu documents, %llu out-of-vocabulary tokens ignored):\n",
               (unsigned long long)d->coherence_docs, (unsigned long long)d->oov_tokens);
        printf("  %-28s %.6g   (top %u words, epsilon %g; mean over topics)\n", "coherence",
               d->coherence, a->top, a->eps);
        if (d->coherence_missing)
            printf("  %-28s %llu   (top words absent from the corpus; their pairs left out)\n",
                   "coherence_missing_words", (unsigned long long)d->coherence_missing);
        printf("  %-28s %.6g   (%llu tokens of %llu documents; even/odd token split)\n",
               "heldout_loglik_per_token", d->heldout_ll, (unsigned long long)d->heldout_tokens,
               (unsigned long long)d->heldout_docs);
        if (d->heldout_zero)
            printf("  %-28s %llu   (scored tokens of probability 0 under the model; left out)\n",
                   "heldout_zero_prob_tokens", (unsigned long long)d->heldout_zero);
    }
    if (r->have_truth)
        printf("\nagainst the ground truth %s:\n  %-28s %.6g   (mean over %u matched topics)\n",
               a->truth, "l1_error", r->l1, m->k);
}

static void print_json(const eval_args *a, const jsmf_model *m, const eval_results *r)
{
    jsmf_json j;
    jsmf_json_init(&j, stdout, 1);
    jsmf_json_begin_object(&j, NULL);
    jsmf_json_string(&j, "model", a->model);
    jsmf_json_uint(&j, "k", m->k);
    jsmf_json_uint(&j, "n_words", m->n);
    if (r->have_store) {
        jsmf_json_string(&j, "store", a->store);
        jsmf_json_uint(&j, "store_docs", r->store_docs);
        jsmf_json_number(&j, "recovery", r->sm.recovery);
        jsmf_json_number(&j, "approximation", r->sm.approximation);
        jsmf_json_number(&j, "dominancy", r->sm.dominancy);
        jsmf_json_number(&j, "specificity", r->sm.specificity);
        jsmf_json_number(&j, "dissimilarity", r->sm.dissimilarity);
        jsmf_json_number(&j, "sparsity", r->sm.sparsity);
        jsmf_json_number(&j, "entropy", r->sm.entropy);
    }
    if (r->have_corpus) {
        const jsmf_docmetrics_result *d = &r->dr;
        jsmf_json_uint(&j, "corpus_docs", d->coherence_docs);
        jsmf_json_uint(&j, "corpus_oov_tokens", d->oov_tokens);
        jsmf_json_number(&j, "coherence", d->coherence);
        jsmf_json_uint(&j, "coherence_top", a->top);
        jsmf_json_number(&j, "coherence_epsilon", a->eps);
        jsmf_json_uint(&j, "coherence_missing_words", d->coherence_missing);
        jsmf_json_begin_array(&j, "coherence_per_topic");
        for (uint32_t t = 0; t < m->k; t++)
            jsmf_json_number(&j, NULL, d->coherence_topic[t]);
        jsmf_json_end_array(&j);
        jsmf_json_number(&j, "heldout_loglik_per_token", d->heldout_ll);
        jsmf_json_uint(&j, "heldout_docs", d->heldout_docs);
        jsmf_json_uint(&j, "heldout_tokens", d->heldout_tokens);
        jsmf_json_uint(&j, "heldout_zero_prob_tokens", d->heldout_zero);
        jsmf_json_string(&j, "heldout_split", "tokens ordered by word id; even positions fit theta, odd scored");
    }
    if (r->have_truth) {
        jsmf_json_string(&j, "truth", a->truth);
        jsmf_json_number(&j, "l1_error", r->l1);
        jsmf_json_begin_array(&j, "l1_match");
        for (uint32_t t = 0; t < m->k; t++)
            jsmf_json_uint(&j, NULL, r->match[t]);
        jsmf_json_end_array(&j);
        jsmf_json_begin_array(&j, "l1_per_topic");
        for (uint32_t t = 0; t < m->k; t++)
            jsmf_json_number(&j, NULL, r->dist[t]);
        jsmf_json_end_array(&j);
    }
    jsmf_json_end_object(&j);
    fputc('\n', stdout);
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
    eval_results res = {0};
    rc = jsmf_model_load(a.model, &m);
    if (!rc && a.store)
        rc = eval_store(&a, m, &res);
    if (!rc && a.corpus.n)
        rc = eval_corpus(&a, m, &res);
    if (!rc && a.truth)
        rc = eval_truth(&a, m, &res);
    if (!rc) {
        if (a.json)
            print_json(&a, m, &res);
        else
            print_text(&a, m, &res);
    }
    jsmf_docmetrics_free(res.dm);
    free(res.match), free(res.dist), free(a.corpus.items);
    jsmf_model_free(m);
    return rc ? cli_fail(rc) : cli_finish_stdout();
}
