/* jsmf_fit.h — the Rectified Anchor Word fit (Lee et al. JSMF Sec. 3-4, Lee, Bindel & Mimno 2015,
 * Lee et al. 2019; formats/references.md): rectify C, find anchor words, recover B (topics), A
 * (topic co-occurrence) and alpha, and a hierarchy of super-topics; plus the quality metrics of
 * Lee et al. JSMF Sec. 5.1 and Lee, Bindel & Mimno 2015 Sec. 4 for any model.
 *
 * CAVEATS
 *  - C is read only through a jsmf_source (the store, or an in-memory CSR). The default
 *    rectification is the compressed iterate (below); AP and DR are asked for. The streaming path
 *    never holds an N x N array: after the first projection each AP iterate is
 *    max(U diag(l) U^T + s 11^T, 0), kept as (U, l, s) and generated row block by row block.
 *    The dense path (N x N in memory, LAPACK dsyevr) is chosen automatically for small N and is
 *    the in-library reference for the streaming one.
 *  - Anchors are found by Alg. 2 on the exact rectified rows, read lazily (a row is generated
 *    again only while it could still be the next pivot); for the compressed iterate in the
 *    K-dimensional space of its factor by default (--anchor-space).
 *  - --rectify compressed (the compressed iterate of Lee et al. 2021) reads C
 *    only for its first eigendecomposition and never forms N x N: every later step costs
 *    O(N K (K + l)).
 *  - Output is identical for any thread count: per-word solves are independent, every reduction
 *    over words runs in a fixed block order.
 *  - Douglas-Rachford rectification exists only on the dense path (its iterate has no low-rank form).
 */
#ifndef JSMF_FIT_H
#define JSMF_FIT_H

#include "jsmf.h"
#include "jsmf_model.h"

