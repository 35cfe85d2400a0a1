/* ingest_internal.h — what the files of src/ingest share besides the public session: session
 * bookkeeping, pieces of files, the MPI job, opening or making the store, and the cleanup of a
 * store a failed first ingest made. */
#ifndef JSMF_INGEST_INTERNAL_H
#define JSMF_INGEST_INTERNAL_H

#include <stdio.h>

#include "jsmf_ingest.h"
#include "store/files.h"

/** JSMF_ENOMEM, naming the least budget, when `mem` cannot hold an ingest of a vocabulary of
 *  `n_words` words (reading, the store's writes, the per-word arrays and the smallest
 *  accumulator): jsmf_ingest_new's check, for callers that create a store first. */
int ingest_mem_check(uint32_t n_words, uint64_t mem);

/** `n` documents without words (all dropped), at once: the same as n calls of jsmf_ingest_doc
 *  with n = 0 and oov = 0, the last with this resume point. */
int ingest_empty_docs(jsmf_ingest *g, uint64_t n, uint64_t next_offset, uint64_t next_line,
                           uint64_t next_doc);

/** The stopwords of rule `r` of store `s` into *out (NULL: none; free with jsmf_vocab_free). */
int ingest_rule_stopwords(jsmf_store *s, const jsmf_store_rule *r, jsmf_vocab **out);

/** What the admission at the start of a command did (ingest_admit_ahead). */
typedef struct jsmf_ingest_ahead {
    uint32_t admitted;          /**< words admitted */
    uint64_t docs;              /**< contributing documents the pre-pass counted */
    jsmf_store_input *marks;    /**< the new inputs' records it wrote (no progress; caller frees) */
    uint32_t n_marks;
} jsmf_ingest_ahead;

/** The admission at the start of an ingest command (formats/store.md, "Growth"), while the
 *  store's rule grows: the inputs among `paths` that the command starts afresh (not stdin, no
 *  partial record, not complete unless o->force) are read once (tokenized and mapped, no
 *  pairs), and the words outside the vocabulary whose df, stored plus counted in their
 *  contributing documents, passes the rule join the vocabulary with admission point M (the
 *  documents before the command), in one transaction that also writes those inputs' records
 *  without progress: a rerun resumes them and admits nothing again. Nothing is written when no
 *  input is new or none of their documents counts. Errors: the inputs' (nothing written) and the
 *  store's. */
int ingest_admit_ahead(jsmf_store *s, const char *const *paths, uint32_t n,
                            const jsmf_ingest_opts *o, jsmf_ingest_ahead *out);

/** Checkpoints committed by this session so far. */
uint64_t ingest_checkpoints(const jsmf_ingest *g);

/** What this session has counted so far: documents, dropped documents, tokens, OOV tokens
 *  (the timing fields are those of the last finish, zero before). */
void ingest_totals(const jsmf_ingest *g, jsmf_ingest_summary *out);

/** Like jsmf_ingest_input_done, but the record becomes complete under the key (fingerprint,
 *  occurrence) with `size`: for stdin, whose content is known only at its end. `stored` says
 *  that the record may already be in the store under its old key (it was resumed, or a
 *  checkpoint came while it was read); the completing checkpoint then removes it and writes
 *  the record under its new key, in one commit (JSMF_INPUT_REMOVE). */
int ingest_input_done_as(jsmf_ingest *g, uint64_t fingerprint, uint32_t occurrence,
                              uint64_t size, int stored);

/** Drop the current input and all that was buffered since the last checkpoint, which must be
 *  this input's only (take a checkpoint before starting it): it adds nothing to the store.
 *  JSMF_EINVAL when other inputs' progress is buffered too. */
int ingest_input_discard(jsmf_ingest *g);

/** A piece of an input: the documents starting in [start_offset, end_offset) of a file, which
 *  for a split must be plain (not compressed) text or LDA-C, one document per line; start_offset
 *  is the start of a line, start_line its 1-based number, start_doc its document index. */
typedef struct jsmf_ingest_piece {
    const char *path;
    uint64_t key;             /**< the fingerprint its record gets in the store ingested into */
    uint64_t start_offset, start_line, start_doc;
    uint64_t end_offset;      /**< 0: to the end of the file */
} jsmf_ingest_piece;

/** Ingest pieces as jsmf_ingest_files ingests files, each recorded under (key, 0): a piece
 *  already complete is skipped, a partial one resumed. Unlike jsmf_ingest_files, neither all
 *  pieces skipped nor pieces that add no document is an error: pieces are one process's share of
 *  a job (ingest_dist), which judges the whole. */
int ingest_pieces(jsmf_store *s, const jsmf_ingest_piece *pieces, uint32_t n,
                       const jsmf_ingest_opts *o, jsmf_ingest_summary *sum);

/** Ingest `paths` (files, no stdin) into one store with all ranks of `c`; every rank calls it
 *  with the same arguments, and rank 0 passes the store, opened for writing with its
 *  vocabulary (other ranks pass NULL; `store_path` names it on all). Rank 0 cuts the inputs into
 *  pieces (whole files; plain text and LDA-C files larger than a piece at line starts), each
 *  rank ingests its pieces into its own shard store with checkpoints, the shards' exact sums are
 *  added by row ranges (all-to-all rounds of about o->mem / 8 bytes a rank) and rank 0 commits
 *  the total as one checkpoint with one complete record per input. The store equals the one
 *  jsmf_ingest_files writes from the same inputs (C's sums, counters, word statistics and
 *  records), for any number of ranks. A job killed before that commit leaves the store as it
 *  was; run again with the same inputs and ranks, it resumes each shard from its checkpoint
 *  (with others, it starts over). o->mem is each rank's budget. Inputs the store holds completely
 *  are skipped unless o->force; all skipped is JSMF_EEXIST. An error on any rank is an error on
 *  all (comm_agree). */
