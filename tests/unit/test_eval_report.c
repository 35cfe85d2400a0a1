/* test_eval_report.c — the report's word projection puts anchor words at the corners of the
 * projected simplex, the page is written whole (data, script, no external references), and the
 * default title names the model directory and the store it was fitted on.
 * Leaves the page in $BUILD/test-report-unit.html for the browser test. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "jsmf_eval.h"
#include "eval/eval_internal.h"

enum { N = 600, K = 6 };

/* The <title> of the page jsmf_report_write gives `m` for the model directory `path`. */
static void page_title(const jsmf_model *m, const char *path, char *out, size_t size)
{
    jsmf_report_opts o = JSMF_REPORT_OPTS_DEFAULT;
    o.model_path = path;
    o.max_points = 10;
    FILE *f = tmpfile();
    out[0] = 0;
    CHECK(f != NULL);
    if (!f)
        return;
    CHECK_OK(jsmf_report_write(f, m, &o));
    rewind(f);
    static char head[4096];
    size_t len = fread(head, 1, sizeof head - 1, f);
    head[len] = 0;
    fclose(f);
    char *a = strstr(head, "<title>"), *b = a ? strstr(a, "</title>") : NULL;
    CHECK(a && b);
    if (a && b)
        snprintf(out, size, "%.*s", (int)(b - a - 7), a + 7);
}

int main(void)
{
    static double B[N * K], A[K * K], xy[N * 2];
    static char buf[N][16];
    char *words[N];
    uint32_t anchors[K];
    uint64_t s = 12345;
    for (int w = 0; w < N; w++) {
        snprintf(buf[w], sizeof buf[w], w == 7 ? "a<b>&\"c" : "word%d", w);
        words[w] = buf[w];
    }
    for (int t = 0; t < K; t++)
        anchors[t] = 100 * t + 3;
    for (int t = 0; t < K; t++) {
        double sum = 0;
        for (int w = 0; w < N; w++) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            double v = (s >> 11) * (1.0 / 9007199254740992.0);
            v = v * v * v;
            for (int u = 0; u < K; u++) /* an anchor word belongs to its topic only */
                if (w == (int)anchors[u] && u != t)
                    v = 0;
            if (w == (int)anchors[t])
                v = 2;
            sum += B[w * K + t] = v;
        }
        for (int w = 0; w < N; w++)
            B[w * K + t] /= sum;
        for (int u = 0; u < K; u++)
            A[t * K + u] = (t == u ? 4.0 : 1.0 + (t + u) % 3) / (K * 4.0 + K * (K - 1) * 2.0);
    }
    jsmf_vocab voc = {N, words, NULL, NULL};
    jsmf_model m = {.n = N, .k = K, .vocab = &voc, .B = B, .A = A, .anchors = anchors,
                    .summary_json = "{\"k\": 6, \"note\": \"</script><b>x</b>\"}"};
    CHECK_OK(report_projection(&m, xy));
    /* The projected points are convex combinations of the anchors' points (B-breve rows are in
     * the simplex spanned by the anchors' unit rows): the extreme x and y values are anchors. */
    int ext[4] = {0, 0, 0, 0};
    for (int w = 1; w < N; w++) {
        if (xy[w * 2] < xy[ext[0] * 2]) ext[0] = w;
        if (xy[w * 2] > xy[ext[1] * 2]) ext[1] = w;
        if (xy[w * 2 + 1] < xy[ext[2] * 2 + 1]) ext[2] = w;
        if (xy[w * 2 + 1] > xy[ext[3] * 2 + 1]) ext[3] = w;
    }
    for (int e = 0; e < 4; e++) {
        int is_anchor = 0;
        for (int t = 0; t < K; t++)
            is_anchor |= ext[e] == (int)anchors[t];
        CHECK(is_anchor);
    }

    const char *dir = getenv("BUILD") ? getenv("BUILD") : "build";
    char path[4096];
    snprintf(path, sizeof path, "%s/test-report-unit.html", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f)
        CHECK_DONE();
    jsmf_report_opts o = JSMF_REPORT_OPTS_DEFAULT;
    o.title = "unit <test> & report";
    o.metrics_json = "{\"coherence\": -123.5, \"heldout_loglik_per_token\": -6.25}";
    CHECK_OK(jsmf_report_write(f, &m, &o));
    fclose(f);
    f = fopen(path, "r");
    static char page[1 << 22];
    size_t len = fread(page, 1, sizeof page - 1, f);
    fclose(f);
    page[len] = 0;
    CHECK(strstr(page, "<!DOCTYPE html>") == page);
    CHECK(strstr(page, "</html>") != NULL);
    CHECK(strstr(page, "unit &lt;test&gt; &amp; report") != NULL);
    CHECK(strstr(page, "</script><b>") == NULL); /* embedded text cannot close the script */
    CHECK(strstr(page, "a\\u003cb\\u003e\\u0026\\\"c") != NULL);
    CHECK(strstr(page, "http://") == NULL || strstr(page, "http://www.w3.org/2000/svg") != NULL);
    CHECK(strstr(page, "https://") == NULL);
    CHECK(strstr(page, "src=") == NULL);
    CHECK(strstr(page, "\"word103\"") != NULL); /* an anchor */

    char title[512], cwd[PATH_MAX], want[PATH_MAX + 64];
    m.summary_json = "{\"k\": 6, \"store\": {\"path\": \"/data/kjv-store/\", \"docs\": 9}}";
    page_title(&m, "runs/kjv-model/", title, sizeof title);
    CHECK(!strcmp(title, "kjv-model: 6 topics from kjv-store"));
    m.summary_json = "{\"k\": 6, \"parameters\": {\"input\": \"c.npy\"}}";
    page_title(&m, "m", title, sizeof title);
    CHECK(!strcmp(title, "m: 6 topics from c.npy"));
    m.summary_json = NULL;
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    snprintf(want, sizeof want, "%s: 6 topics", strrchr(cwd, '/') ? strrchr(cwd, '/') + 1 : cwd);
    page_title(&m, ".", title, sizeof title); /* "." names the directory itself */
    CHECK(!strcmp(title, want));
    CHECK_DONE();
}
