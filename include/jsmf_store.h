/* jsmf_store.h — the LMDB store (formats/store.md): the fixed vocabulary, the rows of the
 * co-occurrence sum, document/token counters and per-input checkpoints, in one environment.
 * The fit, fdm and eval stages read the store only through this header.
 *
 * CAVEATS
 *  - One writer at a time across processes (a second gets JSMF_EBUSY); any number of readers,
 *    each seeing the snapshot of its own read transaction, also while an ingest writes.
 *  - Stored sums are exact fixed-point integers, so the content does not depend on thread
 *    count, memory budget, or where an ingest was interrupted. Values handed to readers are
 *    the normalised C = sum / M as doubles (all entries of C sum to 1).
 *  - A store written by a newer format version is refused with JSMF_EVERSION.
 */
#ifndef JSMF_STORE_H
#define JSMF_STORE_H

#include "jsmf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct jsmf_store jsmf_store;

/** Flags for jsmf_store_open. */
enum {
    JSMF_STORE_RDONLY = 0, /**< read only; the store must exist */
    JSMF_STORE_WRITE = 1,  /**< open for writing (takes the writer lock); must exist */
    JSMF_STORE_CREATE = 2  /**< with WRITE: create if missing (then the vocabulary must be set) */
};

/** Open a store directory. Errors: JSMF_ENOTFOUND, JSMF_EVERSION, JSMF_EBUSY, JSMF_ESTORE. */
int jsmf_store_open(const char *path, int flags, jsmf_store **out);
void jsmf_store_close(jsmf_store *s);

/** Counters of the whole store (one consistent snapshot). */
typedef struct jsmf_store_stats {
    uint32_t n_words;        /**< N, vocabulary size */
    uint64_t docs;           /**< M: documents that contributed (>= min_doc_len in-vocabulary tokens) */
    uint64_t docs_dropped;   /**< documents read but too short after curation */
    uint64_t tokens;         /**< in-vocabulary tokens of contributing documents */
    uint64_t tokens_dropped; /**< in-vocabulary tokens of dropped documents */
    uint64_t oov_tokens;     /**< tokens outside the vocabulary (drift indicator) */
    uint64_t nnz;            /**< stored non-zeros of C (both triangles) */
    uint32_t min_doc_len;    /**< rule fixed at creation */
    uint32_t n_inputs;       /**< input records (complete or in progress) */
    uint32_t format_version; /**< store format version */
    uint64_t fingerprint;    /**< identifies the content: hash of the inputs ingested and counters */
    uint64_t bytes;          /**< size of the LMDB data file */
} jsmf_store_stats;

int jsmf_store_stats_get(jsmf_store *s, jsmf_store_stats *out);

/** The vocabulary in row order, with per-word document and term frequencies counted over the
 *  documents ingested so far (df/tf arrays are always present). Caller frees. */
int jsmf_store_vocab(jsmf_store *s, jsmf_vocab **out);

/** A matrix source over the normalised C of this store. The source holds one read transaction
 *  from this call until jsmf_store_source_release() (or jsmf_store_close), so every scan sees
 *  the same snapshot even while an ingest commits; release it when the passes over C are done,
 *  since an open reader keeps LMDB from reusing pages. */
int jsmf_store_source(jsmf_store *s, jsmf_source *out);
void jsmf_store_source_release(jsmf_store *s);

#ifdef __cplusplus
}
#endif
#endif /* JSMF_STORE_H */
