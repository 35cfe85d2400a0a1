/* fit_compress.c — step 1 without N x N work (Lee et al. 2021, the "epsilon-NN" rectification;
 * formats/references.md; measured in tools/bench/fit-results.md): the rectified C is kept as
 *     R = clip_I(Y Y^T) + omega 1 1^T,
 * Y (N x K) the PSD factor, clip_I the non-negativity repair of the entries in the l rows and
 * columns I of largest ||Y_i|| (where negative entries are large enough to matter), omega the
 * shift that makes R sum to 1. Written as Y Y^T + E + omega 1 1^T, E = max(-Y Y_I^T, 0) on the
 * columns I and its transpose on the rows I, so every product with R costs O(N l (K + p)) GEMM
 * work and nothing N x N is ever held. C itself is read only by the first eigendecomposition. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "fit_internal.h"

/* Rows per generated block of Y Y_I^T. */
#define LR_BLOCK 256

struct fit_lowrank {
    uint32_t n, k, l;  /* l: rows repaired now: the l0 largest, plus any asked for (anchors) */
    uint32_t l0, lcap;
    int nt;
    double *Y;       /* n x k */
    double *YI;      /* l x k: the rows I of Y */
    uint32_t *sel;    /* the l rows, ascending */
    int32_t *pos;    /* row -> its position in I, or -1 */
    double omega;    /* the constant of every entry */
    double *s;       /* Y^T 1 (k) */
    double *erow;    /* row sums of E (n) */
    double *eg2, *eg; /* per row: sum of g^2 and of g over the entries E repairs (n each) */
    double esum;     /* sum of E */
    double *unigram; /* row sums of the original C, or NULL */
    int final;       /* no shift: the iterate as handed to the later steps */
    double total;    /* sum of all entries */
};

/* Chunks of rows whose partial column results are summed in chunk order: at most 64 of them,
 * so the partials stay small whatever N, and their order never depends on the thread count. */
static uint32_t chunk_rows(uint32_t n)
{
    uint32_t c = (n + 63) / 64;
    c = (c + LR_BLOCK - 1) / LR_BLOCK * LR_BLOCK;
    return c < LR_BLOCK ? LR_BLOCK : c;
}

void fit_lowrank_free(fit_lowrank *lr)
{
    if (!lr)
        return;
    free(lr->Y), free(lr->YI), free(lr->sel), free(lr->pos), free(lr->s), free(lr->erow);
    free(lr->eg2), free(lr->eg), free(lr->unigram);
    free(lr);
}

fit_lowrank *fit_lowrank_new(uint32_t n, uint32_t k, uint32_t l, int nt)
{
    fit_lowrank *lr = calloc(1, sizeof *lr);
    if (!lr)
        return NULL;
    lr->n = n, lr->k = k, lr->l0 = lr->l = l < n ? l : n, lr->nt = nt > 0 ? nt : 1;
    lr->lcap = lr->l0 + k < n ? lr->l0 + k : n;
    lr->Y = malloc(sizeof(double) * n * k);
    lr->YI = malloc(sizeof(double) * lr->lcap * k);
    lr->sel = malloc(sizeof(uint32_t) * (lr->lcap ? lr->lcap : 1));
    lr->pos = malloc(sizeof(int32_t) * n);
    lr->s = malloc(sizeof(double) * k);
    lr->erow = malloc(sizeof(double) * n);
    lr->eg2 = malloc(sizeof(double) * n);
    lr->eg = malloc(sizeof(double) * n);
    if (!lr->Y || !lr->YI || !lr->sel || !lr->pos || !lr->s || !lr->erow || !lr->eg2 || !lr->eg) {
        fit_lowrank_free(lr);
        return NULL;
    }
    return lr;
}

uint32_t fit_lowrank_k(const fit_lowrank *lr) { return lr->k; }
const double *fit_lowrank_unigram(const fit_lowrank *lr) { return lr->unigram; }
uint32_t fit_lowrank_l(const fit_lowrank *lr) { return lr->l; }
double fit_lowrank_omega(const fit_lowrank *lr) { return lr->omega; }
const double *fit_lowrank_y(const fit_lowrank *lr) { return lr->Y; }
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

