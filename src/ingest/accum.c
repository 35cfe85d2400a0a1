/* accum.c — exact pair sums in memory. Pairs (i, j), i <= j, of the F most frequent words
 * (the lowest ids: vocabularies are ordered by document frequency) go to a dense upper
 * triangle; all other pairs to per-thread open-addressing hash tables. Row i belongs to thread
 * i % T in both, so no locks are needed. At a flush each hash table is compacted, mirrored
 * (both triangles) and sorted by row in place, and rows are emitted in order: the dense part
 * (columns < F) then the hashed part (columns >= F) of each row. */
#include "accum.h"

#include "core/bigmem.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "store/flush.h"

#define EMPTY 0 /* keys are stored plus one, so fresh (zero) memory is empty */

/* A flush sorts rows of RADIX_MIN to RADIX_MAX entries (RADIX_MAX: the scratch's size) by an
 * LSD radix sort on the column, 8 bits a pass: two or three linear passes instead of
 * quicksort's ~log2(n). The flushes' table sorting of debdesc 4x at 256M: 1.29 s with
 * quicksort, 0.69-0.83 s with radix from 64 entries (24 and 40 alike, 128 and 256 worse).
 * The scratch comes out of the tables' share: 16384 entries took enough of it at 64M to add
 * checkpoints (debdesc: 74 -> 81, slower than quicksort); 4096 (76) is faster than both. */
#define RADIX_MIN 64
#define RADIX_MAX 4096

typedef struct entry {
    uint64_t key;     /* (row << 32 | column) + 1 in the table; row << 32 | column in a run */
    uint64_t lo, hi;  /* the 128-bit sum, split so an entry is 24 bytes */
} entry;

typedef struct table {
    entry *e;
    uint64_t size, count, sorted; /* slots, entries, sorted run length after a flush */
    uint64_t cap;          /* the accumulator's cap on slots (exceeded only by an oversize doc) */
    uint64_t jump;         /* the size that grows to cap at once */
    uint64_t *next, *end;  /* N + 1 row counters for the flush sort */
    entry *scratch;        /* RADIX_MAX entries: the flush sort's rows by column */
    int failed;            /* growing failed: the batch is lost (out of memory) */
    /* the batch's dense part by row: occurrences (document, position) of each owned row */
    uint32_t *occ_start;   /* owned_rows + 2 offsets, by local row i / T */
    uint32_t *occ_doc, *occ_pos, *doc_p;
    uint64_t occ_cap, doc_cap;
    char pad[64];          /* keep threads' counters on separate cache lines */
} table;

struct accum {
    uint32_t n_words;
    int threads;
    uint32_t F;           /* width of the dense block: pairs with both ids < F */
    jsmf_sum *dense;      /* upper triangle of the F x F block, (i, j) at tri_off(F, i) + j */
    uint64_t dense_cells;
    int hashed;           /* the tables exist (F < N) */
    uint64_t cap, limit;  /* most slots per table; entries allowed (half: room to mirror in place) */
    int dirty;            /* holds a flushed run: clear before adding */
    table *t;
    /* row emission */
    uint32_t *cols;
    jsmf_sum *vals;
    uint64_t *pos;        /* per-thread cursor during emission */
    jsmf_sum *colbuf;     /* a block of dense column parts */
    jsmf_sum *small;      /* per document of a batch, the values of count products < 16 */
    uint32_t small_cap;
    struct adder *adders; /* per thread, the batch being added (accum_add_start) */
    int running;          /* shares run in threads (a batch being added): join them first */
};

/* One thread's share of adding a batch: its rows of the dense block and its table. */
typedef struct adder {
    accum *a;
    const doc_batch *b;
    int t;
    int clear;            /* empty its rows and table first (the batch after a flush) */
    int started;          /* runs in thread tid (else it ran in the caller) */
    pthread_t tid;
} adder;

static void join_adders(accum *a);

/* Rows i < F of the dense block that thread t of T owns (those with i % T == t). */
static inline uint32_t owned_rows(uint32_t F, int T, int t)
{
    return F > (uint32_t)t ? (F - (uint32_t)t + (uint32_t)T - 1) / (uint32_t)T : 0;
}

static inline jsmf_sum get_sum(const entry *e)
{
    return (jsmf_sum)((unsigned __int128)e->hi << 64 | e->lo);
}
static inline void set_sum(entry *e, jsmf_sum v)
{
    e->lo = (uint64_t)v, e->hi = (uint64_t)((unsigned __int128)v >> 64);
}

static inline uint64_t tri_off(uint64_t n, uint64_t i)
{
    return i * n - i * (i - 1) / 2 - i; /* (i, j) of an n-wide upper triangle is at this + j */
}

