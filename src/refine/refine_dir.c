/* refine_dir.c — the refinement as a stage, from paths to a model directory: a model refined over
 * a corpus or a store's documents ('jsmf refine'), and the spectral fit followed by it ('jsmf fit
 * --refine / --corpus'), whose rules live here alone (jsmf_refine.h). */
#include <string.h>
#include <unistd.h>

#include "jsmf_comm.h"
#include "refine_internal.h"
#include "jsmf_store.h"
#include "core/budget.h"
#include "core/error.h"
#include "model/lineage.h"
#include "model/model.h"
#include "core/threads.h"
#include "mpi/comm.h"

/* The compressed rectification's steps before a refinement: the refinement moves the topics
 * further than the last steps do (validation LL after refining: kjv -6.5909 against -6.5944 at
 * the 24 steps to the tolerance, debdesc -6.7746 against -6.7758, debdesc x10 -7.0115 against
 * -7.0116; kjv's rectification a fifth of the time). */
#define REFINE_RECTIFY_STEPS 10

void jsmf_refine_run_opts_init(jsmf_refine_run_opts *o)
{
    memset(o, 0, sizeof *o);
    jsmf_refine_opts_init(&o->refine);
    jsmf_read_opts_init(&o->read);
    o->min_doc_len = 5;
}

/* Whether `input` is a store that holds its documents (a path that is no store holds none);
 * *st gets its stats when it does. */
static int holds_documents(const char *input, jsmf_store_stats *st)
{
    jsmf_store *s = NULL;
    int docs = !jsmf_store_open(input, JSMF_STORE_RDONLY, &s) && !jsmf_store_stats_get(s, st) &&
               (st->hold & JSMF_HOLD_DOCS);
    jsmf_store_close(s);
    jsmf_error_clear();
    return docs;
}

/* The refinement's budget and scratch directory where the caller left them: `mem`, and the
 * directory that will hold the model directory `dir` (its file system has the room the model
 * needs; /tmp may be memory). buf holds the name. */
static void refine_place(jsmf_refine_opts *ro, uint64_t mem, const char *dir, char *buf,
                         size_t cap)
{
    if (!ro->mem_bytes)
        ro->mem_bytes = mem;
    if (ro->scratch_dir || !dir)
        return;
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    while (len > 0 && dir[len - 1] != '/')
        len--;
    while (len > 1 && dir[len - 1] == '/')
        len--;
    if (len >= cap)
        return;
    if (!len)
        snprintf(buf, cap, ".");
    else
        snprintf(buf, cap, "%.*s", (int)len, dir);
    ro->scratch_dir = buf;
}

static uint64_t mib_up(uint64_t bytes)
{
    return (bytes + (1u << 20) - 1) >> 20;
}

/* The refinement of a store's documents must fit --mem (its theta is M x K doubles: 16 GB at
 * 10M documents and K = 200), checked before the fit from the store's stats. Returns
 * JSMF_ENOMEM (with its message) where it does not, else 0. */
static int over_memory(const jsmf_store_stats *st, const jsmf_fit_opts *fit,
                       const jsmf_refine_opts *ro, uint64_t *need)
{
    *need = 0;
    if (!fit->mem_bytes)
        return 0;
    int nt = ro->threads > 0 ? ro->threads : fit->threads > 0 ? fit->threads : call_threads();
    *need = refine_memory(st->docs, st->n_words, fit->k, (uint32_t)nt, ro);
    /* the thetas beyond the budget go to a scratch file (theta.c): the rest must fit */
    uint64_t theta = st->docs * fit->k * sizeof(double);
    uint64_t window = refine_theta_window(theta);
    if (*need <= fit->mem_bytes || *need - theta + window <= fit->mem_bytes)
        return 0;
    *need = *need - theta + window;
    return jsmf_error(JSMF_ENOMEM, "refine: the refinement needs %llu MB besides the thetas of "
                      "%llu documents x %u topics (a scratch file): %d threads' %u x %u counts, "
                      "more than --mem %lluM: give --mem %lluM, fewer topics, or --refine 0 for "
                      "the spectral fit alone", (unsigned long long)mib_up(*need),
                      (unsigned long long)st->docs, fit->k, nt, st->n_words, fit->k,
                      (unsigned long long)(fit->mem_bytes >> 20),
                      (unsigned long long)mib_up(*need));
}

/* What a refinement reads, checked before any work: the corpus files can be read, or the store
 * holds its documents. */
