/* cmd_fit.c — 'jsmf fit INPUT -k K -o MODEL': the Rectified Anchor Word fit of a store or of a
 * matrix written by 'jsmf export', on one process or the ranks of an MPI job (jsmf_fit_to_dir);
 * metrics and timings to stderr, the model directory with summary.json. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "jsmf_comm.h"
#include "jsmf_fit.h"
#include "jsmf_model.h"
#include "jsmf_refine.h"
#include "jsmf_store.h"

#define REFINE_DEFAULT UINT32_MAX

typedef struct {
    const char *input, *output, *previous;
    jsmf_fit_opts o;
    int json, force, save_rect, warm, cold;
    cli_list corpus;   /* --corpus INPUT...: refine the fit over these documents */
    jsmf_refine_run_opts refine;
    /* --refine N: refine N passes (over the store's documents without --corpus), 0: the spectral
     * fit alone; not given (REFINE_DEFAULT): refine where the store holds its documents */
    uint32_t refine_iters;
} fit_args;

/* --levels K1,K2,...: the super-topic counts, 0-terminated. */
static int parse_levels(const cli_option *opt, const char *v)
{
    uint32_t *levels = opt->field;
    memset(levels, 0, sizeof(uint32_t) * JSMF_FIT_MAX_LEVELS);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", v);
    int n = 0;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (n == JSMF_FIT_MAX_LEVELS)
            return cli_usage_error("--levels: at most %d levels", JSMF_FIT_MAX_LEVELS);
        uint64_t level;
        if (cli_parse_uint("--levels", tok, 0, UINT32_MAX, &level))
            return EXIT_USAGE;
        levels[n++] = (uint32_t)level;
    }
    return 0;
}

static int parse_min_anchor_df(const cli_option *opt, const char *v)
{
    uint64_t *df = opt->field;
    if (!strcmp(v, "auto")) {
        *df = JSMF_FIT_DF_AUTO;
        return 0;
    }
    return cli_parse_uint(opt->name, v, 0, UINT64_MAX, df);
}

static int parse_args(int argc, char **argv, fit_args *a)
{
    jsmf_fit_opts *o = &a->o;
    jsmf_fit_opts_init(o, 0);
    cli_refine_defaults(&a->refine);
    a->refine_iters = REFINE_DEFAULT;
    const cli_option options[] = {
        {CLI_OPT("INPUT", 0, CLI_ARG, &a->input),
         .hint = "(a store directory, or a .mtx or .npy matrix)"},
        {CLI_OPT("--topics", 'k', CLI_U32, &o->k), .min = 2, .required = 1},
        {CLI_OPT("--output", 'o', CLI_STRING, &a->output), .required = 1},
        {CLI_OPT("--rectify", 0, CLI_CHOICE, &o->rectify),
         .choice_name = jsmf_fit_rectify_name},
        {CLI_OPT("--rectify-iters", 0, CLI_U32, &o->rectify_iters)},
        {CLI_OPT("--rectify-tol", 0, CLI_DOUBLE, &o->rectify_tol)},
        {CLI_OPT("--compress-rows", 0, CLI_U32, &o->compress_rows)},
        {CLI_OPT("--sketch-passes", 0, CLI_U32, &o->sketch_passes)},
        {CLI_OPT("--sketch-tol", 0, CLI_DOUBLE, &o->sketch_tol)},
        {CLI_OPT("--anchors", 0, CLI_CHOICE, &o->anchors),
         .choice_name = jsmf_fit_anchors_name},
        {CLI_OPT("--anchor-space", 0, CLI_CHOICE, &o->anchor_space),
         .choices = "auto|exact|factor"},
        {CLI_OPT("--recover", 0, CLI_CHOICE, &o->recover),
         .choice_name = jsmf_fit_recover_name},
        {CLI_OPT("--recover-a", 0, CLI_CHOICE, &o->recover_a), .choices = "auto|diag|pinv"},
        {CLI_OPT("--admm-lambda", 0, CLI_DOUBLE, &o->admm_lambda)},
        {CLI_OPT("--admm-gamma", 0, CLI_DOUBLE, &o->admm_gamma)},
        {CLI_OPT("--snls-tol", 0, CLI_DOUBLE, &o->snls_tol)},
        {CLI_OPT("--snls-maxit", 0, CLI_U32, &o->snls_maxit)},
        {CLI_OPT("--eig-tol", 0, CLI_DOUBLE, &o->eig_tol)},
        {CLI_OPT("--eig-step-maxit", 0, CLI_U32, &o->eig_step_maxit)},
        {CLI_OPT("--levels", 0, CLI_CALL, o->levels), .call = parse_levels},
        {CLI_OPT("--min-anchor-df", 0, CLI_CALL, &o->min_anchor_df),
         .call = parse_min_anchor_df},
        {CLI_OPT("--mode", 0, CLI_CHOICE, &o->mode), .choices = "auto|dense|stream"},
        {CLI_OPT("--products", 0, CLI_CHOICE, &o->products), .choices = "auto|rows|documents"},
        {CLI_OPT("--mem", 0, CLI_MEM, &o->mem_bytes)},
        {CLI_OPT("--threads", 0, CLI_INT, &o->threads)},
        {CLI_OPT("--seed", 0, CLI_U64, &o->seed)},
        {CLI_OPT("--json", 0, CLI_FLAG, &a->json)},
        {CLI_OPT("--save-rectified", 0, CLI_FLAG, &a->save_rect)},
        {CLI_OPT("--force", 0, CLI_FLAG, &a->force)},
        {CLI_OPT("--previous", 0, CLI_STRING, &a->previous)},
        {CLI_OPT("--warm", 0, CLI_FLAG, &a->warm)},
        {CLI_OPT("--cold", 0, CLI_FLAG, &a->cold)},
        {CLI_OPT("--prior-weight", 0, CLI_DOUBLE, &a->refine.prior_weight), .range = "[0, inf)"},
        {CLI_OPT("--corpus", 0, CLI_LIST, &a->corpus)},
        {CLI_OPT("--refine", 0, CLI_U32, &a->refine_iters), .max = REFINE_DEFAULT - 1},
        {CLI_OPT("--min-doc-len", 0, CLI_U32, &a->refine.min_doc_len)},
        {0},
    };
    return cli_parse(options, argc, argv);
}

