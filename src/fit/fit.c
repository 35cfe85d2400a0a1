/* fit.c — jsmf_fit: the Rectified Anchor Word pipeline end to end (Lee et al. JSMF Sec. 3: rectify,
 * anchors, B, A and alpha) and its recursion on A for super-topics (Sec. 4); chooses the dense or
 * the streaming path and fills the report (timings, AP trace, clip statistics, metrics). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "core/budget.h"
#include "core/error.h"
#include "core/threads.h"
#include "fit_internal.h"
#include "core/vocab.h"
#include "mpi/comm.h"

/* Measured crossover (tools/bench/fit, this 2-core machine): below it the dense LAPACK path is
 * faster than the streaming one. */
#define FIT_DENSE_MAX_N 600

void jsmf_fit_opts_init(jsmf_fit_opts *o, uint32_t k)
{
    memset(o, 0, sizeof *o);
    o->k = k;
    /* the compressed iterate by default: on every corpus measured it matches AP (planted N=600,
     * 3000, 5000: l1 to the truth within 0.005 once anchor candidates are filtered; debdesc,
     * kjv, man pages: coherence within noise) at a fraction of the time, and it scales
     * (tools/bench/fit-results.md) */
    o->rectify = JSMF_RECTIFY_COMPRESSED;
    o->rectify_iters = 0;
    o->anchors = JSMF_ANCHORS_QR;
    o->fast_dim = 1000;
    o->recover = JSMF_RECOVER_ADMM;
    o->recover_a = JSMF_A_AUTO;
    o->admm_lambda = 1.9;
    o->admm_gamma = 3.0;
    o->snls_tol = 1e-7;
    o->snls_maxit = 1000;
    o->seed = 1;
    o->min_anchor_df = JSMF_FIT_DF_AUTO;
    o->mode = JSMF_MODE_AUTO;
    o->mem_bytes = mem_default_fit();
    o->dense_max_n = FIT_DENSE_MAX_N;
    o->eig_tol = 1e-7;
    o->eig_maxit = 50;
    /* debdesc, K=50: the fixed point's topics within l1 0.014 after 20 steps (0.0037 at 3e-4,
     * 38 steps; 0.0012 at 1e-4, 56 steps), against l1 ~0.4 to planted truths; on day 2 of
     * lineage's debdesc split 0.23 after 23 steps (to 1e-5), at equal held-out likelihood
     * (tools/bench/fit-results.md, "Warm start") */
    o->rectify_tol = 1e-3;
    /* C's eigendecomposition is the only thing --seed changes: at 3e-2 two seeds' rank-K parts of C
     * differed by 1.5e-4-2e-4 (relative Frobenius; 8 or 12 products on debdesc), enough to shift
     * the rectification's jumps by a step; at 1e-3 by 6e-6 (12 products) and the models of
     * seeds 1-3 agree within 5e-5 in mean matched l1 on kjv and debdesc (formats/fit.md, "The seed") */
    o->sketch_tol = 1e-3;
}

static const char *name_of(int v, const char *const *names, int count)
{
    return v >= 0 && v < count ? names[v] : "?";
}
const char *fit_mode_name(int v)
{
    static const char *const n[] = {"auto", "dense", "stream"};
    return name_of(v, n, 3);
}

uint32_t fit_rectify_iters(const jsmf_fit_opts *o)
{
    const fit_rectify_method *m = fit_rectify_method_get(o->rectify);
    if (o->rectify_iters || !m)
        return o->rectify_iters;
    return m->default_iters;
}

