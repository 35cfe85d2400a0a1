/* fdm.c — the FDM training driver: sampler, held-out pairs, initialisation (random or warm
 * start), choice of back end, the Adam loop with its stopping rule and loss curve, and the
 * checkpoint that makes a killed run resumable (formats/fdm.md). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fdm_internal.h"
#include "core/budget.h"
#include "core/durable.h"
#include "core/grow.h"
#include "core/hash.h"
#include "core/error.h"

#define CKPT_MAGIC "JSMFFDMC"
#define CKPT_VERSION 2u
/* Evaluations each random start trains before the best goes on (jsmf_fdm_opts.starts). */
#define PROBE_EVALS 20

void jsmf_fdm_opts_init(jsmf_fdm_opts *p)
{
    memset(p, 0, sizeof *p);
    p->device = JSMF_FDM_DEVICE_AUTO;
    p->seed = 1;
    p->steps = 0;
    p->batch = 4096;
    p->lr = 3e-2, p->beta1 = 0.9, p->beta2 = 0.999, p->eps = 1e-8;
    p->init_scale = 1.0;
    p->eval_every = 100;
    p->heldout = 50000;
    p->patience = JSMF_FDM_AUTO;
    p->lr_halvings = JSMF_FDM_AUTO;
    p->starts = 4;
    p->tol = 1e-4;
    p->init_smooth = 1e-3;
    p->checkpoint_seconds = 60;
    p->mem_budget = mem_default_fit(); /* one process's N x K arrays, as the fit's */
}

void fdm_opts_resolve(jsmf_fdm_opts *p)
{
    if (p->patience == JSMF_FDM_AUTO)
        p->patience = p->init_B ? 5 : 10;
    if (p->lr_halvings == JSMF_FDM_AUTO)
        p->lr_halvings = p->init_B ? 4 : 6;
}

int fdm_state_alloc(fdm_state *st, uint32_t n, uint32_t k)
{
    size_t nk = (size_t)n * k, kk = (size_t)k * k;
    memset(st, 0, sizeof *st);
    st->n = n, st->k = k;
    st->w = malloc(nk * sizeof(double));
    st->mw = calloc(nk, sizeof(double));
    st->vw = calloc(nk, sizeof(double));
    st->a = malloc(kk * sizeof(double));
    st->ma = calloc(kk, sizeof(double));
    st->va = calloc(kk, sizeof(double));
    if (!st->w || !st->mw || !st->vw || !st->a || !st->ma || !st->va) {
        fdm_state_free(st);
        return jsmf_error(JSMF_ENOMEM, "out of memory for FDM parameters (N = %u, K = %u)", n, k);
    }
    return 0;
}

/* Adam's moments back to zero (a fresh start). */
static void state_zero_moments(fdm_state *st)
{
    size_t nk = (size_t)st->n * st->k, kk = (size_t)st->k * st->k;
    memset(st->mw, 0, nk * sizeof(double)), memset(st->vw, 0, nk * sizeof(double));
    memset(st->ma, 0, kk * sizeof(double)), memset(st->va, 0, kk * sizeof(double));
}

/* dst = src (both allocated for the same N and K). */
static void state_copy(fdm_state *dst, const fdm_state *src)
{
    size_t nk = (size_t)src->n * src->k * sizeof(double), kk = (size_t)src->k * src->k * sizeof(double);
    memcpy(dst->w, src->w, nk), memcpy(dst->mw, src->mw, nk), memcpy(dst->vw, src->vw, nk);
    memcpy(dst->a, src->a, kk), memcpy(dst->ma, src->ma, kk), memcpy(dst->va, src->va, kk);
}

void fdm_state_free(fdm_state *st)
{
    free(st->w), free(st->mw), free(st->vw), free(st->a), free(st->ma), free(st->va);
    memset(st, 0, sizeof *st);
}

