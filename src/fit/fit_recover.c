/* fit_recover.c — steps 3 and 4: B by per-word simplex least squares on the row-normalised
 * rectified C (right-hand sides Cbar_S Cbar_i^T for every word from one pass over row blocks, clip
 * included) and Bayes' rule with the unigram (Lee et al. JSMF Alg. 3); A = D^-1 C_SS D^-1 (Lee,
 * Bindel & Mimno 2015 Eq. 6) or the pseudo-inverse B^+ C B^+T (Arora et al. 2013 Alg. 3); alpha by
 * Alg. 4 RECOVER-ALPHA. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "core/bigmem.h"
#include "fit_internal.h"
#include "mpi/comm.h"

/* Pseudo-inverse of a small symmetric matrix through its eigendecomposition. */
static void sym_pinv(uint32_t k, const double *H, double *out)
{
    double *E = malloc(sizeof(double) * k * k), *w = malloc(sizeof(double) * k);
    memcpy(E, H, sizeof(double) * k * k);
    fit_syev(k, E, w);
    double cut = fabs(w[k - 1]) * 1e-12 * k;
    memset(out, 0, sizeof(double) * k * k);
    for (uint32_t c = 0; c < k; c++) {
        if (!(fabs(w[c]) > cut))
            continue;
        for (uint32_t i = 0; i < k; i++)
            for (uint32_t j = 0; j < k; j++)
                out[i * k + j] += E[i * k + c] * E[j * k + c] / w[c];
    }
    free(E), free(w);
}

typedef struct {
    const fit_mat *R;
    const double *c, *Tt; /* Tt = Cbar_S^T, n x k */
    double *rhs;          /* n x k */
    uint32_t k;
    /* a method solved on whole rows (KL) solves inside the pass */
    const fit_recover_method *method;
    const fit_snls *s;
    double *Y;
    double **work, **vrow;
    uint32_t *iters;
    const unsigned char *skip;
} rhs_ctx;

static void rhs_block(void *arg, uint32_t r0, uint32_t nb, const double *rows, int tid)
{
    rhs_ctx *a = arg;
    uint32_t n = a->R->n, k = a->k;
    double *out = a->rhs + (size_t)r0 * k;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nb, k, n, 1.0, rows, n, a->Tt, k, 0.0,
                out, k);
    for (uint32_t i = 0; i < nb; i++) {
        double ci = a->c[r0 + i];
        for (uint32_t j = 0; j < k; j++)
            out[(size_t)i * k + j] = ci > 0 ? out[(size_t)i * k + j] / ci : 0;
        if (a->Y && !a->skip[r0 + i]) { /* the method needs the row itself */
            double *v = a->vrow[tid];
            for (uint32_t j = 0; j < n; j++)
                v[j] = rows[(size_t)i * n + j] / ci;
            a->iters[r0 + i] = a->method->solve_row(a->s, a->Tt, n, v,
                                                    a->Y + (size_t)(r0 + i) * k, a->work[tid]);
        }
    }
}

/* Rows [w0, w1) of each rank, `bytes` each, to every rank (the ranges of comm_split). */
static int share_word_rows(jsmf_comm *c, uint32_t n, void *X, uint64_t bytes)
{
    int size = jsmf_comm_size(c);
    if (size == 1)
        return JSMF_OK;
    uint32_t *starts = malloc(sizeof *starts * ((size_t)size + 1));
    if (!starts)
        return jsmf_error(JSMF_ENOMEM, "fit: out of memory");
    uint32_t a, b;
    for (int r = 0; r < size; r++)
        comm_split(n, NULL, size, r, &starts[r], &b);
    starts[size] = n;
    comm_split(n, NULL, size, jsmf_comm_rank(c), &a, &b);
    fit_part L = {n, a, b, starts, c};
    int rc = fit_part_gather_bytes(&L, bytes, (char *)X + (size_t)a * bytes, X);
    free(starts);
    return rc;
}

/* The anchor rows of R as Tt = Cbar_S^T (rows of L, nl x k) and C_SS (k x k). */
static int anchor_rows(const fit_mat *R, const fit_part *L, const double *c, const uint32_t *S,
                       uint32_t k, double *Tt, double *Css)
{
    uint32_t nl = L->r1 - L->r0;
    int rc = fit_mat_anchor_cols(R, L, S, k, Tt, Css);
    if (rc)
        return rc;
    for (uint32_t j = 0; j < nl; j++) /* normalised: Cbar_S */
        for (uint32_t a = 0; a < k; a++) {
            double cs = c[S[a]];
            Tt[(size_t)j * k + a] = cs > 0 ? Tt[(size_t)j * k + a] / cs : 0;
        }
    return JSMF_OK;
}

