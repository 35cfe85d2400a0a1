/* cmd_refine.c — 'jsmf refine MODEL --corpus INPUT... -o OUT': a model's topics refined over the
 * documents of a corpus by MAP-EM for LDA (jsmf_refine.h); also the step 'jsmf fit --corpus'
 * takes after the spectral fit (cli_refine_model). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jsmf_refine.h"

typedef struct {
    const char *model, *output;
    cli_list corpus;
    int force;
    cli_refine r;
} refine_args;

void cli_refine_defaults(cli_refine *r)
{
    memset(r, 0, sizeof *r);
    jsmf_refine_opts_init(&r->o);
    jsmf_read_opts_init(&r->read);
    r->read.warn = cli_warn;
    r->min_doc_len = 5;
}

int cli_refine_model(const jsmf_model *start, const char *const *inputs, uint32_t n,
                     cli_refine *r, jsmf_model **out)
{
    if (!start->vocab)
        return jsmf_error(JSMF_EINVAL, "refine: the model has no vocabulary");
    jsmf_doc_csr d;
    uint64_t dropped = 0;
    r->read.threads = r->o.threads;
    int rc = jsmf_doc_csr_read(inputs, n, &r->read, start->vocab, r->min_doc_len, &d, &dropped);
    if (rc)
        return rc;
    jsmf_doc_source src;
    if (!(rc = jsmf_doc_csr_source(&d, 0, &src))) {
        r->o.progress = cli_step_progress;
        jsmf_refine_result res;
        rc = jsmf_refine(start, &src, &r->o, out, &res);
        cli_progress_done();
        if (!rc) {
            cli_info("%llu documents (%llu of fewer than %u tokens left out), %llu "
                     "tokens, %u iterations in %.1f s, %.1f MB", (unsigned long long)res.docs,
                     (unsigned long long)dropped, r->min_doc_len, (unsigned long long)res.tokens,
                     res.iters, res.seconds, res.bytes / 1e6);
            cli_info("objective per token %.5f at the first iteration, %.5f at the last",
                     res.objective[0], res.objective[res.iters - 1]);
        }
        jsmf_refine_result_free(&res);
        jsmf_doc_csr_source_free(&src);
    }
    jsmf_doc_csr_free(&d);
    return rc;
}

static int parse_args(int argc, char **argv, refine_args *a)
{
    cli_refine_defaults(&a->r);
    jsmf_refine_opts *o = &a->r.o;
    const cli_option options[] = {
        {CLI_OPT("MODEL", 0, CLI_ARG, &a->model)},
        {CLI_OPT("--corpus", 0, CLI_LIST, &a->corpus), .required = 1},
        {CLI_OPT("--output", 'o', CLI_STRING, &a->output), .required = 1},
        {CLI_OPT("--iters", 0, CLI_U32, &o->iters), .min = 1},
        {CLI_OPT("--theta-steps", 0, CLI_U32, &o->theta_steps)},
        {CLI_OPT("--alpha", 0, CLI_DOUBLE, &o->alpha), .range = "(0, inf)"},
        {CLI_OPT("--beta", 0, CLI_DOUBLE, &o->beta), .range = "(0, inf)"},
        {CLI_OPT("--mix", 0, CLI_DOUBLE, &o->mix), .range = "[0, 1)"},
        {CLI_OPT("--exclude", 0, CLI_CHOICE, &o->exclude), .choices = "no|yes"},
        {CLI_OPT("--batches", 0, CLI_U32, &o->batches), .min = 1},
        {CLI_OPT("--tol", 0, CLI_DOUBLE, &o->tol), .range = "[0, inf)"},
        {CLI_OPT("--overrelax", 0, CLI_DOUBLE, &o->overrelax), .range = "[1, inf)"},
        {CLI_OPT("--learn-alpha", 0, CLI_CHOICE, &o->learn_alpha), .choices = "no|yes|auto"},
        {CLI_OPT("--min-doc-len", 0, CLI_U32, &a->r.min_doc_len)},
        {CLI_OPT("--format", 0, CLI_CALL, &a->r.read.format), .call = cli_format_option},
        {CLI_OPT("--uci-vocab", 0, CLI_STRING, &a->r.read.uci_vocab)},
        {CLI_OPT("--threads", 'j', CLI_INT, &o->threads)},
        {CLI_OPT("--force", 0, CLI_FLAG, &a->force)},
        {0},
    };
    return cli_parse(options, argc, argv);
}

int cmd_refine(int argc, char **argv)
{
    refine_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc) {
        free(a.corpus.items);
        return rc;
    }
    jsmf_model *start = NULL, *m = NULL;
    rc = jsmf_model_load(a.model, &start);
    if (!rc)
        rc = cli_refine_model(start, a.corpus.items, a.corpus.n, &a.r, &m);
    if (!rc)
        rc = jsmf_model_save(a.output, m, a.force);
    jsmf_model_free(start);
    jsmf_model_free(m);
    free(a.corpus.items);
    return rc ? cli_fail(rc) : 0;
}
