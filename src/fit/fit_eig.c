/* fit_eig.c — the K largest algebraic eigenpairs of a symmetric operator seen only through
 * "multiply by a tall-skinny block": restarted block Krylov with Rayleigh-Ritz. The Krylov basis
 * holds both ends of the spectrum, so large negative eigenvalues (C is indefinite) are resolved
 * rather than mistaken for wanted ones; Ritz values are ranked algebraically. Warm-started from
 * the previous AP step, a nearly converged subspace needs one pass.
 * Memory: depth + 1 blocks of n x p doubles (the basis V and A times its last block); A V's
 * other blocks lie in the basis, so Rayleigh-Ritz, A Y and the residual are made from V, that
 * last product and small matrices, a row chunk at a time (see ritz_pass). Optionally a cycle
 * ends early, once the Ritz values stop moving between depths (depth_change). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "core/bigmem.h"
#include "core/clock.h"
#include "core/budget.h"
#include "core/threads.h"
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

/* X -= B (B^T X) for each earlier block B, twice (classical Gram-Schmidt, reorthogonalised);
 * the update is one dgemm a row chunk, in place. */
static int orth_against(const fit_part *L, uint32_t p, double **Vb, uint32_t nb, double *X,
                        double *coef)
{
    uint32_t nl = L->r1 - L->r0;
    for (int sweep = 0; sweep < 2; sweep++)
        for (uint32_t b = 0; b < nb; b++) {
            int rc = fit_gemm_tn_part(L, p, p, Vb[b], X, coef);
            if (rc)
                return rc;
            fit_gemm_nn_acc(nl, p, p, -1.0, Vb[b], coef, X);
        }
    return JSMF_OK;
}

/* Orthonormal columns in Q, those lost to rank deficiency replaced by random ones made
 * orthogonal to the earlier blocks too. */
static int orth_block(const fit_part *L, uint32_t p, double **Vb, uint32_t nb, double *Q,
                      double *coef, uint64_t *rng)
{
    uint32_t r = 0;
    int rc = fit_orth_part(L, p, Q, &r);
    if (rc || r == p)
        return rc;
    fill_random(L, p, r, Q, rng);
    if (nb && (rc = orth_against(L, p, Vb, nb, Q, coef)))
        return rc;
    return fit_orth_part(L, p, Q, &r);
}

/* The n-row blocks of one solve, each of this rank's rows x p (+ 1: a rank may hold no rows):
 * depth blocks of the basis V and Wl, A times the last of them, which after Rayleigh-Ritz holds
 * A Y. Beside them a row chunk of scratch a thread (2 x FIT_CHUNK x p doubles each). */
struct fit_eig_ws {
    size_t np, chunk_len;
    uint32_t depth;
    double **Vb, *Wl, *chunk;
};

fit_eig_ws *fit_eig_ws_new(void)
{
    return calloc(1, sizeof(fit_eig_ws));
}

static void ws_release(fit_eig_ws *ws)
{
    for (uint32_t j = 0; j < ws->depth && ws->Vb; j++)
        free(ws->Vb[j]);
    free(ws->Vb), free(ws->Wl), free(ws->chunk);
    memset(ws, 0, sizeof *ws);
}

void fit_eig_ws_free(fit_eig_ws *ws)
{
    if (ws)
        ws_release(ws);
    free(ws);
}

uint32_t fit_eig_ws_blocks(const fit_eig_ws *ws)
{
    uint32_t b = ws->Wl != NULL;
    for (uint32_t j = 0; j < ws->depth && ws->Vb; j++)
        b += ws->Vb[j] != NULL;
    return b;
}

/* Blocks of at least np doubles, depth of V and the one of A V: those held when large enough.
 * More than the machine holds is refused here, before the first product: overcommitted pages
 * would otherwise be touched one block at a time and the process killed mid-run. */
