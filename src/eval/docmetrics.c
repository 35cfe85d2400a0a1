/* docmetrics.c — the metrics that need documents, accumulated in one streamed pass: topic
 * coherence (Arora et al. 2013 Eq. 3) from document frequencies of each topic's top words and of
 * their pairs only, and held-out log-likelihood per token by document completion (Fisher et al.
 * 2020 App. E), every scored token counted: p(w|d) is mixed with the uniform distribution over the
 * vocabulary (JSMF_HELDOUT_SMOOTHING), so a token the model gives probability 0 costs log(lambda/N)
 * instead of dropping out of the mean. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsmf_eval.h"
#include "eval_util.h"
#include "core/error.h"

struct jsmf_docmetrics {
    const jsmf_model *m;
    uint32_t k, top;            /* topics; top words per topic (min(top, N)) */
    double eps;
    jsmf_infer_opts opts;
    uint32_t *topw;             /* K x top: rows of each topic's top words, most probable first */
    uint64_t *d1;               /* K x top: documents containing the word */
    uint64_t *d2;               /* K x top x top: documents containing both (upper triangle) */
    uint64_t docs;
    double ll;                  /* sum of held-out log-likelihoods, added in document order */
    double ll_nonzero;          /* the same sum unsmoothed over the tokens of p > 0 (the former
                                   rule, kept for comparisons across versions) */
    uint64_t ll_docs, ll_tokens, ll_floored, ll_zero, oov;
    double *coh;                /* K, filled by result_get */
};

static int pick_top_words(jsmf_docmetrics *acc)
{
    uint32_t *heap = malloc((acc->top ? acc->top : 1) * sizeof *heap);
    if (!heap)
        return jsmf_error(JSMF_ENOMEM, "metrics: out of memory");
    for (uint32_t t = 0; t < acc->k; t++) /* ties: lower row first, deterministic */
        eval_top_indices(acc->m->B + t, acc->m->n, acc->m->k, acc->top, heap,
                         acc->topw + (uint64_t)t * acc->top);
    free(heap);
    return 0;
}

int jsmf_docmetrics_new(const jsmf_model *m, uint32_t top, double eps,
                        const jsmf_infer_opts *opts, jsmf_docmetrics **out)
{
    jsmf_docmetrics *acc = calloc(1, sizeof *acc);
    if (!acc)
        return jsmf_error(JSMF_ENOMEM, "metrics: out of memory");
    jsmf_infer_opts o = JSMF_INFER_OPTS_DEFAULT;
    acc->m = m;
    acc->k = m->k;
    acc->top = top < m->n ? top : m->n;
    acc->eps = eps;
    acc->opts = opts ? *opts : o;
    uint64_t kt = (uint64_t)acc->k * acc->top;
    acc->topw = malloc((kt ? kt : 1) * sizeof *acc->topw);
    acc->d1 = calloc(kt ? kt : 1, sizeof *acc->d1);
    acc->d2 = calloc(kt * acc->top + 1, sizeof *acc->d2);
    acc->coh = calloc(acc->k ? acc->k : 1, sizeof *acc->coh);
    int rc = acc->topw && acc->d1 && acc->d2 && acc->coh
                 ? pick_top_words(acc)
                 : jsmf_error(JSMF_ENOMEM, "metrics: out of memory for K=%u", acc->k);
    if (rc) {
        jsmf_docmetrics_free(acc);
        return rc;
    }
    *out = acc;
    return 0;
}

/* Document frequencies of one document: which top words of each topic it contains. */
static void count_cooccurrence(const jsmf_docmetrics *acc, const unsigned char *present,
                               uint64_t *d1, uint64_t *d2, uint32_t *hit)
{
    uint32_t top = acc->top;
    for (uint32_t t = 0; t < acc->k; t++) {
        const uint32_t *tw = acc->topw + (uint64_t)t * top;
        uint32_t nh = 0;
        for (uint32_t i = 0; i < top; i++)
            if (present[tw[i]])
                hit[nh++] = i;
        uint64_t *c1 = d1 + (uint64_t)t * top, *c2 = d2 + (uint64_t)t * top * top;
        for (uint32_t a = 0; a < nh; a++) {
            c1[hit[a]]++;
            for (uint32_t b = a + 1; b < nh; b++)
                c2[(uint64_t)hit[a] * top + hit[b]]++;
        }
    }
}

