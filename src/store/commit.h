/* commit.h — applying a flush to a store as one checkpoint, and the memory it takes
 * (src/store/commit.c). */
#ifndef JSMF_STORE_COMMIT_H
#define JSMF_STORE_COMMIT_H

#include "flush.h"

/** Apply a flush: its C increments become a new run, written in transactions of bounded size
 *  (store_set_write_budget) and registered, with the counters, word statistics and input
 *  records, by one last transaction that is synced: the checkpoint. Then the newest runs may be
 *  merged (compaction). On MDB_MAP_FULL the map is grown and the flush replayed. On any error
 *  the store stays at its previous checkpoint (JSMF_ENOSPC for a full disk). */
int store_commit(jsmf_store *s, const jsmf_store_flush *f);

/** Bytes a write transaction may hold (default 32 MiB). */
void store_set_write_budget(jsmf_store *s, uint64_t bytes);

/** The most memory a commit of this store takes with the current write budget: the staging
 *  buffer, LMDB's dirty pages of one transaction and the row buffers of its readers. */
uint64_t store_write_memory(const jsmf_store *s);
/** The same for a store of `n_words` words with write budget `txn_bytes`, before it exists. */
uint64_t store_write_memory_for(uint32_t n_words, uint64_t txn_bytes);

#endif