/* Standard normal number `index` of the initialisation stream (Box-Muller). */
static double init_normal(uint64_t seed, uint64_t index)
{
    uint32_t r[4];
    fdm_philox(seed, FDM_STREAM_INIT, index, r);
    double u1 = (r[0] + 1.0) / 4294967297.0, u2 = r[1] / 4294967296.0;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* Random start r, WORDS: K distinct words drawn by frequency (the first word of pairs of the
 * seed stream, from index r * 2^32 on), topic t = p(. | w_t). */
static int init_from_words(fdm_state *st, const jsmf_fdm_opts *p, const jsmf_fdm_sampler *smp,
                           uint32_t start)
{
    uint32_t n = st->n, k = st->k;
    uint32_t *words = malloc((size_t)k * sizeof *words);
    if (!words)
        return jsmf_error(JSMF_ENOMEM, "out of memory for the random start");
    uint64_t index = (uint64_t)start << 32;
    uint32_t got = 0, tries = 0;
    while (got < k) {
        uint32_t u, v;
        fdm_sampler_draw_default(smp, p->seed, FDM_STREAM_SEEDS, index++, 1, &u, &v);
        int dup = 0;
        for (uint32_t t = 0; t < got && !dup; t++)
            dup = words[t] == u;
        /* fewer frequent words than topics: repeats are allowed after enough tries */
        if (!dup || ++tries > 64 * k)
            words[got++] = u;
    }
    double s = p->init_smooth > 0 ? p->init_smooth : 1e-3; /* rows have zeros: never log 0 */
    /* the rows into w (N x K, word-major as w), then their logits in place */
    int rc = fdm_sampler_rows_dist(smp, words, k, st->w); /* from documents: one pass */
    for (size_t e = 0; !rc && e < (size_t)n * k; e++)
        st->w[e] = log((1 - s) * st->w[e] + s / n);
    free(words);
    return rc;
}

static int state_init(fdm_state *st, const jsmf_fdm_opts *p, const jsmf_fdm_sampler *smp,
                      uint32_t start)
{
    uint32_t n = st->n, k = st->k;
    double s = p->init_smooth;
    if (p->init_B) {
        for (size_t e = 0; e < (size_t)n * k; e++) {
            double b = p->init_B[e];
            if (!(b >= 0))
                return jsmf_error(JSMF_EINVAL, "warm start: B has a negative or NaN entry");
            st->w[e] = log((1 - s) * b + s / n);
            if (!isfinite(st->w[e]))
                return jsmf_error(JSMF_EINVAL, "warm start: B has a zero column entry and "
                                  "no smoothing (init_smooth = 0)");
        }
    } else if (p->init_kind == JSMF_FDM_INIT_WORDS) {
        int rc = init_from_words(st, p, smp, start);
        if (rc)
            return rc;
    } else {
        for (size_t e = 0; e < (size_t)n * k; e++) /* start r: its own stretch of the stream */
            st->w[e] = p->init_scale * init_normal(p->seed, e + (uint64_t)start * n * k);
    }
    for (size_t e = 0; e < (size_t)k * k; e++) {
        double a = p->init_A ? p->init_A[e] : 1.0 / ((double)k * k);
        if (!(a >= 0))
            return jsmf_error(JSMF_EINVAL, "warm start: A has a negative or NaN entry");
        a = (1 - s) * a + s / ((double)k * k);
        st->a[e] = log(a);
        if (!isfinite(st->a[e]))
            return jsmf_error(JSMF_EINVAL, "warm start: A has a zero entry and no smoothing");
    }
    return 0;
}

/* ---- loss curve and run bookkeeping (all of it goes into the checkpoint) ---- */

typedef struct run_log {
    uint64_t step;          /* steps done */
    double best;            /* best held-out loss */
    uint32_t bad;           /* evaluations since the last improvement (or lr halving) */
    uint32_t stopped;       /* the stopping rule fired */
    uint32_t halvings;      /* times the learning rate was halved */
    double train_acc;       /* sum of batch losses since the last curve point */
    uint64_t train_cnt;
    double seconds;         /* training time so far */
    uint64_t n_curve, cap_curve;
    uint64_t *c_step;
    double *c_train, *c_held;
} run_log;

static int log_push(run_log *g, uint64_t step, double train, double held)
{
    if (g->n_curve == g->cap_curve) {
        uint64_t cap = grow_capacity(g->cap_curve, g->n_curve + 1, 64);
        if (grow_array(&g->c_step, cap, sizeof *g->c_step) ||
            grow_array(&g->c_train, cap, sizeof *g->c_train) ||
            grow_array(&g->c_held, cap, sizeof *g->c_held))
            return jsmf_error(JSMF_ENOMEM, "out of memory for the loss curve");
        g->cap_curve = cap;
    }
    g->c_step[g->n_curve] = step;
    g->c_train[g->n_curve] = train;
    g->c_held[g->n_curve] = held;
    g->n_curve++;
    return 0;
}

static void log_free(run_log *g)
{
    free(g->c_step), free(g->c_train), free(g->c_held);
}

/* ---- checkpoint: a flat little-endian file with a trailing FNV-1a checksum ---- */

typedef struct ckpt_io {
    FILE *f;
    uint64_t hash;
    int err;
} ckpt_io;

static void hash_bytes(ckpt_io *io, const void *p, size_t len)
{
    io->hash = hash_fnv1a(io->hash, p, len);
}

static void put(ckpt_io *io, const void *p, size_t len)
{
    if (io->err)
        return;
    hash_bytes(io, p, len);
    if (len && fwrite(p, 1, len, io->f) != len)
        io->err = errno ? errno : EIO;
}

static void get(ckpt_io *io, void *p, size_t len)
{
    if (io->err)
        return;
    if (len && fread(p, 1, len, io->f) != len) {
        io->err = -1;
        return;
    }
    hash_bytes(io, p, len);
}

/* The fields of a checkpoint header that must match the run resuming it. */
typedef struct ckpt_header {
    char magic[8];
    uint32_t version, n, k, batch;
    uint64_t seed, fingerprint, eval_every;
    uint32_t heldout, patience, lr_halvings;
    double lr, beta1, beta2, eps, tol;
} ckpt_header;

static void header_fill(ckpt_header *h, const fdm_setup *s, const jsmf_fdm_opts *p,
                        uint64_t fingerprint)
{
    memset(h, 0, sizeof *h);
    memcpy(h->magic, CKPT_MAGIC, 8);
    h->version = CKPT_VERSION, h->n = s->n, h->k = s->k, h->batch = s->batch;
    h->seed = s->seed, h->fingerprint = fingerprint, h->eval_every = p->eval_every;
    h->heldout = p->heldout, h->patience = p->patience, h->lr_halvings = p->lr_halvings;
    h->lr = p->lr, h->beta1 = p->beta1, h->beta2 = p->beta2, h->eps = p->eps, h->tol = p->tol;
}

static void put_header(ckpt_io *io, const ckpt_header *h)
{
    put(io, h->magic, 8);
    put(io, &h->version, 4), put(io, &h->n, 4), put(io, &h->k, 4), put(io, &h->batch, 4);
    put(io, &h->seed, 8), put(io, &h->fingerprint, 8), put(io, &h->eval_every, 8);
    put(io, &h->heldout, 4), put(io, &h->patience, 4), put(io, &h->lr_halvings, 4);
    put(io, &h->lr, 8), put(io, &h->beta1, 8), put(io, &h->beta2, 8), put(io, &h->eps, 8);
    put(io, &h->tol, 8);
}

static void get_header(ckpt_io *io, ckpt_header *h)
{
    get(io, h->magic, 8);
    get(io, &h->version, 4), get(io, &h->n, 4), get(io, &h->k, 4), get(io, &h->batch, 4);
    get(io, &h->seed, 8), get(io, &h->fingerprint, 8), get(io, &h->eval_every, 8);
    get(io, &h->heldout, 4), get(io, &h->patience, 4), get(io, &h->lr_halvings, 4);
    get(io, &h->lr, 8), get(io, &h->beta1, 8), get(io, &h->beta2, 8), get(io, &h->eps, 8);
    get(io, &h->tol, 8);
}

static void put_run(ckpt_io *io, const run_log *g)
{
    put(io, &g->step, 8), put(io, &g->best, 8), put(io, &g->bad, 4), put(io, &g->stopped, 4);
    put(io, &g->halvings, 4);
    put(io, &g->train_acc, 8), put(io, &g->train_cnt, 8), put(io, &g->seconds, 8);
    put(io, &g->n_curve, 8);
}

static int ckpt_save(const char *path, const ckpt_header *h, const fdm_state *st, const run_log *g)
{
    char tmp[4200];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
        return jsmf_error(JSMF_EINVAL, "checkpoint path too long: %s", path);
    ckpt_io io = {fopen(tmp, "wb"), HASH_FNV1A_OFFSET, 0};
    if (!io.f)
        return jsmf_error(durable_errcode(errno), "%s: %s", tmp, strerror(errno));
    size_t nk = (size_t)st->n * st->k, kk = (size_t)st->k * st->k;
    put_header(&io, h);
    put_run(&io, g);
    put(&io, st->w, nk * 8), put(&io, st->mw, nk * 8), put(&io, st->vw, nk * 8);
    put(&io, st->a, kk * 8), put(&io, st->ma, kk * 8), put(&io, st->va, kk * 8);
    put(&io, g->c_step, g->n_curve * 8), put(&io, g->c_train, g->n_curve * 8);
    put(&io, g->c_held, g->n_curve * 8);
    uint64_t sum = io.hash;
    put(&io, &sum, 8);
    return durable_publish(io.f, io.err, tmp, path, "checkpoint");
}

/* Load `path` into st/g after checking it belongs to this run. JSMF_ENOTFOUND when absent. */
static int ckpt_load(const char *path, const ckpt_header *want, fdm_state *st, run_log *g)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return jsmf_error(errno == ENOENT ? JSMF_ENOTFOUND : JSMF_EIO, "%s: %s", path,
                          strerror(errno));
    ckpt_io io = {f, HASH_FNV1A_OFFSET, 0};
    ckpt_header h;
    int rc = 0;
    memset(&h, 0, sizeof h);
    get_header(&io, &h);
    if (io.err || memcmp(h.magic, CKPT_MAGIC, 8)) {
        rc = jsmf_error(JSMF_EFORMAT, "%s: not an FDM checkpoint", path);
        goto out;
    }
    if (h.version != CKPT_VERSION) {
        rc = jsmf_error(JSMF_EVERSION, "%s: checkpoint version %u, this program reads %u", path,
                        h.version, CKPT_VERSION);
        goto out;
    }
    if (memcmp(&h, want, sizeof h)) {
        const char *what = h.n != want->n || h.fingerprint != want->fingerprint ? "another input"
                           : h.k != want->k ? "another number of topics"
                           : h.seed != want->seed ? "another seed"
                                                  : "other training options";
        rc = jsmf_error(JSMF_EMISMATCH, "%s: checkpoint of a run with %s; rerun the same "
                        "command to resume, or force a fresh start", path, what);
        goto out;
    }
    get(&io, &g->step, 8), get(&io, &g->best, 8), get(&io, &g->bad, 4), get(&io, &g->stopped, 4);
    get(&io, &g->halvings, 4);
    get(&io, &g->train_acc, 8), get(&io, &g->train_cnt, 8), get(&io, &g->seconds, 8);
    uint64_t nc = 0;
    get(&io, &nc, 8);
    if (io.err || nc > g->step + 1) {
        rc = jsmf_error(JSMF_EFORMAT, "%s: truncated or corrupt checkpoint", path);
        goto out;
    }
    size_t nk = (size_t)st->n * st->k, kk = (size_t)st->k * st->k;
    get(&io, st->w, nk * 8), get(&io, st->mw, nk * 8), get(&io, st->vw, nk * 8);
    get(&io, st->a, kk * 8), get(&io, st->ma, kk * 8), get(&io, st->va, kk * 8);
    g->n_curve = 0;
    for (uint64_t i = 0; i < nc && !io.err; i++)
        if ((rc = log_push(g, 0, 0, 0)))
            goto out;
    get(&io, g->c_step, nc * 8), get(&io, g->c_train, nc * 8), get(&io, g->c_held, nc * 8);
    uint64_t expect = io.hash, sum = 0;
    get(&io, &sum, 8);
    if (io.err || sum != expect || fgetc(f) != EOF)
        rc = jsmf_error(JSMF_EFORMAT, "%s: truncated or corrupt checkpoint (checksum)", path);
out:
    fclose(f);
    return rc;
}