/* Rows per block when gathering dense column parts (a buffer of about COLBUF_BYTES). */
#define COLBUF_BYTES ((uint64_t)8 << 20)
static uint64_t colblock(const accum *a)
{
    uint64_t B = COLBUF_BYTES / ((uint64_t)a->F * sizeof(jsmf_sum) + 1);
    return B < 1 ? 1 : B > a->F ? a->F : B;
}

/* Bytes of the column buffer: colblock rows of F cells. */
static uint64_t colbuf_bytes(const accum *a)
{
    return colblock(a) * a->F * sizeof(jsmf_sum);
}

/* Bytes of a dense block F wide (its triangle and the flush's column buffer). */
static uint64_t dense_bytes(uint64_t F)
{
    return F ? F * (F + 1) / 2 * sizeof(jsmf_sum) + COLBUF_BYTES : 0;
}

/* Expected checkpoints of a dense block F wide, up to a common factor: a checkpoint comes when
 * the hashed pairs (counted by their bound) fill the tables, so they go as the share of pairs
 * left to the tables over the bytes left to them. Documents are taken as independent draws of
 * their words: a document holds word i with probability df_i / M, so the expected share of
 * its pairs with both words below F is (D_F / D)^2, D_F the sum of df over ids below F, D over
 * all words (debdesc, F = 7430: 0.89 estimated, 0.87 counted). */
static double checkpoint_cost(uint64_t F, double dense_share, uint64_t bytes)
{
    return (1.0 - dense_share) / (double)(bytes - dense_bytes(F));
}

/* The width F of the dense block, at most half the budget. The widest when it takes at least
 * half the pairs: then its adds (a third of a hashed add's cost) and the repeats it absorbs
 * (the pairs of frequent words repeat most, and a repeat takes no table entry) matter more
 * than the entries counted above (debdesc at 256 MiB: 7 checkpoints and 3.2 s with the
 * widest block, 8 and 4.0 s with the narrower one that minimises the count). Otherwise the F
 * of the fewest expected checkpoints: often none, when the frequent words are spread over the
 * ids or no few words hold most pairs. Without df (none counted yet, none given), the widest:
 * vocabularies from `jsmf vocab` are in df order. Blocks narrower than 256 words are not worth
 * a second structure. */
static uint64_t plan_dense_width(uint32_t n_words, uint64_t bytes, const uint64_t *df)
{
    uint64_t Fmax = 0;
    while (Fmax < n_words && dense_bytes(Fmax + 1) <= bytes / 2)
        Fmax++;
    if (Fmax < 256)
        return 0;
    double D = 0, DF = 0;
    for (uint32_t i = 0; df && i < n_words; i++)
        D += (double)df[i], DF += i < Fmax ? (double)df[i] : 0;
    if (D <= 0 || (DF / D) * (DF / D) >= 0.5)
        return Fmax;
    uint64_t best = 0;
    double best_cost = checkpoint_cost(0, 0, bytes);
    DF = 0;
    for (uint64_t F = 1; F <= Fmax; F++) {
        DF += (double)df[F - 1];
        double cost = checkpoint_cost(F, (DF / D) * (DF / D), bytes);
        if (F >= 256 && cost < best_cost)
            best = F, best_cost = cost;
    }
    return best;
}

int accum_dense_fits(uint32_t n_words, uint64_t bytes)
{
    return dense_bytes(n_words) <= bytes;
}

