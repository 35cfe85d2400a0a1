/* test_fdm_step.c — the fused CPU training step (sparse rows of dL/dmu, Adam fused with the column
 * maxima, exp fused with the column sums, pair blocks) against an independent dense reference
 * written here from the formulas of Fisher et al. 2020 (FDM): column softmax, M_uv,
 * the full N x K gradient, plain Adam. A batch that leaves many words out (their gradient is
 * the dense part alone); the same result on 1 and 2 threads; and dL/dalpha of a large K (one
 * GEMM over the batch instead of per-block partials). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "jsmf_fdm.h"
#include "fdm/fdm_internal.h"

#define N 2000
#define K 24
#define BATCH 1024
#define STEPS 6

static uint64_t rowptr[N + 1];
static uint32_t cols[N * N];
static double vals[N * N];

static double rnd(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (((*s >> 8) & 0xFFFF) + 0.5) / 65536.0;
}

/* A dense non-negative symmetric C with some zeros, and a start B (N x K), A (K x K). */
static void make_input(jsmf_source *src, jsmf_csr *m, double *B, double *A)
{
    unsigned s = 29u;
    uint64_t z = 0;
    for (int u = 0; u < N; u++) {
        rowptr[u] = z;
        for (int v = 0; v < N; v++) {
            unsigned h = (unsigned)(u < v ? u * 7919 + v : v * 7919 + u) * 2654435761u;
            if (h % 5 == 0)
                continue;
            cols[z] = v, vals[z] = 1.0 + (h >> 16) % 97 + (u == v ? 50 : 0), z++;
        }
    }
    rowptr[N] = z;
    m->n = N, m->rowptr = rowptr, m->cols = cols, m->vals = vals;
    jsmf_csr_source(m, src);
    for (int t = 0; t < K; t++) {
        double sum = 0;
        for (int l = 0; l < N; l++)
            sum += (B[l * K + t] = rnd(&s) * rnd(&s));
        for (int l = 0; l < N; l++)
            B[l * K + t] /= sum;
    }
    double asum = 0;
    for (int e = 0; e < K * K; e++)
        asum += (A[e] = 0.5 + rnd(&s));
    for (int e = 0; e < K * K; e++)
        A[e] /= asum;
}

static void softmax_params(const double *w, const double *a, uint32_t n, uint32_t k, double *mu,
                           double *alpha)
{
    for (uint32_t t = 0; t < k; t++) {
        double mx = -INFINITY, sum = 0;
        for (uint32_t l = 0; l < n; l++)
            mx = fmax(mx, w[l * k + t]);
        for (uint32_t l = 0; l < n; l++)
            sum += (mu[l * k + t] = exp(w[l * k + t] - mx));
        for (uint32_t l = 0; l < n; l++)
            mu[l * k + t] /= sum;
    }
    double mx = -INFINITY, sum = 0;
    for (uint32_t i = 0; i < k; i++)
        for (uint32_t j = 0; j < k; j++)
            mx = fmax(mx, alpha[i * k + j] = 0.5 * (a[i * k + j] + a[j * k + i]));
    for (uint32_t e = 0; e < k * k; e++)
        sum += (alpha[e] = exp(alpha[e] - mx));
    for (uint32_t e = 0; e < k * k; e++)
        alpha[e] /= sum;
}

