/* fdm_cpu.c — the CPU back end of FDM (OpenMP + OpenBLAS, double): the batch loss and its
 * analytic gradient, and an Adam step fused into two passes over the N x K parameters.
 *
 * Why it is shaped so:
 *  - dL/dmu is non-zero only on the rows of the batch's words, so it is kept for those rows
 *    alone (at most 2B of N); the dense part of the logit gradient, -mu s_t, is formed inside
 *    the Adam pass. A step reads the N x K arrays twice (Adam + column max, then exp + column
 *    sums) instead of five times.
 *  - mu is kept as e = exp(w - colmax) with the column scale 1/sum(e) applied where mu is read,
 *    so no pass normalises it.
 *  - The batch is cut into fixed blocks of pairs, each gathered, multiplied and reduced by one
 *    thread, and the partial sums of fixed row blocks are added in block order: the results do
 *    not depend on the thread count (except dL/dalpha for K above ~250: one GEMM over the batch,
 *    in OpenBLAS's threads and order), and a run resumed from the state equals the uninterrupted
 *    one. Each parallel loop uses only as many threads as its work pays for, so small models do
 *    not lose to thread start-up (16 threads at K = 6 ran at half the speed of 2). */
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdm_internal.h"

#define ROW_BLOCK 256   /* rows of the N x K arrays a partial sum covers */
#define PAIR_BLOCK 256  /* pairs one thread gathers and multiplies at a time */
/* Work (multiply-adds or element updates) below which one more thread costs more than it
 * saves: a parallel region's barrier is some microseconds, more on a loaded machine. */
#define WORK_PER_THREAD 262144
/* Per-block partials of dL/dalpha while they take at most this many doubles (small K);
 * beyond it one GEMM over the whole batch. */
#define GA_PARTIAL_MAX (1u << 20)

typedef struct fdm_cpu {
    uint32_t n, k, bmax;
    const fdm_setup *setup; /* NULL for a one-off gradient */
    fdm_state *st;
    double *e;       /* N x K: exp(w - colmax); mu = e * inv */
    double *inv;     /* K: 1 / column sums of e */
    double *colmax;  /* K: column maxima of w */
    double *alpha;   /* K x K */
    double *Ga;      /* K x K: dL/dalpha */
    double *ga;      /* K x K: dL/d(alpha logits) */
    double *XY;      /* X (mu rows of the u's, cnt x K) then Y (of the v's) */
    double *PQ;      /* P = X alpha, then Q = Y alpha */
    double *wgt;     /* bmax: -1 / (B M_i) */
    double *bloss;   /* pair blocks: partial loss */
    double *bga;     /* pair blocks x K x K: partial dL/dalpha (small K only) */
    double *rpart;   /* row blocks x K: partial column maxima or sums */
    double *s;       /* K: s_t = sum_l G(l,t) mu(l,t) */
    int32_t *slot;   /* N: row of Gs holding dL/dmu of word l, -1 when the batch lacks it */
    uint32_t *rows;  /* 2 bmax: word of each row of Gs */
    double *Gs;      /* 2 bmax x K: dL/dmu of the batch's words */
    uint32_t nslots;
    uint32_t *u, *v; /* bmax */
    int threads;     /* at most this many: the run's count, not OpenMP's default */
} fdm_cpu;

static uint32_t div_up(uint64_t a, uint64_t b)
{
    return (uint32_t)((a + b - 1) / b);
}

/* Threads worth starting for `work` units split into `parts` independent pieces. */
static int threads_for(const fdm_cpu *c, uint64_t work, uint32_t parts)
{
    uint64_t t = work / WORK_PER_THREAD;
    int max = c->threads;
    if (t > (uint64_t)max)
        t = (uint64_t)max;
    if (t > parts)
        t = parts;
    return t < 1 ? 1 : (int)t;
}

static void cpu_free(fdm_cpu *c)
{
    if (!c)
        return;
    free(c->e), free(c->inv), free(c->colmax), free(c->alpha), free(c->Ga), free(c->ga);
    free(c->XY), free(c->PQ), free(c->wgt), free(c->bloss), free(c->bga), free(c->rpart);
    free(c->s), free(c->slot), free(c->rows), free(c->Gs), free(c->u), free(c->v);
    free(c);
}

static int ga_partials(uint32_t k, uint32_t bmax)
{
    return (uint64_t)div_up(bmax, PAIR_BLOCK) * k * k <= GA_PARTIAL_MAX;
}