int accum_new(uint32_t n_words, int threads, uint64_t bytes, int mode, const uint64_t *df,
              accum **out)
{
    *out = NULL;
    if (threads < 1)
        threads = 1;
    accum *a = calloc(1, sizeof *a);
    if (!a)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    a->n_words = n_words;
    a->threads = threads;
    a->cols = malloc(((size_t)n_words + 1) * sizeof *a->cols);
    a->vals = malloc(((size_t)n_words + 1) * sizeof *a->vals);
    a->pos = calloc((size_t)threads, sizeof *a->pos);
    a->t = calloc((size_t)threads, sizeof *a->t);
    a->adders = calloc((size_t)threads, sizeof *a->adders);
    if (!a->cols || !a->vals || !a->pos || !a->t || !a->adders) {
        accum_free(a);
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    }
    /* the dense block: everything when it fits, else planned from the words' df */
    uint64_t F = 0;
    if (mode == ACCUM_DENSE || (mode == ACCUM_AUTO && dense_bytes(n_words) <= bytes))
        F = n_words;
    else if (mode == ACCUM_AUTO)
        F = plan_dense_width(n_words, bytes, df);
    a->F = (uint32_t)F;
    for (int i = 0; F && i < threads; i++)
        if (!(a->t[i].occ_start = malloc(((size_t)owned_rows((uint32_t)F, threads, i) + 2) *
                                         sizeof(uint32_t)))) {
            accum_free(a);
            return jsmf_error(JSMF_ENOMEM, "out of memory");
        }
    if (F) {
        a->dense_cells = F * (F + 1) / 2;
        a->dense = big_alloc(a->dense_cells * sizeof *a->dense);
        a->colbuf = big_alloc(colbuf_bytes(a));
        if (!a->dense || !a->colbuf) {
            accum_free(a);
            return jsmf_error(JSMF_ENOMEM, "out of memory for the accumulator (%llu bytes)",
                              (unsigned long long)(a->dense_cells * sizeof(jsmf_sum)));
        }
        uint64_t used = a->dense_cells * sizeof(jsmf_sum) + colbuf_bytes(a);
        bytes = bytes > used ? bytes - used : 0;
    }
    if (F == n_words) {
        a->limit = UINT64_MAX / 4;
        *out = a;
        return JSMF_OK;
    }
    /* tables grow by doubling up to the power of two J, the largest with J <= per - J, then
     * once to cap = per - J slots: old and new coexist while rehashing, so that last growth
     * fills the thread's share, and the last table gets between 1/2 and 3/4 of it */
    a->hashed = 1;
    uint64_t scratch = n_words < RADIX_MAX ? n_words : RADIX_MAX; /* entries a thread */
    uint64_t scratch_all = (uint64_t)threads * scratch * sizeof(entry);
    bytes = bytes > scratch_all ? bytes - scratch_all : 0;
    uint64_t per = bytes / (uint64_t)threads / sizeof(entry), jump = 1024;
    while (jump * 4 <= per)
        jump *= 2;
    uint64_t cap = per >= 2 * jump ? per - jump : jump;
    a->cap = cap;
    a->limit = cap / 2;
    uint64_t start = 1024; /* grows with the data: small inputs touch little memory */
    int ok = 1;
    for (int i = 0; ok && i < threads; i++) {
        table *t = &a->t[i];
        t->e = big_alloc(start * sizeof *t->e);
        t->next = malloc(((size_t)n_words + 1) * sizeof *t->next);
        t->end = malloc(((size_t)n_words + 1) * sizeof *t->end);
        t->scratch = malloc((size_t)scratch * sizeof *t->scratch);
        ok = t->e && t->next && t->end && t->scratch;
        t->size = start, t->cap = cap, t->jump = jump;
    }
    if (!ok) {
        accum_free(a);
        return jsmf_error(JSMF_ENOMEM, "out of memory for the accumulator (%llu bytes)",
                          (unsigned long long)bytes);
    }
    *out = a;
    return JSMF_OK;
}

void accum_free(accum *a)
{
    if (!a)
        return;
    join_adders(a); /* no error of its own: the caller's, if any, is the one to keep */
    for (int i = 0; a->t && i < a->threads; i++) {
        big_free(a->t[i].e, a->t[i].size * sizeof(entry));
        free(a->t[i].next), free(a->t[i].end), free(a->t[i].scratch);
        free(a->t[i].occ_start), free(a->t[i].occ_doc), free(a->t[i].occ_pos), free(a->t[i].doc_p);
    }
    big_free(a->dense, a->dense_cells * sizeof *a->dense);
    big_free(a->colbuf, colbuf_bytes(a));
    free(a->t), free(a->cols), free(a->vals), free(a->pos), free(a->small), free(a->adders);
    free(a);
}

int accum_threads(const accum *a)
{
    return a->threads;
}

uint32_t accum_dense_width(const accum *a)
{
    return a->F;
}

uint64_t accum_limit(const accum *a)
{
    return a->limit;
}

uint64_t accum_room(const accum *a, int t)
{
    if (!a->hashed)
        return a->limit;
    return a->t[t].count < a->limit ? a->limit - a->t[t].count : 0;
}

uint64_t accum_entries(const accum *a)
{
    if (a->dirty) /* cleared, nothing added since: the dense cells still hold the last flush */
        return 0;
    uint64_t n = a->dense_cells; /* an upper bound: the emission skips zeros */
    for (int i = 0; a->hashed && i < a->threads; i++)
        n += a->t[i].count;
    return n;
}

void accum_clear(accum *a)
{
    for (int i = 0; i < a->threads; i++)
        a->t[i].count = 0;
    a->dirty = 1; /* zeroed only when more is added: the last flush of a run costs nothing */
}

/* Thread t's part of emptying the accumulator after a flush: its own rows of the dense block and
 * its own table, as it owns them when adding (row i is thread i % T's in both). */
