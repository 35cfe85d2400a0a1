/* fit_testutil.h — shared by the fit unit tests: planted-anchor models C = B A B^T as CSR
 * sources, and freeing a fitted model chain without the model stage. */
#ifndef FIT_TESTUTIL_H
#define FIT_TESTUTIL_H
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsmf.h"
#include "jsmf_fit.h"

static uint64_t tu_rng = 12345;
static inline double tu_unif(void)
{
    tu_rng = tu_rng * 6364136223846793005ull + 1442695040888963407ull;
    return ((tu_rng >> 11) + 0.5) / 9007199254740992.0;
}

/* B (n x k): word a < k is the anchor of topic a; other words spread over topics. A (k x k):
 * W W^T with positive W, sums to 1. C = B A B^T (+ optional noise, symmetric), as dense. */
static inline void tu_planted(uint32_t n, uint32_t k, double noise, double *B, double *A, double *C)
{
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t a = 0; a < k; a++) {
            double v = tu_unif();
            B[(size_t)i * k + a] = i < k ? (i == a ? 1.0 : 0.0) : v * v * v;
        }
    for (uint32_t a = 0; a < k; a++) {
        double s = 0;
        for (uint32_t i = 0; i < n; i++)
            s += B[(size_t)i * k + a];
        for (uint32_t i = 0; i < n; i++)
            B[(size_t)i * k + a] /= s;
    }
    double *W = malloc(sizeof(double) * k * k), tot = 0;
    for (uint32_t e = 0; e < k * k; e++)
        W[e] = tu_unif() + (e / k == e % k ? 2.0 : 0.0);
    for (uint32_t a = 0; a < k; a++)
        for (uint32_t b = 0; b < k; b++) {
            double s = 0;
            for (uint32_t e = 0; e < k; e++)
                s += W[a * k + e] * W[b * k + e];
            A[a * k + b] = s;
            tot += s;
        }
    for (uint32_t e = 0; e < k * k; e++)
        A[e] /= tot;
    free(W);
    double *BA = malloc(sizeof(double) * n * k);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t b = 0; b < k; b++) {
            double s = 0;
            for (uint32_t a = 0; a < k; a++)
                s += B[(size_t)i * k + a] * A[a * k + b];
            BA[(size_t)i * k + b] = s;
        }
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j <= i; j++) {
            double s = 0;
            for (uint32_t b = 0; b < k; b++)
                s += BA[(size_t)i * k + b] * B[(size_t)j * k + b];
            if (noise > 0)
                s += noise * (tu_unif() - 0.5) * s;
            C[(size_t)i * n + j] = C[(size_t)j * n + i] = s;
        }
    free(BA);
    double s = 0;
    for (size_t e = 0; e < (size_t)n * n; e++)
        s += C[e];
    for (size_t e = 0; e < (size_t)n * n; e++)
        C[e] /= s;
}

typedef struct {
    jsmf_csr csr;
    uint64_t *rowptr;
    uint32_t *cols;
    double *vals;
} tu_csr;

static inline void tu_csr_from_dense(uint32_t n, const double *C, tu_csr *t)
{
    uint64_t nnz = 0;
    for (size_t e = 0; e < (size_t)n * n; e++)
        nnz += C[e] != 0;
    t->rowptr = malloc(sizeof(uint64_t) * (n + 1));
    t->cols = malloc(sizeof(uint32_t) * (nnz ? nnz : 1));
    t->vals = malloc(sizeof(double) * (nnz ? nnz : 1));
    nnz = 0;
    for (uint32_t i = 0; i < n; i++) {
        t->rowptr[i] = nnz;
        for (uint32_t j = 0; j < n; j++)
            if (C[(size_t)i * n + j] != 0)
                t->cols[nnz] = j, t->vals[nnz++] = C[(size_t)i * n + j];
    }
    t->rowptr[n] = nnz;
    t->csr = (jsmf_csr){n, t->rowptr, t->cols, t->vals};
}

/* tu_planted as a source over t: *B (n x k) and *A (k x k) malloc'ed for the caller. */
static inline void tu_planted_source(uint32_t n, uint32_t k, double noise, double **B, double **A,
                              tu_csr *t, jsmf_source *src)
{
    *B = malloc(sizeof(double) * n * k), *A = malloc(sizeof(double) * k * k);
    double *C = malloc(sizeof(double) * n * n);
    tu_planted(n, k, noise, *B, *A, C);
    tu_csr_from_dense(n, C, t);
    free(C);
    jsmf_csr_source(&t->csr, src);
}

static inline void tu_csr_free(tu_csr *t)
{
    free(t->rowptr), free(t->cols), free(t->vals);
}

static inline void tu_model_free(jsmf_model *m)
{
    while (m) {
        jsmf_model *s = m->sub;
        jsmf_vocab_free(m->vocab);
        free(m->B), free(m->A), free(m->anchors), free(m->alpha), free(m->summary_json);
        free(m);
        m = s;
    }
}
#endif
