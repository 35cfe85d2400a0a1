/* fit_snls.c — per-word simplex-constrained least squares min 1/2 |U y - v|^2 = 1/2 y^T H y - r^T y
 * + const over y in the simplex (H = U^T U and r = U^T v given; U = anchor rows of Cbar): ADMM by
 * Douglas-Rachford (Lee et al. JSMF Alg. 3), exponentiated gradient with the L2 or the KL loss and
 * a KKT / duality-gap stop (Arora et al. 2013 App. D.2, Alg. 5), and an exact primal active-set
 * method that reuses H for every word. `work` holds at least 8k + 2k^2 doubles. */
#include <math.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "fit_internal.h"

/* Alg. 3 line 6 for one word: f = gamma r, y = q = Pi(H^-1 r) (t, scr: k doubles each). */
static void admm_start(const fit_snls *s, const double *r, double *f, double *q, double *y,
                       double *t, double *scr)
{
    uint32_t k = s->k;
    for (uint32_t j = 0; j < k; j++)
        f[j] = s->gamma * r[j];
    cblas_dgemv(CblasRowMajor, CblasNoTrans, k, k, 1.0, s->Hinv, k, r, 1, 0.0, t, 1);
    fit_simplex_project(k, t, y, scr);
    memcpy(q, y, sizeof(double) * k);
}

/* Alg. 3 lines 10-11 for one word given p = F t (its j-th entry at p[j * stride]): q moves, y
 * becomes Pi(q) (through yn); returns the largest change of y, which line 12 tests. */
static double admm_step(const fit_snls *s, const double *p, size_t stride, double *q, double *y,
                        double *yn, double *scr)
{
    uint32_t k = s->k;
    for (uint32_t j = 0; j < k; j++)
        q[j] += s->lambda * (p[j * stride] - y[j]);
    fit_simplex_project(k, q, yn, scr);
    double ch = 0;
    for (uint32_t j = 0; j < k; j++) { /* (fmax is a call into libm without -ffast-math) */
        double d = fabs(yn[j] - y[j]);
        ch = d > ch ? d : ch;
    }
    memcpy(y, yn, sizeof(double) * k);
    return ch;
}

uint32_t fit_snls_admm(const fit_snls *s, const double *r, double *y, double *work)
{
    uint32_t k = s->k;
    double *f = work, *q = f + k, *p = q + k, *t = p + k, *yn = t + k, *scr = yn + k;
    admm_start(s, r, f, q, y, t, scr);
    for (uint32_t it = 1; it <= s->maxit; it++) {
        for (uint32_t j = 0; j < k; j++) /* line 9: p = F (2y - q + f) */
            t[j] = 2 * y[j] - q[j] + f[j];
        cblas_dgemv(CblasRowMajor, CblasNoTrans, k, k, 1.0, s->F, k, t, 1, 0.0, p, 1);
        if (admm_step(s, p, 1, q, y, yn, scr) <= s->tol) /* line 12: y has converged */
            return it;
    }
    return s->maxit + 1;
}

/* ---- ADMM for many words at once -----------------------------------------------------------
 * Each iteration's p = F t is a matrix-vector product (BLAS 2: F read from cache once a word,
 * ~40% of B's recovery). ADMM_LANES words share one pass over F instead, each in a lane of a
 * vector: p_i = sum_j F_ij t_j summed over j in order for every lane alike, so a word's result
 * depends on its own data only, never on which words share its pass (any thread count, any
 * split of the words). Lanes are refilled from the word list as their words converge. */

#define ADMM_LANES 16 /* four vectors of four (admm_lanes_matvec is written for 16) */

typedef double lanes4 __attribute__((vector_size(32), aligned(8)));

/* Pt (k x ADMM_LANES) = F Tt, two rows of F at a time: eight independent sums in flight, held
 * in registers (written out: the compiler at -O2 keeps an array of them in memory). */
