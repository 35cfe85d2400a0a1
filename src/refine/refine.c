/* refine.c — MAP-EM for LDA over the documents, started from a model's topics (jsmf_refine.h):
 * the documents' thetas are kept between iterations, so each pass is one E-step per token.
 * Parallel over the documents of each block with per-thread topic counts summed in thread order
 * afterwards, so the result depends on the thread count only. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "refine_internal.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/hot.h"
#include "core/threads.h"
#include "core/vocab.h"
#include "model/model.h"
#include "model/summary.h"

/* Learned pseudo-counts are kept above this floor (a topic no document uses would go to 0). */
#define JSMF_REFINE_ALPHA_MIN 1e-6
/* The over-relaxation factor grows by this much a pass while the likelihood rises (chosen on
 * the validation splits of tools/bench/heldout-results.md: 1.2 to a cap of 5 against 1.1 to 3). */
#define JSMF_REFINE_OVERRELAX_GROW 1.2

void jsmf_refine_opts_init(jsmf_refine_opts *o)
{
    jsmf_refine_opts d = JSMF_REFINE_OPTS_DEFAULT;
    *o = d;
}

void jsmf_refine_result_free(jsmf_refine_result *r)
{
    if (!r)
        return;
    free(r->objective);
    memset(r, 0, sizeof *r);
}


static double log_sum(const double *x, uint32_t k)
{
    double s = 0;
    for (uint32_t t = 0; t < k; t++)
        s += log(x[t]);
    return s;
}

/* psi(x) for x > 0: the recurrence up to 6, then the asymptotic series (error < 1e-12). */
static double digamma(double x)
{
    double r = 0;
    while (x < 6)
        r -= 1 / x, x += 1;
    const double f = 1 / (x * x);
    return r + log(x) - 0.5 / x -
           f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f / 132))));
}

/* A theta made with the previous pass's alpha re-expressed with this pass's: the document's
 * expected counts n_dk = theta_dk (n_d + A_was) - a_was_k kept, the pseudo-counts swapped. */
static void theta_to_alpha(const refine_state *s, double nd, double *theta)
{
    const double zw = nd + s->alpha_was_sum, z = nd + s->alpha_sum;
    for (uint32_t t = 0; t < s->k; t++) {
        double n = theta[t] * zw - s->alpha_was[t];
        theta[t] = ((n > 0 ? n : 0) + s->alpha[t]) / z;
    }
}

/* The document's terms of Minka's fixed-point update of alpha (Minka 2000, eq. 55; Wallach et
 * al. 2009), from its expected topic counts ndk: psi(n_dk + a_k) per topic and
 * psi(n_d + A) once, summed into the thread's dg (psi(a_k), psi(A) are subtracted per pass). */
static void alpha_terms(const refine_state *s, const double *ndk, double *dg)
{
    const uint32_t k = s->k;
    double nd = 0;
    for (uint32_t t = 0; t < k; t++) {
        double n = ndk[t] > 0 ? ndk[t] : 0;
        nd += n;
        dg[t] += digamma(n + s->alpha[t]);
    }
    dg[k] += digamma(nd + s->alpha_sum);
}

/* The document's theta moved w times as far from `old` (its theta before the joint step) as the
 * joint step took it, kept at or above a_k / (n_d + A) (no negative count), renormalised. */
static void theta_overrelax(const refine_state *s, double nd, const double *old, double *theta)
{
    double sum = 0;
    const double z = nd + s->alpha_sum;
    for (uint32_t t = 0; t < s->k; t++) {
        double lo = s->alpha[t] / z, v = old[t] + s->omega * (theta[t] - old[t]);
        theta[t] = v > lo ? v : lo;
        sum += theta[t];
    }
    for (uint32_t t = 0; t < s->k; t++)
        theta[t] /= sum;
}

/* One document of a pass: its theta steps, then the joint step (log-likelihood and prior at
 * the theta the joint step starts from go into *ll). */