static int check_documents(const char *store, const jsmf_refine_run_opts *o)
{
    if (o->n_corpus) {
        for (uint32_t i = 0; i < o->n_corpus; i++)
            if (strcmp(o->corpus[i], "-") && access(o->corpus[i], R_OK))
                return jsmf_error(JSMF_ENOTFOUND, "%s: cannot read the corpus", o->corpus[i]);
        return JSMF_OK;
    }
    if (!store)
        return jsmf_error(JSMF_EINVAL, "refine: no corpus and no store to refine over");
    jsmf_store *s = NULL;
    jsmf_store_stats st;
    int rc = jsmf_store_open(store, JSMF_STORE_RDONLY, &s);
    if (!rc)
        rc = jsmf_store_stats_get(s, &st);
    jsmf_store_close(s);
    if (!rc && !(st.hold & JSMF_HOLD_DOCS))
        rc = jsmf_error(JSMF_EINVAL, "%s holds no documents to refine over (it holds C's rows): "
                        "give --corpus with the documents it was ingested from", store);
    return rc;
}

/* The refinement over the corpus files, read into memory over the start's vocabulary. */
static int refine_corpus(const jsmf_model *start, const jsmf_refine_run_opts *o,
                         const jsmf_refine_opts *ro, jsmf_model **out, jsmf_refine_result *res)
{
    if (!start->vocab)
        return jsmf_error(JSMF_EINVAL, "refine: the model has no vocabulary");
    jsmf_read_opts read = o->read;
    read.threads = ro->threads;
    jsmf_doc_csr d;
    uint64_t dropped = 0;
    int rc = jsmf_doc_csr_read(o->corpus, o->n_corpus, &read, start->vocab, o->min_doc_len, &d,
                               &dropped);
    if (rc)
        return rc;
    jsmf_doc_source src;
    if (!(rc = jsmf_doc_csr_source(&d, 0, &src))) {
        rc = jsmf_refine(start, &src, ro, out, res);
        jsmf_doc_csr_source_free(&src);
    }
    jsmf_doc_csr_free(&d);
    if (!rc)
        res->docs_dropped = dropped;
    return rc;
}

/* The store's documents carry its word ids: they are the model's rows only when the model's
 * vocabulary is the store's, word for word. */
static int same_words(const jsmf_model *m, const jsmf_source_input *in, const char *store)
{
    if (!m->vocab || !in->vocab)
        return JSMF_OK;
    if (m->vocab->n != in->vocab->n)
        return jsmf_error(JSMF_EMISMATCH, "%s has %u words, the model %u: refine a model of this "
                          "store as it is now, or give --corpus", store, in->vocab->n,
                          m->vocab->n);
    for (uint32_t i = 0; i < m->vocab->n; i++)
        if (strcmp(m->vocab->words[i], in->vocab->words[i]))
            return jsmf_error(JSMF_EMISMATCH, "%s: word %u is '%s', the model's '%s': not a "
                              "model of this store", store, i, in->vocab->words[i],
                              m->vocab->words[i]);
    return JSMF_OK;
}

/* The refinement over the documents the store holds: the ones it was fitted on, with its ids.
 * `open` (may be NULL) is the store opened already. */
static int refine_store(const jsmf_model *start, const char *store,
                        const jsmf_source_input *open, const jsmf_refine_opts *ro,
                        jsmf_model **out, jsmf_refine_result *res)
{
    jsmf_source_input mine;
    int rc = open ? JSMF_OK : jsmf_source_open(store, 0, &mine);
    if (rc)
        return rc;
    const jsmf_source_input *in = open ? open : &mine;
    if (!in->src.docs)
        rc = jsmf_error(JSMF_EINVAL, "%s holds no documents to refine over: give --corpus with "
                        "the documents it was ingested from", store);
    else if (!(rc = same_words(start, in, store)))
        rc = jsmf_refine(start, in->src.docs, ro, out, res);
    if (!open)
        jsmf_source_close(&mine);
    if (!rc)
        res->over_store = 1;
    return rc;
}

/* What a fit that is refined asks of the refined model: its topics renumbered after the previous
 * model (may be NULL) with their lineage, and the levels `fit` asks for from its A; and what a
 * night from yesterday's model has at hand already (NULL: opened or loaded here). */
typedef struct {
    const jsmf_fit_opts *fit;
    const char *previous;
    uint32_t *levels; /* out (may be NULL): the levels there are, the top's included */
    const jsmf_model *prev;       /* the previous model, loaded */
    const jsmf_source_input *in;  /* the store, open */
} refine_then;

