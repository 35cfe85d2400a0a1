/* evaluate.c — every quality metric of a model (jsmf eval): the store-based ones through
 * jsmf_model_metrics, coherence and held-out likelihood by one streamed pass over documents,
 * l1 error against a ground-truth model after Hungarian matching; printed as text or JSON. */
#include <stdlib.h>

#include "jsmf_eval.h"
#include "jsmf_store.h"
#include "core/budget.h"
#include "core/threads.h"
#include "core/error.h"
#include "core/vocab.h"
#include "eval_internal.h"
#include "io/docreader.h"
#include "model/json.h"

static void progress(const jsmf_eval *e, const char *what, double done, double total,
                     const char *unit)
{
    if (e->progress)
        e->progress(e->progress_arg, what, done, total, unit);
}

/* C's rows must be the model's words, row for row: C and B index the same words. */
int jsmf_eval_store(jsmf_eval *e, const jsmf_model *m)
{
    jsmf_source_input in;
    int rc = jsmf_source_open(e->store, 0, &in);
    if (rc)
        return rc;
    if (in.vocab)
        rc = vocab_compare(in.vocab, e->store, m->vocab, "the model");
    else if (in.src.n != m->n)
        rc = jsmf_error(JSMF_EMISMATCH, "%s has %u rows, the model %u words", e->store, in.src.n,
                        m->n);
    if (!rc) {
        progress(e, "store metrics", 0, 0, "");
        call_threads_saved saved = call_threads_begin(e->threads); /* this call's, as a fit's */
        uint64_t mem = e->mem_bytes ? e->mem_bytes : mem_default_fit();
        rc = jsmf_model_metrics_within(m, &in.src, mem, &e->store_mem_plan,
                                       &e->store_metrics);
        call_threads_end(saved);
    }
    if (!rc)
        e->have_store = 1, e->store_docs = in.stats.docs,
        e->store_is_matrix = in.kind != JSMF_SOURCE_STORE;
    jsmf_source_close(&in);
    return rc;
}

int jsmf_eval_corpus(jsmf_eval *e, const jsmf_model *m, const char *const *inputs,
                     uint32_t n, const jsmf_read_opts *ro, const jsmf_infer_opts *io)
{
    docreader *r = NULL;
    jsmf_docbatch b = {0};
    int rc = jsmf_docmetrics_new(m, e->top, e->eps, io, &e->acc);
    if (!rc)
        rc = docreader_open(inputs, n, ro, m->vocab, &r);
    uint32_t got = 0;
    while (!rc && !(rc = docreader_next(r, &b, 4096, &got)) && got) {
        rc = jsmf_docmetrics_add(e->acc, &b);
        double done, total;
        docreader_bytes(r, &done, &total);
        if (total > 0)
            progress(e, "corpus", done / 1048576, total / 1048576, "MiB");
        else
            progress(e, "corpus", (double)docreader_docs(r), 0, "documents");
    }
    if (!rc)
        rc = jsmf_docmetrics_result_get(e->acc, &e->corpus);
    if (!rc)
        e->have_corpus = 1;
    jsmf_docbatch_free(&b);
    docreader_close(r);
    return rc;
}

int jsmf_eval_truth(jsmf_eval *e, const jsmf_model *m)
{
    jsmf_model *t = NULL;
    int rc = jsmf_model_load(e->truth, &t);
    if (!rc) {
        e->match = malloc(m->k * sizeof *e->match);
        e->dist = malloc(m->k * sizeof *e->dist);
        call_threads_saved saved = call_threads_begin(e->threads);
        rc = e->match && e->dist ? jsmf_eval_l1_error(t, m, &e->l1, e->match, e->dist)
                                 : jsmf_error(JSMF_ENOMEM, "out of memory");
        call_threads_end(saved);
    }
    if (rc)
        rc = error_context(rc, "against --truth %s", e->truth);
    else
        e->have_truth = 1;
    jsmf_model_free(t);
    return rc;
}

void jsmf_eval_free(jsmf_eval *e)
{
    jsmf_docmetrics_free(e->acc);
    free(e->match), free(e->dist);
    e->acc = NULL, e->match = NULL, e->dist = NULL;
}

