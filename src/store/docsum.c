/* docsum.c — the documents of a checkpoint window (ingest) or of a store (docrows.c), and the rows of their C computed one row at
 * a time (docsum.h): row i = sum over the documents m holding word i of h_i h_m / (n (n - 1)),
 * added into a dense row buffer per thread and gathered in column order through a bitmap. */
#include "docsum.h"

#include "core/bigmem.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "flush.h" /* accum_fixed: the same contribution bits as the accumulators */
#include "codec.h" /* row encoding */

/* Bytes kept per distinct word of a document: its id and count, and, once indexed, the
 * document and count in the word's posting list. Per document: its start, q and the value of
 * a product of 1. */
#define ID_BYTES 16
#define DOC_BYTES 32
/* The rows computed between two emissions are encoded into an arena of this share of the
 * budget (at least one full row), by the threads that sum them: encoding took as long as
 * summing, and emitting encoded rows is a copy. */
#define ARENA_SHARE 8
/* ... and at most this: fresh memory costs a page fault a page, and a block's rows take a few
 * megabytes encoded (a 40k-document window of the planted 100k-word corpus: 3.9 s with 128 MiB,
 * 6.0 s with 512 MiB) */
#define ARENA_MAX (64ull << 20)

typedef struct worker {
    jsmf_sum *dense; /* N sums, zero outside the row being summed */
    uint64_t *bits;  /* the columns touched in it */
    uint32_t *cols;  /* the row gathered, before encoding */
    jsmf_sum *vals;
} worker;

struct docsum {
    uint32_t n_words;
    int threads;
    uint64_t room;               /* bytes for documents */
    uint64_t cap_ids, cap_docs;  /* what the arrays were sized for */
    uint64_t nids, ndocs;
    uint32_t *ids, *counts;      /* cap_ids */
    uint64_t *start;             /* cap_docs + 1 */
    double *q;
    jsmf_sum *one;               /* accum_fixed(q): the value of a product of counts 1 */
    /* the index by word (docsum_prepare_rows) */
    int indexed;
    uint64_t *post_start;        /* N + 1 */
    uint32_t *post_doc, *post_cnt;
    uint64_t *row_work;          /* N: additions row i takes (its bound on entries) */
    /* emission */
    uint64_t arena_cap;          /* bytes */
    unsigned char *arena;
    uint64_t *row_off, *row_len; /* N: a block's rows' places in the arena and their sizes */
    uint32_t *row_ent;           /* N: their entries */
    worker *w;
    /* rows handed out as sums (docsum_sum_block): entries of a block of rows */
    uint64_t dcap;
    uint32_t *dcols;
    jsmf_sum *dvals;
    uint32_t blk_r0;
};

static uint64_t worker_bytes(uint32_t n_words)
{
    return (uint64_t)n_words * (2 * sizeof(jsmf_sum) + 4) + ((uint64_t)n_words + 63) / 64 * 8;
}

static uint64_t arena_bytes(uint32_t n_words, uint64_t bytes)
{
    uint64_t a = bytes / ARENA_SHARE, row = store_row_bytes(n_words);
    a = a > ARENA_MAX ? ARENA_MAX : a;
    return a < row ? row : a;
}

uint64_t docsum_fixed_bytes(uint32_t n_words, int threads)
{
    /* workers, the row index arrays (post_start, row_work, row_off, row_len, row_ent), one row
     * of arena */
    return (uint64_t)threads * worker_bytes(n_words) + (uint64_t)n_words * (8 * 4 + 4) +
           store_row_bytes(n_words);
}

