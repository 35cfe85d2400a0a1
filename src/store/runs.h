/* runs.h — writing C as runs: the staged run writer, opening the live runs for a writer,
 * dropping dead runs, and compaction. */
#ifndef JSMF_STORE_RUNS_H
#define JSMF_STORE_RUNS_H

#include <pthread.h>

#include "env.h"
#include "flush.h"

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
/* One row's records as store_encode_row made them. */
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
 * while more than RUNS_LIVE_MAX are live. */
int runs_compact(jsmf_store *s);

#endif
