/* test_eval_hungarian.c — the Hungarian matching is exact: it recovers a known permutation of
 * topics, and its cost equals the brute-force optimum on small random cost matrices. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "jsmf_eval.h"
#include "eval/eval_internal.h"
#include "core/hungarian.h"

static uint64_t rng = 88172645463325252ull;
static double urand(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (rng >> 11) * (1.0 / 9007199254740992.0);
}

/* Minimum over all permutations by recursion (n <= 8). */
static double brute(const double *c, uint32_t n, uint32_t row, unsigned used)
{
    if (row == n)
        return 0;
    double best = INFINITY;
    for (uint32_t j = 0; j < n; j++)
        if (!(used & (1u << j))) {
            double v = c[row * n + j] + brute(c, n, row + 1, used | (1u << j));
            if (v < best)
                best = v;
        }
    return best;
}

static void test_brute_force(void)
{
    for (int trial = 0; trial < 300; trial++) {
        uint32_t n = 1 + trial % 8;
        double c[64];
        uint32_t assign[8];
        for (uint32_t i = 0; i < n * n; i++) /* integer costs make ties, which must not matter */
            c[i] = trial % 3 ? urand() * 10 - 3 : (double)(int)(urand() * 4);
        double total;
        CHECK_OK(hungarian(c, n, assign, &total));
        unsigned seen = 0;
        double sum = 0;
        for (uint32_t i = 0; i < n; i++)
            seen |= 1u << assign[i], sum += c[i * n + assign[i]];
        CHECK(seen == (1u << n) - 1); /* a permutation */
        CHECK_NEAR(sum, total, 1e-9);
        CHECK_NEAR(total, brute(c, n, 0, 0), 1e-9);
    }
}

/* Topics of a random model, shuffled and lightly perturbed: l1 matching must undo the shuffle. */
static void test_permuted_topics(void)
{
    enum { N = 300, K = 40 };
    char *words[N], buf[N][16];
    for (int w = 0; w < N; w++)
        snprintf(buf[w], sizeof buf[w], "w%d", w), words[w] = buf[w];
    jsmf_vocab voc = {N, words, NULL, NULL};
    static double Bt[N * K], Be[N * K];
    uint32_t perm[K], match[K];
    double dist[K];
    for (int t = 0; t < K; t++)
        perm[t] = t;
    for (int t = K - 1; t > 0; t--) {
        int j = (int)(urand() * (t + 1));
        uint32_t x = perm[t];
        perm[t] = perm[j], perm[j] = x;
    }
    for (int t = 0; t < K; t++) {
        double s = 0, se = 0;
        for (int w = 0; w < N; w++)
            s += Bt[w * K + t] = pow(urand(), 8);
        for (int w = 0; w < N; w++) {
            Bt[w * K + t] /= s;
            se += Be[w * K + perm[t]] = Bt[w * K + t] * (1 + 0.2 * (urand() - 0.5));
        }
        for (int w = 0; w < N; w++)
            Be[w * K + perm[t]] /= se;
    }
    jsmf_model truth = {.n = N, .k = K, .vocab = &voc, .B = Bt};
    jsmf_model est = {.n = N, .k = K, .vocab = &voc, .B = Be};
    double err, direct = 0;
    CHECK_OK(jsmf_eval_l1_error(&truth, &est, &err, match, dist));
    for (int t = 0; t < K; t++) {
        CHECK(match[t] == perm[t]);
        double d = 0;
        for (int w = 0; w < N; w++)
            d += fabs(Bt[w * K + t] - Be[w * K + perm[t]]);
        CHECK_NEAR(dist[t], d, 1e-12);
        direct += d;
    }
    CHECK_NEAR(err, direct / K, 1e-12);
    CHECK(err > 0 && err < 0.2);

    /* The same model against itself, vocabulary in another order: error 0. */
    char *rwords[N];
    static double Br[N * K];
    for (int w = 0; w < N; w++) {
        rwords[w] = words[N - 1 - w];
        memcpy(Br + w * K, Bt + (N - 1 - w) * K, K * sizeof *Br);
    }
    jsmf_vocab rvoc = {N, rwords, NULL, NULL};
    jsmf_model rev = {.n = N, .k = K, .vocab = &rvoc, .B = Br};
    CHECK_OK(jsmf_eval_l1_error(&truth, &rev, &err, match, NULL));
    CHECK_NEAR(err, 0, 1e-12);
    for (int t = 0; t < K; t++)
        CHECK(match[t] == (uint32_t)t);

    /* Words only one side has count fully: a model on a subset vocabulary. */
    jsmf_vocab half = {N / 2, words, NULL, NULL};
    jsmf_model sub = {.n = N / 2, .k = K, .vocab = &half, .B = Bt};
    CHECK_OK(jsmf_eval_l1_error(&truth, &sub, &err, match, dist));
    double tail = 0;
    for (int t = 0; t < K; t++)
        for (int w = N / 2; w < N; w++)
            tail += Bt[w * K + t];
    CHECK_NEAR(err, tail / K, 1e-12);

    jsmf_model wrongk = {.n = N, .k = K - 1, .vocab = &voc, .B = Bt};
    CHECK(jsmf_eval_l1_error(&truth, &wrongk, &err, NULL, NULL) == JSMF_EMISMATCH);
}

int main(void)
{
    test_brute_force();
    test_permuted_topics();
    double c = NAN;
    uint32_t a;
    CHECK(hungarian(&c, 1, &a, NULL) == JSMF_EINVAL);
    CHECK_DONE();
}
