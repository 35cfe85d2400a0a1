/* fit_eig.c — the K largest algebraic eigenpairs of a symmetric operator seen only through
 * "multiply by a tall-skinny block": restarted block Krylov with Rayleigh-Ritz. The Krylov basis
 * holds both ends of the spectrum, so large negative eigenvalues (C is indefinite) are resolved
 * rather than mistaken for wanted ones; Ritz values are ranked algebraically. Warm-started from
 * the previous AP step, a nearly converged subspace needs one pass. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/bigmem.h"
#include "core/budget.h"
#include "fit_internal.h"

/* Columns c0.. of this rank's rows of Q, from the one stream over all n rows (so every number
 * of ranks draws the same start). */
static void fill_random(const fit_part *L, uint32_t p, uint32_t c0, double *Q, uint64_t *rng)
{
    for (uint32_t i = 0; i < L->n; i++)
        for (uint32_t c = c0; c < p; c++) {
            double g = fit_rng_gauss(rng);
            if (i >= L->r0 && i < L->r1)
                Q[(size_t)(i - L->r0) * p + c] = g;
        }
}

/* X -= B (B^T X) for each earlier block B, twice (classical Gram-Schmidt, reorthogonalised). */
static int orth_against(const fit_part *L, uint32_t p, double **Vb, uint32_t nb, double *X,
                        double *tmp, double *coef)
{
    uint32_t nl = L->r1 - L->r0;
    for (int sweep = 0; sweep < 2; sweep++)
        for (uint32_t b = 0; b < nb; b++) {
            int rc = fit_gemm_tn_part(L, p, p, Vb[b], X, coef);
            if (rc)
                return rc;
            fit_gemm_nn(nl, p, p, Vb[b], coef, tmp);
            for (size_t e = 0; e < (size_t)nl * p; e++)
                X[e] -= tmp[e];
        }
    return JSMF_OK;
}

/* Orthonormal columns in Q, those lost to rank deficiency replaced by random ones made
 * orthogonal to the earlier blocks too. */
static int orth_block(const fit_part *L, uint32_t p, double **Vb, uint32_t nb, double *Q,
                      double *tmp, double *coef, uint64_t *rng)
{
    uint32_t r = 0;
    int rc = fit_orth_part_ws(L, p, Q, &r, tmp);
    if (rc || r == p)
        return rc;
    fill_random(L, p, r, Q, rng);
    if (nb && (rc = orth_against(L, p, Vb, nb, Q, tmp, coef)))
        return rc;
    return fit_orth_part_ws(L, p, Q, &r, tmp);
}

/* The n-row blocks of one solve: depth blocks of V and of A V, the Ritz vectors Y, A Y and a
 * scratch block, each of this rank's rows x p (+ 1: a rank may hold no rows). */
struct fit_eig_ws {
    size_t np;
    uint32_t depth;
    double **Vb, **Wb, *Y, *AY, *tmp;
};

fit_eig_ws *fit_eig_ws_new(void)
{
    return calloc(1, sizeof(fit_eig_ws));
}

static void ws_release(fit_eig_ws *ws)
{
    for (uint32_t j = 0; j < ws->depth && ws->Vb && ws->Wb; j++)
        free(ws->Vb[j]), free(ws->Wb[j]);
    free(ws->Vb), free(ws->Wb), free(ws->Y), free(ws->AY), free(ws->tmp);
    memset(ws, 0, sizeof *ws);
}

void fit_eig_ws_free(fit_eig_ws *ws)
{
    if (ws)
        ws_release(ws);
    free(ws);
}

/* Blocks of at least np doubles, depth of V and of A V: those held when large enough. More
 * than the machine holds is refused here, before the first product: overcommitted pages would
 * otherwise be touched one block at a time and the process killed mid-run. */
