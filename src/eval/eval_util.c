/* eval_util.c — the top-N selection used for topics' top words (report, coherence): a bounded
 * min-heap, so K topics over N words cost O(K N log top), not a full sort per topic; and a
 * call's thread count. */
#include <omp.h>

#include "eval_util.h"

/* a ranks below b: smaller value, or equal value and higher index. */
static int below(const double *v, uint64_t stride, uint32_t a, uint32_t b)
{
    double x = v[a * stride], y = v[b * stride];
    return x < y || (x == y && a > b);
}

static void sift_down(const double *v, uint64_t stride, uint32_t *h, uint32_t n, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && below(v, stride, h[l], h[m]))
            m = l;
        if (r < n && below(v, stride, h[r], h[m]))
            m = r;
        if (m == i)
            return;
        uint32_t t = h[i];
        h[i] = h[m], h[m] = t;
        i = m;
    }
}

uint32_t eval_top_indices(const double *v, uint32_t n, uint64_t stride, uint32_t top,
                          uint32_t *heap, uint32_t *out)
{
    uint32_t size = 0;
    if (top == 0)
        return 0;
    for (uint32_t i = 0; i < n; i++) {
        if (size < top) { /* sift up */
            uint32_t j = size++;
            heap[j] = i;
            while (j > 0 && below(v, stride, heap[j], heap[(j - 1) / 2])) {
                uint32_t p = (j - 1) / 2, t = heap[j];
                heap[j] = heap[p], heap[p] = t;
                j = p;
            }
        } else if (below(v, stride, heap[0], i)) {
            heap[0] = i;
            sift_down(v, stride, heap, size, 0);
        }
    }
    /* Pop the minimum repeatedly: it fills out from the back. */
    for (uint32_t k = size; k > 0; k--) {
        out[k - 1] = heap[0];
        heap[0] = heap[k - 1];
        sift_down(v, stride, heap, k - 1, 0);
    }
    return size;
}

int eval_threads(int threads)
{
    return threads > 0 ? threads : omp_get_max_threads();
}
