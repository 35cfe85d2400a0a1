/* report.c — the self-contained HTML report of a model: the data (topics, A, hierarchy, a 2-D
 * projection of the words' topic profiles) as JSON embedded in the page, drawn by the inline
 * script of report_page.c. */
#include <cblas.h>
#include <lapacke.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsmf_eval.h"
#include "eval_util.h"
#include "report_page.h"
#include "core/out.h"
#include "eval_internal.h"
#include "model/json.h"

/* p(z) = row sums of A; uniform when A carries no mass. */
static void topic_sizes(const jsmf_model *m, double *p)
{
    double total = 0;
    for (uint32_t t = 0; t < m->k; t++) {
        p[t] = 0;
        for (uint32_t s = 0; s < m->k; s++)
            p[t] += m->A ? m->A[(uint64_t)t * m->k + s] : 0;
        total += p[t];
    }
    for (uint32_t t = 0; t < m->k; t++)
        p[t] = total > 0 ? p[t] / total : 1.0 / m->k;
}

/* Row w of B-breve, p(z | w) = B_wz p(z) / f_w, into r; returns the word's frequency
 * f_w = sum_z B_wz p(z). A word no topic produces gets the uniform profile. */
static double word_profile(const jsmf_model *m, const double *p, uint32_t w, double *r)
{
    const double *b = m->B + (uint64_t)w * m->k;
    double s = 0;
    for (uint32_t t = 0; t < m->k; t++)
        s += r[t] = b[t] * p[t];
    for (uint32_t t = 0; t < m->k; t++)
        r[t] = s > 0 ? r[t] / s : 1.0 / m->k;
    return s;
}

enum { PROJ_BLOCK = 1024 };

/* Principal axes of the rows of B-breve weighted by f, in passes over the words with one block
 * of rows in memory (the model may be large): the weighted mean, the covariance by blocked
 * SYRK, its eigenvectors (LAPACK), then xy = (r_w - mean) [v1 v2] and explained = the two
 * largest eigenvalues over the trace. Signs fixed so each axis's largest entry is positive. */
static int projection(const jsmf_model *m, double *xy, double *f, double *explained)
{
    uint32_t k = m->k, n = m->n;
    if (k < 2)
        return jsmf_error(JSMF_EINVAL, "report: a projection needs at least 2 topics");
    double *work = malloc(((uint64_t)PROJ_BLOCK * k + (uint64_t)k * k + 4 * (uint64_t)k) *
                          sizeof *work);
    if (!work)
        return jsmf_error(JSMF_ENOMEM, "report: out of memory for the projection");
    double *X = work, *cov = X + (uint64_t)PROJ_BLOCK * k, *mean = cov + (uint64_t)k * k;
    double *eig = mean + k, *p = eig + k, *r = p + k;
    topic_sizes(m, p);
    double ftot = 0;
    memset(mean, 0, k * sizeof *mean);
    for (uint32_t w = 0; w < n; w++) {
        ftot += f[w] = word_profile(m, p, w, r);
        for (uint32_t t = 0; t < k; t++)
            mean[t] += f[w] * r[t];
    }
    if (!(ftot > 0))
        ftot = 1;
    for (uint32_t t = 0; t < k; t++)
        mean[t] /= ftot;
    memset(cov, 0, (uint64_t)k * k * sizeof *cov);
    for (uint32_t w0 = 0; w0 < n; w0 += PROJ_BLOCK) {
        uint32_t rows = n - w0 < PROJ_BLOCK ? n - w0 : PROJ_BLOCK;
        for (uint32_t i = 0; i < rows; i++) {
            double *x = X + (uint64_t)i * k, sw = sqrt(f[w0 + i] / ftot);
            word_profile(m, p, w0 + i, x);
            for (uint32_t t = 0; t < k; t++)
                x[t] = sw * (x[t] - mean[t]);
        }
        cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, (int)k, (int)rows, 1.0, X, (int)k,
                    1.0, cov, (int)k);
    }
    int info = LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', 'U', (int)k, cov, (int)k, eig);
    if (info) {
        free(work);
        return jsmf_error(JSMF_ENUMERIC, "report: eigendecomposition failed (info %d)", info);
    }
    double trace = 0, sign[2];
    for (uint32_t t = 0; t < k; t++)
        trace += eig[t] > 0 ? eig[t] : 0;
    for (int a = 0; a < 2; a++) {
        uint32_t col = k - 1 - a; /* eigenvalues ascending: the last columns are the top axes */
        double big = 0;
        for (uint32_t t = 0; t < k; t++)
            if (fabs(cov[(uint64_t)t * k + col]) > fabs(big))
                big = cov[(uint64_t)t * k + col];
        sign[a] = big < 0 ? -1 : 1;
        explained[a] = trace > 0 && eig[col] > 0 ? eig[col] / trace : 0;
    }
    for (uint32_t w = 0; w < n; w++) {
        word_profile(m, p, w, r);
        for (int a = 0; a < 2; a++) {
            uint32_t col = k - 1 - a;
            double v = 0;
            for (uint32_t t = 0; t < k; t++)
                v += (r[t] - mean[t]) * cov[(uint64_t)t * k + col];
            xy[(uint64_t)w * 2 + a] = sign[a] * v;
        }
    }
    free(work);
    return 0;
}

