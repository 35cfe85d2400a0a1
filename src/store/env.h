/* env.h — the store's handle over its LMDB environment, and what every other part of the store
 * builds on: errors naming the store, meta values, read transactions, map growth and the pages
 * of the map a process keeps. The bottom layer: it calls no other store file but codec. */
#ifndef JSMF_STORE_ENV_H
#define JSMF_STORE_ENV_H

#include <lmdb.h>
#include <string.h>

#include "jsmf_store.h"

/* Database handles a store opens: its eight databases and at most RUNS_MAX runs, with room
 * for handles LMDB keeps of runs dropped in this process. */
#define STORE_MAX_DBS 128

struct jsmf_store {
    char *path;
    MDB_env *env;
    MDB_dbi meta, vocab, wordstats, C, inputs;
    MDB_dbi pending, admitted; /* version 5 (growth); absent in an older store read-only */
    int has_growth_dbs;      /* pending and admitted exist */
    MDB_dbi docs;            /* version 6: the documents' blocks (formats/store.md "Documents") */
    int has_docs_db;         /* docs exists (a reader of an older store has none) */
    uint32_t hold;           /* JSMF_HOLD_*: meta "hold" (absent: rows) */
    int writable;
    int lockfd;
    int has_vocab;
    uint32_t n_words;
    uint32_t version;
    jsmf_store_params params;
    uint64_t mapsize;
    int map_full;            /* set when an LMDB call inside a write txn hit MDB_MAP_FULL */
    uint64_t txn_bytes;      /* a staged run is written in transactions of at most this size */
    uint64_t staged;         /* bytes of runs this handle has staged (they set the size) */
    unsigned char *stage_buf[2]; /* run writers' two staging buffers, kept between runs: */
    size_t stage_buf_cap[2];     /* fresh memory is a page fault per page */
    uint64_t mapped_bytes;   /* read from the map since its pages were last dropped */
    uintptr_t map_lo[4], map_hi[4]; /* where data.mdb is mapped (store_drop_mapped) */
    int map_parts;
    uint64_t map_seen_size;  /* the map size when map_lo/map_hi were found; 0: not yet */
    int checked;             /* version 7: every value ends in its checksum (formats/store.md) */
    uint64_t db_seed[STORE_MAX_DBS]; /* per database handle: the hash of its name */
    char db_name[STORE_MAX_DBS][16]; /* and the name, for messages */
    int txn_fixed;           /* set by JSMF_STORE_TXN_BYTES (tests): callers cannot change it */
    MDB_txn *src_txn;        /* the read transaction held by jsmf_store_source */
    struct row_reader *src_rd; /* its row reader */
    double *src_vals;        /* a row of the source as doubles */
    uint64_t *src_adm;       /* its words' admission points (NULL: all 0) */
    double src_total;        /* a grown store: the sum of its entries per the admission rule (else 1) */
    int src_total_known;     /* src_total found (a store without rows finds it at its first scan) */
    jsmf_doc_source src_docs; /* the documents view (a store that holds them) */
    /* test hooks (formats/store.md, "Failure injection") */
    long hook_exit_after, hook_exit_inside, hook_enospc, hook_exit_stage;
    long hook_exit_create;   /* JSMF_TEST_EXIT_IN_CREATE: the step of a store's creation */
    long commits, stages;
};

/* A meta key as LMDB takes it. */
static inline MDB_val store_key(const char *k)
{
    return (MDB_val){strlen(k), (void *)k};
}

/* ---- checksums (version 7, formats/store.md "Checksums") ---------------------------------- */

/* The bytes of the checksum that ends every value of a checked store. */
#define STORE_SUM_BYTES 8
/* Returned like an LMDB code by the calls below when a value fails its checksum; the error's
 * message, naming the store, database and key, is already set, and store_lmdb_error keeps it. */
#define STORE_DAMAGED (-31000)
/* The last format version without checksums: a writer into such a store writes as it does. */
#define STORE_UNCHECKED_VERSION 6

/* mdb_dbi_open, noting the database's name for the checksums of its values. */
int store_dbi_open(jsmf_store *s, MDB_txn *t, const char *name, unsigned flags, MDB_dbi *dbi);
/* mdb_get, mdb_put and mdb_cursor_get with the checksum: a value read is checked and handed
 * back without it; a value written gets it (LMDB reserves the room, so nothing is copied
 * twice). LMDB's codes pass through, plus STORE_DAMAGED. */
