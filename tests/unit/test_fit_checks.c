/* test_fit_checks.c — the validity checks a fitted model passes before it is written: A must sum
 * to a positive number, B be finite, no topic be without mass (a millionth of an even share) and
 * at most a tenth of them empty (a thousandth); the messages name the topics' anchors and what to
 * change. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "fit/fit_internal.h"

int main(void)
{
    enum { N = 6, K = 3 };
    double B[N * K], A[K * K];
    uint32_t anchors[K] = {0, 1, 2};
    char w0[] = "alpha", w1[] = "beta", w2[] = "gamma", w3[] = "delta", w4[] = "eps", w5[] = "zeta";
    char *words[N] = {w0, w1, w2, w3, w4, w5};
    jsmf_vocab v = {N, words, NULL, NULL};
    jsmf_model m = {.n = N, .k = K, .B = B, .A = A, .anchors = anchors};
    for (int i = 0; i < N * K; i++)
        B[i] = 1.0 / N;
    for (int i = 0; i < K * K; i++)
        A[i] = i % (K + 1) == 0 ? 0.3 : 0.0125;
    double sum = 0;
    for (int i = 0; i < K * K; i++)
        sum += A[i];
    CHECK_OK(fit_check_model(&m, &v, 10, sum));

    /* topic 1 holds 1e-9 of the mass: without mass, named by its anchor */
    double keep[K];
    for (int b = 0; b < K; b++)
        keep[b] = A[1 * K + b], A[1 * K + b] = b == 1 ? 1e-9 : 0, A[b * K + 1] = A[1 * K + b];
    sum = 0;
    for (int i = 0; i < K * K; i++)
        sum += A[i];
    int rc = fit_check_model(&m, &v, 10, sum);
    CHECK(rc == JSMF_ENUMERIC);
    CHECK(strstr(jsmf_errmsg(), "degenerate model: 1 of 3 topics are without mass") != NULL);
    CHECK(strstr(jsmf_errmsg(), "'beta'") != NULL);
    CHECK(strstr(jsmf_errmsg(), "raise --min-anchor-df (it is 10)") != NULL);
    for (int b = 0; b < K; b++)
        A[1 * K + b] = A[b * K + 1] = keep[b];

    /* 1e-4 of the mass (3e-4 of an even share): empty, and one of 3 is more than a tenth */
    for (int b = 0; b < K; b++)
        keep[b] = A[1 * K + b], A[1 * K + b] = b == 1 ? 1e-4 : 0, A[b * K + 1] = A[1 * K + b];
    sum = 0;
    for (int i = 0; i < K * K; i++)
        sum += A[i];
    rc = fit_check_model(&m, &v, 10, sum);
    CHECK(rc == JSMF_ENUMERIC && strstr(jsmf_errmsg(), "1 of 3 topics are empty") != NULL);
    for (int b = 0; b < K; b++)
        A[1 * K + b] = A[b * K + 1] = keep[b];

    /* K = 20: one or two empty topics are the data's and pass; three, or one without mass, fail */
    {
        enum { K2 = 20 };
        static double B2[N * K2], A2[K2 * K2];
        uint32_t anc2[K2];
        jsmf_model m2 = {.n = N, .k = K2, .B = B2, .A = A2, .anchors = anc2};
        for (int i = 0; i < N * K2; i++)
            B2[i] = 1.0 / N;
        for (int t = 0; t < K2; t++)
            anc2[t] = (uint32_t)(t % N);
        for (int empty = 0; empty <= 3; empty++)
            for (int nomass = 0; nomass <= 1; nomass++) {
                double s2 = 0;
                for (int a = 0; a < K2; a++)
                    for (int b = 0; b < K2; b++) {
                        double x = a == b ? 1.0 : 0.0;
                        if (a == b && a < empty)
                            x = nomass && a == 0 ? 1e-9 : 1e-5; /* 2e-4 of an even share */
                        s2 += A2[a * K2 + b] = x;
                    }
                rc = fit_check_model(&m2, &v, 0, s2);
                int want_fail = empty == 3 || (nomass && empty > 0);
                CHECK(want_fail ? rc == JSMF_ENUMERIC : rc == JSMF_OK);
                if (want_fail)
                    CHECK(strstr(jsmf_errmsg(), nomass ? "without mass" : "3 of 20 topics are "
                                 "empty") != NULL);
            }
    }

    /* A without mass */
    rc = fit_check_model(&m, &v, 0, 0.0);
    CHECK(rc == JSMF_ENUMERIC && strstr(jsmf_errmsg(), "sum to 0") != NULL);
    rc = fit_check_model(&m, &v, 0, -1e-3);
    CHECK(rc == JSMF_ENUMERIC && strstr(jsmf_errmsg(), "lower -k") != NULL);

    /* a non-finite probability */
    B[4] = NAN;
    rc = fit_check_model(&m, &v, 0, 1.0);
    CHECK(rc == JSMF_ENUMERIC && strstr(jsmf_errmsg(), "non-finite") != NULL);
    CHECK_DONE();
}