int report_projection(const jsmf_model *m, double *xy)
{
    double *f = malloc((m->n ? m->n : 1) * sizeof *f), explained[2];
    if (!f)
        return jsmf_error(JSMF_ENOMEM, "report: out of memory");
    int rc = projection(m, xy, f, explained);
    free(f);
    return rc;
}

/* ---- writing ------------------------------------------------------------------------------ */

/* A JSON string safe inside an HTML <script> element: '<', '>' and '&' as \u escapes. */
static void put_jstr(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(f, "\\%c", *c);
        else if (*c < 0x20 || *c == '<' || *c == '>' || *c == '&')
            fprintf(f, "\\u%04x", *c);
        else
            fputc(*c, f);
    }
    fputc('"', f);
}

static void put_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.6g", v);
    else
        fputs("null", f);
}

/* Raw JSON text (summary.json, metrics) inside a <script>: every '<' escaped, which only occurs
 * inside strings in valid JSON, where \u003c means the same. */
static void put_raw_json(FILE *f, const char *id, const char *text)
{
    fprintf(f, "<script type=\"application/json\" id=\"%s\">", id);
    for (const char *c = text ? text : ""; *c; c++) {
        if (*c == '<')
            fputs("\\u003c", f);
        else
            fputc(*c, f);
    }
    fputs("</script>\n", f);
}

static void put_html_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

typedef struct { double v; uint32_t i; } scored;

static int by_value_desc(const void *a, const void *b)
{
    const scored *x = a, *y = b;
    if (x->v != y->v)
        return x->v < y->v ? 1 : -1;
    return (x->i > y->i) - (x->i < y->i);
}

/* Indices of the `top` largest of v[0..n) (stride `stride`), largest first; buf has room for
 * top entries. */
static void top_indices(const double *v, uint32_t n, uint64_t stride, uint32_t top, uint32_t *buf,
                        uint32_t *out)
{
    eval_top_indices(v, n, stride, top, buf, out);
}

/* One level: word distributions W (n x k, column = topic), A, anchors (labels), and for
 * higher levels the weights of the topics below (children, kb x k) with their labels. */
typedef struct {
    uint32_t n, k;
    const double *W, *A;
    const jsmf_vocab *vocab;
    const uint32_t *anchors;
    const double *alpha;      /* k Dirichlet parameters or NULL */
    const double *children;   /* kb x k: p(lower topic | this topic) or NULL */
    uint32_t kb;
    char **child_label;       /* kb labels */
    const double *rank;       /* n x k: what the top words are ranked by (NULL: W itself) */
} level_view;