typedef struct {
    double *colsum, *colg2, *colg; /* per chunk: l each (clipped entries of each column) */
    double psum, pii;              /* sum of P, and over the rows in I */
} chunk_sums;

/* One pass over G's row blocks: row sums of P and of g, g^2 over its non-zeros (for rows not in
 * I), the same per column, sum(P) and the part of it on the rows I. */
static int lowrank_sums(fit_lowrank *lr, double *colsum, double *colg2, double *colg,
                        double *psum, double *pii)
{
    uint32_t n = lr->n, k = lr->k, l = lr->l, cr = chunk_rows(n), nch = (n + cr - 1) / cr;
    chunk_sums *cs = calloc(nch, sizeof *cs);
    double **G = calloc(lr->nt, sizeof *G);
    int fail = !cs || !G;
    for (uint32_t c = 0; c < nch && !fail; c++)
        fail = !(cs[c].colsum = calloc((size_t)3 * l, sizeof(double)));
    for (int t = 0; t < lr->nt && !fail; t++)
        fail = !(G[t] = malloc(sizeof(double) * LR_BLOCK * l));
    if (!fail) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(lr->nt)
        for (uint32_t c = 0; c < nch; c++) {
            double *g = G[omp_get_thread_num()];
            chunk_sums *me = &cs[c];
            me->colg2 = me->colsum + l, me->colg = me->colsum + 2 * l;
            for (uint32_t r0 = c * cr; r0 < (c + 1) * cr && r0 < n; r0 += LR_BLOCK) {
                uint32_t nb = n - r0 < LR_BLOCK ? n - r0 : LR_BLOCK;
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nb, l, k, 1.0,
                            lr->Y + (size_t)r0 * k, k, lr->YI, k, 0.0, g, l);
                for (uint32_t i = 0; i < nb; i++) {
                    const double *gi = g + (size_t)i * l;
                    double rs = 0, r2 = 0, r1 = 0;
                    for (uint32_t b = 0; b < l; b++) {
                        double v = gi[b];
                        if (v < 0) {
                            rs -= v, r2 += v * v, r1 += v;
                            me->colsum[b] -= v, me->colg2[b] += v * v, me->colg[b] += v;
                        }
                    }
                    me->psum += rs;
                    if (lr->pos[r0 + i] >= 0)
                        me->pii += rs;
                    lr->erow[r0 + i] = rs;
                    lr->eg2[r0 + i] = r2, lr->eg[r0 + i] = r1;
                }
            }
        }
        memset(colsum, 0, sizeof(double) * l);
        memset(colg2, 0, sizeof(double) * l);
        memset(colg, 0, sizeof(double) * l);
        *psum = 0, *pii = 0;
        for (uint32_t c = 0; c < nch; c++) {
            for (uint32_t b = 0; b < l; b++)
                colsum[b] += cs[c].colsum[b], colg2[b] += cs[c].colg2[b],
                    colg[b] += cs[c].colg[b];
            *psum += cs[c].psum, *pii += cs[c].pii;
        }
    }
    for (uint32_t c = 0; c < nch && cs; c++)
        free(cs[c].colsum);
    for (int t = 0; t < lr->nt && G; t++)
        free(G[t]);
    free(cs), free(G);
    return fail ? jsmf_error(JSMF_ENOMEM, "fit: out of memory (compressed iterate, N=%u)", n)
                : JSMF_OK;
}

/* Take Y (n x k) as the factor: choose I (the l0 rows of largest norm, and the `nextra` rows
 * `extra`), then omega so that R sums to 1, and the row sums and norm corrections of E that
 * rect_sums needs. */
