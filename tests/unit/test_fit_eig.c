/* test_fit_eig.c — the fit's block Krylov eigensolver: its top K against LAPACK's dense
 * eigendecomposition, and a workspace kept across calls (the rectification's steps) gives the
 * same bits as fresh blocks, also when the block width and depth change between calls. Then,
 * for depth 1..4, on spectra with large negative values and on a rank-deficient matrix (whose
 * Krylov blocks need random columns): values and subspace against dsyevd, the workspace's
 * depth + 1 blocks, and A Y (next) and the residual, which the solver rebuilds from the basis
 * and A times its last block only, against dense products. */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fit/fit_internal.h"

enum { N = 240, K = 10 };

typedef struct {
    const double *A; /* N x N, symmetric */
} dense_op;

static int dense_apply(void *ctx, const double *V, uint32_t p, double *Z)
{
    const dense_op *d = ctx;
    for (uint32_t i = 0; i < N; i++)
        for (uint32_t c = 0; c < p; c++) {
            double s = 0;
            for (uint32_t j = 0; j < N; j++)
                s += d->A[(size_t)i * N + j] * V[(size_t)j * p + c];
            Z[(size_t)i * p + c] = s;
        }
    return JSMF_OK;
}

/* A = Q diag(spec) Q^T with a random orthogonal Q and a spectrum of both signs whose K-th and
 * (K+1)-th values lie apart (so the top K is well defined). */
static double *spectrum_matrix(uint32_t n, const double *spec, uint64_t seed);

static double *make_matrix(double *spec)
{
    for (uint32_t i = 0; i < N; i++)
        spec[i] = i < K ? 10.0 / (i + 1) : (i % 2 ? -1.0 : 1.0) * 0.2 / (1 + 0.01 * i);
    return spectrum_matrix(N, spec, 7);
}

typedef struct {
    double U[N * K], lam[K], next[N * (K + 8)];
    fit_eig_result res;
} solve_out;

static void solve(const dense_op *op, uint32_t p, uint32_t depth, fit_eig_ws *ws, solve_out *o)
{
    fit_part W = fit_part_whole(N);
    fit_eig_opts e = {K, p, depth, 2, NULL, 0, 1e-10, 0, 5, 0, ws, 0, NULL};
    memset(o, 0, sizeof *o);
    CHECK_OK(fit_eig_topk(dense_apply, (void *)op, &W, &e, o->U, o->lam, &o->res, o->next));
}

static int same(const solve_out *a, const solve_out *b)
{
    return !memcmp(a->U, b->U, sizeof a->U) && !memcmp(a->lam, b->lam, sizeof a->lam) &&
           !memcmp(a->next, b->next, sizeof a->next) && a->res.applies == b->res.applies;
}

/* ---- against a dense reference, any n: values, subspace, A Y and the residual ---- */

typedef struct {
    uint32_t n;
    const double *A;
} gen_op;

static int gen_apply(void *ctx, const double *V, uint32_t p, double *Z)
{
    const gen_op *d = ctx;
    fit_gemm_nn(d->n, d->n, p, d->A, V, Z); /* A symmetric: A V row by row */
    return JSMF_OK;
}

/* Q diag(spec) Q^T, Q random orthogonal (n x n). */
static double *spectrum_matrix(uint32_t n, const double *spec, uint64_t seed)
{
    double *Q = malloc(sizeof(double) * n * n), *A = malloc(sizeof(double) * n * n);
    for (size_t e = 0; e < (size_t)n * n; e++)
        Q[e] = fit_rng_gauss(&seed);
    uint32_t r = 0;
    fit_part W = fit_part_whole(n);
    CHECK_OK(fit_orth_part(&W, n, Q, &r));
    CHECK(r == n);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++) {
            double s = 0;
            for (uint32_t t = 0; t < n; t++)
                s += Q[(size_t)i * n + t] * spec[t] * Q[(size_t)j * n + t];
            A[(size_t)i * n + j] = s;
        }
    for (uint32_t i = 0; i < n; i++) /* exactly symmetric */
        for (uint32_t j = 0; j < i; j++)
            A[(size_t)i * n + j] = A[(size_t)j * n + i];
    free(Q);
    return A;
}

