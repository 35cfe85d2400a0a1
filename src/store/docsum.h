/* docsum.h — ingest's accumulator for a C much larger than memory (and the rows of a store that
 * holds documents, docrows.c): it keeps the documents of a
 * checkpoint window (word ids and counts, about 16 bytes a distinct word of a document) instead
 * of their pairs, and computes the rows of their C one at a time at the checkpoint, in row
 * order, each row summed in a dense N-wide buffer (a row-wise sparse product, Gustavson's
 * algorithm). A window's C is written once, straight into the store's run: nothing is spilled
 * and merged, so the bytes an ingest writes are the store's own. */
#ifndef JSMF_DOCSUM_H
#define JSMF_DOCSUM_H

#include "jsmf_store.h"
#include "flush.h"

typedef struct docsum docsum;

/* Bytes a docsum needs besides its documents: per thread a dense row and its output. */
uint64_t docsum_fixed_bytes(uint32_t n_words, int threads);

/* A docsum holding documents in at most `bytes` (docsum_fixed_bytes included). */
int docsum_new(uint32_t n_words, int threads, uint64_t bytes, docsum **out);
void docsum_free(docsum *d);

/* 1 when a document of k distinct words fits next to what is held. */
int docsum_fits(const docsum *d, uint32_t k);
/* Distinct words of one document the empty docsum holds at most. */
uint64_t docsum_limit(const docsum *d);
uint64_t docsum_docs(const docsum *d);
/* Bytes for documents (what `docs` documents of `ids` distinct words in all need of it). */
uint64_t docsum_room(const docsum *d);
uint64_t docsum_need(uint64_t docs, uint64_t ids);

/* Keep a document: ids sorted and distinct, counts >= 1, q = 2^90 / (n (n - 1)). */
int docsum_add(docsum *d, const uint32_t *ids, const uint32_t *counts, uint32_t k, double q);

/* Index the documents by word (once before docsum_rows; the documents stay as they are). */
int docsum_prepare_rows(docsum *d);
/* The rows callback of a flush (jsmf_encoded_rows_fn): every row of the held documents' C,
 * both triangles, with the values formats/store.md defines, summed and encoded by the threads;
 * callable any number of times. */
int docsum_rows(void *arg, jsmf_emit_encoded_fn emit, void *txnctx);

/* The rows of the held documents' C as exact sums (formats/store.md), for readers: rows r0 on,
 * before r_end, as many as the arena holds, summed in parallel; *r1 where they end. Then
 * docsum_block_row gives row i (r0 <= i < *r1): its entries, columns increasing. */
int docsum_sum_block(docsum *d, uint32_t r0, uint32_t r_end, uint32_t *r1);
uint32_t docsum_block_row(const docsum *d, uint32_t i, const uint32_t **cols,
                          const jsmf_sum **vals);

/* Forget the documents (after a successful commit). */
void docsum_clear(docsum *d);

#endif