/* ---- the training loop ---- */

static int check_params(const jsmf_source *src, const jsmf_fdm_opts *p)
{
    if (p->k < 1)
        return jsmf_error(JSMF_EINVAL, "the number of topics must be at least 1");
    if (p->batch < 1)
        return jsmf_error(JSMF_EINVAL, "batch size must be at least 1");
    if (p->lr_halvings > 30)
        return jsmf_error(JSMF_EINVAL, "at most 30 learning-rate halvings");
    if (!(p->time_limit >= 0) || !(p->checkpoint_seconds >= 0))
        return jsmf_error(JSMF_EINVAL, "time limits must be >= 0");
    if (!(p->lr > 0) || !(p->beta1 >= 0 && p->beta1 < 1) || !(p->beta2 >= 0 && p->beta2 < 1) ||
        !(p->eps > 0))
        return jsmf_error(JSMF_EINVAL, "Adam needs lr > 0, 0 <= beta < 1, eps > 0");
    if (p->precision != JSMF_FDM_FP32 && p->precision != JSMF_FDM_TF32)
        return jsmf_error(JSMF_EINVAL, "precision must be fp32 or tf32");
    if (p->eval_every < 1)
        return jsmf_error(JSMF_EINVAL, "evaluation interval must be at least 1");
    if (!(p->init_smooth >= 0 && p->init_smooth < 1))
        return jsmf_error(JSMF_EINVAL, "warm-start smoothing must be in [0, 1)");
    if ((uint64_t)src->n * p->k > UINT64_C(1) << 31)
        return jsmf_error(JSMF_EINVAL, "N x K = %llu is too large",
                          (unsigned long long)src->n * p->k);
    return 0;
}