static int cmp_u64_desc(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Tell the progress callback that step `what` starts; JSMF_EINTR when it asked to cancel. */
static int step(const jsmf_fit_opts *o, const char *what)
{
    if (o->progress)
        o->progress(o->progress_arg, what, 0, 1, "");
    return o->progress ? cancel_check() : JSMF_OK;
}

/* ---- the anchors ------------------------------------------------------------------------ */

typedef struct {
    const fit_mat *R;
    const double *M; /* explicit rows (fit_anchor_space), from row r0, d columns */
    uint32_t d, r0;
    const double *inv; /* per-row scale */
} rows_ctx;

static void rows_row(void *ctx, uint32_t i, double *out)
{
    rows_ctx *r = ctx;
    if (r->M) {
        for (uint32_t j = 0; j < r->d; j++)
            out[j] = r->M[(size_t)(i - r->r0) * r->d + j] * r->inv[i];
        return;
    }
    fit_mat_rows(r->R, i, 1, out, NULL, NULL); /* exact, clip or repairs included */
    for (uint32_t j = 0; j < r->d; j++)
        out[j] *= r->inv[i];
}

static int find_anchors(fit_mat *R, const double *c, const double *q2,
                        const unsigned char *cand, const jsmf_fit_opts *o, uint32_t *S)
{
    uint32_t n = R->n, k = o->k;
    const fit_anchors_method *am = fit_anchors_method_get(o->anchors);
    double *inv = malloc(sizeof(double) * n), *nrm = malloc(sizeof(double) * n);
    fit_anchor_space sp = {0};
    int rc = JSMF_OK;
    if (!inv || !nrm) {
        rc = jsmf_error(JSMF_ENOMEM, "fit: out of memory finding anchors");
        goto out;
    }
    for (uint32_t i = 0; i < n; i++) {
        inv[i] = c[i] > 0 ? 1.0 / c[i] : 0;
        nrm[i] = q2[i] * inv[i] * inv[i];
    }
    /* exact: the rectified rows themselves (read lazily, fit_anchors.c); auto: exact unless R
     * prefers its factor space */
    int exact = o->anchor_space == JSMF_ANCHOR_SPACE_EXACT ||
                (o->anchor_space == JSMF_ANCHOR_SPACE_AUTO && !R->ops->factor_space_anchors);
    if ((rc = fit_mat_anchor_space(R, c, exact, am->row_at_a_time, &sp)))
        goto out;
    if (sp.unit)
        for (uint32_t i = sp.part.r0; i < sp.part.r1; i++) {
            const double *v = sp.M + (size_t)(i - sp.part.r0) * sp.d;
            inv[i] = 1.0;
            nrm[i] = cblas_ddot(sp.d, v, 1, v, 1);
        }
    rows_ctx rx = {R, sp.M, sp.d, sp.part.r0, inv};
    fit_rows_ops ops = {&rx, n, sp.d, rows_row, nrm, cand, &sp.part};
    fit_anchor_job job = {&ops, R, sp.M, inv, k, o};
    rc = am->find(&job, S);
out:
    free(inv), free(nrm), free(sp.owned);
    return rc;
}

/* ---- anchor candidates -------------------------------------------------------------------- */

/* The document-frequency threshold of anchor candidates. A word seen in few documents has a
 * noisy co-occurrence row, and noise makes a row look far from all the others: exactly what the
 * pivoted QR picks; too high a threshold leaves topics without a specific anchor and costs
 * held-out likelihood. Automatic: ceil(sqrt(M) / d), d the method's anchor_df_divisor
 * (fit_methods.c): 8 for the compressed iterate, the knee of coherence that keeps the likelihood
 * on every real corpus measured; 2 for the other rectifications, whose clipped rows of rare
 * words still win the pivots below that (tools/bench/fit-results.md). Lowered while fewer than 2K words with mass qualify, never below
 * 2 (a word of one document is that document's bag of words). */
static int anchor_threshold(const jsmf_vocab *v, const double *c, uint32_t n, uint32_t k,
                            const jsmf_fit_opts *o, uint64_t *out)
{
    *out = 0;
    if (o->min_anchor_df != JSMF_FIT_DF_AUTO) {
        *out = o->min_anchor_df;
        return JSMF_OK;
    }
    if (!v || !v->df || !o->docs)
        return JSMF_OK;
    double div = fit_rectify_method_get(o->rectify)->anchor_df_divisor;
    uint64_t t = (uint64_t)ceil(sqrt((double)o->docs) / div);
    uint64_t *dfs = malloc(sizeof(uint64_t) * n);
    if (!dfs)
        return jsmf_error(JSMF_ENOMEM, "fit: out of memory");
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++)
        if (c[i] > 0)
            dfs[m++] = v->df[i];
    qsort(dfs, m, sizeof(uint64_t), cmp_u64_desc);
    uint32_t want = 2 * k < m ? 2 * k : m;
    if (want && dfs[want - 1] < t)
        t = dfs[want - 1];
    if (t < 2)
        t = 2;
    free(dfs);
    *out = t;
    return JSMF_OK;
}

/* ---- is the model valid? ------------------------------------------------------------------ */

/* "anchor1, anchor2, ..." of the topics flagged in `bad` (at most five), for messages. */
static void anchor_list(const jsmf_model *m, const jsmf_vocab *v, const unsigned char *bad,
                        char *buf, size_t size)
{
    size_t used = 0;
    uint32_t shown = 0;
    buf[0] = 0;
    for (uint32_t a = 0; a < m->k && shown < 5 && used + 1 < size; a++) {
        if (!bad[a])
            continue;
        uint32_t w = m->anchors[a];
        int len = v && w < v->n ? snprintf(buf + used, size - used, "%s'%s'", shown ? ", " : "",
                                           v->words[w])
                                : snprintf(buf + used, size - used, "%sword %u", shown ? ", " : "",
                                           w);
        used += len > 0 ? (size_t)len : 0;
        shown++;
    }
}

/* A topic is empty below a thousandth of an even share of A, and has no mass at all below a
 * millionth. */
#define TOPIC_EMPTY 1e-3
#define TOPIC_NO_MASS 1e-6

