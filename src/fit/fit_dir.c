/* fit_dir.c — a fit as one call, from an input path to a model directory, on one process or on
 * the ranks of an MPI job, which then succeed or fail together: what 'jsmf fit' runs; with a
 * previous model (--previous), the topics renumbered after it and their lineage recorded. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsmf_comm.h"
#include "jsmf_fit.h"
#include "jsmf_store.h"
#include "fit_internal.h"
#include "model/lineage.h"
#include "model/model.h"
#include "mpi/comm.h"

/* Rank 0 alone writes: the model with its summary.json and the factors the next fit starts
 * from, and the rectified C when asked. */
static int write_dir(const char *input, const char *dir, int flags, const jsmf_fit_opts *o,
                     jsmf_model *m, const jsmf_fit_report *rep, const jsmf_source_input *in,
                     const jsmf_lineage *lin, const fit_start *st)
{
    int force = (flags & JSMF_FIT_FORCE) != 0;
    int rc = jsmf_fit_summarize(m, o, rep, input, in);
    if (!rc && lin)
        rc = model_lineage_summarize(m, lin);
    /* the factor the plan did not keep: from the checkpoint, or none (c_factor.npy is only
     * the experimental --warm's start) */
    double *c = st->c_out;
    if (!rc && !c && st->c_out_from_ckpt && !(c = fit_ckpt_factor(st, m->n, m->k)))
        jsmf_error_clear();
    model_array f = {FIT_C_FACTOR, c, m->n, m->k};
    if (!rc)
        rc = model_save_with(dir, m, force, &f, c ? 1 : 0);
    if (c != st->c_out)
        free(c);
    if (!rc && (flags & JSMF_FIT_SAVE_RECTIFIED))
        rc = fit_save_rectified(dir, &in->src, o);
    return rc;
}

/* The previous model, read before any work: it exists, is a model and at least half of its
 * words are in the input's vocabulary (when the input names its words: a vocabulary grows, so
 * fewer means a model of another corpus); with `warm`, its factor, mapped onto the input's
 * words, is the warm start. */
static int open_previous(const char *path, const jsmf_source_input *in, int warm,
                         const jsmf_fit_opts *o, jsmf_model **prev, fit_start *st)
{
    int rc = jsmf_model_load(path, prev);
    if (rc)
        return rc;
    if (!(*prev)->vocab)
        return jsmf_error(JSMF_EFORMAT, "%s: the previous model has no vocabulary", path);
    if (!in->vocab)
        return JSMF_OK;
    uint32_t common = 0, np = (*prev)->vocab->n, *to = malloc(sizeof *to * (np ? np : 1));
    rc = to ? model_map_to_vocab(*prev, in->vocab, to, NULL, &common)
            : jsmf_error(JSMF_ENOMEM, "%s: out of memory", path);
    free(to);
    if (rc)
        return rc;
    if (2ull * common < np)
        return jsmf_error(JSMF_EMISMATCH, "%s: only %u of the previous model's %u words are in "
                          "the vocabulary of the input (a model of another corpus?)", path,
                          common, np);
    if (!warm || o->rectify != JSMF_RECTIFY_COMPRESSED)
        return JSMF_OK;
    return fit_start_previous(st, path, *prev, in->vocab, in->src.n);
}

int jsmf_fit_previous_check(const char *store, const char *model)
{
    jsmf_store *s = NULL;
    jsmf_vocab *sv = NULL;
    jsmf_model *m = NULL;
    int rc = jsmf_store_open(store, JSMF_STORE_RDONLY, &s);
    if (!rc)
        rc = jsmf_store_vocab_get(s, &sv);
    jsmf_store_close(s);
    if (!rc)
        rc = jsmf_model_load(model, &m);
    if (!rc && !m->vocab)
        rc = jsmf_error(JSMF_EFORMAT, "%s: the model has no vocabulary", model);
    if (!rc && m->vocab->n > sv->n)
        rc = jsmf_error(JSMF_EMISMATCH, "%s is not a model of %s: it has %u words, the store %u",
                        model, store, m->vocab->n, sv->n);
    for (uint32_t i = 0; !rc && i < m->vocab->n; i++)
        if (strcmp(m->vocab->words[i], sv->words[i]))
            rc = jsmf_error(JSMF_EMISMATCH, "%s is not a model of %s: its word %u is '%s', the "
                            "store's '%s'", model, store, i, m->vocab->words[i], sv->words[i]);
    jsmf_model_free(m);
    jsmf_vocab_free(sv);
    return rc;
}

/* The checkpoint of a cold fit: DIR.ckpt, keyed by the store's content and the options the
 * eigendecomposition depends on; one process and a store only. */
