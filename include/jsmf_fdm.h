/* jsmf_fdm.h — the Full Dependence Mixture model (Fisher et al. 2020, Alg. 2): stochastic gradient
 * descent (Adam) on pairs of words sampled from the normalised co-occurrence C, with a CPU back end
 * (OpenMP + OpenBLAS, double) and a CUDA back end (cuBLAS + cuRAND, float) running one algorithm.
 *
 * The model: M(mu, alpha)_uv = sum_ij alpha_ij mu_i(u) mu_j(v), where mu_t = softmax over words of
 * the logits of topic t and alpha = softmax over all K x K entries of the symmetrised logits
 * (W + W^T)/2. The loss of a batch of pairs is -mean log M_uv. The logits of mu are kept N x K
 * (row = word, like B), so a pair gathers two contiguous rows.
 *
 * CAVEATS
 *  - Sampling is counter based: pair i of training step s is a pure function of (seed, s, i), so
 *    the pairs do not depend on the thread count, and a resumed run draws exactly the pairs an
 *    uninterrupted one would. On the CPU a run is reproducible bit for bit for a fixed thread
 *    count (OpenBLAS may sum in another order with another thread count), and a run resumed from
 *    a checkpoint equals the uninterrupted run exactly.
 *  - The CUDA back end works in float and uses atomics to scatter gradients: it is not bit
 *    reproducible, and it samples with cuRAND (another stream than the CPU's).
 *  - Checkpoints (formats/fdm.md, "Checkpoint") are written by atomic replace: write a temporary
 *    sibling, fsync, rename, fsync the directory.
 */
#ifndef JSMF_FDM_H
#define JSMF_FDM_H

#include <signal.h>

#include "jsmf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Pairs are drawn from C's documents when the source has them (jsmf_source.docs): the documents
 * are held in memory (8 bytes an entry of H, 8 a document; with late words also 8 a document
 * and 8 a word), and a pair is a document (uniformly: each carries 1/M of C's mass; with late
 * words by its mass), then an ordered pair of two of its distinct tokens (with late words
 * through an exact mixture over their admission points, formats/fdm.md). That is exactly C,
 * never thinned; when the documents do not fit the memory budget the run stops with
 * JSMF_ENOMEM saying which budget would do.
 *
 * A source known only by its rows gets a two-stage alias table built by one streaming pass:
 * a table over the N row marginals, then one table per row over that row's non-zeros. Memory:
 * 16 bytes per row + 12 bytes per kept non-zero (float probability, uint32 alias, uint32
 * column). When that exceeds the memory budget the sampler is *thinned*: a first pass
 * histograms the values, a second keeps per row only the entries above a global threshold
 * chosen to fit (each row keeps at least its largest entry). Row marginals stay exact; within
 * a row the kept entries are renormalised. The mass dropped is reported
 * (jsmf_fdm_result.sampler).
 * ------------------------------------------------------------------------------------------- */