/* Topics below `share` of an even share of A, flagged in `bad` (may be NULL). */
static uint32_t empty_topics(const jsmf_model *m, double asum, double share, unsigned char *bad)
{
    uint32_t k = m->k, empty = 0;
    for (uint32_t a = 0; a < k; a++) {
        double pz = 0;
        for (uint32_t b = 0; b < k; b++)
            pz += m->A[(size_t)a * k + b];
        pz /= asum;
        int e = !isfinite(pz) || pz < share / k;
        if (bad)
            bad[a] = (unsigned char)e;
        empty += e;
    }
    return empty;
}

/* A model whose A does not sum to a positive number, or whose topics are not in use, is not a
 * topic model: fail and say what to change instead of writing it. Not in use: a topic with no
 * mass at all, or more than a tenth of them empty (the degenerate AP fit of debdesc without an
 * anchor threshold: 36 of 50 topics at ~1e-9 of an even share). A few empty topics are what
 * the data give at that K: the man pages at K = 100 have topics at every share from 2e-4 of an
 * even one up, so a cut at 1e-3 failed or passed by where the rectification stopped. */
int fit_check_model(const jsmf_model *m, const jsmf_vocab *v, uint64_t df_min, double asum)
{
    uint32_t n = m->n, k = m->k, empty = 0;
    char df_hint[96];
    snprintf(df_hint, sizeof df_hint, "raise --min-anchor-df (it is %llu)",
             (unsigned long long)df_min);
    for (size_t e = 0; e < (size_t)n * k; e++)
        if (!isfinite(m->B[e]))
            return jsmf_error(JSMF_ENUMERIC, "fit: topic %zu has a non-finite probability",
                              e % k);
    if (!isfinite(asum) || !(asum > 0))
        return jsmf_error(JSMF_ENUMERIC,
                          "fit: no valid model: the topic co-occurrences A sum to %g (the anchor "
                          "rows share no mass); %s or lower -k", asum, df_hint);
    unsigned char *bad = calloc(k, 1);
    if (!bad)
        return jsmf_error(JSMF_ENOMEM, "fit: out of memory");
    uint32_t none = empty_topics(m, asum, TOPIC_NO_MASS, NULL);
    empty = empty_topics(m, asum, none ? TOPIC_NO_MASS : TOPIC_EMPTY, bad);
    int rc = JSMF_OK;
    if (none || empty * 10 > k) {
        char names[256];
        anchor_list(m, v, bad, names, sizeof names);
        rc = jsmf_error(JSMF_ENUMERIC,
                        "fit: degenerate model: %u of %u topics are %s (anchors %s%s), so "
                        "their anchor words explain nothing; %s or lower -k", empty, k,
                        none ? "without mass" : "empty", names, empty > 5 ? ", ..." : "",
                        df_hint);
    }
    free(bad);
    return rc;
}

/* ---- metrics against the rectified matrix ------------------------------------------------ */

/* ||R - B A B^T||_F = sqrt(|R|^2 - 2 tr(B^T R B A) + tr(B^T B A B^T B A)), one pass for R B
 * (the compressed iterate: on each rank's rows, B^T R B added over ranks). */
static int approx_rect(const fit_mat *R, const double *q2, uint32_t k, const double *B,
                       const double *A, double *out, jsmf_fit_report *rep)
{
    uint32_t n = R->n;
    fit_part L = fit_mat_part(R);
    uint32_t nl = L.r1 - L.r0;
    const double *BL = B + (size_t)L.r0 * k;
    double *RB = malloc(sizeof(double) * nl * k + 1), *G = malloc(sizeof(double) * k * k);
    double *M = malloc(sizeof(double) * k * k), *GA = malloc(sizeof(double) * k * k);
    int rc = !RB || !G || !M || !GA ? jsmf_error(JSMF_ENOMEM, "fit: out of memory (approximation)")
                                    : JSMF_OK;
    rc = fit_part_agree(&L, rc);
    if (rc || (rc = fit_mat_apply(R, BL, k, RB, NULL, NULL))) /* RB = R B */
        goto out;
    if (rep)
        rep->passes += R->ops->product_passes;
    double r2 = fit_sum_ordered(q2, n);
    if ((rc = fit_gemm_tn_part(&L, k, k, BL, RB, M))) /* B^T R B */
        goto out;
    double cross = 0;
    for (uint32_t a = 0; a < k; a++)
        for (uint32_t b = 0; b < k; b++)
            cross += M[a * k + b] * A[b * k + a];
    fit_gemm_tn(n, k, k, B, B, G);
    /* tr(G A G A) */
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, k, k, k, 1.0, G, k, A, k, 0.0, GA, k);
    double quad = 0;
    for (uint32_t a = 0; a < k; a++)
        for (uint32_t b = 0; b < k; b++)
            quad += GA[a * k + b] * GA[b * k + a];
    *out = sqrt(fmax(r2 - 2 * cross + quad, 0));