static void refine_doc(const refine_state *s, const uint32_t *ids, const uint32_t *counts,
                       uint64_t len, double *theta, int tid)
{
    double *ndk = s->work + (uint64_t)tid * 4 * s->k;
    const double nd = s->alpha_moved || s->omega != 1 ? refine_doc_tokens(counts, len) : 0;
    if (s->alpha_moved)
        theta_to_alpha(s, nd, theta);
    for (uint32_t i = 0; i < s->theta_steps; i++)
        refine_step_em(s, ids, counts, len, theta, ndk, NULL);
    double prior = 0;
    for (uint32_t t = 0; t < s->k; t++)
        prior += s->alpha[t] * log(theta[t]);
    double *nwk = s->nwk + (uint64_t)tid * s->n * s->k;
    double *old = ndk + 3 * s->k;
    if (s->omega != 1)
        memcpy(old, theta, s->k * sizeof *old);
    double ll = s->method->joint(s, ids, counts, len, theta, ndk, nwk);
    s->ll[2 * tid] += ll;
    s->ll[2 * tid + 1] += prior;
    if (s->omega != 1)
        theta_overrelax(s, nd, old, theta);
    if (s->learn_alpha)
        alpha_terms(s, ndk, s->dg + (uint64_t)tid * (s->k + 1));
}

/* The documents [d0, d1) of a block, in parallel. */
static void refine_range(refine_state *s, const jsmf_doc_block *b, uint64_t d0, uint64_t d1)
{
    const int64_t lo = (int64_t)(d0 - b->first), hi = (int64_t)(d1 - b->first);
#pragma omp parallel for schedule(static) num_threads(s->nt)
    for (int64_t d = lo; d < hi; d++) {
        int tid = 0;
#ifdef _OPENMP
        tid = omp_get_thread_num();
#endif
        uint64_t a = b->offs[d], z = b->offs[d + 1];
        refine_doc(s, b->ids + a, b->counts + a, z - a,
                   s->theta + (b->first + (uint64_t)d) * s->k, tid);
    }
}

/* First document of batch `i` of `nb` (the last batch ends at M). */
static uint64_t batch_first(const refine_state *s, uint64_t i)
{
    return i * s->docs / s->o->batches;
}

static void batch_done(refine_state *s, uint64_t i);

static int refine_block(void *arg, const jsmf_doc_block *b)
{
    refine_state *s = arg;
    if (b->first + b->n_docs > s->docs)
        return jsmf_error(JSMF_EINVAL, "refine: a block goes past document %llu of %llu",
                          (unsigned long long)(b->first + b->n_docs), (unsigned long long)s->docs);
    for (uint64_t e = b->offs[0]; e < b->offs[b->n_docs]; e++)
        if (b->ids[e] >= s->n)
            return jsmf_error(JSMF_EINVAL, "refine: document %llu has word id %u, the model %u "
                              "words", (unsigned long long)b->first, b->ids[e], s->n);
    const uint64_t end = b->first + b->n_docs;
    if (!s->nbatch) { /* one batch: the topics change after the pass only */
        refine_range(s, b, b->first, end);
        refine_theta_sweep(s, end);
        return JSMF_OK;
    }
    /* several batches: cut the block where a batch ends, whose counts then replace its last
     * visit's in the totals the next batch sees */
    for (uint64_t d = b->first; d < end;) {
        uint64_t i = d * s->o->batches / s->docs; /* d's batch, near: moved to the exact one */
        while (i + 1 < s->o->batches && batch_first(s, i + 1) <= d)
            i++;
        while (batch_first(s, i) > d)
            i--;
        uint64_t stop = batch_first(s, i + 1) < end ? batch_first(s, i + 1) : end;
        refine_range(s, b, d, stop);
        if (stop == batch_first(s, i + 1))
            batch_done(s, i);
        d = stop;
    }
    refine_theta_sweep(s, end);
    return JSMF_OK;
}

/* The threads' counts summed in thread order into nwk[0]. */
static void sum_threads(refine_state *s)
{
    const uint32_t n = s->n, k = s->k, nt = s->nt;
    const uint64_t nk = (uint64_t)n * k;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t w = 0; w < (int64_t)n; w++)
        for (uint32_t th = 1; th < nt; th++)
            for (uint32_t t = 0; t < k; t++)
                s->nwk[(uint64_t)w * k + t] += s->nwk[th * nk + (uint64_t)w * k + t];
}

/* B_wk = (n_wk + b) / (n_k + N b) from the counts `nwk`; CVB0 keeps the counts and
 * 1/(n_k + N b) in nprev for the next documents' steps. */
