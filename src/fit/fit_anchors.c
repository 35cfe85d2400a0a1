/* fit_anchors.c — step 2: anchor words. Alg. 2 of Lee et al. JSMF (implicit column-pivoted QR: the
 * rows are never modified, only their residual norms u are updated, here lazily) over any row
 * representation that can give one row; and FastAnchorWords (Arora et al. 2013 Alg. 4: random
 * projection, greedy farthest-from-span, cleanup) on explicit projected points. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "fit_internal.h"
#include "mpi/comm.h"

/* Alg. 2 picks argmax_i u_i, u_i = ||P_i||^2 - sum_l <q_l, P_i>^2, and subtracts <q_k, P_i>^2
 * from every u_i after each pick: a pass over all rows per anchor. Here the u_i are updated
 * lazily instead. A u_i left behind is an upper bound of its current value (it only decreases),
 * so the rows sit in a max-heap by their last value; the top row is brought up to date (its row,
 * dotted with the q_l it has not seen) and pushed back, until the top is current: that row is the
 * exact argmax (ties: lower index first, as Alg. 2). Rows whose bounds fall far below the
 * residuals of the others are never read again. */
typedef struct {
    double u;
    uint32_t i, seen; /* row, and how many q_l are subtracted from u */
} lazy_row;

static int lazy_before(const lazy_row *a, const lazy_row *b)
{
    return a->u > b->u || (a->u == b->u && a->i < b->i);
}

static void heap_down(lazy_row *h, uint32_t m, uint32_t at)
{
    for (;;) {
        uint32_t l = 2 * at + 1, r = l + 1, best = at;
        if (l < m && lazy_before(&h[l], &h[best]))
            best = l;
        if (r < m && lazy_before(&h[r], &h[best]))
            best = r;
        if (best == at)
            return;
        lazy_row t = h[at];
        h[at] = h[best], h[best] = t;
        at = best;
    }
}

/* The best of every rank's current top (the global argmax: each rank's heap holds its rows). */
static int global_top(const fit_part *L, const lazy_row *top, int have, lazy_row *best,
                      int *found)
{
    *found = have;
    if (have)
        *best = *top;
    if (!fit_part_split(L))
        return JSMF_OK;
    int size = jsmf_comm_size(L->comm);
    double mine[3] = {have ? top->u : 0, have ? top->i : 0, have}, *all = malloc(24 * size);
    uint64_t *counts = malloc(sizeof *counts * size);
    int rc = all && counts ? JSMF_OK : jsmf_error(JSMF_ENOMEM, "fit: out of memory");
    if (!(rc = comm_agree(L->comm, rc))) {
        for (int r = 0; r < size; r++)
            counts[r] = 24;
        rc = comm_allgatherv(L->comm, mine, 24, all, counts);
    }
    for (int r = 0; !rc && r < size; r++) {
        lazy_row t = {all[3 * r], (uint32_t)all[3 * r + 1], 0};
        if (all[3 * r + 2] != 0 && (!*found || lazy_before(&t, best)))
            *best = t, *found = 1;
    }
    free(all), free(counts);
    return rc;
}

