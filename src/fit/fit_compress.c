/* fit_compress.c — step 1 without N x N work (Lee et al. 2021, the "epsilon-NN" rectification;
 * formats/references.md; measured in tools/bench/fit-results.md): the rectified C is kept as
 *     R = clip_I(Y Y^T) + omega 1 1^T,
 * Y (N x K) the PSD factor, clip_I the non-negativity repair of the entries in the l rows and
 * columns I of largest ||Y_i|| (where negative entries are large enough to matter), omega the
 * shift that makes R sum to 1. Written as Y Y^T + E + omega 1 1^T, E = max(-Y Y_I^T, 0) on the
 * columns I and its transpose on the rows I, so every product with R costs O(N l (K + p)) GEMM
 * work and nothing N x N is ever held. C itself is read only by the first eigendecomposition.
 * The iterate is then R's low-rank representation (its table of operations below). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "core/bigmem.h"
#include "core/budget.h"
#include "fit_internal.h"

/* Rows per generated block of Y Y_I^T. */
#define LR_BLOCK 256
/* P = max(-Y Y_I^T, 0) is kept between products (a third of their arithmetic at l = 2K) when
 * it takes at most this fraction of the machine's memory. */
#define P_KEEP_FRACTION 16

struct fit_lowrank {
    uint32_t n, k, l;  /* l: rows repaired now: the l0 largest, plus any asked for (anchors) */
    uint32_t l0, lcap;
    int nt;
    fit_part L;      /* the rows of Y this rank holds (an MPI job: C's split; else all) */
    uint32_t *starts; /* L.starts, owned */
    uint32_t nl;     /* L.r1 - L.r0 */
    double *Y;       /* nl x k: this rank's rows */
    double *YI;      /* l x k: the rows I of Y */
    uint32_t *sel;    /* the l rows, ascending */
    int32_t *pos;    /* row -> its position in I, or -1 */
    double omega;    /* the constant of every entry */
    double *s;       /* Y^T 1 (k) */
    double *erow;    /* row sums of E (n; this rank's rows and the rows I are set) */
    double *eg2, *eg; /* per row: sum of g^2 and of g over the entries E repairs (n each) */
    double esum;     /* sum of E */
    int final;       /* no shift: the iterate as handed to the later steps */
    double total;    /* sum of all entries */
    /* P = max(-Y Y_I^T, 0) on this rank's rows (nl x l), as the last fit_lowrank_set made it:
     * a step's products reuse it instead of making it again (NULL: too large to keep) */
    double *P;
    size_t p_cap;
    int p_ok, p_keep; /* p_keep: 0 never keeps it (fit_lowrank_keep_p, tests) */
};

/* The reductions over rows below add partial results per chunk of FIT_CHUNK rows in chunk
 * order (fit_part_add_chunks), so they never depend on the thread count, nor on the number of
 * ranks. */

void fit_lowrank_free(fit_lowrank *lr)
{
    if (!lr)
        return;
    free(lr->Y), free(lr->YI), free(lr->sel), free(lr->pos), free(lr->s), free(lr->erow);
    free(lr->eg2), free(lr->eg), free(lr->starts), free(lr->P);
    free(lr);
}

fit_lowrank *fit_lowrank_new(const fit_part *L, uint32_t k, uint32_t l, int nt)
{
    fit_lowrank *lr = calloc(1, sizeof *lr);
    if (!lr)
        return NULL;
    uint32_t n = L->n;
    lr->n = n, lr->k = k, lr->l0 = lr->l = l < n ? l : n, lr->nt = nt > 0 ? nt : 1;
    lr->p_keep = 1;
    lr->lcap = lr->l0 + k < n ? lr->l0 + k : n;
    lr->L = *L, lr->nl = L->r1 - L->r0;
    if (fit_part_split(L)) {
        size_t sz = sizeof(uint32_t) * ((size_t)jsmf_comm_size(L->comm) + 1);
        if ((lr->starts = malloc(sz)))
            memcpy(lr->starts, L->starts, sz);
        lr->L.starts = lr->starts;
    }
    lr->Y = big_malloc(sizeof(double) * lr->nl * k + 1);
    lr->YI = malloc(sizeof(double) * lr->lcap * k);
    lr->sel = malloc(sizeof(uint32_t) * (lr->lcap ? lr->lcap : 1));
    lr->pos = malloc(sizeof(int32_t) * n);
    lr->s = malloc(sizeof(double) * k);
    lr->erow = malloc(sizeof(double) * n);
    lr->eg2 = malloc(sizeof(double) * n);
    lr->eg = malloc(sizeof(double) * n);
    if (!lr->Y || !lr->YI || !lr->sel || !lr->pos || !lr->s || !lr->erow || !lr->eg2 || !lr->eg ||
        (fit_part_split(L) && !lr->starts)) {
        fit_lowrank_free(lr);
        return NULL;
    }
    return lr;
}

/* Every rank's rows of Y, and the per-row repair sums, to every rank: from here on the iterate
 * is the same whole array on each (anchors and recovery read any row). */
int fit_lowrank_gather(fit_lowrank *lr)
{
    if (!fit_part_split(&lr->L))
        return JSMF_OK;
    uint32_t n = lr->n, k = lr->k, r0 = lr->L.r0;
    double *Y = big_malloc(sizeof(double) * n * k);
    if (!Y)
        return jsmf_error(JSMF_ENOMEM, "fit: out of memory for the factor (%u x %u)", n, k);
    int rc = fit_part_gather(&lr->L, k, lr->Y, Y);
    if (!rc && !(rc = fit_part_gather(&lr->L, 1, lr->erow + r0, lr->erow)) &&
        !(rc = fit_part_gather(&lr->L, 1, lr->eg2 + r0, lr->eg2)))
        rc = fit_part_gather(&lr->L, 1, lr->eg + r0, lr->eg);
    if (rc) {
        free(Y);
        return rc;
    }
    free(lr->Y), free(lr->starts);
    lr->Y = Y, lr->starts = NULL, lr->p_ok = 0; /* P held the rank's rows only */
    lr->L = fit_part_whole(n), lr->nl = n;
    return JSMF_OK;
}