static void topics_from_counts(refine_state *s, const double *nwk, double *B)
{
    const uint32_t n = s->n, k = s->k, nt = s->nt;
    const uint64_t nk = (uint64_t)n * k;
    const double beta = s->o->beta;
    double *colsum = s->work; /* K, before the next documents reuse it */
    memset(colsum, 0, k * sizeof *colsum);
    for (uint32_t w = 0; w < n; w++)
        for (uint32_t t = 0; t < k; t++)
            colsum[t] += nwk[(uint64_t)w * k + t];
    for (uint32_t t = 0; t < k; t++)
        colsum[t] = 1.0 / (colsum[t] + n * beta);
    if (s->nprev) {
        if (s->nprev != nwk)
            memcpy(s->nprev, nwk, nk * sizeof *nwk);
        memcpy(s->nprev + nk, colsum, k * sizeof *colsum);
        s->have_prev = 1;
    }
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t w = 0; w < (int64_t)n; w++)
        for (uint32_t t = 0; t < k; t++)
            B[(uint64_t)w * k + t] = (nwk[(uint64_t)w * k + t] + beta) * colsum[t];
}

/* x <- max(prev + w (x - prev), 0), in place. */
static void extrapolate(double *x, const double *prev, uint64_t n, double w, uint32_t nt)
{
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t j = 0; j < (int64_t)n; j++) {
        double v = prev[j] + w * (x[j] - prev[j]);
        x[j] = v > 0 ? v : 0;
    }
}

/* The prior's pseudo-counts added to the counts n_wk (the M-step's Dirichlet centred on
 * opts.prior), before they are extrapolated or kept, so every method sees them as counts: topic
 * k's l_k P_wk, scaled by the share s_k of its expected count on the prior's words (those with
 * P_w > 0 in some topic): a topic the documents keep on yesterday's words is held as it was, one
 * that new documents take over onto new words is let go as they do (the lineage then calls it
 * new), since yesterday's documents no longer put it there. */
static void add_prior(const refine_state *s, double *nwk)
{
    const double *P = s->o->prior, *l = s->o->prior_counts;
    if (!P)
        return;
    const uint32_t k = s->k;
    double *on = s->prior_now, *all = s->work; /* K of scratch, free between the steps */
    memset(on, 0, k * sizeof *on), memset(all, 0, k * sizeof *all);
    for (uint32_t w = 0; w < s->n; w++) {
        const double *pw = P + (uint64_t)w * k, *nw = nwk + (uint64_t)w * k;
        int known = 0;
        for (uint32_t t = 0; t < k && !known; t++)
            known = pw[t] > 0;
        for (uint32_t t = 0; t < k; t++)
            all[t] += nw[t], on[t] += known ? nw[t] : 0;
    }
    for (uint32_t t = 0; t < k; t++)
        on[t] = l[t] * (all[t] > 0 ? on[t] / all[t] : 1);
#pragma omp parallel for schedule(static) num_threads(s->nt)
    for (int64_t w = 0; w < (int64_t)s->n; w++)
        for (uint32_t t = 0; t < k; t++)
            nwk[(uint64_t)w * k + t] += on[t] * P[(uint64_t)w * k + t];
}

/* sum_wk l_k P_wk log B_wk, l the last M-step's pseudo-counts: the prior's term of the objective,
 * summed by word in order. */
static double prior_term(const refine_state *s, const double *B)
{
    const double *P = s->o->prior, *l = s->prior_now;
    if (!P)
        return 0;
    double sum = 0;
    for (uint64_t e = 0; e < (uint64_t)s->n * s->k; e++)
        if (P[e] > 0)
            sum += l[e % s->k] * P[e] * log(B[e]);
    return sum;
}

/* The M-step of the topics after a pass of one batch: the threads' counts summed, the prior's
 * added, then B_wk = (n_wk + b) / (n_k + N b). */
static void update_topics(refine_state *s, double *B)
{
    sum_threads(s);
    add_prior(s, s->nwk);
    if (s->omega != 1) /* over-relaxed: the counts moved w times as far from the last pass's */
        extrapolate(s->nwk, s->nprev, (uint64_t)s->n * s->k, s->omega, s->nt);
    topics_from_counts(s, s->nwk, B);
}

/* Batch i's documents are done (batches > 1): its counts (the threads' sum) are kept, and after
 * the first pass replace its previous counts in the totals, from which the topics the next
 * batch sees are remade (incremental EM, Neal and Hinton 1998, by blocks of documents). The
 * threads' counts are zeroed for the next batch. */