void docsum_free(docsum *d)
{
    if (!d)
        return;
    big_free(d->ids, d->cap_ids * 4), big_free(d->counts, d->cap_ids * 4);
    big_free(d->post_doc, d->cap_ids * 4), big_free(d->post_cnt, d->cap_ids * 4);
    big_free(d->start, (d->cap_docs + 1) * 8), big_free(d->q, d->cap_docs * 8);
    big_free(d->one, d->cap_docs * sizeof(jsmf_sum));
    free(d->post_start), free(d->row_work), free(d->row_off), free(d->row_len);
    free(d->row_ent);
    big_free(d->arena, d->arena_cap);
    big_free(d->dcols, d->dcap * 4), big_free(d->dvals, d->dcap * sizeof(jsmf_sum));
    for (int t = 0; d->w && t < d->threads; t++) {
        big_free(d->w[t].dense, (size_t)d->n_words * sizeof(jsmf_sum));
        free(d->w[t].bits), free(d->w[t].cols), free(d->w[t].vals);
    }
    free(d->w);
    free(d);
}

int docsum_new(uint32_t n_words, int threads, uint64_t bytes, docsum **out)
{
    *out = NULL;
    docsum *d = calloc(1, sizeof *d);
    if (!d)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    d->n_words = n_words, d->threads = threads;
    uint64_t fixed = docsum_fixed_bytes(n_words, threads);
    d->arena_cap = arena_bytes(n_words, bytes);
    fixed += d->arena_cap - store_row_bytes(n_words);
    d->room = bytes > fixed + (1u << 20) ? bytes - fixed : (1u << 20);
    /* address space for either extreme (all ids, or all documents); only what is used is
     * touched, so the resident size follows the documents held */
    d->cap_ids = d->room / ID_BYTES + 1, d->cap_docs = d->room / DOC_BYTES + 1;
    d->ids = big_alloc(d->cap_ids * 4), d->counts = big_alloc(d->cap_ids * 4);
    d->post_doc = big_alloc(d->cap_ids * 4), d->post_cnt = big_alloc(d->cap_ids * 4);
    d->start = big_alloc((d->cap_docs + 1) * 8), d->q = big_alloc(d->cap_docs * 8);
    d->one = big_alloc(d->cap_docs * sizeof(jsmf_sum));
    d->post_start = malloc(((size_t)n_words + 1) * 8);
    d->row_work = malloc((size_t)n_words * 8);
    d->row_off = malloc((size_t)n_words * 8);
    d->row_len = malloc((size_t)n_words * 8);
    d->row_ent = malloc((size_t)n_words * 4);
    d->arena = big_alloc(d->arena_cap);
    d->w = calloc((size_t)threads, sizeof *d->w);
    int ok = d->ids && d->counts && d->post_doc && d->post_cnt && d->start && d->q && d->one &&
             d->post_start && d->row_work && d->row_off && d->row_len && d->row_ent && d->arena &&
             d->w;
    for (int t = 0; ok && t < threads; t++) {
        worker *w = &d->w[t];
        w->dense = big_alloc((size_t)n_words * sizeof(jsmf_sum));
        w->bits = calloc(((size_t)n_words + 63) / 64, 8);
        w->cols = malloc((size_t)n_words * 4);
        w->vals = malloc((size_t)n_words * sizeof(jsmf_sum));
        ok = w->dense && w->bits && w->cols && w->vals;
    }
    if (!ok) {
        docsum_free(d);
        return jsmf_error(JSMF_ENOMEM, "out of memory for the document buffer");
    }
    d->start[0] = 0;
    *out = d;
    return JSMF_OK;
}

int docsum_fits(const docsum *d, uint32_t k)
{
    return (d->nids + k) * ID_BYTES + (d->ndocs + 1) * DOC_BYTES <= d->room;
}

uint64_t docsum_limit(const docsum *d)
{
    return d->room > DOC_BYTES ? (d->room - DOC_BYTES) / ID_BYTES : 0;
}

uint64_t docsum_room(const docsum *d)
{
    return d->room;
}

uint64_t docsum_need(uint64_t docs, uint64_t ids)
{
    return ids * ID_BYTES + (docs + 1) * DOC_BYTES;
}

uint64_t docsum_docs(const docsum *d)
{
    return d->ndocs;
}

