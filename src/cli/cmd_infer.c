/* cmd_infer.c — 'jsmf infer': the topic mixture theta_d of every document of the inputs
 * (jsmf_infer_write: the per-document convex fit of Fisher et al. 2020 App. E), in input order
 * on stdout; the summary and an out-of-vocabulary warning on stderr. */
#include <omp.h>
#include <string.h>

#include "cli.h"
#include "jsmf_eval.h"

typedef struct {
    const char *model;
    const char **inputs;
    uint32_t ninputs;
    jsmf_read_opts read;
    jsmf_theta_format out;
    uint32_t threads;
    jsmf_infer_opts infer;
} infer_args;

static int parse_output(const cli_option *o, const char *v)
{
    if (strcmp(v, "tsv") && strcmp(v, "jsonl"))
        return cli_usage_error("unknown --output '%s' (tsv, jsonl)", v);
    *(int *)o->field = !strcmp(v, "jsonl");
    return 0;
}

static int parse_args(int argc, char **argv, infer_args *a)
{
    jsmf_tokenizer tok = JSMF_TOKENIZER_DEFAULT;
    jsmf_infer_opts io = JSMF_INFER_OPTS_DEFAULT;
    a->read.tok = tok;
    a->read.warn = cli_warn;
    a->infer = io;
    a->out.batch = 4096;
    const cli_option options[] = {
        {CLI_OPT("--format", 0, "F", CLI_CALL, &a->read.format,
                 "input format: text, uci, ldac or auto (default auto)"),
         .call = cli_format_option},
        {CLI_OPT("--uci-vocab", 0, "F", CLI_STRING, &a->read.uci_vocab,
                 "vocabulary file of UCI input (default vocab.X.txt beside docword.X.txt)")},
        {CLI_OPT("--output", 'O', "O", CLI_CALL, &a->out.jsonl,
                 "tsv: 'doc_index<TAB>theta_1 ... theta_K' (default)\n"
                 "jsonl: {\"doc\":i,\"tokens\":n,\"oov\":m,\"theta\":[...]}"),
         .call = parse_output},
        {CLI_OPT("--header", 0, NULL, CLI_FLAG, &a->out.header,
                 "tsv: first line 'doc<TAB>t0<TAB>t1...'")},
        {CLI_OPT("--threads", 'j', "N", CLI_U32, &a->threads,
                 "OpenMP threads (default: all cores)")},
        {CLI_OPT("--iters", 0, "N", CLI_U32, &a->infer.max_iters,
                 "EM iterations per document at most (default 1000)")},
        {CLI_OPT("--tol", 0, "X", CLI_DOUBLE, &a->infer.tol,
                 "stop when the duality gap per token is below X (default 1e-5): the "
                 "log-likelihood per token is then within X of the optimum")},
        {CLI_OPT("--batch", 0, "N", CLI_U32, &a->out.batch,
                 "documents per parallel batch (default 4096)"),
         .min = 1},
        {0},
    };
    const cli_spec spec = {
        "usage: jsmf infer MODEL INPUT... [options]\n"
        "\n"
        "Topic mixture theta_d of each document of INPUT (a path, or - for stdin; zstd\n"
        "detected from content): the theta on the simplex maximising the document's\n"
        "likelihood sum_w n_w log sum_k theta_k B_wk (EM, certified by the duality\n"
        "gap). Words are looked up in the model's vocabulary; other words are ignored\n"
        "and counted. One line per document on stdout, in input order.\n"
        "\n"
        "options:\n",
        options,
        "Documents without in-vocabulary words get the uniform theta (1/K each) and are\n"
        "counted in the summary on stderr.\n"};
    int n, rc = cli_parse(&spec, argc, argv, &n);
    if (rc)
        return rc;
    if (n < 2)
        return cli_usage_error("needs a MODEL and at least one INPUT");
    a->model = argv[1];
    a->inputs = (const char **)argv + 2;
    a->ninputs = (uint32_t)n - 1;
    return 0;
}

int cmd_infer(int argc, char **argv)
{
    infer_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc < 0 ? cli_finish_stdout() : rc;
    if (a.threads)
        omp_set_num_threads((int)a.threads);
    jsmf_model *m = NULL;
    jsmf_infer_summary sum;
    char msg[1024];
    if (!(rc = jsmf_model_load(a.model, &m)))
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
