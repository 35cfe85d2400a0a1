/* docs.h — C held by its documents (formats/store.md, "Documents"): the checkpoint's document
 * buffer and its blocks, reading blocks back in key order, and the store's documents view. */
#ifndef JSMF_STORE_DOCS_H
#define JSMF_STORE_DOCS_H

#include "env.h"
#include "flush.h"

/* Key of a block: u64 fingerprint, u32 occurrence of its input's record, u64 the position (the
 * index in its input) of its first document; big-endian. */
#define DOCS_KEY_BYTES 20

/* ---- writing: the documents of a checkpoint window --------------------------------------- */

typedef struct docw_doc {
    uint64_t pos;   /* its index in its input */
    uint64_t off;   /* its bytes in raw */
    uint32_t rec;   /* the index of its input's record in the session's list */
    uint32_t k;     /* distinct words */
} docw_doc;

typedef struct store_docw {
    unsigned char *raw;          /* per document: LEB128 k, k id gaps, k (count - 1) */
    uint64_t raw_len, raw_cap;
    docw_doc *doc;
    uint64_t ndocs, cap_docs;
    uint64_t nnz, nnz_bound;
    /* sealed */
    unsigned char *keys, *vals, *tmp;
    uint64_t *off, keys_cap, vals_cap, tmp_cap, off_cap;
    jsmf_store_doc_blocks out;
} store_docw;

void store_docw_init(store_docw *w);
void store_docw_free(store_docw *w);
/* Keep a document of input record `rec` at position `pos` (ids ascending and distinct, counts
 * >= 1). Positions of one record's documents increase. */
int store_docw_add(store_docw *w, uint32_t rec, uint64_t pos, const uint32_t *ids,
                   const uint32_t *counts, uint32_t k);
/* Memory the buffer holds and will need to seal (the encoded blocks beside it). */
uint64_t store_docw_bytes(const store_docw *w);
/* Bytes a document of k distinct words may add to store_docw_bytes. */
uint64_t store_docw_doc_bytes(uint32_t k);
uint64_t store_docw_docs(const store_docw *w);
/* The documents of record `from` now belong to record `to` (a renamed stdin record). */
void store_docw_rename(store_docw *w, uint32_t from, uint32_t to);
/* The blocks of the buffered documents, their keys from `recs` (the session's records): cut at
 * a change of input and at DOCS_BLOCK_RAW bytes, each compressed where that pays. */
int store_docw_seal(store_docw *w, const jsmf_store_input *recs, int threads,
                    const jsmf_store_doc_blocks **out);
void store_docw_clear(store_docw *w);

/* In the checkpoint's transaction: the blocks, the moves, and meta doc_nnz, doc_bytes and (a
 * store without rows) the bound on nnz. */
int store_docs_commit(jsmf_store *s, MDB_txn *t, const jsmf_store_flush *f);

/* ---- reading ----------------------------------------------------------------------------- */

/* One decoded block. */
typedef struct store_docdec {
    uint32_t n_docs;
    uint64_t nnz;
    uint64_t *offs;              /* n_docs + 1 */
    uint32_t *ids, *counts;      /* nnz */
    uint64_t cap_docs, cap_ids, cap_cnt;
    unsigned char *raw;
    uint64_t raw_cap;
    void *zd;                    /* ZSTD_DCtx */
} store_docdec;

void store_docdec_free(store_docdec *d);
/* Decode block (k, v) into d; JSMF_ESTORE naming the store and the block when it is corrupt
 * (ids out of range or not ascending, counts 0, sizes that disagree). */
int store_docdec_block(jsmf_store *s, const MDB_val *k, const MDB_val *v, store_docdec *d);

typedef int (*store_docblock_fn)(void *arg, const store_docdec *d);
/* Every block of the store in key order, decoded, in transaction t. */
int store_docs_each_block(jsmf_store *s, MDB_txn *t, store_docblock_fn fn, void *arg);
typedef int (*store_docstored_fn)(void *arg, const MDB_val *k, const MDB_val *v,
                                  const store_docdec *d);
/* The same, each block also as it is stored (its key and value, valid until the next call):
 * for a copy into another store (merge). */
int store_docs_each_stored(jsmf_store *s, MDB_txn *t, store_docstored_fn fn, void *arg);

/* Bytes of the pages of the documents' database. */
uint64_t store_docs_pages(jsmf_store *s, MDB_txn *t);

/* The documents view of jsmf_store_source: s->src_docs over s->src_txn, admission points `adm`
 * (NULL: all 0); T by jsmf_doc_mass in document order when adm is set. */
int store_doc_source(jsmf_store *s, const uint64_t *adm, jsmf_doc_source *out);

#endif