uint64_t fdm_cpu_bytes(uint32_t n, uint32_t k, uint32_t bmax)
{
    uint64_t nk = (uint64_t)n * k, kk = (uint64_t)k * k, bk = (uint64_t)bmax * k;
    uint64_t pblocks = div_up(bmax, PAIR_BLOCK);
    uint64_t doubles = nk + 3 * (uint64_t)k + 3 * kk + 6 * bk + bmax + pblocks +
                       (ga_partials(k, bmax) ? pblocks * kk : 0) +
                       (uint64_t)div_up(n, ROW_BLOCK) * k;
    return 8 * doubles + 4 * (uint64_t)n + 4 * 4 * (uint64_t)bmax;
}

static fdm_cpu *cpu_alloc(uint32_t n, uint32_t k, uint32_t bmax, int threads)
{
    fdm_cpu *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->threads = threads > 0 ? threads : omp_get_max_threads();
    size_t nk = (size_t)n * k, kk = (size_t)k * k, bk = (size_t)bmax * k;
    uint32_t pblocks = div_up(bmax, PAIR_BLOCK);
    c->n = n, c->k = k, c->bmax = bmax;
    c->e = malloc(nk * sizeof(double));
    c->inv = malloc(k * sizeof(double));
    c->colmax = malloc(k * sizeof(double));
    c->alpha = malloc(kk * sizeof(double));
    c->Ga = malloc(kk * sizeof(double));
    c->ga = malloc(kk * sizeof(double));
    c->XY = malloc(2 * bk * sizeof(double));
    c->PQ = malloc(2 * bk * sizeof(double));
    c->wgt = malloc((size_t)bmax * sizeof(double));
    c->bloss = malloc((size_t)pblocks * sizeof(double));
    c->bga = ga_partials(k, bmax) ? malloc((size_t)pblocks * kk * sizeof(double)) : NULL;
    c->rpart = malloc((size_t)div_up(n, ROW_BLOCK) * k * sizeof(double));
    c->s = malloc(k * sizeof(double));
    c->slot = malloc((size_t)n * sizeof(int32_t));
    c->rows = malloc(2 * (size_t)bmax * sizeof(uint32_t));
    c->Gs = calloc(2 * bk, sizeof(double));
    c->u = malloc((size_t)bmax * sizeof(uint32_t));
    c->v = malloc((size_t)bmax * sizeof(uint32_t));
    if (!c->e || !c->inv || !c->colmax || !c->alpha || !c->Ga || !c->ga || !c->XY || !c->PQ ||
        !c->wgt || !c->bloss || (ga_partials(k, bmax) && !c->bga) || !c->rpart || !c->s ||
        !c->slot || !c->rows || !c->Gs || !c->u || !c->v) {
        cpu_free(c);
        return NULL;
    }
    for (uint32_t l = 0; l < n; l++)
        c->slot[l] = -1;
    return c;
}

/* ---- parameters: e, inv, colmax and alpha from the logits ---- */

/* colmax = the maxima of the nb row-block partials in rpart (exact in any order). */
static void combine_max(fdm_cpu *c, uint32_t nb)
{
    for (uint32_t t = 0; t < c->k; t++)
        c->colmax[t] = -INFINITY;
    for (uint32_t b = 0; b < nb; b++)
        for (uint32_t t = 0; t < c->k; t++)
            c->colmax[t] = fmax(c->colmax[t], c->rpart[(size_t)b * c->k + t]);
}

/* Column maxima of w. */
static void column_max(fdm_cpu *c, const double *w)
{
    uint32_t n = c->n, k = c->k, nb = div_up(n, ROW_BLOCK);
#pragma omp parallel for schedule(static) num_threads(threads_for(c, (uint64_t)n * k, nb))
    for (uint32_t b = 0; b < nb; b++) {
        double *p = c->rpart + (size_t)b * k;
        for (uint32_t t = 0; t < k; t++)
            p[t] = -INFINITY;
        uint32_t end = (b + 1) * ROW_BLOCK < n ? (b + 1) * ROW_BLOCK : n;
        for (uint32_t l = b * ROW_BLOCK; l < end; l++)
            for (uint32_t t = 0; t < k; t++)
                p[t] = fmax(p[t], w[(size_t)l * k + t]);
    }
    combine_max(c, nb);
}