out:
    free(RB), free(G), free(M), free(GA);
    return rc;
}

/* ---- the model ---------------------------------------------------------------------------- */

/* A model with room for its anchors and alpha (jsmf_model_new leaves them unset). */
static jsmf_model *model_alloc(uint32_t n, uint32_t k)
{
    jsmf_model *m = NULL;
    if (jsmf_model_new(n, k, &m))
        return NULL;
    m->anchors = calloc(k, sizeof(uint32_t));
    m->alpha = calloc(k, sizeof(double));
    if (!m->anchors || !m->alpha) {
        jsmf_model_free(m);
        return NULL;
    }
    return m;
}

/* A dense K x K matrix as a source, for the next hierarchy level. */
typedef struct {
    uint32_t n;
    const double *A;
    uint32_t *cols;
} dense_src;

static int dense_scan(void *ctx, jsmf_row_fn fn, void *arg)
{
    dense_src *d = ctx;
    for (uint32_t i = 0; i < d->n; i++) {
        int rc = fn(arg, i, d->cols, d->A + (size_t)i * d->n, d->n);
        if (rc)
            return rc;
    }
    return 0;
}

static int fit_one(const jsmf_source *C, const jsmf_vocab *vocab, const jsmf_fit_opts *o,
                   int nt, fit_start *st, jsmf_model **out, jsmf_fit_report *rep,
                   double **Arect);

/* The job's ranks, and what this rank's collectives moved: the report's last line. */
static void note_comm(jsmf_fit_report *rep, jsmf_comm *c)
{
    rep->ranks = c ? jsmf_comm_size(c) : 1;
    if (!c)
        return;
    jsmf_comm_stats cs;
    comm_stats_get(c, &cs);
    rep->comm_bytes_sent = cs.bytes_sent;
    rep->comm_calls = cs.calls;
    rep->comm_seconds = cs.seconds;
}

/* Each choice of `o` names a method of its table. */
static int check_methods(const jsmf_fit_opts *o)
{
    if (!fit_rectify_method_get(o->rectify))
        return jsmf_error(JSMF_EINVAL, "fit: no rectification method %d", o->rectify);
    if (!fit_anchors_method_get(o->anchors))
        return jsmf_error(JSMF_EINVAL, "fit: no anchor method %d", o->anchors);
    if (!fit_recover_method_get(o->recover))
        return jsmf_error(JSMF_EINVAL, "fit: no recovery method %d", o->recover);
    return JSMF_OK;
}

/* Each level has fewer topics than the one above it, and at least 2. */
static int check_levels(const jsmf_fit_opts *o, uint32_t k)
{
    uint32_t prev = k;
    for (int l = 0; l < JSMF_FIT_MAX_LEVELS && o->levels[l]; l++) {
        if (o->levels[l] < 2 || o->levels[l] >= prev)
            return jsmf_error(JSMF_EINVAL, "fit: level %u topics must be in [2, %u)",
                              o->levels[l], prev);
        prev = o->levels[l];
    }
    return JSMF_OK;
}

/* "--mode dense needs --rectify ap, dr or none": the methods that have a dense path. */
static int dense_refused(void)
{
    char list[256] = "";
    size_t used = 0;
    int last = -1, seen = 0;
    for (int v = 0; fit_rectify_method_get(v); v++)
        last = fit_rectify_method_get(v)->dense ? v : last;
    for (int v = 0; fit_rectify_method_get(v) && used < sizeof list; v++) {
        if (!fit_rectify_method_get(v)->dense)
            continue;
        int len = snprintf(list + used, sizeof list - used, "%s%s",
                           !seen++ ? "" : v == last ? " or " : ", ", jsmf_fit_rectify_name(v));
        used += len > 0 ? (size_t)len : 0;
    }
    return jsmf_error(JSMF_EINVAL, "fit: --mode dense needs --rectify %s", list);
}

/* The super-topic levels o->levels below `top` (Lee et al. JSMF Sec. 4): each level's A (`Ar`,
 * K x K, taken and freed here) is the co-occurrence the next level is fitted to, densely and by
 * the rectification's level method. *level: the levels there are, `top`'s included. */
