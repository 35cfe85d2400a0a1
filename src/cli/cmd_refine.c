/* cmd_refine.c — 'jsmf refine MODEL --corpus INPUT... -o OUT': a model's topics refined over the
 * documents of a corpus (jsmf_refine_to_dir); also the options and messages 'jsmf fit --refine
 * / --corpus' shares with it. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jsmf_refine.h"

typedef struct {
    const char *model, *output;
    cli_list corpus;
    int force;
    jsmf_refine_run_opts r;
} refine_args;

void cli_refine_defaults(jsmf_refine_run_opts *r)
{
    jsmf_refine_run_opts_init(r);
    r->read.warn = cli_warn;
    r->refine.progress = cli_step_progress;
}

void cli_refine_said(const jsmf_refine_run_opts *r, const jsmf_refine_result *res)
{
    if (res->over_store) {
        cli_info("refined over the store's %llu documents (%llu tokens)",
                 (unsigned long long)res->docs, (unsigned long long)res->tokens);
        cli_info("refinement: %u passes%s in %.1f s, %.1f MB", res->iters,
                 r->refine.iters == JSMF_REFINE_ITERS_AUTO ? " (the budget's)" : "",
                 res->seconds, res->bytes / 1e6);
    } else
        cli_info("%llu documents (%llu of fewer than %u tokens left out), %llu tokens, %u "
                 "iterations in %.1f s, %.1f MB", (unsigned long long)res->docs,
                 (unsigned long long)res->docs_dropped, r->min_doc_len,
                 (unsigned long long)res->tokens, res->iters, res->seconds, res->bytes / 1e6);
    if (!res->over_store && res->iters)
        cli_info("objective per token %.5f at the first iteration, %.5f at the last",
                 res->objective[0], res->objective[res->iters - 1]);
}

static int parse_args(int argc, char **argv, refine_args *a)
{
    cli_refine_defaults(&a->r);
    jsmf_refine_opts *o = &a->r.refine;
    const cli_option options[] = {
        {CLI_OPT("MODEL", 0, CLI_ARG, &a->model)},
        {CLI_OPT("--corpus", 0, CLI_LIST, &a->corpus), .required = 1},
        {CLI_OPT("--output", 'o', CLI_STRING, &a->output), .required = 1},
        {CLI_OPT("--iters", 0, CLI_U32, &o->iters), .min = 1},
        {CLI_OPT("--theta-steps", 0, CLI_U32, &o->theta_steps)},
        {CLI_OPT("--alpha", 0, CLI_DOUBLE, &o->alpha), .range = "(0, inf)"},
        {CLI_OPT("--beta", 0, CLI_DOUBLE, &o->beta), .range = "(0, inf)"},
        {CLI_OPT("--mix", 0, CLI_DOUBLE, &o->mix), .range = "[0, 1)"},
        {CLI_OPT("--method", 0, CLI_CHOICE, &o->method), .choice_name = jsmf_refine_method_name},
        /* --exclude no|yes: --method em|cvb0 as it was first spelled (CVB0 leaves a token's
         * own share out) */
        {CLI_OPT("--exclude", 0, CLI_CHOICE, &o->method), .choices = "no|yes"},
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
    for (uint32_t i = 0; i < a.corpus.n; i++) /* a corpus may be a store's documents */
        cli_note_unchecked_store(a.corpus.items[i]);
    a.r.corpus = (const char *const *)a.corpus.items, a.r.n_corpus = a.corpus.n;
    jsmf_refine_result res = {0};
    cli_note_unchecked_model(a.model);
    rc = jsmf_refine_to_dir(a.model, NULL, a.output, a.force, &a.r, NULL, &res);
    cli_progress_done();
    if (!rc)
        cli_refine_said(&a.r, &res);
    jsmf_refine_result_free(&res);
    free(a.corpus.items);
    return rc ? cli_fail(rc) : 0;
}
