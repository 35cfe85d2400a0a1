/* jsmf_eval.h — using a fitted model: topic mixtures of documents (per-document convex fit),
 * the document-based metrics (coherence, held-out log-likelihood), the l1 error against a
 * ground-truth model after optimal (Hungarian) matching, and the self-contained HTML report.
 * The store-based metrics (Recovery, Approximation, Dominancy, ...) are computed in jsmf_fit.h;
 * jsmf_eval_* (below) gathers all of them for a model, as jsmf eval prints them.
 *
 * CAVEATS
 *  - Documents reach these functions already mapped to the model's vocabulary: ids are rows of
 *    B, counts are positive. jsmf_infer_write and jsmf_eval_corpus do that mapping for any
 *    input jsmf_io.h reads; for text in memory, jsmf_tokenize and a jsmf_wordmap of the
 *    model's vocabulary do it.
 *  - theta is fitted by the EM fixed point (accelerated by SQUAREM) for Fisher et al. 2020 App. E
 *    (maximise sum_w n_w log sum_k theta_k B_wk over the simplex); convergence is certified by
 *    the Frank-Wolfe duality gap
 *    max_k g_k - 1 (g = gradient per token), an upper bound on the distance to the optimum in
 *    log-likelihood per token.
 *  - Functions taking a batch run OpenMP-parallel over documents, on jsmf_infer_opts.threads;
 *    results do not depend on the thread count (each document is computed independently,
 *    reductions in document order).
 */
#ifndef JSMF_EVAL_H
#define JSMF_EVAL_H

#include <stdio.h>

#include "jsmf.h"
#include "jsmf_fit.h"
#include "jsmf_io.h"
#include "jsmf_model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * A model against a ground truth.
 * ------------------------------------------------------------------------------------------- */

/** l1 error of `est` against ground truth `truth` after optimal matching of topics (Fisher et
 *  al. 2020 Eq. 14): err = (1/K) min_tau sum_t || mu_t - nu_tau(t) ||_1. Words are aligned by
 *  their text, so the two vocabularies may differ (a word missing from one model has
 *  probability 0 there). Both models need the same K (else JSMF_EMISMATCH). match[t] (K
 *  entries, may be NULL) gets the estimated topic matched to true topic t, and dist[t] (may be
 *  NULL) its l1 distance: the caller's arrays. Errors also JSMF_EINVAL (a model without a
 *  vocabulary), JSMF_ENOMEM. */
JSMF_API int jsmf_eval_l1_error(const jsmf_model *truth, const jsmf_model *est, double *err,
                                uint32_t *match, double *dist);

/* ---------------------------------------------------------------------------------------------
 * Topic mixtures (Fisher et al. 2020 App. E).
 * ------------------------------------------------------------------------------------------- */