static int put_level(FILE *f, const level_view *L, uint32_t top)
{
    uint32_t *buf = malloc((top + 8) * sizeof *buf);
    uint32_t *idx = malloc((top + 8) * sizeof *idx);
    double *p = malloc((L->k ? L->k : 1) * sizeof *p);
    if (!buf || !idx || !p) {
        free(buf), free(idx), free(p);
        return jsmf_error(JSMF_ENOMEM, "report: out of memory");
    }
    jsmf_model tmp = {.k = L->k, .A = (double *)L->A};
    topic_sizes(&tmp, p);
    fprintf(f, "{\"k\":%u,\"A\":[", L->k);
    for (uint32_t t = 0; t < L->k; t++) {
        fputs(t ? ",[" : "[", f);
        for (uint32_t s = 0; s < L->k; s++) {
            if (s)
                fputc(',', f);
            put_num(f, L->A ? L->A[(uint64_t)t * L->k + s] : 0);
        }
        fputc(']', f);
    }
    fputs("],\"topics\":[", f);
    for (uint32_t t = 0; t < L->k; t++) {
        fputs(t ? ",{\"size\":" : "{\"size\":", f);
        put_num(f, p[t]);
        if (L->alpha) {
            fputs(",\"alpha\":", f);
            put_num(f, L->alpha[t]);
        }
        fputs(",\"anchor\":", f);
        if (L->anchors && L->anchors[t] < L->n)
            put_jstr(f, L->vocab->words[L->anchors[t]]);
        else
            fputs("null", f);
        fputs(",\"words\":[", f);
        uint32_t nt = top < L->n ? top : L->n;
        top_indices((L->rank ? L->rank : L->W) + t, L->n, L->k, nt, buf, idx);
        for (uint32_t i = 0; i < nt; i++) {
            fputs(i ? ",[" : "[", f);
            put_jstr(f, L->vocab->words[idx[i]]);
            fputc(',', f);
            put_num(f, L->W[(uint64_t)idx[i] * L->k + t]);
            fputc(']', f);
        }
        fputc(']', f);
        if (L->children) {
            uint32_t nc = L->kb < 8 ? L->kb : 8;
            top_indices(L->children + t, L->kb, L->k, nc, buf, idx);
            fputs(",\"children\":[", f);
            for (uint32_t i = 0; i < nc; i++) {
                fprintf(f, "%s[%u,", i ? "," : "", idx[i]);
                put_num(f, L->children[(uint64_t)idx[i] * L->k + t]);
                fputc(',', f);
                put_jstr(f, L->child_label[idx[i]]);
                fputc(']', f);
            }
            fputc(']', f);
        }
        fputc('}', f);
    }
    fputs("]}", f);
    free(buf), free(idx), free(p);
    return 0;
}

/* Labels "w1 w2 w3" of the columns of W (n x k). */
static char **topic_labels(const double *W, const jsmf_vocab *v, uint32_t n, uint32_t k)
{
    char **lab = calloc(k ? k : 1, sizeof *lab);
    uint32_t *buf = malloc(3 * sizeof *buf);
    if (!lab || !buf) {
        free(lab), free(buf);
        return NULL;
    }
    for (uint32_t t = 0; t < k; t++) {
        uint32_t idx[3], nt = n < 3 ? n : 3;
        top_indices(W + t, n, k, nt, buf, idx);
        size_t len = 1;
        for (uint32_t i = 0; i < nt; i++)
            len += strlen(v->words[idx[i]]) + 1;
        lab[t] = calloc(len, 1);
        for (uint32_t i = 0; lab[t] && i < nt; i++) {
            if (i)
                strcat(lab[t], " ");
            strcat(lab[t], v->words[idx[i]]);
        }
    }
    free(buf);
    return lab;
}

static void free_labels(char **lab, uint32_t k)
{
    for (uint32_t t = 0; lab && t < k; t++)
        free(lab[t]);
    free(lab);
}

/* All levels: level 0 is the model itself; a sub-level over the topics below (sub->n equals the
 * lower K) gets word distributions W_lower * B_sub, one over words (sub->n == N) its own B. */
static int put_levels(FILE *f, const jsmf_model *m, uint32_t top)
{
    /* the words of level 0 ranked as 'jsmf topics' ranks them (relevance) */
    level_view L0 = {m->n, m->k, m->B, m->A, m->vocab, m->anchors, m->alpha, NULL, 0, NULL, NULL};
    double *pw = malloc(sizeof(double) * (m->n ? m->n : 1));
    size_t nk = (size_t)m->n * m->k;
    double *rel = malloc(sizeof(double) * (nk > 0 ? nk : 1));
    if (pw && rel) {
        jsmf_model_word_marginal(m, pw);
        jsmf_model_relevance(m, JSMF_TOPWORDS_LAMBDA, pw, rel);
        L0.rank = rel;
    }
    fputs("\"levels\":[", f);
    int rc = put_level(f, &L0, top);
    free(pw), free(rel);
    const double *Wlow = m->B;
    uint32_t klow = m->k;
    double *owned = NULL;
    for (const jsmf_model *s = m->sub; !rc && s; s = s->sub) {
        level_view L = {m->n, s->k, NULL, s->A, m->vocab, NULL, s->alpha, NULL, 0, NULL, NULL};
        double *W = NULL;
        if (s->n == klow) {
            W = malloc((uint64_t)m->n * s->k * sizeof *W);
            if (!W) {
                rc = jsmf_error(JSMF_ENOMEM, "report: out of memory");
                break;
            }
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m->n, (int)s->k,
                        (int)klow, 1.0, Wlow, (int)klow, s->B, (int)s->k, 0.0, W, (int)s->k);
            L.W = W;
            L.children = s->B;
            L.kb = klow;
            L.child_label = topic_labels(Wlow, m->vocab, m->n, klow);
        } else if (s->n == m->n) {
            L.W = s->B;
            L.anchors = s->anchors;
        } else {
            break; /* a level this page cannot place: shown no further */
        }
        fputc(',', f);
        rc = put_level(f, &L, top);
        free_labels(L.child_label, L.kb);
        free(owned);
        owned = W;
        Wlow = L.W;
        klow = s->k;
    }
    free(owned);
    fputs("]", f);
    return rc;
}