static void write_text(FILE *f, const jsmf_eval *e, const jsmf_model *m)
{
    fprintf(f, "model %s: %u topics over %u words\n", e->model, m->k, m->n);
    if (e->have_store) {
        const jsmf_metrics *s = &e->store_metrics;
        if (e->store_is_matrix)
            fprintf(f, "\nagainst the co-occurrence of %s:\n", e->store);
        else
            fprintf(f, "\nagainst the co-occurrence of %s (%llu documents):\n", e->store,
                    (unsigned long long)e->store_docs);
        const char *name[] = {"recovery", "approximation", "dominancy", "specificity",
                              "dissimilarity", "sparsity", "entropy"};
        double val[] = {s->recovery, s->approximation, s->dominancy, s->specificity,
                        s->dissimilarity, s->sparsity, s->entropy};
        for (int i = 0; i < 7; i++)
            fprintf(f, "  %-28s %.6g\n", name[i], val[i]);
    }
    if (e->have_corpus) {
        const jsmf_docmetrics_result *d = &e->corpus;
        fprintf(f, "\nover the corpus (%llu documents, %llu out-of-vocabulary tokens ignored):\n",
                (unsigned long long)d->coherence_docs, (unsigned long long)d->oov_tokens);
        fprintf(f, "  %-28s %.6g   (top %u words, epsilon %g; mean over topics)\n", "coherence",
                d->coherence, e->top, e->eps);
        if (d->coherence_missing)
            fprintf(f, "  %-28s %llu   (top words absent from the corpus; their pairs left out)\n",
                    "coherence_missing_words", (unsigned long long)d->coherence_missing);
        fprintf(f, "  %-28s %.6g   (%llu tokens of %llu documents; even/odd token split)\n",
                "heldout_loglik_per_token", d->heldout_ll, (unsigned long long)d->heldout_tokens,
                (unsigned long long)d->heldout_docs);
        fprintf(f, "  %-28s %llu   (p(w|d) below the floor %g/%u of the uniform share mixed in)\n",
                "heldout_floor_tokens", (unsigned long long)d->heldout_floored,
                d->heldout_smoothing, m->n);
        fprintf(f, "  %-28s %llu   (p(w|d) = 0 under the model: each scored at the floor)\n",
                "heldout_zero_prob_tokens", (unsigned long long)d->heldout_zero);
        fprintf(f, "  %-28s %.6g   (unsmoothed, over the tokens of p > 0 only)\n",
                "heldout_loglik_nonzero", d->heldout_ll_nonzero);
    }
    if (e->have_truth)
        fprintf(f, "\nagainst the ground truth %s:\n  %-28s %.6g   (mean over %u matched "
                "topics)\n", e->truth, "l1_error", e->l1, m->k);
}

static void write_json(FILE *f, const jsmf_eval *e, const jsmf_model *m)
{
    jsmf_json j;
    json_init(&j, f, 1);
    json_begin_object(&j, NULL);
    json_string(&j, "model", e->model);
    json_uint(&j, "k", m->k);
    json_uint(&j, "n_words", m->n);
    if (e->have_store) {
        const jsmf_metrics *s = &e->store_metrics;
        json_string(&j, "store", e->store);
        json_uint(&j, "store_docs", e->store_docs);
        json_number(&j, "recovery", s->recovery);
        json_number(&j, "approximation", s->approximation);
        json_number(&j, "dominancy", s->dominancy);
        json_number(&j, "specificity", s->specificity);
        json_number(&j, "dissimilarity", s->dissimilarity);
        json_number(&j, "sparsity", s->sparsity);
        json_number(&j, "entropy", s->entropy);
        json_uint(&j, "store_mem_plan_bytes", e->store_mem_plan);
        json_uint(&j, "store_mem_budget_bytes", e->mem_bytes ? e->mem_bytes : mem_default_fit());
    }
    if (e->have_corpus) {
        const jsmf_docmetrics_result *d = &e->corpus;
        json_uint(&j, "corpus_docs", d->coherence_docs);
        json_uint(&j, "corpus_oov_tokens", d->oov_tokens);
        json_number(&j, "coherence", d->coherence);
        json_uint(&j, "coherence_top", e->top);
        json_number(&j, "coherence_epsilon", e->eps);
        json_uint(&j, "coherence_missing_words", d->coherence_missing);
        json_numbers(&j, "coherence_per_topic", d->coherence_topic, m->k);
        json_number(&j, "heldout_loglik_per_token", d->heldout_ll);
        json_uint(&j, "heldout_docs", d->heldout_docs);
        json_uint(&j, "heldout_tokens", d->heldout_tokens);
        json_uint(&j, "heldout_floor_tokens", d->heldout_floored);
        json_uint(&j, "heldout_zero_prob_tokens", d->heldout_zero);
        json_number(&j, "heldout_smoothing", d->heldout_smoothing);
        json_number(&j, "heldout_loglik_per_token_nonzero", d->heldout_ll_nonzero);
        json_string(&j, "heldout_split",
                         "tokens ordered by word id; even positions fit theta, odd scored");
    }
    if (e->have_truth) {
        json_string(&j, "truth", e->truth);
        json_number(&j, "l1_error", e->l1);
        json_begin_array(&j, "l1_match");
        for (uint32_t t = 0; t < m->k; t++)
            json_uint(&j, NULL, e->match[t]);
        json_end_array(&j);
        json_numbers(&j, "l1_per_topic", e->dist, m->k);
    }
    json_end_object(&j);
    fputc('\n', f);
}

void jsmf_eval_write(FILE *f, const jsmf_eval *e, const jsmf_model *m, int json)
{
    if (json)
        write_json(f, e, m);
    else
        write_text(f, e, m);
}
