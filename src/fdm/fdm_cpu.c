/* fdm_cpu.c — the CPU back end of FDM: softmax parameters, the batch loss and its analytic
 * gradient (gather, one GEMM with alpha, scatter), Adam; OpenMP + OpenBLAS, in double.
 * Reductions go through fixed row blocks summed in order, so results do not depend on how
 * OpenMP splits the loops. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdm_internal.h"

#define ROW_BLOCK 256
/* Below this many elements a loop runs on one thread: a parallel region costs more than the
 * work (and much more on a loaded machine, where a barrier waits for a descheduled thread). */
#define PAR_MIN 65536

typedef struct fdm_cpu {
    uint32_t n, k, bmax;
    const fdm_setup *setup; /* NULL for a one-off gradient */
    fdm_state *st;
    double *mu;      /* N x K: column t = mu_t */
    double *alpha;   /* K x K */
    double *G;       /* N x K: dL/dmu, kept zero between steps */
    double *Ga;      /* K x K: dL/dalpha */
    double *XY;      /* 2B x K: gathered mu rows of u then v (X scaled by w later) */
    double *PQ;      /* 2B x K: X alpha, Y alpha */
    double *wgt;     /* B: -1 / (B M_i) */
    double *part;    /* blocks x K partial column reductions */
    double *colmax, *colsum; /* K */
    uint32_t *u, *v; /* B */
    int fresh;       /* mu/alpha match the state */
} fdm_cpu;

static uint32_t nblocks(uint32_t n)
{
    return (n + ROW_BLOCK - 1) / ROW_BLOCK;
}

static void cpu_free(fdm_cpu *c)
{
    if (!c)
        return;
    free(c->mu), free(c->alpha), free(c->G), free(c->Ga), free(c->XY), free(c->PQ);
    free(c->wgt), free(c->part), free(c->colmax), free(c->colsum), free(c->u), free(c->v);
    free(c);
}

static fdm_cpu *cpu_alloc(uint32_t n, uint32_t k, uint32_t bmax)
{
    fdm_cpu *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    size_t nk = (size_t)n * k, kk = (size_t)k * k;
    c->n = n, c->k = k, c->bmax = bmax;
    c->mu = malloc(nk * sizeof(double));
    c->alpha = malloc(kk * sizeof(double));
    c->G = calloc(nk, sizeof(double));
    c->Ga = malloc(kk * sizeof(double));
    c->XY = malloc(2 * (size_t)bmax * k * sizeof(double));
    c->PQ = malloc(2 * (size_t)bmax * k * sizeof(double));
    c->wgt = malloc((size_t)bmax * sizeof(double));
    c->part = malloc((size_t)nblocks(n) * k * sizeof(double));
    c->colmax = malloc(k * sizeof(double));
    c->colsum = malloc(k * sizeof(double));
    c->u = malloc((size_t)bmax * sizeof(uint32_t));
    c->v = malloc((size_t)bmax * sizeof(uint32_t));
    if (!c->mu || !c->alpha || !c->G || !c->Ga || !c->XY || !c->PQ || !c->wgt || !c->part ||
        !c->colmax || !c->colsum || !c->u || !c->v) {
        cpu_free(c);
        return NULL;
    }
    return c;
}

/* Sum the per-block partials (blocks x K) in block order into out (K). */
static void reduce_blocks(const double *part, uint32_t nb, uint32_t k, double *out)
{
    for (uint32_t t = 0; t < k; t++)
        out[t] = 0;
    for (uint32_t b = 0; b < nb; b++)
        for (uint32_t t = 0; t < k; t++)
            out[t] += part[(size_t)b * k + t];
}