/* The right-hand sides Cbar_i Cbar_S^T of the rows of L (KL: its solves too, in the pass). */
static int right_sides(const fit_mat *R, const fit_part *L, const double *c, rhs_ctx *rx,
                       jsmf_fit_report *rep)
{
    uint32_t k = rx->k, nl = L->r1 - L->r0;
    double *rhs = rx->rhs;
    const double *Tt = rx->Tt;
    int rc = JSMF_OK;
    if (R->ops->cheap_product && !rx->method->solve_row) {
        /* one product, not a pass over N x N rows */
        if ((rc = fit_mat_apply(R, Tt, k, rhs, NULL, NULL)))
            return rc;
        for (uint32_t a = 0; a < nl; a++) {
            double ci = c[L->r0 + a];
            for (uint32_t j = 0; j < k; j++)
                rhs[(size_t)a * k + j] = ci > 0 ? rhs[(size_t)a * k + j] / ci : 0;
        }
    } else {
        if ((rc = fit_mat_pass(R, rhs_block, rx, NULL, NULL)))
            return rc;
        if (rep)
            rep->passes++;
    }
    return rc;
}

/* Progress of the words' solves: every thread counts, thread 0 draws. */
static void words_progress(const jsmf_fit_opts *o, uint32_t *done, uint32_t add, uint32_t n)
{
    uint32_t d;
#pragma omp atomic capture
    d = *done += add;
    if (omp_get_thread_num() == 0 && o->progress)
        o->progress(o->progress_arg, "topics", d < n ? d : n, n, "words");
}

/* Y's rows [w0, w1) by the method's per-word solver; rhs holds the rows from w0. */
static void solve_words(const fit_recover_method *rm, const fit_snls *s, uint32_t w0, uint32_t w1,
                        const unsigned char *skip, const double *rhs, double *Y, uint32_t *iters,
                        double **work, int nt, const jsmf_fit_opts *o)
{
    uint32_t k = s->k, done = 0;
#pragma omp parallel for schedule(dynamic, 64) num_threads(nt)
    for (uint32_t i = w0; i < w1; i++) {
        if (i % 1024 == 0)
            words_progress(o, &done, 1024, w1);
        if (skip[i])
            continue;
        iters[i] = rm->solve(s, rhs + (size_t)(i - w0) * k, Y + (size_t)i * k,
                             work[omp_get_thread_num()]);
    }
}

/* Words solved together by solve_many, in runs of this many (a word's result does not depend on
 * its run: only the work's grain). */
#define SOLVE_RUN 256

/* The same by the method's many-word solver, a run of words at a time. */
static void solve_words_many(const fit_recover_method *rm, const fit_snls *s, uint32_t w0,
                             uint32_t w1, const unsigned char *skip, const double *rhs, double *Y,
                             uint32_t *iters, double **work, int nt, const jsmf_fit_opts *o)
{
    uint32_t k = s->k, done = 0, runs = (w1 - w0 + SOLVE_RUN - 1) / SOLVE_RUN;
#pragma omp parallel num_threads(nt)
    {
        const double *r[SOLVE_RUN];
        double *y[SOLVE_RUN];
        uint32_t at[SOLVE_RUN], it[SOLVE_RUN];
#pragma omp for schedule(dynamic, 1)
        for (uint32_t g = 0; g < runs; g++) {
            uint32_t a = w0 + g * SOLVE_RUN, b = w1 - a < SOLVE_RUN ? w1 : a + SOLVE_RUN, m = 0;
            for (uint32_t i = a; i < b; i++)
                if (!skip[i])
                    r[m] = rhs + (size_t)(i - w0) * k, y[m] = Y + (size_t)i * k, at[m++] = i;
            rm->solve_many(s, m, r, y, it, work[omp_get_thread_num()]);
            for (uint32_t e = 0; e < m; e++)
                iters[at[e]] = it[e];
            words_progress(o, &done, b - a, w1);
        }
    }
}