static void clear_thread(accum *a, int t)
{
    uint64_t F = a->F, T = (uint64_t)a->threads;
    for (uint64_t i = (uint64_t)t; i < F; i += T)
        memset(a->dense + tri_off(F, i) + i, 0, (F - i) * sizeof *a->dense); /* (i, i..F) */
    if (!a->hashed)
        return;
    table *tab = &a->t[t];
    tab->count = 0, tab->sorted = 0;
    if (tab->size > a->cap) {
        /* grown past the budget by an oversize document: back to the budget */
        entry *e = big_alloc(a->cap * sizeof *e);
        if (e) {
            big_free(tab->e, tab->size * sizeof *tab->e);
            tab->e = e, tab->size = a->cap;
            return;
        }
    }
    memset(tab->e, 0, (size_t)tab->size * sizeof *tab->e);
}

void accum_doc_pairs(const accum *a, const uint32_t *ids, uint32_t n, uint64_t *add)
{
    int T = a->threads;
    for (int t = 0; t < T; t++)
        add[t] = 0;
    if (!a->hashed)
        return;
    /* ids are sorted: the first p are in the dense block, and so are their pairs among them */
    uint32_t p = 0;
    while (p < n && ids[p] < a->F)
        p++;
    for (uint32_t i = 0; i < n; i++)
        add[ids[i] % (uint32_t)T] += i < p ? n - p : n - i;
}

static void table_grow(table *t);

/* The home slot of a key: the high bits of a multiplicative hash scaled to the table's size (any
 * size; for a power of two, the top bits). */
static inline uint64_t home_slot(uint64_t key, uint64_t size)
{
    return (uint64_t)(((unsigned __int128)(key * 0x9E3779B97F4A7C15ULL) * size) >> 64);
}

static inline void table_add(table *t, uint64_t key, jsmf_sum v)
{
    if (__builtin_expect(t->failed, 0))
        return;
    key += 1;
    uint64_t h = home_slot(key, t->size);
    for (;;) {
        entry *e = &t->e[h];
        if (e->key == key) {
            set_sum(e, get_sum(e) + v);
            return;
        }
        if (e->key == EMPTY) {
            e->key = key;
            set_sum(e, v);
            if (++t->count > t->size / 2)
                table_grow(t);
            return;
        }
        if (++h == t->size)
            h = 0;
    }
}

/* Double the table, or grow it to the cap when doubling would pass it (beyond the cap only for
 * an oversize document: the ingest flushes before that otherwise). */
static void table_grow(table *t)
{
    uint64_t old_size = t->size, size = old_size * 2;
    if (old_size < t->cap && (size > t->cap || old_size == t->jump))
        size = t->cap;
    entry *old = t->e, *e = big_alloc(size * sizeof *e);
    if (!e) {
        t->failed = 1; /* the ingest fails without committing */
        return;
    }
    t->e = e, t->size = size;
    for (uint64_t i = 0; i < old_size; i++) {
        if (old[i].key == EMPTY)
            continue;
        uint64_t h = home_slot(old[i].key, size);
        while (e[h].key != EMPTY)
            if (++h == size)
                h = 0;
        e[h] = old[i];
    }
    big_free(old, old_size * sizeof *old);
}

/* Products h_i h_j below this come from a per-document table of their fixed-point values. */
#define SMALL_PRODUCTS 16

/* The fixed-point value of product k of document counts: the table's entry when small (the
 * same bits as computing it: accum_fixed((double)k * q) either way). */
static inline jsmf_sum pair_value(const jsmf_sum *small, uint64_t k, double q)
{
    return k < SMALL_PRODUCTS ? small[k] : accum_fixed((double)k * q);
}

/* Room for the thread's occurrence lists of a batch of ndocs documents and nids ids. */
static int occ_reserve(table *tab, uint32_t ndocs, uint64_t nids)
{
    if (nids > tab->occ_cap) {
        uint32_t *d = realloc(tab->occ_doc, nids * sizeof *d);
        if (d)
            tab->occ_doc = d;
        uint32_t *p = d ? realloc(tab->occ_pos, nids * sizeof *p) : NULL;
        if (!p)
            return -1;
        tab->occ_pos = p, tab->occ_cap = nids;
    }
    if (ndocs > tab->doc_cap) {
        uint32_t *p = realloc(tab->doc_p, ndocs * sizeof *p);
        if (!p)
            return -1;
        tab->doc_p = p, tab->doc_cap = ndocs;
    }
    return 0;
}

/* The dense block's pairs of the rows thread t owns, row by row: a counting sort of the
 * batch's occurrences of those words first, so that every document adding to row i does so
 * while the row is in cache (a long document's pairs otherwise land in hundreds of rows of
 * many KiB each, one cache miss per pair). */