FIT_HOT static void admm_lanes_matvec(uint32_t k, const double *F, const double *Tt, double *Pt)
{
    enum { L = ADMM_LANES };
    for (uint32_t i = 0; i < k; i += 2) {
        /* an odd last row pairs with itself (computed twice, stored once) */
        const double *f0 = F + (size_t)i * k, *f1 = i + 1 < k ? f0 + k : f0;
        lanes4 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, b0 = {0}, b1 = {0}, b2 = {0}, b3 = {0};
        for (uint32_t j = 0; j < k; j++) {
            const double *t = Tt + (size_t)j * L;
            lanes4 t0, t1, t2, t3;
            memcpy(&t0, t, sizeof t0), memcpy(&t1, t + 4, sizeof t1);
            memcpy(&t2, t + 8, sizeof t2), memcpy(&t3, t + 12, sizeof t3);
            double x = f0[j], z = f1[j];
            a0 += x * t0, a1 += x * t1, a2 += x * t2, a3 += x * t3;
            b0 += z * t0, b1 += z * t1, b2 += z * t2, b3 += z * t3;
        }
        double *p = Pt + (size_t)i * L;
        memcpy(p, &a0, sizeof a0), memcpy(p + 4, &a1, sizeof a1);
        memcpy(p + 8, &a2, sizeof a2), memcpy(p + 12, &a3, sizeof a3);
        if (i + 1 < k) {
            p += L;
            memcpy(p, &b0, sizeof b0), memcpy(p + 4, &b1, sizeof b1);
            memcpy(p + 8, &b2, sizeof b2), memcpy(p + 12, &b3, sizeof b3);
        }
    }
}

size_t fit_snls_admm_many_work(uint32_t k)
{
    return (size_t)6 * ADMM_LANES * k + 2 * (size_t)k;
}

void fit_snls_admm_many(const fit_snls *s, uint32_t m, const double *const *r, double *const *y,
                        uint32_t *iters, double *work)
{
    enum { L = ADMM_LANES };
    uint32_t k = s->k;
    double *f = work, *q = f + (size_t)L * k, *yl = q + (size_t)L * k, *yn = yl + (size_t)L * k;
    double *Tt = yn + (size_t)L * k, *Pt = Tt + (size_t)L * k, *t = Pt + (size_t)L * k;
    double *scr = t + k;
    uint32_t word[L], it[L], next = 0, busy = 0;
    memset(Tt, 0, sizeof(double) * L * k);
    for (uint32_t l = 0; l < L; l++) {
        word[l] = UINT32_MAX;
        if (next < m) {
            word[l] = next++, it[l] = 0, busy++;
            admm_start(s, r[word[l]], f + (size_t)l * k, q + (size_t)l * k,
                            yl + (size_t)l * k, t, scr);
        }
    }
    while (busy) {
        for (uint32_t l = 0; l < L; l++) /* line 9: t = 2y - q + f, a lane a column */
            if (word[l] != UINT32_MAX)
                for (uint32_t j = 0; j < k; j++)
                    Tt[(size_t)j * L + l] = 2 * yl[(size_t)l * k + j] - q[(size_t)l * k + j] +
                                            f[(size_t)l * k + j];
        admm_lanes_matvec(k, s->F, Tt, Pt);
        for (uint32_t l = 0; l < L; l++) {
            if (word[l] == UINT32_MAX)
                continue;
            double *ql = q + (size_t)l * k, *y0 = yl + (size_t)l * k;
            double ch = admm_step(s, Pt + l, L, ql, y0, yn + (size_t)l * k, scr);
            it[l]++;
            if (ch > s->tol && it[l] < s->maxit)
                continue;
            /* line 12: converged (or out of iterations: maxit + 1, as fit_snls_admm says) */
            iters[word[l]] = ch <= s->tol ? it[l] : s->maxit + 1;
            memcpy(y[word[l]], y0, sizeof(double) * k);
            word[l] = UINT32_MAX, busy--;
            if (next < m) {
                word[l] = next++, it[l] = 0, busy++;
                admm_start(s, r[word[l]], f + (size_t)l * k, ql, y0, t, scr);
            }
        }
    }
}

static double quad(uint32_t k, const double *H, const double *r, const double *x, double *g)
{
    cblas_dgemv(CblasRowMajor, CblasNoTrans, k, k, 1.0, H, k, x, 1, 0.0, g, 1);
    double f = 0.5 * cblas_ddot(k, x, 1, g, 1) - cblas_ddot(k, r, 1, x, 1);
    for (uint32_t j = 0; j < k; j++)
        g[j] -= r[j];
    return f;
}

