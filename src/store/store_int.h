/* store_int.h — what the store's source files share: the handle, the LMDB databases, key and
 * value encodings of formats/store.md. Nothing outside src/store includes this. */
#ifndef JSMF_STORE_INT_H
#define JSMF_STORE_INT_H

#include <lmdb.h>
#include <pthread.h>
#include <string.h>

#include "jsmf_store.h"

/* C chunks (formats/store.md): a chunk value stays within CHUNK_BYTES_MAX, below LMDB's in-page
 * node limit for 4 KiB pages, so no chunk lives in overflow pages. Version 2 chunks ("plain")
 * hold up to 96 entries of 20 bytes; writers now write "packed" chunks: a column in 1 to 5
 * bytes, a sum in 2 to 18, cut when the next entry would pass CHUNK_BYTES_MAX. */
#define CHUNK_BYTES_MAX 1922
#define CHUNK_PLAIN_MAX 96
#define CHUNK_PLAIN_ENTRY 20 /* u32 column + 16-byte sum */
#define CHUNK_PACKED 0x8000u /* in the count: the chunk is packed */
#define CHUNK_PALETTE 0xC000u /* in the count: the chunk's sums are a palette (version 4) */
#define PACKED_ENTRY_MAX 25  /* an entry's largest size: packed 23, palette 2 more at most */
#define CHUNK_SLACK 16       /* room chunk_encode may write past a chunk */

/* Bytes a row of n entries takes in a run writer's buffer at most: its chunks and, per chunk,
 * an 8-byte key and a 2-byte length. */
static inline size_t row_record_bytes(size_t n)
{
    return n * PACKED_ENTRY_MAX + (n / ((CHUNK_BYTES_MAX - 2) / PACKED_ENTRY_MAX) + 1) * 12 +
           CHUNK_SLACK;
}

/* C runs (formats/store.md): compaction merges RUNS_FANIN runs of one size tier, and the newest
 * RUNS_FANIN whenever more than RUNS_LIVE_MAX are live. */
#define RUNS_FANIN 8
#define RUNS_LIVE_MAX 32
#define RUNS_MAX 64

typedef struct run_info {
    uint32_t id;
    uint64_t entries;
} run_info;

/* The registry of live runs (meta "runs") and the id the next run gets (meta "next_run"). */
typedef struct run_list {
    uint32_t n;
    uint32_t next_id;
    run_info r[RUNS_MAX];
} run_list;

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
    int map_full;            /* set when an LMDB call inside a write txn hit MDB_MAP_FULL */
    uint64_t txn_bytes;      /* a staged run is written in transactions of at most this size */
    uint64_t staged;         /* bytes of runs this handle has staged (they set the size) */
    unsigned char *stage_buf[2]; /* run writers' two staging buffers, kept between runs: */
    size_t stage_buf_cap[2];     /* fresh memory is a page fault per page */
    uint64_t mapped_bytes;   /* read from the map since its pages were last dropped */
    uintptr_t map_lo[4], map_hi[4]; /* where data.mdb is mapped (store_drop_mapped) */
    int map_parts;
    uint64_t map_seen_size;  /* the map size when map_lo/map_hi were found; 0: not yet */
    int txn_fixed;           /* set by JSMF_STORE_TXN_BYTES (tests): callers cannot change it */
    MDB_txn *src_txn;        /* the read transaction held by jsmf_store_source */
    struct row_reader *src_rd; /* its row reader */
    double *src_vals;        /* a row of the source as doubles */
    /* test hooks (formats/store.md, "Failure injection") */
    long hook_exit_after, hook_exit_inside, hook_enospc, hook_exit_stage;
    long commits, stages;
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

/* meta nnz_exact: 1 (or absent) when meta nnz counts the entries of C, 0 when it is an upper
 * bound (checkpoints that did not recount). */
int store_nnz_exact(jsmf_store *s, MDB_txn *t, uint64_t *out);
/* Entries of C over all live runs (and run `extra` if not 0), in transaction t. */
int store_count_entries(jsmf_store *s, MDB_txn *t, uint32_t extra, uint64_t *out);

/* Double the map (no transaction of this process may be open). */
int store_grow_map(jsmf_store *s);
/* The error of a failed mdb_txn_commit: JSMF_ENOSPC when the disk is full (LMDB says EIO). */
int store_commit_error(jsmf_store *s, int rc);

/* Drop the pages of the read-only map from the resident set (they stay in the page cache). */
void store_drop_mapped(jsmf_store *s);
/* Note bytes just read from the map; drops the map's pages when they may hold a write budget
 * (with the pages the kernel maps around the ones read, about MAP_FAULT_AROUND times more). */
#define MAP_FAULT_AROUND 4
void store_mapped_read(jsmf_store *s, uint64_t bytes);


/* Chunk codec. */
/* Decode a chunk (plain or packed) into cols and, unless vals is NULL, vals; at most room
 * entries, columns below n_words. Returns the entry count, or -1 if the chunk is corrupt. */
int64_t chunk_decode(const MDB_val *v, uint32_t *cols, jsmf_sum *vals, uint32_t room,
                     uint32_t n_words);
/* Decode the next chunk of a row that holds `have` entries so far into cols + have (and
 * vals + have): as chunk_decode, and -1 as well when its first column does not follow the row's
 * last one. Summing the rows of several runs merges them by column into N-wide buffers, so a
 * row read from the store has strictly increasing columns below n_words, whatever its bytes. */