static int fit_levels(jsmf_model *top, double *Ar, const jsmf_fit_opts *o, int nt,
                      uint32_t *level)
{
    const fit_rectify_method *rm = fit_rectify_method_get(o->rectify);
    jsmf_model *cur = top;
    int rc = JSMF_OK;
    for (int l = 0; !rc && l < JSMF_FIT_MAX_LEVELS && o->levels[l]; l++) {
        uint32_t kk = cur->k;
        dense_src ds = {kk, Ar, malloc(sizeof(uint32_t) * kk)};
        jsmf_vocab *lab = NULL;
        if (!ds.cols || vocab_labels(kk, "t", &lab)) {
            free(ds.cols);
            rc = jsmf_error(JSMF_ENOMEM, "fit: out of memory (hierarchy)");
            break;
        }
        for (uint32_t i = 0; i < kk; i++)
            ds.cols[i] = i;
        jsmf_source src = {kk, (uint64_t)kk * kk, &ds, dense_scan, 0, NULL, NULL};
        jsmf_fit_opts lo = *o;
        lo.k = o->levels[l];
        memset(lo.levels, 0, sizeof lo.levels);
        lo.mode = JSMF_MODE_DENSE;
        lo.min_anchor_df = 0, lo.docs = 0;
        lo.rectify = rm->level_rectify;
        double *Anext = NULL;
        jsmf_model *sub = NULL;
        rc = fit_one(&src, lab, &lo, nt, NULL, &sub, NULL, &Anext);
        jsmf_vocab_free(lab);
        free(ds.cols);
        free(Ar);
        Ar = Anext;
        if (rc)
            break;
        /* the saver names a level's rows after the topics below ("t3:church") */
        jsmf_vocab_free(sub->vocab);
        sub->vocab = NULL;
        cur->sub = sub;
        cur = sub;
        (*level)++;
    }
    free(Ar);
    return rc;
}

int jsmf_fit_levels(jsmf_model *m, const jsmf_fit_opts *opts, uint32_t *levels)
{
    if (levels)
        *levels = 1;
    if (!m || !opts)
        return jsmf_error(JSMF_EINVAL, "fit levels: no model or no options");
    if (m->sub)
        return jsmf_error(JSMF_EINVAL, "fit levels: the model has levels already");
    int rc = check_methods(opts);
    if (!rc)
        rc = check_levels(opts, m->k);
    if (rc)
        return rc;
    size_t kk = (size_t)m->k * m->k;
    double *Ar = malloc(kk * sizeof *Ar);
    if (!Ar)
        return jsmf_error(JSMF_ENOMEM, "fit levels: out of memory");
    memcpy(Ar, m->A, kk * sizeof *Ar);
    call_threads_saved saved = call_threads_begin(opts->threads);
    uint32_t level = 1;
    rc = fit_levels(m, Ar, opts, call_threads(), &level);
    call_threads_end(saved);
    if (rc) {
        jsmf_model_free(m->sub);
        m->sub = NULL;
    } else if (levels)
        *levels = level;
    return rc;
}

int jsmf_fit(const jsmf_source *C, const jsmf_vocab *vocab, const jsmf_fit_opts *opts,
             jsmf_model **out, jsmf_fit_report *rep)
{
    return fit_run(C, vocab, opts, NULL, out, rep);
}

int fit_run(const jsmf_source *C, const jsmf_vocab *vocab, const jsmf_fit_opts *opts,
            fit_start *st, jsmf_model **out, jsmf_fit_report *rep)
{
    *out = NULL;
    if (!opts)
        return jsmf_error(JSMF_EINVAL, "fit: no options");
    int rc = check_methods(opts);
    if (rc)
        return rc;
    jsmf_fit_opts resolved = *opts;
    resolved.rectify_iters = fit_rectify_iters(opts);
    const jsmf_fit_opts *o = &resolved;
    const fit_rectify_method *rm = fit_rectify_method_get(o->rectify);
    if (o->k < 2 || o->k >= C->n)
        return jsmf_error(JSMF_EINVAL, "fit: K=%u must be in [2, N-1] (N=%u)", o->k, C->n);
    if (C->nnz == 0 && !(C->docs && C->docs->nnz))
        return jsmf_error(JSMF_EINVAL, "fit: C is empty: no word pairs were counted (documents "
                          "of at least 2 in-vocabulary words make them)");
    if (vocab && vocab->n != C->n)
        return jsmf_error(JSMF_EMISMATCH, "fit: vocabulary has %u words, C has %u rows", vocab->n,
                          C->n);
    if (!rm->dense && o->mode == JSMF_MODE_DENSE)
        return dense_refused();
    if ((rc = check_levels(o, o->k)))
        return rc;
    call_threads_saved saved = call_threads_begin(o->threads); /* this call's, not the caller's */
    int nt = call_threads();
    if (rep)
        memset(rep, 0, sizeof *rep);
    double t0 = clock_seconds();
    double *Ar = NULL;
    jsmf_model *top = NULL;
    rc = fit_one(C, vocab, o, nt, st, &top, rep, &Ar);
    uint32_t level = 1;
    if (!rc)
        rc = fit_levels(top, Ar, o, nt, &level); /* takes Ar */
    else
        free(Ar);
    call_threads_end(saved);
    if (rc) {
        jsmf_model_free(top);
        return rc;
    }
    if (rep) {
        rep->levels = level;
        rep->t_total = clock_seconds() - t0;
        note_comm(rep, o->comm);
    }
    *out = top;
    return JSMF_OK;
}