/* mu = column-wise softmax of w (N x K); alpha = softmax of (a + a^T)/2 over all entries. */
static void cpu_params(fdm_cpu *c, const double *w, const double *a)
{
    uint32_t n = c->n, k = c->k, nb = nblocks(n);
    for (uint32_t t = 0; t < k; t++)
        c->colmax[t] = -INFINITY;
    for (uint32_t l = 0; l < n; l++) /* max is exact in any order; one pass over N x K */
        for (uint32_t t = 0; t < k; t++)
            if (w[(size_t)l * k + t] > c->colmax[t])
                c->colmax[t] = w[(size_t)l * k + t];
#pragma omp parallel for schedule(static) if ((size_t)n * k >= PAR_MIN)
    for (uint32_t b = 0; b < nb; b++) {
        double *p = c->part + (size_t)b * k;
        for (uint32_t t = 0; t < k; t++)
            p[t] = 0;
        uint32_t end = (b + 1) * ROW_BLOCK < n ? (b + 1) * ROW_BLOCK : n;
        for (uint32_t l = b * ROW_BLOCK; l < end; l++)
            for (uint32_t t = 0; t < k; t++) {
                double e = exp(w[(size_t)l * k + t] - c->colmax[t]);
                c->mu[(size_t)l * k + t] = e;
                p[t] += e;
            }
    }
    reduce_blocks(c->part, nb, k, c->colsum);
    for (uint32_t t = 0; t < k; t++)
        c->colsum[t] = 1.0 / c->colsum[t];
#pragma omp parallel for schedule(static) if ((size_t)n * k >= PAR_MIN)
    for (uint32_t l = 0; l < n; l++)
        for (uint32_t t = 0; t < k; t++)
            c->mu[(size_t)l * k + t] *= c->colsum[t];

    double amax = -INFINITY, asum = 0;
    for (uint32_t i = 0; i < k; i++)
        for (uint32_t j = 0; j < k; j++) {
            double s = 0.5 * (a[(size_t)i * k + j] + a[(size_t)j * k + i]);
            c->alpha[(size_t)i * k + j] = s;
            if (s > amax)
                amax = s;
        }
    for (size_t e = 0; e < (size_t)k * k; e++) {
        c->alpha[e] = exp(c->alpha[e] - amax);
        asum += c->alpha[e];
    }
    for (size_t e = 0; e < (size_t)k * k; e++)
        c->alpha[e] /= asum;
    c->fresh = 1;
}

/* Loss of a batch; with `grad`, also G (dL/dmu, accumulated into the zero matrix) and Ga. */
static int cpu_batch(fdm_cpu *c, const uint32_t *u, const uint32_t *v, uint32_t cnt, double *loss,
                     int grad)
{
    uint32_t k = c->k;
    double *X = c->XY, *Y = c->XY + (size_t)cnt * k, *P = c->PQ, *Q = c->PQ + (size_t)cnt * k;
    int par = (size_t)cnt * k >= PAR_MIN;
#pragma omp parallel for schedule(static) if (par)
    for (uint32_t i = 0; i < cnt; i++) {
        memcpy(X + (size_t)i * k, c->mu + (size_t)u[i] * k, k * sizeof(double));
        memcpy(Y + (size_t)i * k, c->mu + (size_t)v[i] * k, k * sizeof(double));
    }
    /* [P; Q] = [X; Y] alpha (alpha is symmetric, so this is also Y alpha^T for dL/dX). */
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)(2 * cnt), (int)k, (int)k, 1.0,
                c->XY, (int)k, c->alpha, (int)k, 0.0, c->PQ, (int)k);
    int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad) if (par)
    for (uint32_t i = 0; i < cnt; i++) {
        double m = cblas_ddot((int)k, P + (size_t)i * k, 1, Y + (size_t)i * k, 1);
        if (!(m > 0))
            bad = 1;
        c->wgt[i] = m;
    }
    if (bad)
        return jsmf_error(JSMF_ENUMERIC, "FDM: a pair got probability 0 or NaN (diverged; "
                          "try a smaller --lr)");
    double sum = 0; /* in order: the loss does not depend on the thread count */
    for (uint32_t i = 0; i < cnt; i++) {
        sum -= log(c->wgt[i]);
        c->wgt[i] = -1.0 / ((double)cnt * c->wgt[i]);
    }
    *loss = sum / cnt;
    if (!grad)
        return 0;
    /* dL/dalpha = sum_i w_i X_i^T Y_i: scale X's rows by w, then one GEMM. */
