/* jsmf_store.h — the LMDB store (formats/store.md): the vocabulary (grown by its rule), the rows of the
 * co-occurrence sum, document/token counters and per-input checkpoints, in one environment.
 * The fit, fdm and eval stages read the store only through this header; ingest (jsmf_ingest.h)
 * writes it, merge, export and copy (below) make new files of it.
 *
 * CAVEATS
 *  - One writer at a time across processes (a second gets JSMF_EBUSY); any number of readers,
 *    each seeing the snapshot of its own read transaction, also while an ingest writes.
 *  - Stored sums are exact fixed-point integers, so the content does not depend on thread
 *    count, memory budget, or where an ingest was interrupted. Values handed to readers are
 *    the normalised C = sum / M as doubles (all entries of C sum to 1); in a store whose
 *    vocabulary grew, a pair's sum is divided by the documents counted since both its words
 *    joined (M - max(a_i, a_j), formats/store.md "Growth"), and the entries sum to about 1.
 *  - A store written by a newer format version is refused with JSMF_EVERSION.
 */
#ifndef JSMF_STORE_H
#define JSMF_STORE_H

#include <stdio.h>

#include "jsmf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct jsmf_store jsmf_store;

/** Flags for jsmf_store_open. */
enum {
    JSMF_STORE_RDONLY = 0, /**< read only; the store must exist */
    JSMF_STORE_WRITE = 1,  /**< open for writing (takes the writer lock); must exist */
    JSMF_STORE_CREATE = 2  /**< with WRITE: make the environment when missing; it is a store
                                only once an ingest sets its vocabulary (jsmf_store_create
                                makes one with its vocabulary at once) */
};

/** Open the store directory `path` (flags JSMF_STORE_*) into *out (end with jsmf_store_close).
 *  Errors: JSMF_ENOTFOUND (no store there), JSMF_EVERSION (a newer format), JSMF_EBUSY (WRITE
 *  while another process writes), JSMF_ESTORE (LMDB), JSMF_EIO. */
JSMF_API int jsmf_store_open(const char *path, int flags, jsmf_store **out);
/** Close a store (NULL is fine): its source's read transaction ends, a writer's lock is
 *  released. What an ingest committed stays; nothing else is written. */
JSMF_API void jsmf_store_close(jsmf_store *s);

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
    uint32_t runs;           /**< live runs of C (formats/store.md): readers sum them row by row */
    int nnz_exact;           /**< 0: nnz is an upper bound (an ingest was interrupted before its
                                  last checkpoint recounted, or C is held by its documents only:
                                  min(N^2, the sum of the documents' squared distinct words));
                                  jsmf_store_source counts exactly unless documents only */
    uint32_t hold;           /**< what the store holds of C: JSMF_HOLD_ROWS, _DOCS or _BOTH */
    uint64_t doc_nnz;        /**< nnz(H): (document, word) entries of the documents held (0 when
                                  the store holds rows only) */
    uint64_t doc_bytes;      /**< bytes of the documents' encoded blocks (values, no LMDB overhead) */
    uint64_t reserved[16]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_store_stats;

/** The store's counters into *out. Errors: JSMF_ESTORE. */
JSMF_API int jsmf_store_stats_get(jsmf_store *s, jsmf_store_stats *out);

/** The vocabulary in row order, with per-word document and term frequencies counted over the
 *  documents ingested so far (df/tf arrays are always present), into *out: the caller frees it
 *  with jsmf_vocab_free. Errors: JSMF_ESTORE, JSMF_ENOMEM. */
JSMF_API int jsmf_store_vocab_get(jsmf_store *s, jsmf_vocab **out);

#ifdef JSMF_ADVANCED
/** A matrix source over the normalised C of this store. The source holds one read transaction
 *  from this call until jsmf_store_source_release() (or jsmf_store_close), so every scan sees
 *  the same snapshot even while an ingest commits; release it when the passes over C are done,
 *  since an open reader keeps LMDB from reusing pages. `out` is valid until then; a second
 *  call before the release gives the same snapshot. Errors: JSMF_ESTORE. */
