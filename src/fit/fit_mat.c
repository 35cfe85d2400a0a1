/* fit_mat.c — the rectified matrix as an interface: the calls of its operations with their
 * defaults, and what the representations share (passes over row blocks, blocks in parallel,
 * every per-block result in its own slot; the factor space of a factored R). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "core/threads.h"
#include "fit_internal.h"

void fit_mat_free(fit_mat *m)
{
    if (m->ops && m->ops->free)
        m->ops->free(m->state);
    fit_csrc_close(m->src);
    free(m->c_unigram);
    memset(m, 0, sizeof *m);
}

void fit_mat_rows(const fit_mat *m, uint32_t r0, uint32_t nb, double *out, uint64_t *nneg,
                  double *negmass)
{
    uint64_t cnt = 0;
    double mass = 0;
    m->ops->rows(m, r0, nb, out, &cnt, &mass);
    if (nneg)
        *nneg = cnt;
    if (negmass)
        *negmass = mass;
}

int fit_mat_pass(const fit_mat *m, fit_block_fn fn, void *arg, uint64_t *nneg, double *negmass)
{
    uint32_t n = m->n, b = m->block ? m->block : 64;
    uint32_t nblk = (n + b - 1) / b;
    int nt = m->threads > 0 ? m->threads : call_threads();
    int in_place = m->ops->rows_at != NULL;
    double **buf = calloc(nt, sizeof *buf);
    uint64_t *cnt = calloc(nblk, sizeof *cnt);
    double *mass = calloc(nblk, sizeof *mass);
    int fail = !buf || !cnt || !mass;
    for (int t = 0; t < nt && !fail && !in_place; t++)
        fail = !(buf[t] = malloc(sizeof(double) * (size_t)b * n));
    if (!fail) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
        for (uint32_t blk = 0; blk < nblk; blk++) {
            int tid = omp_get_thread_num();
            uint32_t r0 = blk * b, nb = n - r0 < b ? n - r0 : b;
            const double *rows;
            if (in_place) {
                rows = m->ops->rows_at(m, r0);
            } else {
                fit_mat_rows(m, r0, nb, buf[tid], &cnt[blk], &mass[blk]);
                rows = buf[tid];
            }
            fn(arg, r0, nb, rows, tid);
        }
    }
    uint64_t c = 0;
    double s = 0;
    for (uint32_t blk = 0; blk < nblk && !fail; blk++)
        c += cnt[blk], s += mass[blk];
    if (nneg)
        *nneg = c;
    if (negmass)
        *negmass = s;
    for (int t = 0; t < nt && buf; t++)
        free(buf[t]);
    free(buf), free(cnt), free(mass);
    return fail ? jsmf_error(JSMF_ENOMEM, "fit: out of memory for %u-row blocks of %u words", b, n)
                : JSMF_OK;
}

typedef struct {
    uint32_t n, p;
    const double *V;
    double *Z;
} apply_ctx;

static void apply_block(void *arg, uint32_t r0, uint32_t nb, const double *rows, int tid)
{
    apply_ctx *a = arg;
    (void)tid;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nb, a->p, a->n, 1.0, rows, a->n, a->V,
                a->p, 0.0, a->Z + (size_t)r0 * a->p, a->p);
}

int fit_mat_apply_rows(const fit_mat *m, const double *V, uint32_t p, double *Z, uint64_t *nneg,
                       double *negmass)
{
    apply_ctx a = {m->n, p, V, Z};
    return fit_mat_pass(m, apply_block, &a, nneg, negmass);
}

int fit_mat_apply(const fit_mat *m, const double *V, uint32_t p, double *Z, uint64_t *nneg,
                  double *negmass)
{
    if (m->ops->apply)
        return m->ops->apply(m, V, p, Z, nneg, negmass);
    return fit_mat_apply_rows(m, V, p, Z, nneg, negmass);
}

typedef struct {
    uint32_t n;
    double *c, *q2;
} sums_ctx;

static void sums_block(void *arg, uint32_t r0, uint32_t nb, const double *rows, int tid)
{
    sums_ctx *s = arg;
    (void)tid;
    for (uint32_t i = 0; i < nb; i++) {
        const double *x = rows + (size_t)i * s->n;
        double a = 0, b = 0;
        for (uint32_t j = 0; j < s->n; j++)
            a += x[j], b += x[j] * x[j];
        s->c[r0 + i] = a, s->q2[r0 + i] = b;
    }
}

int fit_mat_sums_rows(const fit_mat *m, double *c, double *q2, uint64_t *nneg, double *negmass)
{
    sums_ctx s = {m->n, c, q2};
    return fit_mat_pass(m, sums_block, &s, nneg, negmass);
}

int fit_mat_finish(fit_mat *m, double *c, double *q2, jsmf_fit_report *rep)
{
    return m->ops->finish(m, c, q2, rep);
}

int fit_mat_anchor_space(fit_mat *m, const double *c, int exact, int row_at_a_time,
                         fit_anchor_space *sp)
{
    memset(sp, 0, sizeof *sp);
    if (m->ops->anchor_space)
        return m->ops->anchor_space(m, c, exact, row_at_a_time, sp);
    sp->M = m->ops->rows_at ? m->ops->rows_at(m, 0) : NULL;
    sp->d = m->n;
    sp->part = fit_part_whole(m->n);
    return JSMF_OK;
}

int fit_mat_repair_anchors(fit_mat *m, const uint32_t *S, uint32_t k, double *c, double *q2)
{
    return m->ops->repair_anchors ? m->ops->repair_anchors(m, S, k, c, q2) : JSMF_OK;
}

int fit_mat_anchor_cols(const fit_mat *m, const fit_part *L, const uint32_t *S, uint32_t k,
                        double *RS, double *Css)
{
    if (m->ops->anchor_cols)
        return m->ops->anchor_cols(m, L, S, k, RS, Css);
    uint32_t n = m->n;
    double *XS = malloc(sizeof(double) * k * n);
    if (!XS)
        return jsmf_error(JSMF_ENOMEM, "fit: out of memory recovering B");
    for (uint32_t a = 0; a < k; a++) { /* R is symmetric: its rows S are its columns S */
        fit_mat_rows(m, S[a], 1, XS + (size_t)a * n, NULL, NULL);
        for (uint32_t j = 0; j < n; j++)
            RS[(size_t)j * k + a] = XS[(size_t)a * n + j];
        for (uint32_t b = 0; b < k; b++)
            Css[a * k + b] = XS[(size_t)a * n + S[b]];
    }
    free(XS);
    return JSMF_OK;
}

