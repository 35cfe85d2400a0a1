/* fdm_model.c — an FDM run as a MODEL directory: its start (the spectral fit of the same C, or a
 * saved model), its summary.json, its checkpoint's name; the whole run as one call. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/tell.h"
#include "fdm_internal.h"
#include "jsmf_fit.h"
#include "jsmf_model.h"
#include "jsmf_store.h"
#include "core/error.h"
#include "core/out.h"
#include "core/vocab.h"
#include "model/json.h"
#include "model/lineage.h"
#include "model/model.h"
#include "model/summary.h"
#include "store/source_open.h"

int fdm_init_spectral(const jsmf_source_input *in, jsmf_fdm_opts *p, jsmf_model **out)
{
    *out = NULL;
    jsmf_fit_opts fo;
    jsmf_fit_opts_init(&fo, p->k);
    fo.docs = in->kind == JSMF_SOURCE_STORE ? in->stats.docs : 0;
    fo.threads = p->threads;
    if (p->mem_budget) /* the fit plans within the run's budget too */
        fo.mem_bytes = p->mem_budget;
    int rc = p->k >= 2 ? jsmf_fit(&in->src, in->vocab, &fo, out, NULL)
                       : jsmf_error(JSMF_EINVAL, "a spectral fit needs at least 2 topics");
    if (rc == JSMF_ENOMEM || rc == JSMF_EIO || rc == JSMF_ESTORE)
        return rc;
    if (rc) {
        *out = NULL;
        return JSMF_OK; /* the reason stays in jsmf_errmsg() for the caller's note */
    }
    p->init_B = (*out)->B;
    p->init_A = (*out)->A;
    return JSMF_OK;
}

/* The model's B over the input's words, matched by string (a vocabulary grows: words admitted
 * since the model was saved, and words of the model the input lacks): a word the model lacks
 * gets a zero row, which the start's smoothing turns into init_smooth / N in every topic (the
 * floor of any word a topic does not use); a word the input lacks is dropped and each column
 * renormalised to sum 1 over the words kept. *fresh gets how many words are new to it. */
static int map_model_words(const char *dir, const jsmf_source_input *in, jsmf_model *m,
                           uint32_t *fresh)
{
    uint32_t n = in->src.n, k = m->k, common = 0, *to = malloc(sizeof *to * (m->n ? m->n : 1));
    double *B = calloc((size_t)n * k, sizeof(double)), *col = calloc(k, sizeof(double));
    unsigned char *hit = calloc(n, 1);
    int rc = !B || !col || !hit || !to ? jsmf_error(JSMF_ENOMEM, "--init %s: out of memory", dir)
                                       : model_map_to_vocab(m, in->vocab, to, hit, &common);
    for (uint32_t j = 0; !rc && j < m->n; j++)
        if (to[j] < n)
            memcpy(B + (size_t)to[j] * k, m->B + (size_t)j * k, sizeof(double) * k);
    /* summed in the input's order: the same start whatever the model's order of words */
    for (size_t e = 0; !rc && e < (size_t)n * k; e++)
        col[e % k] += B[e];
    if (!rc && 2ull * common < m->n)
        rc = jsmf_error(JSMF_EMISMATCH, "--init %s: only %u of the model's %u words are in the "
                        "vocabulary of the input (a model of another corpus?)", dir, common, m->n);
    for (uint32_t t = 0; !rc && t < k; t++)
        if (!(col[t] > 0))
            rc = jsmf_error(JSMF_EMISMATCH, "--init %s: topic %u has no mass on the input's "
                            "words", dir, t);
    for (size_t e = 0; !rc && e < (size_t)n * k; e++)
        B[e] /= col[e % k];
    if (!rc) {
        *fresh = 0;
        for (uint32_t i = 0; i < n; i++)
            *fresh += !hit[i];
        free(m->B);
        m->B = B, B = NULL, m->n = n;
    }
    free(to), free(B), free(col), free(hit);
    return rc;
}

int fdm_init_model(const char *dir, const jsmf_source_input *in, jsmf_fdm_opts *p,
                        jsmf_model **out, uint32_t *new_words)
{
    int rc = jsmf_model_load(dir, out);
    if (rc)
        return error_context(rc, "--init %s", dir);
    jsmf_model *m = *out;
    uint32_t fresh = 0;
    int same = m->n == in->src.n &&
               (!m->vocab || !in->vocab ||
                !vocab_compare(m->vocab, "the model", in->vocab, "the input"));
    if (!same && m->vocab && in->vocab) {
        jsmf_error_clear(); /* another vocabulary: matched by string */
        if ((rc = map_model_words(dir, in, m, &fresh)))
            return rc;
    } else if (!same) {
        return jsmf_error(JSMF_EMISMATCH, "--init %s: the model has %u words, the input %u%s",
                          dir, m->n, in->src.n, m->vocab ? "" : " (and no vocab.txt to match)");
    }
    if (p->k && p->k != m->k)
        return jsmf_error(JSMF_EMISMATCH, "--init %s has K = %u, but -k %u was given", dir, m->k,
                          p->k);
    p->k = m->k;
    p->init_B = m->B;
    p->init_A = m->A;
    if (new_words)
        *new_words = fresh;
    return 0;
}