/* With --previous: how the topics relate to the previous model's (rank 0 holds the summary). */
static void report_lineage(const jsmf_model *m)
{
    jsmf_lineage l;
    if (!m || jsmf_model_lineage_read(m, &l)) {
        jsmf_error_clear(); /* a fit without --previous, or a rank without the summary */
        return;
    }
    uint32_t cont = 0, kept = 0;
    for (uint32_t t = 0; t < l.k; t++)
        if (l.prev[t] != JSMF_TOPIC_NONE)
            cont++, kept += l.prev[t] == t;
    cli_info("lineage: %u of %u topics continue a topic of %s (%u keep its index), %u new, "
             "%u retired", cont, l.k, l.prev_path ? l.prev_path : "the previous model", kept,
             l.k - cont, l.n_retired);
    jsmf_lineage_free(&l);
}

int cmd_fit(int argc, char **argv)
{
    fit_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (!rc && a.refine_iters == 0 && a.corpus.n)
        rc = cli_usage_error("--corpus refines the fit over its documents and --refine 0 asks "
                             "for no refinement: give one of them");
    if (!rc)
        cli_note_unchecked_store(a.input);
    if (rc) {
        free(a.corpus.items);
        return rc;
    }
    /* under mpirun every rank fits (each reading its rows of C); rank 0 writes the model */
    jsmf_comm *c;
    if ((rc = cli_comm(&c)))
        return rc;
    a.o.progress = cli_step_progress;
    int flags = (a.force ? JSMF_FIT_FORCE : 0) | (a.save_rect ? JSMF_FIT_SAVE_RECTIFIED : 0) |
                (a.warm ? JSMF_FIT_WARM : 0);
    jsmf_model *m = NULL;
    jsmf_fit_report rep;
    jsmf_refine_result res = {0};
    cli_note_unchecked_model(a.previous);
    if (a.refine_iters) { /* fit-then-refine, its rules in the library */
        a.refine.corpus = (const char *const *)a.corpus.items, a.refine.n_corpus = a.corpus.n;
        if (a.refine_iters != REFINE_DEFAULT)
            a.refine.refine.iters = a.refine_iters;
        else if (!a.corpus.n)
            a.refine.when = JSMF_REFINE_WHERE_DOCUMENTS;
        if (a.cold)
            a.refine.start = JSMF_REFINE_START_SPECTRAL;
        rc = jsmf_fit_refine_to_dir(a.input, a.output, a.previous, flags, &a.o, &a.refine, c,
                                    &m, &rep, &res);
    } else {
        rc = jsmf_fit_to_dir_after(a.input, a.output, a.previous, flags, &a.o, c, &m, &rep);
    }
    int refining = res.iters > 0;
    cli_progress_done();
    if (!rc && !cli_quiet) {
        if (res.warm)
            cli_info("from %s: its topics on the store's %u words (%u admitted since), no "
                     "spectral fit (--cold makes one)", a.previous, m ? m->n : 0, res.admitted);
        else
            jsmf_fit_report_write(stderr, cli_prog, &rep); /* quiet on ranks other than 0 */
        report_lineage(m);
        if (refining && m) /* rank 0 refined */
            cli_refine_said(&a.refine, &res);
        if (res.over_mem)
            cli_info("refinement left out: it would hold %llu MB, more than --mem %lluM; the "
                     "spectral fit is written (--mem %lluM refines)",
                     (unsigned long long)((res.over_mem + (1u << 20) - 1) >> 20),
                     (unsigned long long)(a.o.mem_bytes >> 20),
                     (unsigned long long)((res.over_mem + (1u << 20) - 1) >> 20));
    }
    if (!rc && a.json && m && m->summary_json) /* rank 0's alone */
        fputs(m->summary_json, stdout);
    jsmf_refine_result_free(&res);
    jsmf_model_free(m);
    free(a.corpus.items);
    if (rc)
        return cli_fail(rc);
    return cli_finish_stdout();
}
