/* fit_dir.c — a fit as one call, from an input path to a model directory, on one process or on
 * the ranks of an MPI job, which then succeed or fail together: what 'jsmf fit' runs; with a
 * previous model (--previous), the topics renumbered after it and their lineage recorded. */
#include <stdlib.h>
#include <string.h>

#include "jsmf_comm.h"
#include "jsmf_fit.h"
#include "jsmf_store.h"
#include "fit_internal.h"
#include "model/lineage.h"
#include "model/model.h"
#include "mpi/comm.h"

/* Rank 0 alone writes: the model with its summary.json, and the rectified C when asked. */
static int write_dir(const char *input, const char *dir, int flags, const jsmf_fit_opts *o,
                     jsmf_model *m, const jsmf_fit_report *rep, const jsmf_source_input *in,
                     const jsmf_lineage *lin)
{
    int force = (flags & JSMF_FIT_FORCE) != 0;
    int rc = jsmf_fit_summarize(m, o, rep, input, in);
    if (!rc && lin)
        rc = model_lineage_summarize(m, lin);
    if (!rc)
        rc = jsmf_model_save(dir, m, force);
    if (!rc && (flags & JSMF_FIT_SAVE_RECTIFIED))
        rc = jsmf_fit_save_rectified(dir, &in->src, o);
    return rc;
}

/* The previous model, read before any work: it exists, is a model and shares words with the
 * input's vocabulary (when the input names its words). */
static int open_previous(const char *path, const jsmf_source_input *in, jsmf_model **prev)
{
    int rc = jsmf_model_load(path, prev);
    if (rc)
        return rc;
    if (!(*prev)->vocab)
        return jsmf_error(JSMF_EFORMAT, "%s: the previous model has no vocabulary", path);
    if (!in->vocab)
        return JSMF_OK;
    jsmf_wordmap *map;
    if ((rc = jsmf_wordmap_new(in->vocab, &map)))
        return rc;
    uint32_t common = 0;
    for (uint32_t w = 0; w < (*prev)->vocab->n && !common; w++) {
        const char *word = (*prev)->vocab->words[w];
        common = jsmf_wordmap_find(map, word, strlen(word)) != UINT32_MAX;
    }
    jsmf_wordmap_free(map);
    if (!common)
        return jsmf_error(JSMF_EMISMATCH, "%s: the previous model has no word in common with "
                          "the vocabulary of the input (a model of another corpus?)", path);
    return JSMF_OK;
}

/* The checks before the fit. Each step ends in an agreement, so that every rank stops at the
 * same point with one message (the failing rank's), before any work and with `dir` as it was. */
static int open_input(const char *input, const char *dir, int flags, jsmf_fit_opts *o,
                      jsmf_comm *c, jsmf_source_input *in, const char *previous,
                      jsmf_model **prev)
{
    memset(in, 0, sizeof *in);
    int rc = JSMF_OK;
    if (jsmf_comm_rank(c) == 0)
        rc = jsmf_model_check_new(dir, (flags & JSMF_FIT_FORCE) != 0);
    if (!rc && (rc = jsmf_source_open(input, 0, in)))
        memset(in, 0, sizeof *in);
    if (!(rc = jsmf_comm_agree(c, rc)))
        rc = jsmf_comm_agree(c, jsmf_fit_input_check(input, in, o));
    if (!rc && previous)
        rc = jsmf_comm_agree(c, open_previous(previous, in, prev));
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
    int rc = open_input(input, dir, flags, &o, c, &in, previous, &prev);
    if (rc) {
        jsmf_model_free(prev);
        jsmf_source_close(&in);
        return rc;
    }
    jsmf_fit_report *r = rep ? rep : malloc(sizeof *r);
    jsmf_model *m = NULL;
    rc = r ? jsmf_fit(&in.src, in.vocab, &o, &m, r)
           : jsmf_error(JSMF_ENOMEM, "fit: out of memory for the report");
    o.comm = NULL; /* what follows is rank 0's alone, but the renumbering */
    if (!rc && prev)
        rc = renumber(prev, previous, m, &lin);
    if (!rc && jsmf_comm_rank(c) == 0)
        rc = write_dir(input, dir, flags, &o, m, r, &in, prev ? &lin : NULL);
    rc = jsmf_comm_agree(c, rc);
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