/* ---- summary.json ---- */

static void json_parameters(jsmf_json *j, const jsmf_fdm_opts *p, const jsmf_fdm_run *run)
{
    json_begin_object(j, "parameters");
    json_string(j, "device", run->device);
    json_string(j, "init", run->init);
    json_string(j, "init_from", p->init_B ? "model"
                                    : p->init_kind == JSMF_FDM_INIT_WORDS ? "words" : "random");
    if (p->init_B)
        json_uint(j, "init_new_words", run->init_new_words);
    if (p->init_B || p->init_kind == JSMF_FDM_INIT_WORDS)
        json_number(j, "init_smooth", p->init_smooth);
    else
        json_number(j, "init_scale", p->init_scale);
    json_uint(j, "seed", p->seed);
    json_uint(j, "steps", p->steps);
    json_uint(j, "batch", p->batch);
    json_number(j, "lr", p->lr);
    json_number(j, "beta1", p->beta1);
    json_number(j, "beta2", p->beta2);
    json_number(j, "eps", p->eps);
    json_int(j, "threads", p->threads);
    json_string(j, "precision", p->precision == JSMF_FDM_TF32 ? "tf32" : "fp32");
    json_uint(j, "eval_every", p->eval_every);
    json_uint(j, "heldout", p->heldout);
    json_uint(j, "patience", p->patience);
    json_uint(j, "lr_halvings", p->lr_halvings);
    if (!p->init_B)
        json_uint(j, "starts", p->starts);
    json_number(j, "time", p->time_limit);
    json_number(j, "tol", p->tol);
    json_uint(j, "checkpoint_every", p->checkpoint_every);
    json_number(j, "checkpoint_seconds", p->checkpoint_seconds);
    json_uint(j, "mem", p->mem_budget);
    json_end_object(j);
}

/* The memory plan (formats/fdm.md, "Memory"). */
static void json_memory(jsmf_json *j, const jsmf_fdm_result *r)
{
    if (!r->mem_budget)
        return;
    json_begin_object(j, "memory");
    json_uint(j, "plan_bytes", r->mem_plan);
    json_uint(j, "budget_bytes", r->mem_budget);
    json_uint(j, "allowance_bytes", JSMF_MEM_ALLOWANCE);
    json_uint(j, "sampler_bytes", r->sampler.bytes);
    json_bool(j, "sampler_thinned", r->sampler.thinned);
    json_end_object(j);
}

static void json_run(jsmf_json *j, const jsmf_fdm_result *r)
{
    json_begin_object(j, "fdm");
    json_string(j, "device", r->device);
    if (r->note[0])
        json_string(j, "note", r->note);
    json_uint(j, "steps_done", r->steps);
    json_uint(j, "resumed_from", r->resumed_from);
    json_bool(j, "stopped_early", r->stopped_early);
    json_number(j, "pairs_per_second", r->pairs_per_second);
    json_begin_object(j, "sampler");
    json_string(j, "strategy", r->sampler.documents
                     ? "documents (a document, then two of its distinct tokens)"
                     : "two-stage alias (row marginals, then within row)");
    json_string(j, "where", r->host_sampling ? "host" : "device");
    json_uint(j, "documents", r->sampler.documents);
    json_uint(j, "nnz", r->sampler.nnz);
    json_uint(j, "kept", r->sampler.kept);
    json_bool(j, "thinned", r->sampler.thinned);
    json_number(j, "dropped_mass", r->sampler.dropped_mass);
    json_uint(j, "bytes", r->sampler.bytes);
    json_number(j, "build_seconds", r->sampler.build_seconds);
    json_end_object(j);
    json_begin_object(j, "curve");
    json_uints(j, "step", r->curve_step, r->n_curve);
    json_numbers(j, "train_loss", r->curve_train, r->n_curve);
    json_numbers(j, "heldout_loss", r->curve_heldout, r->n_curve);
    json_end_object(j);
    json_end_object(j);
}

