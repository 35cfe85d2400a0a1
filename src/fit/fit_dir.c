/* fit_dir.c — a fit as one call, from an input path to a model directory, on one process or on
 * the ranks of an MPI job, which then succeed or fail together: what 'jsmf fit' runs. */
#include <stdlib.h>
#include <string.h>

#include "jsmf_comm.h"
#include "jsmf_fit.h"
#include "jsmf_store.h"
#include "fit_internal.h"
#include "model/model.h"
#include "mpi/comm.h"

/* Rank 0 alone writes: the model with its summary.json, and the rectified C when asked. */
static int write_dir(const char *input, const char *dir, int flags, const jsmf_fit_opts *o,
                     jsmf_model *m, const jsmf_fit_report *rep, const jsmf_source_input *in)
{
    int force = (flags & JSMF_FIT_FORCE) != 0;
    int rc = jsmf_fit_summarize(m, o, rep, input, in);
    if (!rc)
        rc = jsmf_model_save(dir, m, force);
    if (!rc && (flags & JSMF_FIT_SAVE_RECTIFIED))
        rc = jsmf_fit_save_rectified(dir, &in->src, o);
    return rc;
}

/* The checks before the fit. Each step ends in an agreement, so that every rank stops at the
 * same point with one message (the failing rank's), before any work and with `dir` as it was. */
static int open_input(const char *input, const char *dir, int flags, jsmf_fit_opts *o,
                      jsmf_comm *c, jsmf_source_input *in)
{
    memset(in, 0, sizeof *in);
    int rc = JSMF_OK;
    if (jsmf_comm_rank(c) == 0)
        rc = jsmf_model_check_new(dir, (flags & JSMF_FIT_FORCE) != 0);
    if (!rc && (rc = jsmf_source_open(input, 0, in)))
        memset(in, 0, sizeof *in);
    if (!(rc = jsmf_comm_agree(c, rc)))
        rc = jsmf_comm_agree(c, jsmf_fit_input_check(input, in, o));
    return rc;
}

int jsmf_fit_to_dir(const char *input, const char *dir, int flags, const jsmf_fit_opts *opts,
                    jsmf_comm *c, jsmf_model **out, jsmf_fit_report *rep)
{
    if (out)
        *out = NULL;
    if (!c)
        c = jsmf_comm_self();
    jsmf_fit_opts o = *opts;
    o.comm = jsmf_comm_size(c) > 1 ? c : NULL;
    jsmf_source_input in;
    int rc = open_input(input, dir, flags, &o, c, &in);
    if (rc) {
        jsmf_source_close(&in);
        return rc;
    }
    jsmf_fit_report *r = rep ? rep : malloc(sizeof *r);
    jsmf_model *m = NULL;
    rc = r ? jsmf_fit(&in.src, in.vocab, &o, &m, r)
           : jsmf_error(JSMF_ENOMEM, "fit: out of memory for the report");
    o.comm = NULL; /* what follows is rank 0's alone */
    if (!rc && jsmf_comm_rank(c) == 0)
        rc = write_dir(input, dir, flags, &o, m, r, &in);
    rc = jsmf_comm_agree(c, rc);
    if (r != rep)
        free(r);
    jsmf_source_close(&in);
    if (rc || !out)
        jsmf_model_free(m);
    else
        *out = m;
    return rc;
}