/* e = exp(w - colmax) and inv = 1 / column sums, the sums taken by row blocks in order. */
static void exp_and_sums(fdm_cpu *c, const double *w)
{
    uint32_t n = c->n, k = c->k, nb = div_up(n, ROW_BLOCK);
#pragma omp parallel for schedule(static) num_threads(threads_for(c, (uint64_t)n * k * 8, nb))
    for (uint32_t b = 0; b < nb; b++) {
        double *p = c->rpart + (size_t)b * k;
        for (uint32_t t = 0; t < k; t++)
            p[t] = 0;
        uint32_t end = (b + 1) * ROW_BLOCK < n ? (b + 1) * ROW_BLOCK : n;
        for (uint32_t l = b * ROW_BLOCK; l < end; l++)
            for (uint32_t t = 0; t < k; t++) {
                double x = exp(w[(size_t)l * k + t] - c->colmax[t]);
                c->e[(size_t)l * k + t] = x;
                p[t] += x;
            }
    }
    for (uint32_t t = 0; t < k; t++)
        c->inv[t] = 0;
    for (uint32_t b = 0; b < nb; b++)
        for (uint32_t t = 0; t < k; t++)
            c->inv[t] += c->rpart[(size_t)b * k + t];
    for (uint32_t t = 0; t < k; t++)
        c->inv[t] = 1.0 / c->inv[t];
}

/* alpha = softmax of (a + a^T)/2 over all K x K entries. */
static void alpha_softmax(fdm_cpu *c, const double *a)
{
    uint32_t k = c->k;
    double amax = -INFINITY, asum = 0;
    for (uint32_t i = 0; i < k; i++)
        for (uint32_t j = 0; j < k; j++) {
            double s = 0.5 * (a[(size_t)i * k + j] + a[(size_t)j * k + i]);
            c->alpha[(size_t)i * k + j] = s;
            amax = fmax(amax, s);
        }
    for (size_t x = 0; x < (size_t)k * k; x++) {
        c->alpha[x] = exp(c->alpha[x] - amax);
        asum += c->alpha[x];
    }
    for (size_t x = 0; x < (size_t)k * k; x++)
        c->alpha[x] /= asum;
}

static void cpu_params(fdm_cpu *c, const double *w, const double *a)
{
    column_max(c, w);
    exp_and_sums(c, w);
    alpha_softmax(c, a);
}

/* ---- the batch: loss, dL/dalpha and the rows of dL/dmu ---- */

/* Pairs [i0, i1) of a batch of cnt: gather mu rows, P = X alpha, Q = Y alpha, M_i = P_i . Y_i.
 * Returns the block's loss, or NAN when a pair has probability 0 (diverged). */
static double block_forward(fdm_cpu *c, const uint32_t *u, const uint32_t *v, uint32_t cnt,
                            uint32_t i0, uint32_t i1)
{
    uint32_t k = c->k, nb = i1 - i0;
    double *X = c->XY + (size_t)i0 * k, *Y = c->XY + ((size_t)cnt + i0) * k;
    double *P = c->PQ + (size_t)i0 * k, *Q = c->PQ + ((size_t)cnt + i0) * k;
    for (uint32_t i = 0; i < nb; i++) {
        const double *eu = c->e + (size_t)u[i0 + i] * k, *ev = c->e + (size_t)v[i0 + i] * k;
        double *x = X + (size_t)i * k, *y = Y + (size_t)i * k;
        for (uint32_t t = 0; t < k; t++)
            x[t] = eu[t] * c->inv[t], y[t] = ev[t] * c->inv[t];
    }
    /* alpha is symmetric, so Q = Y alpha is also Y alpha^T, the factor of dL/dX */
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nb, (int)k, (int)k, 1.0, X,
                (int)k, c->alpha, (int)k, 0.0, P, (int)k);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nb, (int)k, (int)k, 1.0, Y,
                (int)k, c->alpha, (int)k, 0.0, Q, (int)k);
    double loss = 0;
    for (uint32_t i = 0; i < nb; i++) {
        double m = cblas_ddot((int)k, P + (size_t)i * k, 1, Y + (size_t)i * k, 1);
        if (!(m > 0))
            return NAN;
        c->wgt[i0 + i] = m;
        loss -= log(m);
    }
    return loss;
}

