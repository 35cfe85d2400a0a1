/* cmd_fdm.c — 'jsmf fdm': fit the Full Dependence Mixture model (Fisher et al. 2020) by SGD on
 * pairs sampled from the C of a store (or an exported .npy / .mtx), on the CPU or a CUDA GPU,
 * resumable through MODEL.ckpt; writes a MODEL directory like 'jsmf fit'. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "jsmf_fdm.h"
#include "jsmf_fit.h"
#include "jsmf_model.h"
#include "jsmf_store.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: jsmf fdm INPUT -k T -o MODEL [options]\n\n"
        "Fit the full dependence mixture model (FDM): Adam on the loss\n"
        "-log M(mu,alpha)_uv of pairs (u,v) drawn from the co-occurrence C. INPUT is a\n"
        "store, or a C written by 'jsmf export' (MatrixMarket or .npy) with\n"
        "FILE.vocab.txt beside it. A run checkpoints to MODEL.ckpt; the same command\n"
        "after a kill resumes from it (on the CPU the result equals an uninterrupted\n"
        "run).\n\n"
        "options:\n"
        "  -k, --topics T        number of topics (default: K of --init MODEL)\n"
        "  -o, --output MODEL    model directory to write\n"
        "  --device auto|cpu|cuda\n"
        "                        back end (auto: CUDA when compiled in and a GPU answers)\n"
        "  --init auto|none|random|MODEL\n"
        "                        start from: auto (default) a spectral fit of INPUT\n"
        "                        ('jsmf fit' defaults; none when it cannot give T\n"
        "                        topics); none: cold, topic t = p(.|w) of a word w drawn\n"
        "                        by frequency; random: Gaussian logits; MODEL: a model\n"
        "                        directory with the same vocabulary\n"
        "  --init-smooth F       a start from topics or words mixes (1-F) B + F/N before\n"
        "                        the log (default 1e-3)\n"
        "  --init-scale S        --init random: std. deviation of the logits (default 1)\n"
        "  --starts R            cold start: R starts trained 20 evaluations each, the\n"
        "                        best held-out one goes on (default 4)\n"
        "  --seed S              seed of initialisation and sampling (default 1)\n"
        "  --steps N             most Adam steps (default 0: until the schedule stops)\n"
        "  --batch B             pairs per step (default 4096)\n"
        "  --lr F                initial Adam learning rate (default 0.03)\n"
        "  --threads N           CPU threads (default: all)\n"
        "  --precision fp32|tf32 GPU pair products in FP32 (default) or on TF32 tensor\n"
        "                        cores (the CPU works in double)\n"
        "  --eval-every N        held-out loss and loss-curve point every N steps\n"
        "                        (default 100)\n"
        "  --heldout N           held-out pairs drawn once at the start (default 50000)\n"
        "  --patience N          evaluations without a relative improvement of the\n"
        "                        held-out loss above --tol before the rate halves\n"
        "                        (default 5 after a warm start, 10 after a cold one;\n"
        "                        0 = never: --steps ends the run)\n"
        "  --lr-halvings N       halvings before the next plateau ends the run\n"
        "                        (default 4 warm, 6 cold)\n"
        "  --tol F               relative improvement that counts (default 1e-4)\n"
        "  --time DURATION       also stop after this much training (e.g. 90s, 10m, 2h):\n"
        "                        the one stop that depends on the machine\n"
        "  --checkpoint-every N|DURATION\n"
        "                        checkpoint to MODEL.ckpt every N steps or every\n"
        "                        DURATION of wall time (default 60s; 0 = off)\n"
        "  --mem SIZE            budget for the pair sampler tables (e.g. 2G); beyond it\n"
        "                        the tables are thinned (CPU) or kept on the host (CUDA)\n"
        "  --restart             ignore an existing MODEL.ckpt and start afresh\n"
        "  --force               replace an existing MODEL, and a MODEL.ckpt of another\n"
        "                        run\n"
        "  --stop-after N        stop after step N with a checkpoint, as if killed\n"
        "                        (tests)\n"
        "  -q, --quiet           no progress or messages\n"
        "  --progress, --no-progress   force the progress line on or off\n");
}

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
    got_signal = sig;
}

typedef struct progress_ctx {
    double last_held;
} progress_ctx;

static int on_progress(void *arg, uint64_t step, uint64_t steps, double train, double held)
{
    progress_ctx *pc = arg;
    (void)train;
    if (held >= 0)
        pc->last_held = held;
    char what[64];
    if (pc->last_held > 0)
        snprintf(what, sizeof what, "held-out %.4f", pc->last_held);
    else
        snprintf(what, sizeof what, "training");
    cli_progress_update(what, (double)step, (double)steps, "steps");
    return got_signal != 0;
}

typedef struct fdm_opts {
    const char *input, *output, *init, *device;
    jsmf_fdm_params p;
    int force, k_given;
} fdm_opts;

/* A duration: seconds, or a number with s, m or h. */
static int parse_duration(const char *opt, const char *v, double *out)
{
    char *end;
    double x = strtod(v, &end);
    double unit = !*end ? 1 : !strcmp(end, "s") ? 1 : !strcmp(end, "m") ? 60
                : !strcmp(end, "h") ? 3600 : -1;
    if (end == v || unit < 0 || !(x > 0) || !isfinite(x))
        return cli_usage_error("%s: '%s' is not a duration (e.g. 90s, 10m, 2h)", opt, v);
    *out = x * unit;
    return 0;
}

