/* eval_util.h — small helpers shared by the eval stage's files. */
#ifndef JSMF_EVAL_UTIL_H
#define JSMF_EVAL_UTIL_H
#include <stdint.h>

/* Indices of the `top` largest of v[0], v[stride], ... v[(n-1) stride], largest first, ties by
 * lower index; writes min(top, n) indices into out and returns that count. O(n log top) with a
 * heap of `top` entries in `heap` (room for top). */
uint32_t eval_top_indices(const double *v, uint32_t n, uint64_t stride, uint32_t top,
                          uint32_t *heap, uint32_t *out);

/* The threads of a call given `threads` (jsmf_infer_opts.threads): itself, or OpenMP's default
 * when 0, for its loops' num_threads clauses (as fdm's runs do): never set process-wide. */
int eval_threads(int threads);
#endif