static int ws_reserve(fit_eig_ws *ws, size_t np, uint32_t depth)
{
    if (ws->np >= np && ws->depth >= depth)
        return JSMF_OK;
    double need = ((double)depth * 2 + 3) * (double)np * sizeof(double);
    uint64_t have = mem_physical();
    if (have && need > (double)have)
        return jsmf_error(JSMF_ENOMEM, "fit: the eigendecomposition holds %u blocks of %zu "
                          "doubles, %.1f GB, more than this machine's %.1f GB of memory: lower "
                          "-k, or fit on a machine with more", 2 * depth + 3, np, need / 1e9,
                          (double)have / 1e9);
    ws_release(ws);
    ws->Vb = calloc(depth, sizeof *ws->Vb), ws->Wb = calloc(depth, sizeof *ws->Wb);
    ws->Y = big_malloc(sizeof(double) * np), ws->AY = big_malloc(sizeof(double) * np);
    ws->tmp = big_malloc(sizeof(double) * np);
    int fail = !ws->Vb || !ws->Wb || !ws->Y || !ws->AY || !ws->tmp;
    ws->depth = ws->Vb && ws->Wb ? depth : 0;
    for (uint32_t j = 0; j < ws->depth && !fail; j++)
        fail = !(ws->Vb[j] = big_malloc(sizeof(double) * np)) ||
               !(ws->Wb[j] = big_malloc(sizeof(double) * np));
    if (fail) {
        ws_release(ws);
        return jsmf_error(JSMF_ENOMEM, "fit: out of memory for the eigensolver (%u blocks of %zu "
                          "doubles)", 2 * depth + 3, np);
    }
    ws->np = np;
    return JSMF_OK;
}