static int finish_result(const fdm_state *st, const run_log *g, jsmf_fdm_result *out)
{
    uint32_t n = st->n, k = st->k;
    out->n = n, out->k = k;
    out->B = malloc((size_t)n * k * sizeof(double));
    out->A = malloc((size_t)k * k * sizeof(double));
    out->curve_step = malloc((g->n_curve + 1) * sizeof(uint64_t));
    out->curve_train = malloc((g->n_curve + 1) * sizeof(double));
    out->curve_heldout = malloc((g->n_curve + 1) * sizeof(double));
    if (!out->B || !out->A || !out->curve_step || !out->curve_train || !out->curve_heldout)
        return jsmf_error(JSMF_ENOMEM, "out of memory for the FDM result");
    int rc = fdm_cpu_softmax(n, k, st->w, st->a, out->B, out->A);
    if (rc)
        return rc;
    if (g->n_curve) { /* no point yet (a run that the time limit ended in its probes) */
        memcpy(out->curve_step, g->c_step, g->n_curve * sizeof(uint64_t));
        memcpy(out->curve_train, g->c_train, g->n_curve * sizeof(double));
        memcpy(out->curve_heldout, g->c_held, g->n_curve * sizeof(double));
    }
    out->n_curve = g->n_curve;
    out->steps = g->step;
    out->stopped_early = (int)g->stopped;
    out->best_heldout = g->best;
    out->seconds_train = g->seconds;
    return 0;
}