int fit_recover_b(fit_mat *R, const double *c, const double *q2, const double *pw,
                  const uint32_t *S, const jsmf_fit_opts *o, int nt, double *B, double *Ybreve,
                  double *Css, double *recovery_rect, jsmf_fit_report *rep)
{
    uint32_t n = R->n, k = o->k;
    const fit_recover_method *rm = fit_recover_method_get(o->recover);
    /* R's rows may stay split in an MPI job, but a row solver reads whole rows */
    if (rm->solve_row) {
        int rc = fit_mat_gather(R);
        if (rc)
            return rc;
    }
    fit_part L = fit_mat_part(R);
    uint32_t r0 = L.r0, nl = L.r1 - L.r0;
    double *Tt = calloc((size_t)nl * k + 1, sizeof(double)), *H = malloc(sizeof(double) * k * k);
    double *Hinv = malloc(sizeof(double) * k * k), *F = malloc(sizeof(double) * k * k);
    double *rhs = big_malloc(sizeof(double) * nl * k + 1);
    uint32_t *iters = calloc(n, sizeof *iters);
    unsigned char *skip = calloc(n, 1);
    double *res = calloc(n, sizeof(double));
    double **work = calloc(nt, sizeof *work), **vrow = calloc(nt, sizeof *vrow);
    int rc = JSMF_OK;
    if (!Tt || !H || !Hinv || !F || !rhs || !iters || !skip || !res || !work || !vrow)
        rc = jsmf_error(JSMF_ENOMEM, "fit: out of memory recovering B");
    for (int t = 0; t < nt && !rc; t++) {
        size_t wk = 8 * (size_t)k + 2 * (size_t)k * k;
        if (rm->solve_many && fit_snls_admm_many_work(k) > wk)
            wk = fit_snls_admm_many_work(k);
        work[t] = malloc(sizeof(double) * wk);
        if (rm->solve_row)
            vrow[t] = malloc(sizeof(double) * n);
        if (!work[t] || (rm->solve_row && !vrow[t]))
            rc = jsmf_error(JSMF_ENOMEM, "fit: out of memory recovering B");
    }
    rc = fit_part_agree(&L, rc);
    /* the anchor rows, exact (clip included), and their normalised transpose */
    if (rc || (rc = anchor_rows(R, &L, c, S, k, Tt, Css)) ||
        (rc = fit_gemm_tn_part(&L, k, k, Tt, Tt, H))) /* U^T U of Alg. 3 */
        goto out;
    /* Rows of Cbar are probability vectors, so U^T U is tiny (~1/support) and gamma = 3 would
     * barely move the proximal step. The solvers see the objective scaled by K / tr(U^T U)
     * (same minimiser), which makes gamma and the tolerances scale-free. */
    double tr = 0;
    for (uint32_t a = 0; a < k; a++)
        tr += H[a * k + a];
    double hs = tr > 0 ? k / tr : 1.0;
    for (uint32_t e = 0; e < k * k; e++)
        H[e] *= hs;
    sym_pinv(k, H, Hinv);
    /* F = (gamma H + I)^-1 (Alg. 3 line 3) */
    {
        double *G = malloc(sizeof(double) * k * k);
        for (uint32_t i = 0; i < k * k; i++)
            G[i] = o->admm_gamma * H[i];
        for (uint32_t i = 0; i < k; i++)
            G[i * k + i] += 1.0;
        sym_pinv(k, G, F);
        free(G);
    }
    for (uint32_t i = 0; i < n; i++)
        skip[i] = !(c[i] > 0);
    for (uint32_t a = 0; a < k; a++)
        skip[S[a]] = 1;
    fit_snls s = {k, H, Hinv, F, o->admm_lambda, o->admm_gamma, o->snls_tol, o->snls_maxit};
    rhs_ctx rx = {R, c, Tt, rhs, k, rm, &s, NULL, work, vrow, iters, skip};
    if (rm->solve_row)
        rx.Y = Ybreve;
    if ((rc = right_sides(R, &L, c, &rx, rep)))
        goto out;
    for (size_t e = 0; e < (size_t)nl * k; e++)
        rhs[e] *= hs;
    if (!rm->solve_row) {
        /* in an MPI job each rank solves a range of words (the compressed iterate: its rows,
         * whose right-hand sides it holds); the rows are then exchanged */
        jsmf_comm *comm = o->comm ? o->comm : jsmf_comm_self();
        uint32_t w0 = L.r0, w1 = L.r1;
        if (!fit_part_split(&L))
            comm_split(n, NULL, jsmf_comm_size(comm), jsmf_comm_rank(comm), &w0, &w1);
        if (rm->solve_many && s.maxit > 0)
            solve_words_many(rm, &s, w0, w1, skip, rhs + (size_t)(w0 - r0) * k, Ybreve, iters,
                             work, nt, o);
        else
            solve_words(rm, &s, w0, w1, skip, rhs + (size_t)(w0 - r0) * k, Ybreve, iters, work,
                        nt, o);
        if ((rc = comm_agree(comm, rc)))
            goto out;
        if (fit_part_split(&L)) {
            if ((rc = fit_part_gather(&L, k, Ybreve + (size_t)r0 * k, Ybreve)) ||
                (rc = fit_part_gather_bytes(&L, sizeof *iters, iters + r0, iters)))
                goto out;
        } else if ((rc = share_word_rows(comm, n, Ybreve, sizeof(double) * k)) ||
                   (rc = share_word_rows(comm, n, iters, sizeof *iters))) {
            goto out;
        }
    }
    /* anchors: Alg. 3 line 2; massless words: uniform (they get no weight in B) */
    for (uint32_t i = 0; i < n; i++)
        if (skip[i])
            for (uint32_t j = 0; j < k; j++)
                Ybreve[(size_t)i * k + j] = 1.0 / k;
    for (uint32_t a = 0; a < k; a++)
        for (uint32_t j = 0; j < k; j++)
            Ybreve[(size_t)S[a] * k + j] = a == j;
    /* residual |Cbar_i - y^T Cbar_S|^2 = q2_i/c_i^2 - 2 y^T r_i + y^T H y (rectified Recovery),
     * for the rows whose right-hand sides this rank holds, then exchanged */
    for (uint32_t i = L.r0; i < L.r1; i++) {
        if (!(c[i] > 0))
            continue;
        const double *y = Ybreve + (size_t)i * k;
        double hy = 0, ry = 0;
        for (uint32_t a = 0; a < k; a++) {
            double t = 0;
            for (uint32_t b = 0; b < k; b++)
                t += H[a * k + b] * y[b];
            hy += y[a] * t;
            ry += y[a] * rhs[(size_t)(i - r0) * k + a];
        }
        int anchor = 0;
        for (uint32_t a = 0; a < k; a++)
            anchor |= S[a] == i;
        if (anchor)
            ry = hy; /* the anchor's own row: exact zero residual */
        res[i] = sqrt(fmax(q2[i] / (c[i] * c[i]) - (2 * ry - hy) / hs, 0));
        if (anchor)
            res[i] = 0;
    }
    if ((rc = fit_part_gather(&L, 1, res + r0, res)))
        goto out;
    double rec = 0;
    uint64_t total = 0;
    uint32_t unconv = 0;
    for (uint32_t i = 0; i < n; i++) {
        total += iters[i];
        if (iters[i] > o->snls_maxit)
            unconv++;
        rec += res[i];
    }
    *recovery_rect = rec / n;
    if (rep) {
        rep->snls_iters += total;
        rep->snls_unconverged += unconv;
    }
    /* Bayes' rule (Alg. 3 lines 15-17) with the unigram pw (a word without mass gets none) */
    double *den = calloc(k, sizeof(double));
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < k; j++)
            den[j] += Ybreve[(size_t)i * k + j] * fmax(pw[i], 0);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < k; j++)
            B[(size_t)i * k + j] =
                den[j] > 0 ? Ybreve[(size_t)i * k + j] * fmax(pw[i], 0) / den[j] : 0;
    free(den);