static void batch_done(refine_state *s, uint64_t i)
{
    const uint64_t nk = (uint64_t)s->n * s->k;
    double *keep = s->nbatch + i * nk;
    sum_threads(s);
    if (s->have_prev) {
        double *tot = s->nprev; /* the totals, in either mode */
#pragma omp parallel for schedule(static) num_threads(s->nt)
        for (int64_t j = 0; j < (int64_t)nk; j++) {
            double v = tot[j] + (s->nwk[j] - keep[j]);
            tot[j] = v > 0 ? v : 0; /* rounding must not leave a count below 0 */
            keep[j] = s->nwk[j];
        }
        topics_from_counts(s, tot, s->B_live);
    } else {
        memcpy(keep, s->nwk, nk * sizeof *keep);
    }
    memset(s->nwk, 0, (uint64_t)s->nt * nk * sizeof *s->nwk);
}

/* b sum_wk log B_wk, summed by word in order (deterministic). */
static double topic_prior(const double *B, uint32_t n, uint32_t k, double beta)
{
    double s = 0;
    for (uint32_t w = 0; w < n; w++)
        s += log_sum(B + (uint64_t)w * k, k);
    return beta * s;
}

/* After the first pass of several batches: the totals are the batches' counts summed in batch
 * order, and the topics come from them. */
static void first_pass_topics(refine_state *s, double *B)
{
    const uint64_t nk = (uint64_t)s->n * s->k;
    memset(s->nwk, 0, nk * sizeof *s->nwk);
    for (uint32_t i = 0; i < s->o->batches; i++)
        for (uint64_t j = 0; j < nk; j++)
            s->nwk[j] += s->nbatch[i * nk + j];
    add_prior(s, s->nwk); /* once: the batches' later replacements keep it in the totals */
    topics_from_counts(s, s->nwk, B);
}

/* Minka's fixed-point step from the pass's sums: a_k <- a_k sum_d [psi(n_dk + a_k) - psi(a_k)]
 * / sum_d [psi(n_d + A) - psi(A)]; the thetas, made with the old alpha, are re-expressed with
 * the new one as the next pass reaches them. */
static void alpha_update(refine_state *s)
{
    const uint32_t k = s->k;
    const double m = (double)s->docs;
    double *sum = s->work; /* K + 1 */
    memset(sum, 0, (k + 1) * sizeof *sum);
    for (uint32_t th = 0; th < s->nt; th++)
        for (uint32_t t = 0; t <= k; t++)
            sum[t] += s->dg[(uint64_t)th * (k + 1) + t];
    const double den = sum[k] - m * digamma(s->alpha_sum);
    memcpy(s->alpha_was, s->alpha, k * sizeof *s->alpha);
    s->alpha_was_sum = s->alpha_sum;
    double total = 0;
    for (uint32_t t = 0; t < k; t++) {
        double num = sum[t] - m * digamma(s->alpha[t]);
        double a = den > 0 && num > 0 ? s->alpha[t] * num / den : s->alpha[t];
        s->alpha[t] = a > JSMF_REFINE_ALPHA_MIN ? a : JSMF_REFINE_ALPHA_MIN;
        total += s->alpha[t];
    }
    s->alpha_sum = total;
    s->alpha_moved = 1;
}

/* The over-relaxation factor w for the next updates, from the pass's log-likelihood per token
 * (at the parameters the pass started from): grown by JSMF_REFINE_OVERRELAX_GROW up to
 * opts.overrelax while it rises, back to 1 (plain updates) when it fell, which undoes an
 * overshoot before it compounds (adaptive over-relaxed EM, Salakhutdinov and Roweis 2003). The
 * first pass's counts have no predecessor to extrapolate from, the second's likelihood none to
 * compare with. */
static void adapt_overrelax(refine_state *s, double lik)
{
    if (!(s->o->overrelax > 1) || !s->have_prev || s->nbatch)
        return;
    if (s->lik_prev_set) {
        double grown = s->omega * JSMF_REFINE_OVERRELAX_GROW;
        s->omega = lik < s->lik_prev ? 1 : grown < s->o->overrelax ? grown : s->o->overrelax;
    }
    s->lik_prev = lik, s->lik_prev_set = 1;
}

/* One pass over the documents from B: the objective per token at its start into *obj (with
 * several batches, each document's term at the topics its batch saw) and its log-likelihood
 * part into *lik, the next B into B. */