/* One solve of A (n x n) and its checks against dsyevd's values and vectors (top k). conv: it
 * ran to tol; then values and subspace are checked, else only A Y and the residual, which must
 * hold after any number of cycles. */
static void check_solve(uint32_t n, const double *A, uint32_t k, uint32_t p, uint32_t depth,
                        uint32_t maxit, int conv)
{
    gen_op op = {n, A};
    double *D = malloc(sizeof(double) * n * n), *ev = malloc(sizeof(double) * n);
    memcpy(D, A, sizeof(double) * n * n);
    CHECK(LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', 'U', n, D, n, ev) == 0);
    double anorm = fmax(fabs(ev[0]), fabs(ev[n - 1]));

    double *U = malloc(sizeof(double) * n * k), *lam = malloc(sizeof(double) * k);
    double *next = malloc(sizeof(double) * n * p), *AU = malloc(sizeof(double) * n * k);
    fit_part W = fit_part_whole(n);
    fit_eig_ws *ws = fit_eig_ws_new();
    fit_eig_opts e = {k, p, depth, maxit, NULL, 0, conv ? 1e-11 : 0, 1, 9, 0, ws, 0, NULL};
    fit_eig_result res;
    CHECK_OK(fit_eig_topk(gen_apply, &op, &W, &e, U, lam, &res, next));
    uint32_t d_used = depth;
    while (d_used > 1 && d_used * p > n)
        d_used--;
    CHECK(fit_eig_ws_blocks(ws) == d_used + 1);
    fit_eig_ws_free(ws);

    /* A Y: next's first k columns are A applied to U */
    fit_gemm_nn(n, n, k, A, U, AU);
    double dmax = 0, rmax = 0;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t c = 0; c < k; c++)
            dmax = fmax(dmax, fabs(next[(size_t)i * p + c] - AU[(size_t)i * k + c]));
    CHECK(dmax <= 1e-11 * anorm);
    /* the residual the test read: max_c ||A u_c - lam_c u_c|| / |lam_k| (tol_kth) */
    for (uint32_t c = 0; c < k; c++) {
        double s = 0;
        for (uint32_t i = 0; i < n; i++) {
            double r = AU[(size_t)i * k + c] - lam[c] * U[(size_t)i * k + c];
            s += r * r;
        }
        rmax = fmax(rmax, sqrt(s));
    }
    double true_res = rmax / fabs(lam[k - 1]);
    CHECK(fabs(res.resid - true_res) <= 1e-6 * true_res + 1e-12 * anorm / fabs(lam[k - 1]));
    if (!conv)
        CHECK(true_res > 1e-6); /* a residual large enough that a wrong A Y shows */

    if (conv) {
        CHECK(res.resid <= 1e-11);
        for (uint32_t c = 0; c < k; c++)
            CHECK_NEAR(lam[c], ev[n - 1 - c], 1e-9 * anorm);
        /* subspace: the singular values of Q_k^T U are all 1 (Q_k: dsyevd's top k vectors) */
        double *M = calloc((size_t)k * k, sizeof(double)), *MM = malloc(sizeof(double) * k * k);
        for (uint32_t a = 0; a < k; a++)
            for (uint32_t c = 0; c < k; c++)
                for (uint32_t i = 0; i < n; i++)
                    M[a * k + c] += D[(size_t)i * n + (n - 1 - a)] * U[(size_t)i * k + c];
        fit_gemm_tn(k, k, k, M, M, MM);
        for (uint32_t a = 0; a < k; a++)
            for (uint32_t c = 0; c < k; c++)
                CHECK_NEAR(MM[a * k + c], a == c, 1e-8);
        free(M), free(MM);
    }
    free(D), free(ev), free(U), free(lam), free(next), free(AU);
}