/* Loss of the pairs, dense dL/dw (N x K) and dL/da (K x K). */
static double dense_grad(const double *w, const double *a, const uint32_t *u, const uint32_t *v,
                         uint32_t cnt, uint32_t k, uint32_t n, double *gw, double *ga)
{
    double *mu = malloc(sizeof(double) * n * k), *alpha = malloc(sizeof(double) * k * k);
    double *G = calloc((size_t)n * k, sizeof(double)), *Ga = calloc((size_t)k * k, sizeof(double));
    softmax_params(w, a, n, k, mu, alpha);
    double loss = 0;
    for (uint32_t i = 0; i < cnt; i++) {
        const double *x = mu + (size_t)u[i] * k, *y = mu + (size_t)v[i] * k;
        double m = 0;
        for (uint32_t p = 0; p < k; p++)
            for (uint32_t q = 0; q < k; q++)
                m += alpha[p * k + q] * x[p] * y[q];
        loss -= log(m) / cnt;
        double c = -1.0 / (cnt * m);
        for (uint32_t p = 0; p < k; p++)
            for (uint32_t q = 0; q < k; q++) {
                Ga[p * k + q] += c * x[p] * y[q];
                G[(size_t)u[i] * k + p] += c * alpha[p * k + q] * y[q];
                G[(size_t)v[i] * k + q] += c * alpha[p * k + q] * x[p];
            }
    }
    for (uint32_t t = 0; t < k; t++) {
        double s = 0;
        for (uint32_t l = 0; l < n; l++)
            s += G[l * k + t] * mu[l * k + t];
        for (uint32_t l = 0; l < n; l++)
            gw[l * k + t] = mu[l * k + t] * (G[l * k + t] - s);
    }
    double dot = 0;
    for (uint32_t e = 0; e < k * k; e++)
        dot += Ga[e] * alpha[e];
    for (uint32_t i = 0; i < k; i++)
        for (uint32_t j = 0; j < k; j++)
            ga[i * k + j] = 0.5 * (alpha[i * k + j] * (Ga[i * k + j] - dot) +
                                   alpha[j * k + i] * (Ga[j * k + i] - dot));
    free(mu), free(alpha), free(G), free(Ga);
    return loss;
}

static void adam_ref(double *x, double *m, double *v, const double *g, size_t len, uint64_t step,
                     double lr)
{
    double b1 = 0.9, b2 = 0.999, c1 = 1 - pow(b1, (double)step), c2 = 1 - pow(b2, (double)step);
    for (size_t e = 0; e < len; e++) {
        m[e] = b1 * m[e] + (1 - b1) * g[e];
        v[e] = b2 * v[e] + (1 - b2) * g[e] * g[e];
        x[e] -= lr * (m[e] / c1) / (sqrt(v[e] / c2) + 1e-8);
    }
}

static void params(jsmf_fdm_opts *p, const double *B, const double *A, int threads)
{
    jsmf_fdm_opts_init(p);
    p->k = K, p->device = JSMF_FDM_DEVICE_CPU, p->seed = 9, p->batch = BATCH, p->lr = 0.02;
    p->steps = STEPS, p->eval_every = 1000, p->heldout = 100, p->patience = 0;
    p->threads = threads, p->init_B = B, p->init_A = A;
}

static double max_rel(const double *x, const double *y, size_t len)
{
    double worst = 0;
    for (size_t e = 0; e < len; e++)
        worst = fmax(worst, fabs(x[e] - y[e]) / fmax(fabs(y[e]), 1e-300));
    return worst;
}