/* The plan in the report: its peak (dense: the N x N arrays and B's), budget and choices. */
static void note_plan(jsmf_fit_report *rep, const fit_plan *pl, double dense, uint64_t mem)
{
    rep->mem_budget = mem;
    rep->mem_plan = (uint64_t)(dense > 0 ? dense : pl->peak);
    rep->eig_depth = dense > 0 ? 0 : pl->method_compressed ? pl->eig_depth : 6;
    rep->mem_choices = (pl->held > 0 || dense > 0 ? JSMF_PLAN_HELD : 0) |
                       (pl->keep_p ? JSMF_PLAN_P_KEPT : 0) |
                       (pl->src_mem ? JSMF_PLAN_STREAMED : 0);
}

/* Step 1: the rectified matrix R (dense, or the streaming path's iterate) and its row sums c
 * and sums of squares q2, normalised to sum 1. */
static int rectify_stage(const jsmf_source *C, const jsmf_fit_opts *o, int nt, fit_start *st,
                         jsmf_fit_report *rep, fit_mat *R, double *c, double *q2)
{
    uint32_t n = C->n, k = o->k;
    const fit_rectify_method *rm = fit_rectify_method_get(o->rectify);
    double t = clock_seconds();
    uint64_t dense_bytes = 3ull * n * n * sizeof(double);
    /* auto: dense when small, or always (memory allowing) for a method with no other path */
    int dense = o->mode == JSMF_MODE_DENSE ||
                (o->mode == JSMF_MODE_AUTO && rm->dense &&
                 ((n <= o->dense_max_n || !rm->stream) && dense_bytes <= o->mem_bytes));
    if (!rm->stream && !dense)
        return jsmf_error(JSMF_ENOTSUP,
                          "fit: %s needs the dense path (%.1f GB for N=%u; raise "
                          "--mem or use --rectify ap)", rm->title, dense_bytes / 1e9, n);
    if (dense && o->mode == JSMF_MODE_DENSE && dense_bytes > o->mem_bytes && n > 2 * k + 64)
        return jsmf_error(JSMF_ENOMEM, "fit: the dense path needs %.1f GB for N=%u (--mem)",
                          dense_bytes / 1e9, n);
    fit_plan pl;
    int rc = dense ? (memset(&pl, 0, sizeof pl), JSMF_OK)
                   : fit_plan_make(C, o, nt, st, &pl);
    if (rc)
        return rc;
    if (rep) {
        rep->mode = dense ? JSMF_MODE_DENSE : JSMF_MODE_STREAM;
        rep->n = n, rep->k = k, rep->rectify = o->rectify;
        note_plan(rep, &pl, dense ? (double)dense_bytes + (double)n * k * 3 * sizeof(double) : 0,
                  o->mem_bytes);
    }
    rc = step(o, "rectify");
    if (rc)
        return rc;
    if (dense) {
        double *X = NULL;
        if ((rc = fit_load_dense(C, &X)))
            return rc;
        fit_rect_dense(R, n, X);
        if (rep)
            rep->t_load = clock_seconds() - t, rep->passes++;
        if ((rc = rm->dense(X, n, o, rep)))
            return rc;
        if (rep && rep->n_trace) {
            rep->final_neg_frac = rep->trace[rep->n_trace - 1].neg_frac;
            rep->final_neg_mass = rep->trace[rep->n_trace - 1].neg_mass;
        }
    } else if ((rc = rm->stream(C, o, nt, R, st, &pl, rep))) {
        return rc;
    }
    R->threads = nt;
    R->block = fit_block_rows(n, o->mem_bytes, nt);
    R->c_metrics_out = pl.c_metrics_out;
    if ((rc = fit_mat_finish(R, c, q2, rep)))
        return rc;
    /* tests: the later steps through another representation of the same R */
    const char *repr = getenv("JSMF_TEST_FIT_REPR");
    if (repr && (rc = fit_repr_adopt(R, repr)))
        return rc;
    if (rep)
        rep->t_rectify = clock_seconds() - t - rep->t_load;
    return JSMF_OK;
}

/* The words that may be anchors: with mass in R and in at least df_min documents. */
static uint32_t anchor_candidates(const double *c, const jsmf_vocab *vocab, uint64_t df_min,
                                  uint32_t n, unsigned char *cand)
{
    uint32_t ncand = 0;
    for (uint32_t i = 0; i < n; i++)
        ncand += cand[i] = c[i] > 0 && !(df_min && vocab && vocab->df && vocab->df[i] < df_min);
    return ncand;
}

/* Steps 3 and 4 for the anchors in m: B by the simplex-constrained solves and Bayes' rule, A
 * (unnormalised, its sum in *asum). */
