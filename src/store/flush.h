/* flush.h — what a checkpoint of an ingest hands the store: exact fixed-point sums, the rows
 * that carry them and the counters (types only; src/store/commit.h applies them). */
#ifndef JSMF_STORE_FLUSH_H
#define JSMF_STORE_FLUSH_H

#include <stddef.h>
#include <stdint.h>

#include "jsmf_store.h"

#if defined(__SIZEOF_INT128__)
typedef __int128 jsmf_sum;   /**< one stored fixed-point sum */

/** Counter increments of one flush. */
typedef struct jsmf_store_counts {
    uint64_t docs, docs_dropped, tokens, tokens_dropped, oov_tokens;
} jsmf_store_counts;

/** Delivers the C increments of one flush, row by row in strictly increasing row order, columns
 *  strictly increasing within a row (both triangles). Called as often as needed: each call must
 *  deliver the same rows (a flush is replayed when the map must grow). emit() returns 0 or an
 *  error that the producer must return. */
typedef int (*jsmf_emit_row_fn)(void *txnctx, uint32_t row, const uint32_t *cols,
                                const jsmf_sum *vals, uint32_t n);
typedef int (*jsmf_rows_fn)(void *arg, jsmf_emit_row_fn emit, void *txnctx);

/** Rows encoded by their producer (store_encode_row), so that producers with threads
 *  encode in parallel: emit() takes the records of one row, rows in strictly increasing order.
 *  Otherwise as jsmf_rows_fn. */
typedef int (*jsmf_emit_encoded_fn)(void *txnctx, uint32_t row, const unsigned char *rec,
                                    size_t len, uint32_t entries);
typedef int (*jsmf_encoded_rows_fn)(void *arg, jsmf_emit_encoded_fn emit, void *txnctx);


/** One word not (yet) in the vocabulary with the counts a flush adds to the store's pending
 *  table (formats/store.md, "Growth"): its bytes (not NUL-terminated) and the contributing
 *  documents holding it and its occurrences in them. */
typedef struct jsmf_pending_word {
    const char *word;
    uint32_t len;
    uint64_t df, tf;
} jsmf_pending_word;

/** A checkpoint's documents (formats/store.md, "Documents"), encoded by store_docw_seal: n
 *  blocks, block b's key keys + 20 b and its value vals[off[b] .. off[b+1]). */
typedef struct jsmf_store_doc_blocks {
    uint32_t n;
    const unsigned char *keys;
    const unsigned char *vals;
    const uint64_t *off;
    uint64_t docs, nnz;       /**< documents and (document, word) entries in the blocks */
    uint64_t nnz_bound;       /**< sum over the documents of k^2 (k their distinct words) */
} jsmf_store_doc_blocks;

/** The documents a stdin input stored under its key while it was read move to its final key
 *  (12 bytes each: u64 fingerprint, u32 occurrence, big-endian) in the same checkpoint. */
typedef struct jsmf_store_doc_move {
    unsigned char from[12], to[12];
} jsmf_store_doc_move;

/** One flush: C increments, counters, per-word df/tf increments (dense arrays of N entries or
 *  NULL), and the input records to write (replacing the records with the same key). */
typedef struct jsmf_store_flush {
    jsmf_rows_fn rows;                 /**< NULL when there is nothing to add to C */
    jsmf_encoded_rows_fn rows_encoded; /**< instead of rows: the rows already encoded */
    void *rows_arg;                    /**< the argument of either */
    jsmf_store_counts counts;
    const uint64_t *df, *tf;
    const jsmf_store_input *inputs;
    uint32_t n_inputs;
    const jsmf_pending_word *pending;  /**< counts of words not admitted, added to the store's */
    uint32_t n_pending;
    const jsmf_store_doc_blocks *docs; /**< documents to add (a store that holds them), or NULL */
    const jsmf_store_doc_move *doc_moves;
    uint32_t n_doc_moves;
    int counting;                      /**< the store counts words (its rule grows): counts.docs
                                            is added to grow_docs too */
    int exact_nnz;                     /**< recount nnz over all of C (one read pass): set on
                                            the last checkpoint of an ingest; other checkpoints
                                            leave an upper bound */
} jsmf_store_flush;

/** A row of exact sums (formats/store.md: the stored fixed-point integers), columns increasing. */
typedef int (*jsmf_sum_row_fn)(void *arg, uint32_t row, const uint32_t *cols,
                               const jsmf_sum *sums, uint32_t n);

/* The contribution of one pair, exactly as formats/store.md defines it: truncation toward zero
 * of x = (double)(h_i h_j - [i==j] h_i) * q, q = 2^90/(n(n-1)), to a 128-bit integer. */
static inline jsmf_sum accum_fixed(double x)
{
    uint64_t b;
    __builtin_memcpy(&b, &x, 8);
    int be = (int)(b >> 52) & 0x7ff;
    if (be == 0)
        return 0;
    int e = be - 1075;
    uint64_t m = (b & ((1ULL << 52) - 1)) | (1ULL << 52);
    if (e >= 0)
        return (jsmf_sum)m << e;
    if (e <= -53)
        return 0;
    return (jsmf_sum)(m >> -e);
}

/* q = 2^90 / (n (n - 1)) of a document of n tokens, with the bits every accumulator and every
 * reader of documents uses. */
static inline double accum_doc_q(uint64_t len)
{
    return 1.0 / ((double)len * (double)(len - 1)) * 0x1p90;
}

#endif

#endif
