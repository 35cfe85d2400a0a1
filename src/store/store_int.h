/* store_int.h — what the store's source files share: the handle, the LMDB databases, key and
 * value encodings of formats/store.md. Nothing outside src/store includes this. */
#ifndef JSMF_STORE_INT_H
#define JSMF_STORE_INT_H

#include <lmdb.h>
#include <string.h>

#include "jsmf_store.h"

/* Entries per C chunk: 2 + 96 * 20 bytes stays below LMDB's in-page node limit for 4 KiB pages,
 * so no chunk lives in overflow pages that would be rewritten whole on every flush. Rewritten
 * chunks are cut into pieces of CHUNK_SPLIT to leave room for growth. */
#define CHUNK_MAX 96
#define CHUNK_SPLIT 64
#define ENTRY_BYTES 20 /* u32 column + 16-byte sum */

struct jsmf_store {
    char *path;
    MDB_env *env;
    MDB_dbi meta, vocab, wordstats, C, inputs;
    int writable;
    int lockfd;
    int has_vocab;
    uint32_t n_words;
    uint32_t version;
    jsmf_store_params params;
    uint64_t mapsize;
    int map_full;
    unsigned char last_key[8]; /* largest key in C during a write txn: beyond it, append */            /* set when an LMDB call inside a write txn hit MDB_MAP_FULL */
    MDB_txn *src_txn;        /* the read transaction held by jsmf_store_source */
    /* scratch for row merges (write side) and row decoding (read side) */
    uint32_t *tmp_cols;
    jsmf_sum *tmp_vals;
    double *tmp_dvals;
    size_t tmp_cap;
    /* test hooks (formats/store.md, "Failure injection") */
    long hook_exit_after, hook_exit_inside, hook_enospc;
    long commits;
};

/* Big-endian integers for keys (memcmp order = numeric order). */
static inline void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = v >> 24, p[1] = v >> 16, p[2] = v >> 8, p[3] = (unsigned char)v;
}
static inline uint32_t get_be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline void put_be64(unsigned char *p, uint64_t v)
{
    put_be32(p, (uint32_t)(v >> 32)), put_be32(p + 4, (uint32_t)v);
}
static inline uint64_t get_be64(const unsigned char *p)
{
    return (uint64_t)get_be32(p) << 32 | get_be32(p + 4);
}
/* Values: little-endian (x86 native), copied because LMDB values are only 2-byte aligned. */
static inline uint64_t get_u64(const void *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}
static inline uint32_t get_u32(const void *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* Map an LMDB return code to a JSMF error with a message naming the store. */
int store_lmdb_error(jsmf_store *s, int rc, const char *what);

/* Meta helpers inside a transaction. */
int store_meta_get_u64(jsmf_store *s, MDB_txn *t, const char *key, uint64_t *out);
int store_meta_put_u64(jsmf_store *s, MDB_txn *t, const char *key, uint64_t v);
int store_meta_add_u64(jsmf_store *s, MDB_txn *t, const char *key, uint64_t add);

/* Begin a read transaction, adopting a map grown by a writer. */
int store_read_begin(jsmf_store *s, MDB_txn **t);

/* Drop the pages of the read-only map from the resident set (they stay in the page cache). */
void store_drop_mapped(jsmf_store *s);

/* Make sure the scratch buffers hold at least n entries. */
int store_tmp_reserve(jsmf_store *s, size_t n);

/* Chunk codec. */
uint32_t chunk_count(const MDB_val *v);
void chunk_decode(const MDB_val *v, uint32_t *cols, jsmf_sum *vals);
size_t chunk_encode(unsigned char *buf, const uint32_t *cols, const jsmf_sum *vals, uint32_t n);

/* Prepare a write transaction for rows_merge_row (finds where appending starts). */
int rows_begin(jsmf_store *s, MDB_txn *t);

/* Add one row of increments into C inside write transaction t; *new_entries counts entries that
 * did not exist before. */
int rows_merge_row(jsmf_store *s, MDB_txn *t, uint32_t row, const uint32_t *cols,
                   const jsmf_sum *vals, uint32_t n, uint64_t *new_entries);

/* Input record codec. */
void input_key(unsigned char key[12], uint64_t fingerprint, uint32_t occurrence);
size_t input_encode(unsigned char *buf, const jsmf_store_input *in);
void input_decode(const MDB_val *key, const MDB_val *val, jsmf_store_input *out);

/* Fixed point to double: S * 2^-90 / M. */
static inline double sum_to_double(jsmf_sum v, double m)
{
    return (double)v * 0x1p-90 / m;
}

#endif