/* Multiplicative step x' = x exp(-eta (g - min g)) / Z. */
static void eg_step(uint32_t k, const double *x, const double *g, double gmin, double eta,
                    double *xn)
{
    double z = 0;
    for (uint32_t j = 0; j < k; j++)
        z += (xn[j] = x[j] * exp(-eta * (g[j] - gmin)));
    for (uint32_t j = 0; j < k; j++)
        xn[j] /= z;
}

/* The loss an exponentiated-gradient solve minimises: its value at x, its gradient into g. */
typedef double (*eg_loss)(const void *ctx, uint32_t k, const double *x, double *g);

/* Exponentiated gradient from the centre of the simplex with Armijo backtracking on the rate,
 * stopped by the KKT duality gap (Arora et al. 2013 App. D.2, Alg. 5); L2 and KL differ only in
 * loss. */
static uint32_t expgrad(const fit_snls *s, eg_loss loss, const void *ctx, double eta, double *y,
                        double *work)
{
    uint32_t k = s->k;
    double *g = work, *xn = g + k, *gn = xn + k;
    for (uint32_t j = 0; j < k; j++)
        y[j] = 1.0 / k;
    double f = loss(ctx, k, y, g);
    for (uint32_t it = 1; it <= s->maxit; it++) {
        double gmin = g[0];
        for (uint32_t j = 1; j < k; j++)
            gmin = fmin(gmin, g[j]);
        /* KKT: lambda = g - min g >= 0, converged when lambda^T x (the duality gap) is small */
        double gap = cblas_ddot(k, y, 1, g, 1) - gmin;
        if (gap < s->tol)
            return it;
        double fn = 0;
        int ok = 0;
        for (int bt = 0; bt < 60 && !ok; bt++) { /* Armijo backtracking on eta */
            eg_step(k, y, g, gmin, eta, xn);
            fn = loss(ctx, k, xn, gn);
            double dec = 0;
            for (uint32_t j = 0; j < k; j++)
                dec += g[j] * (xn[j] - y[j]);
            if (fn <= f + 1e-4 * dec)
                ok = 1;
            else
                eta *= 0.5;
        }
        if (!ok)
            return it;
        memcpy(y, xn, sizeof(double) * k);
        memcpy(g, gn, sizeof(double) * k);
        f = fn;
        eta *= 2.0;
    }
    return s->maxit + 1;
}

typedef struct { const double *H, *r; } l2_args;

static double l2_loss(const void *ctx, uint32_t k, const double *x, double *g)
{
    const l2_args *a = ctx;
    return quad(k, a->H, a->r, x, g);
}

uint32_t fit_snls_expgrad(const fit_snls *s, const double *r, double *y, double *work)
{
    l2_args a = {s->H, r};
    return expgrad(s, l2_loss, &a, 50.0 /* rate of Lee et al. JSMF Sec. 5.1 */, y, work);
}

/* KL objective -sum_j v_j log (T^T x)_j over the support of v; Tt = T^T (n x k). */
static double kl_eval(uint32_t k, const double *Tt, uint32_t n, const double *v, const double *x,
                      double *g)
{
    double f = 0;
    memset(g, 0, sizeof(double) * k);
    for (uint32_t j = 0; j < n; j++) {
        if (!(v[j] > 0))
            continue;
        const double *t = Tt + (size_t)j * k;
        double z = cblas_ddot(k, t, 1, x, 1);
        if (z < 1e-300)
            z = 1e-300;
        f -= v[j] * log(z);
        cblas_daxpy(k, -v[j] / z, t, 1, g, 1);
    }
    return f;
}

typedef struct { const double *Tt, *v; uint32_t n; } kl_args;

static double kl_loss(const void *ctx, uint32_t k, const double *x, double *g)
{
    const kl_args *a = ctx;
    return kl_eval(k, a->Tt, a->n, a->v, x, g);
}

uint32_t fit_snls_kl(const fit_snls *s, const double *Tt, uint32_t n, const double *v, double *y,
                     double *work)
{
    kl_args a = {Tt, v, n};
    return expgrad(s, kl_loss, &a, 1.0, y, work);
}

/* Equality-constrained subproblem on the passive set P (m indices): min 1/2 z^T H_PP z - r_P^T z
 * with 1^T z = 1, by z = a + t b, H_PP a = r_P, H_PP b = 1. */