out:
    for (int t = 0; t < nt && work; t++)
        free(work[t]), free(vrow[t]);
    free(work), free(vrow);
    free(Tt), free(H), free(Hinv), free(F), free(rhs), free(iters), free(skip), free(res);
    return rc;
}

/* A = D^-1 C_SS D^-1 with D = diag(B_{s_k, k}) (Lee, Bindel & Mimno 2015 Eq. 6, Lee et al. JSMF
 * Alg. 4 RECOVER-A). */
void fit_recover_a_diag(uint32_t k, const double *B, const double *Css, const uint32_t *S,
                        double *A)
{
    for (uint32_t a = 0; a < k; a++)
        for (uint32_t b = 0; b < k; b++) {
            double da = B[(size_t)S[a] * k + a], db = B[(size_t)S[b] * k + b];
            double css = Css[a * k + b];
            A[a * k + b] = (da > 0 && db > 0) ? css / (da * db) : 0;
        }
}

typedef struct {
    uint32_t n, k;
    const double *Bp; /* n x k: B (B^T B)^-1 */
    double *out;
} pinv_ctx;

static void pinv_block(void *arg, uint32_t r0, uint32_t nb, const double *rows, int tid)
{
    pinv_ctx *a = arg;
    (void)tid;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nb, a->k, a->n, 1.0, rows, a->n, a->Bp,
                a->k, 0.0, a->out + (size_t)r0 * a->k, a->k);
}

