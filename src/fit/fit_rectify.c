/* fit_rectify.c — step 1: rectify C (Lee et al. JSMF Alg. 1; Lee et al. 2019 Sec. 3). Alternating
 * projection (rank-K PSD, normalise, clip) on the dense path with LAPACK, or streaming: the iterate
 * stays in factored form max(U diag(l) U^T + s 11^T, 0) and its eigenvectors come from block Krylov
 * passes (the first one over the sparse rows of C as the source streams them). Cyclic
 * Douglas-Rachford (Lee et al. 2019) on the dense path. None: C itself, kept sparse. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "fit_internal.h"

/* ---- reading the source ------------------------------------------------------------------ */

typedef struct {
    double *X;
    uint32_t n;
} dense_load;

static int dense_row(void *arg, uint32_t row, const uint32_t *cols, const double *vals, uint32_t nv)
{
    dense_load *d = arg;
    if (row >= d->n)
        return jsmf_error(JSMF_EFORMAT, "fit: source row %u outside N=%u", row, d->n);
    for (uint32_t e = 0; e < nv; e++)
        if (cols[e] < d->n)
            d->X[(size_t)row * d->n + cols[e]] = vals[e];
    return 0;
}

int fit_load_dense(const jsmf_source *C, double **X)
{
    size_t n = C->n;
    dense_load d = {calloc(n * n, sizeof(double)), C->n};
    if (!d.X)
        return jsmf_error(JSMF_ENOMEM, "fit: no memory for a dense %zu x %zu C", n, n);
    int rc = C->scan ? C->scan(C->ctx, dense_row, &d) : fit_source_scan(C, 0, C->n, dense_row, &d);
    if (rc) {
        free(d.X);
        return rc < 0 ? rc : jsmf_error(JSMF_EIO, "fit: source scan stopped (%d)", rc);
    }
    *X = d.X;
    return JSMF_OK;
}

/* ---- factored iterates ------------------------------------------------------------------- */

typedef struct {
    fit_mat *F;
    uint64_t nneg, calls;
    double negmass;
    uint64_t *passes;
} fac_apply;

static int fac_apply_fn(void *ctx, const double *V, uint32_t p, double *Z)
{
    fac_apply *a = ctx;
    uint64_t c;
    double s;
    int rc = fit_mat_apply(a->F, V, p, Z, &c, &s);
    if (!a->calls)
        a->nneg = c, a->negmass = s;
    a->calls++;
    (*a->passes)++;
    return rc;
}

/* W = [U, 1], g = [max(lam,0), s] with s = (1 - 1^T U diag(lam+) U^T 1) / n^2 (Alg. 1 lines
 * 4-6, the sum exact in factor space). */
static void set_factor(fit_factor *f, uint32_t n, uint32_t k, const double *U, const double *lam)
{
    uint32_t r = k + 1;
    double *ut1 = calloc(k, sizeof(double));
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t c = 0; c < k; c++) {
            f->W[(size_t)i * r + c] = U[(size_t)i * k + c];
        }
        f->W[(size_t)i * r + k] = 1.0;
    }
    /* U^T 1 in fixed chunk order */
    double *ones = malloc(sizeof(double) * n);
    for (uint32_t i = 0; i < n; i++)
        ones[i] = 1.0;
    fit_gemm_tn(n, k, 1, U, ones, ut1);
    free(ones);
    double tot = 0;
    for (uint32_t c = 0; c < k; c++) {
        f->g[c] = lam[c] > 0 ? lam[c] : 0;
        tot += f->g[c] * ut1[c] * ut1[c];
    }
    f->g[k] = (1.0 - tot) / ((double)n * n);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t c = 0; c < r; c++)
            f->WG[(size_t)i * r + c] = f->W[(size_t)i * r + c] * f->g[c];
    free(ut1);
}

static void rectify_progress(const jsmf_fit_opts *o, double done, double total)
{
    if (o->progress)
        o->progress(o->progress_arg, "rectify", done, total, "iterations");
}

static void add_trace(jsmf_fit_report *rep, const jsmf_fit_trace *t)
{
    if (rep && rep->n_trace < JSMF_FIT_MAX_TRACE)
        rep->trace[rep->n_trace++] = *t;
}

/* Rows per generated block: from the memory budget alone (never from the thread count, so that
 * the blocking, and with it every rounding, is the same whatever the threads). */
uint32_t fit_block_rows(uint32_t n, uint64_t mem, int nt)
{
    (void)nt;
    uint64_t b = mem / 32 / ((uint64_t)n * sizeof(double));
    if (b > 256)
        b = 256;
    if (b < 8)
        b = 8;
    return (uint32_t)b;
}

