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
 * topic counts of the tokens: L never decreases. The default (exclude) replaces the joint step
 * by synchronous CVB0, each token's share left out of its document's and word's counts, which
 * generalises better on short documents; L is then reported, and rises until near CVB0's fixed
 * point. By default the updates are over-relaxed (moved up to 5 times as far as a pass takes
 * them while the likelihood rises: the same point in fewer passes), and on long documents the
 * pseudo-count a becomes K learned a_k (Minka's fixed point), which the model keeps as its alpha.
 * Cost per iteration O(nnz(H) K (1 + theta steps)); memory M K doubles (the thetas) and one N x K
 * array of doubles per thread (one more in exclude mode or over-relaxed).
 */
#ifndef JSMF_REFINE_H
#define JSMF_REFINE_H

#include "jsmf.h"
#include "jsmf_io.h"
#include "jsmf_model.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How the refinement runs (fill with jsmf_refine_opts_init). */
typedef struct jsmf_refine_opts {
    uint32_t iters;        /**< EM iterations over the documents (default 80) */
    uint32_t theta_steps;  /**< theta-only EM steps of each document in the first iteration,
                                from the uniform theta (default 20); later iterations take 1 */
    double alpha;          /**< a > 0: pseudo-count of every topic in a document (default 0.02) */
    double beta;           /**< b > 0: pseudo-count of every word in a topic (default 0.05) */
    double mix;            /**< weight of the uniform distribution mixed into the start's B,
                                0 <= mix < 1, so a word the start gives probability 0 in every
                                topic can be reached (default 0.01) */
    int exclude;           /**< 1: the joint step gives a token the responsibility
                                (n_dk + a)(n_wk + b)/(n_k + N b) of its document's and word's
                                counts without its own share (synchronous CVB0), which does not overfit short documents as
                                EM does; L is then reported, not guaranteed to rise (default 1) */
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
    uint64_t reserved[8]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_refine_opts;

/* Values of jsmf_refine_opts.learn_alpha. */
enum { JSMF_REFINE_ALPHA_FIXED = 0, JSMF_REFINE_ALPHA_LEARN = 1, JSMF_REFINE_ALPHA_AUTO = 2 };
/** learn_alpha auto learns when tokens >= this times documents. */
#define JSMF_REFINE_ALPHA_AUTO_LEN 100

/* The defaults were chosen on debdesc's training documents, every tenth held out as a validation
 * set (never the bench's held-out documents): tools/bench/heldout-results.md, "Choosing the
 * refinement's defaults". */
#define JSMF_REFINE_OPTS_DEFAULT                                                              \
    {.iters = 80, .theta_steps = 20, .alpha = 0.02, .beta = 0.05, .mix = 0.01, .exclude = 1,   \
     .batches = 1, .overrelax = 5, .learn_alpha = JSMF_REFINE_ALPHA_AUTO}
/** Fill `o` with the defaults above (the same as JSMF_REFINE_OPTS_DEFAULT). */
JSMF_API void jsmf_refine_opts_init(jsmf_refine_opts *o);

/** What a refinement did. */
typedef struct jsmf_refine_result {
    uint32_t iters;        /**< iterations done */
    double *objective;     /**< iters values: L per token at the start of each iteration's joint
                                step (after its theta steps); nondecreasing (owned) */
    uint64_t docs;         /**< documents used (M) */
    uint64_t tokens;       /**< their tokens */
    double seconds;        /**< wall time of the call */
    uint64_t bytes;        /**< memory of the thetas and the per-thread topic counts */
    uint64_t reserved[16]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_refine_result;

/** Free what `r` holds and zero it (the struct is the caller's). */
JSMF_API void jsmf_refine_result_free(jsmf_refine_result *r);

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
