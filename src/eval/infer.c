/* infer.c — topic mixture theta_d of a document by the per-document convex fit of seed 004
 * App. E: maximise sum_w n_w log sum_k theta_k B_wk over the simplex with the EM fixed point
 * theta_k <- theta_k g_k, stopped on the Frank-Wolfe duality gap. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsmf_eval.h"

/* The EM iteration on the document's rows of B gathered densely (rows x k): g is the gradient
 * per token, sum_k theta_k g_k = 1 always, so max_k g_k - 1 bounds the suboptimality. */
static int em_iterate(const double *Bd, const double *frac, uint32_t rows, uint32_t k,
                      const jsmf_infer_opts *o, double *theta, double *g, double *gap_out)
{
    double gap = INFINITY;
    uint32_t it = 0;
    for (;; it++) {
        memset(g, 0, k * sizeof *g);
        for (uint32_t r = 0; r < rows; r++) {
            const double *b = Bd + (uint64_t)r * k;
            double p = 0;
            for (uint32_t t = 0; t < k; t++)
                p += theta[t] * b[t];
            if (!(p > 1e-300))
                continue;
            double s = frac[r] / p;
            for (uint32_t t = 0; t < k; t++)
                g[t] += s * b[t];
        }
        double gmax = -INFINITY, sum = 0;
        for (uint32_t t = 0; t < k; t++)
            if (g[t] > gmax)
                gmax = g[t];
        for (uint32_t t = 0; t < k; t++)
            sum += theta[t] * g[t];
        /* sum is 1 up to rounding and tokens of zero probability; gap relative to it. */
        gap = gmax - sum;
        if (gap <= o->tol || it >= o->max_iters)
            break;
        double z = 0;
        for (uint32_t t = 0; t < k; t++)
            z += theta[t] *= g[t];
        for (uint32_t t = 0; t < k; t++)
            theta[t] /= z;
    }
    if (gap_out)
        *gap_out = gap;
    return (int)it;
}

int jsmf_theta_fit(const double *B, uint32_t k, const uint32_t *ids, const double *counts,
                   uint32_t nids, const jsmf_infer_opts *opts, double *theta, double *gap)
{
    jsmf_infer_opts o = JSMF_INFER_OPTS_DEFAULT;
    if (opts)
        o = *opts;
    for (uint32_t t = 0; t < k; t++)
        theta[t] = 1.0 / k;
    if (gap)
        *gap = 0;
    double total = 0;
    for (uint32_t i = 0; i < nids; i++)
        total += counts[i];
    if (nids == 0 || !(total > 0))
        return 0;
    double *Bd = malloc(((uint64_t)nids * k + nids + k) * sizeof *Bd);
    if (!Bd)
        return jsmf_error(JSMF_ENOMEM, "infer: out of memory for a document of %u words", nids);
    double *frac = Bd + (uint64_t)nids * k, *g = frac + nids;
    uint32_t rows = 0;
    for (uint32_t i = 0; i < nids; i++) {
        const double *b = B + (uint64_t)ids[i] * k;
        double rs = 0;
        for (uint32_t t = 0; t < k; t++)
            rs += b[t];
        if (!(rs > 0)) /* a word no topic can produce says nothing about theta */
            continue;
        memcpy(Bd + (uint64_t)rows * k, b, k * sizeof *b);
        frac[rows++] = counts[i] / total;
    }
    int it = rows ? em_iterate(Bd, frac, rows, k, &o, theta, g, gap) : 0;
    free(Bd);
    return it;
}

int jsmf_infer_batch(const jsmf_model *m, const jsmf_docbatch *b, const jsmf_infer_opts *opts,
                     double *theta)
{
    int rc = 0;
    #pragma omp parallel
    {
        double *cnt = NULL;
        uint64_t cap = 0;
        #pragma omp for schedule(dynamic, 4)
        for (uint32_t d = 0; d < b->ndocs; d++) {
            uint64_t s = b->start[d], n = b->start[d + 1] - s;
            if (n > cap) {
                free(cnt);
                cap = n * 2;
                cnt = malloc(cap * sizeof *cnt);
            }
            int r = cnt || n == 0 ? 0 : jsmf_error(JSMF_ENOMEM, "infer: out of memory");
            for (uint64_t i = 0; !r && i < n; i++)
                cnt[i] = b->counts[s + i];
            if (!r)
                r = jsmf_theta_fit(m->B, m->k, b->ids + s, cnt, (uint32_t)n, opts,
                                   theta + (uint64_t)d * m->k, NULL);
            if (r < 0) {
                #pragma omp critical(jsmf_infer_err)
                rc = rc ? rc : r;
            }
        }
        free(cnt);
    }
    return rc;
}
