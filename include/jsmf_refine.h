/* jsmf_refine.h — refinement of a model over its documents: a few iterations of MAP-EM for LDA
 * (every document's topic mixture and the topics themselves), started from a spectral (or FDM)
 * model, and the reader that loads a corpus file's documents into memory for it.
 *
 * The spectral fit reads C, which forgets which words shared a document; the refinement reads
 * the documents again and climbs the LDA likelihood from the spectral topics, which held-out
 * likelihood rewards (tools/bench/heldout-results.md). It maximises, over theta (one K-vector
 * per document, on the simplex) and B (N x K, columns on the simplex),
 *
 *     L = sum_d sum_w h_dw log(sum_k theta_dk B_wk) + a sum_dk log theta_dk + b sum_wk log B_wk
 *
 * (the MAP objective of LDA with Dirichlet(1 + a) and Dirichlet(1 + b) priors) by EM: each
 * iteration fits every document's theta a few EM steps with B fixed, then takes one joint EM
 * step: theta_dk <- (n_dk + a) / (n_d + K a), B_wk <- (n_wk + b) / (n_k + N b), n the expected
 * topic counts of the tokens: L never decreases. The default (CVB0) replaces the joint step
 * by synchronous CVB0, each token's share left out of its document's and word's counts, which
 * generalises better on short documents; L is then reported, and rises until near CVB0's fixed
 * point. By default the updates are over-relaxed (moved up to 5 times as far as a pass takes
 * them while the likelihood rises: the same point in fewer passes), and on long documents the
 * pseudo-count a becomes K learned a_k (Minka's fixed point), which the model keeps as its alpha.
 * Cost per iteration O(nnz(H) K (1 + theta steps)); memory M K doubles (the thetas) and one N x K
 * array of doubles per thread (one more with CVB0 or over-relaxed).
 */
#ifndef JSMF_REFINE_H
#define JSMF_REFINE_H

#include "jsmf.h"
#include "jsmf_fit.h"
#include "jsmf_io.h"
#include "jsmf_model.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The joint step of every document (jsmf_refine_method_name gives their names). */
enum jsmf_refine_method {
    JSMF_REFINE_EM = 0,   /**< MAP-EM: L never decreases ("em") */
    JSMF_REFINE_CVB0 = 1  /**< synchronous CVB0: a token gets the responsibility
                               (n_dk + a)(n_wk + b)/(n_k + N b) of its document's and word's
                               counts without its own share, which does not overfit short
                               documents as EM does; L is then reported, not guaranteed to
                               rise ("cvb0") */
};