void fit_lowrank_keep_p(fit_lowrank *lr, int keep)
{
    lr->p_keep = keep;
}

uint32_t fit_lowrank_k(const fit_lowrank *lr) { return lr->k; }
uint32_t fit_lowrank_l(const fit_lowrank *lr) { return lr->l; }
double fit_lowrank_omega(const fit_lowrank *lr) { return lr->omega; }
const double *fit_lowrank_y(const fit_lowrank *lr) { return lr->Y; }
fit_part fit_lowrank_part(const fit_lowrank *lr) { return lr->L; }
const uint32_t *fit_lowrank_rows_i(const fit_lowrank *lr) { return lr->sel; }


/* Put the m first of rk (by fit_ranked_desc: largest norm, then lowest row) in rk[0..m), in any
 * order: quickselect with the median of three, O(n) on average where a sort was O(n log n). */
static void select_first(fit_ranked *rk, uint32_t n, uint32_t m)
{
    uint32_t lo = 0, hi = n;
    while (m > lo && m < hi && hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        fit_ranked a = rk[lo], b = rk[mid], c = rk[hi - 1], piv;
        if (fit_ranked_desc(&a, &b) < 0)
            piv = fit_ranked_desc(&b, &c) < 0 ? b : fit_ranked_desc(&a, &c) < 0 ? c : a;
        else
            piv = fit_ranked_desc(&a, &c) < 0 ? a : fit_ranked_desc(&b, &c) < 0 ? c : b;
        /* three-way partition: before, equal (one row only: keys are distinct), after */
        uint32_t i = lo, j = lo, e = hi;
        while (j < e) {
            int d = fit_ranked_desc(&rk[j], &piv);
            if (d < 0) {
                fit_ranked t = rk[i];
                rk[i++] = rk[j], rk[j++] = t;
            } else if (d > 0) {
                fit_ranked t = rk[--e];
                rk[e] = rk[j], rk[j] = t;
            } else {
                j++;
            }
        }
        if (m <= i)
            hi = i;
        else if (m >= j)
            lo = j;
        else
            return;
    }
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* ---- the blocks of G = Y Y_I^T and P = max(-G, 0) ----------------------------------------- */

/* Room for P (this rank's rows x l) when it is small enough to keep; else none (and the
 * products make it again). */
static void keep_p(fit_lowrank *lr)
{
    size_t need = (size_t)lr->nl * lr->l + 1;
    uint64_t have = mem_physical();
    lr->p_ok = 0;
    if (!lr->p_keep) {
        free(lr->P);
        lr->P = NULL, lr->p_cap = 0;
        return;
    }
    if (need > lr->p_cap) {
        free(lr->P);
        lr->P = NULL, lr->p_cap = 0;
        if ((double)need * sizeof(double) > (have ? (double)have : 16e9) / P_KEEP_FRACTION)
            return;
        if ((lr->P = big_malloc(sizeof(double) * need)))
            lr->p_cap = need;
    }
}

/* One pass over this rank's row blocks of G: row sums of P and of g, g^2 over its non-zeros
 * (for rows not in I), the same per column, sum(P) and the part of it on the rows I (the last
 * two added over all rows). */
static int lowrank_sums(fit_lowrank *lr, double *colsum, double *colg2, double *colg,
                        double *psum, double *pii)
{
    uint32_t n = lr->n, k = lr->k, l = lr->l, r0 = lr->L.r0, r1 = lr->L.r1, c0, c1;
    uint32_t nch = (n + FIT_CHUNK - 1) / FIT_CHUNK;
    size_t width = (size_t)3 * l + 2; /* per chunk: colsum, colg2, colg (l each), psum, pii */
    fit_part_chunks(&lr->L, &c0, &c1);
    double *part = calloc(nch * width + 1, sizeof(double)), *sum = malloc(sizeof(double) * width);
    double **G = calloc(lr->nt, sizeof *G);
    int fail = !part || !sum || !G;
    for (int t = 0; t < lr->nt && !fail; t++)
        fail = !(G[t] = malloc(sizeof(double) * LR_BLOCK * l + 1));
    int rc = fail ? jsmf_error(JSMF_ENOMEM, "fit: out of memory (compressed iterate, N=%u)", n)
                  : JSMF_OK;
    if (!fail)
        keep_p(lr);
    if (!fail) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(lr->nt)
        for (uint32_t c = c0; c < c1; c++) {
            double *g = G[omp_get_thread_num()], *me = part + c * width;
            double *mcolsum = me, *mcolg2 = me + l, *mcolg = me + 2 * l;
            for (uint32_t a = c * FIT_CHUNK; a < (c + 1) * FIT_CHUNK && a < r1; a += LR_BLOCK) {
                uint32_t nb = r1 - a < LR_BLOCK ? r1 - a : LR_BLOCK;
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nb, l, k, 1.0,
                            lr->Y + (size_t)(a - r0) * k, k, lr->YI, k, 0.0, g, l);
                if (lr->P) /* P's block, as fit_lowrank_apply makes it */
                    for (size_t e = 0, at = (size_t)(a - r0) * l; e < (size_t)nb * l; e++)
                        lr->P[at + e] = g[e] < 0 ? -g[e] : 0;
                for (uint32_t i = 0; i < nb; i++) {
                    const double *gi = g + (size_t)i * l;
                    double rs = 0, r2 = 0, r1s = 0;
                    for (uint32_t b = 0; b < l; b++) {
                        double v = gi[b];
                        if (v < 0) {
                            rs -= v, r2 += v * v, r1s += v;
                            mcolsum[b] -= v, mcolg2[b] += v * v, mcolg[b] += v;
                        }
                    }
                    me[3 * l] += rs;
                    if (lr->pos[a + i] >= 0)
                        me[3 * l + 1] += rs;
                    lr->erow[a + i] = rs;
                    lr->eg2[a + i] = r2, lr->eg[a + i] = r1s;
                }
            }
        }
    }
    lr->p_ok = !rc && lr->P;
    rc = fit_part_agree(&lr->L, rc);
    if (!rc && !(rc = fit_part_add_chunks(&lr->L, part, width, sum))) {
        memcpy(colsum, sum, sizeof(double) * l);
        memcpy(colg2, sum + l, sizeof(double) * l);
        memcpy(colg, sum + 2 * l, sizeof(double) * l);
        *psum = sum[3 * l], *pii = sum[3 * l + 1];
    }
    for (int t = 0; t < lr->nt && G; t++)
        free(G[t]);
    free(part), free(sum), free(G);
    return rc;
}

