/* cmd_report.c — 'jsmf report': one self-contained HTML page of a model (topics, the A heatmap,
 * the hierarchy, a 2-D word map with anchors, metrics), written atomically. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jsmf_eval.h"

static void usage(FILE *f)
{
    fputs("usage: jsmf report MODEL -o FILE.html [options]\n"
          "\n"
          "Write one self-contained HTML page (inline CSS, script and SVG; no network, no\n"
          "external files) showing the model: topics with their top words, anchors and\n"
          "sizes; the topic-topic matrix A as a heatmap (correlation or conditional); the\n"
          "hierarchy when the model has levels; the words projected on two principal\n"
          "components of their topic profiles p(topic | word), anchors marked; the\n"
          "metrics of summary.json.\n"
          "\n"
          "options:\n"
          "  -o, --output FILE  the page to write (- for stdout)\n"
          "  --metrics FILE     also show this JSON (e.g. the output of\n"
          "                     'jsmf eval MODEL ... --json')\n"
          "  --title TEXT       page title (default: the model directory's name, its K\n"
          "                     and the store it was fitted on)\n"
          "  --top N            top words per topic (default 12)\n"
          "  --points N         most frequent words drawn in the word map (default 1500)\n"
          "  -q, --quiet        no messages on stderr\n",
          f);
}

typedef struct {
    const char *model, *out, *metrics, *title;
    jsmf_report_opts opts;
} report_args;

static int parse_args(int argc, char **argv, report_args *a)
{
    jsmf_report_opts o = JSMF_REPORT_OPTS_DEFAULT;
    a->opts = o;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int err = 0;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return -1;
        } else if (cli_common_option(argv[i])) {
        } else if ((v = cli_opt_value(argc, argv, &i, "--output", "-o", &err))) {
            a->out = v;
        } else if ((v = cli_opt_value(argc, argv, &i, "--metrics", NULL, &err))) {
            a->metrics = v;
        } else if ((v = cli_opt_value(argc, argv, &i, "--title", NULL, &err))) {
            a->title = v;
        } else if ((v = cli_opt_value(argc, argv, &i, "--top", NULL, &err))) {
            if ((err = cli_parse_u32("--top", v, &a->opts.top)))
                return err;
        } else if ((v = cli_opt_value(argc, argv, &i, "--points", NULL, &err))) {
            if ((err = cli_parse_u32("--points", v, &a->opts.max_points)))
                return err;
        } else if (err) {
            return err;
        } else if (argv[i][0] == '-') {
            return cli_usage_error("unknown option '%s'", argv[i]);
        } else if (!a->model) {
            a->model = argv[i];
        } else {
            return cli_usage_error("unexpected argument '%s'", argv[i]);
        }
    }
    if (!a->model || !a->out)
        return cli_usage_error("needs a MODEL and -o FILE.html");
    return 0;
}

static int read_text_file(const char *path, char **out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return jsmf_error(errno == ENOENT ? JSMF_ENOTFOUND : JSMF_EIO, "%s: %s", path,
                          strerror(errno));
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len - 1 == 0) {
            char *nb = realloc(buf, cap * 2);
            if (!nb)
                free(buf);
            buf = nb;
            cap *= 2;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf)
        return jsmf_error(JSMF_ENOMEM, "%s: out of memory", path);
    if (bad) {
        free(buf);
        return jsmf_error(JSMF_EIO, "%s: read error", path);
    }
    buf[len] = 0;
    *out = buf;
    return 0;
}

/* Written whole or not at all (jsmf_out_open): a reader never sees half a page. */
static int write_page(const report_args *a, const jsmf_model *m)
{
    jsmf_out *o;
    int rc = jsmf_out_open(a->out, &o);
    if (rc)
        return rc;
    return jsmf_out_close(o, jsmf_report_write(jsmf_out_file(o), m, &a->opts));
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
        rc = read_text_file(a.metrics, &metrics);
    if (!rc) {
        a.opts.metrics_json = metrics;
        a.opts.title = a.title;
        a.opts.model_path = a.model;
        rc = write_page(&a, m);
    }
    if (!rc)
        cli_info("wrote %s (%u topics, %u words)", a.out, m->k, m->n);
    free(metrics);
    jsmf_model_free(m);
    if (rc)
        return cli_fail(rc);
    return strcmp(a.out, "-") ? EXIT_OK : cli_finish_stdout();
}