int docsum_add(docsum *d, const uint32_t *ids, const uint32_t *counts, uint32_t k, double q)
{
    if (!docsum_fits(d, k))
        return jsmf_error(JSMF_ENOMEM, "document buffer full (internal error)");
    memcpy(d->ids + d->nids, ids, (size_t)k * 4);
    memcpy(d->counts + d->nids, counts, (size_t)k * 4);
    d->q[d->ndocs] = q;
    d->one[d->ndocs] = accum_fixed(q);
    d->nids += k;
    d->start[++d->ndocs] = d->nids;
    d->indexed = 0;
    return JSMF_OK;
}

void docsum_clear(docsum *d)
{
    d->nids = 0, d->ndocs = 0, d->indexed = 0;
}

/* Posting lists by a counting sort on the word: each lists its documents in order. */
int docsum_prepare_rows(docsum *d)
{
    if (d->indexed)
        return JSMF_OK;
    uint32_t N = d->n_words;
    uint64_t *ps = d->post_start;
    memset(ps, 0, ((size_t)N + 1) * 8);
    memset(d->row_work, 0, (size_t)N * 8);
    for (uint64_t m = 0; m < d->ndocs; m++) {
        uint64_t k = d->start[m + 1] - d->start[m];
        for (uint64_t x = d->start[m]; x < d->start[m + 1]; x++)
            ps[d->ids[x] + 1]++, d->row_work[d->ids[x]] += k;
    }
    for (uint32_t i = 0; i < N; i++)
        ps[i + 1] += ps[i];
    for (uint64_t m = 0; m < d->ndocs; m++)
        for (uint64_t x = d->start[m]; x < d->start[m + 1]; x++) {
            uint64_t at = ps[d->ids[x]]++;
            d->post_doc[at] = (uint32_t)m, d->post_cnt[at] = d->counts[x];
        }
    memmove(ps + 1, ps, (size_t)N * 8); /* each advanced to the next one's start */
    ps[0] = 0;
    d->indexed = 1;
    return JSMF_OK;
}

static inline void add_at(worker *w, uint32_t j, jsmf_sum v)
{
    w->dense[j] += v;
    w->bits[j >> 6] |= 1ULL << (j & 63);
}

/* Row i into cols/vals (sorted by column); returns its entry count. Zero contributions (the
 * diagonal of a word seen once in a document) are not entries, as in the other accumulators. */
static uint32_t sum_row(const docsum *d, worker *w, uint32_t i, uint32_t *cols, jsmf_sum *vals)
{
    for (uint64_t p = d->post_start[i]; p < d->post_start[i + 1]; p++) {
        uint64_t m = d->post_doc[p], hi = d->post_cnt[p];
        const uint32_t *id = d->ids + d->start[m], *cnt = d->counts + d->start[m];
        uint64_t k = d->start[m + 1] - d->start[m];
        double q = d->q[m];
        if (hi == 1) { /* the usual case: most products are 1 x 1 */
            jsmf_sum one = d->one[m];
            for (uint64_t x = 0; x < k; x++)
                if (id[x] != i)
                    add_at(w, id[x], cnt[x] == 1 ? one : accum_fixed((double)cnt[x] * q));
        } else {
            for (uint64_t x = 0; x < k; x++) {
                uint64_t h = id[x] == i ? hi * hi - hi : hi * cnt[x];
                add_at(w, id[x], accum_fixed((double)h * q));
            }
        }
    }
    uint32_t n = 0;
    uint64_t words = ((uint64_t)d->n_words + 63) / 64;
    for (uint64_t b = 0; b < words; b++) {
        uint64_t x = w->bits[b];
        if (!x)
            continue;
        w->bits[b] = 0;
        do {
            uint32_t j = (uint32_t)(b * 64 + (uint64_t)__builtin_ctzll(x));
            cols[n] = j, vals[n++] = w->dense[j];
            w->dense[j] = 0;
            x &= x - 1;
        } while (x);
    }
    return n;
}