/* Mean loss of pairs 0..cnt-1 (blocks summed in order); leaves X, Y, P, Q and M per pair. */
static int batch_forward(fdm_cpu *c, const uint32_t *u, const uint32_t *v, uint32_t cnt,
                         double *loss)
{
    uint32_t nblk = div_up(cnt, PAIR_BLOCK);
#pragma omp parallel for schedule(static) \
    num_threads(threads_for(c, (uint64_t)cnt * c->k * (c->k + 4), nblk))
    for (uint32_t b = 0; b < nblk; b++) {
        uint32_t i0 = b * PAIR_BLOCK, i1 = i0 + PAIR_BLOCK < cnt ? i0 + PAIR_BLOCK : cnt;
        c->bloss[b] = block_forward(c, u, v, cnt, i0, i1);
    }
    double sum = 0;
    for (uint32_t b = 0; b < nblk; b++)
        sum += c->bloss[b];
    if (isnan(sum))
        return jsmf_error(JSMF_ENUMERIC, "FDM: a pair got probability 0 or NaN (diverged; "
                          "try a smaller --lr)");
    *loss = sum / cnt;
    return 0;
}

/* dL/dalpha = sum_i w_i X_i^T Y_i with w_i = -1 / (B M_i): X's rows scaled by w, then GEMMs
 * by pair block summed in order (small K), or one GEMM over the batch. */
static void alpha_grad(fdm_cpu *c, uint32_t cnt)
{
    uint32_t k = c->k, nblk = div_up(cnt, PAIR_BLOCK);
    size_t kk = (size_t)k * k;
    double *X = c->XY, *Y = c->XY + (size_t)cnt * k;
    int partials = c->bga != NULL;
#pragma omp parallel for schedule(static) \
    num_threads(threads_for(c, (uint64_t)cnt * k * (partials ? k : 1), nblk))
    for (uint32_t b = 0; b < nblk; b++) {
        uint32_t i0 = b * PAIR_BLOCK, i1 = i0 + PAIR_BLOCK < cnt ? i0 + PAIR_BLOCK : cnt;
        for (uint32_t i = i0; i < i1; i++) {
            c->wgt[i] = -1.0 / ((double)cnt * c->wgt[i]);
            for (uint32_t t = 0; t < k; t++)
                X[(size_t)i * k + t] *= c->wgt[i];
        }
        if (partials)
            cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)k, (int)k, (int)(i1 - i0),
                        1.0, X + (size_t)i0 * k, (int)k, Y + (size_t)i0 * k, (int)k, 0.0,
                        c->bga + b * kk, (int)k);
    }
    if (!partials) {
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)k, (int)k, (int)cnt, 1.0, X,
                    (int)k, Y, (int)k, 0.0, c->Ga, (int)k);
        return;
    }
    memset(c->Ga, 0, kk * sizeof(double));
    for (uint32_t b = 0; b < nblk; b++)
        for (size_t x = 0; x < kk; x++)
            c->Ga[x] += c->bga[b * kk + x];
}

/* A row of Gs for each distinct word of the batch, in order of first appearance. */
static void assign_slots(fdm_cpu *c, const uint32_t *u, const uint32_t *v, uint32_t cnt)
{
    c->nslots = 0;
    for (uint32_t i = 0; i < cnt; i++) {
        if (c->slot[u[i]] < 0)
            c->rows[c->nslots] = u[i], c->slot[u[i]] = (int32_t)c->nslots++;
        if (c->slot[v[i]] < 0)
            c->rows[c->nslots] = v[i], c->slot[v[i]] = (int32_t)c->nslots++;
    }
}

/* dL/dmu: u_i's row gets w_i Q_i, v_i's row w_i P_i. Threads own columns and go through the
 * pairs in order, so a word's sum has the same order whatever the thread count. Then
 * s_t = sum over the batch's words of G(l,t) mu(l,t). */