static void add_dense_rows(accum *a, const doc_batch *b, int t, const jsmf_sum *small)
{
    table *tab = &a->t[t];
    uint32_t T = (uint32_t)a->threads, F = a->F, rows = owned_rows(F, a->threads, t);
    if (occ_reserve(tab, b->ndocs, 0)) {
        tab->failed = 1;
        return;
    }
    uint32_t *start = tab->occ_start;
    memset(start, 0, ((size_t)rows + 2) * sizeof *start);
    for (uint32_t d = 0; d < b->ndocs; d++) {
        const uint32_t *ids = b->ids + b->start[d];
        uint32_t n = (uint32_t)(b->start[d + 1] - b->start[d]), p = 0;
        while (p < n && ids[p] < F)
            p++;
        tab->doc_p[d] = p;
        for (uint32_t x = 0; x < p; x++)
            if (ids[x] % T == (uint32_t)t)
                start[ids[x] / T + 2]++;
    }
    for (uint32_t r = 0; r < rows; r++)
        start[r + 2] += start[r + 1];
    if (occ_reserve(tab, 0, start[rows + 1])) { /* this thread's share of the ids */
        tab->failed = 1;
        return;
    }
    for (uint32_t d = 0; d < b->ndocs; d++) { /* start[r + 1] ends as row r's first slot */
        const uint32_t *ids = b->ids + b->start[d];
        for (uint32_t x = 0; x < tab->doc_p[d]; x++)
            if (ids[x] % T == (uint32_t)t) {
                uint32_t at = start[ids[x] / T + 1]++;
                tab->occ_doc[at] = d, tab->occ_pos[at] = x;
            }
    }
    for (uint32_t r = 0; r < rows; r++) {
        uint32_t i = r * T + (uint32_t)t;
        jsmf_sum *row = a->dense + tri_off(F, i);
        for (uint32_t o = start[r]; o < start[r + 1]; o++) {
            uint32_t d = tab->occ_doc[o], x = tab->occ_pos[o], p = tab->doc_p[d];
            const uint32_t *ids = b->ids + b->start[d], *cnt = b->counts + b->start[d];
            const jsmf_sum *sm = small + (size_t)d * SMALL_PRODUCTS;
            double q = b->q[d];
            uint64_t hi = cnt[x];
            if (hi > 1)
                row[i] += pair_value(sm, hi * hi - hi, q);
            if (hi == 1)
                for (uint32_t y = x + 1; y < p; y++)
                    row[ids[y]] += pair_value(sm, cnt[y], q);
            else
                for (uint32_t y = x + 1; y < p; y++)
                    row[ids[y]] += pair_value(sm, hi * cnt[y], q);
        }
    }
}

/* Pairs ahead whose home slot the table adds prefetch: a table much larger than the caches
 * makes each add a miss, and the probe loop keeps few of them in flight (hash tables only,
 * debdesc in the accumulation harness: 0.43 -> 0.36 s at 1G, 0.69 -> 0.62 s at 256M; 4 and
 * 16 no better). */
#define TABLE_AHEAD 8

/* Thread t adds the pairs (i, j), i <= j, of the rows i it owns: the dense block where both
 * ids are below F (a prefix of the sorted ids), row by row; the tables for the rest. */
static void add_batch_thread(accum *a, const doc_batch *b, int t, const jsmf_sum *small)
{
    if (a->F)
        add_dense_rows(a, b, t, small);
    if (!a->hashed)
        return;
    table *tab = &a->t[t];
    uint32_t T = (uint32_t)a->threads, F = a->F;
    for (uint32_t d = 0; d < b->ndocs; d++) {
        const uint32_t *ids = b->ids + b->start[d], *cnt = b->counts + b->start[d];
        uint32_t n = (uint32_t)(b->start[d + 1] - b->start[d]);
        const jsmf_sum *sm = small + (size_t)d * SMALL_PRODUCTS;
        double q = b->q[d];
        uint32_t p = 0;
        while (p < n && ids[p] < F)
            p++;
        for (uint32_t x = 0; x < n; x++) {
            uint32_t i = ids[x];
            if (i % T != (uint32_t)t)
                continue;
            uint64_t hi = cnt[x], y = x < p ? p : x + 1;
            if (x >= p && hi > 1)
                table_add(tab, (uint64_t)i << 32 | i, pair_value(sm, hi * hi - hi, q));
            uint64_t rowkey = (uint64_t)i << 32;
            for (; y < n; y++) {
                if (y + TABLE_AHEAD < n) {
                    uint64_t ahead = (rowkey | ids[y + TABLE_AHEAD]) + 1;
                    __builtin_prefetch(&tab->e[home_slot(ahead, tab->size)], 1);
                }
                table_add(tab, rowkey | ids[y], pair_value(sm, hi * cnt[y], q));
            }
        }
    }
}