/* The rows I of X (this rank's rows, k columns) into XI (l x k) on every rank. */
static int gather_rows_i(const fit_lowrank *lr, const double *X, uint32_t k, double *XI)
{
    return fit_part_pick(&lr->L, lr->sel, lr->l, X, k, XI);
}

/* Take Y (this rank's rows of n x k) as the factor: choose I (the l0 rows of largest norm, and
 * the `nextra` rows `extra`), then omega so that R sums to 1, and the row sums and norm
 * corrections of E that rect_sums needs. */
int fit_lowrank_set(fit_lowrank *lr, const double *Y, const uint32_t *extra, uint32_t nextra)
{
    uint32_t n = lr->n, k = lr->k, nl = lr->nl, r0 = lr->L.r0;
    if (Y != lr->Y)
        memcpy(lr->Y, Y, sizeof(double) * nl * k);
    fit_ranked *rk = malloc(sizeof(fit_ranked) * n);
    double *col = malloc(sizeof(double) * 3 * (lr->lcap ? lr->lcap : 1));
    double *ones = malloc(sizeof(double) * nl + 1), *norm = malloc(sizeof(double) * n);
    int rc = JSMF_OK;
    if (!rk || !col || !ones || !norm)
        rc = jsmf_error(JSMF_ENOMEM, "fit: out of memory (compressed iterate, N=%u)", n);
    rc = fit_part_agree(&lr->L, rc);
    if (rc)
        goto out;
    for (uint32_t i = 0; i < nl; i++) {
        norm[r0 + i] = cblas_ddot(k, lr->Y + (size_t)i * k, 1, lr->Y + (size_t)i * k, 1);
        ones[i] = 1.0;
    }
    if ((rc = fit_part_gather(&lr->L, 1, norm + r0, norm)))
        goto out;
    for (uint32_t i = 0; i < n; i++) {
        rk[i].v = norm[i];
        rk[i].i = i;
        lr->pos[i] = -1;
    }
    select_first(rk, n, lr->l0);
    uint32_t l = 0;
    for (uint32_t b = 0; b < lr->l0; b++)
        lr->pos[lr->sel[l++] = rk[b].i] = 0;
    for (uint32_t e = 0; e < nextra && l < lr->lcap; e++)
        if (extra[e] < n && lr->pos[extra[e]] < 0)
            lr->pos[lr->sel[l++] = extra[e]] = 0;
    lr->l = l;
    qsort(lr->sel, l, sizeof(uint32_t), cmp_u32);
    for (uint32_t b = 0; b < l; b++)
        lr->pos[lr->sel[b]] = (int32_t)b;
    if ((rc = gather_rows_i(lr, lr->Y, k, lr->YI)) ||
        (rc = fit_gemm_tn_part(&lr->L, k, 1, lr->Y, ones, lr->s)))
        goto out;
    double psum = 0, pii = 0;
    if ((rc = lowrank_sums(lr, col, col + l, col + 2 * l, &psum, &pii)))
        goto out;
    /* E = P on the columns I and P^T on the rows I (the I x I block once) */
    lr->esum = 2 * psum - pii;
    double ss = cblas_ddot(k, lr->s, 1, lr->s, 1);
    lr->omega = lr->final ? 0 : (1.0 - ss - lr->esum) / ((double)n * n);
    lr->total = ss + lr->esum + lr->omega * n * n;
    for (uint32_t b = 0; b < l; b++) { /* the rows I: their repairs are E's columns */
        uint32_t i = lr->sel[b];
        lr->erow[i] = col[b], lr->eg2[i] = col[l + b], lr->eg[i] = col[2 * l + b];
    }
out:
    free(rk), free(col), free(ones), free(norm);
    return rc;
}

/* The rectified C the later steps read: the repaired PSD part, no shift (a negative omega
 * would make the anchors' rows negative where words never co-occur), scaled to sum 1 (E scales
 * with Y Y^T, so scaling Y does it); the anchors' rows are repaired too. */
int fit_lowrank_finish(fit_lowrank *lr, const uint32_t *extra, uint32_t nextra)
{
    lr->final = 1;
    int rc = fit_lowrank_set(lr, lr->Y, extra, nextra);
    if (rc)
        return rc;
    if (!(lr->total > 0))
        return jsmf_error(JSMF_ENUMERIC, "fit: the rectified C sums to %g", lr->total);
    cblas_dscal(lr->nl * lr->k, 1.0 / sqrt(lr->total), lr->Y, 1);
    return fit_lowrank_set(lr, lr->Y, extra, nextra);
}

/* Row sums c = R 1 and sums of squares q2_i = ||R_i||^2 (n each, on every rank), exactly, in
 * O(N K^2 + N l K). */