static void mu_grad(fdm_cpu *c, const uint32_t *u, const uint32_t *v, uint32_t cnt)
{
    uint32_t k = c->k;
    assign_slots(c, u, v, cnt);
    int nt = threads_for(c, (uint64_t)cnt * k * 2, k);
    uint32_t chunk = div_up(k, (uint32_t)nt), nchunks = div_up(k, chunk);
#pragma omp parallel for schedule(static) num_threads(nt)
    for (uint32_t ch = 0; ch < nchunks; ch++) {
        uint32_t t0 = ch * chunk, t1 = t0 + chunk < k ? t0 + chunk : k;
        for (uint32_t i = 0; i < cnt; i++) {
            const double *p = c->PQ + (size_t)i * k, *q = c->PQ + ((size_t)cnt + i) * k;
            double wi = c->wgt[i];
            double *gu = c->Gs + (size_t)c->slot[u[i]] * k, *gv = c->Gs + (size_t)c->slot[v[i]] * k;
            for (uint32_t t = t0; t < t1; t++)
                gu[t] += wi * q[t];
            for (uint32_t t = t0; t < t1; t++)
                gv[t] += wi * p[t];
        }
        for (uint32_t t = t0; t < t1; t++)
            c->s[t] = 0;
        for (uint32_t r = 0; r < c->nslots; r++) {
            const double *g = c->Gs + (size_t)r * k, *e = c->e + (size_t)c->rows[r] * k;
            for (uint32_t t = t0; t < t1; t++)
                c->s[t] += g[t] * e[t] * c->inv[t];
        }
    }
}

/* Gs back to zero and every slot free, for the next batch. */
static void release_slots(fdm_cpu *c)
{
    for (uint32_t r = 0; r < c->nslots; r++)
        c->slot[c->rows[r]] = -1;
    memset(c->Gs, 0, (size_t)c->nslots * c->k * sizeof(double));
    c->nslots = 0;
}

/* dL/d(alpha logits) from Ga into ga: softmax over all entries, then symmetrisation. */
static void alpha_logit_grad(fdm_cpu *c)
{
    uint32_t k = c->k;
    double dot = 0;
    for (size_t x = 0; x < (size_t)k * k; x++)
        dot += c->Ga[x] * c->alpha[x];
    for (uint32_t i = 0; i < k; i++)
        for (uint32_t j = 0; j < k; j++) {
            size_t ij = (size_t)i * k + j, ji = (size_t)j * k + i;
            c->ga[ij] = 0.5 * (c->alpha[ij] * (c->Ga[ij] - dot) + c->alpha[ji] * (c->Ga[ji] - dot));
        }
}

/* dL/dw(l,t) = mu(l,t) (G(l,t) - s_t); G is zero outside the batch's words. */
static inline double logit_grad(const fdm_cpu *c, const double *grow, size_t x, uint32_t t)
{
    double mu = c->e[x] * c->inv[t];
    return mu * ((grow ? grow[t] : 0) - c->s[t]);
}

static int batch_loss_grad(fdm_cpu *c, const uint32_t *u, const uint32_t *v, uint32_t cnt,
                           double *loss)
{
    int rc = batch_forward(c, u, v, cnt, loss);
    if (rc)
        return rc;
    alpha_grad(c, cnt);
    mu_grad(c, u, v, cnt);
    alpha_logit_grad(c);
    return 0;
}

/* ---- Adam ---- */

typedef struct adam_coef {
    double b1, b2, lr, c1, c2, eps;
} adam_coef;

static inline void adam(double *w, double *m, double *v, double g, const adam_coef *a)
{
    *m = a->b1 * *m + (1 - a->b1) * g;
    *v = a->b2 * *v + (1 - a->b2) * g * g;
    *w -= a->lr * (*m * a->c1) / (sqrt(*v * a->c2) + a->eps);
}

/* The Adam update of every logit of mu, fused with the column maxima of the new logits (the
 * shift of the next exp pass). */
static void adam_mu(fdm_cpu *c, const adam_coef *ac)
{
    fdm_state *st = c->st;
    uint32_t n = c->n, k = c->k, nb = div_up(n, ROW_BLOCK);
#pragma omp parallel for schedule(static) num_threads(threads_for(c, (uint64_t)n * k * 4, nb))
    for (uint32_t b = 0; b < nb; b++) {
        double *p = c->rpart + (size_t)b * k;
        for (uint32_t t = 0; t < k; t++)
            p[t] = -INFINITY;
        uint32_t end = (b + 1) * ROW_BLOCK < n ? (b + 1) * ROW_BLOCK : n;
        for (uint32_t l = b * ROW_BLOCK; l < end; l++) {
            const double *grow = c->slot[l] >= 0 ? c->Gs + (size_t)c->slot[l] * k : NULL;
            for (uint32_t t = 0; t < k; t++) {
                size_t x = (size_t)l * k + t;
                adam(st->w + x, st->mw + x, st->vw + x, logit_grad(c, grow, x, t), ac);
                p[t] = fmax(p[t], st->w[x]);
            }
        }
    }
    combine_max(c, nb);
}