/* --checkpoint-every: a step count (digits alone), a duration (with a unit), or 0 (none). */
static int parse_checkpoint_every(const char *v, jsmf_fdm_params *p)
{
    size_t digits = strspn(v, "0123456789");
    p->checkpoint_every = 0, p->checkpoint_seconds = 0;
    if (digits && !v[digits])
        return cli_parse_u64("--checkpoint-every", v, &p->checkpoint_every);
    return parse_duration("--checkpoint-every", v, &p->checkpoint_seconds);
}

static int parse(int argc, char **argv, fdm_opts *o)
{
    jsmf_fdm_params *p = &o->p;
    jsmf_fdm_params_default(p);
    o->device = "auto";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int err = 0, rc = 0;
        uint64_t u64;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return -1;
        }
        if (cli_common_option(a))
            continue;
#define OPT(name, alt) ((v = cli_opt_value(argc, argv, &i, name, alt, &err)) != NULL || err)
        if (OPT("--topics", "-k"))
            rc = err ? err : cli_parse_u32("-k", v, &p->k), o->k_given = 1;
        else if (OPT("--output", "-o"))
            rc = err, o->output = v;
        else if (OPT("--device", NULL))
            rc = err, o->device = v;
        else if (OPT("--init", NULL))
            rc = err, o->init = v;
        else if (OPT("--init-scale", NULL))
            rc = err ? err : cli_parse_double(a, v, &p->init_scale);
        else if (OPT("--starts", NULL))
            rc = err ? err : cli_parse_u32("--starts", v, &p->starts);
        else if (OPT("--init-smooth", NULL))
            rc = err ? err : cli_parse_double(a, v, &p->init_smooth);
        else if (OPT("--seed", NULL))
            rc = err ? err : cli_parse_u64("--seed", v, &p->seed);
        else if (OPT("--steps", NULL))
            rc = err ? err : cli_parse_u64("--steps", v, &p->steps);
        else if (OPT("--batch", NULL))
            rc = err ? err : cli_parse_u32("--batch", v, &p->batch);
        else if (OPT("--lr", NULL))
            rc = err ? err : cli_parse_double("--lr", v, &p->lr);
        else if (OPT("--threads", NULL)) {
            rc = err ? err : cli_parse_u64("--threads", v, &u64);
            if (!rc && (u64 < 1 || u64 > 4096))
                rc = cli_usage_error("--threads must be between 1 and 4096");
            p->threads = (int)u64;
        } else if (OPT("--eval-every", NULL))
            rc = err ? err : cli_parse_u64("--eval-every", v, &p->eval_every);
        else if (OPT("--heldout", NULL))
            rc = err ? err : cli_parse_u32("--heldout", v, &p->heldout);
        else if (OPT("--patience", NULL))
            rc = err ? err : cli_parse_u32("--patience", v, &p->patience);
        else if (OPT("--lr-halvings", NULL))
            rc = err ? err : cli_parse_u32("--lr-halvings", v, &p->lr_halvings);
        else if (OPT("--time", NULL))
            rc = err ? err : parse_duration("--time", v, &p->time_limit);
        else if (OPT("--tol", NULL))
            rc = err ? err : cli_parse_double("--tol", v, &p->tol);
        else if (OPT("--precision", NULL)) {
            rc = err;
            if (!rc && !strcmp(v, "fp32"))
                p->precision = JSMF_FDM_FP32;
            else if (!rc && !strcmp(v, "tf32"))
                p->precision = JSMF_FDM_TF32;
            else if (!rc)
                rc = cli_usage_error("--precision: '%s' is not fp32 or tf32", v);
        } else if (OPT("--checkpoint-every", NULL))
            rc = err ? err : parse_checkpoint_every(v, p);
        else if (OPT("--mem", NULL))
            rc = err ? err : cli_parse_mem(v, &p->mem_budget);
        else if (OPT("--stop-after", NULL))
            rc = err ? err : cli_parse_u64("--stop-after", v, &p->stop_after);
        else if (!strcmp(a, "--restart"))
            p->restart = 1;
        else if (!strcmp(a, "--force"))
            o->force = 1, p->fresh_on_mismatch = 1;
        else if (a[0] == '-' && a[1])
            return cli_usage_error("unknown option '%s'", a);
        else if (!o->input)
            o->input = a;
        else
            return cli_usage_error("unexpected argument '%s'", a);