int fit_lowrank_row_stats(const fit_lowrank *lr, double *c, double *q2)
{
    uint32_t n = lr->n, k = lr->k, nl = lr->nl, r0 = lr->L.r0;
    double om = lr->omega, *H = malloc(sizeof(double) * k * k);
    double *t = big_malloc(sizeof(double) * nl * k + 1);
    int rc = !H || !t ? jsmf_error(JSMF_ENOMEM, "fit: out of memory (N=%u)", n) : JSMF_OK;
    rc = fit_part_agree(&lr->L, rc);
    if (rc || (rc = fit_gemm_tn_part(&lr->L, k, k, lr->Y, lr->Y, H)))
        goto out;
    fit_gemm_nn(nl, k, k, lr->Y, H, t);
#pragma omp parallel for schedule(static) num_threads(lr->nt)
    for (uint32_t a = 0; a < nl; a++) {
        uint32_t i = r0 + a;
        const double *y = lr->Y + (size_t)a * k;
        double ys = cblas_ddot(k, y, 1, lr->s, 1), yhy = cblas_ddot(k, y, 1, t + (size_t)a * k, 1);
        c[i] = ys + om * n + lr->erow[i];
        /* a repaired entry: (0 + om)^2 replaces (g + om)^2 */
        q2[i] = yhy + 2 * om * ys + om * om * n - lr->eg2[i] - 2 * om * lr->eg[i];
    }
    if (!(rc = fit_part_gather(&lr->L, 1, c + r0, c)))
        rc = fit_part_gather(&lr->L, 1, q2 + r0, q2);
out:
    free(H), free(t);
    return rc;
}

/* Rows r0 .. r0+nb-1 of R: max(g, 0) where the row or the column is in I, g elsewhere, + omega.
 * The whole factor is needed: only after fit_lowrank_gather. */
void fit_lowrank_rows(const fit_lowrank *lr, uint32_t r0, uint32_t nb, double *out)
{
    uint32_t n = lr->n, k = lr->k;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nb, n, k, 1.0, lr->Y + (size_t)r0 * k, k,
                lr->Y, k, 0.0, out, n);
    for (uint32_t i = 0; i < nb; i++) {
        double *o = out + (size_t)i * n;
        if (lr->pos[r0 + i] >= 0) {
            for (uint32_t j = 0; j < n; j++)
                o[j] = (o[j] > 0 ? o[j] : 0) + lr->omega;
        } else {
            for (uint32_t j = 0; j < n; j++)
                o[j] += lr->omega;
            for (uint32_t b = 0; b < lr->l; b++) {
                double *v = o + lr->sel[b];
                if (*v < lr->omega)
                    *v = lr->omega;
            }
        }
    }
}

/* Columns S (m of them) of R on this rank's rows: RS (nl x m), RS[j][a] = R[j][S[a]], clip
 * and shift as fit_lowrank_rows makes them, in the same absolute row blocks on any number of
 * ranks. */
int fit_lowrank_cols(const fit_lowrank *lr, const uint32_t *S, uint32_t m, double *RS)
{
    uint32_t k = lr->k, r0 = lr->L.r0, r1 = lr->L.r1, c0, c1;
    double *YS = malloc(sizeof(double) * m * k + 1);
    int rc = YS ? JSMF_OK : jsmf_error(JSMF_ENOMEM, "fit: out of memory");
    rc = fit_part_agree(&lr->L, rc);
    if (rc || (rc = fit_part_pick(&lr->L, S, m, lr->Y, k, YS))) {
        free(YS);
        return rc;
    }
    fit_part_chunks(&lr->L, &c0, &c1);
#pragma omp parallel for schedule(dynamic, 1) num_threads(lr->nt)
    for (uint32_t c = c0; c < c1; c++)
        for (uint32_t a = c * FIT_CHUNK; a < (c + 1) * FIT_CHUNK && a < r1; a += LR_BLOCK) {
            uint32_t nb = r1 - a < LR_BLOCK ? r1 - a : LR_BLOCK;
            double *out = RS + (size_t)(a - r0) * m;
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nb, m, k, 1.0,
                        lr->Y + (size_t)(a - r0) * k, k, YS, k, 0.0, out, m);
            for (uint32_t i = 0; i < nb; i++)
                for (uint32_t b = 0; b < m; b++) {
                    double *v = out + (size_t)i * m + b;
                    if ((lr->pos[a + i] >= 0 || lr->pos[S[b]] >= 0) && *v < 0)
                        *v = 0;
                    *v += lr->omega;
                }
        }
    free(YS);
    return JSMF_OK;
}

/* Z = R V = Y (Y^T V) + E V + omega 1 (1^T V). With P = max(-Y Y_I^T, 0) (n x l):
 * (E V)_i = P_i V_I for a row not in I, and (P^T V)_a for the row I_a. V and Z hold this
 * rank's rows: the products over all rows (Y^T V, 1^T V, P^T V) are K x p, 1 x p and l x p
 * partials added over ranks, V_I the l rows of V gathered from their ranks. */
