/* l1_error.c — the l1 topic error of Fisher et al. 2020 Eq. 14: the mean l1 distance of matched
 * topics under the minimum-cost matching (core/hungarian.c) of the distances over both
 * vocabularies (model/lineage.c, the same distance a refit's lineage uses). */
#include <stdlib.h>

#include "jsmf_eval.h"
#include "core/hungarian.h"
#include "model/lineage.h"

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
    int rc = model_topic_l1(truth, est, cost);
    double total = 0;
    if (!rc)
        rc = hungarian(cost, k, assign, &total);
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