/* Run fn(w) in a thread of its own, or now in the caller when no thread is to be had (the
 * threads' shares are disjoint, so either way gives the same result). */
static void run_share(adder *w, void *(*fn)(void *))
{
    w->started = pthread_create(&w->tid, NULL, fn, w) == 0;
    if (!w->started)
        fn(w);
}

static void join_adders(accum *a)
{
    for (int t = 0; a->running && t < a->threads; t++)
        if (a->adders[t].started)
            pthread_join(a->adders[t].tid, NULL);
    a->running = 0;
}

static void *add_job(void *arg)
{
    adder *w = arg;
    if (w->clear)
        clear_thread(w->a, w->t);
    add_batch_thread(w->a, w->b, w->t, w->a->small);
    return NULL;
}

int accum_add_start(accum *a, const doc_batch *b)
{
    int rc = accum_add_wait(a);
    if (rc)
        return rc;
    if (b->ndocs > a->small_cap) {
        jsmf_sum *sm = realloc(a->small, (size_t)b->ndocs * SMALL_PRODUCTS * sizeof *sm);
        if (!sm)
            return jsmf_error(JSMF_ENOMEM, "out of memory for a batch");
        a->small = sm, a->small_cap = b->ndocs;
    }
    /* most pairs are of words seen once or twice: their values are a few constants */
    for (uint32_t d = 0; d < b->ndocs; d++)
        for (uint64_t k = 0; k < SMALL_PRODUCTS; k++)
            a->small[(size_t)d * SMALL_PRODUCTS + k] = accum_fixed((double)k * b->q[d]);
    /* threads of our own rather than OpenMP's: a team's workers spin between batches on the
     * cores that reading needs */
    for (int t = 0; t < a->threads; t++) {
        adder *w = &a->adders[t];
        *w = (adder){.a = a, .b = b, .t = t, .clear = a->dirty};
        run_share(w, add_job);
    }
    a->dirty = 0;
    a->running = 1;
    return JSMF_OK;
}

int accum_add_wait(accum *a)
{
    if (!a->running)
        return JSMF_OK;
    join_adders(a);
    for (int t = 0; t < a->threads; t++)
        if (a->t[t].failed)
            return jsmf_error(JSMF_ENOMEM, "out of memory growing the accumulator");
    return JSMF_OK;
}

/* In-place sort of entries by key: insertion sort for short runs, else quicksort on the
 * median of three (no extra memory: the budget must hold). */
static void sort_entries(entry *e, uint64_t n)
{
    while (n > 24) {
        uint64_t a = e[0].key, b = e[n / 2].key, c = e[n - 1].key;
        uint64_t p = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        uint64_t i = 0, j = n - 1;
        for (;;) {
            while (e[i].key < p)
                i++;
            while (e[j].key > p)
                j--;
            if (i >= j)
                break;
            entry t = e[i];
            e[i++] = e[j], e[j--] = t;
        }
        /* recurse into the smaller part, loop on the larger */
        uint64_t left = j + 1;
        if (left < n - left) {
            sort_entries(e, left);
            e += left, n -= left;
        } else {
            sort_entries(e + left, n - left);
            n = left;
        }
    }
    for (uint64_t i = 1; i < n; i++) {
        entry t = e[i];
        uint64_t j = i;
        while (j > 0 && e[j - 1].key > t.key)
            e[j] = e[j - 1], j--;
        e[j] = t;
    }
}

/* Sort e[0..n) (keys of one row) by column, through tmp (n entries); cols <= maxcol. */
static void radix_sort_row(entry *e, uint64_t n, entry *tmp, uint32_t maxcol)
{
    entry *src = e, *dst = tmp;
    for (unsigned shift = 0; shift < 32 && (shift == 0 || (maxcol >> shift)); shift += 8) {
        uint64_t at[256] = {0};
        for (uint64_t i = 0; i < n; i++)
            at[(uint32_t)src[i].key >> shift & 255]++;
        if (at[(uint32_t)src[0].key >> shift & 255] == n)
            continue; /* one digit for all: nothing to move */
        for (uint64_t d = 0, sum = 0; d < 256; d++) {
            uint64_t c = at[d];
            at[d] = sum, sum += c;
        }
        for (uint64_t i = 0; i < n; i++)
            dst[at[(uint32_t)src[i].key >> shift & 255]++] = src[i];
        entry *x = src;
        src = dst, dst = x;
    }
    if (src != e)
        memcpy(e, src, n * sizeof *e);
}

/* Walks of the in-place permutation by row run interleaved: each step of a walk loads the
 * entry its predecessor displaces, a cache miss that depends on the one before, so a single walk
 * leaves the memory system idle (on debdesc it was 72 % of a flush's sorting time). */
#define WALKERS 8

