/* fit_mat.c — the rectified matrix seen by row blocks: dense (in memory), factored
 * (scale * max(W diag(g) W^T, 0), each block generated with one GEMM and consumed at once) or
 * sparse (CSR). Passes run blocks in parallel; every per-block result lands in its own slot. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "core/threads.h"
#include "fit_internal.h"

void fit_mat_free(fit_mat *m)
{
    free(m->X), free(m->W), free(m->WG), free(m->g);
    free(m->rowptr), free(m->cols), free(m->vals);
    fit_lowrank_free(m->lr);
    fit_csrc_close(m->src);
    memset(m, 0, sizeof *m);
}

void fit_mat_rows(const fit_mat *m, uint32_t r0, uint32_t nb, double *out, uint64_t *nneg,
                  double *negmass)
{
    size_t n = m->n;
    uint64_t cnt = 0;
    double mass = 0;
    if (m->kind == FIT_DENSE) {
        memcpy(out, m->X + (size_t)r0 * n, sizeof(double) * nb * n);
    } else if (m->kind == FIT_LOWRANK) {
        fit_lowrank_rows(m->lr, r0, nb, out);
    } else if (m->kind == FIT_SPARSE) {
        memset(out, 0, sizeof(double) * nb * n);
        for (uint32_t i = 0; i < nb; i++)
            for (uint64_t e = m->rowptr[r0 + i]; e < m->rowptr[r0 + i + 1]; e++)
                out[i * n + m->cols[e]] = m->vals[e];
    } else {
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nb, n, m->r, 1.0,
                    m->WG + (size_t)r0 * m->r, m->r, m->W, m->r, 0.0, out, n);
        double sc = m->scale;
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
    }
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
    double **buf = calloc(nt, sizeof *buf);
    uint64_t *cnt = calloc(nblk, sizeof *cnt);
    double *mass = calloc(nblk, sizeof *mass);
    int fail = !buf || !cnt || !mass;
    for (int t = 0; t < nt && !fail && m->kind != FIT_DENSE; t++)
        fail = !(buf[t] = malloc(sizeof(double) * (size_t)b * n));
    if (!fail) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
        for (uint32_t blk = 0; blk < nblk; blk++) {
            int tid = omp_get_thread_num();
            uint32_t r0 = blk * b, nb = n - r0 < b ? n - r0 : b;
            const double *rows;
            if (m->kind == FIT_DENSE) {
                rows = m->X + (size_t)r0 * n;
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

int fit_mat_densify(fit_mat *m, uint64_t mem, uint64_t *nneg, double *negmass)
{
    size_t n = m->n;
    if (m->kind != FIT_FACTOR || (uint64_t)n * n * sizeof(double) > mem / 2)
        return 0;
    double *X = malloc(sizeof(double) * n * n);
    uint32_t b = m->block ? m->block : 64, nblk = (uint32_t)((n + b - 1) / b);
    uint64_t *cnt = calloc(nblk, sizeof *cnt);
    double *mass = calloc(nblk, sizeof *mass);
    if (!X || !cnt || !mass) {
        free(X), free(cnt), free(mass);
        return 0;
    }
#pragma omp parallel for schedule(dynamic, 1) num_threads(m->threads > 0 ? m->threads : call_threads())
    for (uint32_t blk = 0; blk < nblk; blk++) {
        uint32_t r0 = blk * b, nb = (uint32_t)(n - r0 < b ? n - r0 : b);
        fit_mat_rows(m, r0, nb, X + (size_t)r0 * n, &cnt[blk], &mass[blk]);
    }
    *nneg = 0, *negmass = 0;
    for (uint32_t blk = 0; blk < nblk; blk++)
        *nneg += cnt[blk], *negmass += mass[blk];
    free(cnt), free(mass);
    free(m->W), free(m->WG), free(m->g);
    m->W = m->WG = m->g = NULL;
    m->X = X, m->kind = FIT_DENSE, m->scale = 1.0;
    return 1;
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

/* Factored apply: X = Y + E with Y = WG W^T and E = max(-Y, 0) the clip correction, so
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
    const fit_mat *m = a->m;
    size_t n = m->n;
    uint32_t p = a->p, r = m->r;
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
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nb, p, r, 1.0, m->WG + (size_t)r0 * r,
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

static int factor_apply(const fit_mat *m, const double *V, uint32_t p, double *Z, uint64_t *nneg,
                        double *negmass)
{
    uint32_t n = m->n, b = m->block ? m->block : 64, nblk = (n + b - 1) / b;
    int nt = m->threads > 0 ? m->threads : call_threads();
    float *Wf = to_float(m->W, (size_t)n * m->r), *WGf = to_float(m->WG, (size_t)n * m->r);
    float *Vf = to_float(V, (size_t)n * p);
    fac_ctx a = {m, p, V, NULL, Wf, WGf, Vf, Z, calloc(nt, sizeof(float *)),
                 calloc(nt, sizeof(float *)), calloc(nblk, sizeof(uint64_t)),
                 calloc(nblk, sizeof(double))};
    double *WtV = malloc(sizeof(double) * m->r * p);
    int fail = !a.buf || !a.zbuf || !a.cnt || !a.mass || !WtV || !Wf || !WGf || !Vf;
    for (int t = 0; t < nt && !fail; t++)
        fail = !(a.buf[t] = malloc(sizeof(float) * (size_t)b * n)) ||
               !(a.zbuf[t] = malloc(sizeof(float) * (size_t)b * p));
    if (!fail) {
        fit_gemm_tn(n, m->r, p, m->W, V, WtV);
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

int fit_mat_apply(const fit_mat *m, const double *V, uint32_t p, double *Z, uint64_t *nneg,
                  double *negmass)
{
    if (m->kind == FIT_FACTOR && m->scale == 1.0)
        return factor_apply(m, V, p, Z, nneg, negmass);
    if (m->kind == FIT_LOWRANK) {
        if (nneg)
            *nneg = 0;
        if (negmass)
            *negmass = 0;
        return fit_lowrank_apply(m->lr, V, p, Z);
    }
    if (m->kind == FIT_SPARSE) {
#pragma omp parallel for schedule(dynamic, 256) num_threads(m->threads > 0 ? m->threads : call_threads())
        for (uint32_t i = 0; i < m->n; i++) {
            double *z = Z + (size_t)i * p;
            memset(z, 0, sizeof(double) * p);
            for (uint64_t e = m->rowptr[i]; e < m->rowptr[i + 1]; e++)
                cblas_daxpy(p, m->vals[e], V + (size_t)m->cols[e] * p, 1, z, 1);
        }
        if (nneg)
            *nneg = 0;
        if (negmass)
            *negmass = 0;
        return JSMF_OK;
    }
    apply_ctx a = {m->n, p, V, Z};
    return fit_mat_pass(m, apply_block, &a, nneg, negmass);
}