static int cpu_train_step(void *ctx, uint64_t step, double *loss)
{
    fdm_cpu *c = ctx;
    const fdm_setup *s = c->setup;
    fdm_state *st = c->st;
    fdm_sampler_draw(s->sampler, s->seed, step, 0, s->batch, c->u, c->v, c->threads);
    int rc = batch_loss_grad(c, c->u, c->v, s->batch, loss);
    if (rc) {
        release_slots(c);
        return rc;
    }
    adam_coef ac = {s->beta1, s->beta2, s->lr, 1.0 / (1.0 - pow(s->beta1, (double)step)),
                    1.0 / (1.0 - pow(s->beta2, (double)step)), s->eps};
    adam_mu(c, &ac);
    release_slots(c);
    for (size_t x = 0; x < (size_t)c->k * c->k; x++)
        adam(st->a + x, st->ma + x, st->va + x, c->ga[x], &ac);
    /* the parameters of the new state, for the next step or an evaluation */
    exp_and_sums(c, st->w);
    alpha_softmax(c, st->a);
    return 0;
}

static int cpu_heldout_loss(void *ctx, double *loss)
{
    fdm_cpu *c = ctx;
    const fdm_setup *s = c->setup;
    double total = 0;
    for (uint32_t off = 0; off < s->nheld; off += c->bmax) {
        uint32_t cnt = s->nheld - off < c->bmax ? s->nheld - off : c->bmax;
        double l;
        int rc = batch_forward(c, s->hu + off, s->hv + off, cnt, &l);
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
    fdm_cpu *c = cpu_alloc(setup->n, setup->k, setup->batch, setup->threads);
    if (!c)
        return jsmf_error(JSMF_ENOMEM, "out of memory for the FDM CPU back end (N = %u, K = %u)",
                          setup->n, setup->k);
    c->setup = setup;
    c->st = st;
    cpu_params(c, st->w, st->a);
    memset(out, 0, sizeof *out);
    out->ctx = c;
    out->train_step = cpu_train_step;
    out->heldout_loss = cpu_heldout_loss;
    out->sync = cpu_sync;
    out->destroy = cpu_destroy;
    snprintf(out->name, sizeof out->name, "cpu");
    out->host_sampling = 1;
    return 0;
}

int fdm_loss_grad_cpu(uint32_t n, uint32_t k, const double *wmu, const double *walpha,
                           const uint32_t *u, const uint32_t *v, uint32_t count, double *loss,
                           double *gmu, double *galpha)
{
    if (!n || !k || !count)
        return jsmf_error(JSMF_EINVAL, "empty batch or model");
    for (uint32_t i = 0; i < count; i++)
        if (u[i] >= n || v[i] >= n)
            return jsmf_error(JSMF_EINVAL, "pair %u: word out of range", i);
    fdm_cpu *c = cpu_alloc(n, k, count, 0);
    if (!c)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    cpu_params(c, wmu, walpha);
    int rc = gmu || galpha ? batch_loss_grad(c, u, v, count, loss)
                           : batch_forward(c, u, v, count, loss);
    if (!rc && gmu)
        for (uint32_t l = 0; l < n; l++) {
            const double *grow = c->slot[l] >= 0 ? c->Gs + (size_t)c->slot[l] * k : NULL;
            for (uint32_t t = 0; t < k; t++)
                gmu[(size_t)l * k + t] = logit_grad(c, grow, (size_t)l * k + t, t);
        }
    if (!rc && galpha)
        memcpy(galpha, c->ga, (size_t)k * k * sizeof(double));
    cpu_free(c);
    return rc;
}

int fdm_cpu_softmax(uint32_t n, uint32_t k, const double *w, const double *a, double *mu,
                    double *alpha)
{
    fdm_cpu *c = cpu_alloc(n, k, 1, 0);
    if (!c)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    cpu_params(c, w, a);
    for (uint32_t l = 0; l < n; l++)
        for (uint32_t t = 0; t < k; t++)
            mu[(size_t)l * k + t] = c->e[(size_t)l * k + t] * c->inv[t];
    memcpy(alpha, c->alpha, (size_t)k * k * sizeof(double));
    cpu_free(c);
    return 0;
}
