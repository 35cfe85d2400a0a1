/* accum.c — per-thread open-addressing tables of exact pair sums. At a flush each table is
 * compacted, mirrored (both triangles) and sorted in place, and the threads' sorted runs are
 * merged row by row into the store's commit. */
#include "accum.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define EMPTY UINT64_MAX

typedef struct entry {
    uint64_t key;     /* row << 32 | column */
    uint64_t lo, hi;  /* the 128-bit sum, split so an entry is 24 bytes */
} entry;

typedef struct table {
    entry *e;
    uint64_t mask, count, sorted;
    int shift;
    char pad[64];     /* keep threads' counters on separate cache lines */
} table;

struct accum {
    uint32_t n_words;
    int threads;
    uint64_t cap, limit;  /* slots per table; entries allowed (half: room to mirror in place) */
    table *t;
    /* row emission */
    uint32_t *cols;
    jsmf_sum *vals;
    uint64_t *pos;        /* per-thread cursor during emission */
};

static inline jsmf_sum get_sum(const entry *e)
{
    return (jsmf_sum)((unsigned __int128)e->hi << 64 | e->lo);
}
static inline void set_sum(entry *e, jsmf_sum v)
{
    e->lo = (uint64_t)v, e->hi = (uint64_t)((unsigned __int128)v >> 64);
}

int accum_new(uint32_t n_words, int threads, uint64_t bytes, accum **out)
{
    *out = NULL;
    if (threads < 1)
        threads = 1;
    accum *a = calloc(1, sizeof *a);
    if (!a)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    a->n_words = n_words;
    a->threads = threads;
    uint64_t per = bytes / (uint64_t)threads / sizeof(entry), cap = 1024;
    while (cap * 2 <= per)
        cap *= 2;
    if (cap > per && per >= 1024)
        cap /= 2;
    a->cap = cap;
    a->limit = cap / 2;
    a->t = calloc((size_t)threads, sizeof *a->t);
    a->cols = malloc(((size_t)n_words + 1) * sizeof *a->cols);
    a->vals = malloc(((size_t)n_words + 1) * sizeof *a->vals);
    a->pos = calloc((size_t)threads, sizeof *a->pos);
    int ok = a->t && a->cols && a->vals && a->pos;
    for (int i = 0; ok && i < threads; i++) {
        table *t = &a->t[i];
        t->e = malloc(cap * sizeof *t->e);
        if (!t->e) {
            ok = 0;
            break;
        }
        t->mask = cap - 1;
        t->shift = 64 - __builtin_ctzll(cap);
    }
    if (!ok) {
        accum_free(a);
        return jsmf_error(JSMF_ENOMEM, "out of memory for the accumulator (%llu bytes)",
                          (unsigned long long)bytes);
    }
    accum_clear(a);
    *out = a;
    return JSMF_OK;
}

void accum_free(accum *a)
{
    if (!a)
        return;
    for (int i = 0; a->t && i < a->threads; i++)
        free(a->t[i].e);
    free(a->t), free(a->cols), free(a->vals), free(a->pos);
    free(a);
}

int accum_threads(const accum *a)
{
    return a->threads;
}

uint64_t accum_limit(const accum *a)
{
    return a->limit;
}

uint64_t accum_room(const accum *a, int t)
{
    return a->limit - a->t[t].count;
}

uint64_t accum_entries(const accum *a)
{
    uint64_t n = 0;
    for (int i = 0; i < a->threads; i++)
        n += a->t[i].count;
    return n;
}

void accum_clear(accum *a)
{
    #pragma omp parallel for num_threads(a->threads) schedule(static, 1)
    for (int i = 0; i < a->threads; i++) {
        table *t = &a->t[i];
        /* all-ones bytes make every key EMPTY */
        memset(t->e, 0xff, (size_t)a->cap * sizeof *t->e);
        t->count = 0, t->sorted = 0;
    }
}

void accum_doc_pairs(const accum *a, const uint32_t *ids, uint32_t n, uint64_t *add)
{
    int T = a->threads;
    for (int t = 0; t < T; t++)
        add[t] = 0;
    for (uint32_t i = 0; i < n; i++)
        add[ids[i] % (uint32_t)T] += n - i;
}