static int refine_pass(refine_state *s, const jsmf_doc_source *docs, double *B, double *obj,
                       double *lik_out)
{
    memset(s->nwk, 0, (uint64_t)s->nt * s->n * s->k * sizeof *s->nwk);
    memset(s->ll, 0, 2 * s->nt * sizeof *s->ll);
    s->B = B, s->B_live = B;
    double total = topic_prior(B, s->n, s->k, s->o->beta) + prior_term(s, B);
    const int first = !s->have_prev;
    if (s->learn_alpha)
        memset(s->dg, 0, (uint64_t)s->nt * (s->k + 1) * sizeof *s->dg);
    refine_theta_sweep(s, 0);
    int rc = docs->scan(docs->ctx, refine_block, s);
    if (rc)
        return rc < 0 ? rc : jsmf_error(JSMF_EINVAL, "refine: the document scan stopped (%d)", rc);
    double lik = 0;
    for (uint32_t th = 0; th < s->nt; th++)
        lik += s->ll[2 * th], total += s->ll[2 * th + 1];
    total += lik;
    *obj = total / (double)s->tokens;
    *lik_out = lik / (double)s->tokens;
    adapt_overrelax(s, *lik_out);
    if (!s->nbatch)
        update_topics(s, B);
    else if (first)
        first_pass_topics(s, B);
    return JSMF_OK;
}

int refine_opts_check(const jsmf_refine_opts *o)
{
    if (!(o->alpha > 0) || !isfinite(o->alpha) || !(o->beta > 0) || !isfinite(o->beta))
        return jsmf_error(JSMF_EINVAL, "refine: alpha (%g) and beta (%g) must be positive",
                          o->alpha, o->beta);
    if (!(o->mix >= 0 && o->mix < 1))
        return jsmf_error(JSMF_EINVAL, "refine: mix %g is not in [0, 1)", o->mix);
    if (!refine_method_get(o->method))
        return jsmf_error(JSMF_EINVAL, "refine: no method %d", o->method);
    if (!o->batches)
        return jsmf_error(JSMF_EINVAL, "refine: 0 batches (1 to M)");
    if (!(o->tol >= 0) || !isfinite(o->tol))
        return jsmf_error(JSMF_EINVAL, "refine: tol %g is not >= 0", o->tol);
    if (!(o->overrelax >= 1) || !isfinite(o->overrelax))
        return jsmf_error(JSMF_EINVAL, "refine: overrelax %g is not >= 1", o->overrelax);
    if (o->learn_alpha != JSMF_REFINE_ALPHA_FIXED && o->learn_alpha != JSMF_REFINE_ALPHA_LEARN &&
        o->learn_alpha != JSMF_REFINE_ALPHA_AUTO)
        return jsmf_error(JSMF_EINVAL, "refine: learn_alpha %d is not fixed, learn or auto",
                          o->learn_alpha);
    if (o->prior && !o->prior_counts)
        return jsmf_error(JSMF_EINVAL, "refine: a prior without its pseudo-counts");
    return JSMF_OK;
}

static int check_opts(const jsmf_model *start, const jsmf_doc_source *docs,
                      const jsmf_refine_opts *o)
{
    if (!start || !docs || !docs->scan)
        return jsmf_error(JSMF_EINVAL, "refine: no model or no documents");
    if (docs->n != start->n)
        return jsmf_error(JSMF_EINVAL, "refine: the documents have %u words, the model %u",
                          docs->n, start->n);
    if (!docs->n_docs || !docs->tokens)
        return jsmf_error(JSMF_EINVAL, "refine: no documents to refine over");
    if (o->batches > docs->n_docs)
        return jsmf_error(JSMF_EINVAL, "refine: %u batches for %llu documents (1 to M)",
                          o->batches, (unsigned long long)docs->n_docs);
    for (uint32_t t = 0; o->prior && o->prior_counts && t < start->k; t++)
        if (!(o->prior_counts[t] >= 0) || !isfinite(o->prior_counts[t]))
            return jsmf_error(JSMF_EINVAL, "refine: the prior's pseudo-count of topic %u is %g, "
                              "not >= 0", t, o->prior_counts[t]);
    return refine_opts_check(o);
}

uint64_t refine_memory(uint64_t docs, uint32_t n, uint32_t k, uint32_t threads,
                       const jsmf_refine_opts *o)
{
    const refine_method *rm = refine_method_get(o->method);
    const uint64_t nk = (uint64_t)n * k;
    const int keep_totals = (rm && rm->needs_totals) || o->batches > 1 || o->overrelax > 1;
    return (docs * k + (threads + keep_totals + (o->batches > 1 ? o->batches : 0)) * nk) *
           sizeof(double);
}