/* The learning rate after g->halvings halvings. */
static double current_lr(const jsmf_fdm_opts *p, const run_log *g)
{
    return ldexp(p->lr, -(int)g->halvings);
}

/* Evaluate, extend the curve and apply the schedule: after `patience` evaluations without a
 * relative improvement of tol the learning rate halves; after lr_halvings halvings the run
 * stops (reduce on plateau: large steps while they pay, small ones to settle). Counted in
 * steps, so a resumed run takes the same decisions. */
static int evaluate(fdm_backend *be, const jsmf_fdm_opts *p, run_log *g, double *held)
{
    int rc = be->heldout_loss(be->ctx, held);
    if (rc)
        return rc;
    double train = g->train_cnt ? g->train_acc / g->train_cnt : NAN;
    g->train_acc = 0, g->train_cnt = 0;
    if ((rc = log_push(g, g->step, train, *held)))
        return rc;
    if (isnan(*held)) /* no held-out pairs: no stopping rule */
        return 0;
    if (*held < g->best - p->tol * fabs(g->best)) {
        g->best = *held;
        g->bad = 0;
    } else {
        if (*held < g->best)
            g->best = *held;
        g->bad++;
        if (p->patience && g->bad >= p->patience) {
            if (g->halvings < p->lr_halvings)
                g->halvings++, g->bad = 0;
            else
                g->stopped = 1;
        }
    }
    return 0;
}

