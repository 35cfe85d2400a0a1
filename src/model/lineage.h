/* lineage.h — what eval and fit share of the topic matching (src/model/lineage.c): the l1
 * distances between the topics of two models over the words they name, and the lineage
 * written into a summary.json. */
#ifndef JSMF_MODEL_LINEAGE_H
#define JSMF_MODEL_LINEAGE_H

#include "jsmf_model.h"

/** cost[t * b->k + s] = sum over the union of the two vocabularies (words matched by string,
 *  a word absent from one model counting 0 there) of |a_wt - b_ws|: a->k x b->k values into
 *  the caller's `cost`. Both models need a vocabulary (JSMF_EINVAL), JSMF_ENOMEM. Runs on the
 *  threads of the call around it (call_threads). */
int model_topic_l1(const jsmf_model *a, const jsmf_model *b, double *cost);

/** The words of `a` in `b`, matched by string: to_b[w] = b's row of a's word w (UINT32_MAX:
 *  absent; a->n entries), seen[e] set to 1 for each of b's words that a has (the caller zeroes
 *  its b->n entries), *common (may be NULL) = how many of a's words b has. JSMF_ENOMEM. */
int model_map_words(const jsmf_model *a, const jsmf_model *b, uint32_t *to_b,
                    unsigned char *seen, uint32_t *common);

/** model_map_words against a vocabulary `v` (a store's, which may have grown since the model):
 *  to_v[w] = v's row of a's word w or UINT32_MAX; `seen` (v->n entries, zeroed) may be NULL. */
int model_map_to_vocab(const jsmf_model *a, const jsmf_vocab *v, uint32_t *to_v,
                       unsigned char *seen, uint32_t *common);

/** Add the key "lineage" (formats/model.md) to the end of m->summary_json (which must hold one
 *  JSON object; a minimal one is made when it is NULL). JSMF_ENOMEM. */
int model_lineage_summarize(jsmf_model *m, const jsmf_lineage *l);

#endif
