/* test_fit_snls.c — ADMM for many words at once (fit_snls_admm_many, B's recovery) against the
 * one-word solver: each word's result is the same to the bit whatever words share its pass and
 * in whichever position (so any thread count or split of the words gives the same B), within
 * 1e-6 of the one-word solver's (only the order of F t's sums differs), on the simplex, with the
 * same iteration counts up to one and the same "maxit + 1" for a word that does not converge. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fit/fit_internal.h"

static double uniform(uint64_t *s)
{
    return (fit_rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* out = A^-1 for a symmetric positive definite k x k A (Gauss-Jordan, no pivoting needed). */
static void spd_inverse(uint32_t k, const double *A, double *out)
{
    double *M = malloc(sizeof(double) * k * 2 * k);
    for (uint32_t i = 0; i < k; i++)
        for (uint32_t j = 0; j < k; j++)
            M[i * 2 * k + j] = A[i * k + j], M[i * 2 * k + k + j] = i == j;
    for (uint32_t c = 0; c < k; c++) {
        double pv = M[c * 2 * k + c];
        for (uint32_t j = 0; j < 2 * k; j++)
            M[c * 2 * k + j] /= pv;
        for (uint32_t i = 0; i < k; i++) {
            double f = M[i * 2 * k + c];
            for (uint32_t j = 0; i != c && j < 2 * k; j++)
                M[i * 2 * k + j] -= f * M[c * 2 * k + j];
        }
    }
    for (uint32_t i = 0; i < k; i++) /* symmetric as ADMM's F and H^-1 are */
        for (uint32_t j = 0; j < k; j++)
            out[i * k + j] = 0.5 * (M[i * 2 * k + k + j] + M[j * 2 * k + k + i]);
    free(M);
}

/* One problem: H = U^T U (+ a ridge) of k random anchor rows over l columns, scaled to trace
 * k as fit_recover_b does, and m right-hand sides of mixtures of three anchors plus noise. */
typedef struct {
    uint32_t k, m;
    double *H, *Hinv, *F, *R;
} problem;

static void make_problem(uint32_t k, uint32_t m, uint64_t seed, problem *p)
{
    uint32_t l = 4 * k;
    uint64_t s = seed;
    double *U = malloc(sizeof(double) * k * l), *G = malloc(sizeof(double) * k * k);
    p->k = k, p->m = m;
    p->H = calloc(k * k, sizeof(double)), p->Hinv = malloc(sizeof(double) * k * k);
    p->F = malloc(sizeof(double) * k * k), p->R = calloc((size_t)m * k, sizeof(double));
    for (uint32_t a = 0; a < k; a++)
        for (uint32_t j = 0; j < l; j++) {
            double x = uniform(&s);
            U[a * l + j] = x * x * x * x;
        }
    for (uint32_t a = 0; a < k; a++)
        for (uint32_t b = 0; b < k; b++) {
            for (uint32_t j = 0; j < l; j++)
                p->H[a * k + b] += U[a * l + j] * U[b * l + j];
            p->H[a * k + b] += (a == b) * 1e-3;
        }
    double tr = 0;
    for (uint32_t a = 0; a < k; a++)
        tr += p->H[a * k + a];
    for (uint32_t e = 0; e < k * k; e++)
        p->H[e] *= k / tr;
    spd_inverse(k, p->H, p->Hinv);
    for (uint32_t e = 0; e < k * k; e++)
        G[e] = 3.0 * p->H[e] + (e % (k + 1) == 0);
    spd_inverse(k, G, p->F);
    for (uint32_t w = 0; w < m; w++) { /* r = U v for v a mixture of anchor rows (scaled) */
        double *r = p->R + (size_t)w * k;
        for (int c = 0; c < 3; c++) {
            uint32_t t = fit_rng_next(&s) % k;
            double mix = uniform(&s);
            for (uint32_t a = 0; a < k; a++)
                r[a] += mix * p->H[a * k + t];
        }
        for (uint32_t a = 0; a < k; a++)
            r[a] += 0.05 * uniform(&s);
    }
    free(U), free(G);
}

static void free_problem(problem *p)
{
    free(p->H), free(p->Hinv), free(p->F), free(p->R);
}