/* p->progress after a step, named by the run's last held-out loss once it has one. */
static void report_step(const jsmf_fdm_opts *p, const run_log *g)
{
    if (!p->progress)
        return;
    double held = g->n_curve ? g->c_held[g->n_curve - 1] : -1;
    char what[64];
    if (held > 0)
        snprintf(what, sizeof what, "held-out %.4f", held);
    else
        snprintf(what, sizeof what, "training");
    p->progress(p->progress_arg, what, (double)g->step, (double)p->steps, "steps");
}

/* The steps this process trained and the seconds they took, the probes of the random starts
 * included: pairs/s counts them all (when the probes use up --time, the run itself trains
 * none, and its pairs/s would say 0). */
typedef struct throughput {
    uint64_t steps;
    double seconds;
} throughput;

uint64_t fdm_test_stop_after(void)
{
    const char *v = getenv("JSMF_TEST_FDM_STOP_AFTER");
    return v ? strtoull(v, NULL, 10) : 0;
}

/* Steps from the state as it is until the schedule stops the run, the step cap, `until` (0:
 * none) or the time limit; checkpoints and the kill hooks only when hdr is set (a probe of a
 * random start writes none: killed, it is redone from its seed). */
static int step_loop(fdm_backend *be, const jsmf_fdm_opts *p, fdm_setup *s, run_log *g,
                     uint64_t until, const ckpt_header *hdr, const fdm_state *st,
                     jsmf_fdm_result *out)
{
    int rc = 0;
    uint64_t stop_after = fdm_test_stop_after();
    double t_piece = clock_seconds(), t_saved = t_piece;
    while (!g->stopped && (!p->steps || g->step < p->steps) && (!until || g->step < until)) {
        double loss, held;
        s->lr = current_lr(p, g);
        g->step++;
        if ((rc = be->train_step(be->ctx, g->step, &loss)))
            return rc;
        g->train_acc += loss, g->train_cnt++;
        int eval_now = g->step % p->eval_every == 0 || g->step == p->steps;
        if (eval_now && (rc = evaluate(be, p, g, &held)))
            return rc;
        double t = clock_seconds();
        g->seconds += t - t_piece, t_piece = t;
        if (p->time_limit > 0 && g->seconds >= p->time_limit) /* the one machine-dependent stop */
            g->stopped = 1, out->time_limited = 1;
        report_step(p, g);
        int killed = (p->stop && *p->stop) || (hdr && stop_after && g->step == stop_after);
        int due = (p->checkpoint_every && g->step % p->checkpoint_every == 0) ||
                  (p->checkpoint_seconds > 0 && t - t_saved >= p->checkpoint_seconds);
        int save = hdr && p->checkpoint && (due || killed);
        if (save) {
            if ((rc = be->sync(be->ctx)) || (rc = ckpt_save(p->checkpoint, hdr, st, g)))
                return rc;
            t = clock_seconds();
            g->seconds += t - t_piece, t_piece = t, t_saved = t;
        }
        if (killed)
            return jsmf_error(JSMF_EINTR, "stopped at step %llu%s", (unsigned long long)g->step,
                              save ? " (checkpoint written)" : "");
    }
    return 0;
}

