/* accum.h — the in-memory co-occurrence accumulator of ingest: exact fixed-point sums of
 * per-document contributions over upper-triangle pairs, in a dense block for frequent words and
 * per-thread hash tables, threads owning disjoint row sets (row i belongs to thread i % T), so
 * pair generation needs no locks. */
#ifndef JSMF_ACCUM_H
#define JSMF_ACCUM_H

#include "jsmf_store.h"
#include "store/flush.h"

typedef struct accum accum;

/* A batch of documents: ids sorted and unique per document, counts >= 1, q = 2^90/(n(n-1)). */
typedef struct doc_batch {
    uint32_t ndocs, cap_docs;
    uint64_t nids, cap_ids;
    uint64_t *start;  /* ndocs + 1 offsets into ids/counts */
    uint32_t *ids, *counts;
    double *q;
    uint64_t *pairs;  /* per thread: upper bound of new entries this batch adds */
} doc_batch;

/* ACCUM_DOCS is not this accumulator: ingest keeps documents instead (docsum.h). */
enum { ACCUM_AUTO = 0, ACCUM_HASH = 1, ACCUM_DENSE = 2, ACCUM_DOCS = 3 };

/* 1 when all of C fits `bytes` as a dense upper triangle. */
int accum_dense_fits(uint32_t n_words, uint64_t bytes);

/* An accumulator using at most `bytes`: all of C as a dense upper triangle when it fits (or
 * mode is ACCUM_DENSE); else (ACCUM_AUTO) a dense block for the words of the lowest ids in at
 * most half the budget, as wide as the words' document frequencies df (N entries, or NULL:
 * unknown) make worth it, and per-thread hash tables for the other pairs; ACCUM_HASH: hash
 * tables only. */
int accum_new(uint32_t n_words, int threads, uint64_t bytes, int mode, const uint64_t *df,
              accum **out);
void accum_free(accum *a);
int accum_threads(const accum *a);
/* Width F of the dense block (pairs of ids both below F); N when all of C is dense. */
uint32_t accum_dense_width(const accum *a);

/* Entries thread t can still take without exceeding its load limit. */
uint64_t accum_room(const accum *a, int t);
/* Entries one thread can hold at most (its load limit). */
uint64_t accum_limit(const accum *a);
/* Entries held now (all threads). */
uint64_t accum_entries(const accum *a);

/* Per-thread upper bound of the entries a document (sorted unique ids) adds, into add[T]. */
void accum_doc_pairs(const accum *a, const uint32_t *ids, uint32_t n, uint64_t *add);

/* Add every pair of every document of the batch, in threads of its own (one per accumulator
 * thread), while the caller goes on: it must leave b unchanged, and call nothing else of the
 * accumulator but accum_doc_pairs, accum_limit and accum_dense_width, until accum_add_wait.
 * Starting waits for the batch before. */
int accum_add_start(accum *a, const doc_batch *b);
/* Wait for the batch being added (if any); an error if adding it failed (out of memory). */
int accum_add_wait(accum *a);

/* Turn the tables into row-sorted lists of both triangles (in place) and return the rows
 * callback that delivers them; it can be called any number of times until accum_clear(). */
int accum_prepare_rows(accum *a);
int accum_rows(void *arg, jsmf_emit_row_fn emit, void *txnctx);

/* Empty the tables (after a successful commit). */
void accum_clear(accum *a);

/* accum_fixed and accum_doc_q: the contribution bits, in store/flush.h (every reader of
 * documents computes them too). */

#endif
