/* growth.h — a vocabulary that grows, inside the store (src/store/growth.c): the pending words a
 * checkpoint adds, and the admission points readers divide by. */
#ifndef JSMF_STORE_GROWTH_H
#define JSMF_STORE_GROWTH_H

#include "env.h"
#include "flush.h"

/** Longest word the pending table keeps (LMDB's key limit is 511 bytes): a longer one (a UCI
 *  vocabulary may hold any) is never counted, so never admitted. */
#define STORE_PENDING_WORD_MAX 480

/** Add a checkpoint's pending counts (`n` words, any order) to the pending table, inside the
 *  checkpoint's transaction `t`. */
int store_pending_add(jsmf_store *s, MDB_txn *t, const jsmf_pending_word *w, uint32_t n);

/** Visit every pending word of the store (key order) with its counts, in one snapshot. */
int store_pending_each(jsmf_store *s, int (*fn)(void *arg, const char *w, uint32_t len,
                                                uint64_t df, uint64_t tf), void *arg);

/** The admission points of the N words as seen by `t` into *out (N entries, caller frees), or
 *  *out = NULL when every word belongs to the first vocabulary (all points 0). */
int store_admissions_load(jsmf_store *s, MDB_txn *t, uint64_t **out);

/** The documents a pair's sum is divided by: M less the later admission point of its words. */
static inline double store_pair_docs(double m, const uint64_t *adm, uint32_t i, uint32_t j)
{
    if (!adm)
        return m;
    uint64_t a = adm[i] > adm[j] ? adm[i] : adm[j];
    return m - (double)a;
}

#endif