#undef OPT
        if (rc)
            return rc;
    }
    if (!o->input)
        return cli_usage_error("missing INPUT (a store or a .npy C)");
    if (!o->output)
        return cli_usage_error("missing -o MODEL");
    if (!o->init)
        o->init = "auto";
    if (!strcmp(o->init, "random"))
        p->init_kind = JSMF_FDM_INIT_GAUSSIAN;
    int init_model = strcmp(o->init, "auto") && strcmp(o->init, "none") &&
                     strcmp(o->init, "random");
    if (!o->k_given && !init_model)
        return cli_usage_error("missing -k T (number of topics)");
    if (o->k_given && p->k < 1)
        return cli_usage_error("-k must be at least 1");
    if (!strcmp(o->device, "auto"))
        p->device = JSMF_FDM_DEVICE_AUTO;
    else if (!strcmp(o->device, "cpu"))
        p->device = JSMF_FDM_DEVICE_CPU;
    else if (!strcmp(o->device, "cuda"))
        p->device = JSMF_FDM_DEVICE_CUDA;
    else
        return cli_usage_error("--device must be auto, cpu or cuda, not '%s'", o->device);
    if (!(p->lr > 0))
        return cli_usage_error("--lr must be positive");
    if (p->batch < 1 || p->eval_every < 1)
        return cli_usage_error("--batch and --eval-every must be at least 1");
    if (p->lr_halvings > 30 && p->lr_halvings != JSMF_FDM_AUTO)
        return cli_usage_error("--lr-halvings must be at most 30");
    if (p->starts < 1)
        return cli_usage_error("--starts must be at least 1");
    if (!(p->init_smooth >= 0 && p->init_smooth < 1))
        return cli_usage_error("--init-smooth must be in [0, 1)");
    return 0;
}

/* ---- warm start ---- */

static int load_init(const char *dir, const jsmf_source_input *in, fdm_opts *o, jsmf_model **out)
{
    int rc = jsmf_model_load(dir, out);
    if (rc)
        return jsmf_error_context(rc, "--init %s", dir);
    jsmf_model *m = *out;
    if (m->n != in->src.n)
        return jsmf_error(JSMF_EMISMATCH, "--init %s: the model has %u words, the input %u", dir,
                          m->n, in->src.n);
    if (m->vocab && in->vocab && (rc = jsmf_vocab_compare(m->vocab, "the model", in->vocab,
                                                          "the input")))
        return jsmf_error_context(rc, "--init %s", dir);
    if (o->k_given && o->p.k != m->k)
        return jsmf_error(JSMF_EMISMATCH, "--init %s has K = %u, but -k %u was given", dir, m->k,
                          o->p.k);
    o->p.k = m->k;
    o->p.init_B = m->B;
    o->p.init_A = m->A;
    return 0;
}