/* The refined model's topics renumbered after the previous model's (`prev`, or loaded from
 * `previous`), as the fit's were (the refinement moved them; the model published is this one)
 * and their lineage recorded. */
static int renumber_refined(jsmf_model *m, const char *previous, const jsmf_model *prev)
{
    jsmf_model *mine = NULL;
    jsmf_lineage lin = {0};
    int rc = prev ? JSMF_OK : jsmf_model_load(previous, &mine);
    if (!prev)
        prev = mine;
    if (!rc)
        rc = jsmf_model_lineage_get(prev, m, previous, JSMF_LINEAGE_L1, &lin);
    if (!rc)
        rc = jsmf_model_renumber(m, &lin);
    if (!rc)
        rc = model_lineage_summarize(m, &lin);
    jsmf_lineage_free(&lin);
    jsmf_model_free(mine);
    return rc;
}

/* `start` refined (over o->corpus, or the store's documents), given what `then` (may be NULL)
 * asks, and written to `dir`. */
static int refine_start(const jsmf_model *start, const char *store, const char *dir, int force,
                        const jsmf_refine_run_opts *o, const jsmf_refine_opts *ro,
                        const refine_then *then, jsmf_model **out, jsmf_refine_result *res)
{
    jsmf_refine_result r = {0};
    jsmf_model *m = NULL;
    int rc = o->n_corpus ? refine_corpus(start, o, ro, &m, &r)
                         : refine_store(start, store, then ? then->in : NULL, ro, &m, &r);
    if (!rc && then && then->previous)
        rc = renumber_refined(m, then->previous, then->prev);
    if (!rc && then && then->fit->levels[0])
        rc = jsmf_fit_levels(m, then->fit, then->levels);
    if (!rc)
        rc = jsmf_model_save(dir, m, force);
    if (!rc && res)
        *res = r;
    else
        jsmf_refine_result_free(&r);
    if (!rc && out)
        *out = m;
    else
        jsmf_model_free(m);
    return rc;
}

int jsmf_refine_to_dir(const char *model, const char *store, const char *dir, int force,
                       const jsmf_refine_run_opts *opts, jsmf_model **out,
                       jsmf_refine_result *res)
{
    if (out)
        *out = NULL;
    jsmf_refine_run_opts o;
    if (opts)
        o = *opts;
    else
        jsmf_refine_run_opts_init(&o);
    char scratch[4096];
    refine_place(&o.refine, mem_default_fit(), dir, scratch, sizeof scratch);
    jsmf_model *start = NULL;
    int rc = refine_opts_check(&o.refine);
    if (!rc)
        rc = check_documents(store, &o);
    if (!rc)
        rc = model_check_new(dir, force);
    if (!rc)
        rc = jsmf_model_load(model, &start);
    if (!rc)
        rc = refine_start(start, store, dir, force, &o, &o.refine, NULL, out, res);
    jsmf_model_free(start);
    return rc;
}

/* A night started from yesterday's model refines at least REFINE_WARM_MIN passes, then until
 * the log-likelihood per token rises by less than REFINE_WARM_TOL over each of two passes, at
 * most REFINE_WARM_PASSES (the budget's fewer where it gives fewer): a night like the last ends
 * at the least, one that brings a topic of new words takes the passes it needs to form it
 * (tools/bench/lineage-results.md, "Holding topics"). */
#define REFINE_WARM_MIN 10
#define REFINE_WARM_PASSES 40
#define REFINE_WARM_TOL 3e-5

/* Tonight from yesterday's model: its topics on the store's words, refined over the store's
 * documents and held near by the prior, renumbered after it (lineage), levels from the refined
 * A. REFINE_WARM_COLD where it cannot start there (another K, or words the store lacks). */