static int put_points(FILE *f, const jsmf_model *m, uint32_t max_points)
{
    fputs("\"points\":[", f);
    if (m->k < 2 || m->n == 0) {
        fputs("],\"explained\":[0,0]", f);
        return 0;
    }
    double *xy = malloc((uint64_t)m->n * 2 * sizeof *xy), *fr = malloc(m->n * sizeof *fr);
    double *p = malloc(m->k * sizeof *p);
    scored *buf = malloc(m->n * sizeof *buf);
    unsigned char *is_anchor = calloc(m->n, 1);
    double explained[2] = {0, 0};
    int rc = xy && fr && p && buf && is_anchor ? projection(m, xy, fr, explained)
                                               : jsmf_error(JSMF_ENOMEM, "report: out of memory");
    if (!rc) {
        topic_sizes(m, p);
        for (uint32_t t = 0; m->anchors && t < m->k; t++)
            if (m->anchors[t] < m->n)
                is_anchor[m->anchors[t]] = 1;
        for (uint32_t w = 0; w < m->n; w++)
            buf[w].v = fr[w], buf[w].i = w;
        qsort(buf, m->n, sizeof *buf, by_value_desc);
        uint32_t drawn = 0;
        for (uint32_t r = 0; r < m->n; r++) {
            uint32_t w = buf[r].i;
            if (r >= max_points && !is_anchor[w])
                continue;
            uint32_t best = 0; /* the word's most likely topic, p(z|w) ~ B_wz p(z) */
            for (uint32_t t = 1; t < m->k; t++)
                if (m->B[(uint64_t)w * m->k + t] * p[t] > m->B[(uint64_t)w * m->k + best] * p[best])
                    best = t;
            if (is_anchor[w]) /* an anchor stands for the topic it anchors */
                for (uint32_t t = 0; t < m->k; t++)
                    if (m->anchors[t] == w)
                        best = t;
            fputs(drawn++ ? ",[" : "[", f);
            put_num(f, xy[(uint64_t)w * 2]);
            fputc(',', f);
            put_num(f, xy[(uint64_t)w * 2 + 1]);
            fputc(',', f);
            put_jstr(f, m->vocab->words[w]);
            fprintf(f, ",%u,", best);
            put_num(f, fr[w]);
            fprintf(f, ",%d]", is_anchor[w]);
        }
    }
    fputs("],\"explained\":[", f);
    put_num(f, explained[0]);
    fputc(',', f);
    put_num(f, explained[1]);
    fputc(']', f);
    free(xy), free(fr), free(p), free(buf), free(is_anchor);
    return rc;
}

/* The last component of `path` ("runs/kjv-model/" gives "kjv-model"), into buf. */
static const char *path_name(const char *path, char *buf, size_t size)
{
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/')
        len--;
    size_t start = len;
    while (start > 0 && path[start - 1] != '/')
        start--;
    snprintf(buf, size, "%.*s", (int)(len - start), path + start);
    return buf;
}

/* "NAME: K topics from SOURCE": a page names the model directory (resolved, so "." and
 * "../model" name the real directory) and what it was fitted on, not just the path typed. */