int fit_eig_topk(fit_apply_fn apply, void *ctx, const fit_part *L, const fit_eig_opts *e,
                 double *U, double *lam, fit_eig_result *res, double *next)
{
    uint32_t n = L->n, nl = L->r1 - L->r0;
    uint32_t k = e->k, p = e->p < n ? e->p : n, depth = e->depth, maxit = e->maxit;
    const double *Q0 = e->Q0;
    uint32_t p0 = e->p0;
    double tol = e->tol;
    if (k > p)
        return jsmf_error(JSMF_EINVAL, "fit: eigensolver block %u smaller than K=%u", p, k);
    if (depth < 1)
        depth = 1;
    if (maxit < 1)
        maxit = 1;
    while (depth > 1 && (uint64_t)depth * p > n)
        depth--;
    uint32_t m = depth * p;
    uint64_t rng = e->seed ^ 0x5DEECE66Dull;
    size_t np = (size_t)nl * p + 1; /* + 1: a rank may hold no rows */
    fit_eig_ws own = {0}, *ws = e->ws ? e->ws : &own;
    double *T = malloc(sizeof(double) * m * m);
    double *w = malloc(sizeof(double) * m), *coef = malloc(sizeof(double) * p * p);
    double *Sj = malloc(sizeof(double) * p * p), *G = malloc(sizeof(double) * p * p);
    double *prev = malloc(sizeof(double) * k);
    int rc = ws_reserve(ws, np, depth);
    double **Vb = ws->Vb, **Wb = ws->Wb, *Y = ws->Y, *AY = ws->AY, *tmp = ws->tmp;
    if (!rc && (!T || !w || !coef || !Sj || !G || !prev))
        rc = jsmf_error(JSMF_ENOMEM, "fit: out of memory for the eigensolver (%u x %u blocks)", nl,
                        m);
    rc = fit_part_agree(L, rc);
    if (rc)
        goto out;
    np = (size_t)nl * p;
    /* start: warm columns, random rest */
    uint32_t pw = Q0 ? (p0 < p ? p0 : p) : 0;
    for (uint32_t i = 0; i < nl; i++)
        for (uint32_t c = 0; c < pw; c++)
            Vb[0][(size_t)i * p + c] = Q0[(size_t)i * p0 + c];
    fill_random(L, p, pw, Vb[0], &rng);
    if ((rc = orth_block(L, p, Vb, 0, Vb[0], tmp, coef, &rng)))
        goto out;
    uint32_t it;
    double last_res = NAN;
    for (it = 0; it < maxit; it++) {
        for (uint32_t j = 0; j < depth; j++) {
            if ((rc = apply(ctx, Vb[j], p, Wb[j])))
                goto out;
            if (j + 1 < depth) {
                memcpy(Vb[j + 1], Wb[j], sizeof(double) * np);
                if ((rc = orth_against(L, p, Vb, j + 1, Vb[j + 1], tmp, coef)) ||
                    /* an invariant subspace reached: extended randomly, kept orthogonal */
                    (rc = orth_block(L, p, Vb, j + 1, Vb[j + 1], tmp, coef, &rng)))
                    goto out;
            }
        }
        /* Rayleigh-Ritz on span(V): T = V^T (A V), symmetrised */
        for (uint32_t a = 0; a < depth; a++)
            for (uint32_t b = 0; b < depth; b++) {
                if ((rc = fit_gemm_tn_part(L, p, p, Vb[a], Wb[b], coef)))
                    goto out;
                for (uint32_t r = 0; r < p; r++)
                    for (uint32_t c = 0; c < p; c++)
                        T[(size_t)(a * p + r) * m + b * p + c] = coef[r * p + c];
            }
        for (uint32_t r = 0; r < m; r++)
            for (uint32_t c = r + 1; c < m; c++) {
                double v = 0.5 * (T[(size_t)r * m + c] + T[(size_t)c * m + r]);
                T[(size_t)r * m + c] = T[(size_t)c * m + r] = v;
            }
        if (fit_syev(m, T, w)) {
            rc = jsmf_error(JSMF_ENUMERIC, "fit: Rayleigh-Ritz eigenproblem failed");
            goto out;
        }
        /* top p Ritz vectors, descending: Y = sum_j Vb[j] S_j, AY = sum_j Wb[j] S_j */
        memset(Y, 0, sizeof(double) * np);
        memset(AY, 0, sizeof(double) * np);
        for (uint32_t j = 0; j < depth; j++) {
            for (uint32_t r = 0; r < p; r++)
                for (uint32_t c = 0; c < p; c++)
                    Sj[r * p + c] = T[(size_t)(j * p + r) * m + (m - 1 - c)];
            fit_gemm_nn(nl, p, p, Vb[j], Sj, tmp);
            for (size_t e = 0; e < np; e++)
                Y[e] += tmp[e];
            fit_gemm_nn(nl, p, p, Wb[j], Sj, tmp);
            for (size_t e = 0; e < np; e++)
                AY[e] += tmp[e];
        }
        double amax = 0;
        for (uint32_t c = 0; c < p; c++)
            amax = fmax(amax, fabs(w[m - 1 - c]));
        if (e->tol_kth)
            amax = fabs(w[m - k]);
        for (size_t i = 0; i < nl; i++)
            for (uint32_t c = 0; c < p; c++)
                tmp[i * p + c] = AY[i * p + c] - w[m - 1 - c] * Y[i * p + c];
        if ((rc = fit_gemm_tn_part(L, p, p, tmp, tmp, G)))
            goto out;
        double r = 0;
        for (uint32_t c = 0; c < k; c++)
            r = fmax(r, sqrt(fmax(G[c * p + c], 0)));
        last_res = r / (amax > 0 ? amax : 1);
        if (e->ritz_change) { /* how far the wanted Ritz values moved since the last cycle */
            double ch = it ? 0 : INFINITY;
            for (uint32_t c = 0; c < k && it; c++)
                ch = fmax(ch, fabs(w[m - 1 - c] - prev[c]));
            last_res = ch / (amax > 0 ? amax : 1);
            for (uint32_t c = 0; c < k; c++)
                prev[c] = w[m - 1 - c];
        }
        if (last_res <= tol || it + 1 == maxit)
            break;
        /* restart from A Y: one power step beyond the Ritz vectors (with depth 1 this is
         * subspace iteration; Y itself would span the same space again) */
        memcpy(Vb[0], AY, sizeof(double) * np);
        if ((rc = orth_block(L, p, Vb, 0, Vb[0], tmp, coef, &rng)))
            goto out;
    }
    for (uint32_t i = 0; i < nl; i++)
        for (uint32_t c = 0; c < k; c++)
            U[(size_t)i * k + c] = Y[(size_t)i * p + c];
    for (uint32_t c = 0; c < k; c++)
        lam[c] = w[m - 1 - c];
    if (next)
        memcpy(next, AY, sizeof(double) * np);
    if (res) {
        res->applies = (it < maxit ? it + 1 : maxit) * depth;
        res->resid = last_res;
    }
out:
    if (ws == &own)
        ws_release(ws);
    free(T), free(w), free(coef), free(Sj), free(G), free(prev);
    return rc;
}