static int refine_from_previous(const char *input, const char *dir, const char *previous,
                                int flags, const jsmf_fit_opts *fo, const jsmf_refine_run_opts *o,
                                jsmf_model **out, jsmf_fit_report *rep, jsmf_refine_result *res)
{
    jsmf_source_input in;
    int rc = jsmf_source_open(input, 0, &in);
    if (rc)
        return rc;
    refine_warm w;
    double weight = o->prior_weight == 0 ? JSMF_REFINE_PRIOR_WEIGHT
                                         : o->prior_weight > 0 ? o->prior_weight : 0;
    uint64_t nnz = in.src.docs ? in.src.docs->nnz : 0;
    if ((rc = refine_warm_start(previous, input, &in, fo->k, weight, &w))) {
        jsmf_source_close(&in);
        return rc;
    }
    jsmf_refine_opts ro = o->refine;
    ro.prior = w.prior, ro.prior_counts = w.counts;
    if (ro.iters == JSMF_REFINE_ITERS_AUTO) {
        uint32_t budget = jsmf_refine_auto_iters(nnz, fo->k);
        ro.iters = budget < REFINE_WARM_PASSES ? budget : REFINE_WARM_PASSES;
        if (ro.tol == 0)
            ro.tol = REFINE_WARM_TOL, ro.min_iters = REFINE_WARM_MIN;
    }
    if (!(rc = model_check_new(dir, (flags & JSMF_FIT_FORCE) != 0))) {
        refine_then then = {fo, previous, rep ? &rep->levels : NULL, w.prev, &in};
        rc = refine_start(w.start, input, dir, 1, o, &ro, &then, out, res);
    }
    if (!rc && res)
        res->warm = 1, res->admitted = w.admitted;
    refine_warm_free(&w);
    jsmf_source_close(&in);
    return rc;
}

int jsmf_fit_refine_to_dir(const char *input, const char *dir, const char *previous, int flags,
                           const jsmf_fit_opts *fit, const jsmf_refine_run_opts *r,
                           jsmf_comm *c, jsmf_model **out, jsmf_fit_report *rep,
                           jsmf_refine_result *res)
{
    if (out)
        *out = NULL;
    if (!c)
        c = jsmf_comm_self();
    jsmf_refine_run_opts ro;
    if (r)
        ro = *r;
    else
        jsmf_refine_run_opts_init(&ro);
    char scratch[4096];
    refine_place(&ro.refine, fit->mem_bytes, dir, scratch, sizeof scratch);
    if (res)
        memset(res, 0, sizeof *res);
    /* every rank sees the same store, so all take the same branch; by default a refinement
     * that cannot fit --mem leaves the spectral fit (res->over_mem says so), one asked for
     * stops before the fit */
    uint64_t need = 0;
    jsmf_store_stats st;
    int rc = refine_opts_check(&ro.refine);
    int docs = !ro.n_corpus && holds_documents(input, &st);
    int heavy = !rc && docs ? over_memory(&st, fit, &ro.refine, &need) : 0;
    if (ro.when == JSMF_REFINE_WHERE_DOCUMENTS && !ro.n_corpus && (heavy || !docs)) {
        jsmf_error_clear();
        if (res)
            res->over_mem = heavy ? need : 0;
        return jsmf_fit_to_dir_after(input, dir, previous, flags, fit, c, out, rep);
    }
    rc = rc ? rc : heavy;
    if (!rc)
        rc = check_documents(input, &ro);
    if ((rc = comm_agree(c, rc)))
        return rc;
    if (rep)
        memset(rep, 0, sizeof *rep);
    /* a night with yesterday's model starts there (one process: the fit's ranks would idle) */
    if (previous && docs && !ro.n_corpus && ro.start == JSMF_REFINE_START_AUTO &&
        jsmf_comm_size(c) == 1) {
        jsmf_refine_run_opts wo = ro;
        if (!wo.refine.threads)
            wo.refine.threads = fit->threads;
        rc = refine_from_previous(input, dir, previous, flags, fit, &wo, out, rep, res);
        if (rc != REFINE_WARM_COLD)
            return rc;
    }
    jsmf_fit_opts fo = *fit;
    if (fo.products == JSMF_PRODUCTS_AUTO)
        fo.products = JSMF_PRODUCTS_DOCUMENTS;
    if (fo.rectify == JSMF_RECTIFY_COMPRESSED && !fo.rectify_iters)
        fo.rectify_iters = REFINE_RECTIFY_STEPS;
    if (!ro.refine.threads)
        ro.refine.threads = fo.threads;
    /* the levels are the refined model's, from its A: the fit's would be replaced */
    jsmf_fit_opts spectral = fo;
    memset(spectral.levels, 0, sizeof spectral.levels);
    jsmf_model *m = NULL;
    rc = jsmf_fit_to_dir_after(input, dir, previous, flags | JSMF_FIT_NO_C_METRICS, &spectral,
                               c, &m, rep);
    /* rank 0 refines and writes (the summary is its alone) */
    refine_then then = {&fo, previous, rep ? &rep->levels : NULL, NULL, NULL};
    if (!rc && jsmf_comm_rank(c) == 0)
        rc = refine_start(m, input, dir, 1, &ro, &ro.refine, &then, out, res);
    jsmf_model_free(m);
    return comm_agree(c, rc);
}