/* Row i summed and encoded into the arena at its place. */
static void encode_row(docsum *d, uint32_t i, uint32_t r)
{
    worker *w = &d->w[omp_get_thread_num()];
    uint32_t n = d->row_work[i] ? sum_row(d, w, i, w->cols, w->vals) : 0;
    d->row_ent[i - r] = n;
    d->row_len[i - r] = n ? store_encode_row(d->arena + d->row_off[i - r], i, w->cols,
                                                  w->vals, n)
                          : 0;
}

int docsum_rows(void *arg, jsmf_emit_encoded_fn emit, void *txnctx)
{
    docsum *d = arg;
    uint32_t N = d->n_words;
    int rc = docsum_prepare_rows(d);
    for (uint32_t r = 0; r < N && !rc;) {
        /* a block of rows whose bounds fill the arena, computed in parallel, emitted in order */
        uint64_t used = 0;
        uint32_t r1 = r;
        for (; r1 < N; r1++) {
            uint64_t b = store_row_bytes(d->row_work[r1] < N ? (uint32_t)d->row_work[r1] : N);
            if (r1 > r && used + b > d->arena_cap)
                break;
            d->row_off[r1 - r] = used, used += b;
        }
#pragma omp parallel for schedule(dynamic, 8) num_threads(d->threads)
        for (uint32_t i = r; i < r1; i++)
            encode_row(d, i, r);
        for (uint32_t i = r; i < r1 && !rc; i++)
            if (d->row_ent[i - r])
                rc = emit(txnctx, i, d->arena + d->row_off[i - r], d->row_len[i - r],
                          d->row_ent[i - r]);
        r = r1;
    }
    return rc;
}

/* Sums, not encodings: the rows from r0 on whose bounds fill the decoded arena, summed in
 * parallel; *r1 is where the block ends (> r0 when r0 < r_end). */
int docsum_sum_block(docsum *d, uint32_t r0, uint32_t r_end, uint32_t *r1)
{
    uint32_t N = d->n_words;
    int rc = docsum_prepare_rows(d);
    if (rc)
        return rc;
    if (!d->dcols) {
        /* at least 2^18 entries (5 MiB): each block is a parallel region, and many small ones
         * cost more in waits than they sum on a loaded machine */
        uint64_t cap = d->arena_cap / (4 + sizeof(jsmf_sum)), least = (uint64_t)N + 1;
        least = least < (1u << 18) ? (1u << 18) : least;
        d->dcap = cap < least ? least : cap;
        d->dcols = big_alloc(d->dcap * 4), d->dvals = big_alloc(d->dcap * sizeof(jsmf_sum));
        if (!d->dcols || !d->dvals)
            return jsmf_error(JSMF_ENOMEM, "out of memory for rows of C");
    }
    uint64_t used = 0;
    uint32_t r = r0;
    for (; r < r_end; r++) {
        uint64_t b = d->row_work[r] < N ? d->row_work[r] : N;
        if (r > r0 && used + b > d->dcap)
            break;
        d->row_off[r - r0] = used, used += b;
    }
    *r1 = r;
    d->blk_r0 = r0;
    int threads = r - r0 < 16 ? 1 : d->threads;
#pragma omp parallel for schedule(dynamic, 8) num_threads(threads)
    for (uint32_t i = r0; i < r; i++) {
        worker *w = &d->w[omp_get_thread_num()];
        uint64_t o = d->row_off[i - r0];
        d->row_ent[i - r0] = d->row_work[i] ? sum_row(d, w, i, d->dcols + o, d->dvals + o) : 0;
    }
    return JSMF_OK;
}

uint32_t docsum_block_row(const docsum *d, uint32_t i, const uint32_t **cols,
                          const jsmf_sum **vals)
{
    uint64_t o = d->row_off[i - d->blk_r0];
    *cols = d->dcols + o, *vals = d->dvals + o;
    return d->row_ent[i - d->blk_r0];
}