int fit_rectify_stream(const jsmf_source *C, const jsmf_fit_opts *o, int nt, fit_mat *F,
                       fit_start *st, const fit_plan *pl, jsmf_fit_report *rep)
{
    (void)st; /* only the compressed iterate starts warm or resumes */
    uint32_t n = C->n, k = o->k, r = k + 1;
    uint32_t q1 = k / 2 > 10 ? k / 2 : 10, q = k / 5 > 8 ? k / 5 : 8;
    uint64_t passes = 0;
    fit_factor *fac = NULL;
    int rc = fit_rect_factor(F, n, r, o->mem_bytes, &fac);
    if (rc)
        return rc;
    F->threads = nt;
    F->block = fit_block_rows(n, o->mem_bytes, nt);
    double *U = malloc(sizeof(double) * n * k), *lam = malloc(sizeof(double) * k);
    double *Wold = malloc(sizeof(double) * n * r), *gold = malloc(sizeof(double) * r);
    double *Q0 = malloc(sizeof(double) * n * r), *Qn = malloc(sizeof(double) * n * (k + q));
    fit_csrc *src = NULL;
    if (!U || !lam || !Wold || !gold || !Q0 || !Qn) {
        rc = jsmf_error(JSMF_ENOMEM, "fit: out of memory for the factored iterate (N=%u)", n);
        goto out;
    }
    uint32_t iters = 0;
    rectify_progress(o, 0, o->rectify_iters);
    /* block Krylov of depth 6: the fewest passes measured (12 on debdesc and on a planted
     * N=5000 corpus, against 18 and 15 at depth 3, 16 at depth 4 and 8) */
    fit_eig_opts eo = {k,    k + q1, 6, o->eig_maxit, NULL, 0, o->eig_tol, 0, o->seed, 0, NULL, 0,
                       NULL};
    fit_eig_result er;
    /* the first step reads C (kept in memory when it fits, in double: AP stays exact) */
    double t0 = clock_seconds();
    if ((rc = fit_csrc_open(C, fit_plan_source_mem(pl, o->mem_bytes), nt, 0, o->products,
                            o->comm, o->progress, o->progress_arg, &src)))
        goto out;
    /* AP keeps its factor whole on every rank (products with C: each rank its rows) */
    fit_part whole = fit_part_whole(n);
    rc = fit_eig_topk(fit_csrc_apply, src, &whole, &eo, U, lam, &er, NULL);
    if (rep)
        rep->t_load = clock_seconds() - t0, fit_note_scans(rep, src, C);
    iters = er.applies;
    if (rc)
        goto out;
    passes += fit_csrc_passes(src);
    if (fit_csrc_cached(src))
        F->src = src; /* kept for the metrics */
    else
        fit_csrc_close(src);
    src = NULL;
    set_factor(fac, n, k, U, lam);
    jsmf_fit_trace tr = {NAN, fac->g[k], 0, 0, lam[k - 1], iters};
    for (uint32_t t = 1; t < o->rectify_iters; t++) {
        rectify_progress(o, t, o->rectify_iters);
        /* warm start: the previous operator applied to its Ritz vectors (one power step ahead
         * of them), or for the first generated step [U, 1] */
        if (t == 1)
            for (uint32_t i = 0; i < n; i++) {
                memcpy(Q0 + (size_t)i * r, U + (size_t)i * k, sizeof(double) * k);
                Q0[(size_t)i * r + k] = 1.0 / sqrt((double)n);
            }
        fac_apply fa = {F, 0, 0, 0, &passes};
        fit_eig_opts so = {k, k + q, 1, o->eig_step_maxit ? o->eig_step_maxit : o->eig_maxit,
                           t == 1 ? Q0 : Qn, t == 1 ? r : k + q, o->eig_tol, 0, o->seed + t, 0, NULL,
                           0, NULL};
        rc = fit_eig_topk(fac_apply_fn, &fa, &whole, &so, U, lam, &er, Qn);
        iters = er.applies;
        if (rc)
            goto out;
        tr.neg_frac = (double)fa.nneg / ((double)n * n);
        tr.neg_mass = fa.negmass;
        add_trace(rep, &tr);
        memcpy(Wold, fac->W, sizeof(double) * n * r);
        memcpy(gold, fac->g, sizeof(double) * r);
        set_factor(fac, n, k, U, lam);
        double delta;
        if ((rc = fit_factor_delta(&whole, r, fac->W, fac->g, Wold, gold, &delta)))
            goto out;
        tr = (jsmf_fit_trace){delta, fac->g[k], 0, 0, lam[k - 1], iters};
    }
    /* the last iterate's clip statistics come from its finish (fit_rect_factor.c) */
    add_trace(rep, &tr);
    if (rep)
        rep->passes += passes;
out:
    free(U), free(lam), free(Wold), free(gold), free(Q0), free(Qn);
    fit_csrc_close(src);
    if (rc)
        fit_mat_free(F);
    return rc;
}

