/* cmd_topics.c — 'jsmf topics': the topics of a model (top words, anchor, size p(z) = A 1,
 * alpha) as text for people, TSV for scripts or JSON with the A matrix; --matrix prints A. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jsmf_model.h"

enum topics_format { FMT_TEXT, FMT_TSV, FMT_JSON };

typedef struct topics_opts {
    const char *model;
    double lambda;      /* relevance weight of the ranking; 1: by p(word | topic) */
    const double *pw;   /* the model's unigram, for the ranking */
    uint32_t top;
    uint32_t level;
    int format;
    int matrix;
} topics_opts;

/* --rank prob|relevance[:LAMBDA]: the lambda of the ranking. */
static int parse_rank(const cli_option *opt, const char *v)
{
    double *lambda = opt->field;
    if (!strcmp(v, "prob")) {
        *lambda = 1;
    } else if (!strcmp(v, "relevance")) {
        *lambda = JSMF_TOPWORDS_LAMBDA;
    } else if (!strncmp(v, "relevance:", 10)) {
        int rc = cli_parse_double("--rank", v + 10, lambda);
        if (rc)
            return rc;
        if (!(*lambda >= 0 && *lambda <= 1))
            return cli_usage_error("--rank: lambda must be in [0, 1]");
    } else {
        return cli_usage_error("--rank: unknown value '%s' (prob, relevance[:LAMBDA])", v);
    }
    return 0;
}

static int parse_topics_args(int argc, char **argv, topics_opts *o)
{
    o->top = 10, o->format = FMT_TEXT, o->lambda = JSMF_TOPWORDS_LAMBDA;
    const cli_option options[] = {
        {CLI_OPT("--top", 'n', "N", CLI_U32, &o->top, "words per topic (default 10)")},
        {CLI_OPT("--rank", 0, "prob|relevance[:LAMBDA]", CLI_CALL, &o->lambda,
         "ranking of the top words (default relevance:0.7; prob is relevance:1)"),
         .call = parse_rank},
        {CLI_OPT("--format", 'f', "F", CLI_CHOICE, &o->format,
         "text (default; aligned for reading), tsv (one row per topic: topic, size, alpha, "
         "anchor, top words separated by spaces) or json (topics with word probabilities, "
         "the A matrix and alpha)"),
         .choices = "text|tsv|json"},
        {CLI_OPT("--level", 0, "L", CLI_U32, &o->level,
         "hierarchy level: 0 the model itself (default), L its levelL/ whose 'words' are the "
         "topics of the level below")},
        {CLI_OPT("--matrix", 0, NULL, CLI_FLAG, &o->matrix,
         "print the topic-topic matrix A instead (text or tsv: K rows of K; json always "
         "includes it)")},
        {0},
    };
    const cli_spec spec = {
        "usage: jsmf topics MODEL [--top N] [--format text|tsv|json] [--level L]\n"
        "                   [--rank prob|relevance[:LAMBDA]] [--matrix]\n"
        "\n"
        "Print the topics of a model: the top words of each topic, its anchor word and\n"
        "its size p(z) = A 1. Words are ranked by relevance, lambda log p(w|z) +\n"
        "(1 - lambda) log(p(w|z) / p(w)) with lambda 0.7: what a topic says more than\n"
        "the corpus does, rather than the words frequent in every topic (--rank prob:\n"
        "by p(w|z)).\n"
        "\n",
        options,
        "B.npy and A.npy in MODEL are plain numpy files: numpy.load('MODEL/B.npy').\n"
        "exit status: 0 success, 1 unreadable or invalid model, 2 usage error.\n",
    };
    int n, rc = cli_parse(&spec, argc, argv, &n);
    if (rc)
        return rc;
    if (n == 0)
        return cli_usage_error("which MODEL?");
    if (n > 1)
        return cli_usage_error("unexpected argument '%s'", argv[2]);
    o->model = argv[1];
    return 0;
}

static const char *anchor_word(const jsmf_model *m, uint32_t t)
{
    return m->anchors ? m->vocab->words[m->anchors[t]] : NULL;
}

