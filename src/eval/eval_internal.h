/* eval_internal.h — what the files of src/eval share: the report's projection. */
#ifndef JSMF_EVAL_INTERNAL_H
#define JSMF_EVAL_INTERNAL_H

#include "jsmf_eval.h"

/** 2-D principal-component projection of the rows of B-breve (p(topic | word), rows of B
 *  weighted by topic size p(z) = A 1 and normalised): xy is N x 2. Anchors sit at the corners
 *  of the simplex these rows fill (Lee, Bindel & Mimno 2015 Fig. 1). */
int report_projection(const jsmf_model *m, double *xy);

#endif
