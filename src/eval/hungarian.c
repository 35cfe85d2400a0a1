/* hungarian.c — exact minimum-cost perfect matching (Hungarian algorithm, O(n^3) shortest
 * augmenting paths with dual potentials) and the l1 topic error of Fisher et al. 2020 Eq. 14 built
 * on it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsmf_eval.h"
#include "core/threads.h"
#include "eval_internal.h"

int jsmf_hungarian(const double *cost, uint32_t n, uint32_t *assign, double *total)
{
    if (n == 0)
        return jsmf_error(JSMF_EINVAL, "hungarian: empty cost matrix");
    for (uint64_t i = 0; i < (uint64_t)n * n; i++)
        if (!isfinite(cost[i]))
            return jsmf_error(JSMF_EINVAL, "hungarian: cost[%llu] is not finite",
                              (unsigned long long)i);
    /* 1-based arrays; index 0 is the virtual start column of each augmenting path. */
    double *u = calloc(n + 1, sizeof *u), *v = calloc(n + 1, sizeof *v);
    double *minv = malloc((n + 1) * sizeof *minv);
    uint32_t *p = calloc(n + 1, sizeof *p), *way = calloc(n + 1, sizeof *way);
    unsigned char *used = malloc(n + 1);
    if (!u || !v || !minv || !p || !way || !used) {
        free(u), free(v), free(minv), free(p), free(way), free(used);
        return jsmf_error(JSMF_ENOMEM, "hungarian: out of memory for n=%u", n);
    }
    for (uint32_t i = 1; i <= n; i++) {
        /* Grow the matching by row i along a shortest path in reduced costs (Dijkstra-like). */
        p[0] = i;
        uint32_t j0 = 0;
        for (uint32_t j = 0; j <= n; j++)
            minv[j] = INFINITY, used[j] = 0;
        do {
            used[j0] = 1;
            uint32_t i0 = p[j0], j1 = 0;
            double delta = INFINITY;
            for (uint32_t j = 1; j <= n; j++) {
                if (used[j])
                    continue;
                double cur = cost[(uint64_t)(i0 - 1) * n + (j - 1)] - u[i0] - v[j];
                if (cur < minv[j])
                    minv[j] = cur, way[j] = j0;
                if (minv[j] < delta)
                    delta = minv[j], j1 = j;
            }
            for (uint32_t j = 0; j <= n; j++) {
                if (used[j])
                    u[p[j]] += delta, v[j] -= delta;
                else
                    minv[j] -= delta;
            }
            j0 = j1;
        } while (p[j0] != 0);
        do { /* flip the path */
            uint32_t j1 = way[j0];
            p[j0] = p[j1];
            j0 = j1;
        } while (j0);
    }
    double sum = 0;
    for (uint32_t j = 1; j <= n; j++) {
        assign[p[j] - 1] = j - 1;
        sum += cost[(uint64_t)(p[j] - 1) * n + (j - 1)];
    }
    if (total)
        *total = sum;
    free(u), free(v), free(minv), free(p), free(way), free(used);
    return 0;
}

/* l1 distances between every true and every estimated topic, over the union of the two
 * vocabularies: cost[t*K+s] = sum_w |truth_wt - est_ws|. */
static int topic_l1_costs(const jsmf_model *truth, const jsmf_model *est, double *cost)
{
    uint32_t k = truth->k;
    jsmf_wordmap *map;
    int rc = jsmf_wordmap_new(est->vocab, &map);
    if (rc)
        return rc;
    unsigned char *seen = calloc(est->n ? est->n : 1, 1);
    if (!seen) {
        jsmf_wordmap_free(map);
        return jsmf_error(JSMF_ENOMEM, "l1 error: out of memory");
    }
    uint32_t *to_est = malloc((truth->n ? truth->n : 1) * sizeof *to_est);
    if (!to_est) {
        free(seen), jsmf_wordmap_free(map);
        return jsmf_error(JSMF_ENOMEM, "l1 error: out of memory");
    }
    for (uint32_t w = 0; w < truth->n; w++) {
        const char *word = truth->vocab->words[w];
        to_est[w] = jsmf_wordmap_find(map, word, strlen(word));
        if (to_est[w] != UINT32_MAX)
            seen[to_est[w]] = 1;
    }
    /* Each true topic's row of costs is independent: parallel over t, words in order; on the
     * threads of the jsmf_eval_truth call around it (call_threads), if any. */
    #pragma omp parallel for schedule(dynamic) num_threads(call_threads())
    for (uint32_t t = 0; t < k; t++) {
        double *row = cost + (uint64_t)t * k;
        for (uint32_t s = 0; s < k; s++)
            row[s] = 0;
        for (uint32_t w = 0; w < truth->n; w++) {
            double tw = truth->B[(uint64_t)w * k + t];
            const double *er = to_est[w] == UINT32_MAX ? NULL : est->B + (uint64_t)to_est[w] * k;
            for (uint32_t s = 0; s < k; s++)
                row[s] += fabs(tw - (er ? er[s] : 0.0));
        }
        for (uint32_t e = 0; e < est->n; e++) { /* words only the estimate has */
            if (seen[e])
                continue;
            const double *er = est->B + (uint64_t)e * k;
            for (uint32_t s = 0; s < k; s++)
                row[s] += fabs(er[s]);
        }
    }
    free(to_est);
    free(seen);
    jsmf_wordmap_free(map);
    return 0;
}

int jsmf_eval_l1_error(const jsmf_model *truth, const jsmf_model *est, double *err,
                       uint32_t *match, double *dist)
{
    if (truth->k != est->k)
        return jsmf_error(JSMF_EMISMATCH, "l1 error: the truth has %u topics, the model %u",
                          truth->k, est->k);
    if (!truth->vocab || !est->vocab)
        return jsmf_error(JSMF_EINVAL, "l1 error: both models need a vocabulary");
    uint32_t k = truth->k;
    double *cost = malloc((size_t)k * k * sizeof *cost);
    uint32_t *assign = malloc((size_t)k * sizeof *assign);
    if (!cost || !assign) {
        free(cost), free(assign);
        return jsmf_error(JSMF_ENOMEM, "l1 error: out of memory for K=%u", k);
    }
    int rc = topic_l1_costs(truth, est, cost);
    double total = 0;
    if (!rc)
        rc = jsmf_hungarian(cost, k, assign, &total);
    if (!rc) {
        *err = total / k;
        for (uint32_t t = 0; t < k; t++) {
            if (match)
                match[t] = assign[t];
            if (dist)
                dist[t] = cost[t * k + assign[t]];
        }
    }
    free(cost), free(assign);
    return rc;
}
