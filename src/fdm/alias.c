/* alias.c — Vose's alias method: the tables both pair samplers draw from in O(1) (the rows
 * sampler's row marginals and rows, the documents sampler's documents by mass). */
#include "alias.h"

void fdm_alias_build(const double *w, uint32_t n, double total, float *prob, uint32_t *alias,
                     double *work, uint32_t *idx)
{
    uint32_t *small = idx, *large = idx + n;
    uint32_t ns = 0, nl = 0, last_large = 0;
    for (uint32_t i = 0; i < n; i++) {
        work[i] = w[i] * n / total;
        if (work[i] < 1.0)
            small[ns++] = i;
        else
            large[nl++] = i, last_large = i;
    }
    while (ns && nl) {
        uint32_t s = small[--ns], l = large[nl - 1];
        prob[s] = (float)work[s];
        alias[s] = l;
        work[l] -= 1.0 - work[s];
        if (work[l] < 1.0)
            nl--, small[ns++] = l;
    }
    while (nl) {
        uint32_t l = large[--nl];
        prob[l] = 1.0f, alias[l] = l;
    }
    /* Leftovers from rounding: positive ones are (nearly) full; zero weights must stay unreachable. */
    while (ns) {
        uint32_t s = small[--ns];
        prob[s] = w[s] > 0 ? 1.0f : 0.0f;
        alias[s] = w[s] > 0 ? s : last_large;
    }
}