/* ---- dense path -------------------------------------------------------------------------- */

/* out = U diag(max(lam,0)) U^T for the K largest algebraic eigenpairs of X (X destroyed). */
static int dense_psd(uint32_t n, uint32_t k, double *X, double *out, double *lam_min)
{
    double *w = malloc(sizeof(double) * n), *Z = malloc(sizeof(double) * n * k);
    double *ZL = malloc(sizeof(double) * n * k);
    int *isuppz = malloc(sizeof(int) * 2 * k);
    lapack_int m = 0;
    int rc = JSMF_OK;
    if (!w || !Z || !ZL || !isuppz) {
        rc = jsmf_error(JSMF_ENOMEM, "fit: out of memory (dense eigenproblem, N=%u)", n);
        goto out;
    }
    lapack_int info = LAPACKE_dsyevr(LAPACK_ROW_MAJOR, 'V', 'I', 'U', n, X, n, 0, 0, n - k + 1, n,
                                     0.0, &m, w, Z, k, isuppz);
    if (info || (uint32_t)m != k) {
        rc = jsmf_error(JSMF_ENUMERIC, "fit: dsyevr failed (info %d, %d of %u eigenvalues)",
                        (int)info, (int)m, k);
        goto out;
    }
    *lam_min = w[0];
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t c = 0; c < k; c++)
            ZL[(size_t)i * k + c] = Z[(size_t)i * k + c] * (w[c] > 0 ? w[c] : 0);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, k, 1.0, ZL, k, Z, k, 0.0, out, n);
out:
    free(w), free(Z), free(ZL), free(isuppz);
    return rc;
}

static double dense_sum(size_t nn, const double *X)
{
    return fit_sum_ordered(X, nn);
}

/* Alg. 1 line 6 then 7: add the mean deficit, clip; returns clip statistics. */
static double normalise_clip(uint32_t n, double *X, uint64_t *nneg, double *negmass)
{
    size_t nn = (size_t)n * n;
    double s = (1.0 - dense_sum(nn, X)) / ((double)n * n);
    uint64_t c = 0;
    double m = 0;
    for (size_t e = 0; e < nn; e++) {
        double v = X[e] + s;
        if (v < 0) {
            c++, m -= v;
            v = 0;
        }
        X[e] = v;
    }
    *nneg = c, *negmass = m;
    return s;
}

static void normalise_nor(uint32_t n, double *X)
{
    size_t nn = (size_t)n * n;
    double s = (1.0 - dense_sum(nn, X)) / ((double)n * n);
    for (size_t e = 0; e < nn; e++)
        X[e] += s;
}

static double rel_change(size_t nn, const double *a, const double *b)
{
    double d = 0, t = 0;
    for (size_t e = 0; e < nn; e++)
        d += (a[e] - b[e]) * (a[e] - b[e]), t += a[e] * a[e];
    return sqrt(d) / (t > 0 ? sqrt(t) : 1);
}

/* AP's steps on the dense X; old, a and b: N x N scratch (a and b may be NULL). */
static int dense_ap(double *X, uint32_t n, const jsmf_fit_opts *o, jsmf_fit_report *rep,
                    double *old, double *a, double *b)
{
    size_t nn = (size_t)n * n;
    uint32_t k = o->k;
    int rc = JSMF_OK;
    (void)b; /* AP needs one scratch array */
    for (uint32_t t = 0; t < o->rectify_iters; t++) {
        rectify_progress(o, t, o->rectify_iters);
        memcpy(old, X, sizeof(double) * nn);
        if (a)
            memcpy(a, X, sizeof(double) * nn);
        jsmf_fit_trace tr = {0};
        if ((rc = dense_psd(n, k, old, X, &tr.lambda_min)))
            goto out;
        uint64_t c;
        tr.shift = normalise_clip(n, X, &c, &tr.neg_mass);
        tr.neg_frac = (double)c / nn;
        tr.delta = a && t ? rel_change(nn, X, a) : NAN;
        add_trace(rep, &tr);
    }
out:
    return rc;
}