JSMF_API int jsmf_store_source(jsmf_store *s, jsmf_source *out);

/** End the read transaction of jsmf_store_source (nothing when there is none). */
JSMF_API void jsmf_store_source_release(jsmf_store *s);
#endif

/** What one read of all of C found (jsmf_store_check). */
typedef struct jsmf_store_check_result {
    uint64_t entries;   /**< entries read (both triangles): equals the store's nnz */
    uint64_t bytes;     /**< bytes of C's pages read */
    double sum;         /**< sum of the normalised C: 1 up to rounding when M > 0 */
    uint64_t digest;    /**< a hash of every (row, column, exact sum) in order: equal for two
                             stores holding the same C however it is cut into runs */
    double seconds;     /**< wall time of the read */
    uint64_t docs;      /**< a store that holds documents: the documents read (equals M) */
    uint64_t doc_entries; /**< ... their (document, word) entries (equals nnz(H)) */
    uint64_t doc_digest;  /**< ... a hash of the documents' sequence in key order (each
                               document's ids and counts): equal for two stores holding the
                               same documents however checkpoints cut them into blocks */
    uint64_t reserved[16]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_store_check_result;

/** Read all of C once through the snapshot source: every chunk decoded, rows in order, columns
 *  increasing within a row (a store without rows: its rows computed from its documents). A
 *  store that holds documents has them all decoded too, their count checked against M and
 *  nnz(H). JSMF_ESTORE names the first corrupt row or block; a count other than the store's
 *  nnz (of a store holding rows) is JSMF_ESTORE too. */
JSMF_API int jsmf_store_check(jsmf_store *s, jsmf_store_check_result *out);

/** What jsmf_store_check found in the store at `path`, for people: two lines, each
 *  "PREFIX: ..." (prefix NULL: none) — the entries and their sum, then the content digest and
 *  the bytes read in how long. */
JSMF_API void jsmf_store_check_write(FILE *f, const char *prefix, const char *path,
                                     const jsmf_store_check_result *r);

/** One piece of damage found by jsmf_store_damage_scan, as a line for people: where it is (the
 *  database and its page or key) and what it takes (the inputs whose documents it held, the
 *  rows of C, the vocabulary ...), so those inputs can be ingested again into a new store. */
typedef void (*jsmf_store_damage_fn)(void *arg, const char *line);

/** Look for damage in the store at `path` without trusting it (formats/store.md "Checksums"):
 *  every page of data.mdb walked as LMDB lays it out, read from the file before LMDB maps any
 *  of it, so damage to LMDB's own structure is named where reading through LMDB would fault;
 *  then, where the structure is whole, every value of every database against its checksum (a
 *  store of version 7; an older one has none, and `*checked` is 0). Each piece of damage goes
 *  to `fn` (NULL: only counted) and their count to `*found`. JSMF_OK whether or not damage was
 *  found; JSMF_EIO when the file cannot be read, JSMF_ENOTFOUND when there is no store. */
JSMF_API int jsmf_store_damage_scan(const char *path, jsmf_store_damage_fn fn, void *arg,
                                    uint64_t *found, int *checked);

/* ---------------------------------------------------------------------------------------------
 * Creating a store, and what it records. A write handle (JSMF_STORE_WRITE, jsmf_store_create)
 * holds the store's writer lock (a flock on STORE/writer.lock) until jsmf_store_close.
 * ------------------------------------------------------------------------------------------- */

/** The current store format version (formats/store.md). */
#define JSMF_STORE_FORMAT_VERSION 7

/** Fixed-point scale of stored sums: a stored sum S means S * 2^-JSMF_STORE_SCALE_BITS. */
#define JSMF_STORE_SCALE_BITS 90

/** What a store keeps of C (formats/store.md, "Documents"), chosen at its creation: the rows of
 *  its fixed-point sums, each contributing document's in-vocabulary bag of words, or both.
 *  Bits: 1 rows, 2 documents. */
enum { JSMF_HOLD_DEFAULT = 0, JSMF_HOLD_ROWS = 1, JSMF_HOLD_DOCS = 2, JSMF_HOLD_BOTH = 3 };

/** What a new store holds when its creator does not say (jsmf_store_params.hold 0, `jsmf ingest`
 *  without --hold): one constant, documents (formats/store.md "Documents": 28x to 70x fewer
 *  bytes, 2.8x less ingest CPU, the same fit, which multiplies through them). A new store an MPI
 *  job makes without --hold holds rows whatever this says. */
#define JSMF_HOLD_CHOSEN JSMF_HOLD_DOCS

/** The name of a hold ("rows", "docs", "both"), or "?" . */
JSMF_API const char *jsmf_store_hold_name(uint32_t hold);

/** Settings fixed when a store is created. */
typedef struct jsmf_store_params {
    uint32_t min_doc_len;   /**< documents with fewer in-vocabulary tokens (and < 2) are dropped */
    uint32_t tok_min_len;   /**< tokenizer settings used for text input (recorded, informative) */
    uint32_t tok_max_len;
    uint32_t hold;          /**< JSMF_HOLD_*: what the store keeps of C (JSMF_HOLD_DEFAULT:
                                 JSMF_HOLD_CHOSEN); a store written before version 6 holds rows */
    uint64_t reserved[8]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_store_params;

/** Create the store `path` with vocabulary `v` and parameters `p` (jsmf_store_open with
 *  JSMF_STORE_CREATE, setting the vocabulary) and return it in *out, open for writing (end with
 *  jsmf_store_close; `v` is copied). `path` may be missing, an empty directory or a store never
 *  initialised; one with a vocabulary is JSMF_EEXIST, another writer JSMF_EBUSY. On error
 *  nothing this call made is left behind (the environment's files, and the directory when it
 *  made it); an environment that was there is left as it was. */
JSMF_API int jsmf_store_create(const char *path, const jsmf_vocab *v,
                               const jsmf_store_params *p, jsmf_store **out);

/** The parameters fixed at creation into *out. Errors: JSMF_ESTORE. */
JSMF_API int jsmf_store_params_get(jsmf_store *s, jsmf_store_params *out);

/** The directory a store was opened from (for messages), owned by the store. */
JSMF_API const char *jsmf_store_path(const jsmf_store *s);

/** The store's format version (JSMF_STORE_FORMAT_VERSION for a new store). Stores of version
 *  7 and later carry a checksum with every value (formats/store.md "Checksums"); older ones
 *  are read without the check. */
JSMF_API uint32_t jsmf_store_format_version(const jsmf_store *s);

/** Input record states. JSMF_INPUT_REMOVE appears only in a checkpoint's list of inputs:
 *  the record with that key is deleted (nothing when there is none); records of a flush are
 *  applied in array order, so a removal followed by a write under another key renames one. */
enum { JSMF_INPUT_PARTIAL = 0, JSMF_INPUT_COMPLETE = 1, JSMF_INPUT_REMOVE = 2 };

/** How far one input was consumed, and what it contributed (the checkpoint record). */
typedef struct jsmf_store_input {
    uint64_t fingerprint;    /**< content hash (formats/store.md, "inputs"); 0 for stdin while it is read */
    uint32_t occurrence;     /**< 0 for the first ingest of this content, 1 for a forced second ... */
    uint32_t state;          /**< JSMF_INPUT_PARTIAL or JSMF_INPUT_COMPLETE */
    uint32_t format;         /**< jsmf_format of the input */
    uint64_t size;           /**< bytes on disk (0 unknown) */
    uint64_t next_offset;    /**< decoded byte offset of the next unread document */
    uint64_t next_line;      /**< its 1-based line number */
    uint64_t next_doc;       /**< its 0-based document index */
    uint64_t docs, docs_dropped, tokens, tokens_dropped, oov_tokens; /**< contributed so far */
    char path[1024];         /**< the path as given ("-" for stdin), for messages */
    uint64_t reserved[8]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_store_input;

/** All input records in key order (fingerprint, occurrence): *n records in *out, an array the
 *  caller frees with free() (NULL when there are none). Errors: JSMF_ESTORE, JSMF_ENOMEM. */
JSMF_API int jsmf_store_inputs_get(jsmf_store *s, jsmf_store_input **out, uint32_t *n);

/** What a store holds (jsmf info, src/store/info.c): its counters `st` and its `n` input
 *  records `in`, on `f` as aligned text or as one JSON object (`json`); `path` names it. */
JSMF_API void jsmf_store_info_write(FILE *f, const char *path, const jsmf_store_stats *st,
                                    const jsmf_store_input *in, uint32_t n, int json);

/** Combine the `n` stores at `paths`, with identical vocabularies and parameters, into a new
 *  store `out`: C sums, counters, word statistics and input records add. Errors: JSMF_EEXIST
 *  (`out` exists), JSMF_EMISMATCH (names the first differing word or parameter), and those of
 *  jsmf_store_open for the inputs. */
JSMF_API int jsmf_store_merge(const char *out, const char *const *paths, uint32_t n);

/** jsmf export: C into the file `out` ("-": standard output, MatrixMarket only) as .npy (`npy`,
 *  refused above 4 GiB) or MatrixMarket, and, for a regular file, its vocabulary as
 *  OUT.vocab.txt (one word per line, row order). The matrix is renamed into place after its
 *  vocabulary is written: no OUT without OUT.vocab.txt, and a failure leaves an
 *  existing OUT as it was. Errors: JSMF_EINVAL (.npy above 4 GiB),
 *  JSMF_EIO and JSMF_ENOSPC naming the file, JSMF_ESTORE. */
JSMF_API int jsmf_store_export(jsmf_store *s, const char *out, int npy);

/** jsmf copy: the store at `src` as of its newest committed checkpoint, compacted (LMDB's copy
 *  in one read transaction: an ingest writing `src` is never blocked and the copy is one
 *  checkpoint of it), into the new store directory `dest`, which must not exist or be an
 *  empty directory. The copy is written to DEST.tmp-XXXXXX beside it, fsynced, opened and read
 *  whole by jsmf_store_check, and only then renamed to `dest`: a failure or a kill leaves no
 *  `dest` (a killed copy leaves its DEST.tmp-* directory, which may be removed). *copied (NULL:
 *  not wanted) gets the copy's counters (`bytes`: its data file), *check (NULL: not wanted)
 *  what its check found. `dest` "-" writes the compacted data file to standard output instead
 *  (refused when it is a terminal): a store again as DIR/data.mdb. It is not checked; *copied
 *  gets the counters read just before the copy began (the stream holds that checkpoint or a
 *  later one), `bytes` the bytes written when standard output is a regular file, else 0.
 *  Errors: JSMF_EEXIST (`dest` exists), JSMF_EINVAL (a terminal), JSMF_EIO and JSMF_ENOSPC
 *  naming the file, those of jsmf_store_open for `src`, and those of jsmf_store_check for the
 *  copy (naming `dest`). */
JSMF_API int jsmf_store_copy(const char *src, const char *dest, jsmf_store_stats *copied,
                             jsmf_store_check_result *check);

/* ---------------------------------------------------------------------------------------------
 * A vocabulary that grows (formats/store.md, "Growth"): the store counts the words it has not
 * admitted ("pending") while its rule grows, and admits those that pass the rule at the end of
 * each ingest command, with ids after the old ones (old ids never change). A word admitted
 * after M0 documents has admission point a = M0; readers divide a pair's sum by the documents
 * counted since both of its words could appear.
 * ------------------------------------------------------------------------------------------- */

/** States of a store's rule. */
enum {
    JSMF_RULE_NONE = 0,  /**< no rule recorded (a hand-written vocabulary, an older store): the
                              store does not grow */
    JSMF_RULE_GROW = 1,  /**< words passing the rule are admitted */
    JSMF_RULE_FROZEN = 2 /**< frozen: no word is counted or admitted */
};

/** The curation rule a store admits words by: jsmf vocab's curation (formats/vocab.md). */
typedef struct jsmf_store_rule {
    int state;             /**< JSMF_RULE_* */
    uint64_t min_df;       /**< admit words in at least this many counted documents */
    double max_df_frac;    /**< ... and in at most this fraction of the documents counted while
                                the store counted words (>= 1: no limit) */
    uint64_t max_words;    /**< N never grows past this (0: no cap) */
    char stopwords[8];     /**< "en" (the compiled-in list), "none", or "list" (the words
                                recorded with the rule) */
    uint64_t reserved[8]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_store_rule;

/** The text form of a rule: "min-df=5 max-df-frac=0.5 max-words=0 stopwords=en", or "frozen"
 *  (formats/vocab.md's rule line). Parse `text` onto *out (which the caller fills: keys not in
 *  `text` keep *out's values when out->state is JSMF_RULE_GROW, else take jsmf vocab's
 *  defaults); the word "frozen" makes the state FROZEN, "grow" GROW, keys alone GROW. Keys may
 *  come in any order. JSMF_EINVAL names `where` and the bad key or value; *out is then
 *  unchanged. */
JSMF_API int jsmf_store_rule_parse(const char *text, const char *where, jsmf_store_rule *out);
/** The text form of `r` into buf (NUL-terminated, cut at n; "none" for JSMF_RULE_NONE). */
JSMF_API void jsmf_store_rule_format(const jsmf_store_rule *r, char *buf, size_t n);

/** The store's rule into *out (JSMF_RULE_NONE when none is recorded). Errors: JSMF_ESTORE. */
JSMF_API int jsmf_store_rule_get(jsmf_store *s, jsmf_store_rule *out);
/** Record rule `r` in a store open for writing (one transaction); `stop` is the stopword list
 *  of a rule whose stopwords are "list" (NULL otherwise). Setting the rule changes no count;
 *  FROZEN stops counting and admitting until a growing rule is set again. */
JSMF_API int jsmf_store_rule_set(jsmf_store *s, const jsmf_store_rule *r, const jsmf_vocab *stop);
/** The stopwords of the store's rule with stopwords "list" into *out (free with
 *  jsmf_vocab_free; NULL when the rule has no list). */
JSMF_API int jsmf_store_rule_stopwords_get(jsmf_store *s, jsmf_vocab **out);

/** What a store's growth holds. */
typedef struct jsmf_store_growth {
    jsmf_store_rule rule;
    uint64_t pending;         /**< words counted and not admitted */
    uint64_t pending_digest;  /**< a hash of every pending (word, df, tf) in key order */
    uint64_t grow_docs;       /**< documents counted while the store counted words: the base
                                   of max_df_frac */
    uint32_t first_words;     /**< words admitted at point 0 (the first vocabulary) */
    uint32_t admitted_late;   /**< words admitted after documents were counted */
    uint64_t reserved[16]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_store_growth;

/** The store's growth into *out (one snapshot; reads every pending word for the digest).
 *  Errors: JSMF_ESTORE. */
JSMF_API int jsmf_store_growth_get(jsmf_store *s, jsmf_store_growth *out);

/** The admission point of every word (N entries, 0 for the first vocabulary) into *out, an
 *  array the caller frees with free(). Errors: JSMF_ESTORE, JSMF_ENOMEM. */
JSMF_API int jsmf_store_admissions_get(jsmf_store *s, uint64_t **out);

/** Admit the pending words that pass the store's rule (nothing unless it grows), in one write
 *  transaction: ordered by df descending then by bytes, they get ids N, N+1, ... up to the
 *  rule's max_words, admission point M (the documents counted now) and their counts as word
 *  statistics, and leave the pending table. `stop`: words never admitted (the rule's
 *  stopwords, resolved by the caller; NULL: none). *admitted gets how many. Running it twice
 *  with nothing counted between admits nothing the second time. */
JSMF_API int jsmf_store_admit(jsmf_store *s, const jsmf_vocab *stop, uint32_t *admitted);

/** jsmf_store_info_write with the store's growth (`g`, NULL: none shown). */
JSMF_API void jsmf_store_info_write_growth(FILE *f, const char *path, const jsmf_store_stats *st,
                                           const jsmf_store_growth *g, const jsmf_store_input *in,
                                           uint32_t n, int json);

#ifdef JSMF_ADVANCED
/* ---------------------------------------------------------------------------------------------
 * The input of fit, fdm and eval: a store, or a C that 'jsmf export' wrote (or another tool).
 * ------------------------------------------------------------------------------------------- */

/** What jsmf_source_open found at a path. */
typedef enum jsmf_source_kind {
    JSMF_SOURCE_STORE = 1, /**< a store directory */
    JSMF_SOURCE_NPY,       /**< a dense N x N float64 .npy (C order) */
    JSMF_SOURCE_MTX        /**< MatrixMarket 'coordinate real symmetric' (the lower triangle, as
                                export writes it) or 'general'; duplicate entries add up */
} jsmf_source_kind;

/** An opened input: C as a source, its vocabulary and, for a store, the store. The input owns
 *  all of them until jsmf_source_close. */
typedef struct jsmf_source_input {
    jsmf_source_kind kind;
    jsmf_source src;        /**< C; scans see one snapshot (a store's read transaction) */
    jsmf_vocab *vocab;      /**< the words of C's rows (owned); NULL for a matrix without one */
    jsmf_store *store;      /**< kind STORE: the open store (owned), else NULL */
    jsmf_store_stats stats; /**< kind STORE: its counters (docs, tokens, fingerprint), else 0 */
    struct jsmf_source_matrix *matrix; /**< private: the in-memory CSR of a matrix file */
} jsmf_source_input;

/** Flags of jsmf_source_open. */
enum {
    JSMF_SOURCE_NEED_VOCAB = 1 /**< a matrix file without its vocabulary is an error */
};

/** Open `path` read-only as the input of a fit, recognised by content, not by name:
 *   - a directory is a store (its errors: jsmf_store_open's);
 *   - a file starting with "\x93NUMPY" is a dense C (.npy), one starting with "%%MatrixMarket"
 *     a sparse one, read into memory (CSR, both triangles of a symmetric file);
 *   - a file named *.npy is read as .npy whatever it starts with, for that reader's message;
 *     anything else is JSMF_EFORMAT naming the path.
 *  A matrix must be square, its values finite (JSMF_EFORMAT names the file, and the line or
 *  entry). Its vocabulary is the file FILE.vocab.txt beside it ('jsmf export' writes it), or,
 *  failing that, the name with its extension replaced by ".vocab.txt"; when present it must
 *  have N words (JSMF_EMISMATCH); when absent vocab is NULL, or JSMF_ENOTFOUND with
 *  JSMF_SOURCE_NEED_VOCAB.
 *  JSMF_ENOTFOUND when nothing is at `path`. On error *out holds nothing to close. */
JSMF_API int jsmf_source_open(const char *path, int flags, jsmf_source_input *out);

/** Release what jsmf_source_open opened (a zeroed or failed input is fine). */
JSMF_API void jsmf_source_close(jsmf_source_input *in);

#endif /* JSMF_ADVANCED */

#ifdef __cplusplus
}
#endif
#endif /* JSMF_STORE_H */