/** How the refinement runs (fill with jsmf_refine_opts_init). */
typedef struct jsmf_refine_opts {
    uint32_t iters;        /**< EM iterations over the documents (default JSMF_REFINE_ITERS_AUTO:
                                jsmf_refine_auto_iters of the documents, 80 where they are
                                few) */
    uint32_t theta_steps;  /**< theta-only EM steps of each document in the first iteration,
                                from the uniform theta (default 20); later iterations take 1 */
    double alpha;          /**< a > 0: pseudo-count of every topic in a document (default 0.02) */
    double beta;           /**< b > 0: pseudo-count of every word in a topic (default 0.05) */
    double mix;            /**< weight of the uniform distribution mixed into the start's B,
                                0 <= mix < 1, so a word the start gives probability 0 in every
                                topic can be reached (default 0.01) */
    int method;            /**< enum jsmf_refine_method: the joint step (default CVB0) */
    int threads;           /**< OpenMP threads (0: the OpenMP default). The result depends on
                                the thread count only (the same for the same count) */
    jsmf_step_progress_fn progress; /**< called after each iteration ("refine", steps) or NULL */
    void *progress_arg;
    uint32_t batches;      /**< 1 <= batches <= M: after the first pass the documents are taken
                                in this many consecutive batches, and after each batch its
                                counts replace its previous pass's in the topics the next
                                batch sees (incremental EM by blocks): converges in fewer
                                passes, for batches x N x K more doubles (default 1: the
                                topics change after a whole pass only) */
    double tol;            /**< >= 0: stop before `iters` once the objective per token (its
                                log-likelihood part when alpha is learned) rose by less than tol
                                over each of the last two passes (0: never) */
    double overrelax;      /**< >= 1: the largest over-relaxation factor w (default 5; 1: plain
                                updates). With one batch, each pass's new topic counts and each
                                document's new theta are moved w times as far from the previous
                                ones as the update took them (clipped at no negative count); w
                                starts at 1, grows by 1.2 a pass while the log-likelihood per
                                token rises, and falls back to 1 when it falls (adaptive
                                over-relaxed EM): the same fixed point in fewer passes */
    int learn_alpha;       /**< JSMF_REFINE_ALPHA_FIXED: every topic's pseudo-count in a
                                document stays `alpha`; _LEARN: after each pass the K pseudo-counts
                                a_k (started at `alpha`) take one step of Minka's fixed point for
                                a Dirichlet from the documents' expected topic counts (an
                                asymmetric prior, Wallach et al. 2009), written to the model's
                                alpha; _AUTO (default): learn when the documents have at least
                                JSMF_REFINE_ALPHA_AUTO_LEN tokens on average (on short documents
                                the spread of the expected counts inflates the learned prior, and
                                the topics get worse: tools/bench/heldout-results.md) */
    const double *prior;   /**< N x K on the documents' word ids, columns distributions, or NULL
                                (none): topics the refinement is held near, as a Dirichlet
                                prior centred on them: every M-step adds prior_counts[k] x
                                prior[w][k] to topic k's expected count of word w (and the
                                objective gains sum_wk prior_counts[k] prior[w][k] log B_wk).
                                The nightly fit holds a topic near yesterday's with it
                                (since 3.2.0) */
    const double *prior_counts; /**< K pseudo-counts >= 0 of the prior's topics (with prior);
                                     each M-step scales topic k's by the share of its expected
                                     count on the prior's words (those with prior[w][j] > 0 for
                                     some j), so a topic new documents take over onto new words
                                     is let go as they do */
    uint32_t min_iters;    /**< the tol rule stops no earlier than after this many passes (0 or
                                up to 3: after the third; since 3.2.0) */
    uint64_t mem_bytes;    /**< budget of the refinement (since 3.3.0; 0: none, the thetas in
                                memory): where the thetas (M x K doubles) and the rest exceed it,
                                the thetas go to a scratch file in scratch_dir, unlinked at once
                                and mapped, its pages given back as each block of documents is
                                done (the same bits); where the rest alone exceeds it,
                                JSMF_ENOMEM before the first pass */
    const char *scratch_dir; /**< where that file goes (NULL: $TMPDIR, else /var/tmp); the
                                  directory must have room for M x K doubles (checked first) */
    uint64_t reserved[3]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_refine_opts;

/* Values of jsmf_refine_opts.learn_alpha. */
enum { JSMF_REFINE_ALPHA_FIXED = 0, JSMF_REFINE_ALPHA_LEARN = 1, JSMF_REFINE_ALPHA_AUTO = 2 };
/** learn_alpha auto learns when tokens >= this times documents. */
#define JSMF_REFINE_ALPHA_AUTO_LEN 100

/* The defaults were chosen on debdesc's training documents, every tenth held out as a validation
 * set (never the bench's held-out documents): tools/bench/heldout-results.md, "Choosing the
 * refinement's defaults". */
#define JSMF_REFINE_OPTS_DEFAULT                                                              \
    {.iters = JSMF_REFINE_ITERS_AUTO, .theta_steps = 20, .alpha = 0.02, .beta = 0.05, .mix = 0.01,               \
     .method = JSMF_REFINE_CVB0, .batches = 1, .overrelax = 5,                                 \
     .learn_alpha = JSMF_REFINE_ALPHA_AUTO}
/** Fill `o` with the defaults above (the same as JSMF_REFINE_OPTS_DEFAULT). */
JSMF_API void jsmf_refine_opts_init(jsmf_refine_opts *o);

/** iters = JSMF_REFINE_ITERS_AUTO: the passes the refinement's budget allows (since 3.1.0;
 *  before, 0 was refused). A pass costs O(nnz(H) K) and the spectral fit through the documents
 *  grows as nnz(H) too, so the budget is in nnz(H) x K: up to JSMF_REFINE_AUTO_WORK,
 *  JSMF_REFINE_AUTO_MAX passes (kjv, the tests' corpora); above it, as many fewer as keep
 *  passes x nnz(H) x K at JSMF_REFINE_AUTO_MAX x JSMF_REFINE_AUTO_WORK, and never fewer than
 *  JSMF_REFINE_AUTO_MIN. Measured (tools/bench/refine_budget, tools/bench/heldout-results.md,
 *  "The refinement's budget"): debdesc K=50 takes 33 passes, 1.3x the spectral fit's time, 0.014
 *  below 80 passes' held-out log-likelihood per token and 0.47 above the spectral fit's; the
 *  planted N=100k K=100 store takes 1, 0.6x the spectral fit's time, +0.09 over the spectral
 *  fit where 10 passes give +0.15 for 3.6x. */
#define JSMF_REFINE_ITERS_AUTO 0u
#define JSMF_REFINE_AUTO_MAX 80u
#define JSMF_REFINE_AUTO_MIN 1u
#define JSMF_REFINE_AUTO_WORK 33554432.0 /* 2^25 (document, word) entries x topics */

/** The passes of JSMF_REFINE_ITERS_AUTO over documents of `nnz` (document, word) entries
 *  (jsmf_doc_source.nnz) at `k` topics. */
JSMF_API uint32_t jsmf_refine_auto_iters(uint64_t nnz, uint32_t k);

/** What a refinement did. */
typedef struct jsmf_refine_result {
    uint32_t iters;        /**< iterations done */
    double *objective;     /**< iters values: L per token at the start of each iteration's joint
                                step (after its theta steps); nondecreasing (owned) */
    uint64_t docs;         /**< documents used (M) */
    uint64_t tokens;       /**< their tokens */
    double seconds;        /**< wall time of the call */
    uint64_t bytes;        /**< memory of the thetas held (all, or a block's with theta_file)
                                and the per-thread topic counts */
    uint64_t docs_dropped; /**< documents of a corpus left out (below min_doc_len tokens) */
    int over_store;        /**< 1: the documents were the store's own */
    uint64_t over_mem;     /**< jsmf_fit_refine_to_dir by default (JSMF_REFINE_WHERE_DOCUMENTS):
                                the bytes the refinement would have held, when that exceeds the
                                fit's mem_bytes and so it was left out and the spectral fit
                                written (0: it was not; since 3.1.0) */
    int warm;              /**< 1: jsmf_fit_refine_to_dir started from the previous model,
                                    with no spectral fit (since 3.2.0) */
    uint32_t admitted;     /**< with warm: the store's words the previous model did not have */
    uint64_t theta_file;   /**< bytes of thetas kept in the scratch file (0: in memory; since
                                3.3.0) */
    uint64_t reserved[11]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_refine_result;

/** The name of refinement method v ("em", "cvb0": --method, summary.json), from the library's
 *  table; NULL past its end (the choices are 0, 1, ... up to the first NULL). */
JSMF_API const char *jsmf_refine_method_name(int v);

/** Free what `r` holds and zero it (the struct is the caller's). */
JSMF_API void jsmf_refine_result_free(jsmf_refine_result *r);

/** What a refinement written to a directory reads, and how (fill with jsmf_refine_run_opts_init):
 *  'jsmf refine' and the refinement of 'jsmf fit --refine / --corpus'. */
typedef struct jsmf_refine_run_opts {
    jsmf_refine_opts refine;   /**< the refinement's own (its progress: "refine" in steps) */
    jsmf_read_opts read;       /**< how corpus files are read (format, warn, ...) */
    const char *const *corpus; /**< the documents: n_corpus files ("-": stdin), read over the
                                    model's vocabulary; NULL: the documents of the store */
    uint32_t n_corpus;
    uint32_t min_doc_len;      /**< corpus documents with fewer in-vocabulary tokens are left out,
                                    as ingest leaves them out (default 5, ingest's) */
    int when;                  /**< enum jsmf_refine_when: jsmf_fit_refine_to_dir refines always
                                    (0, as before 3.1.0) or only where there are documents */
    int start;                 /**< enum jsmf_refine_start: where jsmf_fit_refine_to_dir starts
                                    the refinement when given a previous model (since 3.2.0) */
    double prior_weight;       /**< a night started from the previous model: the weight of the
                                    prior that holds its topics, in the previous model's tokens
                                    (jsmf_refine_opts.prior_counts = prior_weight x its tokens x
                                    p_prev(k)); 0: JSMF_REFINE_PRIOR_WEIGHT, < 0: no prior */
    uint64_t reserved[6];      /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_refine_run_opts;

/** Where a fit given a previous model starts its refinement (jsmf_refine_run_opts.start). */
enum jsmf_refine_start {
    JSMF_REFINE_START_AUTO = 0,    /**< from the previous model, where it has the fit's K and
                                        its words are the store's (the store grew since): no
                                        spectral fit, the previous topics carried onto tonight's
                                        words and held near by the prior of `prior_weight`; else as
                                        SPECTRAL (formats/model.md, "Nights") */
    JSMF_REFINE_START_SPECTRAL = 1 /**< from a new spectral fit (a cold night, 'jsmf fit --cold'),
                                        renumbered after the previous model */
};

/** The default weight of the prior that holds a night's topics near yesterday's
 *  (jsmf_refine_run_opts.prior_weight), chosen by tools/bench/nightly
 *  (tools/bench/lineage-results.md, "Holding topics"). */
#define JSMF_REFINE_PRIOR_WEIGHT 0.3

/** When jsmf_fit_refine_to_dir refines the fit (jsmf_refine_run_opts.when; since 3.1.0). */
enum jsmf_refine_when {
    JSMF_REFINE_ALWAYS = 0,          /**< a corpus is given or the store must hold its documents
                                          (else JSMF_EINVAL, before any work) */
    JSMF_REFINE_WHERE_DOCUMENTS = 1  /**< where a corpus is given or the input is a store that
                                          holds its documents; else the spectral fit alone, as
                                          jsmf_fit_to_dir_after (what 'jsmf fit' does by
                                          default: the morning's model is the refined one
                                          where it can be) */
};

/** Fill `o` with the defaults: jsmf_refine_opts_init's (iters: the budget's) and
 *  jsmf_read_opts_init's, no corpus, min_doc_len 5, when JSMF_REFINE_ALWAYS. */
JSMF_API void jsmf_refine_run_opts_init(jsmf_refine_run_opts *o);

/** 'jsmf refine MODEL --corpus INPUT... -o DIR': the model at `model` refined over o->corpus,
 *  or (corpus NULL) over the documents of the store at `store` (one that holds them and that the
 *  model was fitted on: its word ids are the model's rows), written to `dir` (JSMF_EEXIST when
 *  something is there, unless `force`; nothing written on error). *out (may be NULL) gets the
 *  refined model, `res` (may be NULL) what was done. Errors: jsmf_model_load's, those of
 *  reading the corpus (naming file and line), JSMF_EINVAL (a store without documents, N of the
 *  store and the model differ, no document left), jsmf_refine's, jsmf_model_save's. */
JSMF_API int jsmf_refine_to_dir(const char *model, const char *store, const char *dir, int force,
                                const jsmf_refine_run_opts *o, jsmf_model **out,
                                jsmf_refine_result *res);

/** 'jsmf fit INPUT -k K -o DIR' (and --refine N | --corpus INPUT...): the spectral fit of
 *  `input` (jsmf_fit_to_dir_after, with `previous` and `flags` as there) refined over its
 *  documents, the refined model replacing the fit's in `dir`. With r->when
 *  JSMF_REFINE_WHERE_DOCUMENTS (what 'jsmf fit' passes by default) and no corpus, an input that
 *  is not a store holding its documents gets the spectral fit alone, as jsmf_fit_to_dir_after
 *  gives it (res->iters 0). The rules of fit-then-refine are here and nowhere else: before the
 *  fit, the corpus must be readable or the store must hold its documents (a refusal writes
 *  nothing); the fit multiplies by C through the documents
 *  (products AUTO becomes DOCUMENTS: the same fit for 14-34% less CPU), its compressed
 *  rectification stops after at most 10 steps (rectify_iters 0 becomes 10: the refinement
 *  moves the topics further than the last steps do), and leaves out its metrics against C
 *  (JSMF_FIT_NO_C_METRICS: the refined model replaces it); the refinement runs on the fit's
 *  threads unless r->refine.threads says, over r->corpus or the store's documents, by the
 *  budget's passes unless r->refine.iters says (jsmf_refine_auto_iters); the fit's levels
 *  (fit->levels) are fitted from the refined A (jsmf_fit_levels), the refined model keeps the
 *  fit's anchors, and with `previous` its topics are renumbered after the previous model's and
 *  their lineage recorded (the fit's renumbering is its start). With `previous` of the fit's
 *  K whose words the store has, a store that holds its documents, no corpus and r->start
 *  JSMF_REFINE_START_AUTO (the default), on one process, there is no spectral fit: the night
 *  starts from `previous` (formats/model.md, "Nights": its topics on the store's words, held by
 *  jsmf_refine_opts.prior of weight r->prior_weight, 10 to 40 passes by a rise rule or the
 *  budget's fewer; res->warm 1, `rep` zeroed but for its levels). Under MPI every rank fits
 *  and rank 0 refines and writes; all return its status. `rep` (may be NULL) is the fit's
 *  report, `res` (may be NULL) the refinement's, *out (may be NULL) the refined
 *  model. Errors: those of jsmf_fit_to_dir_after and jsmf_refine_to_dir. */
JSMF_API int jsmf_fit_refine_to_dir(const char *input, const char *dir, const char *previous,
                                    int flags, const jsmf_fit_opts *fit,
                                    const jsmf_refine_run_opts *r, struct jsmf_comm *c,
                                    jsmf_model **out, jsmf_fit_report *rep,
                                    jsmf_refine_result *res);

#ifdef JSMF_ADVANCED
/** Refine `start` over `docs` (its N must be the model's: the documents' word ids are the
 *  model's rows) into a new model *out (free with jsmf_model_free): B refined, A the mean of
 *  theta_d theta_d^T over the documents, no anchors, the learned alpha (NULL when not learned),
 *  no levels, the start's vocabulary,
 *  and a summary.json of kind "refined" recording the start's kind, the options and the
 *  objective curve (formats/model.md). `res` (may be NULL) receives what was done. Errors:
 *  JSMF_EINVAL (N differs, no documents, an option out of range), JSMF_ENOMEM, the scan's. */
JSMF_API int jsmf_refine(const jsmf_model *start, const jsmf_doc_source *docs,
                         const jsmf_refine_opts *opts, jsmf_model **out,
                         jsmf_refine_result *res);

/** Read the documents of `n` `inputs` (any format jsmf_io.h reads; "-" = stdin) into memory over
 *  `vocab`'s rows: each document's in-vocabulary counts, ascending ids, those with fewer than
 *  max(2, min_doc_len) in-vocabulary tokens dropped, as ingest drops them. *out's arrays are
 *  owned (free with jsmf_doc_csr_free); its admit is NULL. *dropped (may be NULL) gets the
 *  documents dropped. Errors: those of reading the inputs (naming file and line), JSMF_EINVAL
 *  (no document left), JSMF_ENOMEM. */
JSMF_API int jsmf_doc_csr_read(const char *const *inputs, uint32_t n, const jsmf_read_opts *ro,
                               const jsmf_vocab *vocab, uint32_t min_doc_len, jsmf_doc_csr *out,
                               uint64_t *dropped);

/** Free the arrays of a jsmf_doc_csr filled by jsmf_doc_csr_read and zero it. */
JSMF_API void jsmf_doc_csr_free(jsmf_doc_csr *d);
#endif

#ifdef __cplusplus
}
#endif

#endif