int main(void)
{
    static double B[N * K], A[K * K];
    jsmf_csr m;
    jsmf_source src;
    make_input(&src, &m, B, A);

    /* the reference: STEPS dense Adam steps on the pairs the sampler gives each step */
    jsmf_fdm_sampler *smp = NULL;
    CHECK_OK(fdm_sampler_build(&src, 0, &smp));
    double s = 1e-3; /* the warm start's smoothing (init_smooth default) */
    double *w = malloc(sizeof(double) * N * K), *a = malloc(sizeof(double) * K * K);
    double *mw = calloc(N * K, sizeof(double)), *vw = calloc(N * K, sizeof(double));
    double *ma = calloc(K * K, sizeof(double)), *va = calloc(K * K, sizeof(double));
    double *gw = malloc(sizeof(double) * N * K), *ga = malloc(sizeof(double) * K * K);
    for (int e = 0; e < N * K; e++)
        w[e] = log((1 - s) * B[e] + s / N);
    for (int e = 0; e < K * K; e++)
        a[e] = log((1 - s) * A[e] + s / (K * K));
    uint32_t *u = malloc(sizeof(uint32_t) * BATCH), *v = malloc(sizeof(uint32_t) * BATCH);
    for (uint64_t step = 1; step <= STEPS; step++) {
        fdm_sampler_draw_default(smp, 9, step, 0, BATCH, u, v);
        dense_grad(w, a, u, v, BATCH, K, N, gw, ga);
        adam_ref(w, mw, vw, gw, N * K, step, 0.02);
        adam_ref(a, ma, va, ga, K * K, step, 0.02);
    }
    double *mu = malloc(sizeof(double) * N * K), *alpha = malloc(sizeof(double) * K * K);
    softmax_params(w, a, N, K, mu, alpha);

    /* the library's fused steps, on 1 and 2 threads */
    jsmf_fdm_opts p;
    jsmf_fdm_result r1, r2;
    params(&p, B, A, 1);
    CHECK_OK(jsmf_fdm_train(&src, &p, &r1));
    params(&p, B, A, 2);
    CHECK_OK(jsmf_fdm_train(&src, &p, &r2));
    if (r1.B && r2.B) {
        double eb = max_rel(r1.B, mu, N * K), ea = max_rel(r1.A, alpha, K * K);
        fprintf(stderr, "fused vs dense reference after %d steps: B %.2e, A %.2e relative\n",
                STEPS, eb, ea);
        CHECK(eb < 1e-9 && ea < 1e-9);
        CHECK(!memcmp(r1.B, r2.B, sizeof(double) * N * K));
        CHECK(!memcmp(r1.A, r2.A, sizeof(double) * K * K));
        CHECK(r1.steps == STEPS);
    }
    jsmf_fdm_result_free(&r1), jsmf_fdm_result_free(&r2);

    /* a K large enough for dL/dalpha to be one GEMM over the batch */
    {
        uint32_t k = 272, n = 50, cnt = 4096;
        unsigned sd = 3u;
        double *w2 = malloc(sizeof(double) * n * k), *a2 = malloc(sizeof(double) * k * k);
        double *g1 = malloc(sizeof(double) * n * k), *h1 = malloc(sizeof(double) * k * k);
        double *g2 = malloc(sizeof(double) * n * k), *h2 = malloc(sizeof(double) * k * k);
        uint32_t *u2 = malloc(sizeof(uint32_t) * cnt), *v2 = malloc(sizeof(uint32_t) * cnt);
        for (uint32_t e = 0; e < n * k; e++)
            w2[e] = 2 * rnd(&sd) - 1;
        for (uint32_t e = 0; e < k * k; e++)
            a2[e] = rnd(&sd) - 0.5;
        for (uint32_t i = 0; i < cnt; i++)
            u2[i] = (uint32_t)(rnd(&sd) * n) % n, v2[i] = (uint32_t)(rnd(&sd) * n) % n;
        double l1, l2 = dense_grad(w2, a2, u2, v2, cnt, k, n, g2, h2);
        CHECK_OK(fdm_loss_grad_cpu(n, k, w2, a2, u2, v2, cnt, &l1, g1, h1));
        double eg = 0, eh = 0, sg = 0, sh = 0;
        for (uint32_t e = 0; e < n * k; e++)
            eg = fmax(eg, fabs(g1[e] - g2[e])), sg = fmax(sg, fabs(g2[e]));
        for (uint32_t e = 0; e < k * k; e++)
            eh = fmax(eh, fabs(h1[e] - h2[e])), sh = fmax(sh, fabs(h2[e]));
        fprintf(stderr, "K=%u: loss %.6f vs %.6f: %.3e, dL/dw %.2e, dL/da %.2e\n", k,
                l1, l2, fabs(l1 - l2) / l2, eg / sg, eh / sh);
        CHECK(fabs(l1 - l2) <= 1e-12 * l2 && eg <= 1e-10 * sg && eh <= 1e-10 * sh);
        free(w2), free(a2), free(g1), free(h1), free(g2), free(h2), free(u2), free(v2);
    }

    fdm_sampler_free(smp);
    free(w), free(a), free(mw), free(vw), free(ma), free(va), free(gw), free(ga), free(u), free(v);
    free(mu), free(alpha);
    CHECK_DONE();
}
