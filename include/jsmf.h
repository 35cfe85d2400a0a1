/* jsmf.h — the jsmf library's manual starts here: its conventions, error codes, version, the
 * matrix-source contract through which every stage reads the co-occurrence matrix C, and the
 * vocabulary.
 *
 * jsmf learns topics and topic correlations from the word co-occurrence matrix C of a corpus
 * (Joint Stochastic Matrix Factorization, the Rectified Anchor Word algorithm) and fits the
 * Full Dependence Mixture model on pairs sampled from C. The headers follow the pipeline, one
 * per stage, each readable alone (a program that fits includes jsmf_fit.h and what it names):
 *
 *   jsmf.h         this: conventions, errors, version, memory sizes, sources, vocabularies
 *   jsmf_io.h      input formats, the tokenizer, the vocabulary pass ('jsmf vocab')
 *   jsmf_store.h   the store: open, create, read C and its counters, check, merge, export
 *   jsmf_ingest.h  documents into a store: files, or documents handed over in memory
 *   jsmf_model.h   the MODEL directory: load, save, topics and their top words, the lineage
 *                  of a refit's topics, what changed between two models (diff)
 *   jsmf_fit.h     the spectral fit: rectification, anchors, B, A, alpha, hierarchy
 *   jsmf_fdm.h     the FDM model (CPU and CUDA back ends)
 *   jsmf_refine.h  a model refined over its documents (EM / CVB0 for LDA); documents read into
 *                  memory
 *   jsmf_eval.h    topic mixtures (theta) of documents, metrics, the HTML report
 *   jsmf_comm.h    the MPI job that ingest and fit may run on
 *
 * Only what these headers declare is the library's interface: libjsmf.so exports exactly these
 * functions (JSMF_API). Its soname changes with every ABI break (README, "Library versions").
 *
 * CONVENTIONS
 *  - Names: jsmf_<object>_<verb>, e.g. jsmf_store_open, jsmf_model_top_words. Library-wide
 *    calls have no object: jsmf_version, jsmf_strerror, jsmf_errmsg, jsmf_error, jsmf_fit,
 *    jsmf_tokenize.
 *  - Handles: jsmf_<obj>_create makes a new thing on disk, jsmf_<obj>_open opens one that
 *    exists; both are ended by jsmf_<obj>_close. jsmf_<obj>_new makes one in memory, ended by
 *    jsmf_<obj>_free. Closing or freeing NULL does nothing. A constructor's handle is its last
 *    argument (`&out`), set only on success. A result struct the caller owns (jsmf_fdm_result,
 *    jsmf_eval, jsmf_docbatch) has a jsmf_<obj>_free too: it frees what the struct holds.
 *  - Files by path: jsmf_<obj>_load reads a whole object (free it with jsmf_<obj>_free),
 *    jsmf_<obj>_save writes one whole or not at all; jsmf_<obj>_write(FILE *f, ...) prints to
 *    an open stream, for people unless it says otherwise.
 *  - Getters: jsmf_<obj>_<noun>_get(h, &out) fills a struct or hands over a new allocation and
 *    returns 0 or an error (`_get` because the bare name is often the type of `out`, e.g.
 *    jsmf_store_stats). A property that cannot fail is returned directly: jsmf_<obj>_<noun>(h)
 *    (jsmf_store_path, jsmf_comm_rank).
 *  - Options: each options struct jsmf_<obj>_opts has jsmf_<obj>_opts_init(&o) that fills it
 *    with the defaults the documentation of its fields names (fit's also takes K); set what
 *    differs, then pass &o. C code may use the static initialisers JSMF_*_OPTS_DEFAULT where
 *    a header defines one: they equal what _opts_init sets.
 *  - Errors: every function that can fail returns 0 (JSMF_OK) or a negative JSMF_E* code and
 *    nothing else: what it counts or finds (iterations used, whether a next item came) goes
 *    through an out-parameter (jsmf_theta_fit's *iters). Only functions that cannot fail return
 *    a count or flag (jsmf_tokenize, jsmf_model_top_words). Its comment lists the codes
 *    particular to it. Besides those, any call that allocates may return JSMF_ENOMEM and any
 *    that reads or writes files JSMF_EIO (JSMF_ENOSPC when the disk is full or over quota).
 *    Every failing call records a message (naming the file, line or offset and the problem);
 *    jsmf_errmsg_for(code) gives it for the code a call returned; the library never prints.
 *  - Ownership: what a call returns through a pointer argument belongs to the caller, who
 *    frees it with the function the comment names (free() for plain arrays and strings);
 *    pointers the caller passes in are only borrowed, for the call unless a comment says the
 *    object keeps them ("kept by reference": they must outlive it).
 *  - Threads: a handle is used by one thread at a time unless a function says otherwise; the
 *    library runs OpenMP inside its calls (their `threads` option, 0: the OpenMP default) and
 *    leaves the caller's OpenMP and OpenBLAS settings as they were.
 *  - Matrices are dense row-major double arrays unless stated otherwise.
 *  - Structs that grow: every options struct, and every report, result, summary, stats or
 *    record struct that a caller allocates (or indexes in an array the library returns), ends
 *    in `uint64_t reserved[n]`. A field added later takes words from that reserve, so the
 *    struct's size and every older field's offset stay: a MINOR version, and a program built
 *    with an older header keeps working with a newer library (tests/cli/api_abi.sh holds
 *    every struct of include/ to the layout recorded for this MAJOR version). So: fill
 *    options with their _opts_init (or zero them) before setting what differs, and zero a
 *    result struct or let the call fill it; a field added to options has 0 as its default
 *    (what a program built before it passes); the library never reads a reserve. Structs
 *    without a reserve are views of data (jsmf_vocab, jsmf_csr, jsmf_docbatch, ...): they
 *    never change within a MAJOR version.
 *  - Stable and advanced: what a header declares outside `#ifdef JSMF_ADVANCED` is the stable
 *    API, kept across MINOR versions. The advanced part — C as a jsmf_source and its documents
 *    views, the fit and FDM of an in-memory matrix, the FDM pair sampler, the MPI job's
 *    ingest — is declared only where the program defines JSMF_ADVANCED before including a
 *    header, as zstd does with ZSTD_STATIC_LINKING_ONLY: it may change in any version, so a
 *    program that uses it is built with the library it runs with (as the CLI and the Python
 *    package are).
 */