int64_t row_chunk_decode(const MDB_val *v, uint32_t *cols, jsmf_sum *vals, uint32_t have,
                         uint32_t room, uint32_t n_words);
/* Encode a packed chunk of the first entries of cols/vals (n > 0) into buf, as many as fit in
 * CHUNK_BYTES_MAX (at least one); *taken says how many. Returns the chunk's size. buf must
 * have CHUNK_SLACK bytes of room past the chunk (the encoder writes sums in 16-byte stores). */
size_t chunk_encode(unsigned char *buf, const uint32_t *cols, const jsmf_sum *vals, uint32_t n,
                    uint32_t *taken);

/* ---- runs.c: the registry, staged writing and compaction ---------------------------------- */

int runs_get(jsmf_store *s, MDB_txn *t, run_list *out);
int runs_put(jsmf_store *s, MDB_txn *t, const run_list *l);
/* Open the database of run `id` in t (created when `create`). */
int run_dbi(jsmf_store *s, MDB_txn *t, uint32_t id, int create, MDB_dbi *out);
/* Writer open: open the handles of the live runs in a write transaction so that read
 * transactions of this process find them, then drop dead runs (runs_drop_dead). */
int runs_writer_open(jsmf_store *s);
/* Drop the run databases the registry does not list, in transactions of about the write budget
 * each (the process never maps a whole large run at once). */
int runs_drop_dead(jsmf_store *s);

/* A run being written: rows are encoded into a buffer that goes to LMDB in its own write
 * transaction whenever it holds the stage size (runs.c, at most half of txn_bytes); the rest
 * goes into the checkpoint's transaction. A full buffer is written by a thread of its own while
 * the caller encodes into the other one (at most one such spill in flight). */
typedef struct run_writer {
    jsmf_store *s;
    uint32_t id;
    int fresh;              /* the run's database was emptied in a committed transaction */
    unsigned char *buf;     /* records: 8-byte key, u16 value length, value */
    size_t len, cap;
    uint64_t entries, rows;
    /* the spill in flight: its buffer, the thread writing it, and how that ended */
    unsigned char *out;
    size_t out_len, out_cap;
    pthread_t thread;
    int in_flight, out_rc;
    char out_err[1024];
} run_writer;

void run_writer_init(run_writer *w, jsmf_store *s, uint32_t id);
int run_writer_row(run_writer *w, uint32_t row, const uint32_t *cols, const jsmf_sum *vals,
                   uint32_t n);
/* One row's records as jsmf_store_encode_row made them. */
int run_writer_records(run_writer *w, const unsigned char *rec, size_t len, uint32_t entries);
/* Wait for the spill in flight; its error, if it failed. Call before any other write
 * transaction of the store (LMDB has one writer at a time: it would wait, and the spill's
 * outcome must be known before the run is registered). */
int run_writer_drain(run_writer *w);
/* Write what is still buffered into transaction t (the run's last part; drained before). */
int run_writer_finish(run_writer *w, MDB_txn *t);
/* Drain, and give the buffers back to the store for the next run (the run stays unregistered
 * unless run_writer_finish was committed). */
void run_writer_free(run_writer *w);

/* After a checkpoint: merge the newest runs while they are as large as the next older one, or
 * while more than RUNS_KEEP are live. */
int runs_compact(jsmf_store *s);

/* ---- rows.c: reading the rows of C, summed over the legacy C database and the live runs ---- */

typedef struct row_stream {
    jsmf_store *s;
    MDB_cursor *cur;
    MDB_val k, v;     /* the first chunk not yet loaded */
    int eof, stale;   /* stale: the loaded row was handed out; load the next one first */
    int cols_only;    /* load columns only (values are left undefined) */
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
/* Add the legacy C and the live runs of store s as seen by transaction t. */
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

/* Input record codec. */
void input_key(unsigned char key[12], uint64_t fingerprint, uint32_t occurrence);
size_t input_encode(unsigned char *buf, const jsmf_store_input *in);
void input_decode(const MDB_val *key, const MDB_val *val, jsmf_store_input *out);

/* (double)v, correctly rounded as the compiler's conversion is, without its library call (a
 * quarter of the time of reading C): the top 64 bits with a sticky bit for the rest, converted
 * by the hardware and scaled exactly. */
static inline double sum_as_double(jsmf_sum v)
{
    unsigned __int128 u = v < 0 ? -(unsigned __int128)v : (unsigned __int128)v;
    uint64_t hi = (uint64_t)(u >> 64), lo = (uint64_t)u;
    double d;
    if (!hi) {
        d = (double)lo;
    } else {
        unsigned s = 64 - (unsigned)__builtin_clzll(hi); /* 1..64 bits above the low word */
        uint64_t top = (uint64_t)(u >> s) | (uint64_t)((lo << (64 - s)) != 0);
        uint64_t e = (uint64_t)(1023 + s) << 52;
        double scale;
        memcpy(&scale, &e, 8);
        d = (double)top * scale;
    }
    return v < 0 ? -d : d;
}

/* Fixed point to double: S * 2^-90 / M. */
static inline double sum_to_double(jsmf_sum v, double m)
{
    return sum_as_double(v) * 0x1p-90 / m;
}

#endif