int fit_anchors_qr(const fit_rows_ops *ops, uint32_t k, uint32_t *S)
{
    fit_part whole = fit_part_whole(ops->n);
    const fit_part *L = ops->part ? ops->part : &whole;
    uint32_t d = ops->d, m = 0;
    lazy_row *h = malloc(sizeof(lazy_row) * (L->r1 > L->r0 ? L->r1 - L->r0 : 1));
    double *Q = calloc((size_t)k * d, sizeof(double)), *p = malloc(sizeof(double) * d);
    int rc = JSMF_OK;
    if (!h || !Q || !p)
        rc = jsmf_error(JSMF_ENOMEM, "fit: out of memory finding anchors");
    rc = fit_part_agree(L, rc);
    if (rc)
        goto out;
    for (uint32_t i = L->r0; i < L->r1; i++)
        if ((!ops->cand || ops->cand[i]) && ops->norms2[i] > 0)
            h[m++] = (lazy_row){ops->norms2[i], i, 0};
    for (uint32_t a = m / 2; a-- > 0;)
        heap_down(h, m, a);
    for (uint32_t kk = 0; kk < k; kk++) {
        while (m && h[0].seen < kk) { /* bring the top up to date */
            ops->row(ops->ctx, h[0].i, p);
            for (uint32_t l = h[0].seen; l < kk; l++) {
                double t = cblas_ddot(d, Q + (size_t)l * d, 1, p, 1);
                h[0].u -= t * t;
            }
            h[0].seen = kk;
            heap_down(h, m, 0);
        }
        lazy_row top;
        int found;
        if ((rc = global_top(L, &h[0], m > 0, &top, &found)))
            goto out;
        if (!found || !(top.u > 0)) {
            rc = jsmf_error(JSMF_ENUMERIC,
                            "fit: only %u independent anchor candidates for K=%u (lower "
                            "--min-anchor-df or K)", kk, k);
            goto out;
        }
        uint32_t best = top.i;
        S[kk] = best;
        if (m && h[0].i == best) {
            h[0] = h[--m];
            heap_down(h, m, 0);
            ops->row(ops->ctx, best, p);
        }
        if (fit_part_split(L) &&
            (rc = comm_bcast(L->comm, p, sizeof(double) * d, fit_part_owner(L, best))))
            goto out;
        /* line 6: q_k = (p_n - sum_l <q_l, p_n> q_l) / r_k, re-orthogonalised once; normalised by
         * its computed norm (r_k = sqrt(u_n) in exact arithmetic) */
        double *q = Q + (size_t)kk * d;
        memcpy(q, p, sizeof(double) * d);
        for (int sweep = 0; sweep < 2; sweep++)
            for (uint32_t l = 0; l < kk; l++) {
                double c = cblas_ddot(d, Q + (size_t)l * d, 1, q, 1);
                cblas_daxpy(d, -c, Q + (size_t)l * d, 1, q, 1);
            }
        double nq = cblas_dnrm2(d, q, 1);
        if (!(nq > 0)) {
            rc = jsmf_error(JSMF_ENUMERIC, "fit: anchor %u is dependent on the previous ones", kk);
            goto out;
        }
        cblas_dscal(d, 1.0 / nq, q, 1);
    }
out:
    free(h), free(Q), free(p);
    return rc;
}

/* Distances^2 of all points to span(rows of B) for an orthonormal B (m x d). */
static void dist_to_span(uint32_t n, uint32_t d, const double *Y, const double *nrm2,
                         const double *B, uint32_t m, double *dist, double *coef)
{
    if (m == 0) {
        memcpy(dist, nrm2, sizeof(double) * n);
        return;
    }
    double *Bt = malloc(sizeof(double) * d * m);
    for (uint32_t a = 0; a < m; a++)
        for (uint32_t j = 0; j < d; j++)
            Bt[(size_t)j * m + a] = B[(size_t)a * d + j];
    fit_gemm_nn(n, d, m, Y, Bt, coef);
    for (uint32_t i = 0; i < n; i++) {
        double s = 0;
        for (uint32_t a = 0; a < m; a++)
            s += coef[(size_t)i * m + a] * coef[(size_t)i * m + a];
        dist[i] = nrm2[i] - s;
    }
    free(Bt);
}

/* Orthonormal basis (rows) of the points S (skipping index `skip`), Gram-Schmidt twice. */
static uint32_t basis_of(uint32_t d, const double *Y, const uint32_t *S, uint32_t k, uint32_t skip,
                         double *B)
{
    uint32_t m = 0;
    for (uint32_t a = 0; a < k; a++) {
        if (a == skip)
            continue;
        double *b = B + (size_t)m * d;
        memcpy(b, Y + (size_t)S[a] * d, sizeof(double) * d);
        for (int sweep = 0; sweep < 2; sweep++)
            for (uint32_t l = 0; l < m; l++) {
                double c = cblas_ddot(d, B + (size_t)l * d, 1, b, 1);
                cblas_daxpy(d, -c, B + (size_t)l * d, 1, b, 1);
            }
        double nb = cblas_dnrm2(d, b, 1);
        if (nb > 0) {
            cblas_dscal(d, 1.0 / nb, b, 1);
            m++;
        }
    }
    return m;
}