static int ws_reserve(fit_eig_ws *ws, size_t np, uint32_t depth, size_t chunk_len)
{
    if (ws->np < np || ws->depth < depth) {
        double need = ((double)depth + 1) * (double)np * sizeof(double);
        uint64_t have = mem_physical();
        if (have && need > (double)have)
            return jsmf_error(JSMF_ENOMEM, "fit: the eigendecomposition holds %u blocks of %zu "
                              "doubles, %.1f GB, more than this machine's %.1f GB of memory: "
                              "lower -k, or fit on a machine with more", depth + 1, np,
                              need / 1e9, (double)have / 1e9);
        ws_release(ws);
        ws->Vb = calloc(depth, sizeof *ws->Vb);
        ws->Wl = big_malloc(sizeof(double) * np);
        int fail = !ws->Vb || !ws->Wl;
        ws->depth = ws->Vb ? depth : 0;
        for (uint32_t j = 0; j < ws->depth && !fail; j++)
            fail = !(ws->Vb[j] = big_malloc(sizeof(double) * np));
        if (fail) {
            ws_release(ws);
            return jsmf_error(JSMF_ENOMEM, "fit: out of memory for the eigensolver (%u blocks "
                              "of %zu doubles)", depth + 1, np);
        }
        ws->np = np;
    }
    if (ws->chunk_len < chunk_len) {
        free(ws->chunk);
        ws->chunk_len = 0;
        if (!(ws->chunk = malloc(sizeof(double) * chunk_len)))
            return jsmf_error(JSMF_ENOMEM, "fit: out of memory for the eigensolver's row chunks");
        ws->chunk_len = chunk_len;
    }
    return JSMF_OK;
}

/* Rayleigh-Ritz: T = V^T (A V), block column j from W_j = A V_j as it is made. Only the blocks
 * a <= j are products (W_j becomes V_{j+1} next); the one below, V_{j+1}^T W_j, equals
 * (A V_{j+1})^T V_j, the transpose of block (j, j+1), and so on down: T is symmetric by
 * construction, its diagonal blocks symmetrised. */
static int rr_column(const fit_part *L, uint32_t p, uint32_t m, double **Vb, uint32_t j,
                     const double *Wj, double *coef, double *T)
{
    for (uint32_t a = 0; a <= j; a++) {
        int rc = fit_gemm_tn_part(L, p, p, Vb[a], Wj, coef);
        if (rc)
            return rc;
        for (uint32_t r = 0; r < p; r++)
            for (uint32_t c = 0; c < p; c++) {
                double v = coef[r * p + c];
                if (a == j)
                    v = 0.5 * (v + coef[c * p + r]);
                T[(size_t)(a * p + r) * m + j * p + c] = T[(size_t)(j * p + c) * m + a * p + r] =
                    v;
            }
    }
    return JSMF_OK;
}

/* After Rayleigh-Ritz, with S (m x p) the top p eigenvectors of T (descending, values w):
 * Y = V S and A Y = W S. For j < depth-1, W_j lies in span(V_0..V_{j+1}) (V_{j+1} is W_j made
 * orthogonal to the earlier blocks; the random columns orth_block adds where W_j was rank
 * deficient only widen it), so W_j = V T_{.,j}, and with T S = S diag(w):
 *   A Y = sum_{j<d-1} V T_{.,j} S_j + W_{d-1} S_{d-1}
 *       = V (S diag(w) - T_{.,d-1} S_{d-1}) + W_{d-1} S_{d-1}
 *       = Y diag(w) + F S_{d-1},   F = W_{d-1} - V (V^T W_{d-1}) = (I - V V^T) A V_{d-1},
 * the block Lanczos residual: R = A Y - Y diag(w) = F S_{d-1}, the true residual up to rounding
 * and up to the parts of W_j (j < d-1) in directions SVQB dropped from V_{j+1} (Gram eigenvalues
 * below 1e-24 of the largest; the Gram being exact to ~1e-16, components up to ~1e-8 of the
 * block's norm). Depth 1 (the rectification's steps) has no such term. One pass over the rows,
 * a chunk at a time: U gets Y's first k columns, Wl (holding W_{d-1}) gets A Y, part[chunk] the
 * squared norms of R's first k columns in that chunk (reduced in chunk order by the caller). */
typedef struct {
    const fit_part *L;
    uint32_t depth, p, k;
    double *const *Vb;
    double *Wl, *U, *chunk, *part;
    const double *S, *Tl, *w; /* S, T_{.,d-1}: m x p, block j at j * p * p; w: p, descending */
} ritz_pass;