static int solve_passive(const fit_snls *s, const double *r, const uint32_t *P, uint32_t m,
                         double *z, double *M, double *ab)
{
    uint32_t k = s->k;
    double ridge = 0;
    for (uint32_t a = 0; a < m; a++)
        ridge = fmax(ridge, s->H[(size_t)P[a] * k + P[a]]);
    ridge *= 1e-13;
    for (int attempt = 0; attempt < 6; attempt++, ridge = ridge > 0 ? ridge * 100 : 1e-300) {
        for (uint32_t a = 0; a < m; a++) {
            for (uint32_t b = 0; b < m; b++)
                M[a * m + b] = s->H[(size_t)P[a] * k + P[b]];
            M[a * m + a] += ridge;
            ab[a * 2] = r[P[a]];
            ab[a * 2 + 1] = 1.0;
        }
        if (LAPACKE_dposv(LAPACK_ROW_MAJOR, 'U', m, 2, M, m, ab, 2) == 0) {
            double sa = 0, sb = 0;
            for (uint32_t a = 0; a < m; a++)
                sa += ab[a * 2], sb += ab[a * 2 + 1];
            if (sb == 0)
                continue;
            double t = (1.0 - sa) / sb;
            for (uint32_t a = 0; a < m; a++)
                z[a] = ab[a * 2] + t * ab[a * 2 + 1];
            return 0;
        }
    }
    return -1;
}

uint32_t fit_snls_activeset(const fit_snls *s, const double *r, double *y, double *work)
{
    uint32_t k = s->k;
    double *g = work, *z = g + k, *ab = z + k, *M = ab + 2 * k;
    uint32_t P[k ? k : 1];
    unsigned char inP[k ? k : 1];
    memset(inP, 0, k);
    /* start at the best vertex */
    uint32_t j0 = 0;
    double best = INFINITY, hscale = 0;
    for (uint32_t j = 0; j < k; j++) {
        double v = 0.5 * s->H[(size_t)j * k + j] - r[j];
        hscale = fmax(hscale, s->H[(size_t)j * k + j]);
        if (v < best)
            best = v, j0 = j;
    }
    memset(y, 0, sizeof(double) * k);
    y[j0] = 1.0;
    P[0] = j0, inP[j0] = 1;
    uint32_t m = 1, it;
    double tol = s->tol * (hscale > 0 ? hscale : 1);
    for (it = 1; it <= s->maxit; it++) {
        quad(k, s->H, r, y, g);
        double nu = 0;
        for (uint32_t a = 0; a < m; a++)
            nu += y[P[a]] * g[P[a]];
        uint32_t add = UINT32_MAX;
        double most = -tol;
        for (uint32_t j = 0; j < k; j++)
            if (!inP[j] && g[j] - nu < most)
                most = g[j] - nu, add = j;
        if (add == UINT32_MAX)
            return it; /* KKT holds: g_j >= nu off P */
        P[m++] = add, inP[add] = 1;
        for (uint32_t inner = 0; inner < 4 * k + 8; inner++) {
            if (solve_passive(s, r, P, m, z, M, ab))
                return s->maxit + 1;
            int feasible = 1;
            for (uint32_t a = 0; a < m; a++)
                if (z[a] <= 0)
                    feasible = 0;
            if (feasible) {
                for (uint32_t a = 0; a < m; a++)
                    y[P[a]] = z[a];
                break;
            }
            double alpha = 1.0;
            for (uint32_t a = 0; a < m; a++)
                if (z[a] <= 0) {
                    double den = y[P[a]] - z[a];
                    double t = den > 0 ? y[P[a]] / den : 0;
                    alpha = fmin(alpha, t);
                }
            for (uint32_t a = 0; a < m; a++)
                y[P[a]] += alpha * (z[a] - y[P[a]]);
            uint32_t w = 0;
            for (uint32_t a = 0; a < m; a++) {
                if (y[P[a]] <= 1e-15) {
                    y[P[a]] = 0;
                    inP[P[a]] = 0;
                } else {
                    P[w++] = P[a];
                }
            }
            m = w;
            if (m == 0) { /* numerical corner: restart at the best vertex */
                y[j0] = 1.0, P[0] = j0, inP[j0] = 1, m = 1;
                break;
            }
        }
        double sum = 0;
        for (uint32_t j = 0; j < k; j++)
            sum += y[j];
        for (uint32_t j = 0; j < k; j++)
            y[j] /= sum;
    }
    return s->maxit + 1;
}