int fit_lowrank_set(fit_lowrank *lr, const double *Y, const uint32_t *extra, uint32_t nextra)
{
    uint32_t n = lr->n, k = lr->k;
    if (Y != lr->Y)
        memcpy(lr->Y, Y, sizeof(double) * n * k);
    fit_ranked *rk = malloc(sizeof(fit_ranked) * n);
    double *col = malloc(sizeof(double) * 3 * (lr->lcap ? lr->lcap : 1));
    double *ones = malloc(sizeof(double) * n);
    int rc = JSMF_OK;
    if (!rk || !col || !ones) {
        rc = jsmf_error(JSMF_ENOMEM, "fit: out of memory (compressed iterate, N=%u)", n);
        goto out;
    }
    for (uint32_t i = 0; i < n; i++) {
        rk[i].v = cblas_ddot(k, lr->Y + (size_t)i * k, 1, lr->Y + (size_t)i * k, 1);
        rk[i].i = i;
        lr->pos[i] = -1;
        ones[i] = 1.0;
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
    for (uint32_t b = 0; b < l; b++) {
        lr->pos[lr->sel[b]] = (int32_t)b;
        memcpy(lr->YI + (size_t)b * k, lr->Y + (size_t)lr->sel[b] * k, sizeof(double) * k);
    }
    fit_gemm_tn(n, k, 1, lr->Y, ones, lr->s);
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
    free(rk), free(col), free(ones);
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
    cblas_dscal(lr->n * lr->k, 1.0 / sqrt(lr->total), lr->Y, 1);
    return fit_lowrank_set(lr, lr->Y, extra, nextra);
}

/* Row sums c = R 1 and sums of squares q2_i = ||R_i||^2, exactly, in O(N K^2 + N l K). */
void fit_lowrank_row_stats(const fit_lowrank *lr, double *c, double *q2)
{
    uint32_t n = lr->n, k = lr->k;
    double om = lr->omega, *H = malloc(sizeof(double) * k * k), *t = malloc(sizeof(double) * n * k);
    fit_gemm_tn(n, k, k, lr->Y, lr->Y, H);
    fit_gemm_nn(n, k, k, lr->Y, H, t);
#pragma omp parallel for schedule(static) num_threads(lr->nt)
    for (uint32_t i = 0; i < n; i++) {
        const double *y = lr->Y + (size_t)i * k;
        double ys = cblas_ddot(k, y, 1, lr->s, 1), yhy = cblas_ddot(k, y, 1, t + (size_t)i * k, 1);
        c[i] = ys + om * n + lr->erow[i];
        /* a repaired entry: (0 + om)^2 replaces (g + om)^2 */
        q2[i] = yhy + 2 * om * ys + om * om * n - lr->eg2[i] - 2 * om * lr->eg[i];
    }
    free(H), free(t);
}

/* Rows r0 .. r0+nb-1 of R: max(g, 0) where the row or the column is in I, g elsewhere, + omega. */
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

/* Z = R V = Y (Y^T V) + E V + omega 1 (1^T V). With P = max(-Y Y_I^T, 0) (n x l):
 * (E V)_i = P_i V_I for a row not in I, and (P^T V)_a for the row I_a. */
int fit_lowrank_apply(void *ctx, const double *V, uint32_t p, double *Z)
{
    fit_lowrank *lr = ctx;
    uint32_t n = lr->n, k = lr->k, l = lr->l, cr = chunk_rows(n), nch = (n + cr - 1) / cr;
    double *YtV = malloc(sizeof(double) * k * p), *VI = malloc(sizeof(double) * (size_t)l * p);
    double *onesV = malloc(sizeof(double) * p), *ones = malloc(sizeof(double) * n);
    double **part = calloc(nch, sizeof *part), **G = calloc(lr->nt, sizeof *G);
    int fail = !YtV || !VI || !onesV || !ones || !part || !G;
    for (uint32_t c = 0; c < nch && !fail; c++)
        fail = !(part[c] = calloc((size_t)l * p, sizeof(double)));
    for (int t = 0; t < lr->nt && !fail; t++)
        fail = !(G[t] = malloc(sizeof(double) * LR_BLOCK * ((size_t)l + p)));
    if (fail)
        goto out;
    for (uint32_t i = 0; i < n; i++)
        ones[i] = 1.0;
    fit_gemm_tn(n, k, p, lr->Y, V, YtV);
    fit_gemm_tn(n, 1, p, ones, V, onesV);
    for (uint32_t b = 0; b < l; b++)
        memcpy(VI + (size_t)b * p, V + (size_t)lr->sel[b] * p, sizeof(double) * p);
#pragma omp parallel for schedule(dynamic, 1) num_threads(lr->nt)
    for (uint32_t c = 0; c < nch; c++) {
        double *g = G[omp_get_thread_num()], *zb = g + (size_t)LR_BLOCK * l;
        for (uint32_t r0 = c * cr; r0 < (c + 1) * cr && r0 < n; r0 += LR_BLOCK) {
            uint32_t nb = n - r0 < LR_BLOCK ? n - r0 : LR_BLOCK;
            const double *Yb = lr->Y + (size_t)r0 * k;
            double *Zb = Z + (size_t)r0 * p;
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nb, l, k, 1.0, Yb, k, lr->YI, k,
                        0.0, g, l);
            for (size_t e = 0; e < (size_t)nb * l; e++)
                g[e] = g[e] < 0 ? -g[e] : 0;
            /* low rank and constant, then P_blk V_I on the rows not in I */
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nb, p, k, 1.0, Yb, k, YtV, p,
                        0.0, Zb, p);
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nb, p, l, 1.0, g, l, VI, p,
                        0.0, zb, p);
            for (uint32_t i = 0; i < nb; i++) {
                double *z = Zb + (size_t)i * p, *e = zb + (size_t)i * p;
                int inI = lr->pos[r0 + i] >= 0;
                for (uint32_t q = 0; q < p; q++)
                    z[q] += lr->omega * onesV[q] + (inI ? 0 : e[q]);
            }
            /* the rows I get P^T V, summed over chunks in order below */
            cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, l, p, nb, 1.0, g, l,
                        V + (size_t)r0 * p, p, 1.0, part[c], p);
        }
    }
    for (uint32_t c = 1; c < nch; c++)
        for (size_t e = 0; e < (size_t)l * p; e++)
            part[0][e] += part[c][e];
    for (uint32_t b = 0; b < l; b++) {
        double *z = Z + (size_t)lr->sel[b] * p;
        for (uint32_t q = 0; q < p; q++)
            z[q] += part[0][(size_t)b * p + q];
    }