static void print_text(const jsmf_model *m, const topics_opts *o, const double *pz)
{
    char *kind = NULL;
    if (m->summary_json)
        jsmf_json_get_string(m->summary_json, "kind", &kind);
    printf("%s", o->model);
    if (o->level)
        printf(" level %u", o->level);
    printf(": %s model, %u topics over %u %s\n", kind ? kind : "jsmf", m->k, m->n,
           o->level ? "topics of the level below" : "words");
    free(kind);
    int aw = 6;
    for (uint32_t t = 0; t < m->k && m->anchors; t++) {
        int len = (int)strlen(anchor_word(m, t));
        if (len > aw)
            aw = len < 24 ? len : 24;
    }
    uint32_t *ids = malloc((o->top ? o->top : 1) * sizeof *ids);
    printf("%5s %7s", "topic", "size");
    if (m->anchors)
        printf("  %-*s", aw, "anchor");
    printf("  top words\n");
    for (uint32_t t = 0; t < m->k; t++) {
        printf("%5u %6.2f%%", t, 100 * pz[t]);
        if (m->anchors)
            printf("  %-*s", aw, anchor_word(m, t));
        printf(" ");
        uint32_t n = ids ? jsmf_model_top_words_rank(m, t, o->top, o->lambda, o->pw, ids) : 0;
        for (uint32_t r = 0; r < n; r++)
            printf(" %s", m->vocab->words[ids[r]]);
        printf("\n");
    }
    free(ids);
}

static void print_tsv(const jsmf_model *m, const topics_opts *o, const double *pz)
{
    uint32_t *ids = malloc((o->top ? o->top : 1) * sizeof *ids);
    printf("topic\tsize\talpha\tanchor\ttop_words\n");
    for (uint32_t t = 0; t < m->k; t++) {
        printf("%u\t%.6g\t", t, pz[t]);
        if (m->alpha)
            printf("%.6g", m->alpha[t]);
        printf("\t%s\t", m->anchors ? anchor_word(m, t) : "");
        uint32_t n = ids ? jsmf_model_top_words_rank(m, t, o->top, o->lambda, o->pw, ids) : 0;
        for (uint32_t r = 0; r < n; r++)
            printf("%s%s", r ? " " : "", m->vocab->words[ids[r]]);
        printf("\n");
    }
    free(ids);
}

static void print_matrix(const jsmf_model *m, int tsv)
{
    if (tsv) {
        for (uint32_t a = 0; a < m->k; a++)
            for (uint32_t b = 0; b < m->k; b++)
                printf("%.17g%c", m->A[(size_t)a * m->k + b], b + 1 < m->k ? '\t' : '\n');
        return;
    }
    printf("%5s", "A");
    for (uint32_t b = 0; b < m->k; b++)
        printf(" %9u", b);
    printf("\n");
    for (uint32_t a = 0; a < m->k; a++) {
        printf("%5u", a);
        for (uint32_t b = 0; b < m->k; b++)
            printf(" %9.3e", m->A[(size_t)a * m->k + b]);
        printf("\n");
    }
}

/* A numeric row on one line even in pretty output: K x K stays K lines. */
static void json_row(jsmf_json *j, const char *key, const double *v, uint32_t n)
{
    jsmf_json_begin_array(j, key);
    int pretty = j->pretty;
    j->pretty = 0;
    for (uint32_t i = 0; i < n; i++)
        jsmf_json_number(j, NULL, v[i]);
    jsmf_json_end_array(j);
    j->pretty = pretty;
}