static int recover_stage(fit_mat *R, const double *c, const double *q2, double *pw,
                         const jsmf_fit_opts *o, int nt, jsmf_model *m, double *Yb, double *Css,
                         double *asum, jsmf_fit_report *rep)
{
    uint32_t n = R->n, k = o->k;
    double t = clock_seconds(), rec_rect = NAN;
    int rc = step(o, "topics");
    if (rc)
        return rc;
    /* Bayes' rule takes the rectified unigram; a word the compressed iterate leaves without
     * mass (a rare word whose low-rank row sums to <= 0) keeps its observed frequency and an
     * uninformative p(z|w), rather than probability 0 in every topic */
    const double *u = R->c_unigram;
    for (uint32_t i = 0; i < n; i++)
        pw[i] = c[i] > 0 ? c[i] : u ? u[i] : 0;
    if ((rc = fit_recover_b(R, c, q2, pw, m->anchors, o, nt, m->B, Yb, Css, &rec_rect, rep)))
        return rc;
    if (rep) {
        rep->t_recover_b += clock_seconds() - t;
        rep->recovery_rect = rec_rect;
    }
    t = clock_seconds();
    if ((rc = step(o, "correlations")))
        return rc;
    int am = o->recover_a;
    if (am == JSMF_A_AUTO)
        am = fit_rectify_method_get(o->rectify)->a_auto;
    if (am == JSMF_A_PINV) { /* a pass over whole rows of R */
        if ((rc = fit_mat_gather(R)) || (rc = fit_recover_a_pinv(R, k, m->B, m->A)))
            return rc;
    } else {
        fit_recover_a_diag(k, m->B, Css, m->anchors, m->A);
    }
    *asum = fit_sum_ordered(m->A, (uint64_t)k * k);
    if (rep)
        rep->t_recover_a += clock_seconds() - t;
    return JSMF_OK;
}

/* Rounds of anchors (the first included): each more one costs a recovery of B. */
#define ANCHOR_ROUNDS 4

/* Steps 2-4: anchors, B and A. A topic that comes out empty (its anchor explains almost no
 * mass: a rare word the pivots found far from the rest) is hardly a topic: its anchor is taken
 * out of the candidates and the anchors found again, up to ANCHOR_ROUNDS rounds, the last one
 * kept. On the man pages at K = 60, stopped at 74-98 steps of the rectification (56-72 give no
 * empty topic), the second round had none; at K = 100 (--rectify-tol 3e-5) rounds 1-4 had 6, 5,
 * 2 and 4 of 100, each within a few thousandths of an even share: the data's. */
static int topics_stage(fit_mat *R, const jsmf_vocab *vocab, double *c, double *q2,
                        const jsmf_fit_opts *o, int nt, jsmf_fit_report *rep, jsmf_model *m,
                        double *asum)
{
    uint32_t n = R->n, k = o->k;
    double t = clock_seconds();
    int rc = step(o, "anchors");
    if (rc)
        return rc;
    uint64_t df_min = 0;
    if ((rc = anchor_threshold(vocab, c, n, k, o, &df_min)))
        return rc;
    unsigned char *cand = malloc(n), *bad = malloc(k);
    double *pw = malloc(sizeof(double) * n);
    double *Yb = malloc(sizeof(double) * n * k), *Css = malloc(sizeof(double) * k * k);
    if (!cand || !bad || !pw || !Yb || !Css) {
        rc = jsmf_error(JSMF_ENOMEM, "fit: out of memory");
        goto out;
    }
    uint32_t ncand = anchor_candidates(c, vocab, df_min, n, cand);
    if (rep)
        rep->anchor_df = df_min, rep->anchor_candidates = ncand;
    for (int round = 1;; round++) {
        if (ncand < k) {
            rc = jsmf_error(JSMF_EINVAL, "fit: only %u words can be anchors (%s%llu documents), "
                            "fewer than K=%u: lower -k%s", ncand, df_min ? "in at least " : "",
                            (unsigned long long)df_min, k,
                            df_min ? " or --min-anchor-df, or ingest more documents" : "");
            goto out;
        }
        if (rep)
            rep->anchor_rounds = (uint32_t)round;
        if ((rc = find_anchors(R, c, q2, cand, o, m->anchors)))
            goto out;
        /* the anchors' rows as R's others (A is read from them); the row sums follow */
        if ((rc = fit_mat_repair_anchors(R, m->anchors, k, c, q2)))
            goto out;
        if (rep)
            rep->t_anchors += clock_seconds() - t;
        if ((rc = recover_stage(R, c, q2, pw, o, nt, m, Yb, Css, asum, rep)))
            goto out;
        if (!isfinite(*asum) || !(*asum > 0) || !empty_topics(m, *asum, TOPIC_EMPTY, bad) ||
            round == ANCHOR_ROUNDS)
            break;
        t = clock_seconds();
        for (uint32_t a = 0; a < k; a++)
            if (bad[a] && cand[m->anchors[a]]) {
                cand[m->anchors[a]] = 0, ncand--;
                if (rep)
                    rep->anchors_replaced++;
            }
        /* the iterate the anchors were found in: without the repairs of these anchors' rows */
        if ((rc = fit_mat_repair_anchors(R, NULL, 0, c, q2)))
            goto out;
    }
    rc = fit_check_model(m, vocab, df_min, *asum);
out:
    free(cand), free(bad), free(pw), free(Yb), free(Css);
    return rc;
}