uint32_t jsmf_refine_auto_iters(uint64_t nnz, uint32_t k)
{
    double work = (double)nnz * k;
    if (work <= JSMF_REFINE_AUTO_WORK)
        return JSMF_REFINE_AUTO_MAX;
    double p = JSMF_REFINE_AUTO_MAX * JSMF_REFINE_AUTO_WORK / work;
    return p > JSMF_REFINE_AUTO_MIN ? (uint32_t)p : JSMF_REFINE_AUTO_MIN;
}

/* The start's B mixed with the uniform distribution; a column without mass becomes uniform. */
static void start_topics(const jsmf_model *m, double mix, double *B)
{
    const uint32_t n = m->n, k = m->k;
    for (uint32_t t = 0; t < k; t++) {
        double sum = 0;
        for (uint32_t w = 0; w < n; w++)
            sum += m->B[(uint64_t)w * k + t] > 0 ? m->B[(uint64_t)w * k + t] : 0;
        double keep = sum > 0 ? (1 - mix) / sum : 0, flat = sum > 0 ? mix / n : 1.0 / n;
        for (uint32_t w = 0; w < n; w++) {
            double v = m->B[(uint64_t)w * k + t];
            B[(uint64_t)w * k + t] = (v > 0 ? v : 0) * keep + flat;
        }
    }
}

/* A = mean over the documents of theta_d theta_d^T (sums to 1). */
static void topic_pairs(refine_state *s, double *A)
{
    const uint64_t m = s->docs;
    const uint32_t k = s->k;
    memset(A, 0, (uint64_t)k * k * sizeof *A);
    refine_theta_sweep(s, 0);
    for (uint64_t d = 0; d < m; d++) {
        const double *th = s->theta + d * k;
        for (uint32_t i = 0; i < k; i++)
            for (uint32_t j = 0; j < k; j++)
                A[(uint64_t)i * k + j] += th[i] * th[j];
        refine_theta_sweep(s, d + 1);
    }
    for (uint64_t i = 0; i < (uint64_t)k * k; i++)
        A[i] /= (double)m;
}

static char *refine_summary(const jsmf_model *m, const jsmf_model *start,
                            const jsmf_refine_opts *o, const jsmf_refine_result *r,
                            const double *lik)
{
    jsmf_summary_buf b;
    if (model_summary_begin(&b))
        return NULL;
    model_summary_header(&b.j, m, "refined");
    char *kind = NULL, *store = NULL;
    const char *was = start->summary_json && json_valid(start->summary_json)
                          ? start->summary_json : NULL;
    if (was && json_get_string(was, "kind", &kind))
        kind = NULL;
    /* the store the start was fitted on (its fingerprint): what readers of a fit look for */
    if (was && json_get_raw(was, "store", &store))
        store = NULL;
    if (store)
        json_raw(&b.j, "store", store);
    free(store);
    json_begin_object(&b.j, "refine");
    json_string(&b.j, "method", refine_method_get(o->method)->title);
    json_string(&b.j, "method_name", jsmf_refine_method_name(o->method));
    json_string(&b.j, "start_kind", kind ? kind : "unknown");
    json_bool(&b.j, "start_anchors", start->anchors != NULL);
    json_uint(&b.j, "iterations", r->iters);
    json_uint(&b.j, "theta_steps", o->theta_steps);
    json_number(&b.j, "alpha", o->alpha);
    json_number(&b.j, "beta", o->beta);
    json_number(&b.j, "mix", o->mix);
    json_bool(&b.j, "exclude", refine_method_get(o->method)->needs_totals);
    json_uint(&b.j, "batches", o->batches);
    json_number(&b.j, "tol", o->tol);
    json_number(&b.j, "overrelax", o->overrelax);
    json_bool(&b.j, "alpha_learned", m->alpha != NULL);
    if (o->prior) { /* held near topics given (a night from yesterday's model) */
        double held = 0;
        for (uint32_t t = 0; t < m->k; t++)
            held += o->prior_counts[t];
        json_number(&b.j, "prior_tokens", held);
    }
    json_uint(&b.j, "max_iterations", o->iters);
    json_uint(&b.j, "docs", r->docs);
    json_uint(&b.j, "tokens", r->tokens);
    json_numbers(&b.j, "objective_per_token", r->objective, r->iters);
    json_numbers(&b.j, "loglik_per_token", lik, r->iters);
    json_number(&b.j, "seconds", r->seconds);
    json_uint(&b.j, "bytes", r->bytes);
    json_uint(&b.j, "theta_file_bytes", r->theta_file);
    json_end_object(&b.j);
    if (was) /* the start's own summary whole: the fit's parameters, report and trace */
        json_raw(&b.j, "start", was);
    free(kind);
    jsmf_error_clear();
    return model_summary_end(&b);
}

