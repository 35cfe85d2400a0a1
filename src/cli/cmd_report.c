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
    jsmf_report_opts o = JSMF_REPORT_OPTS_DEFAULT;
    a->opts = o;
    const cli_option options[] = {
        {CLI_OPT("--output", 'o', "FILE", CLI_STRING, &a->out, "the page to write (- for stdout)")},
        {CLI_OPT("--metrics", 0, "FILE", CLI_STRING, &a->metrics,
                 "also show this JSON (e.g. the output of 'jsmf eval MODEL ... --json')")},
        {CLI_OPT("--title", 0, "TEXT", CLI_STRING, &a->title,
                 "page title (default: the model directory's name, its K and the store it was "
                 "fitted on)")},
        {CLI_OPT("--top", 0, "N", CLI_U32, &a->opts.top, "top words per topic (default 12)")},
        {CLI_OPT("--points", 0, "N", CLI_U32, &a->opts.max_points,
                 "most frequent words drawn in the word map (default 1500)")},
        {0},
    };
    const cli_spec spec = {
        "usage: jsmf report MODEL -o FILE.html [options]\n"
        "\n"
        "Write one self-contained HTML page (inline CSS, script and SVG; no network, no\n"
        "external files) showing the model: topics with their top words, anchors and\n"
        "sizes; the topic-topic matrix A as a heatmap (correlation or conditional); the\n"
        "hierarchy when the model has levels; the words projected on two principal\n"
        "components of their topic profiles p(topic | word), anchors marked; the\n"
        "metrics of summary.json.\n"
        "\n"
        "options:\n",
        options, NULL};
    int n, rc = cli_parse(&spec, argc, argv, &n);
    if (rc)
        return rc;
    if (n > 1)
        return cli_usage_error("unexpected argument '%s'", argv[2]);
    a->model = n ? argv[1] : NULL;
    if (!a->model || !a->out)
        return cli_usage_error("needs a MODEL and -o FILE.html");
    return 0;
}

int cmd_report(int argc, char **argv)
{
    report_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc < 0 ? cli_finish_stdout() : rc;
    jsmf_model *m = NULL;
    char *metrics = NULL;
    rc = jsmf_model_load(a.model, &m);
    if (!rc && a.metrics)
        rc = jsmf_read_file(a.metrics, &metrics);
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