/* Douglas-Rachford's steps on the dense X, then the AP projection of the final point. */
static int dense_dr(double *X, uint32_t n, const jsmf_fit_opts *o, jsmf_fit_report *rep,
                    double *old, double *a, double *b)
{
    size_t nn = (size_t)n * n;
    uint32_t k = o->k;
    int rc = JSMF_OK;
    /* cyclic Douglas-Rachford (Borwein-Tam) over PSD_K, NOR, NN: x <- T31 T23 T12 x with T_AB x
     * = x + P_B(2 P_A x - x) - P_A x. Two eigenproblems per cycle: Lee et al. 2019 finds it
     * about twice the cost of AP. The answer is the AP projection of the final x. */
    if (!a || !b) {
        rc = jsmf_error(JSMF_ENOMEM, "fit: no memory for Douglas-Rachford (N=%u)", n);
        goto out;
    }
    for (uint32_t t = 0; t < o->rectify_iters; t++) {
        rectify_progress(o, t, o->rectify_iters);
        jsmf_fit_trace tr = {0};
        memcpy(old, X, sizeof(double) * nn);
        /* T12: A = PSD, B = NOR */
        memcpy(b, X, sizeof(double) * nn);
        if ((rc = dense_psd(n, k, b, a, &tr.lambda_min)))
            goto out;
        for (size_t e = 0; e < nn; e++)
            b[e] = 2 * a[e] - X[e];
        normalise_nor(n, b);
        for (size_t e = 0; e < nn; e++)
            X[e] += b[e] - a[e];
        /* T23: A = NOR, B = NN */
        memcpy(a, X, sizeof(double) * nn);
        normalise_nor(n, a);
        for (size_t e = 0; e < nn; e++) {
            double y = 2 * a[e] - X[e];
            X[e] += (y > 0 ? y : 0) - a[e];
        }
        /* T31: A = NN, B = PSD */
        for (size_t e = 0; e < nn; e++) {
            a[e] = X[e] > 0 ? X[e] : 0;
            b[e] = 2 * a[e] - X[e];
        }
        double lm;
        if ((rc = dense_psd(n, k, b, old, &lm)))
            goto out;
        for (size_t e = 0; e < nn; e++)
            X[e] += old[e] - a[e];
        tr.delta = NAN;
        add_trace(rep, &tr);
    }
    /* final shadow: one AP step from the DR point */
    memcpy(old, X, sizeof(double) * nn);
    double lm;
    if ((rc = dense_psd(n, k, old, X, &lm)))
        goto out;
    uint64_t c;
    double m;
    normalise_clip(n, X, &c, &m);
out:
    return rc;
}

/* The dense rectification by `steps`, then X normalised to sum 1. `scratch`: how many N x N
 * arrays besides `old` the steps need (1: AP, which goes without it; 2: DR). */
static int dense_rectify(double *X, uint32_t n, const jsmf_fit_opts *o, jsmf_fit_report *rep,
                         int scratch,
                         int (*steps)(double *X, uint32_t n, const jsmf_fit_opts *o,
                                      jsmf_fit_report *rep, double *old, double *a, double *b))
{
    size_t nn = (size_t)n * n;
    double *old = malloc(sizeof(double) * nn), *a = NULL, *b = NULL;
    int rc = JSMF_OK;
    if (!old)
        return jsmf_error(JSMF_ENOMEM, "fit: no memory for the dense path (N=%u)", n);
    a = malloc(sizeof(double) * nn);
    if (scratch > 1)
        b = malloc(sizeof(double) * nn);
    if ((rc = steps(X, n, o, rep, old, a, b)))
        goto out;
    double s = dense_sum(nn, X);
    if (!(s > 0)) {
        rc = jsmf_error(JSMF_ENUMERIC, "fit: rectified C sums to %g", s);
        goto out;
    }
    for (size_t e = 0; e < nn; e++)
        X[e] /= s;
out:
    free(old), free(a), free(b);
    return rc;
}

int fit_rectify_dense_ap(double *X, uint32_t n, const jsmf_fit_opts *o, jsmf_fit_report *rep)
{
    return dense_rectify(X, n, o, rep, 1, dense_ap);
}

int fit_rectify_dense_dr(double *X, uint32_t n, const jsmf_fit_opts *o, jsmf_fit_report *rep)
{
    return dense_rectify(X, n, o, rep, 2, dense_dr);
}

/* --rectify none: C as it is. */
int fit_rectify_dense_none(double *X, uint32_t n, const jsmf_fit_opts *o, jsmf_fit_report *rep)
{
    (void)X, (void)n, (void)o, (void)rep;
    return JSMF_OK;
}

int fit_rectify_stream_none(const jsmf_source *C, const jsmf_fit_opts *o, int nt, fit_mat *F,
                            fit_start *st, const fit_plan *pl, jsmf_fit_report *rep)
{
    (void)st; /* only the compressed iterate starts warm or resumes */
    (void)o, (void)nt, (void)pl;
    double t = clock_seconds();
    int rc = fit_rect_sparse_load(C, F);
    if (!rc && rep)
        rep->t_load = clock_seconds() - t, rep->passes++;
    return rc;
}
