/* test_fit_checks.c — the validity checks a fitted model passes before it is written: A must sum
 * to a positive number, B be finite, and no topic hold less than a thousandth of an even share;
 * the messages name the topics' anchors and what to change. */
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

    /* topic 1 holds 1e-9 of the mass: empty, named by its anchor */
    double keep[K];
    for (int b = 0; b < K; b++)
        keep[b] = A[1 * K + b], A[1 * K + b] = b == 1 ? 1e-9 : 0, A[b * K + 1] = A[1 * K + b];
    sum = 0;
    for (int i = 0; i < K * K; i++)
        sum += A[i];
    int rc = fit_check_model(&m, &v, 10, sum);
    CHECK(rc == JSMF_ENUMERIC);
    CHECK(strstr(jsmf_errmsg(), "degenerate model: 1 of 3 topics are empty") != NULL);
    CHECK(strstr(jsmf_errmsg(), "'beta'") != NULL);
    CHECK(strstr(jsmf_errmsg(), "raise --min-anchor-df (it is 10)") != NULL);
    for (int b = 0; b < K; b++)
        A[1 * K + b] = A[b * K + 1] = keep[b];

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