/* The refined model: B, A from the thetas, the start's vocabulary, the summary. */
static int refined_model(const jsmf_model *start, refine_state *s, double *B,
                         const jsmf_refine_opts *o, const jsmf_refine_result *r, jsmf_model **out)
{
    jsmf_model *m;
    int rc = jsmf_model_new(start->n, start->k, &m);
    if (rc)
        return rc;
    free(m->B);
    m->B = B;
    topic_pairs(s, m->A);
    if (s->learn_alpha) {
        if (!(m->alpha = malloc(s->k * sizeof *m->alpha))) {
            jsmf_model_free(m);
            return jsmf_error(JSMF_ENOMEM, "refine: out of memory for the model");
        }
        memcpy(m->alpha, s->alpha, s->k * sizeof *m->alpha);
    }
    /* the start's anchors, recorded: each topic's anchor word in the start (a word that marks it
     * still, no longer one only it produces) */
    if (start->anchors && (m->anchors = malloc(s->k * sizeof *m->anchors)))
        memcpy(m->anchors, start->anchors, s->k * sizeof *m->anchors);
    if ((start->anchors && !m->anchors) ||
        (start->vocab && vocab_copy(start->vocab, 0, &m->vocab)) ||
        !(m->summary_json = refine_summary(m, start, o, r, s->lik))) {
        jsmf_model_free(m);
        return jsmf_error(JSMF_ENOMEM, "refine: out of memory for the model");
    }
    *out = m;
    return JSMF_OK;
}

/* The stopping rule: the objective per token rose by less than tol over each of the last two
 * passes (one pass's small rise alone can be a pause; CVB0's objective may also drift down by
 * a little near its fixed point, which stops it too). Never before the third pass. */
static int converged(const double *obj, uint32_t done, const jsmf_refine_opts *o)
{
    if (!(o->tol > 0) || done < 3 || done < o->min_iters)
        return 0;
    return obj[done - 1] - obj[done - 2] < o->tol && obj[done - 2] - obj[done - 3] < o->tol;
}

/* Test hook: JSMF_TEST_EXIT_IN_REFINE=N dies after pass N, as a kill in the refinement would
 * (the nightly loop's tests rerun the night after it). */
static uint32_t test_exit_pass(void)
{
    const char *v = getenv("JSMF_TEST_EXIT_IN_REFINE");
    long n = v ? atol(v) : 0;
    return n > 0 && n < (long)UINT32_MAX ? (uint32_t)n : 0;
}

static int refine_run(const jsmf_model *start, const jsmf_doc_source *docs,
                      const jsmf_refine_opts *o, refine_state *s, double *B,
                      jsmf_refine_result *r)
{
    const uint32_t exit_after = test_exit_pass();
    start_topics(start, o->mix, B);
    refine_theta_sweep(s, 0);
    for (uint64_t d = 0; d < s->docs; d++) {
        for (uint32_t t = 0; t < s->k; t++)
            s->theta[d * s->k + t] = 1.0 / s->k;
        refine_theta_sweep(s, d + 1);
    }
    s->omega = 1;
    s->alpha_sum = 0;
    for (uint32_t t = 0; t < s->k; t++)
        s->alpha[t] = o->alpha, s->alpha_sum += o->alpha;
    for (uint32_t it = 0; it < o->iters; it++) {
        s->theta_steps = it == 0 ? o->theta_steps : 1;
        int rc = refine_pass(s, docs, B, &r->objective[it], &s->lik[it]);
        if (rc)
            return rc;
        s->alpha_moved = 0;
        if (s->learn_alpha)
            alpha_update(s);
        r->iters = it + 1;
        if (r->iters == exit_after)
            _exit(99);
        if (o->progress)
            o->progress(o->progress_arg, "refine", it + 1, o->iters, "steps");
        if ((rc = cancel_check()))
            return rc;
        /* a learned a moves the objective's prior term (down, as a grows): the rule then
         * watches the log-likelihood alone */
        if (converged(s->learn_alpha ? s->lik : r->objective, it + 1, o))
            break;
    }
    return JSMF_OK;
}

