/* registry.h — the registry of C's live runs (formats/store.md, "C runs"): meta "runs" and
 * "next_run", and the database of each run. Readers and writers of C both start here. */
#ifndef JSMF_STORE_REGISTRY_H
#define JSMF_STORE_REGISTRY_H

#include "env.h"

/* Compaction merges RUNS_FANIN runs of one size tier, and the newest RUNS_FANIN whenever more
 * than RUNS_LIVE_MAX are live. */
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

int runs_get(jsmf_store *s, MDB_txn *t, run_list *out);
int runs_put(jsmf_store *s, MDB_txn *t, const run_list *l);
/* Open the database of run `id` in t (created when `create`). */
int run_dbi(jsmf_store *s, MDB_txn *t, uint32_t id, int create, MDB_dbi *out);

#endif