/* The metrics of the fitted model: against the rectified matrix, and against C where it is read
 * (or left out, and said why). */
static int metrics_stage(const jsmf_source *C, const fit_mat *R, const double *q2,
                         const fit_start *st, const jsmf_fit_opts *o, const jsmf_model *m,
                         jsmf_fit_report *rep)
{
    double t = clock_seconds();
    int rc = step(o, "metrics");
    if (!rc)
        rc = approx_rect(R, q2, m->k, m->B, m->A, &rep->approximation_rect, rep);
    if (rc)
        return rc;
    /* The two metrics that need C again are left out when a refinement replaces the model
     * (2), or when C is read from its source on every pass (1: 'jsmf eval MODEL --store
     * STORE' computes them); the others need only C's unigram. */
    const double *unigram = R->src ? fit_csrc_rowsums(R->src) : R->c_unigram;
    int skip = st && st->no_c_metrics && unigram ? 2 : R->c_streamed && R->c_unigram ? 1
             : R->c_metrics_out && unigram ? 3 : 0;
    if (skip) {
        rep->metrics.recovery = rep->metrics.approximation = NAN;
        rep->c_metrics_skipped = skip;
        rc = fit_metrics_local(m, skip == 1 ? R->c_unigram : unigram, &rep->metrics);
    } else if (R->src) {
        rc = fit_metrics_c(m, R->src, &rep->metrics);
    } else {
        rc = jsmf_model_metrics(m, C, &rep->metrics);
        rep->passes += 2;
    }
    rep->t_metrics = clock_seconds() - t;
    return rc;
}

static int fit_one(const jsmf_source *C, const jsmf_vocab *vocab, const jsmf_fit_opts *o,
                   int nt, fit_start *st, jsmf_model **out, jsmf_fit_report *rep,
                   double **Arect)
{
    uint32_t n = C->n, k = o->k;
    fit_mat R = {0};
    double *c = malloc(sizeof(double) * n), *q2 = malloc(sizeof(double) * n), asum = 0;
    jsmf_model *m = model_alloc(n, k);
    int rc = !c || !q2 || !m ? jsmf_error(JSMF_ENOMEM, "fit: out of memory") : JSMF_OK;
    if (!rc)
        rc = rectify_stage(C, o, nt, st, rep, &R, c, q2);
    if (!rc)
        rc = topics_stage(&R, vocab, c, q2, o, nt, rep, m, &asum);
    if (!rc) {
        for (uint32_t e = 0; e < k * k; e++)
            m->A[e] /= asum;
        double a0 = fit_recover_alpha(k, m->A, m->alpha);
        if (rep)
            rep->a_raw_sum = asum, rep->alpha0 = a0;
        rc = vocab ? vocab_copy(vocab, 1, &m->vocab) : vocab_labels(n, "w", &m->vocab);
    }
    if (!rc && rep)
        rc = metrics_stage(C, &R, q2, st, o, m, rep);
    if (!rc && Arect && !(*Arect = malloc(sizeof(double) * k * k)))
        rc = jsmf_error(JSMF_ENOMEM, "fit: out of memory (the hierarchy's A)");
    if (!rc && Arect)
        memcpy(*Arect, m->A, sizeof(double) * k * k);
    fit_mat_free(&R);
    free(c), free(q2);
    if (rc) {
        jsmf_model_free(m);
        m = NULL;
    }
    *out = m;
    return rc;
}

int fit_rectify_dense(const jsmf_source *C, const jsmf_fit_opts *opts, double **X)
{
    *X = NULL;
    int rc = check_methods(opts);
    if (rc)
        return rc;
    jsmf_fit_opts resolved = *opts;
    resolved.rectify_iters = fit_rectify_iters(opts);
    const jsmf_fit_opts *o = &resolved;
    const fit_rectify_method *rm = fit_rectify_method_get(o->rectify);
    if (!rm->dense)
        return jsmf_error(JSMF_ENOTSUP, "fit: the rectified C of --rectify %s is never "
                          "formed densely (use --rectify ap for --save-rectified)", rm->name);
    if (o->k < 1 || o->k >= C->n)
        return jsmf_error(JSMF_EINVAL, "fit: K=%u out of range for N=%u", o->k, C->n);
    call_threads_saved saved = call_threads_begin(o->threads);
    rc = fit_load_dense(C, X);
    if (!rc)
        rc = rm->dense(*X, C->n, o, NULL);
    call_threads_end(saved);
    if (rc) {
        free(*X);
        *X = NULL;
    }
    return rc;
}