static void plan_checkpoint(const char *dir, const jsmf_source_input *in, const jsmf_fit_opts *o,
                            jsmf_comm *c, fit_start *st, char *path, size_t cap)
{
    if (st->c_prev || jsmf_comm_size(c) > 1 || in->kind != JSMF_SOURCE_STORE ||
        o->rectify != JSMF_RECTIFY_COMPRESSED)
        return;
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    if ((size_t)snprintf(path, cap, "%.*s.ckpt", (int)len, dir) >= cap)
        return;
    snprintf(st->key, sizeof st->key,
             "jsmf-fit-eig 1 store %016" PRIx64 " n %u k %u seed %" PRIu64 " sketch_passes %u "
             "sketch_tol %.17g mem %" PRIu64, in->stats.fingerprint, in->src.n, o->k, o->seed,
             o->sketch_passes, o->sketch_tol, o->mem_bytes);
    st->ckpt = path;
}

/* A checkpoint is removed once the fit ends, written or failed. */
static void remove_checkpoint(const char *path)
{
    static const char *const names[] = {"U.npy", "lam.npy", "key.txt", "key.txt.tmp",
                                        "cycle.bin", "cycle.bin.tmp"};
    char p[4200];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", path, names[i]);
        unlink(p);
    }
    rmdir(path);
}

/* The checks before the fit. Each step ends in an agreement, so that every rank stops at the
 * same point with one message (the failing rank's), before any work and with `dir` as it was. */
static int open_input(const char *input, const char *dir, int flags, jsmf_fit_opts *o,
                      jsmf_comm *c, jsmf_source_input *in, const char *previous,
                      jsmf_model **prev, fit_start *st)
{
    memset(in, 0, sizeof *in);
    int rc = JSMF_OK;
    if (jsmf_comm_rank(c) == 0)
        rc = model_check_new(dir, (flags & JSMF_FIT_FORCE) != 0);
    if (!rc && (rc = jsmf_source_open(input, 0, in)))
        memset(in, 0, sizeof *in);
    if (!(rc = comm_agree(c, rc)))
        rc = comm_agree(c, fit_input_check(input, in, o));
    if (!rc && previous)
        rc = comm_agree(c, open_previous(previous, in, (flags & JSMF_FIT_WARM) != 0, o,
                                              prev, st));
    return rc;
}

/* The fitted model renumbered after the previous one (every rank alike: the same model). */
static int renumber(const jsmf_model *prev, const char *previous, jsmf_model *m,
                    jsmf_lineage *lin)
{
    int rc = jsmf_model_lineage_get(prev, m, previous, JSMF_LINEAGE_L1, lin);
    if (!rc && (rc = jsmf_model_renumber(m, lin)))
        jsmf_lineage_free(lin);
    return rc;
}

int jsmf_fit_to_dir(const char *input, const char *dir, int flags, const jsmf_fit_opts *opts,
                    jsmf_comm *c, jsmf_model **out, jsmf_fit_report *rep)
{
    return jsmf_fit_to_dir_after(input, dir, NULL, flags, opts, c, out, rep);
}

int jsmf_fit_to_dir_after(const char *input, const char *dir, const char *previous, int flags,
                          const jsmf_fit_opts *opts, jsmf_comm *c, jsmf_model **out,
                          jsmf_fit_report *rep)
{
    if (out)
        *out = NULL;
    if (!c)
        c = jsmf_comm_self();
    jsmf_fit_opts o = *opts;
    o.comm = jsmf_comm_size(c) > 1 ? c : NULL;
    jsmf_source_input in;
    jsmf_model *prev = NULL;
    jsmf_lineage lin = {0};
    fit_start st = {0};
    char ckpt[4096];
    int rc = open_input(input, dir, flags, &o, c, &in, previous, &prev, &st);
    if (rc) {
        fit_start_clear(&st);
        jsmf_model_free(prev);
        jsmf_source_close(&in);
        return rc;
    }
    plan_checkpoint(dir, &in, &o, c, &st, ckpt, sizeof ckpt);
    st.no_c_metrics = (flags & JSMF_FIT_NO_C_METRICS) != 0;
    jsmf_fit_report *r = rep ? rep : malloc(sizeof *r);
    jsmf_model *m = NULL;
    rc = r ? fit_run(&in.src, in.vocab, &o, &st, &m, r)
           : jsmf_error(JSMF_ENOMEM, "fit: out of memory for the report");
    o.comm = NULL; /* what follows is rank 0's alone, but the renumbering */
    if (!rc && prev)
        rc = renumber(prev, previous, m, &lin);
    if (!rc && jsmf_comm_rank(c) == 0)
        rc = write_dir(input, dir, flags, &o, m, r, &in, prev ? &lin : NULL, &st);
    rc = comm_agree(c, rc);
    if (st.ckpt) /* only a killed fit leaves it: an error is no reason to resume */
        remove_checkpoint(st.ckpt);
    fit_start_clear(&st);
    jsmf_lineage_free(&lin);
    jsmf_model_free(prev);
    if (r != rep)
        free(r);
    jsmf_source_close(&in);
    if (rc || !out)
        jsmf_model_free(m);
    else
        *out = m;
    return rc;
}