/* step_loop, adding what it trained to `tp`. */
static int run_steps(fdm_backend *be, const jsmf_fdm_opts *p, fdm_setup *s, run_log *g,
                     uint64_t until, const ckpt_header *hdr, const fdm_state *st,
                     jsmf_fdm_result *out, throughput *tp)
{
    double t0 = clock_seconds();
    uint64_t step0 = g->step;
    int rc = step_loop(be, p, s, g, until, hdr, st, out);
    tp->steps += g->step - step0;
    tp->seconds += clock_seconds() - t0;
    return rc;
}

/* A random start: `starts` of them, each trained for PROBE_EVALS evaluations; the one with the
 * best held-out loss goes on (the loss has local optima, and which one a start reaches shows
 * early). Deterministic: start r draws its logits from its own stretch of the init stream. */
static int pick_start(const jsmf_fdm_opts *p, fdm_setup *s, fdm_state *st, run_log *g,
                      jsmf_fdm_result *out, throughput *tp)
{
    fdm_state best = {0};
    run_log keep = {0};
    double best_held = INFINITY;
    uint64_t until = p->eval_every * PROBE_EVALS;
    int rc = fdm_state_alloc(&best, st->n, st->k);
    double spent = 0; /* training seconds of the probes: the time limit counts them all */
    for (uint32_t r = 0; r < p->starts && !rc && !(p->time_limit > 0 && spent >= p->time_limit);
         r++) {
        run_log t = {0};
        t.best = INFINITY, t.seconds = spent;
        fdm_backend be = {0};
        int used;
        state_zero_moments(st);
        if (!(rc = state_init(st, p, s->sampler, r)) &&
            !(rc = fdm_device_open(p->device, s, st, &be, &used)) &&
            !(rc = run_steps(&be, p, s, &t, until, NULL, st, out, tp)))
            rc = be.sync(be.ctx);
        if (be.destroy)
            be.destroy(be.ctx);
        spent = t.seconds;
        if (!rc && (t.best < best_held || r == 0)) {
            best_held = t.best;
            state_copy(&best, st);
            log_free(&keep);
            keep = t;
        } else {
            log_free(&t);
        }
    }
    if (!rc) {
        state_copy(st, &best);
        log_free(g);
        *g = keep;
        g->seconds = spent;
        g->stopped = out->time_limited; /* else a probe the schedule stopped goes on */
    } else {
        log_free(&keep);
    }
    fdm_state_free(&best);
    return rc;
}

int jsmf_fdm_train(const jsmf_source *src, const jsmf_fdm_opts *params, jsmf_fdm_result *out)
{
    return fdm_train(src, params, NULL, NULL, out);
}