static uint32_t farthest(uint32_t n, const double *dist, const unsigned char *cand,
                         const uint32_t *S, uint32_t k, uint32_t skip)
{
    uint32_t best = UINT32_MAX;
    double bd = -INFINITY;
    for (uint32_t i = 0; i < n; i++) {
        if (cand && !cand[i])
            continue;
        int taken = 0;
        for (uint32_t a = 0; a < k; a++)
            if (a != skip && S[a] == i)
                taken = 1;
        if (!taken && dist[i] > bd)
            bd = dist[i], best = i;
    }
    return best;
}

int fit_anchors_fast(uint32_t n, uint32_t d, const double *Y, const unsigned char *cand,
                     uint32_t k, uint32_t *S)
{
    double *nrm2 = malloc(sizeof(double) * n), *dist = malloc(sizeof(double) * n);
    double *B = malloc(sizeof(double) * (size_t)k * d), *coef = malloc(sizeof(double) * n * k);
    int rc = JSMF_OK;
    if (!nrm2 || !dist || !B || !coef) {
        rc = jsmf_error(JSMF_ENOMEM, "fit: out of memory (FastAnchorWords)");
        goto out;
    }
    for (uint32_t i = 0; i < n; i++)
        nrm2[i] = cblas_ddot(d, Y + (size_t)i * d, 1, Y + (size_t)i * d, 1);
    /* first: farthest from the origin; then farthest from span(S) */
    for (uint32_t a = 0; a < k; a++) {
        uint32_t m = basis_of(d, Y, S, a, UINT32_MAX, B);
        dist_to_span(n, d, Y, nrm2, B, m, dist, coef);
        uint32_t j = farthest(n, dist, cand, S, a, UINT32_MAX);
        if (j == UINT32_MAX) {
            rc = jsmf_error(JSMF_ENUMERIC, "fit: fewer than K=%u anchor candidates", k);
            goto out;
        }
        S[a] = j;
    }
    /* cleanup: each v_i replaced by the point farthest from span(S \ {v_i}) */
    for (uint32_t a = 0; a < k; a++) {
        uint32_t m = basis_of(d, Y, S, k, a, B);
        dist_to_span(n, d, Y, nrm2, B, m, dist, coef);
        uint32_t j = farthest(n, dist, cand, S, k, a);
        if (j != UINT32_MAX)
            S[a] = j;
    }
out:
    free(nrm2), free(dist), free(B), free(coef);
    return rc;
}

/* ---- the anchor methods of the table (fit_methods.c) ------------------------------------ */

int fit_anchors_find_qr(const fit_anchor_job *job, uint32_t *S)
{
    return fit_anchors_qr(job->ops, job->k, S);
}

/* FastAnchorWords: project the (normalised) rows on dp Gaussian directions, then Alg. 4. */
int fit_anchors_find_fast(const fit_anchor_job *job, uint32_t *S)
{
    const jsmf_fit_opts *o = job->o;
    uint32_t n = job->ops->n, k = job->k;
    uint32_t din = job->ops->d, dp = o->fast_dim < din ? o->fast_dim : din;
    if (dp < k)
        dp = k < din ? k : din;
    double *Pi = malloc(sizeof(double) * din * dp), *P = malloc(sizeof(double) * n * dp);
    int rc = JSMF_OK;
    if (!Pi || !P) {
        rc = jsmf_error(JSMF_ENOMEM, "fit: out of memory (random projection)");
        goto out;
    }
    uint64_t rng = o->seed * 0x2545F4914F6CDD1Dull + 7;
    for (size_t e = 0; e < (size_t)din * dp; e++)
        Pi[e] = fit_rng_gauss(&rng) / sqrt((double)dp);
    if (job->M)
        fit_gemm_nn(n, din, dp, job->M, Pi, P);
    else if ((rc = fit_mat_apply(job->R, Pi, dp, P, NULL, NULL))) /* no explicit rows */
        goto out;
    for (uint32_t i = 0; i < n; i++)
        cblas_dscal(dp, job->inv[i], P + (size_t)i * dp, 1);
    rc = fit_anchors_fast(n, dp, P, job->ops->cand, k, S);
out:
    free(P), free(Pi);
    return rc;
}