fit_part fit_mat_part(const fit_mat *m)
{
    return m->ops->part ? m->ops->part(m) : fit_part_whole(m->n);
}

int fit_mat_gather(fit_mat *m)
{
    return m->ops->gather ? m->ops->gather(m) : JSMF_OK;
}

/* With H = W^T W = E D E^T, v_i = H^1/2 G w_i * scale / c_i gives <v_i, v_j> = <Ybar_i, Ybar_j>
 * for the unclipped Y = W G W^T (scaled). */
double *fit_factor_space(const fit_part *L, uint32_t r, const double *W, const double *WG,
                         double scale, const double *c)
{
    uint32_t nl = L->r1 - L->r0;
    double *H = malloc(sizeof(double) * r * r), *w = malloc(sizeof(double) * r);
    double *Hh = calloc((size_t)r * r, sizeof(double)), *V = malloc(sizeof(double) * nl * r + 1);
    int rc = !H || !w || !Hh || !V ? jsmf_error(JSMF_ENOMEM, "fit: out of memory") : JSMF_OK;
    rc = fit_part_agree(L, rc);
    if (rc || fit_gemm_tn_part(L, r, r, W, W, H)) {
        free(H), free(w), free(Hh), free(V);
        return NULL;
    }
    fit_syev(r, H, w);
    for (uint32_t a = 0; a < r; a++)
        for (uint32_t b = 0; b < r; b++) {
            double s = 0;
            for (uint32_t e = 0; e < r; e++)
                s += H[a * r + e] * sqrt(fmax(w[e], 0)) * H[b * r + e];
            Hh[a * r + b] = s;
        }
    /* V = WG Hh (Hh symmetric), then per-row scale / c_i */
    fit_gemm_nn(nl, r, r, WG, Hh, V);
    for (uint32_t i = 0; i < nl; i++) {
        double ci = c[L->r0 + i], f = ci > 0 ? scale / ci : 0;
        for (uint32_t a = 0; a < r; a++)
            V[(size_t)i * r + a] *= f;
    }
    free(H), free(w), free(Hh);
    return V;
}
