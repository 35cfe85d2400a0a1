/* fdm_internal.h — what the FDM driver and its back ends (CPU, and the plugins: CUDA) share: the
 * counter-based RNG, the host copy of the optimiser state, the back-end interface and the table
 * of devices. */
#ifndef JSMF_FDM_INTERNAL_H
#define JSMF_FDM_INTERNAL_H

#include <stdint.h>
#include <time.h>

#include "jsmf_fdm.h"
#include "core/clock.h"
#include "fdm_docdraw.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct jsmf_fdm_sampler jsmf_fdm_sampler;

/** Build a sampler from `src` within `mem_budget` bytes (0 = no limit): from its documents
 *  when it has them (src->docs; exact, JSMF_ENOMEM saying which --mem would do when they do
 *  not fit), else from its rows (thinned to fit). Values must be finite and non-negative, the
 *  documents as include/jsmf.h says (JSMF_EFORMAT otherwise); a source with no positive mass
 *  is JSMF_EINVAL. */
int fdm_sampler_build(const jsmf_source *src, uint64_t mem_budget, jsmf_fdm_sampler **out);
void fdm_sampler_free(jsmf_fdm_sampler *s);
/** The bytes of `src`'s sampler unthinned (the return value), the least it can be thinned to
 *  (*least: documents are never thinned) and what its build holds besides (*scratch). */
uint64_t fdm_sampler_plan(const jsmf_source *src, uint64_t *least, uint64_t *scratch);
void fdm_sampler_info_get(const jsmf_fdm_sampler *s, jsmf_fdm_sampler_info *out);

/** Draw pairs number first .. first+count-1 of the stream (seed, stream) into u[], v[]. Each
 *  pair is a pure function of (seed, stream, index). Thread safe (read only). */
void fdm_sampler_draw_default(const jsmf_fdm_sampler *s, uint64_t seed, uint64_t stream,
                           uint64_t first, uint32_t count, uint32_t *u, uint32_t *v);

/** p(v | u = row): the row's within-row distribution (of the kept entries) as a dense vector
 *  out[N], zero outside the row's columns; recovered exactly from its alias table (from the
 *  documents: computed from those that hold the row). */
void fdm_sampler_row_dist(const jsmf_fdm_sampler *s, uint32_t row, double *out);
/** The same for k rows at once: p(v | u = rows[c]) in column c of out (N x k, row-major);
 *  from documents in one pass over them. JSMF_ENOMEM only. */
int fdm_sampler_rows_dist(const jsmf_fdm_sampler *s, const uint32_t *rows, uint32_t k,
                               double *out);

/** The raw tables, for back ends that copy them to a device. Arrays are owned by the sampler.
 *  A documents sampler (documents set) has its tables in doc and none of the others. */
typedef struct jsmf_fdm_sampler_tables {
    int documents;
    fdm_doc_tables doc;
    uint32_t n;
    uint64_t kept;
    const float *row_prob;     /**< N: alias probability of each row */
    const uint32_t *row_alias; /**< N */
    const uint64_t *rowptr;    /**< N+1: start of each row's entries */
    const float *prob;         /**< kept: alias probability within the row */
    const uint32_t *alias;     /**< kept: alias, as an index within the row */
    const uint32_t *col;       /**< kept: column (the second word of the pair) */
} jsmf_fdm_sampler_tables;
void fdm_sampler_tables_get(const jsmf_fdm_sampler *s, jsmf_fdm_sampler_tables *out);

/* The documents sampler (sampler_docs.c): the documents of `d` (N = n) loaded into `t`, its
 * info filled; fdm_doc_draw (fdm_docdraw.h) draws from it. */
int fdm_doc_sampler_build(const jsmf_doc_source *d, uint32_t n, uint64_t mem_budget,
                          fdm_doc_tables *t, jsmf_fdm_sampler_info *info);
void fdm_doc_sampler_free(fdm_doc_tables *t);
/* Its bytes for `docs` documents and `nnz` entries, with late words or not, and what its build
 * holds besides, freed before training. */
uint64_t fdm_doc_sampler_bytes(uint64_t docs, uint64_t nnz, uint32_t n, int late);
uint64_t fdm_doc_build_scratch(uint64_t docs, int late);
/* p(v | u = rows[c]) in column c of out (N x k, row-major) in one pass over the documents;
 * slot (N) and total (k) are scratch. */
void fdm_doc_rows_dist(const fdm_doc_tables *t, const uint32_t *rows, uint32_t k, double *out,
                       uint32_t *slot, double *total);

/** Replace JSMF_FDM_AUTO by its value for the start `p` asks for (init_B set: warm). A warm
 *  start is near an optimum already: shorter plateaus and fewer halvings reach it (debdesc
 *  K=50: the same held-out likelihood to 0.02 nats/token in 53 s instead of 96 s). */