/** What the pair sampler of a run holds. */
typedef struct jsmf_fdm_sampler_info {
    uint32_t n;            /**< rows (vocabulary size) */
    uint64_t nnz;          /**< non-zeros seen in the source (documents: entries of H) */
    uint64_t kept;         /**< non-zeros in the table (== nnz unless thinned; documents: the
                                entries of the documents of two tokens or more) */
    int thinned;           /**< 1 when the budget forced thinning (never from documents) */
    double dropped_mass;   /**< mass of C not represented in the within-row tables */
    double total_mass;     /**< sum of all entries seen (1 for a normalised C) */
    uint64_t bytes;        /**< memory of the tables */
    double build_seconds;  /**< wall time of the build (all passes) */
    uint64_t fingerprint;  /**< hash of the source content (rows, columns, values; or the
                                documents as loaded, and the admission points) */
    uint64_t documents;    /**< documents held by a sampler from documents; 0: from C's rows */
    uint64_t reserved[16]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_fdm_sampler_info;

/* ---------------------------------------------------------------------------------------------
 * Training.
 * ------------------------------------------------------------------------------------------- */

enum { JSMF_FDM_DEVICE_AUTO = 0, JSMF_FDM_DEVICE_CPU = 1, JSMF_FDM_DEVICE_CUDA = 2 };
/** Name of device `device` ("auto", "cpu", "cuda": --device and summary.json), NULL past the
 *  last: the list of devices is the names of 0, 1, ... up to the first NULL. A static string. */
JSMF_API const char *jsmf_fdm_device_name(int device);

typedef struct jsmf_fdm_opts {
    uint32_t k;                /**< topics K (T in Fisher et al. 2020) */
    int device;                /**< JSMF_FDM_DEVICE_*; AUTO = CUDA when compiled in and a GPU is present */
    uint64_t seed;             /**< keys every random draw */
    uint64_t steps;            /**< most Adam steps (default 0: until the schedule stops) */
    uint32_t batch;            /**< pairs per step (default 4096) */
    double lr, beta1, beta2, eps; /**< Adam (3e-2, 0.9, 0.999, 1e-8); lr is the initial rate */
    int init_kind;             /**< a start without init_B: JSMF_FDM_INIT_WORDS (default) or
                                    JSMF_FDM_INIT_GAUSSIAN (see below) */
    double init_scale;         /**< GAUSSIAN: std. deviation of the random logits (default 1) */
    uint32_t starts;           /**< random start: this many, each trained for 20 evaluations,
                                    and the best held-out one goes on (default 4; 1 = one) */
    int threads;               /**< CPU threads of this run, 0 = OpenMP default (read, not set) */
    int precision;             /**< the CUDA back end's pair products: JSMF_FDM_FP32 (default)
                                    or JSMF_FDM_TF32 (tensor cores; the CPU works in double
                                    whatever this says) */
    uint64_t eval_every;       /**< held-out loss (and the curve point) every E steps (default 100) */
    uint32_t heldout;          /**< held-out pairs drawn once at the start (default 50000) */
    uint32_t patience;         /**< evaluations without improvement before the learning rate
                                    halves (default JSMF_FDM_AUTO: 5 after a warm start, 10
                                    after a random one; 0 = never: a run ends at steps) */
    uint32_t lr_halvings;      /**< halvings before the run stops: the next plateau ends it
                                    (default JSMF_FDM_AUTO: 4 warm, 6 random) */
    double tol;                /**< relative improvement of the best held-out loss that counts (1e-4) */
    double time_limit;         /**< stop after this many seconds of training (0 = none): the
                                    one stop that depends on the machine */
    uint64_t checkpoint_every; /**< steps between checkpoints, 0 = none (default) */
    double checkpoint_seconds; /**< also a checkpoint once this much wall time has passed since
                                    the last (default 60; 0 = none): a fast device would spend a
                                    third of its time on step-counted ones. Which step a
                                    checkpoint lands on depends on the machine; the resumed run
                                    does not, since everything it decides is counted in steps */
    const char *checkpoint;    /**< checkpoint path (resumed from when it exists), or NULL */
    int restart;               /**< ignore (and replace) an existing checkpoint */
    int fresh_on_mismatch;     /**< a checkpoint of another run (or corrupt) is replaced, not an error */
    uint64_t mem_budget;       /**< the run's host memory (default half the machine's, as the
                                    fit's), planned before it starts (formats/fdm.md, "Memory"):
                                    the pair sampler gets what the rest leaves (a sampler of
                                    C's rows is thinned to it; on CUDA it also bounds the
                                    tables copied to the device); JSMF_ENOMEM naming the --mem
                                    to give where even the least exceeds it; 0 = no limit */
    const double *init_B;      /**< warm start: N x K, columns are distributions (or NULL) */
    const double *init_A;      /**< warm start: K x K, entries sum to 1 (or NULL = uniform) */
    double init_smooth;        /**< warm start mixes (1-s)*B + s/N before the log (default 1e-3) */
    /** Told after every training step (may be NULL): `what` "training" until the run has a
     *  held-out loss, then "held-out L" (the last one, %.4f; after a resume the checkpoint's,
     *  in a random start's probe that probe's), the step done of p->steps (0: no cap) in
     *  "steps". */
    jsmf_step_progress_fn progress;
    void *progress_arg;
    /** A stop request, e.g. the flag a SIGINT handler sets (NULL: none). Read after every step
     *  (the probes of a random start too): once *stop is non-zero the run stops there, with a
     *  final checkpoint when p->checkpoint is set (a probe writes none), and jsmf_fdm_train
     *  returns JSMF_EINTR. Set before training starts (during a warm-start fit), it stops
     *  after step 1. */
    const volatile sig_atomic_t *stop;
    uint64_t reserved[8]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_fdm_opts;

/** How a start without a warm-start model (init_B NULL) draws its topics. WORDS: topic t starts
 *  at p(. | w_t), the row of C of a word w_t drawn by its frequency (K distinct words), mixed
 *  (1-s) p + s/N with s = init_smooth, as a warm start is; alpha uniform. Random, but in the
 *  data's span: Gaussian logits start every topic near the same flat distribution, a saddle
 *  of the loss that SGD leaves only slowly (planted N = 5k, K = 20: l1 1.52, no better than
 *  random topics, after 7k steps; from words 0.59 after 5k). GAUSSIAN: logits ~ N(0,
 *  init_scale^2), Fisher et al. 2020's "at random". */
enum { JSMF_FDM_INIT_WORDS = 0, JSMF_FDM_INIT_GAUSSIAN = 1 };

enum { JSMF_FDM_FP32 = 0, JSMF_FDM_TF32 = 1 };

/** A parameter chosen by the start: see patience and lr_halvings. */
#define JSMF_FDM_AUTO UINT32_MAX

/** Fill `p` with the defaults above (k = 0 must then be set). */
JSMF_API void jsmf_fdm_opts_init(jsmf_fdm_opts *p);

typedef struct jsmf_fdm_result {
    uint32_t n, k;
    double *B;                 /**< N x K, column t = mu_t (columns sum to 1) */
    double *A;                 /**< K x K, alpha (entries sum to 1, symmetric) */
    uint64_t steps;            /**< steps done in total (including before a resume) */
    uint64_t resumed_from;     /**< step of the checkpoint resumed from, 0 for a fresh start */
    int stopped_early;         /**< the held-out rule stopped the run */
    int time_limited;          /**< the time limit stopped it */
    char device[96];           /**< "cpu (N threads)" or "cuda (device name)" */
    char note[256];            /**< e.g. why auto fell back to the CPU, or host-side sampling */
    int host_sampling;         /**< pairs drawn on the host: always on the CPU; on CUDA when
                                    its tables did not fit the device */
    uint64_t n_curve;          /**< points of the loss curve */
    uint64_t *curve_step;
    double *curve_train;       /**< mean training loss of the batches since the previous point */
    double *curve_heldout;     /**< held-out loss at that step */
    double best_heldout;
    double seconds_train;      /**< training wall time, summed over resumed pieces */
    double pairs_per_second;   /**< training pairs per second of this process: its steps, the
                                    random starts' probes included, over their time */
    jsmf_fdm_sampler_info sampler;
    uint64_t mem_plan;         /**< the plan's peak of host memory (bytes; since 3.4.0) */
    uint64_t mem_budget;       /**< the budget planned for (opts.mem_budget; since 3.4.0) */
    uint64_t reserved[14]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_fdm_result;

#ifdef JSMF_ADVANCED
/** Fit the FDM model to the C of `src` (only read) with `p` (p->k set; init_B and init_A
 *  borrowed). On success *out is the result, its arrays owned by it (free with
 *  jsmf_fdm_result_free). On JSMF_EINTR (p->stop, or the test hook JSMF_TEST_FDM_STOP_AFTER=S: as if killed right after step S) the checkpoint, when
 *  configured, holds the state and `out` is left empty. Errors: JSMF_EINVAL (bad parameters,
 *  K < 2, a source with no positive mass), JSMF_EFORMAT (negative or non-finite values in C),
 *  JSMF_ENOTSUP (device CUDA without one), JSMF_EMISMATCH, JSMF_EFORMAT or JSMF_EVERSION (a
 *  checkpoint of another run, corrupt or newer, unless p->fresh_on_mismatch), JSMF_ENUMERIC,
 *  JSMF_ENOMEM, and the checkpoint's JSMF_EIO and JSMF_ENOSPC. */
JSMF_API int jsmf_fdm_train(const jsmf_source *src, const jsmf_fdm_opts *p,
                            jsmf_fdm_result *out);
#endif
/** Free what a result owns and zero it (a zeroed result is fine). */
JSMF_API void jsmf_fdm_result_free(jsmf_fdm_result *r);

/* ---------------------------------------------------------------------------------------------
 * A run as a MODEL directory, as 'jsmf fdm' makes it.
 * ------------------------------------------------------------------------------------------- */

/** What a finished run did, for people: topics, device, steps and why it stopped; the held-out
 *  loss, rate and `seconds`; the directory `dir` written. Lines of at most 80 columns for
 *  typical values, each "PREFIX: ..." (prefix NULL: none). */
JSMF_API void jsmf_fdm_result_write(FILE *f, const char *prefix, const jsmf_fdm_result *r,
                                    double seconds, const char *dir);

/** How jsmf_fdm_to_dir starts and what it tells. */
typedef struct jsmf_fdm_dir_opts {
    const char *init;  /**< the start: "auto" (NULL too): the spectral fit of the input
                            ('jsmf fit' defaults, p->k topics), or a cold start, said in a
                            note, when that gives no model; "none": cold (p->init_kind);
                            "random": Gaussian logits (JSMF_FDM_INIT_GAUSSIAN); else a MODEL
                            directory with the input's words (and K = p->k unless that is 0) */
    int force;         /**< replace what is at `dir` */
    /** Told each line for the user as it happens, without the program's name or a newline:
     *  the warm start and its time or why there is none, that auto runs on the CPU (before
     *  training), the result's note, and where an interrupted run resumes from. NULL: silent. */
    void (*info)(void *arg, const char *line);
    void *info_arg;
    uint64_t reserved[8]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_fdm_dir_opts;

/** Fill `d` with the defaults: init "auto", no force, silent. */
JSMF_API void jsmf_fdm_dir_opts_init(jsmf_fdm_dir_opts *d);

/** 'jsmf fdm' as one call: refuse an existing `dir` unless d->force (JSMF_EEXIST, before any
 *  work; with it a checkpoint of another run is replaced too: p->fresh_on_mismatch), open
 *  `input` (a store, .npy or .mtx with its vocabulary: jsmf_source_open with
 *  JSMF_SOURCE_NEED_VOCAB), start as d->init says, train with `p` (p->checkpoint, init_B and
 *  init_A are set here: the checkpoint is DIR.ckpt, kept only when p asks for checkpoints by
 *  steps or seconds or for the test hook) and write `dir` (jsmf_model_save, with summary.json of
 *  kind "fdm"). `d` may be NULL (auto, no force, silent). On success `r` is the result (free
 *  with jsmf_fdm_result_free); on error it holds nothing to free, and JSMF_EINTR (p->stop was
 *  set, or the test hook) leaves the checkpoint that the same call resumes from (none while a
 *  cold start compares its p->starts: info tells where it resumes from only when there is a
 *  checkpoint). Errors also those of jsmf_source_open, jsmf_fdm_train and jsmf_model_save;
 *  JSMF_EMISMATCH when an --init model's words differ from the input's. */
JSMF_API int jsmf_fdm_to_dir(const char *input, const char *dir, const jsmf_fdm_dir_opts *d,
                             const jsmf_fdm_opts *p, jsmf_fdm_result *r);

#ifdef __cplusplus
}
#endif
#endif /* JSMF_FDM_H */