/** How theta is fitted (fill with jsmf_infer_opts_init). */
typedef struct jsmf_infer_opts {
    uint32_t max_iters;   /**< EM steps per document at most (default 1000) */
    double tol;           /**< stop when the duality gap per token is below (default 1e-5) */
    int threads;          /**< threads of a call over a batch (0: omp_get_max_threads()); read,
                               never set: the caller's OpenMP default stays as it was */
    uint64_t reserved[8]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_infer_opts;

#define JSMF_INFER_OPTS_DEFAULT {.max_iters = 1000, .tol = 1e-5}
/** Fill `o` with the defaults above (the same as JSMF_INFER_OPTS_DEFAULT). */
JSMF_API void jsmf_infer_opts_init(jsmf_infer_opts *o);

/** Fit theta (K entries, on the simplex) for one document given as (ids, counts) over the rows
 *  of B (N x K row-major). Returns 0 or JSMF_ENOMEM; *iters (may be NULL) receives the EM
 *  iterations used; a document with no tokens (or only words whose rows of B are zero) gets
 *  the uniform theta and 0 iterations. *gap (may be NULL) receives the final duality gap per
 *  token. `theta` is the caller's; B, ids and counts are only read (B is a model's m->B, k its
 *  m->k). */
JSMF_API int jsmf_theta_fit(const double *B, uint32_t k, const uint32_t *ids,
                            const double *counts, uint32_t nids, const jsmf_infer_opts *opts,
                            double *theta, double *gap, uint32_t *iters);

/** theta for every document of a batch (OpenMP over documents, opts->threads) into `theta`,
 *  the caller's ndocs x K row-major array. Documents without in-vocabulary tokens get the
 *  uniform theta. Ids must be rows of the model. JSMF_ENOMEM only. */
JSMF_API int jsmf_theta_fit_batch(const jsmf_model *m, const jsmf_docbatch *b,
                                  const jsmf_infer_opts *opts, double *theta);

/** How jsmf_infer_write prints theta (formats/outputs.md). */
typedef struct jsmf_theta_format {
    int jsonl;      /**< {"doc":i,"tokens":n,"oov":m,"theta":[...]} per line; 0: TSV,
                         doc_index<TAB>theta_1 ... theta_K */
    int header;     /**< TSV: a first line doc<TAB>t0<TAB>t1... */
    uint32_t batch; /**< documents read and fitted in parallel at a time (> 0) */
    uint64_t reserved[8]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_theta_format;

/** What jsmf_infer_write met. */
typedef struct jsmf_infer_summary {
    uint64_t docs;     /**< documents written */
    uint64_t empty;    /**< of them, without in-vocabulary words (uniform theta) */
    uint64_t tokens;   /**< in-vocabulary tokens */
    uint64_t oov;      /**< tokens outside the vocabulary, ignored */
    uint64_t reserved[16]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_infer_summary;

/** theta of every document of the `n` `inputs` (paths, "-" = stdin; their words mapped to the
 *  model's vocabulary), one line per document on `out`, in input order; weights below 1e-7
 *  print as 0. Stops early when `out` has a write error (the caller checks ferror). *sum gets
 *  what was read. Errors: those of reading the inputs (JSMF_ENOTFOUND, JSMF_EFORMAT naming
 *  file and line, JSMF_EIO), JSMF_ENOMEM. */
JSMF_API int jsmf_infer_write(FILE *out, const jsmf_model *m, const char *const *inputs,
                              uint32_t n, const jsmf_read_opts *ro, const jsmf_infer_opts *io,
                              const jsmf_theta_format *fmt, jsmf_step_progress_fn progress,
                              void *arg, jsmf_infer_summary *sum);
/** The summary of a run as lines of at most 80 columns for typical counts, each "PREFIX: ..."
 *  (prefix NULL: none). */
JSMF_API void jsmf_infer_summary_write(FILE *f, const char *prefix, const jsmf_infer_summary *s);
/** Above JSMF_INFER_OOV_WARN of the tokens outside the vocabulary of `model` (`n_words` words),
 *  theta rests on too little of the text to pass in silence: the warning into `msg` (the
 *  caller's, `size` bytes), and 1; else 0. A model's own corpus is typically 40-65% out of its
 *  vocabulary, stopwords included (61% for examples/), so only a mismatch goes above it. */
#define JSMF_INFER_OOV_WARN 0.8
JSMF_API int jsmf_infer_oov_warning(const jsmf_infer_summary *s, const char *model,
                                    uint32_t n_words, char *msg, size_t size);

/* ---------------------------------------------------------------------------------------------
 * Document-based metrics: one streamed pass accumulates both.
 * ------------------------------------------------------------------------------------------- */

/** Coherence (Arora et al. 2013 Eq. 3 as used in Lee, Bindel & Mimno 2015 Sec. 4): for the
 *  `top` most probable words W_k of each topic, C_k = sum over ordered pairs x1 != x2 in W_k of
 *  log((D(x1,x2) + eps) / D(x2)), D = document frequencies in the evaluation corpus; the
 *  metric is the mean of C_k over topics. Pairs whose D(x2) is 0 (word absent from the corpus)
 *  are left out and counted.
 *  Held-out log-likelihood per token (Fisher et al. 2020 App. E, document completion): each
 *  document's in-vocabulary tokens, listed in increasing word id (a word's repeats together), are
 *  split alternately: tokens at even positions fit theta_d, tokens at odd positions are scored
 *  with log((1 - lambda) sum_k theta_dk B_wk + lambda / N), N the model's words, lambda =
 *  JSMF_HELDOUT_SMOOTHING: the model's p(w|d) mixed with the uniform distribution, so that a token
 *  of probability 0 is scored (at log(lambda / N)) rather than left out, the same for every model.
 *  theta_d itself is fitted on B as it is. Documents with fewer than 2 tokens are skipped. */
typedef struct jsmf_docmetrics jsmf_docmetrics;

/** Weight of the uniform distribution mixed into p(w|d) when a held-out token is scored. */
#define JSMF_HELDOUT_SMOOTHING 1e-6

typedef struct jsmf_docmetrics_result {
    double coherence;            /**< mean over topics of C_k */
    double *coherence_topic;     /**< K values (owned by the accumulator) */
    uint64_t coherence_docs;     /**< documents counted */
    uint64_t coherence_missing;  /**< top words absent from the corpus (their pairs left out) */
    double heldout_ll;           /**< held-out log-likelihood per token (natural log, smoothed) */
    uint64_t heldout_docs;       /**< documents scored */
    uint64_t heldout_tokens;     /**< tokens scored, those of probability 0 included */
    uint64_t heldout_zero;       /**< scored tokens of probability 0 under the model (they count
                                      only through the smoothing: log(lambda / N) each) */
    uint64_t oov_tokens;         /**< tokens of the corpus outside the model's vocabulary */
    double heldout_ll_nonzero;   /**< as jsmf 0.2 scored: log p unsmoothed, averaged over the
                                      tokens of p > 0 only (NAN when there are none) */
    double heldout_smoothing;    /**< lambda, JSMF_HELDOUT_SMOOTHING */
    uint64_t heldout_floored;    /**< scored tokens of p < lambda / N (those of p = 0 included):
                                      the uniform part outweighs the model's own */
    uint64_t reserved[16]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_docmetrics_result;

/** Accumulator for the model `m` (kept by reference: it must outlive the accumulator), `top`
 *  words per topic, epsilon `eps`, into *out (free with jsmf_docmetrics_free). `opts` is
 *  copied (NULL: jsmf_infer_opts_init's). JSMF_ENOMEM only. */
JSMF_API int jsmf_docmetrics_new(const jsmf_model *m, uint32_t top, double eps,
                                 const jsmf_infer_opts *opts, jsmf_docmetrics **out);
/** Add a batch (only read; OpenMP over documents, on the threads of the accumulator's opts).
 *  Ids must be rows of the model. JSMF_ENOMEM only. */
JSMF_API int jsmf_docmetrics_add(jsmf_docmetrics *acc, const jsmf_docbatch *b);
/** The metrics over everything added so far into *out; its coherence_topic array belongs to
 *  the accumulator and stays valid until it is freed. Never fails (returns 0). */
JSMF_API int jsmf_docmetrics_result_get(jsmf_docmetrics *acc, jsmf_docmetrics_result *out);
/** Free an accumulator (NULL is fine). */
JSMF_API void jsmf_docmetrics_free(jsmf_docmetrics *acc);

/* ---------------------------------------------------------------------------------------------
 * Evaluation of a model (jsmf eval, src/eval/evaluate.c): any of the store metrics, the corpus
 * metrics and the l1 error against a ground truth, then printed as text or JSON.
 * ------------------------------------------------------------------------------------------- */

/** One evaluation: zero it, set the paths and settings of the groups wanted, call their
 *  jsmf_eval_* functions, print with jsmf_eval_write, release with jsmf_eval_free. The paths
 *  are borrowed. */
typedef struct jsmf_eval {
    const char *model;           /**< the model's path as given (printed) */
    const char *store;           /**< the store or exported C evaluated against, as given */
    const char *truth;           /**< the ground truth's path */
    jsmf_step_progress_fn progress; /**< or NULL */
    void *progress_arg;
    int have_store, have_corpus, have_truth; /**< which of the groups below are filled */
    jsmf_metrics store_metrics;  /**< against the co-occurrence of `store` */
    uint64_t store_docs;         /**< its documents (0 for an exported C) */
    int store_is_matrix;         /**< `store` is an exported C, not a store */
    uint32_t top;                /**< coherence: top words per topic */
    double eps;                  /**< coherence: epsilon */
    int threads;                 /**< of jsmf_eval_store and _truth (0: all cores; the
                                      corpus's are those of its jsmf_read_opts and
                                      jsmf_infer_opts); the caller's OpenMP and OpenBLAS
                                      settings are left as they were */
    jsmf_docmetrics_result corpus; /**< over the corpus */
    double l1;                   /**< l1 error against `truth` */
    uint32_t *match;             /**< K: the topic matched to true topic t */
    double *dist;                /**< K: its l1 distance */
    jsmf_docmetrics *acc;        /**< private: owns corpus's arrays */
    uint64_t mem_bytes;          /**< budget of jsmf_eval_store (0: half the machine's memory;
                                      jsmf_model_metrics_within; since 3.4.0) */
    uint64_t store_mem_plan;     /**< what jsmf_eval_store planned to hold (since 3.4.0) */
    uint64_t reserved[14]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_eval;

/** The store metrics of `m` against the C of e->store (jsmf_source_open; its rows must be the
 *  model's words, row for row: JSMF_EMISMATCH otherwise). Errors also jsmf_source_open's and
 *  jsmf_model_metrics'. */
JSMF_API int jsmf_eval_store(jsmf_eval *e, const jsmf_model *m);
/** Coherence (e->top, e->eps) and held-out likelihood over the documents of `inputs`, in one
 *  streamed pass. Errors: those of reading the inputs, JSMF_ENOMEM. */
JSMF_API int jsmf_eval_corpus(jsmf_eval *e, const jsmf_model *m, const char *const *inputs,
                              uint32_t n, const jsmf_read_opts *ro, const jsmf_infer_opts *io);
/** The l1 error against the model directory e->truth (e->match and e->dist, owned by `e`).
 *  Errors: jsmf_model_load's, JSMF_EMISMATCH (another K). */
JSMF_API int jsmf_eval_truth(jsmf_eval *e, const jsmf_model *m);
/** What was evaluated, on `f`: aligned text, or one JSON object (`json`). */
JSMF_API void jsmf_eval_write(FILE *f, const jsmf_eval *e, const jsmf_model *m, int json);
/** Free what `e` owns (the struct itself is the caller's). */
JSMF_API void jsmf_eval_free(jsmf_eval *e);

/* ---------------------------------------------------------------------------------------------
 * Report.
 * ------------------------------------------------------------------------------------------- */

/** How the report looks (fill with jsmf_report_opts_init). */
typedef struct jsmf_report_opts {
    uint32_t top;          /**< top words per topic shown (default 12) */
    uint32_t max_points;   /**< most frequent words drawn in the 2-D projection (default 1500) */
    const char *title;     /**< page title; NULL: "NAME: K topics from SOURCE", NAME the model
                                directory's name (model_path), SOURCE the store or matrix it
                                was fitted on (summary.json "store.path" or "parameters.input") */
    const char *metrics_json; /**< extra metrics (e.g. `jsmf eval --json` output) or NULL */
    const char *model_path;   /**< the MODEL directory as given, for the default title, or NULL */
    uint64_t reserved[8]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_report_opts;

#define JSMF_REPORT_OPTS_DEFAULT {.top = 12, .max_points = 1500}
/** Fill `o` with the defaults above (the same as JSMF_REPORT_OPTS_DEFAULT). */
JSMF_API void jsmf_report_opts_init(jsmf_report_opts *o);

/** Write the self-contained HTML report of `m` (all levels) to `f`. Errors: JSMF_EINVAL (a
 *  model without its vocabulary), JSMF_ENUMERIC (the projection), JSMF_EIO (a write error),
 *  JSMF_ENOMEM. */
JSMF_API int jsmf_report_write(FILE *f, const jsmf_model *m, const jsmf_report_opts *opts);

/** jsmf_report_write into the file `path` ("-": standard output), whole or not at all (written
 *  beside it and renamed into place): a reader never sees half a page. */
JSMF_API int jsmf_report_save(const char *path, const jsmf_model *m, const jsmf_report_opts *opts);

#ifdef __cplusplus
}
#endif
#endif /* JSMF_EVAL_H */
