/* growth.h — a vocabulary that grows, inside the store (src/store/growth.c): the pending words a
 * checkpoint adds, and the admission points readers divide by. */
#ifndef JSMF_STORE_GROWTH_H
#define JSMF_STORE_GROWTH_H

#include "env.h"
#include "flush.h"

/** Longest word the pending table keeps (LMDB's key limit is 511 bytes): a longer one (a UCI
 *  vocabulary may hold any) is never counted, so never admitted. */
#define STORE_PENDING_WORD_MAX 480

/** Write the growth rule (and, for stopwords=list, its stopwords) inside the transaction `t`:
 *  jsmf_store_rule_set's write, also a new store's first transaction (store_create_ruled). */
int store_rule_put(jsmf_store *s, MDB_txn *t, const jsmf_store_rule *r, const jsmf_vocab *stop);

/** Add a checkpoint's pending counts (`n` words, any order) to the pending table, inside the
 *  checkpoint's transaction `t`. */
int store_pending_add(jsmf_store *s, MDB_txn *t, const jsmf_pending_word *w, uint32_t n);

/** Visit every pending word of the store (key order) with its counts, in one snapshot. */
int store_pending_each(jsmf_store *s, int (*fn)(void *arg, const char *w, uint32_t len,
                                                uint64_t df, uint64_t tf), void *arg);

/** The admission points of the N words as seen by `t` into *out (N entries, caller frees), or
 *  *out = NULL when every word belongs to the first vocabulary (all points 0). */
int store_admissions_load(jsmf_store *s, MDB_txn *t, uint64_t **out);

/** What a command's pre-pass over its new inputs counted (src/ingest/prepass.c): the words
 *  outside the vocabulary that may pass the rule with their counts (sorted by bytes as LMDB
 *  orders keys), the contributing documents, and the records of the inputs it read (no
 *  progress, JSMF_INPUT_PARTIAL), which the admission writes as the mark that it is done. */
typedef struct store_ahead {
    const jsmf_pending_word *words;
    uint32_t n_words;
    uint64_t docs;
    const jsmf_store_input *inputs;
    uint32_t n_inputs;
} store_ahead;

/** The admission at the start of a command (formats/store.md, "Growth"): as jsmf_store_admit,
 *  but a word's df and tf, and grow_docs, are the stored ones plus the pre-pass's `x`; an
 *  admitted word starts with its stored counts as word statistics (the command counts the
 *  rest); `x`'s input records are written in the same transaction, which commits even when no
 *  word passes. */
int store_admit_ahead(jsmf_store *s, const jsmf_vocab *stop, const store_ahead *x,
                      uint32_t *admitted);

/** The stored pending df of each of `n` words into df[] (0: not pending), in one snapshot. */
int store_pending_df(jsmf_store *s, const jsmf_pending_word *w, uint32_t n, uint64_t *df);

/** The documents a pair's sum is divided by: M less the later admission point of its words. */
static inline double store_pair_docs(double m, const uint64_t *adm, uint32_t i, uint32_t j)
{
    if (!adm)
        return m;
    uint64_t a = adm[i] > adm[j] ? adm[i] : adm[j];
    return m - (double)a;
}

#endif