static char *summary_text(const jsmf_model *m, const jsmf_fdm_opts *p,
                          const jsmf_fdm_result *r, const jsmf_fdm_run *run,
                          const jsmf_source_input *in)
{
    jsmf_summary_buf b;
    if (model_summary_begin(&b))
        return NULL;
    jsmf_json *j = &b.j;
    model_summary_header(j, m, "fdm");
    json_string(j, "jsmf_version", jsmf_version());
    char when[32];
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    json_string(j, "created", when);
    json_int(j, "level", 0);
    json_parameters(j, p, run);

    json_begin_object(j, "metrics");
    json_number(j, "loss", r->n_curve ? r->curve_train[r->n_curve - 1] : NAN);
    json_number(j, "heldout_pair_loss", r->n_curve ? r->curve_heldout[r->n_curve - 1] : NAN);
    json_number(j, "best_heldout_pair_loss", r->best_heldout);
    json_end_object(j);
    json_run(j, r);
    json_memory(j, r);

    json_begin_object(j, "timings");
    json_number(j, "sampler", r->sampler.build_seconds);
    json_number(j, "train", r->seconds_train);
    json_number(j, "total", run->seconds);
    json_end_object(j);
    source_summary(j, run->input, in);
    return model_summary_end(&b);
}

int fdm_save(const char *dir, int force, const jsmf_fdm_opts *p, const jsmf_fdm_result *r,
                  const jsmf_fdm_run *run, jsmf_source_input *in)
{
    jsmf_model *m = NULL;
    int rc = jsmf_model_new(r->n, r->k, &m);
    if (rc)
        return rc;
    memcpy(m->B, r->B, (size_t)r->n * r->k * sizeof(double));
    memcpy(m->A, r->A, (size_t)r->k * r->k * sizeof(double));
    m->vocab = in->vocab;
    m->summary_json = summary_text(m, p, r, run, in);
    if (!m->summary_json)
        rc = jsmf_error(JSMF_ENOMEM, "out of memory for summary.json");
    else
        rc = jsmf_model_save(dir, m, force);
    in->vocab = NULL; /* the model owns it now */
    jsmf_model_free(m);
    if (!rc && p->checkpoint)
        unlink(p->checkpoint); /* the model is complete: the checkpoint has done its job */
    return rc;
}

void jsmf_fdm_result_write(FILE *f, const char *prefix, const jsmf_fdm_result *r, double seconds,
                           const char *dir)
{
    report_line(f, prefix, "%u topics on %s: %llu steps%s%s", r->k, r->device,
                     (unsigned long long)r->steps, r->resumed_from ? " (resumed)" : "",
                     r->time_limited ? " (--time reached)"
                                     : r->stopped_early ? " (converged)" : "");
    report_line(f, prefix, "held-out pair loss %.5f, %.0f pairs/s, %.1f s",
                     r->n_curve ? r->curve_heldout[r->n_curve - 1] : NAN, r->pairs_per_second,
                     seconds);
    report_line(f, prefix, "wrote %s", dir);
}

char *fdm_checkpoint_path(const char *dir)
{
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/') /* "MODEL/" checkpoints to "MODEL.ckpt" */
        len--;
    char *path = malloc(len + 6);
    if (path)
        snprintf(path, len + 6, "%.*s.ckpt", (int)len, dir);
    return path;
}

/* ---- the run as one call ---- */

/* The start d->init asks for: p->init_B and p->init_A into *m, or a cold start (*m NULL). */
static int choose_start(const jsmf_fdm_dir_opts *d, const jsmf_source_input *in,
                        jsmf_fdm_opts *p, jsmf_model **m, uint32_t *new_words)
{
    const char *init = d->init ? d->init : "auto";
    if (!strcmp(init, "random"))
        p->init_kind = JSMF_FDM_INIT_GAUSSIAN;
    if (!strcmp(init, "none") || !strcmp(init, "random"))
        return JSMF_OK;
    if (strcmp(init, "auto")) {
        int rc = fdm_init_model(init, in, p, m, new_words);
        if (!rc && *new_words)
            tell_line(d->info, d->info_arg, "warm start: %s; %u words of the input are new to "
                      "it and start at the smoothing floor", init, *new_words);
        return rc;
    }
    double t = clock_seconds();
    int rc = fdm_init_spectral(in, p, m);
    if (!rc && !*m) {
        tell_line(d->info, d->info_arg, "note: no warm start (%s); starting cold (--init none)",
                  jsmf_errmsg());
        jsmf_error_clear(); /* handled: said in the note */
    } else if (!rc)
        tell_line(d->info, d->info_arg, "warm start: spectral fit of %u topics (%.1f s)", p->k,
                  clock_seconds() - t);
    return rc;
}

/* The run's memory planned before the start is made (a spectral start takes minutes at scale):
 * the refusal first, else the plan said. The training plans again with the start it got. */