#ifdef __cplusplus
extern "C" {
#endif

enum jsmf_rectify { JSMF_RECTIFY_AP = 0, JSMF_RECTIFY_DR = 1, JSMF_RECTIFY_NONE = 2,
                    JSMF_RECTIFY_COMPRESSED = 3 /**< low rank + repairs (Lee et al. 2021) */ };
enum jsmf_anchors { JSMF_ANCHORS_QR = 0, JSMF_ANCHORS_FAST = 1 };
enum jsmf_recover {
    JSMF_RECOVER_ADMM = 0,     /**< ADMM Douglas-Rachford, Lee et al. JSMF Alg. 3 */
    JSMF_RECOVER_EXPGRAD = 1,  /**< exponentiated gradient, L2 loss (Arora et al. 2013 App. D.2) */
    JSMF_RECOVER_KL = 2,       /**< exponentiated gradient, KL loss (Arora et al. 2013 Alg. 3) */
    JSMF_RECOVER_ACTIVESET = 3 /**< exact primal active-set QP */
};
enum jsmf_recover_a {
    JSMF_A_AUTO = 0, /**< diag, except pinv when rectify is none */
    JSMF_A_DIAG = 1, /**< A = D^-1 C_SS D^-1 (Lee, Bindel & Mimno 2015 Eq. 6) */
    JSMF_A_PINV = 2  /**< A = B^+ C B^+T (Arora et al. 2013 Alg. 3, the 2013 baseline) */
};
enum jsmf_fit_mode { JSMF_MODE_AUTO = 0, JSMF_MODE_DENSE = 1, JSMF_MODE_STREAM = 2 };
/** How the streamed fit multiplies by C when the source holds both C's rows (or can make them)
 *  and the documents: AUTO (C's rows whenever they fit half the memory budget, else the cheaper
 *  by counts), ROWS, or DOCUMENTS (H diag H^T: no rows made; ignored when the source holds no
 *  documents). */
enum jsmf_fit_products { JSMF_PRODUCTS_AUTO = 0, JSMF_PRODUCTS_ROWS = 1, JSMF_PRODUCTS_DOCUMENTS = 2 };
/** Where streaming QR anchors are found: exactly on generated rows (one pass per anchor), or in
 *  the (K+1)-dimensional factor space of the unclipped iterate (free); auto: exact for small N. */
enum jsmf_anchor_space { JSMF_ANCHOR_SPACE_AUTO = 0, JSMF_ANCHOR_SPACE_EXACT = 1,
                         JSMF_ANCHOR_SPACE_FACTOR = 2 };

#define JSMF_FIT_MAX_LEVELS 8
/** min_anchor_df: choose it from the corpus. Anchor candidates are the words in at least
 *  ceil(sqrt(M) / 8) documents (M = docs; sqrt(M) / 2 for AP, DR and none), lowered while
 *  fewer than 2K words qualify but never below 2; the rule and its measurements:
 *  tools/bench/fit-results.md. */
#define JSMF_FIT_DF_AUTO UINT64_MAX
#define JSMF_FIT_MAX_TRACE 1024
#define JSMF_FIT_MAX_SKETCH 32

typedef struct jsmf_fit_opts {
    uint32_t k;               /**< number of topics K (>= 2) */
    int rectify;              /**< enum jsmf_rectify (default COMPRESSED) */
    uint32_t rectify_iters;   /**< 0 (the default): 100 for compressed (a cap), 15 for AP/DR */
    double rectify_tol;       /**< compressed: stop when the estimated distance of the iterate to
                                   its fixed point is below this (relative; default 1e-3) */
    uint32_t compress_rows;   /**< compressed: rows/columns repaired, l (0: ceil(5 K ln K)) */
    uint32_t sketch_passes;   /**< compressed: most passes over C of its eigendecomposition (0: 16
                                   when C is in memory, 8 when it is read from the source) */
    double sketch_tol;        /**< compressed: that eigendecomposition stops when its wanted Ritz
                                   values move less than this, relative to the K-th (1e-3) */
    int anchors;              /**< enum jsmf_anchors (default QR) */
    uint32_t fast_dim;        /**< random projection dimension of --anchors fast (default 1000) */
    int anchor_space;         /**< enum jsmf_anchor_space (default AUTO) */
    int recover;              /**< enum jsmf_recover (default ADMM) */
    int recover_a;            /**< enum jsmf_recover_a (default AUTO) */
    double admm_lambda;       /**< DR relaxation lambda (default 1.9) */
    double admm_gamma;        /**< proximal gamma (default 3.0) */
    double snls_tol;          /**< stop tolerance of the per-word solvers (default 1e-7) */
    uint32_t snls_maxit;      /**< iteration cap of the per-word solvers (default 1000) */
    uint64_t min_anchor_df;   /**< words with df below this are not anchor candidates (0: all;
                                   JSMF_FIT_DF_AUTO, the default: derived from docs, see below) */
    uint64_t docs;            /**< documents M behind C (the store's), for the automatic
                                   threshold; 0 when unknown (then no threshold) */
    int threads;              /**< threads of this call (0: the OpenMP default); the caller's
                                   OpenMP and OpenBLAS settings are left as they were */
    uint64_t seed;            /**< seed of the random starts / projections (default 1); the
                                   compressed path's model depends on it only within sketch_tol */
    uint32_t levels[JSMF_FIT_MAX_LEVELS]; /**< super-topic counts below k, e.g. {5}; 0 ends */
    int mode;                 /**< enum jsmf_fit_mode (default AUTO) */
    uint64_t mem_bytes;       /**< memory budget of the whole fit, planned before it starts
                                   (formats/fit.md, "Memory"): its N-row blocks, C or the
                                   documents in memory (up to half), the dense path; a fit that
                                   cannot keep to it is refused (JSMF_ENOMEM) before any work.
                                   0: no plan. Default: half the RAM (since 3.3.0; at least
                                   512 MiB) */
    uint32_t dense_max_n;     /**< AUTO picks dense when N <= this (default: measured crossover) */
    double eig_tol;           /**< relative Ritz residual of the streaming eigensolver (default 1e-7) */
    uint32_t eig_maxit;       /**< iteration cap of the streaming eigensolver per AP step (default 50) */
    uint32_t eig_step_maxit;  /**< cap for the warm-started steps after the first (0: eig_maxit);
                                   1 interleaves one subspace iteration with each AP step */
    /** Progress (may be NULL): each step as it starts, `what` "rectify", "anchors", "topics",
     *  "correlations" or "metrics" at 0 of 1 (unit ""); within a step "rectify" in
     *  "iterations", "reading C" in "rows" (of the reads of C the step expects) and "topics"
     *  in "words" */
    jsmf_step_progress_fn progress;
    void *progress_arg;
    struct jsmf_comm *comm;   /**< the ranks of an MPI job that fit together (every rank calls
                                   jsmf_fit with the same arguments and gets the same model):
                                   each reads and holds its range of C's rows, products with C
                                   and the topics of words are split across ranks; NULL: this
                                   process alone */
    int products;             /**< enum jsmf_fit_products (default AUTO); `jsmf fit --refine`
                                   takes DOCUMENTS (tools/bench/heldout-results.md) */
    uint64_t reserved[8]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_fit_opts;

/** Fill `o` with the defaults above for K topics (fit has no default K). */
JSMF_API void jsmf_fit_opts_init(jsmf_fit_opts *o, uint32_t k);

/** Quality metrics (Lee et al. JSMF Sec. 5.1, Lee, Bindel & Mimno 2015 Sec. 4). NaN where
 *  undefined. */
typedef struct jsmf_metrics {
    double recovery;        /**< (1/N) sum_i ||Cbar_i - sum_k p(z=k|x=i) Cbar_{s_k}||_2 (001 Sec. 4) */
    double approximation;   /**< ||C - B A B^T||_F (001 Sec. 4) */
    double dominancy;       /**< (1/K) sum_k A_kk / sum_l A_kl (001 Sec. 4) */
    double specificity;     /**< (1/K) sum_k KL(B_k || p(x)) (001 Sec. 4) */
    double dissimilarity;   /**< mean count of a topic's top-20 words in no other topic's top 20 */
    double sparsity;        /**< (1/K) sum_k (sqrt N - |b_k|_1/|b_k|_2)/(sqrt N - 1) (000 Sec. 5.1) */
    double entropy;         /**< (1/N) sum_i H(z|x=i)/log2 K (000 Sec. 5.1) */
} jsmf_metrics;

#ifdef JSMF_ADVANCED
/** Metrics of any model against any co-occurrence source C of the same N (the unigram p(x) and
 *  Cbar come from C; p(z|x) from B and the topic marginal A 1 by Bayes' rule). Recovery needs
 *  the model's anchors (NaN without). One pass over C for the unigram, one for the rest.
 *  Errors: JSMF_EMISMATCH (N differs), the source's scan errors, JSMF_ENOMEM. */
JSMF_API int jsmf_model_metrics(const jsmf_model *m, const jsmf_source *C, jsmf_metrics *out);
/** The same within `mem` bytes (0: as jsmf_model_metrics: C held up to 1 GiB): the model and
 *  the metrics' arrays (at most two N x 2K blocks of doubles with anchors) first, C held in
 *  half of what they leave or read twice; what it holds into *plan (may be NULL). JSMF_ENOMEM,
 *  naming the --mem to give, before any pass over C where the model and the arrays alone
 *  exceed `mem` (since 3.4.0). */
JSMF_API int jsmf_model_metrics_within(const jsmf_model *m, const jsmf_source *C, uint64_t mem,
                                       uint64_t *plan, jsmf_metrics *out);
#endif

typedef struct jsmf_fit_trace {
    double delta;       /**< relative Frobenius change of the iterate (stream: of its factored part) */
    double shift;       /**< s added to every entry by the normalisation */
    double neg_frac;    /**< fraction of entries clipped to 0 */
    double neg_mass;    /**< sum of the clipped (negative) entries' magnitudes */
    double lambda_min;  /**< smallest of the K kept eigenvalues (before max(.,0)) */
    uint32_t eig_iters; /**< eigensolver passes this step (dense: 0) */
} jsmf_fit_trace;

typedef struct jsmf_fit_report {
    int mode;                     /**< JSMF_MODE_DENSE or JSMF_MODE_STREAM, as run */
    uint32_t n, k;
    /** seconds: t_load reads C (the dense path's load; the streaming paths' first
     *  eigendecomposition, the only reads of C but the metrics'), t_rectify the rest of step 1 */
    double t_load, t_rectify, t_anchors, t_recover_b, t_recover_a, t_metrics, t_total;
    uint32_t n_trace;
    jsmf_fit_trace trace[JSMF_FIT_MAX_TRACE];
    uint64_t passes;              /**< passes over C or generated row blocks */
    uint64_t c_scans;             /**< scans of the source by the first eigendecomposition (or
                                       the load), and their seconds: with the source's bytes */
    double c_scan_secs;           /**< (jsmf_source.bytes; an MPI job: rank 0's share of them),
                                       the rate C is read at */
    uint64_t c_bytes;
    int ranks;                    /**< an MPI job's ranks (1: one process) */
    uint32_t rank_rows_min;       /**< the fewest and the most rows of C (and of the compressed */
    uint32_t rank_rows_max;       /**< iterate's factor) a rank holds (0: C was not split) */
    uint64_t comm_bytes_sent;     /**< an MPI job: what this rank's collectives had moved when */
    uint64_t comm_calls;          /**< the fit returned (counted from the                       */
    double comm_seconds;          /**< communicator's start, the caller's agreements included) */
    uint64_t snls_iters;          /**< total per-word solver iterations */
    uint32_t snls_unconverged;    /**< words whose solver hit the iteration cap */
    double a_raw_sum;             /**< sum of A before normalising it to 1 */
    double alpha0;                /**< recovered Dirichlet concentration (sum of alpha) */
    uint64_t anchor_df;           /**< the document-frequency threshold of anchor candidates used
                                       (0: none) */
    uint32_t anchor_candidates;   /**< words that could be anchors */
    double final_neg_frac, final_neg_mass; /**< clip of the final rectified C */
    jsmf_metrics metrics;         /**< against the original C */
    int c_metrics_skipped;        /**< recovery and approximation against C not computed: C was
                                       too large for memory and would need two more passes (1),
                                       JSMF_FIT_NO_C_METRICS asked so (2), or their arrays
                                       (four N x K blocks) exceed mem_bytes (3; since 3.4.0) */
    double recovery_rect;         /**< Recovery against the rectified C (000 Sec. 5.1, log not taken) */
    double approximation_rect;    /**< ||C_rect - B A B^T||_F */
    uint32_t levels;              /**< levels fitted (1 + super-topic levels) */
    int rectify;                  /**< enum jsmf_rectify, as run */
    int converged;                /**< compressed: the steps stopped by the convergence test (0:
                                       at the cap, rectify_iters) */
    uint32_t compress_rows;       /**< compressed: rows kept non-negative, l */
    int eig_start;                /**< compressed: where C's eigendecomposition started (enum
                                       jsmf_eig_start) */
    int c_documents;              /**< 1: the products with C went through its documents
                                       (jsmf_source.docs; formats/fit.md), 0: through its rows */
    /** compressed: how C's eigendecomposition converged (formats/fit.md, "The first
     *  eigendecomposition's passes"), relative to the K-th Ritz value. sketch_within: after each
     *  of its first JSMF_FIT_MAX_SKETCH products, how far the wanted Ritz values moved since the
     *  basis one block smaller (NaN after a cycle's first product; none where C is in memory and
     *  the test is off); sketch_between: after each cycle, since the cycle before (NaN: the
     *  first). None when the factor came from a checkpoint. */
    uint32_t n_sketch_within, n_sketch_between;
    double sketch_within[JSMF_FIT_MAX_SKETCH], sketch_between[JSMF_FIT_MAX_SKETCH];
    /* since 3.1.0 */
    uint32_t anchor_rounds;       /**< rounds of anchors found (1: the first anchors were kept;
                                       more: topics came out empty and their anchors were
                                       replaced, formats/fit.md) */
    uint32_t anchors_replaced;    /**< anchors taken out of the candidates over those rounds */
    /* since 3.3.0: the memory plan (formats/fit.md, "Memory"), made before anything large is
     * allocated */
    uint64_t mem_plan;            /**< bytes of the plan's largest phase (the arrays it counts;
                                       the program and its libraries are the allowance beside
                                       it, JSMF_MEM_ALLOWANCE) */
    uint64_t mem_budget;          /**< the budget planned for (mem_bytes) */
    uint32_t eig_depth;           /**< compressed: Krylov depth of C's first eigendecomposition
                                       (4, fewer where the budget needs) */
    uint32_t mem_choices;         /**< JSMF_PLAN_* bits: what the plan kept in memory */
    uint64_t eig_cycles_resumed;  /**< compressed: cycles of C's eigendecomposition read back
                                       from the checkpoint (formats/fit.md, "Resuming"; 0: none) */
    uint64_t reserved[27]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_fit_report;

/** jsmf_fit_report.mem_choices. */
enum jsmf_plan_choice {
    JSMF_PLAN_HELD = 1,     /**< C's rows or the documents held in memory (not read per product) */
    JSMF_PLAN_P_KEPT = 2,   /**< compressed: P (N x l) kept between products */
    JSMF_PLAN_STREAMED = 4, /**< the source read per product because the budget needed it */
};

/** Where the compressed rectification's eigendecomposition of C started. */
enum jsmf_eig_start {
    JSMF_EIG_RANDOM = 0,  /**< a random block (a cold fit) */
    JSMF_EIG_WARM = 1,    /**< the previous model's factor (jsmf_fit_to_dir_after) */
    JSMF_EIG_RESUMED = 2  /**< read back from the checkpoint of a killed fit (MODEL.ckpt) */
};

/** The super-topic levels o->levels (K of each, fewer than the level above) fitted below `m`,
 *  which has none yet, from its A: the K x K co-occurrence of its topics is the next level's C,
 *  as jsmf_fit fits its levels from the rectified A (Lee et al. JSMF Sec. 4), with o's methods,
 *  densely. A refined model's A (the mean of theta_d theta_d^T) is such a co-occurrence too, so
 *  this gives a refined model its levels ('fit --refine --levels'). *levels (may be NULL): the
 *  levels m has then, its own included. Errors: JSMF_EINVAL (m has levels, a level out of
 *  range, a bad method), JSMF_ENOMEM, those of the fit (m keeps no level on error). Since 3.1.0. */
JSMF_API int jsmf_fit_levels(jsmf_model *m, const jsmf_fit_opts *o, uint32_t *levels);

#ifdef JSMF_ADVANCED
/** Fit K topics to C. `vocab` (may be NULL) names the words (copied into the model) and gives df
 *  for min_anchor_df. On success *out is a model (free with jsmf_model_free) whose `sub` chain
 *  holds the super-topic levels; `rep` (may be NULL) is filled. summary_json is left NULL.
 *  Errors: JSMF_EINVAL (K < 2 or K >= N, bad options), JSMF_ENOMEM (budget too small for a
 *  dense request), JSMF_ENOTSUP (DR in streaming mode), JSMF_ENUMERIC (eigensolver/NaN), and
 *  the source's scan errors (a store's JSMF_ESTORE). C and `vocab` are only read. */
JSMF_API int jsmf_fit(const jsmf_source *C, const jsmf_vocab *vocab, const jsmf_fit_opts *o,
                      jsmf_model **out, jsmf_fit_report *rep);

struct jsmf_source_input; /* jsmf_store.h */

/** summary.json of every level of a model jsmf_fit made (formats/model.md): the options `o`,
 *  the `input` path and, at the top level, the input's provenance (`in`, as jsmf_source_open
 *  opened it; NULL: none) and everything `r` reports. Sets (replaces) summary_json of each
 *  level (the model owns the texts; jsmf_model_save writes them); JSMF_ENOMEM when a text
 *  cannot be built. */
JSMF_API int jsmf_fit_summarize(jsmf_model *m, const jsmf_fit_opts *o,
                                const jsmf_fit_report *r, const char *input,
                                const struct jsmf_source_input *in);
#endif

/** What a fit reports, for people: lines of at most 80 columns for typical values, each
 *  "PREFIX: ..." (prefix NULL: none) — metrics, timings, the rectification, the anchor
 *  candidates, a warning when words hit the solver's iteration cap; for an MPI job the rows
 *  each rank holds and, last, what the collectives moved ("rank 0 sent ...": write rank 0's
 *  report). */
JSMF_API void jsmf_fit_report_write(FILE *f, const char *prefix, const jsmf_fit_report *r);

/** Flags of jsmf_fit_to_dir. */
enum {
    JSMF_FIT_FORCE = 1,         /**< replace what is at the model directory */
    JSMF_FIT_SAVE_RECTIFIED = 2, /**< also write DIR/rectified.npy: the dense path's rectified
                                     C, N x N (for inspection and reference tests) */
    JSMF_FIT_WARM = 4,          /**< with a previous model: start C's eigendecomposition from its
                                     factor (formats/fit.md, "Warm start": measured not to give
                                     the cold fit's model on debdesc, hence not the default) */
    JSMF_FIT_NO_C_METRICS = 8   /**< leave out the two metrics that read C again (recovery,
                                     approximation: NaN, c_metrics_skipped set), as when a
                                     refinement replaces the model ('jsmf fit --corpus') */
};

/** 'jsmf fit' as one call: fit the C at `input` (a store, .npy or .mtx; jsmf_source_open) with
 *  the options `o` (o->comm is ignored) and write the model directory `dir` with its
 *  summary.json (and, for the compressed rectification, c_factor.npy). A store fitted by one
 *  process keeps C's eigendecomposition in `dir`.ckpt until the model is written, and a call
 *  that finds one of the same store and options resumes from it (formats/fit.md, "Resuming"). `c` (NULL: this process alone) is the MPI job whose ranks all make this call:
 *  every rank reads its rows of C and fits (jsmf_fit_opts.comm), rank 0 alone writes. First,
 *  before any work, `dir` is checked (JSMF_EEXIST when something is there and not
 *  JSMF_FIT_FORCE: it is left as it was), the input is opened and a store without documents
 *  refused (JSMF_EINVAL); each step, and the end, is an agreement: an error on any rank is
 *  returned on every rank. `rep` (may be NULL) is the report, every rank's; on success *out
 *  (`out` may be NULL) is the model, the same on every rank and with its summary_json on rank
 *  0 (free it with jsmf_model_free); on error NULL. Errors also those of jsmf_source_open,
 *  jsmf_fit and jsmf_model_save. */
JSMF_API int jsmf_fit_to_dir(const char *input, const char *dir, int flags,
                             const jsmf_fit_opts *o, struct jsmf_comm *c, jsmf_model **out,
                             jsmf_fit_report *rep);

/** jsmf_fit_to_dir numbering its topics after the previous model at `previous` (a MODEL
 *  directory; NULL: jsmf_fit_to_dir itself): 'jsmf fit --previous'. The previous model is read
 *  before any work (its errors: jsmf_model_load's, naming it; JSMF_EMISMATCH when fewer than
 *  half of its words are in the input's vocabulary; JSMF_EFORMAT for a c_factor.npy that does
 *  not read, with JSMF_FIT_WARM); with JSMF_FIT_WARM the compressed rectification's
 *  eigendecomposition of C starts from its factor (formats/fit.md, "Warm start"); after the
 *  fit the topics are matched to its topics and
 *  renumbered (jsmf_model_lineage_get with JSMF_LINEAGE_L1, jsmf_model_renumber: a continuing
 *  topic keeps its index) and summary.json records the lineage (formats/model.md). Its K may
 *  differ: topics continue, are new or retire alike. On any error nothing is written. */
JSMF_API int jsmf_fit_to_dir_after(const char *input, const char *dir, const char *previous,
                                   int flags, const jsmf_fit_opts *o, struct jsmf_comm *c,
                                   jsmf_model **out, jsmf_fit_report *rep);

/** Whether the model at `model` can be the previous model of the store at `store`, as one a
 *  fit of this store wrote on an earlier night is: it loads whole (jsmf_model_load's errors,
 *  naming it) and its vocabulary is the store's first words in id order (ids never change as a
 *  store grows): JSMF_EMISMATCH naming the first word that differs, or a model of more words
 *  than the store. Reads the store's vocabulary only: cheap before a night's ingest, so that a
 *  model of another store stops the night before anything is written ('jsmf info --model'). */
JSMF_API int jsmf_fit_previous_check(const char *store, const char *model);

/** Names of the methods (--rectify, --anchors, --recover; messages and summary.json: "ap",
 *  "qr", "admm", ...), from the library's method tables: the choices are the names of 0, 1, ...
 *  up to the first NULL, and jsmf_fit refuses with JSMF_EINVAL a value that has no name. A
 *  static string, or NULL. */
JSMF_API const char *jsmf_fit_rectify_name(int v);
JSMF_API const char *jsmf_fit_anchors_name(int v);
JSMF_API const char *jsmf_fit_recover_name(int v);

#ifdef __cplusplus
}
#endif
#endif /* JSMF_FIT_H */
