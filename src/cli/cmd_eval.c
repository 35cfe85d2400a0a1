/* cmd_eval.c — 'jsmf eval': every quality metric of a model (jsmf_eval_*, jsmf_eval.h):
 * against a store's C, over a corpus, against a ground truth; text or JSON on stdout. */
#include <stdlib.h>

#include "cli.h"
#include "jsmf_eval.h"

typedef struct {
    const char *model, *store, *truth;
    cli_list corpus; /* --corpus INPUT... */
    uint32_t top;
    double eps;
    int json;
    jsmf_read_opts read;
    jsmf_infer_opts infer;
    uint64_t mem; /* 0: the library's default */
} eval_args;

static int parse_args(int argc, char **argv, eval_args *a)
{
    a->read.tok = (jsmf_tokenizer)JSMF_TOKENIZER_DEFAULT;
    a->read.warn = cli_warn;
    a->infer = (jsmf_infer_opts)JSMF_INFER_OPTS_DEFAULT;
    a->top = 20;
    a->eps = 0.01;
    const cli_option options[] = {
        {CLI_OPT("MODEL", 0, CLI_ARG, &a->model)},
        {CLI_OPT("--store", 0, CLI_STRING, &a->store)},
        {CLI_OPT("--corpus", 0, CLI_LIST, &a->corpus)},
        {CLI_OPT("--truth", 0, CLI_STRING, &a->truth)},
        {CLI_OPT("--json", 0, CLI_FLAG, &a->json)},
        {CLI_OPT("--format", 0, CLI_CALL, &a->read.format), .call = cli_format_option},
        {CLI_OPT("--uci-vocab", 0, CLI_STRING, &a->read.uci_vocab)},
        {CLI_OPT("--top", 0, CLI_U32, &a->top), .min = 2},
        {CLI_OPT("--epsilon", 0, CLI_DOUBLE, &a->eps), .range = "(0, inf)"},
        {CLI_OPT("--iters", 0, CLI_U32, &a->infer.max_iters)},
        {CLI_OPT("--tol", 0, CLI_DOUBLE, &a->infer.tol)},
        {CLI_OPT("--threads", 'j', CLI_INT, &a->infer.threads)},
        {CLI_OPT("--mem", 0, CLI_MEM, &a->mem)},
        {0},
    };
    int rc = cli_parse(options, argc, argv);
    if (rc)
        return rc;
    cli_note_unchecked_store(a->store);
    if (!a->store && !a->corpus.n && !a->truth)
        return cli_usage_error("nothing to evaluate: give --store, --corpus and/or --truth");
    return 0;
}

int cmd_eval(int argc, char **argv)
{
    eval_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc) {
        free(a.corpus.items);
        return rc;
    }
    a.read.threads = a.infer.threads;
    jsmf_model *m = NULL;
    jsmf_eval e = {.model = a.model, .store = a.store, .truth = a.truth,
                         .progress = cli_step_progress, .top = a.top, .eps = a.eps,
                         .threads = a.infer.threads, .mem_bytes = a.mem};
    rc = jsmf_model_load(a.model, &m);
    if (!rc)
        cli_note_unchecked_model(a.model), cli_note_unchecked_model(a.truth);
    if (!rc && a.store)
        rc = jsmf_eval_store(&e, m);
    cli_progress_done();
    if (!rc && a.corpus.n)
        rc = jsmf_eval_corpus(&e, m, a.corpus.items, a.corpus.n, &a.read, &a.infer);
    cli_progress_done();
    if (!rc && a.truth)
        rc = jsmf_eval_truth(&e, m);
    if (!rc)
        jsmf_eval_write(stdout, &e, m, a.json);
    jsmf_eval_free(&e);
    free(a.corpus.items);
    jsmf_model_free(m);
    return rc ? cli_fail(rc) : cli_finish_stdout();
}