/* --init auto: the spectral fit of the same C with 'jsmf fit' defaults. Where it gives no
 * valid model (T above the anchor candidates, a degenerate A, T < 2) the run starts at random
 * and says why. */
static int fit_init(const jsmf_source_input *in, fdm_opts *o, jsmf_model **out)
{
    jsmf_fit_opts fo;
    jsmf_fit_opts_init(&fo, o->p.k);
    fo.docs = in->kind == JSMF_SOURCE_STORE ? in->stats.docs : 0;
    fo.threads = o->p.threads;
    double t = cli_now();
    int rc = o->p.k >= 2 ? jsmf_fit(&in->src, in->vocab, &fo, out, NULL)
                         : jsmf_error(JSMF_EINVAL, "a spectral fit needs at least 2 topics");
    if (rc == JSMF_ENOMEM || rc == JSMF_EIO || rc == JSMF_ESTORE)
        return rc;
    if (rc) {
        cli_info("note: no warm start (%s); starting cold (--init none)", jsmf_errmsg());
        *out = NULL;
        return JSMF_OK;
    }
    cli_info("warm start: spectral fit of %u topics (%.1f s)", o->p.k, cli_now() - t);
    o->p.init_B = (*out)->B;
    o->p.init_A = (*out)->A;
    return JSMF_OK;
}

/* ---- summary.json ---- */

static void json_array_u64(jsmf_json *j, const char *key, const uint64_t *x, uint64_t n)
{
    jsmf_json_begin_array(j, key);
    for (uint64_t i = 0; i < n; i++)
        jsmf_json_uint(j, NULL, x[i]);
    jsmf_json_end_array(j);
}

static void json_array_f64(jsmf_json *j, const char *key, const double *x, uint64_t n)
{
    jsmf_json_begin_array(j, key);
    for (uint64_t i = 0; i < n; i++)
        jsmf_json_number(j, NULL, x[i]);
    jsmf_json_end_array(j);
}