int fit_lowrank_apply(void *ctx, const double *V, uint32_t p, double *Z)
{
    fit_lowrank *lr = ctx;
    uint32_t n = lr->n, k = lr->k, l = lr->l, nl = lr->nl, r0 = lr->L.r0, r1 = lr->L.r1, c0, c1;
    uint32_t nch = (n + FIT_CHUNK - 1) / FIT_CHUNK;
    size_t lp = (size_t)l * p;
    fit_part_chunks(&lr->L, &c0, &c1);
    double *YtV = malloc(sizeof(double) * k * p), *VI = malloc(sizeof(double) * lp + 1);
    double *onesV = malloc(sizeof(double) * p), *ones = malloc(sizeof(double) * nl + 1);
    double *part = calloc(nch * lp + 1, sizeof(double)), *PtV = malloc(sizeof(double) * lp + 1);
    double **G = calloc(lr->nt, sizeof *G);
    int fail = !YtV || !VI || !onesV || !ones || !part || !PtV || !G;
    for (int t = 0; t < lr->nt && !fail; t++)
        fail = !(G[t] = malloc(sizeof(double) * LR_BLOCK * ((size_t)l + p)));
    int rc = fail ? jsmf_error(JSMF_ENOMEM, "fit: out of memory (compressed product, N=%u)", n)
                  : JSMF_OK;
    rc = fit_part_agree(&lr->L, rc);
    if (rc)
        goto out;
    for (uint32_t i = 0; i < nl; i++)
        ones[i] = 1.0;
    if ((rc = fit_gemm_tn_part(&lr->L, k, p, lr->Y, V, YtV)) ||
        (rc = fit_gemm_tn_part(&lr->L, 1, p, ones, V, onesV)) ||
        (rc = gather_rows_i(lr, V, p, VI)))
        goto out;
#pragma omp parallel for schedule(dynamic, 1) num_threads(lr->nt)
    for (uint32_t c = c0; c < c1; c++) {
        double *g = G[omp_get_thread_num()], *zb = g + (size_t)LR_BLOCK * l;
        for (uint32_t a = c * FIT_CHUNK; a < (c + 1) * FIT_CHUNK && a < r1; a += LR_BLOCK) {
            uint32_t nb = r1 - a < LR_BLOCK ? r1 - a : LR_BLOCK;
            const double *Yb = lr->Y + (size_t)(a - r0) * k;
            double *Zb = Z + (size_t)(a - r0) * p;
            const double *Pb = lr->p_ok ? lr->P + (size_t)(a - r0) * l : g;
            if (!lr->p_ok) {
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nb, l, k, 1.0, Yb, k,
                            lr->YI, k, 0.0, g, l);
                for (size_t e = 0; e < (size_t)nb * l; e++)
                    g[e] = g[e] < 0 ? -g[e] : 0;
            }
            /* low rank and constant, then P_blk V_I on the rows not in I */
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nb, p, k, 1.0, Yb, k, YtV, p,
                        0.0, Zb, p);
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nb, p, l, 1.0, Pb, l, VI, p,
                        0.0, zb, p);
            for (uint32_t i = 0; i < nb; i++) {
                double *z = Zb + (size_t)i * p, *e = zb + (size_t)i * p;
                int inI = lr->pos[a + i] >= 0;
                for (uint32_t q = 0; q < p; q++)
                    z[q] += lr->omega * onesV[q] + (inI ? 0 : e[q]);
            }
            /* the rows I get P^T V, added over chunks in order below */
            cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, l, p, nb, 1.0, Pb, l,
                        V + (size_t)(a - r0) * p, p, 1.0, part + c * lp, p);
        }
    }
    if ((rc = fit_part_add_chunks(&lr->L, part, lp, PtV)))
        goto out;
    for (uint32_t b = 0; b < l; b++) {
        uint32_t i = lr->sel[b];
        if (i < r0 || i >= r1)
            continue;
        double *z = Z + (size_t)(i - r0) * p;
        for (uint32_t q = 0; q < p; q++)
            z[q] += PtV[(size_t)b * p + q];
    }
out:
    for (int t = 0; t < lr->nt && G; t++)
        free(G[t]);
    free(part), free(PtV), free(G), free(YtV), free(VI), free(onesV), free(ones);
    return rc;
}

/* ---- the compressed iterate as R (fit_internal.h's interface) ---------------------------- */

static void lr_rows(const fit_mat *R, uint32_t r0, uint32_t nb, double *out, uint64_t *nneg,
                    double *negmass)
{
    fit_lowrank_rows(R->state, r0, nb, out);
    *nneg = 0, *negmass = 0;
}

static int lr_apply(const fit_mat *R, const double *V, uint32_t p, double *Z, uint64_t *nneg,
                    double *negmass)
{
    if (nneg)
        *nneg = 0;
    if (negmass)
        *negmass = 0;
    return fit_lowrank_apply(R->state, V, p, Z);
}

/* Scaled to sum 1 by fit_lowrank_finish. */
static int lr_sums(fit_mat *R, double *c, double *q2)
{
    int rc = fit_lowrank_row_stats(R->state, c, q2);
    if (rc)
        return rc;
    double tot = fit_sum_ordered(c, R->n);
    if (!(tot > 0))
        return jsmf_error(JSMF_ENUMERIC, "fit: rectified C sums to %g", tot);
    return JSMF_OK;
}

static int lr_finish(fit_mat *R, double *c, double *q2, jsmf_fit_report *rep)
{
    (void)rep;
    return lr_sums(R, c, q2);
}

/* Exact rows lazily for a method that reads a row at a time, from the whole factor; else the
 * factor space of Y Y^T, where the QR's pivots keep each rank's rows (the other methods read
 * any row: the whole factor). */
static int lr_anchor_space(fit_mat *R, const double *c, int exact, int row_at_a_time,
                           fit_anchor_space *sp)
{
    fit_lowrank *lr = R->state;
    int rc;
    if ((exact || !row_at_a_time) && (rc = fit_lowrank_gather(lr)))
        return rc;
    if (exact && row_at_a_time) {
        sp->part = fit_part_whole(R->n), sp->d = R->n;
        return JSMF_OK;
    }
    sp->part = lr->L;
    if (!(sp->owned = fit_factor_space(&sp->part, lr->k, lr->Y, lr->Y, 1.0, c)))
        return jsmf_error(JSMF_ENOMEM, "fit: out of memory finding anchors");
    sp->M = sp->owned, sp->d = lr->k, sp->unit = 1;
    return JSMF_OK;
}

/* The anchor rows and columns are repaired too (A is read from them), as the reference's
 * factorizeY does. */
static int lr_repair_anchors(fit_mat *R, const uint32_t *S, uint32_t k, double *c, double *q2)
{
    int rc = fit_lowrank_finish(R->state, S, S ? k : 0);
    return rc ? rc : lr_sums(R, c, q2);
}

