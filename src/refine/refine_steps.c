/* refine_steps.c — the per-document joint steps of the refinement's methods (refine_methods.c):
 * MAP-EM's, which also serves every method's theta-only steps, and synchronous CVB0's. Where a
 * pass spends ~70% of its time. */
#include <math.h>
#include <string.h>

#include "refine_internal.h"
#include "core/hot.h"

/* In AVX2 where the CPU has it (core/hot.h; their sums over topics are reductions: the same
 * model to rounding across CPUs). The cloned steps stay static: GCC exports the ifunc of a
 * cloned function whatever its visibility, so the table reaches them through plain wrappers. */
#define REFINE_HOT JSMF_HOT

/* n_d: the document's tokens. */
double refine_doc_tokens(const uint32_t *counts, uint64_t len)
{
    double nd = 0;
    for (uint64_t e = 0; e < len; e++)
        nd += counts[e];
    return nd;
}

/* One EM step of a document's theta with B fixed: returns sum h log p at the theta it started
 * from (with nwk; 0 without); theta_k <- (n_dk + a_k) / (n_d + A). With nwk (the joint step)
 * also adds the expected counts of the document's tokens to nwk. */
REFINE_HOT static double step_em(const refine_state *s, const uint32_t *ids,
                                  const uint32_t *counts, uint64_t len, double *theta,
                                  double *ndk, double *nwk)
{
    const uint32_t k = s->k;
    double ll = 0, nd = 0;
    memset(ndk, 0, k * sizeof *ndk);
    for (uint64_t e = 0; e < len; e++) {
        const double *b = s->B + (uint64_t)ids[e] * k;
        double p = 0;
#pragma omp simd reduction(+ : p)
        for (uint32_t t = 0; t < k; t++)
            p += theta[t] * b[t];
        if (!(p > 0)) /* a word no topic produces (only with mix 0, first pass): no say */
            continue;
        double c = counts[e];
        if (nwk) /* the theta-only steps' likelihood is not used: no log (15% of a pass) */
            ll += c * log(p);
        nd += c;
        double f = c / p;
        if (nwk) {
            double *acc = nwk + (uint64_t)ids[e] * k;
#pragma omp simd
            for (uint32_t t = 0; t < k; t++) {
                double r = theta[t] * b[t] * f;
                ndk[t] += r;
                acc[t] += r;
            }
        } else {
#pragma omp simd
            for (uint32_t t = 0; t < k; t++)
                ndk[t] += theta[t] * b[t] * f;
        }
    }
    const double *a = s->alpha, z = nd + s->alpha_sum;
    for (uint32_t t = 0; t < k; t++)
        theta[t] = (ndk[t] + a[t]) / z;
    return ll;
}

/* The joint step of CVB0 (synchronous CVB0, Asuncion et al. 2009; BP for LDA, Zeng et
 * al. 2013): a token's responsibility comes from its document's and its word's counts without
 * its own share, (n_dk^-dw + a)(n_wk^-dw + b)/(n_k + N b), the shares re-derived from the current
 * theta and B instead of stored per token (no nnz x K array); n_k keeps the share, a change of
 * one token in n_k's thousands. Returns sum h log p at the theta it started from, as step_em. */
REFINE_HOT static double step_cvb0(const refine_state *s, const uint32_t *ids,
                                  const uint32_t *counts, uint64_t len, double *theta,
                                  double *ndk, double *nwk)
{
    const uint32_t k = s->k;
    const double *a = s->alpha, beta = s->o->beta;
    double ll = 0;
    const double z = refine_doc_tokens(counts, len) + s->alpha_sum;
    double *nold = ndk + k, *g = ndk + 2 * k;
    for (uint32_t t = 0; t < k; t++)
        nold[t] = theta[t] * z - a[t], ndk[t] = 0;
    const double *inv = s->have_prev ? s->nprev + (uint64_t)s->n * k : NULL;
    for (uint64_t e = 0; e < len; e++) {
        const double *b = s->B + (uint64_t)ids[e] * k;
        double p = 0;
#pragma omp simd reduction(+ : p)
        for (uint32_t t = 0; t < k; t++)
            p += theta[t] * b[t];
        if (!(p > 0))
            continue;
        const double c = counts[e], f = c / p;
        ll += c * log(p);
        double sum = 0;
        if (inv) {
            const double *nw = s->nprev + (uint64_t)ids[e] * k;
#pragma omp simd reduction(+ : sum)
            for (uint32_t t = 0; t < k; t++) {
                double own = theta[t] * b[t] * f, dk = nold[t] - own, wk = nw[t] - own;
                g[t] = ((dk > 0 ? dk : 0) + a[t]) * ((wk > 0 ? wk : 0) + beta) * inv[t];
                sum += g[t];
            }
        } else { /* the first pass: the start's topics, no counts yet */
#pragma omp simd reduction(+ : sum)
            for (uint32_t t = 0; t < k; t++) {
                double dk = nold[t] - theta[t] * b[t] * f;
                g[t] = ((dk > 0 ? dk : 0) + a[t]) * b[t];
                sum += g[t];
            }
        }
        double *acc = nwk + (uint64_t)ids[e] * k, norm = c / sum;
#pragma omp simd
        for (uint32_t t = 0; t < k; t++) {
            double r = g[t] * norm;
            ndk[t] += r;
            acc[t] += r;
        }
    }
    for (uint32_t t = 0; t < k; t++)
        theta[t] = (ndk[t] + a[t]) / z;
    return ll;
}

double refine_step_em(const refine_state *s, const uint32_t *ids, const uint32_t *counts,
                      uint64_t len, double *theta, double *ndk, double *nwk)
{
    return step_em(s, ids, counts, len, theta, ndk, nwk);
}

double refine_step_cvb0(const refine_state *s, const uint32_t *ids, const uint32_t *counts,
                        uint64_t len, double *theta, double *ndk, double *nwk)
{
    return step_cvb0(s, ids, counts, len, theta, ndk, nwk);
}