/* Log-likelihoods of one document's scored tokens. */
typedef struct {
    double smoothed;            /* sum of log((1 - lambda) p + lambda / N) over every token */
    double nonzero;             /* sum of log p over the tokens of p > 0 */
    uint64_t tokens;            /* tokens scored */
    uint64_t floored;           /* of which p < lambda / N: the uniform part outweighs the model */
    uint64_t zero;              /* of which p = 0 */
} heldout_sums;

/* The scored half of a document under theta: sums both rules, counts the tokens below the floor
 * and those of p = 0. */
static heldout_sums score_tokens(const jsmf_model *m, const uint32_t *ids, const double *evalc,
                                 uint32_t n, const double *theta)
{
    const double lambda = JSMF_HELDOUT_SMOOTHING, uniform = lambda / (double)m->n;
    heldout_sums s = {0};
    for (uint32_t i = 0; i < n; i++) {
        if (!evalc[i])
            continue;
        const double *b = m->B + (uint64_t)ids[i] * m->k;
        double p = 0;
        for (uint32_t t = 0; t < m->k; t++)
            p += theta[t] * b[t];
        uint64_t c = (uint64_t)evalc[i];
        s.smoothed += evalc[i] * log((1 - lambda) * p + uniform);
        s.tokens += c;
        if ((1 - lambda) * p < uniform)
            s.floored += c;
        if (p > 0)
            s.nonzero += evalc[i] * log(p);
        else
            s.zero += c;
    }
    return s;
}

/* Document completion: tokens listed by increasing row, even positions fit theta, odd ones are
 * scored. Returns the log-likelihoods of the scored tokens; counts what it scored. */
static int heldout_doc(const jsmf_docmetrics *acc, const uint32_t *ids, const uint32_t *counts,
                       uint32_t n, double *scratch, double *theta, heldout_sums *ll)
{
    const jsmf_model *m = acc->m;
    /* scratch holds 3n doubles: scored counts, fitted counts, fitted rows (as uint32). */
    double *evalc = scratch, *fit_cnt = scratch + n;
    uint32_t *fit_ids = (uint32_t *)(scratch + 2 * (uint64_t)n), nfit = 0;
    uint64_t pos = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t c = counts[i];
        uint32_t to_fit = (pos % 2 == 0) ? (c + 1) / 2 : c / 2;
        evalc[i] = c - to_fit;
        pos += c;
        if (to_fit)
            fit_ids[nfit] = ids[i], fit_cnt[nfit++] = to_fit;
    }
    int rc = jsmf_theta_fit(m->B, m->k, fit_ids, fit_cnt, nfit, &acc->opts, theta, NULL, NULL);
    if (rc < 0)
        return rc;
    *ll = score_tokens(m, ids, evalc, n, theta);
    return 0;
}

/* A scored document into the totals (called in document order: the sums are reproducible). */
static void add_document(jsmf_docmetrics *acc, const heldout_sums *s)
{
    acc->ll += s->smoothed;
    acc->ll_nonzero += s->nonzero;
    acc->ll_tokens += s->tokens;
    acc->ll_floored += s->floored;
    acc->ll_zero += s->zero;
    acc->ll_docs++;
}