int ingest_dist(struct jsmf_comm *c, jsmf_store *s, const char *store_path,
                     const char *const *paths, uint32_t n, const jsmf_ingest_opts *o,
                     const jsmf_ingest_dist_opts *d, jsmf_ingest_dist_summary *sum);

/* ---- the store an ingest writes (src/ingest/open_store.c) ----------------------------------- */

/** How ingest_open_store finds or makes the store. */
typedef struct jsmf_ingest_store_opts {
    const char *vocab;        /**< vocabulary file of a new store (formats/vocab.md); an
                                   existing store must have the same. NULL: a new store counts
                                   its inputs once with 'jsmf vocab' defaults (not stdin) */
    uint32_t min_doc_len;     /**< of a new store */
    int min_doc_len_given;    /**< an existing store must have been created with min_doc_len */
    uint32_t hold;            /**< of a new store (JSMF_HOLD_*; 0: the default); an existing
                                   store must hold this unless 0 */
    jsmf_format format;       /**< of the inputs, for the counting pass */
    const char *uci_vocab;    /**< UCI vocabulary of the inputs, for the counting pass */
    uint64_t mem;             /**< the ingest's budget: a new store is not made for one too small */
    int mem_below_need;       /**< as in jsmf_ingest_opts: skip that check */
    jsmf_step_progress_fn progress; /**< of the counting pass on one process (what =
                                   "vocabulary"; MB of the input being read), or NULL */
    void *progress_arg;
    const jsmf_vocab *counted;/**< a new store's vocabulary already counted (by the ranks of an
                                   MPI job: ingest_open_store_dist); NULL: as above */
    int threads;              /**< of the counting pass (jsmf_read_opts.threads; 0: all cores) */
    const char *rule;         /**< set or change the store's growth rule (jsmf_ingest_run_opts) */
} jsmf_ingest_store_opts;

/** Open the store at `path` for writing, or create it when there is none (or one never
 *  initialised), its vocabulary from o->vocab or one counting pass over the `n` `inputs`. A new
 *  store is made only once its vocabulary is known, so a failed counting pass leaves nothing.
 *  *df gets the new vocabulary's document frequencies when it has them (for
 *  jsmf_ingest_opts.df; caller frees; NULL otherwise) and *counted what the counting pass
 *  counted (zero when none ran). */
int ingest_open_store(const char *path, const char *const *inputs, uint32_t n,
                           const jsmf_ingest_store_opts *o, jsmf_store **out, uint64_t **df,
                           jsmf_vocab_stats *counted);

/** ingest_open_store for the ranks of an MPI job, all of which call it: when the store has
 *  to be created and o->vocab is NULL, the counting pass is shared among the ranks
 *  (vocab_count_dist), then rank 0 opens or creates the store (*out; NULL on the other
 *  ranks). An error on any rank is an error on all. */
int ingest_open_store_dist(struct jsmf_comm *c, const char *path, const char *const *inputs,
                                uint32_t n, const jsmf_ingest_store_opts *o, jsmf_store **out,
                                uint64_t **df, jsmf_vocab_stats *counted);

/** One counting pass over `inputs` shared by the ranks of `c`, cut into pieces as
 *  ingest_dist cuts them (`piece_bytes` 0: its default); the counts are added on rank 0,
 *  which curates them (*out, *st): the vocabulary one process would count. Other ranks get
 *  *out NULL. Stdin is refused. */
int vocab_count_dist(struct jsmf_comm *c, const char *const *inputs, uint32_t n,
                          const jsmf_read_opts *ro, const jsmf_vocab_opts *vo,
                          uint64_t piece_bytes, jsmf_vocab **out, jsmf_vocab_stats *st);

/** What an ingest did, for people: notes (a budget below what it needed, documents
 *  checkpointed alone, inputs skipped) and its summary, in lines of at most 80 columns for
 *  typical values, each "PREFIX: ..." (prefix NULL: none). `store` names the store, `mem` is
 *  the budget it was given. */
void ingest_summary_write(FILE *f, const char *prefix, const char *store, uint64_t mem,
                               const jsmf_ingest_summary *r);

/* ---- a store this run creates ------------------------------------------------------------ */

/** What a store's directory held before an ingest opened it (ingest_target_note), so that
 *  a first ingest that fails before its first checkpoint leaves nothing behind. */
typedef struct jsmf_ingest_target {
    unsigned char existed[1 + JSMF_STORE_NFILES]; /**< the directory, then each store file */
} jsmf_ingest_target;

/** Note what exists at `path`; call before jsmf_store_open(path, JSMF_STORE_CREATE). */
void ingest_target_note(const char *path, jsmf_ingest_target *t);

/** After a failed ingest: close `s` (NULL when the open itself failed) and, when the store
 *  holds no input record (no checkpoint was ever committed, so nothing can be resumed) and its
 *  data file is new, remove the files and directory that did not exist before. A store that
 *  existed is only closed, never changed. Returns 1 when something was removed. */
int ingest_target_discard(const char *path, const jsmf_ingest_target *t, jsmf_store *s);

#endif