/* Its columns S on this rank's rows, R_SS picked from their ranks. */
static int lr_anchor_cols(const fit_mat *R, const fit_part *L, const uint32_t *S, uint32_t k,
                          double *RS, double *Css)
{
    int rc = fit_lowrank_cols(R->state, S, k, RS);
    return rc ? rc : fit_part_pick(L, S, k, RS, k, Css);
}

static fit_part lr_part(const fit_mat *R)
{
    return fit_lowrank_part(R->state);
}

static int lr_gather(fit_mat *R)
{
    return fit_lowrank_gather(R->state);
}

static void lr_free(void *state)
{
    fit_lowrank_free(state);
}

static const fit_mat_ops lowrank_ops = {
    .rows = lr_rows,
    .apply = lr_apply,
    .finish = lr_finish,
    .anchor_space = lr_anchor_space,
    .repair_anchors = lr_repair_anchors,
    .anchor_cols = lr_anchor_cols,
    .part = lr_part,
    .gather = lr_gather,
    .free = lr_free,
    .cheap_product = 1,
    .product_passes = 1,
    .factor_space_anchors = 1,
};

/* ---- the iteration ----------------------------------------------------------------------- */

static void rectify_progress(const jsmf_fit_opts *o, double done, double total)
{
    if (o->progress)
        o->progress(o->progress_arg, "rectify", done, total, "iterations");
}

/* l = 2K. The reference takes ceil(5 K ln K) (979 rows at K = 50); measured here, the number of
 * rows repaired changes neither the l1 error to planted topics (N=5000, K=50: 0.3939 for l from 50
 * to 5000) nor coherence on real corpora beyond noise (debdesc K=50: c_v 0.659 / 0.662 / 0.647 at
 * l = 50 / 100 / 979), while every product costs O(N l K): so the smallest that keeps the
 * frequent words' rows non-negative, a couple of rows per topic. */
/* The steps contract about linearly (rate rho = delta_t / delta_t-1: about 0.75 on a small
 * planted corpus, 0.95 on debdesc, faster in the first steps), so the distance to the fixed point
 * is about delta rho / (1 - rho): stop when that estimate, with the slowest of the last three
 * rates, is below tol. A step that moved more than the one before never stops the iteration. */
static double slowest_rate(const double *hist, uint32_t t)
{
    double rho = 0;
    for (uint32_t j = t - 2; j <= t; j++)
        rho = fmax(rho, hist[j] / hist[j - 1]);
    return rho;
}

static int converged(const double *hist, uint32_t t, double tol)
{
    double delta = hist[t];
    if (!(delta > tol * 1e-3))
        return 1;
    if (t < 4)
        return 0;
    double rho = slowest_rate(hist, t);
    return rho < 1 && delta * rho / (1 - rho) <= tol;
}

/* The steps the test will take, at the rate so far (for the progress line's ETA). */
static uint32_t steps_expected(const double *hist, uint32_t t, double tol, uint32_t maxit)
{
    if (t < 4)
        return maxit < 20 ? maxit : 20;
    double rho = slowest_rate(hist, t), delta = hist[t];
    if (!(rho < 1) || !(rho > 0))
        return maxit;
    /* delta rho^j rho / (1 - rho) <= tol */
    double more = ceil(log(tol * (1 - rho) / (rho * delta)) / log(rho));
    double total = t + (more > 1 ? more : 1);
    return total < maxit ? (uint32_t)total : maxit;
}

/* The seed of the steps' eigensolves (their padding columns: the first step's p - K beyond Y, and
 * any lost to rank deficiency), fixed rather than --seed: two subspace iterations a step leave
 * each step's eigenvectors inexact, so those columns shape the iterate, and drawn from --seed they
 * made the model depend on it (debdesc K=50: mean matched l1 up to 0.010 between seeds, and 0.207
 * on a store where the stop fell on the other side of an anchor change). --seed starts C's
 * eigendecomposition only, whose result sketch_tol makes nearly seed-free (formats/fit.md,
 * "The seed"). 1: seed 1's stream, so the default's models stay as they were. */
#define STEP_SEED 1

uint32_t fit_compress_rows_default(uint32_t k)
{
    return 2 * k;
}

/* ---- where the iterate starts: C's eigendecomposition, cold, warm or from a checkpoint ----- */

uint32_t fit_first_cols(uint32_t k)
{
    return k + (k / 2 > 10 ? k / 2 : 10);
}

uint32_t fit_step_cols(uint32_t k)
{
    return k + (k / 5 > 8 ? k / 5 : 8);
}

/* The eigensolver's settings for C: block Krylov cycles of depth 4 of K + K/2 columns,
 * restarted until no wanted Ritz value moves by more than sketch_tol of the K-th between cycles,
 * at most sketch_passes passes (tools/bench/fit-results.md); from Q0 (p0 columns, the rest
 * random) or, Q0 NULL, a random block. Where every product is a pass over the store or the
 * documents (C not in memory), also between depths within a cycle, at a tenth of sketch_tol: on
 * a large, well-determined C the first cycle holds the wanted pairs (100k baskets, K=200: 4
 * products instead of 8, the same model), where at sketch_tol itself debdesc K=100 stopped a
 * pass early and moved 0.10; or once the rest the values' rate leaves them is a hundredth of
 * sketch_tol (within_done in fit_eig.c; 1M baskets: 4 products instead of 8); where C is in
 * memory products are cheap, so the test between cycles alone decides (formats/fit.md, "The
 * first eigendecomposition's passes"). */
