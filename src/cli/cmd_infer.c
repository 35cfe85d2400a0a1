/* cmd_infer.c — 'jsmf infer': the topic mixture theta_d of every document of the inputs
 * (jsmf_infer_write: the per-document convex fit of Fisher et al. 2020 App. E), in input order
 * on stdout; the summary and an out-of-vocabulary warning on stderr. */

#include "cli.h"
#include "jsmf_eval.h"

typedef struct {
    const char *model;
    const char **inputs;
    uint32_t ninputs;
    jsmf_read_opts read;
    jsmf_theta_format out;
    jsmf_infer_opts infer;
} infer_args;

static int parse_args(int argc, char **argv, infer_args *a)
{
    a->read.tok = (jsmf_tokenizer)JSMF_TOKENIZER_DEFAULT;
    a->read.warn = cli_warn;
    a->infer = (jsmf_infer_opts)JSMF_INFER_OPTS_DEFAULT;
    a->out.batch = 4096;
    const cli_option options[] = {
        {CLI_OPT("MODEL", 0, CLI_ARG, &a->model)},
        {CLI_OPT("INPUT", 0, CLI_ARGS, &a->inputs), .count = &a->ninputs},
        {CLI_OPT("--format", 0, CLI_CALL, &a->read.format), .call = cli_format_option},
        {CLI_OPT("--uci-vocab", 0, CLI_STRING, &a->read.uci_vocab)},
        {CLI_OPT("--output", 'O', CLI_CHOICE, &a->out.jsonl), .choices = "tsv|jsonl"},
        {CLI_OPT("--header", 0, CLI_FLAG, &a->out.header)},
        {CLI_OPT("--threads", 'j', CLI_INT, &a->infer.threads)},
        {CLI_OPT("--iters", 0, CLI_U32, &a->infer.max_iters)},
        {CLI_OPT("--tol", 0, CLI_DOUBLE, &a->infer.tol)},
        {CLI_OPT("--batch", 0, CLI_U32, &a->out.batch), .min = 1},
        {0},
    };
    return cli_parse(options, argc, argv);
}

int cmd_infer(int argc, char **argv)
{
    infer_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc;
    a.read.threads = a.infer.threads;
    jsmf_model *m = NULL;
    jsmf_infer_summary sum;
    char msg[1024];
    if (!(rc = jsmf_model_load(a.model, &m)))
        cli_note_unchecked_model(a.model);
    if (!rc)
        rc = jsmf_infer_write(stdout, m, a.inputs, a.ninputs, &a.read, &a.infer, &a.out,
                              cli_step_progress, NULL, &sum);
    cli_progress_done();
    if (!rc && !cli_quiet)
        jsmf_infer_summary_write(stderr, cli_prog, &sum);
    if (!rc && jsmf_infer_oov_warning(&sum, a.model, m->n, msg, sizeof msg))
        cli_warn(NULL, msg);
    jsmf_model_free(m);
    return rc ? cli_fail(rc) : cli_finish_stdout();
}