#pragma omp parallel for schedule(static) if (par)
    for (uint32_t i = 0; i < cnt; i++)
        cblas_dscal((int)k, c->wgt[i], X + (size_t)i * k, 1);
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)k, (int)k, (int)cnt, 1.0, X, (int)k,
                Y, (int)k, 0.0, c->Ga, (int)k);
    /* dL/dmu rows: u_i gets w_i Q_i, v_i gets w_i P_i. Threads own columns, pairs in order, so
     * repeated words are summed in the same order whatever the thread count. */
    uint32_t chunk = 16, nchunks = (k + chunk - 1) / chunk;
#pragma omp parallel for schedule(static) if (par)
    for (uint32_t ch = 0; ch < nchunks; ch++) {
        uint32_t t0 = ch * chunk, t1 = t0 + chunk < k ? t0 + chunk : k;
        for (uint32_t i = 0; i < cnt; i++) {
            double wi = c->wgt[i];
            double *gu = c->G + (size_t)u[i] * k, *gv = c->G + (size_t)v[i] * k;
            const double *q = Q + (size_t)i * k, *p = P + (size_t)i * k;
            for (uint32_t t = t0; t < t1; t++)
                gu[t] += wi * q[t];
            for (uint32_t t = t0; t < t1; t++)
                gv[t] += wi * p[t];
        }
    }
    return 0;
}

/* s_t = sum_l G(l,t) mu(l,t), so that dL/dw(l,t) = mu(l,t) (G(l,t) - s_t). */
static void cpu_softmax_dots(fdm_cpu *c)
{
    uint32_t n = c->n, k = c->k, nb = nblocks(n);
#pragma omp parallel for schedule(static) if ((size_t)n * k >= PAR_MIN)
    for (uint32_t b = 0; b < nb; b++) {
        double *p = c->part + (size_t)b * k;
        for (uint32_t t = 0; t < k; t++)
            p[t] = 0;
        uint32_t end = (b + 1) * ROW_BLOCK < n ? (b + 1) * ROW_BLOCK : n;
        for (uint32_t l = b * ROW_BLOCK; l < end; l++)
            for (uint32_t t = 0; t < k; t++)
                p[t] += c->G[(size_t)l * k + t] * c->mu[(size_t)l * k + t];
    }
    reduce_blocks(c->part, nb, k, c->colsum); /* colsum reused as s_t */
}

/* dL/d(alpha logits) from Ga into ga (K x K): softmax over all entries, then symmetrisation. */
static void cpu_alpha_logit_grad(const fdm_cpu *c, double *ga)
{
    uint32_t k = c->k;
    double dot = 0;
    for (size_t e = 0; e < (size_t)k * k; e++)
        dot += c->Ga[e] * c->alpha[e];
    for (uint32_t i = 0; i < k; i++)
        for (uint32_t j = 0; j < k; j++) {
            size_t ij = (size_t)i * k + j, ji = (size_t)j * k + i;
            ga[ij] = 0.5 * (c->alpha[ij] * (c->Ga[ij] - dot) + c->alpha[ji] * (c->Ga[ji] - dot));
        }
}

static inline void adam(double *w, double *m, double *v, double g, double b1, double b2,
                        double lr, double c1, double c2, double eps)
{
    *m = b1 * *m + (1 - b1) * g;
    *v = b2 * *v + (1 - b2) * g * g;
    *w -= lr * (*m * c1) / (sqrt(*v * c2) + eps);
}

static int cpu_train_step(void *ctx, uint64_t step, double *loss)
{
    fdm_cpu *c = ctx;
    const fdm_setup *s = c->setup;
    fdm_state *st = c->st;
    uint32_t n = c->n, k = c->k;
    jsmf_fdm_sampler_draw(s->sampler, s->seed, step, 0, s->batch, c->u, c->v);
    if (!c->fresh)
        cpu_params(c, st->w, st->a);
    int rc = cpu_batch(c, c->u, c->v, s->batch, loss, 1);
    if (rc)
        return rc;
    cpu_softmax_dots(c);
    double b1 = s->beta1, b2 = s->beta2, lr = s->lr, eps = s->eps;
    double c1 = 1.0 / (1.0 - pow(b1, (double)step)), c2 = 1.0 / (1.0 - pow(b2, (double)step));
#pragma omp parallel for schedule(static) if ((size_t)n * k >= PAR_MIN)
    for (uint32_t l = 0; l < n; l++)
        for (uint32_t t = 0; t < k; t++) {
            size_t e = (size_t)l * k + t;
            double g = c->mu[e] * (c->G[e] - c->colsum[t]);
            c->G[e] = 0;
            adam(st->w + e, st->mw + e, st->vw + e, g, b1, b2, lr, c1, c2, eps);
        }
    double *ga = c->PQ; /* free now; holds K x K (2B >= K is not guaranteed: see create) */
    cpu_alpha_logit_grad(c, ga);
    for (size_t e = 0; e < (size_t)k * k; e++)
        adam(st->a + e, st->ma + e, st->va + e, ga[e], b1, b2, lr, c1, c2, eps);
    c->fresh = 0;
    return 0;
}

