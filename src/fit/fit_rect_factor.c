/* fit_rect_factor.c — R as AP's streamed iterate, scale * max(W diag(g) W^T, 0): each row block
 * generated with one GEMM and consumed at once, never N x N unless it fits (then made dense);
 * the anchors may read it in its exact K+1-dimensional factor space. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "core/threads.h"
#include "fit_internal.h"

static void factor_free(void *state)
{
    fit_factor *f = state;
    if (f)
        free(f->W), free(f->WG), free(f->g);
    free(f);
}

static void factor_rows(const fit_mat *R, uint32_t r0, uint32_t nb, double *out, uint64_t *nneg,
                        double *negmass)
{
    const fit_factor *f = R->state;
    size_t n = R->n;
    uint64_t cnt = 0;
    double mass = 0;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nb, n, f->r, 1.0,
                f->WG + (size_t)r0 * f->r, f->r, f->W, f->r, 0.0, out, n);
    double sc = f->scale;
    for (size_t e = 0; e < (size_t)nb * n; e++) {
        double v = out[e];
        if (v < 0) {
            cnt++;
            mass -= v;
            out[e] = 0;
        } else {
            out[e] = v * sc;
        }
    }
    *nneg = cnt, *negmass = mass;
}

/* The steps' product: X = Y + E with Y = WG W^T and E = max(-Y, 0) the clip correction, so
 * X V = WG (W^T V) + E V. The first term is exact in factor space (double). E is found block by
 * block from Y generated in float32 (the GEMM that dominates the AP path, twice as fast): its
 * entries are small and only their float rounding (~1e-7 of |Y|) reaches the product, far below
 * the eigensolver's tolerance; it is applied sparsely while few entries are clipped, as one float
 * GEMM on the clipped block otherwise. */
typedef struct {
    const fit_mat *m;
    uint32_t p;
    const double *V, *WtV;
    const float *Wf, *WGf, *Vf;
    double *Z;
    float **buf, **zbuf;
    uint64_t *cnt;
    double *mass;
} fac_ctx;

static void fac_block(fac_ctx *a, uint32_t blk, uint32_t r0, uint32_t nb, int tid)
{
    const fit_factor *f = a->m->state;
    size_t n = a->m->n;
    uint32_t p = a->p, r = f->r;
    float *Y = a->buf[tid];
    double *Zb = a->Z + (size_t)r0 * p;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nb, n, r, 1.0f, a->WGf + (size_t)r0 * r,
                r, a->Wf, r, 0.0f, Y, n);
    uint64_t c = 0;
    double mass = 0;
    for (size_t e = 0; e < (size_t)nb * n; e++)
        if (Y[e] < 0)
            c++, mass -= Y[e];
    a->cnt[blk] = c, a->mass[blk] = mass;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nb, p, r, 1.0, f->WG + (size_t)r0 * r,
                r, a->WtV, p, 0.0, Zb, p);
    if (c * 8 > (uint64_t)nb * n) { /* many clipped: one GEMM on the correction block */
        float *zf = a->zbuf[tid];
        for (size_t e = 0; e < (size_t)nb * n; e++)
            Y[e] = Y[e] < 0 ? -Y[e] : 0;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nb, p, n, 1.0f, Y, n, a->Vf, p,
                    0.0f, zf, p);
        for (size_t e = 0; e < (size_t)nb * p; e++)
            Zb[e] += zf[e];
        return;
    }
    for (uint32_t i = 0; i < nb; i++) {
        const float *y = Y + (size_t)i * n;
        double *z = Zb + (size_t)i * p;
        for (size_t j = 0; j < n; j++)
            if (y[j] < 0)
                cblas_daxpy(p, -(double)y[j], a->V + j * p, 1, z, 1);
    }
}

static float *to_float(const double *x, size_t len)
{
    float *f = malloc(sizeof(float) * (len ? len : 1));
    for (size_t e = 0; f && e < len; e++)
        f[e] = (float)x[e];
    return f;
}

static int step_apply(const fit_mat *m, const double *V, uint32_t p, double *Z, uint64_t *nneg,
                      double *negmass)
{
    const fit_factor *f = m->state;
    uint32_t n = m->n, b = m->block ? m->block : 64, nblk = (n + b - 1) / b;
    int nt = m->threads > 0 ? m->threads : call_threads();
    float *Wf = to_float(f->W, (size_t)n * f->r), *WGf = to_float(f->WG, (size_t)n * f->r);
    float *Vf = to_float(V, (size_t)n * p);
    fac_ctx a = {m, p, V, NULL, Wf, WGf, Vf, Z, calloc(nt, sizeof(float *)),
                 calloc(nt, sizeof(float *)), calloc(nblk, sizeof(uint64_t)),
                 calloc(nblk, sizeof(double))};
    double *WtV = malloc(sizeof(double) * f->r * p);
    int fail = !a.buf || !a.zbuf || !a.cnt || !a.mass || !WtV || !Wf || !WGf || !Vf;
    for (int t = 0; t < nt && !fail; t++)
        fail = !(a.buf[t] = malloc(sizeof(float) * (size_t)b * n)) ||
               !(a.zbuf[t] = malloc(sizeof(float) * (size_t)b * p));
    if (!fail) {
        fit_gemm_tn(n, f->r, p, f->W, V, WtV);
        a.WtV = WtV;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
        for (uint32_t blk = 0; blk < nblk; blk++) {
            uint32_t r0 = blk * b, nb = n - r0 < b ? n - r0 : b;
            fac_block(&a, blk, r0, nb, omp_get_thread_num());
        }
        uint64_t c = 0;
        double s = 0;
        for (uint32_t blk = 0; blk < nblk; blk++)
            c += a.cnt[blk], s += a.mass[blk];
        if (nneg)
            *nneg = c;
        if (negmass)
            *negmass = s;
    }
    for (int t = 0; t < nt && a.buf; t++)
        free(a.buf[t]), free(a.zbuf[t]);
    free(a.buf), free(a.zbuf), free(a.cnt), free(a.mass), free(WtV), free(Wf), free(WGf),
        free(Vf);
    return fail ? jsmf_error(JSMF_ENOMEM, "fit: out of memory for %u-row blocks of %u words", b, n)
                : JSMF_OK;
}