static void ritz_chunk(const ritz_pass *rp, uint32_t c, double *Yc, double *Fc)
{
    const fit_part *L = rp->L;
    uint32_t p = rp->p, k = rp->k, d = rp->depth;
    uint32_t g0 = c * FIT_CHUNK, nb = L->r1 - g0 < FIT_CHUNK ? L->r1 - g0 : FIT_CHUNK;
    size_t off = (size_t)(g0 - L->r0) * p, pp = (size_t)p * p;
    for (uint32_t j = 0; j < d; j++)
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nb, p, p, 1.0, rp->Vb[j] + off, p,
                    rp->S + j * pp, p, j ? 1.0 : 0.0, Yc, p);
    double *Wc = rp->Wl + off;
    memcpy(Fc, Wc, sizeof(double) * nb * p);
    for (uint32_t a = 0; a < d; a++)
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nb, p, p, -1.0, rp->Vb[a] + off, p,
                    rp->Tl + a * pp, p, 1.0, Fc, p);
    /* R = F S_{d-1} into Wl's rows (read already), its norms, then A Y = Y diag(w) + R */
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nb, p, p, 1.0, Fc, p,
                rp->S + (d - 1) * pp, p, 0.0, Wc, p);
    double *me = rp->part + (size_t)c * k;
    memset(me, 0, sizeof(double) * k);
    for (uint32_t i = 0; i < nb; i++)
        for (uint32_t col = 0; col < k; col++)
            me[col] += Wc[(size_t)i * p + col] * Wc[(size_t)i * p + col];
    for (uint32_t i = 0; i < nb; i++) {
        double *ay = Wc + (size_t)i * p, *u = rp->U + (off / p + i) * k;
        const double *y = Yc + (size_t)i * p;
        for (uint32_t col = 0; col < p; col++)
            ay[col] += rp->w[col] * y[col];
        memcpy(u, y, sizeof(double) * k);
    }
}

static void ritz_rows(const ritz_pass *rp, int nt)
{
    uint32_t c0, c1, rows = FIT_CHUNK;
    fit_part_chunks(rp->L, &c0, &c1);
#pragma omp parallel for schedule(static) num_threads(nt)
    for (uint32_t c = c0; c < c1; c++) {
        double *Yc = rp->chunk + (size_t)omp_get_thread_num() * 2 * rows * rp->p;
        ritz_chunk(rp, c, Yc, Yc + (size_t)rows * rp->p);
    }
}

/* The within-cycle test: the wanted Ritz values of the basis's first mj columns (T's leading
 * block; values only), and in *change how far the largest moved since the basis one block
 * smaller (relative to the K-th); INFINITY after the first block (j = 0), nothing to compare.
 * A product costs a pass over C where this costs a (j+1)p eigenproblem: where the Krylov
 * space of depth 3 already holds the wanted pairs (a large, well-determined C), the 4th pass
 * and the next cycle are spared. */
static int depth_change(const double *T, uint32_t m, uint32_t mj, uint32_t k, double *Tj,
                        double *wj, double *prev, uint32_t j, double *change)
{
    for (uint32_t r = 0; r < mj; r++)
        memcpy(Tj + (size_t)r * mj, T + (size_t)r * m, sizeof(double) * mj);
    if (LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'N', 'U', mj, Tj, mj, wj))
        return jsmf_error(JSMF_ENUMERIC, "fit: Rayleigh-Ritz eigenproblem failed");
    double ch = j ? 0 : INFINITY, kth = fabs(wj[mj - k]);
    for (uint32_t c = 0; c < k; c++) {
        double v = wj[mj - 1 - c];
        if (j)
            ch = fmax(ch, fabs(v - prev[c]));
        prev[c] = v;
    }
    *change = ch / (kth > 0 ? kth : 1);
    return JSMF_OK;
}

/* Whether a cycle may end at this depth: its wanted Ritz values moved by at most tol (of the
 * K-th) since the basis one block smaller, or they converge so fast that what they have left to
 * move is a tenth of that. Where the wanted values are separated from the rest of the spectrum
 * by a wide gap, block Krylov's Ritz values converge about geometrically in the depth, and with
 * rate the ratio of the last two changes the rest is about change rate / (1 - rate) (as the
 * steps' test in fit_compress.c reads it); the change itself must then be at most WITHIN_LAST
 * times tol. Measured (tools/bench/fit-results.md, "Stopping inside a cycle"): baskets N = 1M,
 * K = 200, changes 0.88 then 2.5e-4 at depths 3 and 4 (rate 2.8e-4, rest ~7e-8 of tol 1e-4):
 * 4 products instead of 8; debdesc K = 100, 3.5e-3 then 4.0e-4 in its second cycle (rate 0.11,
 * rest 5.0e-5), where stopping moved the model by 0.10: the tenth keeps it going. */