int jsmf_refine(const jsmf_model *start, const jsmf_doc_source *docs,
                const jsmf_refine_opts *opts, jsmf_model **out, jsmf_refine_result *res)
{
    jsmf_refine_opts o;
    if (opts)
        o = *opts;
    else
        jsmf_refine_opts_init(&o);
    int rc = check_opts(start, docs, &o);
    if (rc)
        return rc;
    if (o.iters == JSMF_REFINE_ITERS_AUTO)
        o.iters = jsmf_refine_auto_iters(docs->nnz, start->k);
    double t0 = clock_seconds();
    call_threads_saved saved = call_threads_begin(o.threads);
    refine_state s = {.n = start->n, .k = start->k, .nt = (uint32_t)call_threads(), .o = &o,
                      .method = refine_method_get(o.method), .docs = docs->n_docs,
                      .tokens = docs->tokens};
    jsmf_refine_result r = {.docs = docs->n_docs, .tokens = docs->tokens};
    s.learn_alpha = o.learn_alpha == JSMF_REFINE_ALPHA_LEARN ||
                    (o.learn_alpha == JSMF_REFINE_ALPHA_AUTO &&
                     (double)docs->tokens >= JSMF_REFINE_ALPHA_AUTO_LEN * (double)docs->n_docs);
    const uint64_t nk = (uint64_t)s.n * s.k;
    const int keep_totals = s.method->needs_totals || o.batches > 1 || o.overrelax > 1;
    r.bytes = refine_memory(s.docs, s.n, s.k, s.nt, &o);
    const uint64_t theta_bytes = s.docs * s.k * sizeof(double);
    double *B = malloc(nk * sizeof *B);
    s.theta_fd = -1;
    if (!rc && (rc = refine_theta_open(&s, r.bytes - theta_bytes)))
        s.theta = NULL;
    if (s.theta_fd >= 0)
        r.theta_file = theta_bytes, r.bytes = r.bytes - theta_bytes + refine_theta_window(theta_bytes);
    s.nwk = malloc(s.nt * nk * sizeof *s.nwk);
    s.work = malloc((uint64_t)s.nt * 4 * s.k * sizeof *s.work);
    if (keep_totals && !(s.nprev = malloc((nk + s.k) * sizeof *s.nprev)))
        rc = jsmf_error(JSMF_ENOMEM, "refine: out of memory");
    if (o.batches > 1 && !(s.nbatch = malloc(o.batches * nk * sizeof *s.nbatch)))
        rc = jsmf_error(JSMF_ENOMEM, "refine: out of memory for %u batches' counts", o.batches);
    s.ll = malloc(2 * s.nt * sizeof *s.ll);
    s.alpha = malloc(2 * (uint64_t)s.k * sizeof *s.alpha);
    s.alpha_was = s.alpha ? s.alpha + s.k : NULL;
    s.dg = malloc((uint64_t)s.nt * (s.k + 1) * sizeof *s.dg);
    if (o.prior && !(s.prior_now = malloc(s.k * sizeof *s.prior_now)))
        rc = jsmf_error(JSMF_ENOMEM, "refine: out of memory");
    else if (o.prior)
        memcpy(s.prior_now, o.prior_counts, s.k * sizeof *s.prior_now);
    r.objective = malloc(o.iters * sizeof *r.objective);
    s.lik = malloc(o.iters * sizeof *s.lik);
    if (!rc && (!B || !s.theta || !s.nwk || !s.work || !s.ll || !r.objective || !s.lik ||
                !s.alpha || !s.dg))
        rc = jsmf_error(JSMF_ENOMEM, "refine: out of memory for %llu documents x %u topics and "
                        "%u threads x %u words", (unsigned long long)s.docs, s.k, s.nt, s.n);
    if (!rc)
        rc = refine_run(start, docs, &o, &s, B, &r);
    r.seconds = clock_seconds() - t0;
    if (!rc && !(rc = refined_model(start, &s, B, &o, &r, out)))
        B = NULL; /* the model owns it */
    call_threads_end(saved);
    refine_theta_close(&s);
    free(B), free(s.nwk), free(s.work), free(s.ll), free(s.nprev), free(s.nbatch);
    free(s.alpha), free(s.dg), free(s.lik), free(s.prior_now);
    if (!rc && res)
        *res = r;
    else
        free(r.objective);
    return rc;
}