static char *summary_text(const fdm_opts *o, const jsmf_source_input *in, const jsmf_fdm_result *r,
                          double seconds_total)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    const jsmf_fdm_params *p = &o->p;
    jsmf_json j;
    jsmf_json_init(&j, f, 1);
    jsmf_json_begin_object(&j, NULL);
    jsmf_json_string(&j, "format", "jsmf-model");
    jsmf_json_int(&j, "version", 1);
    jsmf_json_string(&j, "kind", "fdm");
    jsmf_json_uint(&j, "k", r->k);
    jsmf_json_uint(&j, "n_words", r->n);
    jsmf_json_string(&j, "jsmf_version", jsmf_version());
    char when[32];
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    jsmf_json_string(&j, "created", when);
    jsmf_json_int(&j, "level", 0);

    jsmf_json_begin_object(&j, "parameters");
    jsmf_json_string(&j, "device", o->device);
    jsmf_json_string(&j, "init", o->init);
    jsmf_json_string(&j, "init_from", o->p.init_B ? "model"
                                     : p->init_kind == JSMF_FDM_INIT_WORDS ? "words" : "random");
    if (o->p.init_B || p->init_kind == JSMF_FDM_INIT_WORDS)
        jsmf_json_number(&j, "init_smooth", p->init_smooth);
    else
        jsmf_json_number(&j, "init_scale", p->init_scale);
    jsmf_json_uint(&j, "seed", p->seed);
    jsmf_json_uint(&j, "steps", p->steps);
    jsmf_json_uint(&j, "batch", p->batch);
    jsmf_json_number(&j, "lr", p->lr);
    jsmf_json_number(&j, "beta1", p->beta1);
    jsmf_json_number(&j, "beta2", p->beta2);
    jsmf_json_number(&j, "eps", p->eps);
    jsmf_json_int(&j, "threads", p->threads);
    jsmf_json_string(&j, "precision", p->precision == JSMF_FDM_TF32 ? "tf32" : "fp32");
    jsmf_json_uint(&j, "eval_every", p->eval_every);
    jsmf_json_uint(&j, "heldout", p->heldout);
    jsmf_json_uint(&j, "patience", p->patience);
    jsmf_json_uint(&j, "lr_halvings", p->lr_halvings);
    if (!p->init_B)
        jsmf_json_uint(&j, "starts", p->starts);
    jsmf_json_number(&j, "time", p->time_limit);
    jsmf_json_number(&j, "tol", p->tol);
    jsmf_json_uint(&j, "checkpoint_every", p->checkpoint_every);
    jsmf_json_number(&j, "checkpoint_seconds", p->checkpoint_seconds);
    jsmf_json_uint(&j, "mem", p->mem_budget);
    jsmf_json_end_object(&j);

    double last_held = r->n_curve ? r->curve_heldout[r->n_curve - 1] : NAN;
    double last_train = r->n_curve ? r->curve_train[r->n_curve - 1] : NAN;
    jsmf_json_begin_object(&j, "metrics");
    jsmf_json_number(&j, "loss", last_train);
    jsmf_json_number(&j, "heldout_pair_loss", last_held);
    jsmf_json_number(&j, "best_heldout_pair_loss", r->best_heldout);
    jsmf_json_end_object(&j);

    jsmf_json_begin_object(&j, "fdm");
    jsmf_json_string(&j, "device", r->device);
    if (r->note[0])
        jsmf_json_string(&j, "note", r->note);
    jsmf_json_uint(&j, "steps_done", r->steps);
    jsmf_json_uint(&j, "resumed_from", r->resumed_from);
    jsmf_json_bool(&j, "stopped_early", r->stopped_early);
    jsmf_json_number(&j, "pairs_per_second", r->pairs_per_second);
    jsmf_json_begin_object(&j, "sampler");
    jsmf_json_string(&j, "strategy", "two-stage alias (row marginals, then within row)");
    jsmf_json_string(&j, "where", r->host_sampling ? "host" : !strncmp(r->device, "cuda", 4)
                                                                  ? "device" : "host");
    jsmf_json_uint(&j, "nnz", r->sampler.nnz);
    jsmf_json_uint(&j, "kept", r->sampler.kept);
    jsmf_json_bool(&j, "thinned", r->sampler.thinned);
    jsmf_json_number(&j, "dropped_mass", r->sampler.dropped_mass);
    jsmf_json_uint(&j, "bytes", r->sampler.bytes);
    jsmf_json_number(&j, "build_seconds", r->sampler.build_seconds);
    jsmf_json_end_object(&j);
    jsmf_json_begin_object(&j, "curve");
    json_array_u64(&j, "step", r->curve_step, r->n_curve);
    json_array_f64(&j, "train_loss", r->curve_train, r->n_curve);
    json_array_f64(&j, "heldout_loss", r->curve_heldout, r->n_curve);
    jsmf_json_end_object(&j);
    jsmf_json_end_object(&j);

    jsmf_json_begin_object(&j, "timings");
    jsmf_json_number(&j, "sampler", r->sampler.build_seconds);
    jsmf_json_number(&j, "train", r->seconds_train);
    jsmf_json_number(&j, "total", seconds_total);
    jsmf_json_end_object(&j);

    jsmf_source_summary(&j, o->input, in);
    jsmf_json_end_object(&j);
    fputc('\n', f);
    if (fclose(f)) {
        free(buf);
        return NULL;
    }
    return buf;
}