#ifndef JSMF_H
#define JSMF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What libjsmf.so exports: the library is built with -fvisibility=hidden, so a function
 *  declared without JSMF_API stays inside it (tests/cli/api_exports.sh compares the two). */
#if defined(__GNUC__)
#define JSMF_API __attribute__((visibility("default")))
#else
#define JSMF_API
#endif

#define JSMF_VERSION_MAJOR 3
#define JSMF_VERSION_MINOR 5
#define JSMF_VERSION_PATCH 0
#define JSMF_VERSION_STRING "3.5.0"

/** Error codes. Every library call that can fail returns 0 or one of these (negative). */
enum {
    JSMF_OK        = 0,
    JSMF_EINVAL    = -1,  /**< invalid argument or option value */
    JSMF_ENOMEM    = -2,  /**< out of memory, or a budget (--mem) too small for the task */
    JSMF_EIO       = -3,  /**< read/write error from the operating system (see errno text in message) */
    JSMF_EFORMAT   = -4,  /**< malformed input: message names file, line or byte offset, problem */
    JSMF_ESTORE    = -5,  /**< LMDB error not covered by a more specific code */
    JSMF_EVERSION  = -6,  /**< store or model written by an incompatible format version */
    JSMF_EEXIST    = -7,  /**< input already fully ingested (use force), or output exists */
    JSMF_EBUSY     = -8,  /**< another writer holds the store */
    JSMF_ENOSPC    = -9,  /**< disk full; the store is left at its last checkpoint */
    JSMF_EMISMATCH = -10, /**< stores or models that must agree do not (e.g. vocabularies in merge) */
    JSMF_ENOTSUP   = -11, /**< feature not compiled in (e.g. CUDA) or not supported for this input */
    JSMF_ENUMERIC  = -12, /**< numerical failure (no convergence, singular system, NaN) */
    JSMF_ENOTFOUND = -13, /**< store, model or file does not exist */
    JSMF_EINTR     = -14  /**< interrupted by a signal; state is at the last checkpoint */
};

/** Short constant name of an error code, e.g. "invalid argument". Never NULL. */
JSMF_API const char *jsmf_strerror(int code);

/** The detailed message of the last error raised in this thread ("" if none or cleared). The
 *  buffer is thread-local, owned by the library and overwritten by the next error: copy it to
 *  keep it. It may be left over from a failure the library handled itself; to explain a code a
 *  call returned, use jsmf_errmsg_for. */
JSMF_API const char *jsmf_errmsg(void);

/** The message explaining `code` as returned by the last failing call in this thread: the
 *  detailed message when it was raised with that same code, else jsmf_strerror(code). So a
 *  message left by an earlier, handled failure never explains a later, different one. Never
 *  NULL; the same buffer as jsmf_errmsg's. */
