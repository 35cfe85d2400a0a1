/* hungarian.h — minimum-cost perfect matching (src/core/hungarian.c), shared by eval (l1 error
 * against a truth) and model (the lineage of a refit's topics). */
#ifndef JSMF_CORE_HUNGARIAN_H
#define JSMF_CORE_HUNGARIAN_H

#include <stdint.h>

/** Minimum-cost perfect matching of an n x n cost matrix (row-major, finite values): the
 *  O(n^3) Hungarian algorithm (shortest augmenting paths with potentials). On return
 *  assign[i] is the column matched to row i, and *total (if not NULL) the cost of the matching.
 *  Errors: JSMF_EINVAL (n == 0 or a non-finite cost), JSMF_ENOMEM. */
int hungarian(const double *cost, uint32_t n, uint32_t *assign, double *total);

#endif