static void dense_checks(void)
{
    /* large negative eigenvalues beside the wanted top: ranked algebraically */
    enum { NA = 120, KA = 6 };
    double spec[NA];
    for (uint32_t i = 0; i < NA; i++)
        spec[i] = i < KA ? 8.0 / (i + 1) : i < KA + 3 ? -20.0 + 3 * (i - KA)
                                                      : (i % 2 ? -0.3 : 0.3) / (1 + 0.02 * i);
    double *A = spectrum_matrix(NA, spec, 21);
    /* rank 6 (3 positive, 3 large negative values): W_0 = A V_0 has rank 6 < p = 8, so every
     * Krylov block after the first and the restart need random columns (orth_block's refill) */
    enum { NB = 60, KB = 3 };
    double specb[NB] = {5, 3, 2, -9, -7, -1};
    double *B = spectrum_matrix(NB, specb, 33);
    for (uint32_t depth = 1; depth <= 4; depth++) {
        check_solve(NA, A, KA, KA + 8, depth, 400, 1);
        check_solve(NA, A, KA, KA + 8, depth, 1, 0);
        check_solve(NB, B, KB, 8, depth, 200, 1);
    }
    /* not converged, several cycles (restarts from the rebuilt A Y) */
    check_solve(NA, A, KA, KA + 4, 2, 3, 0);
    check_solve(NA, A, KA, KA + 4, 1, 5, 0);
    free(A), free(B);
}

/* The within-cycle stopping test (within: C's eigendecomposition where C is streamed): on a matrix whose top
 * K a Krylov space of depth 2 already holds (rank K up to 1e-4), the wanted Ritz values stop
 * moving between depths 2 and 3 and the cycle ends there, after 3 of its 4 products: values
 * against dsyevd, A Y (next) against a dense product (the last product moved into place, T's
 * leading block packed), the reported change small. Without the test, two full cycles. */
static void within_cycle_checks(void)
{
    enum { NW = 150, KW = 5, PW = 9 };
    double spec[NW];
    for (uint32_t i = 0; i < NW; i++)
        spec[i] = i < KW ? 6.0 - i : (i % 2 ? -1e-4 : 1e-4);
    double *A = spectrum_matrix(NW, spec, 41);
    gen_op op = {NW, A};
    double *U = malloc(sizeof(double) * NW * KW), *lam = malloc(sizeof(double) * KW);
    double *next = malloc(sizeof(double) * NW * PW), *AU = malloc(sizeof(double) * NW * KW);
    fit_part W = fit_part_whole(NW);
    for (int full = 0; full <= 1; full++) {
        fit_eig_opts e = {KW,   PW, 4, 2, NULL, 0, full ? -1 : 1e-5, 1, 9, 1, NULL, full ? 0 : 1e-6,
                          NULL};
        fit_eig_result res;
        CHECK_OK(fit_eig_topk(gen_apply, &op, &W, &e, U, lam, &res, next));
        CHECK(res.applies == (full ? 8u : 3u));
        if (!full)
            CHECK(res.resid <= 1e-6);
        /* the changes as recorded: within a cycle after each product (none to compare after
         * the first), between cycles at each cycle's end (the first has none) */
        CHECK(res.n_within == (full ? 0u : 3u) && res.n_between == (full ? 2u : 1u));
        CHECK(isnan(res.between[0]));
        if (full)
            CHECK(res.between[1] >= 0 && res.between[1] < 1e-6);
        else
            CHECK(isnan(res.within[0]) && res.within[1] > 1e-6 && res.within[2] <= 1e-6 &&
                  res.within[2] == res.resid);
        for (uint32_t c = 0; c < KW; c++)
            CHECK_NEAR(lam[c], spec[c], 1e-6);
        fit_gemm_nn(NW, NW, KW, A, U, AU);
        for (uint32_t i = 0; i < NW; i++)
            for (uint32_t c = 0; c < KW; c++)
                CHECK_NEAR(next[(size_t)i * PW + c], AU[(size_t)i * KW + c], 1e-11 * spec[0]);
    }
    /* the rest extrapolated: one cycle, every change recorded (a tolerance nothing meets) */
    fit_eig_opts all = {KW, PW, 4, 1, NULL, 0, -1, 1, 9, 1, NULL, 1e-300, NULL};
    fit_eig_result r0, r1;
    CHECK_OK(fit_eig_topk(gen_apply, &op, &W, &all, U, lam, &r0, NULL));
    CHECK(r0.applies == 4 && r0.n_within == 4);
    double d1 = r0.within[1], d2 = r0.within[2], rate = d2 / d1;
    /* so that d2's rest, d2 rate / (1 - rate), is below a tenth of d2/2 */
    CHECK(rate > 0 && rate < 1.0 / 21);
    /* at d2/2 the change itself is over the tolerance, its extrapolated rest under a tenth of
     * it: the cycle ends at depth 3, as accurate */
    all.within_tol = d2 / 2;
    CHECK_OK(fit_eig_topk(gen_apply, &op, &W, &all, U, lam, &r1, NULL));
    CHECK(r1.applies == 3 && r1.resid == d2);
    for (uint32_t c = 0; c < KW; c++)
        CHECK_NEAR(lam[c], spec[c], 1e-6);
    /* at d2/20 the change is over ten times the tolerance: no stop at depth 3 */
    all.within_tol = d2 / 20;
    CHECK_OK(fit_eig_topk(gen_apply, &op, &W, &all, U, lam, &r1, NULL));
    CHECK(r1.applies == 4);
    free(A), free(U), free(lam), free(next), free(AU);
}