void fdm_opts_resolve(jsmf_fdm_opts *p);

struct jsmf_source_input; /* jsmf_store.h */
struct jsmf_model;        /* jsmf_model.h */

/** --init auto: the spectral fit of `in` ('jsmf fit' defaults, p->k topics, p->threads) as the
 *  start: p->init_B and p->init_A point into *out, which the caller frees after training. When
 *  the fit gives no valid model (K above the anchor candidates, a degenerate A, K < 2) returns
 *  0 with *out NULL and the reason in jsmf_errmsg(): the run starts cold. Errors of memory and
 *  I/O are returned. */
int fdm_init_spectral(const struct jsmf_source_input *in, jsmf_fdm_opts *p,
                           struct jsmf_model **out);

/** --init MODEL: the model directory `dir` as the start. When both have a vocabulary and they
 *  differ (a grown store), the model's rows are matched to the input's words by string: a word
 *  the model lacks starts with a zero row (the smoothing floor), a word the input lacks is
 *  dropped and the columns renormalised; JSMF_EMISMATCH when fewer than half of the model's
 *  words are in the input. Without vocabularies it must have the input's N. When p->k is not
 *  0, K = p->k. Sets p->k, p->init_B and p->init_A (into *out, freed by the caller after
 *  training) and *new_words (may be NULL): the input's words the model lacks. */
int fdm_init_model(const char *dir, const struct jsmf_source_input *in, jsmf_fdm_opts *p,
                        struct jsmf_model **out, uint32_t *new_words);

/** What summary.json records of a run besides its parameters and its result. */
typedef struct jsmf_fdm_run {
    const char *input;  /**< INPUT as given */
    const char *device; /**< the device asked for: "auto", "cpu" or "cuda" */
    const char *init;   /**< the start asked for: "auto", "none", "random" or a MODEL */
    double seconds;     /**< the run's wall time so far */
    uint32_t init_new_words; /**< --init MODEL: the input's words the model lacks */
} jsmf_fdm_run;

/** Write `r` as the model directory `dir` (jsmf_model_save; an existing one is replaced only
 *  with `force`) with its summary.json (formats/model.md, kind "fdm"). The model takes the
 *  vocabulary of `in`: in->vocab is NULL afterwards. Once the model is written, p->checkpoint
 *  (when set) has done its job and is removed. */
int fdm_save(const char *dir, int force, const jsmf_fdm_opts *p, const jsmf_fdm_result *r,
                  const jsmf_fdm_run *run, struct jsmf_source_input *in);

/** "MODEL.ckpt" for the model directory `dir` ("MODEL/" too), malloc'ed; NULL when out of
 *  memory. */
char *fdm_checkpoint_path(const char *dir);

/** 0 when the CUDA back end is compiled in and a GPU answers (its name copied to `name`);
 *  JSMF_ENOTSUP with a message otherwise. */
int fdm_cuda_probe(char *name, size_t len);

/** Loss of one batch and gradients with respect to the logits (wmu N x K, walpha K x K), in
 *  double on the CPU. Outputs gmu/galpha may be NULL to get the loss only. */
int fdm_loss_grad_cpu(uint32_t n, uint32_t k, const double *wmu, const double *walpha,
                           const uint32_t *u, const uint32_t *v, uint32_t count, double *loss,
                           double *gmu, double *galpha);
/** Pairs of training step `step` drawn on the GPU by the kernels a CUDA run uses, from the
 *  sampler's tables copied there (a test hook: the device's pair distribution); JSMF_ENOTSUP
 *  without a GPU. */
int fdm_sample_cuda(const jsmf_fdm_sampler *s, uint64_t seed, uint64_t step, uint32_t count,
                         uint32_t *u, uint32_t *v);
/** The same computed by the CUDA back end (float on the device); JSMF_ENOTSUP without one. */
int fdm_loss_grad_cuda(uint32_t n, uint32_t k, const double *wmu, const double *walpha,
                            const uint32_t *u, const uint32_t *v, uint32_t count, double *loss,
                            double *gmu, double *galpha);


/* Philox4x32-10 (Salmon et al. 2011): four 32-bit words from a 128-bit counter and 64-bit key.
 * Stateless, so a draw is a pure function of (seed, stream, index). */
static inline void fdm_philox(uint64_t seed, uint64_t stream, uint64_t index, uint32_t out[4])
{
    uint32_t c0 = (uint32_t)index, c1 = (uint32_t)(index >> 32);
    uint32_t c2 = (uint32_t)stream, c3 = (uint32_t)(stream >> 32);
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c0 = n0, c1 = (uint32_t)p1, c2 = n2, c3 = (uint32_t)p0;
        k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
    }
    out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