/* A = B^+ C B^+T with B^+ = (B^T B)^-1 B^T (Arora et al. 2013 Alg. 3, R = A^+ Q A^+T). */
int fit_recover_a_pinv(const fit_mat *R, uint32_t k, const double *B, double *A)
{
    uint32_t n = R->n;
    double *G = malloc(sizeof(double) * k * k), *Gi = malloc(sizeof(double) * k * k);
    double *Bp = big_malloc(sizeof(double) * n * k), *RB = big_malloc(sizeof(double) * n * k);
    double *T = malloc(sizeof(double) * k * k);
    int rc = JSMF_OK;
    if (!G || !Gi || !Bp || !RB || !T) {
        rc = jsmf_error(JSMF_ENOMEM, "fit: out of memory (pseudo-inverse A)");
        goto out;
    }
    fit_gemm_tn(n, k, k, B, B, G);
    sym_pinv(k, G, Gi);
    fit_gemm_nn(n, k, k, B, Gi, Bp);
    /* by the product where it costs no pass (C's rows in memory); else one pass over whole
     * rows, the compressed iterate's too (its product would be cheaper, but would round A's
     * last bits otherwise) */
    if (!R->ops->product_passes) {
        if ((rc = fit_mat_apply(R, Bp, k, RB, NULL, NULL)))
            goto out;
    } else {
        pinv_ctx pc = {n, k, Bp, RB};
        if ((rc = fit_mat_pass(R, pinv_block, &pc, NULL, NULL)))
            goto out;
    }
    fit_gemm_tn(n, k, k, Bp, RB, T);
    for (uint32_t a = 0; a < k; a++)
        for (uint32_t b = 0; b < k; b++)
            A[a * k + b] = 0.5 * (T[a * k + b] + T[b * k + a]);
out:
    free(G), free(Gi), free(Bp), free(RB), free(T);
    return rc;
}

/* Alg. 4 RECOVER-ALPHA. With beta = alpha0/(alpha0+1) the row-normalised Dirichlet second moment
 * is beta 1 a^T + (1-beta) I, so the fit |beta(1a^T - I) + I - Abar|_F^2 is quadratic in beta;
 * its minimiser is where the gradient of lines 8-9 vanishes, taken here in closed form (the
 * iteration of Alg. 4 converges to the same point), clamped to alpha0 >= 0. */
double fit_recover_alpha(uint32_t k, const double *A, double *alpha)
{
    double *a = malloc(sizeof(double) * k), *Ab = malloc(sizeof(double) * k * k);
    double tot = 0;
    for (uint32_t i = 0; i < k; i++) {
        a[i] = 0;
        for (uint32_t j = 0; j < k; j++)
            a[i] += A[i * k + j];
        tot += a[i];
    }
    for (uint32_t i = 0; i < k; i++) {
        for (uint32_t j = 0; j < k; j++)
            Ab[i * k + j] = a[i] > 0 ? A[i * k + j] / a[i] : 0;
        a[i] = tot > 0 ? a[i] / tot : 0;
    }
    double num = 0, den = 0;
    for (uint32_t i = 0; i < k; i++)
        for (uint32_t j = 0; j < k; j++) {
            double m = a[j] - (i == j);
            num += m * (Ab[i * k + j] - (i == j));
            den += m * m;
        }
    double beta = den > 0 ? num / den : 0;
    if (beta < 0)
        beta = 0;
    if (beta > 1 - 1e-12)
        beta = 1 - 1e-12;
    double alpha0 = beta / (1 - beta);
    for (uint32_t i = 0; i < k; i++)
        alpha[i] = alpha0 * a[i];
    free(a), free(Ab);
    return alpha0;
}