out:
    for (uint32_t c = 0; c < nch && part; c++)
        free(part[c]);
    for (int t = 0; t < lr->nt && G; t++)
        free(G[t]);
    free(part), free(G), free(YtV), free(VI), free(onesV), free(ones);
    return fail ? jsmf_error(JSMF_ENOMEM, "fit: out of memory (compressed product, N=%u)", n)
                : JSMF_OK;
}

/* ---- the iteration ----------------------------------------------------------------------- */

static void progress(const jsmf_fit_opts *o, const char *what, double done, double total)
{
    if (o->progress)
        o->progress(o->progress_arg, what, done, total);
}

/* Y = U diag(sqrt(max(lam, 0))). */
static void psd_factor(uint32_t n, uint32_t k, const double *U, const double *lam, double *Y)
{
    double *f = malloc(sizeof(double) * k);
    for (uint32_t c = 0; c < k && f; c++)
        f[c] = lam[c] > 0 ? sqrt(lam[c]) : 0;
    for (uint32_t i = 0; i < n && f; i++)
        for (uint32_t c = 0; c < k; c++)
            Y[(size_t)i * k + c] = U[(size_t)i * k + c] * f[c];
    free(f);
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

uint32_t fit_compress_rows_default(uint32_t k)
{
    return 2 * k;
}

int fit_rectify_compressed(const jsmf_source *C, const jsmf_fit_opts *o, int nt, fit_mat *F,
                           jsmf_fit_report *rep)
{
    uint32_t n = C->n, k = o->k, q = k / 5 > 8 ? k / 5 : 8, p = k + q;
    uint32_t l = o->compress_rows ? o->compress_rows : fit_compress_rows_default(k);
    memset(F, 0, sizeof *F);
    fit_csrc *src = NULL;
    int streamed = 0;
    double *hist = NULL;
    fit_lowrank *lr = fit_lowrank_new(n, k, l, nt);
    double *U = malloc(sizeof(double) * n * k), *lam = malloc(sizeof(double) * k);
    double *Yn = malloc(sizeof(double) * n * k), *Qn = malloc(sizeof(double) * n * p);
    int rc = JSMF_OK;
    if (!lr || !U || !lam || !Yn || !Qn) {
        rc = jsmf_error(JSMF_ENOMEM, "fit: out of memory for the compressed iterate (N=%u)", n);
        goto out;
    }
    /* the only reads of C: block Krylov cycles of depth 4 from a random start of K + K/2
     * columns, restarted until no wanted Ritz value moves by more than sketch_tol of the K-th
     * between cycles, at most sketch_passes passes (tools/bench/fit-results.md) */
    double t0 = fit_now();
    if ((rc = fit_csrc_open(C, o->mem_bytes, nt, 1, o->comm, o->progress, o->progress_arg,
                            &src)))
        goto out;
    uint32_t cap = o->sketch_passes ? o->sketch_passes : fit_csrc_cached(src) ? 16 : 8;
    uint32_t d = cap < 4 ? cap : 4;
    fit_eig_opts eo = {k, k + (k / 2 > 10 ? k / 2 : 10), d, cap / d, NULL, 0, o->sketch_tol, 1,
                       o->seed, 1};
    fit_eig_result er;
    fit_csrc_plan(src, cap);
    if ((rc = fit_eig_topk(fit_csrc_apply, src, n, &eo, U, lam, &er, NULL)))
        goto out;
    uint32_t iters = er.applies;
    if (rep)
        rep->passes += fit_csrc_passes(src), rep->t_load = fit_now() - t0;
    if (rep)
        fit_note_scans(rep, src, C);
    if (fit_csrc_rowsums(src) && (lr->unigram = malloc(sizeof(double) * n)))
        memcpy(lr->unigram, fit_csrc_rowsums(src), sizeof(double) * n);
    streamed = !fit_csrc_cached(src);
    /* C cached in float32 serves the metrics too: recovery moves by ~2e-5 relative, and
     * reading the store again in double cost two streamed passes, as much as the rest of the
     * fit at N=20k (tools/bench/fit-results.md) */
    if (streamed)
        fit_csrc_close(src), src = NULL;
    psd_factor(n, k, U, lam, Yn);
    if ((rc = fit_lowrank_set(lr, Yn, NULL, 0)))
        goto out;
    jsmf_fit_trace tr = {NAN, lr->omega, 0, lr->esum, lam[k - 1], iters};
    uint32_t maxit = o->rectify_iters ? o->rectify_iters : 100;
    hist = calloc((size_t)maxit + 1, sizeof(double));
    if (!hist) {
        rc = jsmf_error(JSMF_ENOMEM, "fit: out of memory");
        goto out;
    }
    for (uint32_t t = 1; t <= maxit; t++) {
        progress(o, "rectify", t - 1, steps_expected(hist, t - 1, o->rectify_tol, maxit));
        /* warm start: the previous Ritz block advanced one power step (first: Y itself) */
        fit_eig_opts so = {k, p, 1, o->eig_step_maxit ? o->eig_step_maxit : 2, t == 1 ? U : Qn,
                           t == 1 ? k : p, o->eig_tol, 0, o->seed + t, 0};
        if ((rc = fit_eig_topk(fit_lowrank_apply, lr, n, &so, U, lam, &er, Qn)))
            goto out;
        iters = er.applies;
        if (rep && rep->n_trace < JSMF_FIT_MAX_TRACE)
            rep->trace[rep->n_trace++] = tr;
        psd_factor(n, k, U, lam, Yn);
        double delta = fit_factor_delta(n, k, lr->Y, NULL, Yn, NULL);
        if ((rc = fit_lowrank_set(lr, Yn, NULL, 0)))
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
    F->kind = FIT_LOWRANK, F->n = n, F->r = k, F->scale = 1.0, F->threads = nt;
    F->c_streamed = streamed;
    F->src = src; /* C in memory: kept for the metrics */
    src = NULL;
    F->lr = lr;
    lr = NULL;
out:
    fit_csrc_close(src);
    fit_lowrank_free(lr);
    free(U), free(lam), free(Yn), free(Qn), free(hist);
    return rc;
}