/* Streams of the counter-based RNG: training step s uses stream s (s >= 1). */
#define FDM_STREAM_HELDOUT UINT64_C(0xFFFFFFFFFFFFFFF0)
#define FDM_STREAM_INIT    UINT64_C(0xFFFFFFFFFFFFFFF1)
#define FDM_STREAM_SEEDS   UINT64_C(0xFFFFFFFFFFFFFFF2) /* the words a random start begins at */

/* The optimiser state in double on the host: what a checkpoint holds. The CPU back end works on
 * it directly; the CUDA back end copies it to the device and back (sync). */
typedef struct fdm_state {
    uint32_t n, k;
    double *w, *mw, *vw; /* N x K logits of mu, Adam first and second moments */
    double *a, *ma, *va; /* K x K logits of alpha, moments */
} fdm_state;

int fdm_state_alloc(fdm_state *st, uint32_t n, uint32_t k);

/** The test hook JSMF_TEST_FDM_STOP_AFTER=S: a run behaves as if killed right after step S
 *  (it checkpoints and returns JSMF_EINTR); 0 when unset. */
uint64_t fdm_test_stop_after(void);
void fdm_state_free(fdm_state *st);


/* Everything a back end needs besides the state. */
typedef struct fdm_setup {
    const jsmf_fdm_sampler *sampler;
    uint32_t n, k, batch;
    uint64_t seed;
    double lr, beta1, beta2, eps;
    const uint32_t *hu, *hv; /* held-out pairs */
    uint32_t nheld;
    uint64_t mem_budget;
    int precision; /* JSMF_FDM_FP32 or JSMF_FDM_TF32 (the CUDA back end's pair products) */
    int threads;   /* CPU threads of this run (> 0) */
} fdm_setup;

typedef struct fdm_backend {
    void *ctx;
    /* One Adam step (number `step`, from 1) on the batch of that step; mean loss of the batch. */
    int (*train_step)(void *ctx, uint64_t step, double *loss);
    int (*heldout_loss)(void *ctx, double *loss);
    /* Make the host state current (the CUDA back end copies down; the CPU's is a no-op). */
    int (*sync)(void *ctx);
    void (*destroy)(void *ctx);
    char name[96];
    char note[160];
    int host_sampling; /* pairs are drawn on the host (the CPU's; CUDA's when its tables did
                        * not fit the device) */
} fdm_backend;

int fdm_cpu_backend_create(const fdm_setup *setup, fdm_state *st, fdm_backend *out);
/* The CPU back end's scratch for N, K and batches of up to bmax pairs (its allocation's rule). */
uint64_t fdm_cpu_bytes(uint32_t n, uint32_t k, uint32_t bmax);

/* The run's memory, planned before anything large is allocated (fdm_plan.c; formats/fdm.md,
 * "Memory"): the host's bytes of each phase, the sampler's share of --mem, or the refusal. */
typedef struct fdm_plan {
    double start;      /* the warm start's B and A, held through the run */
    double params;     /* the iterate and its Adam moments (twice while random starts compete) */
    double backend;    /* the CPU back end's scratch, and the held-out pairs */
    double finish;     /* the result's B and A and the softmax that makes them */
    double sampler;    /* the pair sampler's tables as built */
    double build;      /* the sampler's build scratch */
    double peak;       /* the largest phase */
    double least;      /* the least --mem that runs */
    uint64_t sampler_budget; /* the sampler's share of --mem (0: no limit) */
    int thinned;       /* the rows' tables thinned to their share */
} fdm_plan;

/* A warm start's B and A: none, held by the caller through the run (a library caller's), or
 * released once the iterate is made from them (jsmf_fdm_to_dir's). */
enum { FDM_START_NONE = 0, FDM_START_HELD = 1, FDM_START_RELEASED = 2 };

/** Plan the run of `p` over `src` with a start of that kind. JSMF_ENOMEM naming the --mem to
 *  give when even the least exceeds p->mem_budget. */
int fdm_plan_make(const jsmf_source *src, const jsmf_fdm_opts *p, int start, fdm_plan *pl);

/** jsmf_fdm_train, telling started(arg) once the iterate is made (from p->init_B and init_A,
 *  which are not read after it: the caller may free them, leaving the pointers set) or read
 *  from the checkpoint; started may be NULL. */
int fdm_train(const jsmf_source *src, const jsmf_fdm_opts *params, void (*started)(void *),
              void *arg, jsmf_fdm_result *out);
/* fdm_sampler_draw_default on nt threads (fdm_sampler_draw_default: OpenMP's default). */
void fdm_sampler_draw(const jsmf_fdm_sampler *s, uint64_t seed, uint64_t stream, uint64_t first,
                      uint32_t count, uint32_t *u, uint32_t *v, int nt);
