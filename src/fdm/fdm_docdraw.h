/* fdm_docdraw.h — one pair drawn from C through its documents (seed 004's Alg. 1, made exact
 * for late words), written once for the host (sampler_docs.c) and the CUDA kernel (fdm_cuda.cu)
 * so that both draw from the same distribution by the same steps. */
#ifndef JSMF_FDM_DOCDRAW_H
#define JSMF_FDM_DOCDRAW_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define FDM_HD __host__ __device__
#else
#define FDM_HD
#endif

/* The documents sampler's tables: the host's (owned by the sampler) or their copies on a
 * device. Only documents of >= 2 tokens are held (the others carry no mass). */
typedef struct fdm_doc_tables {
    uint32_t n;                /* N */
    uint32_t docs;             /* documents held */
    uint64_t m;                /* M of C's formula: all the source's documents */
    const uint64_t *offs;      /* docs + 1: document d holds entries offs[d] .. offs[d+1]-1 */
    const uint32_t *ids;       /* each entry's word, ascending within a document */
    const uint32_t *cum;       /* tokens of its document up to and including each entry */
    const uint64_t *admit;     /* N admission points, nondecreasing in the id; NULL: all 0 */
    const float *doc_prob;     /* with admit: Vose alias table over the documents by their */
    const uint32_t *doc_alias; /* mass (else NULL: every document carries 1/M) */
} fdm_doc_tables;

/* An index in [0, n) from 32 random bits, without division; a uniform in [0, 1). */
static inline FDM_HD uint32_t fdm_scale32(uint32_t r, uint64_t n)
{
    return (uint32_t)(((uint64_t)r * n) >> 32);
}

static inline FDM_HD double fdm_unit32(uint32_t r)
{
    return r * (1.0 / 4294967296.0);
}

/* The word at token position pos of the document of entries [a, a + len): the first entry
 * whose cumulative count passes pos (binary search). */
static inline FDM_HD uint32_t fdm_doc_word(const fdm_doc_tables *t, uint64_t a, uint64_t len,
                                           uint32_t pos)
{
    uint64_t lo = 0, hi = len - 1;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (t->cum[a + mid] > pos)
            hi = mid;
        else
            lo = mid + 1;
    }
    return t->ids[a + lo];
}

/* A document with late words as a mixture. With f(g) = 1 / (M - g) and the document's
 * admission points g_1 < ... < g_L (ids ascending, so each is a run of entries), its pair
 * (i, j) weighs f(max(a_i, a_j)) = f(g_1) + sum_{k >= 2} (f(g_k) - f(g_{k-1})) [max >= g_k]:
 * component 1 is the uniform ordered pair of distinct tokens with weight f(g_1); component k
 * the uniform pair with at least one of its two tokens among the words admitted at g_k or
 * later, with weight (f(g_k) - f(g_{k-1})) times that event's chance 1 - E (E - 1) / (n (n - 1))
 * (E the tokens of the earlier words). All weights are >= 0 and they sum to the document's
 * mass (jsmf_doc_mass). Walks the components in order and stops at the first whose running
 * sum passes `target` (HUGE_VAL: none, the total), its E in *early (0 for component 1; the
 * last one when rounding lets the target pass them all); returns the running sum. */
static inline FDM_HD double fdm_doc_mix(const fdm_doc_tables *t, uint64_t a, uint64_t len,
                                        double target, uint32_t *early)
{
    double n = t->cum[a + len - 1], pairs = n * (n - 1);
    uint64_t g = t->admit[t->ids[a]];
    double f = 1.0 / (double)(t->m - g), sum = f;
    *early = 0;
    for (uint64_t e = 1; e < len && !(target < sum); e++) {
        uint64_t ge = t->admit[t->ids[a + e]];
        if (ge == g)
            continue;
        double fe = 1.0 / (double)(t->m - ge), E = t->cum[a + e - 1];
        sum += (fe - f) * (1 - E * (E - 1) / pairs);
        g = ge, f = fe;
        *early = (uint32_t)E;
    }
    return sum;
}

/* Pair (u, v) from eight random words: a document (r0: uniform; with late words by the alias
 * table, r0 and r1), then an ordered pair of distinct token positions. Without late words
 * r2, r3 give the positions (r4..r7 unused): the first uniform among the n tokens, the second
 * among the other n - 1, exactly the document's share of C. With late words r4 picks the
 * component (fdm_doc_mix), r5 which side of a late component's pair is late, r6 and r7 the
 * positions. */
static inline FDM_HD void fdm_doc_draw(const fdm_doc_tables *t, const uint32_t r[8], uint32_t *u,
                                       uint32_t *v)
{
    uint32_t d = fdm_scale32(r[0], t->docs);
    if (t->doc_prob && fdm_unit32(r[1]) >= t->doc_prob[d])
        d = t->doc_alias[d];
    uint64_t a = t->offs[d], len = t->offs[d + 1] - a;
    uint32_t n = t->cum[a + len - 1], early = 0, p, q;
    const uint32_t *rp = t->admit ? r + 6 : r + 2;
    if (t->admit && t->admit[t->ids[a]] != t->admit[t->ids[a + len - 1]]) {
        double mass = fdm_doc_mix(t, a, len, HUGE_VAL, &early);
        fdm_doc_mix(t, a, len, fdm_unit32(r[4]) * mass, &early);
    }
    if (!early) { /* uniform: first of n, second of the other n - 1 */
        p = fdm_scale32(rp[0], n);
        q = fdm_scale32(rp[1], n - 1);
        q += q >= p;
    } else if (fdm_unit32(r[5]) * (double)(n - 1 + early) < (double)(n - 1)) {
        /* of the l (n - 1 + E) pairs with a late token (l = n - E), l (n - 1) start late */
        p = early + fdm_scale32(rp[0], n - early);
        q = fdm_scale32(rp[1], n - 1);
        q += q >= p;
    } else { /* the other E l: an early first, a late second */
        p = fdm_scale32(rp[0], early);
        q = early + fdm_scale32(rp[1], n - early);
    }
    *u = fdm_doc_word(t, a, len, p);
    *v = fdm_doc_word(t, a, len, q);
}

#endif