/* Words idx[0..m) of the problem by fit_snls_admm_many into Y's rows (of the word's index). */
static void solve_many(const fit_snls *s, const problem *p, const uint32_t *idx, uint32_t m,
                       double *Y, uint32_t *iters)
{
    const double **r = malloc(sizeof(double *) * (m ? m : 1));
    double **y = malloc(sizeof(double *) * (m ? m : 1));
    uint32_t *it = malloc(sizeof(uint32_t) * (m ? m : 1));
    double *work = malloc(sizeof(double) * fit_snls_admm_many_work(p->k));
    for (uint32_t a = 0; a < m; a++)
        r[a] = p->R + (size_t)idx[a] * p->k, y[a] = Y + (size_t)idx[a] * p->k;
    fit_snls_admm_many(s, m, r, y, it, work);
    for (uint32_t a = 0; a < m; a++)
        iters[idx[a]] = it[a];
    free(r), free(y), free(it), free(work);
}

static void check_size(uint32_t k, uint32_t m, uint32_t maxit, uint64_t seed)
{
    problem p;
    make_problem(k, m, seed, &p);
    fit_snls s = {k, p.H, p.Hinv, p.F, 1.9, 3.0, 1e-9, maxit};
    size_t km = (size_t)k * m + 1;
    double *Y1 = calloc(km, sizeof(double)), *Ya = calloc(km, sizeof(double));
    double *Yb = calloc(km, sizeof(double)), *Yc = calloc(km, sizeof(double));
    double *work = malloc(sizeof(double) * (8 * k + 2 * k * k));
    uint32_t *i1 = calloc(m + 1, sizeof(uint32_t)), *ia = calloc(m + 1, sizeof(uint32_t));
    uint32_t *ib = calloc(m + 1, sizeof(uint32_t)), *ic = calloc(m + 1, sizeof(uint32_t));
    uint32_t *idx = calloc(m + 1, sizeof(uint32_t));
    for (uint32_t w = 0; w < m; w++)
        i1[w] = fit_snls_admm(&s, p.R + (size_t)w * k, Y1 + (size_t)w * k, work);
    /* all at once in order; in reverse order; one at a time */
    for (uint32_t w = 0; w < m; w++)
        idx[w] = w;
    solve_many(&s, &p, idx, m, Ya, ia);
    for (uint32_t w = 0; w < m; w++)
        idx[w] = m - 1 - w;
    solve_many(&s, &p, idx, m, Yb, ib);
    for (uint32_t w = 0; w < m; w++)
        solve_many(&s, &p, &w, 1, Yc, ic);
    CHECK(!memcmp(Ya, Yb, sizeof(double) * km) && !memcmp(Ya, Yc, sizeof(double) * km));
    CHECK(!memcmp(ia, ib, sizeof(uint32_t) * m) && !memcmp(ia, ic, sizeof(uint32_t) * m));
    double dmax = 0, smax = 0, ymin = 0;
    uint32_t idiff = 0, capped = 0;
    for (uint32_t w = 0; w < m; w++) {
        double sum = 0;
        for (uint32_t a = 0; a < k; a++) {
            double y = Ya[(size_t)w * k + a];
            dmax = fmax(dmax, fabs(y - Y1[(size_t)w * k + a]));
            ymin = fmin(ymin, y);
            sum += y;
        }
        smax = fmax(smax, fabs(sum - 1));
        uint32_t d = ia[w] > i1[w] ? ia[w] - i1[w] : i1[w] - ia[w];
        idiff = d > idiff ? d : idiff;
        capped += ia[w] == maxit + 1;
        CHECK((ia[w] == maxit + 1) == (i1[w] == maxit + 1) || d <= 1);
    }
    CHECK(dmax <= 1e-6);
    CHECK(smax <= 1e-12 && ymin >= 0);
    CHECK(idiff <= 1);
    if (maxit < 10)
        CHECK(capped == m); /* none converges in so few: every word says maxit + 1 */
    free(Y1), free(Ya), free(Yb), free(Yc), free(work), free(i1), free(ia), free(ib), free(ic);
    free(idx);
    free_problem(&p);
}

int main(void)
{
    check_size(20, 37, 1000, 1);  /* more words than lanes, refilled as they finish */
    check_size(7, 5, 1000, 2);    /* an odd k, fewer words than lanes */
    check_size(50, 40, 3, 3);     /* out of iterations */
    check_size(16, 0, 1000, 4);   /* no word */
    CHECK_DONE();
}