int store_get(jsmf_store *s, MDB_txn *t, MDB_dbi dbi, MDB_val *k, MDB_val *v);
int store_put(jsmf_store *s, MDB_txn *t, MDB_dbi dbi, MDB_val *k, MDB_val *v, unsigned flags);
int store_cursor_get(jsmf_store *s, MDB_cursor *c, MDB_val *k, MDB_val *v, MDB_cursor_op op);
/* The end of a walk over a whole database with cursor c, `seen` values met, `rc` the cursor's
 * last code: an LMDB error, or damage where the walk met another number of values than the
 * database's record counts (a damaged page can hide values without failing any checksum). */
int store_scan_end(jsmf_store *s, MDB_cursor *c, uint64_t seen, int rc, const char *what);

/* Whether a key of meta names a record kept without a checksum: "format" and "version", which
 * an older jsmf reads to refuse a newer store (formats/store.md "Checksums"). */
int store_meta_key_raw(const MDB_val *key);
/* The names of the store's databases, from LMDB's main database in transaction t: at most cap
 * of them (a name of 16 bytes or more is skipped) into names, their count into *n. */
int store_db_names(jsmf_store *s, MDB_txn *t, char names[][16], int cap, int *n);

/* A key as messages show it: a meta name as it is, other keys in hex. */
void store_key_text(char *out, size_t cap, const MDB_val *k);
/* Check a value just read from database dbi under key k (and strip its checksum); for readers
 * that walk a cursor of their own. JSMF_OK, or STORE_DAMAGED with the message set. */
int store_value_check(jsmf_store *s, MDB_dbi dbi, const MDB_val *k, MDB_val *v);

/* The version a writer leaves the store at: the current one in a checked store, the last
 * unchecked one in an older store (its values carry no checksums, and adding some to what a
 * checkpoint writes would leave it half checked). */
uint32_t store_written_version(const jsmf_store *s);
/* Write meta "version" (without a checksum: an older jsmf reads it to refuse a newer store)
 * and, in a checked store, meta "check": the version again, checked, so that damage to the
 * unchecked record is caught. */
int store_version_put(jsmf_store *s, MDB_txn *t, uint32_t version);
/* In a transaction that writes: move the store to store_written_version when it is older. */
int store_version_bump(jsmf_store *s, MDB_txn *t);

/* Map an LMDB return code to a JSMF error with a message naming the store. */
int store_lmdb_error(jsmf_store *s, int rc, const char *what);
/* The error of a failed mdb_txn_commit: JSMF_ENOSPC when the disk is full (LMDB says EIO). */
int store_commit_error(jsmf_store *s, int rc);

/* Meta helpers inside a transaction. */
int store_meta_get_u64(jsmf_store *s, MDB_txn *t, const char *key, uint64_t *out);
int store_meta_put_u64(jsmf_store *s, MDB_txn *t, const char *key, uint64_t v);
int store_meta_add_u64(jsmf_store *s, MDB_txn *t, const char *key, uint64_t add);
/* meta nnz_exact: 1 (or absent) when meta nnz counts the entries of C, 0 when it is an upper
 * bound (checkpoints that did not recount). */
int store_nnz_exact(jsmf_store *s, MDB_txn *t, uint64_t *out);

/* Begin a read transaction, adopting a map grown by a writer. */
int store_read_begin(jsmf_store *s, MDB_txn **t);
/* Begin a write transaction with the map-full flag cleared (writers retry after growing the
 * map when a put sets it). */
int store_write_begin(jsmf_store *s, MDB_txn **t);
/* Double the map (no transaction of this process may be open). */
int store_grow_map(jsmf_store *s);

/* Drop the pages of the read-only map from the resident set (they stay in the page cache). */
void store_drop_mapped(jsmf_store *s);
/* Note bytes just read from the map; drops the map's pages when they may hold a write budget
 * (with the pages the kernel maps around the ones read, about MAP_FAULT_AROUND times more). */
#define MAP_FAULT_AROUND 4
void store_mapped_read(jsmf_store *s, uint64_t bytes);


#endif