typedef struct walker {
    entry hand;      /* the displaced entry it carries */
    uint64_t hole;   /* the slot it emptied, to be filled by an entry of row home */
    uint32_t home;
} walker;

static inline uint32_t row_of(const entry *x)
{
    return (uint32_t)(x->key >> 32);
}

/* Give w the next slot not yet placed whose entry belongs elsewhere (those already in their row
 * stay); *r is the first row that may have such slots. 0: none left. */
static int walk_start(entry *e, uint32_t n_words, uint64_t *next, const uint64_t *end,
                      uint32_t *r, walker *w)
{
    while (*r < n_words) {
        if (next[*r] == end[*r + 1]) {
            ++*r;
            continue;
        }
        uint64_t h = next[*r]++;
        if (row_of(&e[h]) == *r)
            continue;
        w->hand = e[h], w->hole = h, w->home = *r;
        return 1;
    }
    return 0;
}

/* Group entries by row in place (American flag sort on the row): slots [end[r], next[r]) of row
 * r are claimed, the rest still hold entries to place; then sort each row. */
static void sort_by_row(entry *e, uint64_t n, uint32_t n_words, uint64_t *next, uint64_t *end,
                        entry *scratch)
{
    memset(end, 0, ((size_t)n_words + 1) * sizeof *end);
    for (uint64_t i = 0; i < n; i++)
        end[row_of(&e[i]) + 1]++;
    for (uint32_t r = 0; r < n_words; r++)
        end[r + 1] += end[r];
    for (uint32_t r = 0; r < n_words; r++)
        next[r] = end[r];
    walker w[WALKERS];
    int live[WALKERS], active = 0;
    uint32_t r = 0;
    for (int k = 0; k < WALKERS; k++)
        active += live[k] = walk_start(e, n_words, next, end, &r, &w[k]);
    while (active) {
        for (int k = 0; k < WALKERS; k++) {
            if (!live[k])
                continue;
            uint32_t tr = row_of(&w[k].hand);
            if (tr == w[k].home) { /* the walk closes: its entry fills the hole it began with */
                e[w[k].hole] = w[k].hand;
                if (!(live[k] = walk_start(e, n_words, next, end, &r, &w[k])))
                    active--;
                continue;
            }
            if (next[tr] == end[tr + 1]) {
                /* row tr's slots are all claimed: the one left is another walk's hole; fill
                 * it, take over that walk's entry, and free it */
                int j = 0;
                while (!live[j] || w[j].home != tr)
                    j++;
                e[w[j].hole] = w[k].hand;
                w[k].hand = w[j].hand;
                if (!(live[j] = walk_start(e, n_words, next, end, &r, &w[j])))
                    active--;
                continue;
            }
            uint64_t p = next[tr]++;
            entry u = e[p];
            e[p] = w[k].hand;
            w[k].hand = u;
            __builtin_prefetch(&e[next[row_of(&u)]], 1);
        }
    }
    for (uint32_t q = 0; q < n_words; q++) {
        uint64_t k = end[q + 1] - end[q];
        if (k >= RADIX_MIN && k <= RADIX_MAX)
            radix_sort_row(e + end[q], k, scratch, n_words - 1);
        else
            sort_entries(e + end[q], k);
    }
}

/* Compact, mirror the strict upper triangle, sort: the table becomes a sorted run. */
static void table_to_run(accum *a, table *t)
{
    uint64_t n = 0, slots = t->size;
    for (uint64_t i = 0; i < slots; i++)
        if (t->e[i].key != EMPTY) {
            t->e[n] = t->e[i];
            t->e[n++].key -= 1;
        }
    uint64_t m = n;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t k = t->e[i].key;
        uint32_t r = (uint32_t)(k >> 32), c = (uint32_t)k;
        if (r != c) {
            t->e[m] = t->e[i];
            t->e[m++].key = (uint64_t)c << 32 | r;
        }
    }
    sort_by_row(t->e, m, a->n_words, t->next, t->end, t->scratch);
    t->sorted = m;
}

static void *table_job(void *arg)
{
    adder *w = arg;
    table_to_run(w->a, &w->a->t[w->t]);
    return NULL;
}

int accum_prepare_rows(accum *a)
{
    int rc = accum_add_wait(a);
    if (rc || !a->hashed || a->dirty) /* dirty: nothing added since the last flush; its stale
                                         runs fill the tables and must not be mirrored again */
        return rc;
    /* table 0 in the caller, the others in threads (not OpenMP's: see accum_add_start) */
    for (int t = 0; t < a->threads; t++)
        a->adders[t] = (adder){.a = a, .t = t};
    a->running = 1;
    for (int t = 1; t < a->threads; t++)
        run_share(&a->adders[t], table_job);
    table_job(&a->adders[0]);
    join_adders(a);
    return JSMF_OK;
}

