/* cmd_report.c — 'jsmf report': one self-contained HTML page of a model (topics, the A heatmap,
 * the hierarchy, a 2-D word map with anchors, metrics), written atomically. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jsmf_eval.h"

typedef struct {
    const char *model, *out, *metrics, *title;
    jsmf_report_opts opts;
} report_args;

static int parse_args(int argc, char **argv, report_args *a)
{
    a->opts = (jsmf_report_opts)JSMF_REPORT_OPTS_DEFAULT;
    const cli_option options[] = {
        {CLI_OPT("MODEL", 0, CLI_ARG, &a->model)},
        {CLI_OPT("--output", 'o', CLI_STRING, &a->out), .required = 1},
        {CLI_OPT("--metrics", 0, CLI_STRING, &a->metrics)},
        {CLI_OPT("--title", 0, CLI_STRING, &a->title)},
        {CLI_OPT("--top", 0, CLI_U32, &a->opts.top)},
        {CLI_OPT("--points", 0, CLI_U32, &a->opts.max_points)},
        {0},
    };
    return cli_parse(options, argc, argv);
}

int cmd_report(int argc, char **argv)
{
    report_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc;
    jsmf_model *m = NULL;
    char *metrics = NULL;
    rc = jsmf_model_load(a.model, &m);
    if (!rc)
        cli_note_unchecked_model(a.model);
    if (!rc && a.metrics)
        rc = jsmf_file_load(a.metrics, &metrics);
    if (!rc) {
        a.opts.metrics_json = metrics;
        a.opts.title = a.title;
        a.opts.model_path = a.model;
        rc = jsmf_report_save(a.out, m, &a.opts);
    }
    if (!rc)
        cli_info("wrote %s (%u topics, %u words)", a.out, m->k, m->n);
    free(metrics);
    jsmf_model_free(m);
    if (rc)
        return cli_fail(rc);
    return strcmp(a.out, "-") ? EXIT_OK : cli_finish_stdout();
}
