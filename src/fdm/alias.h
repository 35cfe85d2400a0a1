/* alias.h — Vose's alias method (alias.c), shared by the rows and the documents samplers. */
#ifndef JSMF_FDM_ALIAS_H
#define JSMF_FDM_ALIAS_H

#include <stdint.h>

/* Vose's alias method over w[0..n): prob[i] = chance to keep i, alias[i] otherwise (draw i
 * uniformly, keep it with probability prob[i]). Zero weights are never drawn. `work` holds n
 * doubles and `idx` 2n indices. Requires a positive total. */
void fdm_alias_build(const double *w, uint32_t n, double total, float *prob, uint32_t *alias,
                     double *work, uint32_t *idx);

#endif