int main(void)
{
    double *spec = malloc(sizeof(double) * N);
    double *A = make_matrix(spec);
    dense_op op = {A};

    /* the reference: LAPACK on the dense matrix */
    double *D = malloc(sizeof(double) * N * N), *w = malloc(sizeof(double) * N);
    memcpy(D, A, sizeof(double) * N * N);
    CHECK(LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', N, D, N, w) == 0);

    solve_out *fresh = malloc(sizeof *fresh), *kept = malloc(sizeof *kept);
    solve(&op, K + 8, 4, NULL, fresh);
    for (uint32_t c = 0; c < K; c++)
        CHECK_NEAR(fresh->lam[c], w[N - 1 - c], 1e-8 * fabs(w[N - 1]));

    /* one workspace across calls of other widths and depths: the same bits each time */
    fit_eig_ws *ws = fit_eig_ws_new();
    CHECK(ws != NULL);
    uint32_t widths[] = {K + 8, K + 2, K + 8, K + 4}, depths[] = {4, 1, 2, 4};
    for (int t = 0; t < 4; t++) {
        solve(&op, widths[t], depths[t], NULL, fresh);
        solve(&op, widths[t], depths[t], ws, kept);
        CHECK(same(fresh, kept));
    }
    fit_eig_ws_free(ws);
    fit_eig_ws_free(NULL);

    /* the in-place product of the orthonormalisation equals the out-of-place one, bit for bit
     * (several row chunks) */
    enum { NR = 3 * FIT_CHUNK + 17, PC = 7 };
    double *Q1 = malloc(sizeof(double) * NR * PC), *Q2 = malloc(sizeof(double) * NR * PC);
    double *Sm = malloc(sizeof(double) * PC * PC);
    uint64_t rng = 11;
    for (size_t e = 0; e < (size_t)NR * PC; e++)
        Q1[e] = fit_rng_gauss(&rng);
    for (size_t e = 0; e < (size_t)PC * PC; e++)
        Sm[e] = fit_rng_gauss(&rng);
    fit_gemm_nn(NR, PC, PC, Q1, Sm, Q2);
    CHECK_OK(fit_gemm_nn_inplace(NR, PC, Q1, Sm));
    CHECK(!memcmp(Q1, Q2, sizeof(double) * NR * PC));

    dense_checks();
    within_cycle_checks();

    /* blocks larger than the machine: refused before any product, naming the size and what to
     * change (4e9 rows x 300 columns x 11 blocks is ~1e14 bytes) */
    fit_part huge = fit_part_whole(4000000000u);
    fit_eig_opts he = {200, 300, 4, 2, NULL, 0, 1e-3, 0, 5, 0, NULL, 0, NULL};
    fit_eig_result hr;
    memset(&hr, 0, sizeof hr);
    CHECK(fit_eig_topk(dense_apply, (void *)&op, &huge, &he, NULL, NULL, &hr, NULL) ==
          JSMF_ENOMEM);
    CHECK(strstr(jsmf_errmsg(), "holds 5 blocks")); /* depth + 1 */
    CHECK(strstr(jsmf_errmsg(), "more than this machine's") && strstr(jsmf_errmsg(), "lower -k"));
    CHECK(hr.applies == 0);

    free(spec), free(A), free(D), free(w), free(fresh), free(kept), free(Q1), free(Q2), free(Sm);
    CHECK_DONE();
}