int jsmf_docmetrics_add(jsmf_docmetrics *acc, const jsmf_docbatch *b)
{
    const jsmf_model *m = acc->m;
    uint32_t nd = b->ndocs, top = acc->top;
    uint64_t kt = (uint64_t)acc->k * top;
    heldout_sums *doc_ll = malloc((nd ? nd : 1) * sizeof *doc_ll);
    unsigned char *scored = calloc(nd ? nd : 1, 1);
    if (!doc_ll || !scored) {
        free(doc_ll), free(scored);
        return jsmf_error(JSMF_ENOMEM, "metrics: out of memory");
    }
    jsmf_error_slot err = {0}; /* a worker's message, carried to this thread */
    #pragma omp parallel num_threads(eval_threads(acc->opts.threads))
    {
        /* Per-thread integer counters: their sum does not depend on the thread count. */
        uint64_t *d1 = calloc(kt ? kt : 1, sizeof *d1), *d2 = calloc(kt * top + 1, sizeof *d2);
        unsigned char *present = calloc(m->n ? m->n : 1, 1);
        uint32_t *hit = malloc((top ? top : 1) * sizeof *hit);
        double *theta = malloc((m->k ? m->k : 1) * sizeof *theta);
        double *scratch = NULL;
        uint64_t cap = 0;
        int ok = d1 && d2 && present && hit && theta;
        if (!ok)
            error_capture(&err, jsmf_error(JSMF_ENOMEM, "metrics: out of memory"));
        #pragma omp for schedule(dynamic, 8)
        for (uint32_t d = 0; d < nd; d++) {
            if (!ok || error_pending(&err))
                continue;
            uint64_t s = b->start[d];
            uint32_t n = (uint32_t)(b->start[d + 1] - s);
            const uint32_t *ids = b->ids + s, *cnt = b->counts + s;
            for (uint32_t i = 0; i < n; i++)
                present[ids[i]] = 1;
            count_cooccurrence(acc, present, d1, d2, hit);
            for (uint32_t i = 0; i < n; i++)
                present[ids[i]] = 0;
            uint64_t len = 0;
            for (uint32_t i = 0; i < n; i++)
                len += cnt[i];
            if (len < 2)
                continue;
            if (3 * (uint64_t)n > cap) {
                free(scratch);
                cap = 6 * (uint64_t)n;
                scratch = malloc(cap * sizeof *scratch);
                if (!scratch) {
                    ok = 0, cap = 0;
                    error_capture(&err, jsmf_error(JSMF_ENOMEM, "metrics: out of memory "
                                                        "for a document of %u words", n));
                    continue;
                }
            }
            int r = heldout_doc(acc, ids, cnt, n, scratch, theta, &doc_ll[d]);
            if (r < 0)
                ok = 0, error_capture(&err, r);
            else
                scored[d] = 1;
        }
        #pragma omp critical(jsmf_docmetrics_merge)
        {
            for (uint64_t i = 0; ok && i < kt; i++)
                acc->d1[i] += d1[i];
            for (uint64_t i = 0; ok && i < kt * top; i++)
                acc->d2[i] += d2[i];
        }
        free(d1), free(d2), free(present), free(hit), free(theta), free(scratch);
    }
    for (uint32_t d = 0; d < nd; d++) { /* document order: the sum is reproducible */
        acc->oov += b->oov[d];
        if (scored[d])
            add_document(acc, &doc_ll[d]);
    }
    acc->docs += nd;
    free(doc_ll), free(scored);
    return error_restore(&err);
}

int jsmf_docmetrics_result_get(jsmf_docmetrics *acc, jsmf_docmetrics_result *out)
{
    uint32_t top = acc->top;
    memset(out, 0, sizeof *out);
    double mean = 0;
    for (uint32_t t = 0; t < acc->k; t++) {
        const uint64_t *c1 = acc->d1 + (uint64_t)t * top, *c2 = acc->d2 + (uint64_t)t * top * top;
        double c = 0;
        for (uint32_t i = 0; i < top; i++) {
            if (!c1[i]) { /* D(x2) = 0: every pair ending in this word is undefined */
                out->coherence_missing++;
                continue;
            }
            for (uint32_t j = 0; j < top; j++) {
                if (j == i)
                    continue;
                uint64_t both = j < i ? c2[(uint64_t)j * top + i] : c2[(uint64_t)i * top + j];
                c += log(((double)both + acc->eps) / (double)c1[i]);
            }
        }
        acc->coh[t] = c;
        mean += c;
    }
    out->coherence = acc->k ? mean / acc->k : 0;
    out->coherence_topic = acc->coh;
    out->coherence_docs = acc->docs;
    uint64_t nonzero = acc->ll_tokens - acc->ll_zero;
    out->heldout_ll = acc->ll_tokens ? acc->ll / (double)acc->ll_tokens : NAN;
    out->heldout_docs = acc->ll_docs;
    out->heldout_tokens = acc->ll_tokens;
    out->heldout_zero = acc->ll_zero;
    out->heldout_floored = acc->ll_floored;
    out->heldout_ll_nonzero = nonzero ? acc->ll_nonzero / (double)nonzero : NAN;
    out->heldout_smoothing = JSMF_HELDOUT_SMOOTHING;
    out->oov_tokens = acc->oov;
    return 0;
}

void jsmf_docmetrics_free(jsmf_docmetrics *acc)
{
    if (!acc)
        return;
    free(acc->topw), free(acc->d1), free(acc->d2), free(acc->coh);
    free(acc);
}
