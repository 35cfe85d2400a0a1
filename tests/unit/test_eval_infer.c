/* test_eval_infer.c — the per-document convex fit recovers theta on documents drawn from a known
 * B and theta, reaches the optimum (KKT conditions), and handles empty documents. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "jsmf_eval.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double urand(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return ((rng >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/* Gamma(a) by Marsaglia-Tsang (a >= 1; boosted for a < 1), for Dirichlet theta. */
static double gamma_draw(double a)
{
    if (a < 1)
        return gamma_draw(a + 1) * pow(urand(), 1 / a);
    double d = a - 1.0 / 3, c = 1 / sqrt(9 * d);
    for (;;) {
        double x = sqrt(-2 * log(urand())) * cos(6.283185307179586 * urand());
        double v = 1 + c * x;
        if (v <= 0)
            continue;
        v = v * v * v;
        if (log(urand()) < 0.5 * x * x + d - d * v + d * log(v))
            return d * v;
    }
}

enum { N = 400, K = 8, DOCS = 60, LEN = 4000 };

int main(void)
{
    static double B[N * K];
    /* Topics with 10 anchor-like words each plus a shared sparse background. */
    for (int t = 0; t < K; t++) {
        double s = 0;
        for (int w = 0; w < N; w++) {
            double v = (w / 10 == t) ? 0.5 : (w >= K * 10 ? pow(urand(), 6) : 0);
            s += B[w * K + t] = v;
        }
        for (int w = 0; w < N; w++)
            B[w * K + t] /= s;
    }
    double worst = 0, mean_err = 0;
    double theta[K], est[K], cdf[N];
    uint32_t ids[N];
    double counts[N], word_counts[N];
    jsmf_infer_opts o = {.max_iters = 5000, .tol = 1e-9};
    for (int d = 0; d < DOCS; d++) {
        double s = 0;
        for (int t = 0; t < K; t++)
            s += theta[t] = gamma_draw(0.3);
        for (int t = 0; t < K; t++)
            theta[t] /= s;
        double acc = 0;
        for (int w = 0; w < N; w++) {
            double p = 0;
            for (int t = 0; t < K; t++)
                p += theta[t] * B[w * K + t];
            cdf[w] = acc += p;
            word_counts[w] = 0;
        }
        for (int i = 0; i < LEN; i++) {
            double u = urand() * acc;
            int lo = 0, hi = N - 1;
            while (lo < hi) {
                int mid = (lo + hi) / 2;
                if (cdf[mid] < u)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            word_counts[lo]++;
        }
        uint32_t n = 0;
        for (int w = 0; w < N; w++)
            if (word_counts[w] > 0)
                ids[n] = w, counts[n++] = word_counts[w];
        double gap;
        uint32_t it = 0;
        CHECK(jsmf_theta_fit(B, K, ids, counts, n, &o, est, &gap, &it) == 0);
        CHECK(it > 0);
        double l1 = 0, sum = 0;
        for (int t = 0; t < K; t++)
            l1 += fabs(est[t] - theta[t]), sum += est[t];
        CHECK_NEAR(sum, 1, 1e-12);
        CHECK(gap <= 1e-9);
        /* KKT at the optimum: gradient per token g_k <= 1, = 1 where theta_k > 0. */
        double g[K] = {0};
        for (uint32_t i = 0; i < n; i++) {
            double p = 0;
            for (int t = 0; t < K; t++)
                p += est[t] * B[ids[i] * K + t];
            for (int t = 0; t < K; t++)
                g[t] += counts[i] / LEN * B[ids[i] * K + t] / p;
        }
        for (int t = 0; t < K; t++) {
            CHECK(g[t] <= 1 + 1e-8);
            if (est[t] > 1e-3)
                CHECK_NEAR(g[t], 1, 1e-6);
        }
        mean_err += l1 / DOCS;
        if (l1 > worst)
            worst = l1;
    }
    fprintf(stderr, "theta recovery: mean l1 %.4f, worst %.4f over %d documents of %d tokens\n",
            mean_err, worst, DOCS, LEN);
    CHECK(mean_err < 0.08);
    CHECK(worst < 0.2);

    /* Exact expected counts: the fit must return theta itself. */
    for (int t = 0; t < K; t++)
        theta[t] = (t + 1.0) / (K * (K + 1) / 2.0);
    uint32_t n = 0;
    for (int w = 0; w < N; w++) {
        double p = 0;
        for (int t = 0; t < K; t++)
            p += theta[t] * B[w * K + t];
        if (p > 0)
            ids[n] = w, counts[n++] = 1e6 * p;
    }
    jsmf_theta_fit(B, K, ids, counts, n, &o, est, NULL, NULL);
    for (int t = 0; t < K; t++)
        CHECK_NEAR(est[t], theta[t], 1e-4);

    /* Empty document and a document of words no topic produces: uniform theta. */
    uint32_t none = 1;
    CHECK(jsmf_theta_fit(B, K, ids, counts, 0, &o, est, NULL, &none) == 0 && none == 0);
    for (int t = 0; t < K; t++)
        CHECK_NEAR(est[t], 1.0 / K, 1e-15);
    CHECK_DONE();
}