JSMF_API const char *jsmf_errmsg_for(int code);

/** Forget this thread's message (jsmf_errmsg() becomes ""). Call it after handling a failure
 *  and going on, as the library does where it falls back (e.g. from CUDA to the CPU). */
JSMF_API void jsmf_error_clear(void);

/** Record a detailed message for `code` in this thread's buffer and return `code`, so that a
 *  failing function can `return jsmf_error(JSMF_EFORMAT, "%s:%llu: ...", ...)` (a program
 *  reports its own errors the way the library does). Never fails. Every failing library call
 *  records one (tests/unit/test_core_errmsg.c checks the codes it provokes). */
JSMF_API int jsmf_error(int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/** Progress of a long call, the one callback type of the library: `what` (a step's name, or
 *  the path of the input being read), `done` of `total` (0: unknown) in `unit` ("MB", "steps",
 *  "" for a fraction). Called on the calling thread; NULL wherever one is accepted. */
typedef void (*jsmf_step_progress_fn)(void *arg, const char *what, double done, double total,
                                      const char *unit);

/** Ask the long call running on this thread to stop (`on` 1), or withdraw the request (0):
 *  called from one of its progress callbacks (which run on the calling thread), e.g. when a
 *  binding's user pressed Ctrl-C. The call returns JSMF_EINTR at its next check, which
 *  consumes the request: jsmf_ingest_files after a checkpoint of what it read (the same call
 *  resumes), jsmf_fit (and jsmf_fit_to_dir, which then writes nothing) between its steps and
 *  its reads of C. jsmf_fdm_train has its own stop flag (jsmf_fdm_opts.stop). A request no
 *  call consumed stays until withdrawn. Never fails. */
JSMF_API void jsmf_cancel(int on);

/** Library version and the optional features compiled in, e.g. "3.0.0 (openmp cuda)": a
 *  static string. Compare JSMF_VERSION_STRING (what a program was compiled with). */
JSMF_API const char *jsmf_version(void);

/** 1 if the CUDA back end was compiled in, 0 otherwise. */
JSMF_API int jsmf_have_cuda(void);

/** The default memory budget of ingest (--mem): a quarter of the machine's physical memory,
 *  between 512 MiB and 4 GiB. The fit's is half the machine's (jsmf_fit_opts.mem_bytes). */
JSMF_API uint64_t jsmf_mem_default(void);

/** The smallest --mem of any command: a budget for the command's large buffers (C or its row
 *  blocks, the ingest's accumulator and batches, the pair sampler's tables). Below it the
 *  process itself (program, libraries, LMDB, a zstd window) does not keep to the budget: peak
 *  RSS of 'jsmf ingest' (/usr/bin/time -f %M) at --mem 64M is 32 MiB on kjv and 50 MiB on
 *  debdesc (at 16M on kjv: 18 MiB). */
#define JSMF_MEM_MIN (64ull << 20)

/** What a command's peak RSS may exceed its --mem by: the program and its libraries (OpenBLAS's
 *  and OpenMP's per-thread buffers among them), the allocator's slack and the store's mapped
 *  pages, beside the arrays a plan counts (formats/fit.md, "Memory"; measured by
 *  tests/cli/fit_memory.sh). */
#define JSMF_MEM_ALLOWANCE (192ull << 20)

/** Parse a memory size ("512M", "2G", "1.5g", "4096" bytes; K, M, G, T are powers of 1024, an
 *  optional "B" or "iB" follows) into *out. JSMF_EINVAL (with a message naming `opt` and the
 *  text) for anything else, and for a size below JSMF_MEM_MIN unless `below_min` is set.
 *  `opt` names the setting in the message ("--mem"). */
JSMF_API int jsmf_mem_parse(const char *opt, const char *text, int below_min, uint64_t *out);

#ifdef JSMF_ADVANCED /* the advanced part (above, "Stable and advanced") */

/* ---------------------------------------------------------------------------------------------
 * Matrix sources: how every stage reads a sparse symmetric N x N matrix (normally C).
 *
 * A source visits each non-empty row once, in increasing row order, within one consistent
 * snapshot; columns within a row are strictly increasing. Values are the normalised C
 * (entries of the whole matrix sum to 1). A scan may be repeated; each repetition sees the same
 * data. The store provides one (jsmf_store_source), and tests can wrap an in-memory CSR.
 * ------------------------------------------------------------------------------------------- */

/** Called for each non-empty row; return 0 to continue, anything else stops the scan and is
 *  returned by scan(). The arrays are valid only during the call. */
typedef int (*jsmf_row_fn)(void *arg, uint32_t row, const uint32_t *cols, const double *vals,
                           uint32_t n);

typedef struct jsmf_source {
    uint32_t n;        /**< matrix dimension N (vocabulary size) */
    uint64_t nnz;      /**< number of stored entries (both triangles) */
    void *ctx;         /**< owner's state */
    /** Visit all rows in order; returns 0, a JSMF_E* code, or the visitor's non-zero value. */
    int (*scan)(void *ctx, jsmf_row_fn fn, void *arg);
    uint64_t bytes;    /**< bytes one scan reads from storage, for read rates (0: unknown) */
    /** Optional: visit rows r0 <= row < r1 only, in order (the share of one process of an MPI
     *  job); NULL: callers filter a full scan. */
    int (*scan_rows)(void *ctx, uint32_t r0, uint32_t r1, jsmf_row_fn fn, void *arg);
    /** Optional: the documents that define C (a store holding them, formats/store.md
     *  "Documents"); NULL: C is known only by its rows. Readers that multiply by C or sample
     *  from it may take this path when it is cheaper (nnz(H) against nnz). */
    const struct jsmf_doc_source *docs;
} jsmf_source;

/* ---------------------------------------------------------------------------------------------
 * Documents: C held by its documents. For document m with in-vocabulary counts h_m (distinct
 * words, ascending ids) and n_m = sum of h_m >= 2,
 *
 *     C_ij = sum_m (h_mi h_mj - [i == j] h_mi) / (n_m (n_m - 1))  /  ((M - max(a_i, a_j)) T)
 *
 * M the documents held, a_i the admission point of word i (0 for the first vocabulary) and T
 * the total that makes the entries sum to 1 (1 when no word was admitted late). This is the
 * matrix a rows-held store's source gives, up to the rounding of its fixed-point sums.
 * ------------------------------------------------------------------------------------------- */

/** A block of consecutive documents: document d of the block (global index first + d) holds
 *  ids[offs[d] .. offs[d+1]) with their counts (offs[0] need not be 0: a block may point into
 *  a larger array). The arrays are valid only during the call. */
typedef struct jsmf_doc_block {
    uint64_t first;          /**< index of the block's first document, 0 .. M-1 */
    uint32_t n_docs;         /**< documents in the block */
    const uint64_t *offs;    /**< n_docs + 1 offsets into ids and counts */
    const uint32_t *ids;     /**< word ids < N, strictly ascending within a document */
    const uint32_t *counts;  /**< counts >= 1 */
} jsmf_doc_block;

/** Called for each block, in document order; non-zero stops the scan and is returned. */
typedef int (*jsmf_doc_fn)(void *arg, const jsmf_doc_block *b);

typedef struct jsmf_doc_source {
    uint32_t n;              /**< N, as the source's */
    uint64_t n_docs;         /**< M */
    uint64_t nnz;            /**< nnz(H): (document, word) entries over all documents */
    uint64_t tokens;         /**< sum of n_m */
    const uint64_t *admit;   /**< N admission points < M, nondecreasing in the word id (a
                              *   word admitted later gets a later id); NULL when all are 0. A
                              *   store's source gives a word admitted at M (no documents
                              *   after it yet: a zero row) its predecessor's point */
    double total;            /**< T (1 when admit is NULL) */
    void *ctx;               /**< owner's state */
    /** Visit every document once, in blocks, always in the same order and with the same block
     *  boundaries; returns 0, a JSMF_E* code or the visitor's non-zero value. */
    int (*scan)(void *ctx, jsmf_doc_fn fn, void *arg);
    uint64_t bytes;          /**< bytes one scan reads from storage (0: unknown) */
} jsmf_doc_source;

/** Documents in memory, one row per document (CSR), as jsmf_doc_csr_source wraps them. */
typedef struct jsmf_doc_csr {
    uint32_t n;              /**< N: every id is < n */
    uint64_t n_docs;         /**< M */
    const uint64_t *offs;    /**< n_docs + 1 offsets, offs[0] = 0 */
    const uint32_t *ids;     /**< strictly ascending within a document */
    const uint32_t *counts;  /**< >= 1, each document's sum >= 2 */
    const uint64_t *admit;   /**< n admission points (< M, nondecreasing in the id) or NULL */
} jsmf_doc_csr;

/** Make `out` a documents view of `d` (no copy: its arrays must outlive `out`), scanned in
 *  blocks of `block_docs` documents (0: 4096). Checks every document and computes nnz, tokens
 *  and T; JSMF_EINVAL naming the first document that breaks the rules above. Release with
 *  jsmf_doc_csr_source_free. */
JSMF_API int jsmf_doc_csr_source(const jsmf_doc_csr *d, uint32_t block_docs, jsmf_doc_source *out);
/** Free what jsmf_doc_csr_source allocated (the view, not the arrays). */
JSMF_API void jsmf_doc_csr_source_free(jsmf_doc_source *s);

/** The mass one document adds to the unnormalised C (sum over i, j of its pairs, each divided
 *  by M - max(a_i, a_j)): T of a documents view is the sum of this over its documents. ids
 *  ascending, so their admission points are nondecreasing. */
JSMF_API double jsmf_doc_mass(const uint32_t *ids, const uint32_t *counts, uint32_t k,
                              const uint64_t *admit, uint64_t n_docs);

/** An in-memory CSR matrix wrapped as a source (no copy: arrays must outlive the source).
 *  rowptr has n+1 entries; cols/vals have rowptr[n] entries. */
typedef struct jsmf_csr {
    uint32_t n;
    const uint64_t *rowptr;
    const uint32_t *cols;
    const double *vals;
} jsmf_csr;

/** Make `out` a source that scans `csr` (for jsmf_fit, jsmf_fdm_train, jsmf_model_metrics on a
 *  matrix in memory). `csr` and its arrays are kept by reference: they must outlive `out`,
 *  which needs no release. Never fails. */
JSMF_API void jsmf_csr_source(const jsmf_csr *csr, jsmf_source *out);

#endif /* JSMF_ADVANCED */

/* ---------------------------------------------------------------------------------------------
 * Vocabulary: words in row order, shared by the store and the model directory.
 * ------------------------------------------------------------------------------------------- */

typedef struct jsmf_vocab {
    uint32_t n;        /**< number of words */
    char **words;      /**< n NUL-terminated UTF-8 words, row order */
    uint64_t *df;      /**< document frequency per word, or NULL when unknown */
    uint64_t *tf;      /**< term frequency per word, or NULL when unknown */
} jsmf_vocab;

/** Free a vocabulary and everything it owns (NULL is fine). Vocabularies are plain structs: a
 *  caller may also build one with malloc'ed words, arrays and struct, and free it here. */
JSMF_API void jsmf_vocab_free(jsmf_vocab *v);

/** Read a vocabulary file (formats/vocab.md): "word", or "word<TAB>df<TAB>tf" per line, optional
 *  '#' header lines, into *out (free with jsmf_vocab_free). A line starting "\#" or "\\" is
 *  the word without its first byte (the escape jsmf_vocab_save writes). Errors name the file and
 *  line: JSMF_ENOTFOUND, JSMF_EFORMAT (duplicates, empty words, a bad count). */
JSMF_API int jsmf_vocab_load(const char *path, jsmf_vocab **out);

/** Write a vocabulary file ("-" = standard output), with df/tf when present; whole or not at
 *  all (an existing file stays as it was on error). A word starting with '#' or '\' is written
 *  with a '\' before it, so that it reads back as itself; every other word as it is. Errors
 *  name `path`: JSMF_EIO, JSMF_ENOSPC, JSMF_EINVAL (a directory; a word no line can hold: empty,
 *  with a TAB or line feed, or ending in a CR — nothing is written). */
JSMF_API int jsmf_vocab_save(const char *path, const jsmf_vocab *v);

/** Word lookup: text -> row of a vocabulary (ingest maps tokens to the store's rows, infer and
 *  eval to the model's); with jsmf_tokenize, the way to turn a string into the word ids that
 *  jsmf_ingest_doc and jsmf_theta_fit take. */
typedef struct jsmf_wordmap jsmf_wordmap;
/** A map of the words of `v` into *out (free with jsmf_wordmap_free). The map refers to `v`'s
 *  words without copying: `v` must outlive it. JSMF_ENOMEM only. */
JSMF_API int jsmf_wordmap_new(const jsmf_vocab *v, jsmf_wordmap **out);
/** Row of the word (s, len), or UINT32_MAX when absent. Safe to call from several threads. */
JSMF_API uint32_t jsmf_wordmap_find(const jsmf_wordmap *m, const char *s, size_t len);
/** Free a map (NULL is fine); its vocabulary is not touched. */
JSMF_API void jsmf_wordmap_free(jsmf_wordmap *m);

/** The whole file `path` into *text (NUL-terminated, malloc'ed: the caller frees it with
 *  free()). JSMF_ENOTFOUND when there is no such file, JSMF_EIO, JSMF_ENOMEM, each naming the
 *  path with the system's reason. */
JSMF_API int jsmf_file_load(const char *path, char **text);

#ifdef __cplusplus
}
#endif
#endif /* JSMF_H */