/* mu (N x K, column softmax of w) and alpha (K x K, softmax of (a + a^T)/2) in double. */
int fdm_cpu_softmax(uint32_t n, uint32_t k, const double *w, const double *a, double *mu,
                    double *alpha);
/* The plugin boundary. A plugin (fdm_cuda.cu) calls back into the library only through
 * fdm_host_api, so it needs no symbols of the program that loads it, and hands back its
 * operations as an fdm_plugin_api from its one exported function (fdm_plugin_fn). */
typedef struct fdm_host_api {
    int (*error)(int code, const char *fmt, ...);
    void (*sampler_info_get)(const jsmf_fdm_sampler *s, jsmf_fdm_sampler_info *out);
    void (*sampler_tables_get)(const jsmf_fdm_sampler *s, jsmf_fdm_sampler_tables *out);
    void (*sampler_draw)(const jsmf_fdm_sampler *s, uint64_t seed, uint64_t stream,
                         uint64_t first, uint32_t count, uint32_t *u, uint32_t *v);
} fdm_host_api;

typedef struct fdm_plugin_api {
    int (*probe)(char *name, size_t len); /* 0 when its device answers (its name in name) */
    int (*backend_create)(const fdm_setup *setup, fdm_state *st, fdm_backend *out);
    int (*loss_grad)(uint32_t n, uint32_t k, const double *wmu, const double *walpha,
                     const uint32_t *u, const uint32_t *v, uint32_t count, double *loss,
                     double *gmu, double *galpha); /* a test hook (fdm_loss_grad_cuda) */
    int (*sample)(const jsmf_fdm_sampler *s, uint64_t seed, uint64_t step, uint32_t count,
                  uint32_t *u, uint32_t *v); /* a test hook (fdm_sample_cuda) */
} fdm_plugin_api;

typedef int (*fdm_plugin_fn)(const fdm_host_api *host, fdm_plugin_api *out);

/* Where a plugin is and what it is called: found by core/plugin.h's search order. */
typedef struct fdm_plugin {
    const char *env;     /* "JSMF_CUDA_LIB": a path that overrides the search */
    const char *file;    /* "libjsmf_cuda.so" */
    const char *build;   /* where make writes it, where it installs it (either may be NULL) */
    const char *install;
    const char *symbol;  /* its fdm_plugin_fn: "jsmf_fdm_cuda_plugin_v1" */
    const char *missing; /* NULL when it was built; else why there is none ("not compiled in") */
    /* device nodes, one of which a machine with the hardware has ("/dev/nvidiactl", WSL's
     * "/dev/dxg"; NULL-ended): where none exists, auto passes the device over without loading
     * the plugin, whose libraries alone take ~160 MB of resident memory (NULL: always load) */
    const char *const *nodes;
} fdm_plugin;

/* The plugin's operations, loaded the first time they are asked for (fdm_plugin.c), or
 * JSMF_ENOTSUP saying why it cannot be loaded. */
int fdm_plugin_load(const fdm_plugin *pl, const fdm_plugin_api **api);

/* ---- the devices (--device): one entry each, indexed by JSMF_FDM_DEVICE_* (fdm_device.c) ---- */

typedef struct fdm_device {
    const char *name;      /* --device, summary.json: "cpu", "cuda"; "auto" picks another */
    const char *title;     /* in notes: "the CPU", "the GPU" */
    int accelerator;       /* --device auto tries it first; a device that is not one is the
                            * fallback, where an accelerator cannot hold the model */
    int threads_in_name;   /* the run is named "cpu (N threads)" */
    int (*create)(const fdm_setup *setup, fdm_state *st, fdm_backend *out); /* built in */
    const fdm_plugin *plugin; /* or loaded from a plugin, whose probe says whether it answers */
} fdm_device;

/* The device of index id, NULL when there is none (auto is an entry with neither create nor
 * plugin). */
const fdm_device *fdm_device_get(int id);
/* The device a run asking for device `asked` uses, in *id: the device itself when it answers
 * its probe (an error naming --device otherwise); for auto the first accelerator that answers,
 * else the first device that is not one, with in `why` the last probe's message ("" when none
 * failed). Each device is probed once per process. */
int fdm_device_resolve(int asked, int *id, char *why, size_t len);
/* The back end of device `asked` (resolved as above) in *be, *used the device it runs on:
 * with auto, an accelerator that cannot hold the model falls back to the CPU, with a note. */
int fdm_device_open(int asked, const fdm_setup *setup, fdm_state *st, fdm_backend *be,
                    int *used);

#ifdef __cplusplus
}
#endif
#endif
