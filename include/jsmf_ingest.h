/* jsmf_ingest.h — accumulating the co-occurrence estimator of documents into a store
 * (formats/store.md): C = sum_m (h h^T - diag h) / (n (n - 1)) over in-vocabulary word counts h
 * of each document m with n = sum h >= max(2, min_doc_len), as exact fixed-point sums, with
 * checkpoints that make an interrupted ingest resumable.
 *
 * CAVEATS
 *  - The result does not depend on the thread count, the memory budget or on where an ingest
 *    was interrupted and resumed: every contribution is an integer and integer sums are exact.
 *  - Every flush of the accumulator is a checkpoint (one LMDB write transaction): it carries the progress
 *    of each input, so a resumed ingest neither skips nor double-counts a document.
 *  - The memory budget bounds everything that grows: the accumulator tables, the batch buffers,
 *    the N-sized arrays and the store's checkpoint transactions (a budget/16 share, at most
 *    32 MiB, for the staging buffer and as much again for LMDB's dirty pages). A single
 *    document with more distinct-word pairs than the tables hold is checkpointed alone, its
 *    rows generated from its word counts, so it needs no memory beyond O(N) either.
 */
#ifndef JSMF_INGEST_H
#define JSMF_INGEST_H

#include "jsmf_io.h"
#include "jsmf_store.h"
#include "jsmf_comm.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How documents are ingested (fill with jsmf_ingest_opts_init). */
typedef struct jsmf_ingest_opts {
    uint64_t mem;             /**< memory budget in bytes (0 = jsmf_mem_default()) */
    int threads;              /**< worker threads (0 = OpenMP default) */
    int force;                /**< ingest inputs already fully ingested again */
    int format;               /**< jsmf_format of the inputs (0 = sniff each) */
    const char *uci_vocab;    /**< UCI vocabulary file (NULL = beside the docword file) */
    int accumulator;          /**< 0 auto: a dense upper triangle when it fits the budget, else
                                   the documents kept and C's rows computed from them at each
                                   checkpoint; 1 hash tables (with a dense block for frequent
                                   words), 2 dense, 3 documents: for measurements; the result
                                   is the same */
    double checkpoint_secs;   /**< also checkpoint after this much time (0 = 300 s, < 0 never) */
    const uint64_t *df;       /**< document frequency of each word (N entries) to plan the
                                   accumulator by when the store has counted none yet (a new
                                   store: its vocabulary's df); NULL: none. The result is the
                                   same either way; only speed and checkpoints change */
    int mem_below_need;       /**< 0: a `mem` below what the ingest needs (jsmf_ingest_summary
                                   mem_needed) is JSMF_ENOMEM before anything is read; 1: run
                                   with the least anyway (tests: small checkpoint windows) */
    jsmf_step_progress_fn progress; /**< how far the input being read is (what = its path, "<stdin>" for "-"; MB), or NULL */
    void *progress_arg;
    jsmf_warn_fn warn;        /**< told what may surprise (formats/inputs.md, "Warnings"): an
                                   input that is empty, has only empty documents, invalid UTF-8,
                                   or adds no document to C; vocabulary words text input can
                                   never match. NULL: silent */
    void *warn_arg;
    uint64_t reserved[8]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_ingest_opts;

/** Fill `o` with the defaults: every field 0 or NULL (the budget jsmf_mem_default(), the
 *  OpenMP default of threads, formats sniffed, checkpoints every 300 s, silent). */
JSMF_API void jsmf_ingest_opts_init(jsmf_ingest_opts *o);

/** What one ingest did (this run only). */
typedef struct jsmf_ingest_summary {
    uint64_t docs, docs_dropped, tokens, tokens_dropped, oov_tokens;
    uint64_t pairs;           /**< pair updates (upper triangle, diagonal included) */
    uint64_t flushes;         /**< checkpoints committed */
    uint32_t dense_width;     /**< the accumulator's dense block: pairs of the words with ids
                                   below this (N: all of C dense, 0: hash tables only) */
    int doc_buffer;           /**< 1: documents were kept and C's rows computed from them;
                                   2: the store holds documents only, no rows were summed */
    uint64_t mem_needed;      /**< the least --mem that leaves the accumulator its minimum
                                   (1 MiB); a smaller budget is refused, or, with
                                   mem_below_need, exceeded by the difference */
    uint64_t oversize_docs;   /**< documents with more pairs than the budget's tables hold:
                                   each checkpointed alone, straight from its word counts */
    uint32_t inputs_done;     /**< inputs read to the end */
    uint32_t inputs_resumed;  /**< of them, inputs continued from a checkpoint */
    uint32_t inputs_skipped;  /**< inputs already complete in the store (without force) */
    uint32_t inputs_repeated; /**< stdin inputs whose content the store already held completely,
                                   found at their end after a checkpoint had stored part of
                                   them: completed again under the next occurrence */
    double seconds;           /**< wall time of the run, of which: */
    double seconds_adding;    /**< reading waited for batches of pairs to be added (adding
                                   overlaps reading; this is the part that did not) */
    double seconds_checkpoints; /**< checkpoints: turning the accumulator into rows, and the
                                   commit (the rest is reading, tokenising, word lookup) */
    uint64_t reserved[16]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_ingest_summary;

/* ---- documents handed over in memory ----------------------------------------------------------
 * A session adds documents that the caller has already turned into word ids of the store's
 * vocabulary: text through jsmf_tokenize and a jsmf_wordmap of jsmf_store_vocab_get's words,
 * or ids of its own. Documents belong to an input (its record in the store, with the position
 * after the last document: what a resumed run starts from), and are committed at checkpoints.
 *   jsmf_ingest_new -> (jsmf_ingest_input -> jsmf_ingest_doc ... -> jsmf_ingest_input_done) ...
 *   -> jsmf_ingest_finish (or jsmf_ingest_free to drop what the last checkpoint does not hold)
 * ------------------------------------------------------------------------------------------- */

typedef struct jsmf_ingest jsmf_ingest;

/** Start a session on `s`, a store opened for writing (with its vocabulary set), into *out:
 *  ended by jsmf_ingest_finish or jsmf_ingest_free; `s` must stay open until then. `o` is
 *  copied (NULL: jsmf_ingest_opts_init's). Errors: JSMF_EINVAL (no vocabulary), JSMF_ENOMEM
 *  (o->mem below what the session needs, naming the least). */
JSMF_API int jsmf_ingest_new(jsmf_store *s, const jsmf_ingest_opts *o, jsmf_ingest **out);

/** Start (or resume) an input. `rec` is its record, copied: a fresh one (state
 *  JSMF_INPUT_PARTIAL, counters zero, a fingerprint and path naming the input), or the partial
 *  record jsmf_store_inputs_get found. Documents that follow belong to it. JSMF_ENOMEM only. */
JSMF_API int jsmf_ingest_input(jsmf_ingest *g, const jsmf_store_input *rec);

/** The words outside the vocabulary of the next document jsmf_ingest_doc gets (`n` distinct
 *  words of `len` bytes with `count` occurrences each; all borrowed until that call): while the
 *  store's rule grows, a contributing document's are counted as pending words, but the rule's
 *  stopwords (formats/store.md, "Growth"); ignored otherwise. A program that feeds documents
 *  of words gives them so that its store grows as one fed the same documents from a file. */
JSMF_API void jsmf_ingest_doc_words(jsmf_ingest *g, const char *const *words, const uint32_t *len,
                                    const uint32_t *count, uint32_t n);

/** The admission that ends an ingest command (jsmf_ingest_files also admits at its start, after
 *  a pre-pass over its files; formats/store.md, "Growth"): the pending words that pass the
 *  store's rule join the vocabulary with the next ids (jsmf_store_admit with the rule's
 *  stopwords; nothing unless the rule grows); their number in *admitted. jsmf_ingest_files runs it; a program
 *  feeding jsmf_ingest_doc calls it after jsmf_ingest_finish (and again after a kill between
 *  the two: it admits only what is still pending). */
JSMF_API int jsmf_ingest_admit(jsmf_store *s, uint32_t *admitted);

/** One document as `n` word ids of the store's vocabulary with counts (any order, repeats
 *  allowed; both arrays borrowed), plus its out-of-vocabulary token count and the resume point
 *  just after it (decoded byte offset, 1-based line, 0-based document index of the next
 *  document). May commit a checkpoint. Errors: JSMF_EINVAL (no input started), JSMF_EFORMAT
 *  (an id outside the vocabulary), and a checkpoint's (jsmf_ingest_checkpoint). */
JSMF_API int jsmf_ingest_doc(jsmf_ingest *g, const uint32_t *ids, const uint32_t *counts,
                             uint32_t n, uint64_t oov, uint64_t next_offset, uint64_t next_line,
                             uint64_t next_doc);

/** The current input was read to its end (its record becomes complete at the next checkpoint). */
JSMF_API int jsmf_ingest_input_done(jsmf_ingest *g);

/** Commit what is buffered now (a checkpoint; nothing when nothing is buffered). Errors: those
 *  of the store's write: JSMF_ENOSPC (the store stays at its last checkpoint), JSMF_ESTORE,
 *  JSMF_EIO, JSMF_ENOMEM. */
JSMF_API int jsmf_ingest_checkpoint(jsmf_ingest *g);

/** Commit what is buffered (the final checkpoint) and free the session, also on error. *sum
 *  (may be NULL) gets what the session did. Errors: jsmf_ingest_checkpoint's. */
JSMF_API int jsmf_ingest_finish(jsmf_ingest *g, jsmf_ingest_summary *sum);

/** Free the session without committing (NULL is fine): the store stays at its last checkpoint. */
JSMF_API void jsmf_ingest_free(jsmf_ingest *g);

/* ---- files ------------------------------------------------------------------------------- */

/** Ingest inputs (paths, "-" = stdin) into a store opened for writing that has its vocabulary.
 *  A partial input resumes from its checkpoint. An input the store holds completely (same
 *  fingerprint) is not ingested again unless o->force: it is skipped (counted in
 *  sum->inputs_skipped) so that rerunning an interrupted command resumes it, and when every
 *  input is skipped the call fails with JSMF_EEXIST. A run that resumes nothing and adds no
 *  document to C (empty inputs, or every document dropped) fails with JSMF_EFORMAT before its
 *  final checkpoint, so the store is left as it was. On error the store is at its last
 *  checkpoint. While the store's rule grows (jsmf_store_rule_get), the words outside the
 *  vocabulary are counted at the checkpoints, and words are admitted twice (formats/store.md,
 *  "Growth"): first, before anything is counted, the words that pass the rule with the counts
 *  of one pre-pass over the new input files (those started afresh; not stdin) added to the
 *  stored ones, in one transaction that also writes those inputs' records without progress, so
 *  that a rerun resumes them and does not admit again; then, once every input is complete, the
 *  words that pass with the stored counts (jsmf_store_admit): stdin's, chiefly. When every
 *  input is skipped that second admission still runs, and the call succeeds when it admitted
 *  words (a rerun after a kill between the last checkpoint and the admission). An input the
 *  pre-pass cannot read fails the call before anything is written. A jsmf_ingest_doc session
 *  counts the words given by jsmf_ingest_doc_words and admits by jsmf_ingest_admit (as stdin's:
 *  at the end). */
JSMF_API int jsmf_ingest_files(jsmf_store *s, const char *const *paths, uint32_t n,
                               const jsmf_ingest_opts *o, jsmf_ingest_summary *sum);

/* ---- an ingest on the ranks of an MPI job (jsmf_ingest_run with a communicator) -------------- */

struct jsmf_comm;

/** How a job cuts and exchanges its work. */
typedef struct jsmf_ingest_dist_opts {
    const char *shard_dir;    /**< where each rank keeps its shard store and reduced rows (a
                                   node-local disk, say); NULL: STORE/mpi-ingest */
    uint64_t piece_bytes;     /**< target size of a piece of a large plain file; 0: a quarter
                                   of the inputs' bytes per rank, at least 1 MiB */
    uint64_t reserved[8]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_ingest_dist_opts;

/** Fill `o` with the defaults: shard_dir NULL, piece_bytes 0 (both chosen by the job). */
JSMF_API void jsmf_ingest_dist_opts_init(jsmf_ingest_dist_opts *o);

/** What a job did. */
typedef struct jsmf_ingest_dist_summary {
    jsmf_ingest_summary ingest; /**< the job's totals (inputs_skipped: inputs complete already) */
    uint32_t pieces;            /**< pieces the inputs were cut into */
    int restarted;              /**< shards of an earlier job with other inputs or ranks were
                                     found and dropped: the job started over */
    uint32_t rounds;            /**< rounds of the exchange */
    uint64_t bytes_received;    /**< this rank: entry bytes received in the exchange */
    double seconds_ingest, seconds_exchange, seconds_commit;
    struct jsmf_comm_stats comm;/**< this rank's communication: bytes sent, calls, seconds */
    uint64_t reserved[16]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_ingest_dist_summary;

/* ---- one ingest, as `jsmf ingest` runs it (src/ingest/run.c) ----------------------------- */

/** What jsmf_ingest_run needs: the ingest's own options, how a new store is made, and the job's
 *  when it runs on several ranks. */
typedef struct jsmf_ingest_run_opts {
    jsmf_ingest_opts ingest;  /**< the ingest (its df is the run's: leave it NULL); its mem,
                                   mem_below_need, format, uci_vocab, threads and progress also
                                   serve the counting pass of a new store (its progress: what =
                                   "vocabulary") and the check of its budget */
    const char *vocab;        /**< vocabulary file of a new store; an existing store must have
                                   the same. NULL: a new store counts its inputs once */
    uint32_t min_doc_len;     /**< of a new store ('jsmf ingest' default: 5) */
    int min_doc_len_given;    /**< an existing store must have been created with min_doc_len */
    uint32_t hold;            /**< what a new store keeps of C (JSMF_HOLD_*, formats/store.md
                                   "Documents"; 0: JSMF_HOLD_CHOSEN); an existing store must
                                   have been created with it unless 0 */
    jsmf_ingest_dist_opts dist; /**< the job's, on several ranks */
    /** Told what the counting pass of a new store counted, as soon as the store is made and
     *  before any input is ingested (on rank 0 of a job); not called when no pass ran. NULL:
     *  not told (jsmf_ingest_run_summary has it too). */
    void (*counted)(void *arg, const jsmf_vocab_stats *st);
    void *counted_arg;
    const char *rule;         /**< set or change the store's growth rule (formats/store.md,
                                   "Growth") before ingesting: rule text (jsmf_store_rule_parse)
                                   applied to the store's rule, "frozen" to freeze it; keys on a
                                   frozen store need "grow" too. NULL: keep the store's (a new
                                   store made with `vocab` takes the rule its file carries) */
    uint64_t reserved[8]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_ingest_run_opts;

/** Fill `o` with the defaults of 'jsmf ingest': jsmf_ingest_opts_init's ingest, min_doc_len 5,
 *  everything else 0 or NULL. */
JSMF_API void jsmf_ingest_run_opts_init(jsmf_ingest_run_opts *o);

/** What jsmf_ingest_run did. */
typedef struct jsmf_ingest_run_summary {
    jsmf_vocab_stats vocab;   /**< the counting pass of a new store (zero when none ran) */
    jsmf_ingest_summary ingest; /**< the ingest (on several ranks: the job's totals) */
    int ranks;                /**< the processes that ran it: 1, or the ranks of the job */
    jsmf_ingest_dist_summary dist; /**< ranks > 1: the job (pieces, exchange, this rank's
                                        communication); zero otherwise */
    uint32_t words_admitted;  /**< words the store admitted at the end of the run (growth) */
    uint64_t reserved[16]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_ingest_run_summary;

/** Ingest `inputs` into the store at `path`, all of it: open the store, or create it with its
 *  vocabulary (o->vocab, or one counting pass over the inputs, shared by the ranks of a job);
 *  ingest the inputs on this process (c NULL or of one process: jsmf_ingest_files) or on all
 *  ranks of `c` (every rank calls this with the same arguments: formats/store.md, "Several
 *  processes"); close the
 *  store. When the run fails, a store it created is removed again as long as it holds no input
 *  record: a failed first ingest leaves the directory as it was;
 *  an existing store stays at its last checkpoint. Surprises go to o->ingest.warn, also stdin
 *  that repeated content the store held completely (r->ingest.inputs_repeated). *r is filled
 *  as far as the run got. */
JSMF_API int jsmf_ingest_run(const char *path, const char *const *inputs, uint32_t n,
                             const jsmf_ingest_run_opts *o, struct jsmf_comm *c,
                             jsmf_ingest_run_summary *r);

/** The line of a counting pass (nothing when it kept no word): "PREFIX: vocabulary: W words
 *  kept of S seen in D documents". */
JSMF_API void jsmf_ingest_vocab_write(FILE *f, const char *prefix, const jsmf_vocab_stats *st);

/** What a run did, for people: on several ranks a note when the shards of an earlier job were
 *  dropped; what the ingest did (documents, tokens, checkpoints, times, the budget); on several
 *  ranks the job's times, pieces, rounds and rank 0's traffic, in two lines. */
JSMF_API void jsmf_ingest_run_write(FILE *f, const char *prefix, const char *store, uint64_t mem,
                                    const jsmf_ingest_run_summary *r);

#ifdef __cplusplus
}
#endif
#endif /* JSMF_INGEST_H */