static int save_model(const fdm_opts *o, jsmf_source_input *in, jsmf_fdm_result *r, double t0)
{
    jsmf_model *m = NULL;
    int rc = jsmf_model_new(r->n, r->k, &m);
    if (rc)
        return rc;
    memcpy(m->B, r->B, (size_t)r->n * r->k * sizeof(double));
    memcpy(m->A, r->A, (size_t)r->k * r->k * sizeof(double));
    m->vocab = in->vocab;
    m->summary_json = summary_text(o, in, r, cli_now() - t0);
    if (!m->summary_json)
        rc = jsmf_error(JSMF_ENOMEM, "out of memory for summary.json");
    else
        rc = jsmf_model_save(o->output, m, o->force);
    in->vocab = NULL; /* the model owns it now */
    jsmf_model_free(m);
    return rc;
}

int cmd_fdm(int argc, char **argv)
{
    double t0 = cli_now();
    fdm_opts o;
    memset(&o, 0, sizeof o);
    int rc = parse(argc, argv, &o);
    if (rc < 0)
        return cli_finish_stdout();
    if (rc)
        return rc;
    struct stat sb;
    if (!o.force && stat(o.output, &sb) == 0)
        return cli_fail(jsmf_error(JSMF_EEXIST, "%s exists (use --force to replace it)", o.output));
    /* From here on, not just in training: a signal during the warm-start fit stops the run at
     * its first step, with a checkpoint, instead of killing it with nothing saved. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    jsmf_source_input in;
    jsmf_model *init = NULL;
    jsmf_fdm_result r;
    memset(&r, 0, sizeof r);
    char *ckpt = NULL;
    if ((rc = jsmf_source_open(o.input, JSMF_SOURCE_NEED_VOCAB, &in)))
        goto out;
    if (!strcmp(o.init, "auto"))
        rc = fit_init(&in, &o, &init);
    else if (strcmp(o.init, "none") && strcmp(o.init, "random"))
        rc = load_init(o.init, &in, &o, &init);
    if (rc)
        goto out;
    size_t len = strlen(o.output);
    while (len > 1 && o.output[len - 1] == '/') /* "MODEL/" checkpoints to "MODEL.ckpt" */
        len--;
    ckpt = malloc(len + 6);
    if (!ckpt) {
        rc = jsmf_error(JSMF_ENOMEM, "out of memory");
        goto out;
    }
    snprintf(ckpt, len + 6, "%.*s.ckpt", (int)len, o.output);
    o.p.checkpoint = o.p.checkpoint_every || o.p.checkpoint_seconds > 0 || o.p.stop_after
                     ? ckpt : NULL;

    int noted = 0;
    char gpu[128];
    if (o.p.device == JSMF_FDM_DEVICE_AUTO && jsmf_fdm_cuda_probe(gpu, sizeof gpu)) {
        cli_info("note: %s; using the CPU", jsmf_errmsg()); /* now, not after the run */
        noted = 1;
    }
    progress_ctx pc = {-1};
    o.p.progress = on_progress;
    o.p.progress_arg = &pc;
    jsmf_fdm_params_resolve(&o.p); /* summary.json records what the start chose */
    rc = jsmf_fdm_train(&in.src, &o.p, &r);
    cli_progress_done();
    if (rc)
        goto out;
    if (r.note[0] && !noted)
        cli_info("note: %s", r.note);
    if ((rc = save_model(&o, &in, &r, t0)))
        goto out;
    if (o.p.checkpoint)
        unlink(ckpt); /* the model is complete: the checkpoint has done its job */
    cli_info("%u topics on %s: %llu steps%s%s, held-out pair loss %.5f, %.0f pairs/s, %.1f s; "
             "wrote %s", r.k, r.device, (unsigned long long)r.steps,
             r.resumed_from ? " (resumed)" : "",
             r.time_limited ? " (--time reached)" : r.stopped_early ? " (converged)" : "",
             r.n_curve ? r.curve_heldout[r.n_curve - 1] : NAN, r.pairs_per_second,
             cli_now() - t0, o.output);
out:
    if (rc == JSMF_EINTR && o.p.checkpoint)
        cli_info("interrupted; the same command resumes from %s", ckpt);
    jsmf_fdm_result_free(&r);
    jsmf_model_free(init);
    jsmf_source_close(&in);
    free(ckpt);
    return rc ? cli_fail(rc) : EXIT_OK;
}