static void print_json(const jsmf_model *m, const topics_opts *o, const double *pz, int levels)
{
    jsmf_json j;
    jsmf_json_init(&j, stdout, 1);
    jsmf_json_begin_object(&j, NULL);
    jsmf_json_string(&j, "model", o->model);
    char *kind = NULL;
    if (m->summary_json && jsmf_json_get_string(m->summary_json, "kind", &kind) == 0)
        jsmf_json_string(&j, "kind", kind);
    free(kind);
    jsmf_json_uint(&j, "level", o->level);
    jsmf_json_int(&j, "levels", levels);
    jsmf_json_uint(&j, "k", m->k);
    jsmf_json_uint(&j, "n_words", m->n);
    jsmf_json_number(&j, "rank_lambda", o->lambda);
    jsmf_json_begin_array(&j, "topics");
    uint32_t *ids = malloc((o->top ? o->top : 1) * sizeof *ids);
    for (uint32_t t = 0; t < m->k; t++) {
        jsmf_json_begin_object(&j, NULL);
        jsmf_json_uint(&j, "topic", t);
        jsmf_json_number(&j, "size", pz[t]);
        if (m->alpha)
            jsmf_json_number(&j, "alpha", m->alpha[t]);
        if (m->anchors) {
            jsmf_json_begin_object(&j, "anchor");
            jsmf_json_uint(&j, "id", m->anchors[t]);
            jsmf_json_string(&j, "word", anchor_word(m, t));
            jsmf_json_end_object(&j);
        } else {
            jsmf_json_null(&j, "anchor");
        }
        jsmf_json_begin_array(&j, "words");
        uint32_t n = ids ? jsmf_model_top_words_rank(m, t, o->top, o->lambda, o->pw, ids) : 0;
        for (uint32_t r = 0; r < n; r++) {
            int pretty = j.pretty;
            jsmf_json_begin_object(&j, NULL);
            j.pretty = 0;
            jsmf_json_string(&j, "word", m->vocab->words[ids[r]]);
            jsmf_json_uint(&j, "id", ids[r]);
            jsmf_json_number(&j, "p", m->B[(size_t)ids[r] * m->k + t]);
            jsmf_json_end_object(&j);
            j.pretty = pretty;
        }
        jsmf_json_end_array(&j);
        jsmf_json_end_object(&j);
    }
    free(ids);
    jsmf_json_end_array(&j);
    jsmf_json_begin_array(&j, "A");
    for (uint32_t a = 0; a < m->k; a++)
        json_row(&j, NULL, m->A + (size_t)a * m->k, m->k);
    jsmf_json_end_array(&j);
    if (m->alpha)
        json_row(&j, "alpha", m->alpha, m->k);
    else
        jsmf_json_null(&j, "alpha");
    jsmf_json_end_object(&j);
}

int cmd_topics(int argc, char **argv)
{
    topics_opts o = {0};
    int rc = parse_topics_args(argc, argv, &o);
    if (rc < 0)
        return cli_finish_stdout();
    if (rc)
        return rc;
    jsmf_model *model = NULL;
    if ((rc = jsmf_model_load(o.model, &model)))
        return cli_fail(rc);
    int levels = 0;
    for (jsmf_model *s = model->sub; s; s = s->sub)
        levels++;
    const jsmf_model *m = model;
    for (uint32_t l = 0; l < o.level && m; l++)
        m = m->sub;
    if (!m) {
        jsmf_model_free(model);
        jsmf_error(JSMF_ENOTFOUND, "%s: no level %u (the model has levels 0..%d)", o.model,
                   o.level, levels);
        return cli_fail(JSMF_ENOTFOUND);
    }
    double *pz = malloc(m->k * sizeof *pz);
    if (!pz) {
        jsmf_model_free(model);
        return cli_fail(JSMF_ENOMEM);
    }
    jsmf_model_topic_sizes(m, pz);
    double *pw = o.lambda < 1 ? malloc(sizeof(double) * m->n) : NULL;
    if (pw)
        jsmf_model_word_marginal(m, pw);
    o.pw = pw;
    if (o.top > m->n)
        o.top = m->n; /* also bounds the word buffers below */
    if (o.format == FMT_JSON)
        print_json(m, &o, pz, levels);
    else if (o.matrix)
        print_matrix(m, o.format == FMT_TSV);
    else if (o.format == FMT_TSV)
        print_tsv(m, &o, pz);
    else
        print_text(m, &o, pz);
    free(pz), free(pw);
    jsmf_model_free(model);
    return cli_finish_stdout();
}