/* The steps' iterate (scale 1) by the float product above; the scaled one, as the later steps
 * read it, by its exact rows. */
static int factor_apply(const fit_mat *m, const double *V, uint32_t p, double *Z, uint64_t *nneg,
                        double *negmass)
{
    const fit_factor *f = m->state;
    if (f->scale == 1.0)
        return step_apply(m, V, p, Z, nneg, negmass);
    return fit_mat_apply_rows(m, V, p, Z, nneg, negmass);
}

/* The pass that clipped the final iterate counts, and its clipping is the final one. */
static void note_final_clip(jsmf_fit_report *rep, uint32_t n, uint64_t nneg, double negmass)
{
    if (!rep)
        return;
    rep->passes++;
    rep->final_neg_frac = (double)nneg / ((double)n * n);
    rep->final_neg_mass = negmass;
    if (rep->n_trace) {
        rep->trace[rep->n_trace - 1].neg_frac = rep->final_neg_frac;
        rep->trace[rep->n_trace - 1].neg_mass = negmass;
    }
}

/* Alg. 1 line 9: the clipped iterate normalised to sum 1, with the exact sum of its clipped
 * entries: made dense by one generated pass when N x N takes at most half of the budget (the
 * anchors, sums and products then read memory), else by its scale. */
static int factor_finish(fit_mat *R, double *c, double *q2, jsmf_fit_report *rep)
{
    fit_factor *f = R->state;
    uint32_t n = R->n;
    uint64_t nneg = 0;
    double negmass = 0;
    int dense = (uint64_t)n * n * sizeof(double) <= f->mem / 2;
    if (dense && fit_rect_dense_adopt(R, &nneg, &negmass)) {
        jsmf_error_clear(); /* no room after all: it stays factored */
        dense = 0;
    }
    int rc = fit_mat_sums_rows(R, c, q2, dense ? NULL : &nneg, dense ? NULL : &negmass);
    if (rc)
        return rc;
    if (!dense)
        note_final_clip(rep, n, nneg, negmass);
    double tot = fit_sum_ordered(c, n);
    if (!(tot > 0))
        return jsmf_error(JSMF_ENUMERIC, "fit: rectified C sums to %g", tot);
    if (dense)
        fit_rect_dense_divide(R, tot);
    else
        f->scale = 1.0 / tot;
    for (uint32_t i = 0; i < n; i++)
        c[i] /= tot, q2[i] /= tot * tot;
    if (dense)
        note_final_clip(rep, n, nneg, negmass);
    return JSMF_OK;
}

/* The exact rows lazily for a method that reads a row at a time; else the factor space of the
 * unclipped iterate (exact where nothing is clipped). */
static int factor_anchor_space(fit_mat *R, const double *c, int exact, int row_at_a_time,
                               fit_anchor_space *sp)
{
    const fit_factor *f = R->state;
    sp->part = fit_part_whole(R->n);
    if (exact && row_at_a_time) {
        sp->d = R->n;
        return JSMF_OK;
    }
    if (!(sp->owned = fit_factor_space(&sp->part, f->r, f->W, f->WG, f->scale, c)))
        return jsmf_error(JSMF_ENOMEM, "fit: out of memory finding anchors");
    sp->M = sp->owned, sp->d = f->r, sp->unit = 1;
    return JSMF_OK;
}

static const fit_mat_ops factor_ops = {
    .rows = factor_rows,
    .apply = factor_apply,
    .finish = factor_finish,
    .anchor_space = factor_anchor_space,
    .free = factor_free,
    .product_passes = 1,
};

int fit_rect_factor(fit_mat *R, uint32_t n, uint32_t r, uint64_t mem, fit_factor **out)
{
    fit_factor *f = calloc(1, sizeof *f);
    memset(R, 0, sizeof *R);
    *out = NULL;
    if (f) {
        f->r = r, f->scale = 1.0, f->mem = mem;
        f->W = malloc(sizeof(double) * n * r);
        f->WG = malloc(sizeof(double) * n * r);
        f->g = malloc(sizeof(double) * r);
    }
    if (!f || !f->W || !f->WG || !f->g) {
        factor_free(f);
        return jsmf_error(JSMF_ENOMEM, "fit: out of memory for the factored iterate (N=%u)", n);
    }
    R->ops = &factor_ops, R->state = f, R->n = n;
    *out = f;
    return JSMF_OK;
}