static fit_eig_opts c_eig_opts(const fit_csrc *src, const jsmf_fit_opts *o, const fit_plan *pl,
                               const double *Q0, uint32_t p0, uint32_t *cap_out)
{
    uint32_t cap = o->sketch_passes ? o->sketch_passes : fit_csrc_cached(src) ? 16 : 8;
    uint32_t d0 = cap < 4 ? cap : 4, d = fit_plan_depth(pl, d0);
    /* fewer blocks than planned for (the budget's): as many products as the cap allows */
    uint32_t cycles = d == d0 ? cap / d : (cap + d - 1) / d;
    *cap_out = cap;
    return (fit_eig_opts){o->k, fit_first_cols(o->k), d, cycles, Q0, p0, o->sketch_tol, 1,
                          o->seed, 1, NULL, fit_csrc_cached(src) ? 0 : o->sketch_tol / 10,
                          NULL};
}

/* Warm: the cold eigensolver, with the same stopping test, started from the previous model's
 * factor of C, its rows mapped onto this C's words (a new word's row is 0: the first product
 * with C fills it), random columns up to the block. Experimental (formats/fit.md, "Warm
 * start"): on debdesc and kjv 90/10 it gives the cold fit's topics (mean l1 below 5e-5) with as
 * many products as the cold fit (12); with fewer, the eigenvectors are not exact enough for the
 * steps after them, whose iterate after ~25 steps (not their limit) is the model: 4 products,
 * 0.20 on debdesc. */
static int warm_eig(fit_csrc *src, const fit_part *L, const jsmf_fit_opts *o,
                    const fit_plan *pl, const fit_start *st, double *U, double *lam,
                    fit_eig_result *er)
{
    uint32_t cap;
    fit_eig_opts eo = c_eig_opts(src, o, pl, st->c_prev + (size_t)L->r0 * st->kp, st->kp, &cap);
    fit_csrc_plan(src, cap);
    return fit_eig_topk(fit_csrc_apply_part, src, L, &eo, U, lam, er, NULL);
}

/* C's top K into U (this rank's rows) and lam: warm from the previous model, read back from
 * the checkpoint, or cold from a random start (and then kept in the checkpoint). */
static int first_eig(fit_csrc *src, const fit_part *L, const jsmf_fit_opts *o,
                     const fit_plan *pl, fit_start *st, double *U, double *lam,
                     fit_eig_result *er)
{
    uint32_t k = o->k, n = L->n;
    if (st && st->c_prev)
        return warm_eig(src, L, o, pl, st, U, lam, er);
    if (st && st->ckpt) {
        uint32_t applies = 0;
        if (fit_ckpt_load(st, n, k, U, lam, &applies)) { /* the row statistics (and the cache) of the read the eigensolver made */
            st->resumed = st->ckpt_saved = 1;
            *er = (fit_eig_result){.applies = applies, .resid = NAN};
            return fit_csrc_cached(src) ? JSMF_OK : fit_csrc_rows(src, NULL, 0, NULL);
        }
    }
    /* the only reads of C, from a random block (or from the last cycle a checkpoint kept) */
    uint32_t cap;
    fit_eig_opts eo = c_eig_opts(src, o, pl, NULL, 0, &cap);
    fit_eig_ckpt cycles;
    if (st && st->ckpt) {
        fit_ckpt_cycles(st, &cycles);
        eo.ckpt = &cycles;
    }
    fit_csrc_plan(src, cap);
    int rc = fit_eig_topk(fit_csrc_apply_part, src, L, &eo, U, lam, er, NULL);
    /* a checkpoint that cannot be written only costs the resume: the fit goes on (and a
     * directory that cannot be written fails at the save, with its own message) */
    if (!rc && st && st->ckpt && fit_ckpt_save(st, n, k, U, lam, er->applies))
        jsmf_error_clear();
    else if (!rc && st && st->ckpt)
        st->ckpt_saved = 1;
    return rc;
}

/* How C's eigendecomposition converged, for the report. */
static void note_sketch(jsmf_fit_report *rep, const fit_eig_result *er)
{
    _Static_assert(FIT_EIG_CHANGES == JSMF_FIT_MAX_SKETCH, "the report holds every change");
    rep->n_sketch_within = er->n_within, rep->n_sketch_between = er->n_between;
    memcpy(rep->sketch_within, er->within, sizeof(double) * er->n_within);
    memcpy(rep->sketch_between, er->between, sizeof(double) * er->n_between);
}

/* The factor Y (this rank's rows, k columns) whole, into a new array at *out. */
static int keep_factor(const fit_part *L, uint32_t k, const double *Y, double **out)
{
    uint32_t n = L->n;
    free(*out);
    if (!(*out = big_malloc(sizeof(double) * n * k)))
        return jsmf_error(JSMF_ENOMEM, "fit: out of memory for the factor (%u x %u)", n, k);
    if (!fit_part_split(L)) {
        memcpy(*out, Y, sizeof(double) * n * k);
        return JSMF_OK;
    }
    return fit_part_gather(L, k, Y, *out);
}

