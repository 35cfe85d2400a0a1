/* rows.h — reading the rows of C, summed over the legacy C database and the live runs: row
 * streams, the reader that sums them, and counting C's entries. */
#ifndef JSMF_STORE_ROWS_H
#define JSMF_STORE_ROWS_H

#include "env.h"
#include "flush.h"

typedef struct row_stream {
    jsmf_store *s;
    MDB_cursor *cur;
    struct docrows *dr; /* instead of cur: rows computed from the documents (docrows.h) */
    MDB_val k, v;     /* the first chunk not yet loaded */
    int eof, stale;   /* stale: the loaded row was handed out; load the next one first */
    int cols_only;    /* load columns only (values are left undefined) */
    int whole;        /* read from its first chunk on: at its end, `seen` must be all of them */
    uint64_t seen;    /* chunks loaded since the stream was set at its start */
    uint32_t row, n;  /* the loaded row (n = 0: none) */
    uint32_t cap;     /* room of cols and vals */
    uint32_t *cols;
    jsmf_sum *vals;
} row_stream;

typedef struct row_reader {
    row_stream *st;
    uint32_t k, cap, n_words;
    int cols_only;    /* set before adding streams: rows come with columns only */
    uint32_t *cols;   /* a summed row of several streams */
    jsmf_sum *vals;
    jsmf_sum *dense;  /* N sums and a bitmap of N bits, for rows in many streams (lazily) */
    uint64_t *bits;
} row_reader;

int reader_init(row_reader *r, uint32_t n_words);
/* Add the legacy C and the live runs of store s as seen by transaction t, and, for a store
 * that holds no rows, the rows computed from its documents. */
int reader_add_store(row_reader *r, jsmf_store *s, MDB_txn *t);
int reader_add_dbi(row_reader *r, jsmf_store *s, MDB_txn *t, MDB_dbi dbi);
/* Move every stream forward to its first row >= row; rewind: back to the first row. */
int reader_seek(row_reader *r, uint32_t row);
int reader_rewind(row_reader *r);
/* The next row in row order, summed over the streams: 1 and the row, 0 at the end, or an
 * error. The arrays stay valid until the next call. */
int reader_next(row_reader *r, uint32_t *row, const uint32_t **cols, const jsmf_sum **vals,
                uint32_t *n);
void reader_free(row_reader *r);

/* Entries of C over all live runs (and run `extra` if not 0), in transaction t. */
int store_count_entries(jsmf_store *s, MDB_txn *t, uint32_t extra, uint64_t *out);

/** Visit the non-empty rows in [r0, r1) of C as exact sums, in row order, in one snapshot: what
 *  processes that each ingested part of a corpus exchange to add their parts exactly. */
int store_scan_sums(jsmf_store *s, uint32_t r0, uint32_t r1, jsmf_sum_row_fn fn, void *arg);
/** count[i] = the entries of row i of C (N entries; one pass reading columns only). */
int store_row_entries(jsmf_store *s, uint64_t *count);

#endif
