/* hungarian.c — exact minimum-cost perfect matching (Hungarian algorithm, O(n^3) shortest
 * augmenting paths with dual potentials): what eval's l1 error against a truth and the
 * topic lineage of a refit (src/model/lineage.c) match topics with. */
#include <math.h>
#include <stdlib.h>

#include "jsmf.h"
#include "hungarian.h"

int hungarian(const double *cost, uint32_t n, uint32_t *assign, double *total)
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