int fit_rectify_compressed(const jsmf_source *C, const jsmf_fit_opts *o, int nt, fit_mat *F,
                           fit_start *st, const fit_plan *pl, jsmf_fit_report *rep)
{
    uint32_t n = C->n, k = o->k, p = fit_step_cols(k);
    uint32_t l = o->compress_rows ? o->compress_rows : fit_compress_rows_default(k);
    memset(F, 0, sizeof *F);
    fit_csrc *src = NULL;
    int streamed = 0;
    double *hist = NULL, *U = NULL, *lam = NULL, *Yn = NULL, *Qn = NULL;
    fit_lowrank *lr = NULL;
    double *unigram = NULL; /* C's row sums: a word the iterate leaves without mass keeps its own */
    fit_eig_ws *ws = NULL;
    double t0 = clock_seconds();
    int rc = fit_csrc_open(C, fit_plan_source_mem(pl, o->mem_bytes), nt, 1, o->products, o->comm,
                           o->progress, o->progress_arg, &src);
    if (rc)
        goto out;
    /* an MPI job: each rank holds C's rows and the same rows of every n-row block */
    fit_part L = fit_csrc_part(src);
    uint32_t nl = L.r1 - L.r0;
    /* C's eigenvectors U (nl x k) live in the steps' next start Qn (nl x p), which the first
     * step reads them from before it writes Qn: one N-row array fewer in the steps */
    Qn = big_malloc(sizeof(double) * nl * p + 1), lam = malloc(sizeof(double) * k);
    U = Qn;
    if (!U || !lam)
        rc = jsmf_error(JSMF_ENOMEM, "fit: out of memory for the compressed iterate (N=%u)", n);
    if ((rc = fit_part_agree(&L, rc)))
        goto out;
    fit_eig_result er;
    if ((rc = first_eig(src, &L, o, pl, st, U, lam, &er)))
        goto out;
    /* the steps' n-row arrays only now: the first eigendecomposition's blocks are gone (at
     * N=1M, K=200 these three are 5.1 GB, the eigendecomposition's 12 GB) */
    lr = fit_lowrank_new(&L, k, l, nt);
    if (lr && pl && pl->mem && !pl->keep_p)
        fit_lowrank_keep_p(lr, 0);
    Yn = big_malloc(sizeof(double) * nl * k + 1);
    if (!lr || !Yn)
        rc = jsmf_error(JSMF_ENOMEM, "fit: out of memory for the compressed iterate (N=%u)", n);
    if ((rc = fit_part_agree(&L, rc)))
        goto out;
    if (rep)
        rep->eig_cycles_resumed = er.cycles_resumed;
    if (rep)
        rep->eig_start = st && st->c_prev ? JSMF_EIG_WARM
                         : st && st->resumed ? JSMF_EIG_RESUMED : JSMF_EIG_RANDOM;
    /* the factor of C, U diag(sqrt(max(lam, 0))), for c_factor.npy: kept, or where the plan
     * needs its memory read back from the checkpoint when the model is written */
    if (st && pl && pl->factor_from_ckpt && st->ckpt_saved)
        st->c_out_from_ckpt = 1;
    else if (st && (rc = keep_factor(&L, k, U, &st->c_out)))
        goto out;
    if (st && st->c_out)
        fit_psd_factor(n, k, st->c_out, lam, st->c_out);
    uint32_t iters = er.applies;
    if (rep) {
        note_sketch(rep, &er);
        rep->passes += fit_csrc_passes(src), rep->t_load = clock_seconds() - t0;
    }
    if (rep)
        fit_note_scans(rep, src, C);
    if (fit_csrc_rowsums(src) && (unigram = malloc(sizeof(double) * n)))
        memcpy(unigram, fit_csrc_rowsums(src), sizeof(double) * n);
    streamed = !fit_csrc_cached(src);
    /* C cached in float32 serves the metrics too: recovery moves by ~2e-5 relative, and
     * reading the store again in double cost two streamed passes, as much as the rest of the
     * fit at N=20k (tools/bench/fit-results.md) */
    if (streamed) /* L.starts is C's split, kept by lr */
        fit_csrc_close(src), src = NULL;
    fit_psd_factor(nl, k, U, lam, Yn);
    if ((rc = fit_lowrank_set(lr, Yn, NULL, 0)))
        goto out;
    jsmf_fit_trace tr = {NAN, lr->omega, 0, lr->esum, lam[k - 1], iters};
    uint32_t maxit = o->rectify_iters ? o->rectify_iters : 100;
    hist = calloc((size_t)maxit + 1, sizeof(double));
    ws = fit_eig_ws_new();
    if (!hist || !ws) {
        rc = jsmf_error(JSMF_ENOMEM, "fit: out of memory");
        goto out;
    }
    for (uint32_t t = 1; t <= maxit; t++) {
        rectify_progress(o, t - 1, steps_expected(hist, t - 1, o->rectify_tol, maxit));
        /* warm start: the previous Ritz block advanced one power step (first: Y itself) */
        fit_eig_opts so = {k, p, 1, o->eig_step_maxit ? o->eig_step_maxit : 2, t == 1 ? U : Qn,
                           t == 1 ? k : p, o->eig_tol, 0, STEP_SEED + t, 0, ws, 0, NULL};
        if ((rc = fit_eig_topk(fit_lowrank_apply, lr, &lr->L, &so, Yn, lam, &er, Qn)))
            goto out;
        iters = er.applies;
        if (rep && rep->n_trace < JSMF_FIT_MAX_TRACE)
            rep->trace[rep->n_trace++] = tr;
        fit_psd_factor(nl, k, Yn, lam, Yn);
        double delta;
        if ((rc = fit_factor_delta(&lr->L, k, lr->Y, NULL, Yn, NULL, &delta)) ||
            (rc = fit_lowrank_set(lr, Yn, NULL, 0)))
            goto out;
        tr = (jsmf_fit_trace){delta, lr->omega, 0, lr->esum, lam[k - 1], iters};
        if (rep)
            rep->passes += iters;
        hist[t] = delta;
        if (converged(hist, t, o->rectify_tol)) {
            if (rep)
                rep->converged = 1;
            break;
        }
    }
    if (rep && rep->n_trace < JSMF_FIT_MAX_TRACE)
        rep->trace[rep->n_trace++] = tr;
    if ((rc = fit_lowrank_finish(lr, NULL, 0)))
        goto out;
    if (rep)
        rep->compress_rows = lr->l0;
    F->ops = &lowrank_ops, F->state = lr, F->n = n, F->threads = nt;
    lr = NULL;
    F->c_streamed = streamed;
    F->src = src; /* C in memory: kept for the metrics */
    src = NULL;
    F->c_unigram = unigram;
    unigram = NULL;
out:
    fit_csrc_close(src);
    fit_lowrank_free(lr);
    free(unigram);
    fit_eig_ws_free(ws);
    free(lam), free(Yn), free(Qn), free(hist); /* U lives in Qn */
    return rc;
}