static int cpu_heldout_loss(void *ctx, double *loss)
{
    fdm_cpu *c = ctx;
    const fdm_setup *s = c->setup;
    if (!c->fresh)
        cpu_params(c, c->st->w, c->st->a);
    double total = 0;
    for (uint32_t off = 0; off < s->nheld; off += c->bmax) {
        uint32_t cnt = s->nheld - off < c->bmax ? s->nheld - off : c->bmax;
        double l;
        int rc = cpu_batch(c, s->hu + off, s->hv + off, cnt, &l, 0);
        if (rc)
            return rc;
        total += l * cnt;
    }
    *loss = s->nheld ? total / s->nheld : NAN;
    return 0;
}

static int cpu_sync(void *ctx)
{
    (void)ctx;
    return 0;
}

static void cpu_destroy(void *ctx)
{
    cpu_free(ctx);
}

int fdm_cpu_backend_create(const fdm_setup *setup, fdm_state *st, fdm_backend *out)
{
    /* PQ doubles as the K x K scratch of the alpha gradient, so it needs 2B >= K rows. */
    uint32_t bmax = setup->batch > (setup->k + 1) / 2 ? setup->batch : (setup->k + 1) / 2;
    fdm_cpu *c = cpu_alloc(setup->n, setup->k, bmax);
    if (!c)
        return jsmf_error(JSMF_ENOMEM, "out of memory for the FDM CPU back end (N = %u, K = %u)",
                          setup->n, setup->k);
    c->setup = setup;
    c->st = st;
    memset(out, 0, sizeof *out);
    out->ctx = c;
    out->train_step = cpu_train_step;
    out->heldout_loss = cpu_heldout_loss;
    out->sync = cpu_sync;
    out->destroy = cpu_destroy;
    snprintf(out->name, sizeof out->name, "cpu");
    return 0;
}

int jsmf_fdm_loss_grad_cpu(uint32_t n, uint32_t k, const double *wmu, const double *walpha,
                           const uint32_t *u, const uint32_t *v, uint32_t count, double *loss,
                           double *gmu, double *galpha)
{
    if (!n || !k || !count)
        return jsmf_error(JSMF_EINVAL, "empty batch or model");
    for (uint32_t i = 0; i < count; i++)
        if (u[i] >= n || v[i] >= n)
            return jsmf_error(JSMF_EINVAL, "pair %u: word out of range", i);
    fdm_cpu *c = cpu_alloc(n, k, count);
    if (!c)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    cpu_params(c, wmu, walpha);
    int grad = gmu || galpha;
    int rc = cpu_batch(c, u, v, count, loss, grad);
    if (!rc && grad) {
        cpu_softmax_dots(c);
        if (gmu)
            for (size_t l = 0; l < n; l++)
                for (uint32_t t = 0; t < k; t++) {
                    size_t e = l * k + t;
                    gmu[e] = c->mu[e] * (c->G[e] - c->colsum[t]);
                }
        if (galpha)
            cpu_alpha_logit_grad(c, galpha);
    }
    cpu_free(c);
    return rc;
}

int fdm_cpu_softmax(uint32_t n, uint32_t k, const double *w, const double *a, double *mu,
                    double *alpha)
{
    fdm_cpu *c = cpu_alloc(n, k, 1);
    if (!c)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    cpu_params(c, w, a);
    memcpy(mu, c->mu, (size_t)n * k * sizeof(double));
    memcpy(alpha, c->alpha, (size_t)k * k * sizeof(double));
    cpu_free(c);
    return 0;
}
