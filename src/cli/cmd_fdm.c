/* cmd_fdm.c — 'jsmf fdm': fit the Full Dependence Mixture model (Fisher et al. 2020) by SGD on
 * pairs sampled from the C of a store (or an exported .npy / .mtx), on the CPU or a CUDA GPU,
 * resumable through MODEL.ckpt; writes a MODEL directory like 'jsmf fit' (jsmf_fdm_to_dir). */
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jsmf_fdm.h"

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
    got_signal = sig;
}

typedef struct fdm_opts {
    const char *input, *output;
    jsmf_fdm_dir_opts d;
    jsmf_fdm_opts p;
} fdm_opts;

/* The run's lines for the user (jsmf_fdm_dir_opts.info), below a progress line. */
static void on_info(void *arg, const char *line)
{
    (void)arg;
    cli_progress_done();
    cli_info("%s", line);
}

/* A duration: seconds, or a number with s, m or h. */
static int parse_duration(const char *opt, const char *v, double *out)
{
    char *end;
    double x = strtod(v, &end);
    double unit = !*end ? 1 : !strcmp(end, "s") ? 1 : !strcmp(end, "m") ? 60
                : !strcmp(end, "h") ? 3600 : -1;
    if (end == v || unit < 0 || !(x > 0) || !isfinite(x))
        return cli_usage_error("%s: '%s' is not a duration (e.g. 90s, 10m, 2h)", opt, v);
    *out = x * unit;
    return 0;
}

static int duration_option(const cli_option *o, const char *v)
{
    return parse_duration(o->name, v, o->field);
}

/* --checkpoint-every: a step count (digits alone), a duration (with a unit), or 0 (none). */
static int checkpoint_option(const cli_option *o, const char *v)
{
    jsmf_fdm_opts *p = o->field;
    size_t digits = strspn(v, "0123456789");
    p->checkpoint_every = 0, p->checkpoint_seconds = 0;
    if (digits && !v[digits])
        return cli_parse_uint("--checkpoint-every", v, 0, UINT64_MAX, &p->checkpoint_every);
    return parse_duration("--checkpoint-every", v, &p->checkpoint_seconds);
}

static int parse(int argc, char **argv, fdm_opts *o)
{
    jsmf_fdm_opts *p = &o->p;
    jsmf_fdm_opts_init(p);
    p->k = 0;
    o->d = (jsmf_fdm_dir_opts){.init = "auto", .info = on_info};
    const cli_option options[] = {
        {CLI_OPT("INPUT", 0, CLI_ARG, &o->input), .hint = "(a store or a .npy C)"},
        {CLI_OPT("--topics", 'k', CLI_U32, &p->k), .min = 1},
        {CLI_OPT("--output", 'o', CLI_STRING, &o->output), .required = 1},
        {CLI_OPT("--device", 0, CLI_CHOICE, &p->device),
         .choice_name = jsmf_fdm_device_name},
        {CLI_OPT("--init", 0, CLI_STRING, &o->d.init)},
        {CLI_OPT("--init-smooth", 0, CLI_DOUBLE, &p->init_smooth), .range = "[0, 1)"},
        {CLI_OPT("--init-scale", 0, CLI_DOUBLE, &p->init_scale)},
        {CLI_OPT("--starts", 0, CLI_U32, &p->starts), .min = 1},
        {CLI_OPT("--seed", 0, CLI_U64, &p->seed)},
        {CLI_OPT("--steps", 0, CLI_U64, &p->steps)},
        {CLI_OPT("--batch", 0, CLI_U32, &p->batch), .min = 1},
        {CLI_OPT("--lr", 0, CLI_DOUBLE, &p->lr), .range = "(0, inf)"},
        {CLI_OPT("--threads", 0, CLI_INT, &p->threads), .min = 1, .max = 4096},
        {CLI_OPT("--precision", 0, CLI_CHOICE, &p->precision), .choices = "fp32|tf32"},
        {CLI_OPT("--eval-every", 0, CLI_U64, &p->eval_every), .min = 1},
        {CLI_OPT("--heldout", 0, CLI_U32, &p->heldout)},
        {CLI_OPT("--patience", 0, CLI_U32, &p->patience)},
        {CLI_OPT("--lr-halvings", 0, CLI_U32, &p->lr_halvings), .max = 30},
        {CLI_OPT("--tol", 0, CLI_DOUBLE, &p->tol)},
        {CLI_OPT("--time", 0, CLI_CALL, &p->time_limit), .call = duration_option},
        {CLI_OPT("--checkpoint-every", 0, CLI_CALL, p), .call = checkpoint_option},
        {CLI_OPT("--mem", 0, CLI_MEM, &p->mem_budget)},
        {CLI_OPT("--restart", 0, CLI_FLAG, &p->restart)},
        {CLI_OPT("--force", 0, CLI_FLAG, &o->d.force)},
        {0},
    };
    int rc = cli_parse(options, argc, argv);
    if (rc)
        return rc;
    cli_note_unchecked_store(o->input);
    const char *init = o->d.init;
    int init_model = strcmp(init, "auto") && strcmp(init, "none") && strcmp(init, "random");
    if (!p->k && !init_model)
        return cli_usage_error("missing -k T (number of topics)");
    return 0;
}

int cmd_fdm(int argc, char **argv)
{
    double t0 = clock_seconds();
    fdm_opts o;
    memset(&o, 0, sizeof o);
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc;
    /* For the whole run, not just its training: a signal during the warm-start fit stops the
     * run at its first step, with a checkpoint, instead of killing it with nothing saved. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    o.p.progress = cli_step_progress;
    o.p.stop = &got_signal;
    jsmf_fdm_result r;
    if (strcmp(o.d.init, "auto") && strcmp(o.d.init, "none") && strcmp(o.d.init, "random"))
        cli_note_unchecked_model(o.d.init); /* --init MODEL */
    rc = jsmf_fdm_to_dir(o.input, o.output, &o.d, &o.p, &r);
    cli_progress_done();
    if (!rc && !cli_quiet)
        jsmf_fdm_result_write(stderr, cli_prog, &r, clock_seconds() - t0, o.output);
    jsmf_fdm_result_free(&r);
    return rc ? cli_fail(rc) : EXIT_OK;
}