int fdm_train(const jsmf_source *src, const jsmf_fdm_opts *params, void (*started)(void *),
              void *arg, jsmf_fdm_result *out)
{
    memset(out, 0, sizeof *out);
    jsmf_fdm_opts resolved = *params;
    fdm_opts_resolve(&resolved);
    const jsmf_fdm_opts *p = &resolved;
    int rc = check_params(src, p);
    if (rc)
        return rc;
    int nt = p->threads > 0 ? p->threads : omp_get_max_threads(); /* this run's, per call */

    fdm_plan plan;
    int start = !p->init_B ? FDM_START_NONE : started ? FDM_START_RELEASED : FDM_START_HELD;
    if ((rc = fdm_plan_make(src, p, start, &plan)))
        return rc;
    out->mem_plan = (uint64_t)plan.peak, out->mem_budget = p->mem_budget;

    jsmf_fdm_sampler *smp = NULL;
    uint32_t *hu = NULL, *hv = NULL;
    fdm_state st = {0};
    run_log g = {0};
    fdm_backend be = {0};
    throughput tp = {0, 0};
    g.best = INFINITY;
    if ((rc = fdm_sampler_build(src, plan.sampler_budget, &smp)))
        goto done;
    fdm_sampler_info_get(smp, &out->sampler);

    fdm_setup s = {0};
    s.sampler = smp, s.n = src->n, s.k = p->k, s.batch = p->batch, s.seed = p->seed;
    s.lr = p->lr, s.beta1 = p->beta1, s.beta2 = p->beta2, s.eps = p->eps;
    s.nheld = p->heldout, s.mem_budget = plan.sampler_budget, s.precision = p->precision;
    s.threads = nt;
    hu = malloc(((size_t)p->heldout + 1) * sizeof *hu);
    hv = malloc(((size_t)p->heldout + 1) * sizeof *hv);
    if (!hu || !hv) {
        rc = jsmf_error(JSMF_ENOMEM, "out of memory for held-out pairs");
        goto done;
    }
    fdm_sampler_draw(smp, p->seed, FDM_STREAM_HELDOUT, 0, p->heldout, hu, hv, nt);
    s.hu = hu, s.hv = hv;

    if ((rc = fdm_state_alloc(&st, s.n, s.k)))
        goto done;
    ckpt_header hdr;
    header_fill(&hdr, &s, p, out->sampler.fingerprint);
    rc = p->checkpoint && !p->restart ? ckpt_load(p->checkpoint, &hdr, &st, &g) : JSMF_OK;
    int afresh = !p->checkpoint || p->restart || rc == JSMF_ENOTFOUND ||
                 (p->fresh_on_mismatch &&
                  (rc == JSMF_EMISMATCH || rc == JSMF_EFORMAT || rc == JSMF_EVERSION));
    if (afresh) { /* no checkpoint to resume (or one to replace) */
        jsmf_error_clear();
        g.step = 0, g.n_curve = 0, g.best = INFINITY, g.bad = 0, g.stopped = 0;
        g.train_acc = 0, g.train_cnt = 0, g.seconds = 0;
        rc = state_init(&st, p, smp, 0);
        if (!rc && !p->init_B && p->starts > 1)
            rc = pick_start(p, &s, &st, &g, out, &tp);
    } else if (!rc) {
        out->resumed_from = g.step;
    }
    if (rc)
        goto done;
    if (started) /* the start's B and A are not read again */
        started(arg);

    int used;
    if ((rc = fdm_device_open(p->device, &s, &st, &be, &used)))
        goto done;
    snprintf(out->device, sizeof out->device, "%s", be.name);
    if (fdm_device_get(used)->threads_in_name)
        snprintf(out->device, sizeof out->device, "%s (%d threads)", fdm_device_get(used)->name,
                 nt);
    snprintf(out->note, sizeof out->note, "%s", be.note);
    out->host_sampling = be.host_sampling;

    if ((rc = run_steps(&be, p, &s, &g, 0, &hdr, &st, out, &tp)))
        goto done;
    out->pairs_per_second = tp.seconds > 0 ? (double)tp.steps * p->batch / tp.seconds : 0;
    if ((rc = be.sync(be.ctx)))
        goto done;
    /* Leave a checkpoint of the finished run, so a rerun after a crash while saving the model
     * does not train again. */
    if (p->checkpoint && (p->checkpoint_every || p->checkpoint_seconds > 0) &&
        (rc = ckpt_save(p->checkpoint, &hdr, &st, &g)))
        goto done;
    /* the result from the host state alone: the back end and the sampler go first (the plan's
     * finish holds neither) */
    if (be.destroy)
        be.destroy(be.ctx), be.destroy = NULL;
    fdm_sampler_free(smp), smp = NULL;
    rc = finish_result(&st, &g, out);
done:
    if (be.destroy)
        be.destroy(be.ctx);
    if (rc)
        jsmf_fdm_result_free(out);
    fdm_state_free(&st);
    log_free(&g);
    free(hu), free(hv);
    fdm_sampler_free(smp);
    return rc;
}

void jsmf_fdm_result_free(jsmf_fdm_result *r)
{
    if (!r)
        return;
    free(r->B), free(r->A), free(r->curve_step), free(r->curve_train), free(r->curve_heldout);
    r->B = r->A = NULL;
    r->curve_step = NULL, r->curve_train = r->curve_heldout = NULL;
    r->n_curve = 0;
}