#define WITHIN_LAST 10.0
#define WITHIN_REST 0.1
static int within_done(double change, double rate, double tol)
{
    if (change <= tol)
        return 1;
    return rate > 0 && rate < 1 && change <= WITHIN_LAST * tol &&
           change * rate / (1 - rate) <= WITHIN_REST * tol;
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
    uint32_t m = depth * p, nch = (n + FIT_CHUNK - 1) / FIT_CHUNK;
    uint64_t rng = e->seed ^ 0x5DEECE66Dull;
    size_t np = (size_t)nl * p + 1; /* + 1: a rank may hold no rows */
    int nt = call_threads();
    nt = nt > 0 ? nt : 1;
    fit_eig_ws own = {0}, *ws = e->ws ? e->ws : &own;
    double *T = malloc(sizeof(double) * m * m), *w = malloc(sizeof(double) * m);
    double *coef = malloc(sizeof(double) * p * p), *S = malloc(sizeof(double) * m * p);
    double *Tl = malloc(sizeof(double) * m * p), *G = malloc(sizeof(double) * k + 1);
    double *part = malloc(sizeof(double) * ((size_t)nch * k + 1));
    double *prev = malloc(sizeof(double) * k + 1);
    /* the within-cycle test's leading blocks of T and their Ritz values */
    int within = e->within_tol > 0 && depth > 1;
    double *Tj = within ? malloc(sizeof(double) * m * m) : NULL;
    double *wj = within ? malloc(sizeof(double) * m) : NULL;
    double *prev_d = within ? malloc(sizeof(double) * k + 1) : NULL;
    int rc = ws_reserve(ws, np, depth, (size_t)nt * 2 * FIT_CHUNK * p);
    double **Vb = ws->Vb;
    if (!rc && (!T || !w || !coef || !S || !Tl || !G || !part || !prev ||
                (within && (!Tj || !wj || !prev_d))))
        rc = jsmf_error(JSMF_ENOMEM, "fit: out of memory for the eigensolver (%u x %u blocks)", nl,
                        m);
    rc = fit_part_agree(L, rc);
    if (rc)
        goto out;
    np = (size_t)nl * p;
    uint32_t it, it0 = 0, applies = 0;
    fit_eig_result rec = {0};
    double last_res = NAN, early = INFINITY; /* early: the within-cycle test's last change */
    int early_stop = 0;
    /* a checkpoint of this solve between two cycles: it goes on from there, the same bits */
    fit_eig_state es = {.prev = prev, .V0 = Vb[0]};
    if (e->ckpt && e->ckpt->load && e->ckpt->load(e->ckpt->ctx, &es, nl, p, k)) {
        it0 = es.it, applies = es.applies, rng = es.rng, early = es.early, rec = es.rec;
    } else {
        /* start: warm columns, random rest */
        uint32_t pw = Q0 ? (p0 < p ? p0 : p) : 0;
        for (uint32_t i = 0; i < nl; i++)
            for (uint32_t c = 0; c < pw; c++)
                Vb[0][(size_t)i * p + c] = Q0[(size_t)i * p0 + c];
        fill_random(L, p, pw, Vb[0], &rng);
        if ((rc = orth_block(L, p, Vb, 0, Vb[0], coef, &rng)))
            goto out;
    }
    ritz_pass rp = {L, depth, p, k, Vb, NULL, U, ws->chunk, part, S, Tl, w};
    double t_cycle = clock_seconds();
    for (it = it0; it < maxit; it++) {
        uint32_t d = depth;
        for (uint32_t j = 0; j < depth; j++) {
            double *Wj = j + 1 < depth ? Vb[j + 1] : ws->Wl;
            if ((rc = apply(ctx, Vb[j], p, Wj)) || (rc = rr_column(L, p, m, Vb, j, Wj, coef, T)))
                goto out;
            applies++;
            if (within) {
                double before = early;
                if ((rc = depth_change(T, m, (j + 1) * p, k, Tj, wj, prev_d, j, &early)))
                    goto out;
                if (rec.n_within < FIT_EIG_CHANGES)
                    rec.within[rec.n_within++] = isinf(early) ? NAN : early;
                /* its ratio to the change before, in this cycle (0: none yet) */
                double rate = j >= 2 && before > 0 ? early / before : 0;
                if ((early_stop = within_done(early, rate, e->within_tol))) {
                    /* the basis holds the wanted pairs: W_j in Wl */
                    d = j + 1;
                    if (j + 1 < depth)
                        Vb[j + 1] = ws->Wl, ws->Wl = Wj;
                    break;
                }
            }
            if (j + 1 < depth &&
                ((rc = orth_against(L, p, Vb, j + 1, Wj, coef)) ||
                 /* an invariant subspace reached: extended randomly, kept orthogonal */
                 (rc = orth_block(L, p, Vb, j + 1, Wj, coef, &rng))))
                goto out;
        }
        uint32_t md = d * p;
        for (uint32_t r = 0; r < md; r++)
            memcpy(Tl + (size_t)r * p, T + (size_t)r * m + (d - 1) * p, sizeof(double) * p);
        for (uint32_t r = 1; r < md && md < m; r++) /* the leading md x md block, packed */
            memmove(T + (size_t)r * md, T + (size_t)r * m, sizeof(double) * md);
        if (fit_syev(md, T, w)) {
            rc = jsmf_error(JSMF_ENUMERIC, "fit: Rayleigh-Ritz eigenproblem failed");
            goto out;
        }
        /* the top p Ritz pairs, descending: S's columns, w's first p */
        for (uint32_t r = 0; r < md; r++)
            for (uint32_t c = 0; c < p; c++)
                S[(size_t)r * p + c] = T[(size_t)r * md + (md - 1 - c)];
        for (uint32_t c = 0; c < md / 2; c++) {
            double t = w[c];
            w[c] = w[md - 1 - c], w[md - 1 - c] = t;
        }
        rp.Wl = ws->Wl, rp.depth = d;
        ritz_rows(&rp, nt);
        if ((rc = fit_part_add_chunks(L, part, k, G)))
            goto out;
        double amax = 0;
        for (uint32_t c = 0; c < p; c++)
            amax = fmax(amax, fabs(w[c]));
        if (e->tol_kth)
            amax = fabs(w[k - 1]);
        double r = 0;
        for (uint32_t c = 0; c < k; c++)
            r = fmax(r, sqrt(fmax(G[c], 0)));
        last_res = r / (amax > 0 ? amax : 1);
        if (e->ritz_change) { /* how far the wanted Ritz values moved since the last cycle */
            double ch = it ? 0 : INFINITY;
            for (uint32_t c = 0; c < k && it; c++)
                ch = fmax(ch, fabs(w[c] - prev[c]));
            last_res = ch / (amax > 0 ? amax : 1);
            for (uint32_t c = 0; c < k; c++)
                prev[c] = w[c];
            if (rec.n_between < FIT_EIG_CHANGES)
                rec.between[rec.n_between++] = isinf(last_res) ? NAN : last_res;
        }
        if (within && early_stop) {
            last_res = early; /* the test inside the cycle ended it */
            break;
        }
        if (last_res <= tol || it + 1 == maxit)
            break;
        /* restart from A Y: one power step beyond the Ritz vectors (with depth 1 this is
         * subspace iteration; Y itself would span the same space again). A Y is in Wl: it
         * becomes V_0, and V_0's block the next Wl. */
        double *t = Vb[0];
        Vb[0] = ws->Wl, ws->Wl = t;
        if ((rc = orth_block(L, p, Vb, 0, Vb[0], coef, &rng)))
            goto out;
        /* a cycle long enough to be worth keeping: its restart state into the checkpoint */
        if (e->ckpt && e->ckpt->save && clock_seconds() - t_cycle >= e->ckpt->min_secs) {
            fit_eig_state now = {it + 1, applies, rng, early, prev, rec, Vb[0]};
            e->ckpt->save(e->ckpt->ctx, &now, nl, p, k);
        }
        t_cycle = clock_seconds();
    }
    for (uint32_t c = 0; c < k; c++)
        lam[c] = w[c];
    if (next)
        memcpy(next, ws->Wl, sizeof(double) * np);
    if (res) {
        *res = rec;
        res->applies = applies;
        res->resid = last_res;
        res->cycles_resumed = it0;
    }
out:
    if (ws == &own)
        ws_release(ws);
    free(T), free(w), free(coef), free(S), free(Tl), free(G), free(part), free(prev);
    free(Tj), free(wj), free(prev_d);
    return rc;
}
