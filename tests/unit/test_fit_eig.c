/* test_fit_eig.c — the fit's block Krylov eigensolver: its top K against LAPACK's dense
 * eigendecomposition, and a workspace kept across calls (the rectification's steps) gives the
 * same bits as fresh blocks, also when the block width and depth change between calls. */
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
static double *make_matrix(double *spec)
{
    uint64_t rng = 7;
    double *Q = malloc(sizeof(double) * N * N), *A = calloc((size_t)N * N, sizeof(double));
    for (size_t e = 0; e < (size_t)N * N; e++)
        Q[e] = fit_rng_gauss(&rng);
    uint32_t r = 0;
    fit_part W = fit_part_whole(N);
    CHECK_OK(fit_orth_part(&W, N, Q, &r));
    CHECK(r == N);
    for (uint32_t i = 0; i < N; i++)
        spec[i] = i < K ? 10.0 / (i + 1) : (i % 2 ? -1.0 : 1.0) * 0.2 / (1 + 0.01 * i);
    for (uint32_t i = 0; i < N; i++)
        for (uint32_t j = 0; j < N; j++) {
            double s = 0;
            for (uint32_t t = 0; t < N; t++)
                s += Q[(size_t)i * N + t] * spec[t] * Q[(size_t)j * N + t];
            A[(size_t)i * N + j] = s;
        }
    free(Q);
    return A;
}

typedef struct {
    double U[N * K], lam[K], next[N * (K + 8)];
    fit_eig_result res;
} solve_out;

static void solve(const dense_op *op, uint32_t p, uint32_t depth, fit_eig_ws *ws, solve_out *o)
{
    fit_part W = fit_part_whole(N);
    fit_eig_opts e = {K, p, depth, 2, NULL, 0, 1e-10, 0, 5, 0, ws};
    memset(o, 0, sizeof *o);
    CHECK_OK(fit_eig_topk(dense_apply, (void *)op, &W, &e, o->U, o->lam, &o->res, o->next));
}

static int same(const solve_out *a, const solve_out *b)
{
    return !memcmp(a->U, b->U, sizeof a->U) && !memcmp(a->lam, b->lam, sizeof a->lam) &&
           !memcmp(a->next, b->next, sizeof a->next) && a->res.applies == b->res.applies;
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

    /* the orthonormalisation with caller's scratch equals the allocating one */
    fit_part W = fit_part_whole(N);
    double *Q1 = malloc(sizeof(double) * N * K), *Q2 = malloc(sizeof(double) * N * K);
    double *scratch = malloc(sizeof(double) * N * K);
    uint64_t rng = 11;
    for (size_t e = 0; e < (size_t)N * K; e++)
        Q1[e] = Q2[e] = fit_rng_gauss(&rng);
    uint32_t r1 = 0, r2 = 0;
    CHECK_OK(fit_orth_part(&W, K, Q1, &r1));
    CHECK_OK(fit_orth_part_ws(&W, K, Q2, &r2, scratch));
    CHECK(r1 == K && r2 == K && !memcmp(Q1, Q2, sizeof(double) * N * K));

    /* blocks larger than the machine: refused before any product, naming the size and what to
     * change (4e9 rows x 300 columns x 11 blocks is ~1e14 bytes) */
    fit_part huge = fit_part_whole(4000000000u);
    fit_eig_opts he = {200, 300, 4, 2, NULL, 0, 1e-3, 0, 5, 0, NULL};
    fit_eig_result hr;
    memset(&hr, 0, sizeof hr);
    CHECK(fit_eig_topk(dense_apply, (void *)&op, &huge, &he, NULL, NULL, &hr, NULL) ==
          JSMF_ENOMEM);
    CHECK(strstr(jsmf_errmsg(), "more than this machine's") && strstr(jsmf_errmsg(), "lower -k"));
    CHECK(hr.applies == 0);

    free(spec), free(A), free(D), free(w), free(fresh), free(kept), free(Q1), free(Q2);
    free(scratch);
    CHECK_DONE();
}