static char *default_title(const jsmf_model *m, const char *model_path)
{
    char name[PATH_MAX], resolved[PATH_MAX], from[PATH_MAX] = "";
    if (!model_path)
        snprintf(name, sizeof name, "jsmf topic model");
    else
        path_name(realpath(model_path, resolved) ? resolved : model_path, name, sizeof name);
    char *source = NULL;
    if (m->summary_json && json_get_string(m->summary_json, "store.path", &source) &&
        json_get_string(m->summary_json, "parameters.input", &source))
        source = NULL;
    if (source && *source)
        path_name(source, from, sizeof from);
    free(source);
    size_t len = strlen(name) + strlen(from) + 64;
    char *title = malloc(len);
    if (title)
        snprintf(title, len, "%s: %u topics%s%s", name, m->k, *from ? " from " : "", from);
    return title;
}

/* A model fitted after a previous one (summary.json "lineage"): what changed since it, as
 * 'jsmf diff --format json' prints it, when the previous model is still at its recorded path
 * (else the page shows the lineage of summary.json alone). */
static void put_diff(FILE *f, const jsmf_model *m)
{
    jsmf_lineage l;
    if (jsmf_model_lineage_read(m, &l)) {
        jsmf_error_clear(); /* a model without lineage: no section data */
        return;
    }
    jsmf_model *prev = NULL;
    jsmf_diff *d = NULL;
    jsmf_diff_opts o;
    jsmf_diff_opts_init(&o);
    o.old_name = l.prev_path;
    o.top = 8;
    char *text = NULL;
    size_t len = 0;
    FILE *mf = NULL;
    if (l.prev_path && !jsmf_model_load(l.prev_path, &prev) && !jsmf_model_diff(prev, m, &o, &d) &&
        d->recorded && (mf = open_memstream(&text, &len))) {
        o.format = JSMF_TOPICS_JSON;
        jsmf_diff_write(mf, d, &o);
        if (!fclose(mf))
            put_raw_json(f, "jsmf-diff", text);
    }
    jsmf_error_clear(); /* a previous model gone is no error of the report */
    free(text);
    jsmf_diff_free(d);
    jsmf_model_free(prev);
    jsmf_lineage_free(&l);
}

int jsmf_report_write(FILE *f, const jsmf_model *m, const jsmf_report_opts *opts)
{
    jsmf_report_opts o = JSMF_REPORT_OPTS_DEFAULT;
    if (opts)
        o = *opts;
    if (!m->vocab || m->vocab->n != m->n)
        return jsmf_error(JSMF_EINVAL, "report: the model has no vocabulary of %u words", m->n);
    char *made = o.title ? NULL : default_title(m, o.model_path);
    if (!o.title && !made)
        return jsmf_error(JSMF_ENOMEM, "report: out of memory");
    const char *title = o.title ? o.title : made;
    const char *mark = strstr(jsmf_report_head, "@TITLE@");
    /* The head has the placeholder twice (<title> and <h1>): write around both. */
    const char *h = jsmf_report_head;
    while ((mark = strstr(h, "@TITLE@"))) {
        fwrite(h, 1, (size_t)(mark - h), f);
        put_html_text(f, title);
        h = mark + strlen("@TITLE@");
    }
    fputs(h, f);
    free(made);
    fputs("<script type=\"application/json\" id=\"jsmf-data\">{\"version\":", f);
    put_jstr(f, jsmf_version());
    fprintf(f, ",\"n\":%u,\"kind\":%s,", m->n, m->anchors ? "\"anchor-word model\"" : "null");
    int rc = put_levels(f, m, o.top);
    if (!rc) {
        fputc(',', f);
        rc = put_points(f, m, o.max_points);
    }
    fputs("}</script>\n", f);
    put_raw_json(f, "jsmf-summary", m->summary_json);
    put_raw_json(f, "jsmf-metrics", o.metrics_json);
    put_diff(f, m);
    fputs("<script>\n", f);
    fputs(jsmf_report_script, f);
    fputs("</script>\n</body>\n</html>\n", f);
    if (!rc && ferror(f))
        rc = jsmf_error(JSMF_EIO, "report: write error");
    return rc;
}

int jsmf_report_save(const char *path, const jsmf_model *m, const jsmf_report_opts *opts)
{
    jsmf_out *o;
    int rc = out_open(path, &o);
    if (rc)
        return rc;
    return out_close(o, jsmf_report_write(out_file(o), m, opts));
}

void jsmf_report_opts_init(jsmf_report_opts *o)
{
    *o = (jsmf_report_opts)JSMF_REPORT_OPTS_DEFAULT;
}