/* Append row r's dense part (columns < F) to cols/vals; low = its column part (i < r). */
static uint32_t dense_part(const accum *a, uint64_t r, const jsmf_sum *low, uint32_t n)
{
    for (uint64_t i = 0; i < r; i++)
        if (low[i])
            a->cols[n] = (uint32_t)i, a->vals[n++] = low[i];
    const jsmf_sum *row = a->dense + tri_off(a->F, r);
    for (uint64_t j = r; j < a->F; j++)
        if (row[j])
            a->cols[n] = (uint32_t)j, a->vals[n++] = row[j];
    return n;
}

/* Append row r's hashed entries: the runs' heads at row r, smallest key first (keys are unique
 * across threads). */
static uint32_t hash_part(accum *a, uint64_t r, uint32_t n)
{
    int T = a->threads;
    for (;;) {
        int best = -1;
        uint64_t bk = UINT64_MAX;
        for (int t = 0; t < T; t++)
            if (a->pos[t] < a->t[t].sorted) {
                uint64_t k = a->t[t].e[a->pos[t]].key;
                if ((k >> 32) == r && k < bk)
                    bk = k, best = t;
            }
        if (best < 0)
            return n;
        const entry *e = &a->t[best].e[a->pos[best]++];
        jsmf_sum v = get_sum(e);
        if (v != 0)
            a->cols[n] = (uint32_t)bk, a->vals[n++] = v;
    }
}

/* The next row with hashed entries at or after r (UINT64_MAX: none). */
static uint64_t next_hashed_row(const accum *a)
{
    uint64_t row = UINT64_MAX;
    for (int t = 0; a->hashed && t < a->threads; t++)
        if (a->pos[t] < a->t[t].sorted) {
            uint64_t k = a->t[t].e[a->pos[t]].key >> 32;
            if (k < row)
                row = k;
        }
    return row;
}

/* Rows ahead whose segment the gather prefetches (2, 4 and 8 measured alike). */
#define GATHER_AHEAD 4

/* buf[(r - r0) * r1 + i] = cell (i, r) of the dense block for r0 <= r < r1, i < r. Each row i
 * above is read as one segment, and the segments of the rows GATHER_AHEAD further are
 * prefetched, since a segment's first lines are a cache miss each. One thread: the other
 * core is the store's spill thread's (with OpenMP here, an idle worker spinning between
 * blocks took its time: debdesc's checkpoint 0.74 s, 0.65 s on one thread). */
static void gather_columns(const accum *a, uint64_t r0, uint64_t r1, jsmf_sum *buf)
{
    uint64_t F = a->F;
    for (uint64_t i = 0; i < r1 - 1; i++) {
        const jsmf_sum *row = a->dense + tri_off(F, i);
        if (i + GATHER_AHEAD < r1 - 1) {
            uint64_t k = i + GATHER_AHEAD, c0 = k + 1 > r0 ? k + 1 : r0;
            const char *ahead = (const char *)(a->dense + tri_off(F, k) + c0);
            for (uint64_t b = 0; b < (r1 - c0) * sizeof(jsmf_sum); b += 64)
                __builtin_prefetch(ahead + b);
        }
        for (uint64_t c = i + 1 > r0 ? i + 1 : r0; c < r1; c++)
            buf[(c - r0) * r1 + i] = row[c];
    }
}

int accum_rows(void *arg, jsmf_emit_row_fn emit, void *txnctx)
{
    accum *a = arg;
    uint64_t F = a->F, B = F ? colblock(a) : 1;
    int rc = JSMF_OK;
    for (int t = 0; t < a->threads; t++)
        a->pos[t] = 0;
    /* rows of the dense block, a block of rows at a time: their column parts are gathered
     * reading each row above as one contiguous segment */
    for (uint64_t r0 = 0; r0 < F && !rc; r0 += B) {
        uint64_t r1 = r0 + B < F ? r0 + B : F;
        jsmf_sum *buf = a->colbuf;
        gather_columns(a, r0, r1, buf);
        for (uint64_t r = r0; r < r1 && !rc; r++) {
            uint32_t n = dense_part(a, r, buf + (r - r0) * r1, 0);
            if (a->hashed)
                n = hash_part(a, r, n);
            if (n)
                rc = emit(txnctx, (uint32_t)r, a->cols, a->vals, n);
        }
    }
    /* the remaining rows have hashed entries only */
    for (uint64_t r; !rc && (r = next_hashed_row(a)) != UINT64_MAX;) {
        uint32_t n = hash_part(a, r, 0);
        if (n)
            rc = emit(txnctx, (uint32_t)r, a->cols, a->vals, n);
    }
    return rc;
}