static inline void table_add(table *t, uint64_t key, jsmf_sum v)
{
    uint64_t h = (key * 0x9E3779B97F4A7C15ULL) >> t->shift;
    for (;;) {
        entry *e = &t->e[h];
        if (e->key == key) {
            set_sum(e, get_sum(e) + v);
            return;
        }
        if (e->key == EMPTY) {
            e->key = key;
            set_sum(e, v);
            t->count++;
            return;
        }
        h = (h + 1) & t->mask;
    }
}

/* Thread t adds the pairs (i, j), i <= j, of the rows i it owns. */
static void add_batch_thread(accum *a, const doc_batch *b, int t)
{
    table *tab = &a->t[t];
    uint32_t T = (uint32_t)a->threads;
    for (uint32_t d = 0; d < b->ndocs; d++) {
        const uint32_t *ids = b->ids + b->start[d], *cnt = b->counts + b->start[d];
        uint32_t n = (uint32_t)(b->start[d + 1] - b->start[d]);
        double q = b->q[d];
        for (uint32_t x = 0; x < n; x++) {
            uint32_t i = ids[x];
            if (i % T != (uint32_t)t)
                continue;
            uint64_t hi = cnt[x], row = (uint64_t)i << 32;
            if (hi > 1)
                table_add(tab, row | i, accum_fixed((double)(hi * hi - hi) * q));
            for (uint32_t y = x + 1; y < n; y++)
                table_add(tab, row | ids[y], accum_fixed((double)(hi * cnt[y]) * q));
        }
    }
}

void accum_add_batch(accum *a, const doc_batch *b)
{
    if (a->threads == 1) {
        add_batch_thread(a, b, 0);
        return;
    }
    #pragma omp parallel num_threads(a->threads)
    {
        int t = omp_get_thread_num();
        if (t < a->threads)
            add_batch_thread(a, b, t);
    }
}

static int cmp_entry(const void *x, const void *y)
{
    uint64_t a = ((const entry *)x)->key, b = ((const entry *)y)->key;
    return (a > b) - (a < b);
}

/* Compact, mirror the strict upper triangle, sort: the table becomes a sorted run. */
static void table_to_run(accum *a, table *t)
{
    uint64_t n = 0;
    for (uint64_t i = 0; i < a->cap; i++)
        if (t->e[i].key != EMPTY)
            t->e[n++] = t->e[i];
    uint64_t m = n;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t k = t->e[i].key;
        uint32_t r = (uint32_t)(k >> 32), c = (uint32_t)k;
        if (r != c) {
            t->e[m] = t->e[i];
            t->e[m++].key = (uint64_t)c << 32 | r;
        }
    }
    qsort(t->e, m, sizeof *t->e, cmp_entry);
    t->sorted = m;
}

int accum_prepare_rows(accum *a)
{
    #pragma omp parallel for num_threads(a->threads) schedule(static, 1)
    for (int i = 0; i < a->threads; i++)
        table_to_run(a, &a->t[i]);
    return JSMF_OK;
}

int accum_rows(void *arg, jsmf_emit_row_fn emit, void *txnctx)
{
    accum *a = arg;
    int T = a->threads;
    for (int t = 0; t < T; t++)
        a->pos[t] = 0;
    for (;;) {
        /* the smallest row among the runs' heads; keys are unique across threads */
        uint64_t row = UINT64_MAX;
        for (int t = 0; t < T; t++)
            if (a->pos[t] < a->t[t].sorted) {
                uint64_t r = a->t[t].e[a->pos[t]].key >> 32;
                if (r < row)
                    row = r;
            }
        if (row == UINT64_MAX)
            return JSMF_OK;
        uint32_t n = 0;
        for (;;) {
            int best = -1;
            uint64_t bk = UINT64_MAX;
            for (int t = 0; t < T; t++)
                if (a->pos[t] < a->t[t].sorted) {
                    uint64_t k = a->t[t].e[a->pos[t]].key;
                    if ((k >> 32) == row && k < bk)
                        bk = k, best = t;
                }
            if (best < 0)
                break;
            const entry *e = &a->t[best].e[a->pos[best]++];
            jsmf_sum v = get_sum(e);
            if (v == 0)
                continue; /* a word seen once per document adds nothing on the diagonal */
            a->cols[n] = (uint32_t)bk;
            a->vals[n++] = v;
        }
        if (n) {
            int rc = emit(txnctx, (uint32_t)row, a->cols, a->vals, n);
            if (rc)
                return rc;
        }
    }
}