static int plan_first(const jsmf_fdm_dir_opts *d, const jsmf_source_input *in,
                      const jsmf_fdm_opts *p)
{
    const char *init = d->init ? d->init : "auto";
    int with_start = strcmp(init, "none") && strcmp(init, "random");
    jsmf_fdm_opts q = *p;
    if (!q.k && with_start) /* -k from the --init model: planned in training */
        return JSMF_OK;
    fdm_plan pl;
    int rc = fdm_plan_make(&in->src, &q, with_start ? FDM_START_RELEASED : FDM_START_NONE, &pl);
    if (!rc && q.mem_budget)
        tell_line(d->info, d->info_arg, "memory: plan %.0f MiB of --mem %.0fM (+ %.0f MiB "
                  "allowance)%s", pl.peak / 1048576.0, q.mem_budget / 1048576.0,
                  JSMF_MEM_ALLOWANCE / 1048576.0,
                  pl.thinned ? ", the pair sampler's rows thinned to fit" : "");
    return rc;
}

/* The start's B and A freed once training has made its iterate from them (an N x K array
 * fewer through the run: formats/fdm.md, "Memory"); p->init_B stays set, as a flag. */
static void release_start(void *arg)
{
    jsmf_model *m = arg;
    if (!m)
        return;
    free(m->B), free(m->A);
    m->B = m->A = NULL;
}

/* Training, with what the device choice means said before it starts, not after the run. */
static int train(const jsmf_fdm_dir_opts *d, const jsmf_source_input *in, jsmf_fdm_opts *p,
                 jsmf_model *start, jsmf_fdm_result *r)
{
    int noted = 0, id;
    char why[256];
    /* the device's errors are the run's to report: here only auto's fallback is said */
    if (!fdm_device_resolve(p->device, &id, why, sizeof why) && why[0]) {
        tell_line(d->info, d->info_arg, "note: %s; using %s", why, fdm_device_get(id)->title);
        jsmf_error_clear(); /* handled: the note says it and the fallback runs */
        noted = 1;
    }
    fdm_opts_resolve(p); /* summary.json records what the start chose */
    int rc = fdm_train(&in->src, p, release_start, start, r);
    if (!rc && r->note[0] && !noted)
        tell_line(d->info, d->info_arg, "note: %s", r->note);
    return rc;
}

int jsmf_fdm_to_dir(const char *input, const char *dir, const jsmf_fdm_dir_opts *d,
                    const jsmf_fdm_opts *params, jsmf_fdm_result *r)
{
    static const jsmf_fdm_dir_opts defaults = {0};
    double t0 = clock_seconds();
    d = d ? d : &defaults;
    memset(r, 0, sizeof *r);
    jsmf_fdm_opts p = *params;
    p.fresh_on_mismatch |= d->force; /* a new run: another run's checkpoint goes too */
    jsmf_source_input in;
    memset(&in, 0, sizeof in);
    jsmf_model *init = NULL;
    char *ckpt = NULL;
    uint32_t new_words = 0;
    int rc = model_check_new(dir, d->force);
    if (!rc)
        rc = jsmf_source_open(input, JSMF_SOURCE_NEED_VOCAB, &in);
    if (!rc)
        rc = plan_first(d, &in, &p);
    if (!rc)
        rc = choose_start(d, &in, &p, &init, &new_words);
    if (!rc && !(ckpt = fdm_checkpoint_path(dir)))
        rc = jsmf_error(JSMF_ENOMEM, "out of memory");
    /* a checkpoint is kept only when one is asked for: by steps, by time, or a stop */
    p.checkpoint = p.checkpoint_every || p.checkpoint_seconds > 0 || fdm_test_stop_after() ? ckpt : NULL;
    if (!rc)
        rc = train(d, &in, &p, init, r);
    /* a stop while a cold start compares its random starts comes before any checkpoint */
    if (rc == JSMF_EINTR && p.checkpoint && access(ckpt, F_OK) == 0)
        tell_line(d->info, d->info_arg, "interrupted; the same command resumes from %s", ckpt);
    const char *device = jsmf_fdm_device_name(p.device) ? jsmf_fdm_device_name(p.device) : "auto";
    jsmf_fdm_run run = {input, device, d->init ? d->init : "auto", clock_seconds() - t0,
                        new_words};
    if (!rc)
        rc = fdm_save(dir, d->force, &p, r, &run, &in);
    if (rc)
        jsmf_fdm_result_free(r);
    jsmf_model_free(init);
    jsmf_source_close(&in);
    free(ckpt);
    return rc;
}

void jsmf_fdm_dir_opts_init(jsmf_fdm_dir_opts *d)
{
    *d = (jsmf_fdm_dir_opts){.init = "auto"};
}
