/* test_eval_topn.c — the bounded-heap top-N selection agrees with a full sort (value descending,
 * ties by lower index) for strides, ties, top > n and top = 0. */
#include <stdlib.h>

#include "check.h"
#include "eval/eval_util.h"

static const double *g_v;
static uint64_t g_stride;

static int by_rank(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    double vx = g_v[x * g_stride], vy = g_v[y * g_stride];
    if (vx != vy)
        return vx < vy ? 1 : -1;
    return (x > y) - (x < y);
}

int main(void)
{
    static double v[3000];
    static uint32_t all[1000], heap[1200], out[1200];
    uint64_t s = 42;
    for (int trial = 0; trial < 200; trial++) {
        uint32_t n = 1 + trial * 5 % 1000, stride = 1 + trial % 3, top = trial % 7 == 0 ? n + 3 : 1u + (uint32_t)trial % 40;
        for (uint32_t i = 0; i < n * stride; i++) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            v[i] = trial % 2 ? (double)(s % 5) : (double)(s >> 11); /* many ties on odd trials */
        }
        for (uint32_t i = 0; i < n; i++)
            all[i] = i;
        g_v = v, g_stride = stride;
        qsort(all, n, sizeof *all, by_rank);
        uint32_t got = eval_top_indices(v, n, stride, top, heap, out);
        CHECK(got == (top < n ? top : n));
        int same = 1;
        for (uint32_t i = 0; i < got; i++)
            same &= out[i] == all[i];
        CHECK(same);
    }
    CHECK(eval_top_indices(v, 10, 1, 0, heap, out) == 0);
    CHECK_DONE();
}
