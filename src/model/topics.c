/* topics.c — the topics of a model for people and scripts (jsmf topics): top words, anchor, size
 * p(z) = A 1 and alpha as aligned text, TSV or JSON with the A matrix; A alone as a matrix. */
#include <stdlib.h>
#include <string.h>

#include "jsmf_model.h"
#include "json.h"

static const char *anchor_word(const jsmf_model *m, uint32_t t)
{
    return m->anchors ? m->vocab->words[m->anchors[t]] : NULL;
}

static void print_text(FILE *f, const jsmf_model *m, const jsmf_topics_opts *o, const double *pz,
                       const double *pw)
{
    char *kind = NULL;
    if (m->summary_json)
        json_get_string(m->summary_json, "kind", &kind);
    fprintf(f, "%s", o->name);
    if (o->level)
        fprintf(f, " level %u", o->level);
    fprintf(f, ": %s model, %u topics over %u %s\n", kind ? kind : "jsmf", m->k, m->n,
           o->level ? "topics of the level below" : "words");
    free(kind);
    int aw = 6;
    for (uint32_t t = 0; t < m->k && m->anchors; t++) {
        int len = (int)strlen(anchor_word(m, t));
        if (len > aw)
            aw = len < 24 ? len : 24;
    }
    uint32_t *ids = malloc((o->top ? o->top : 1) * sizeof *ids);
    fprintf(f, "%5s %7s", "topic", "size");
    if (m->anchors)
        fprintf(f, "  %-*s", aw, "anchor");
    fprintf(f, "  top words\n");
    for (uint32_t t = 0; t < m->k; t++) {
        fprintf(f, "%5u %6.2f%%", t, 100 * pz[t]);
        if (m->anchors)
            fprintf(f, "  %-*s", aw, anchor_word(m, t));
        fprintf(f, " ");
        uint32_t n = ids ? jsmf_model_top_words_rank(m, t, o->top, o->lambda, pw, ids) : 0;
        for (uint32_t r = 0; r < n; r++)
            fprintf(f, " %s", m->vocab->words[ids[r]]);
        fprintf(f, "\n");
    }
    free(ids);
}

static void print_tsv(FILE *f, const jsmf_model *m, const jsmf_topics_opts *o, const double *pz,
                       const double *pw)
{
    uint32_t *ids = malloc((o->top ? o->top : 1) * sizeof *ids);
    fprintf(f, "topic\tsize\talpha\tanchor\ttop_words\n");
    for (uint32_t t = 0; t < m->k; t++) {
        fprintf(f, "%u\t%.6g\t", t, pz[t]);
        if (m->alpha)
            fprintf(f, "%.6g", m->alpha[t]);
        fprintf(f, "\t%s\t", m->anchors ? anchor_word(m, t) : "");
        uint32_t n = ids ? jsmf_model_top_words_rank(m, t, o->top, o->lambda, pw, ids) : 0;
        for (uint32_t r = 0; r < n; r++)
            fprintf(f, "%s%s", r ? " " : "", m->vocab->words[ids[r]]);
        fprintf(f, "\n");
    }
    free(ids);
}

static void print_matrix(FILE *f, const jsmf_model *m, int tsv)
{
    if (tsv) {
        for (uint32_t a = 0; a < m->k; a++)
            for (uint32_t b = 0; b < m->k; b++)
                fprintf(f, "%.17g%c", m->A[(size_t)a * m->k + b], b + 1 < m->k ? '\t' : '\n');
        return;
    }
    fprintf(f, "%5s", "A");
    for (uint32_t b = 0; b < m->k; b++)
        fprintf(f, " %9u", b);
    fprintf(f, "\n");
    for (uint32_t a = 0; a < m->k; a++) {
        fprintf(f, "%5u", a);
        for (uint32_t b = 0; b < m->k; b++)
            fprintf(f, " %9.3e", m->A[(size_t)a * m->k + b]);
        fprintf(f, "\n");
    }
}

/* A numeric row on one line even in pretty output: K x K stays K lines. */
static void json_row(jsmf_json *j, const char *key, const double *v, uint32_t n)
{
    json_begin_array(j, key);
    int pretty = j->pretty;
    j->pretty = 0;
    for (uint32_t i = 0; i < n; i++)
        json_number(j, NULL, v[i]);
    json_end_array(j);
    j->pretty = pretty;
}

static void print_json(FILE *f, const jsmf_model *m, const jsmf_topics_opts *o, const double *pz,
                       const double *pw, int levels)
{
    jsmf_json j;
    json_init(&j, f, 1);
    json_begin_object(&j, NULL);
    json_string(&j, "model", o->name);
    char *kind = NULL;
    if (m->summary_json && json_get_string(m->summary_json, "kind", &kind) == 0)
        json_string(&j, "kind", kind);
    free(kind);
    json_uint(&j, "level", o->level);
    json_int(&j, "levels", levels);
    json_uint(&j, "k", m->k);
    json_uint(&j, "n_words", m->n);
    json_number(&j, "rank_lambda", o->lambda);
    json_begin_array(&j, "topics");
    uint32_t *ids = malloc((o->top ? o->top : 1) * sizeof *ids);
    for (uint32_t t = 0; t < m->k; t++) {
        json_begin_object(&j, NULL);
        json_uint(&j, "topic", t);
        json_number(&j, "size", pz[t]);
        if (m->alpha)
            json_number(&j, "alpha", m->alpha[t]);
        if (m->anchors) {
            json_begin_object(&j, "anchor");
            json_uint(&j, "id", m->anchors[t]);
            json_string(&j, "word", anchor_word(m, t));
            json_end_object(&j);
        } else {
            json_null(&j, "anchor");
        }
        json_begin_array(&j, "words");
        uint32_t n = ids ? jsmf_model_top_words_rank(m, t, o->top, o->lambda, pw, ids) : 0;
        for (uint32_t r = 0; r < n; r++) {
            int pretty = j.pretty;
            json_begin_object(&j, NULL);
            j.pretty = 0;
            json_string(&j, "word", m->vocab->words[ids[r]]);
            json_uint(&j, "id", ids[r]);
            json_number(&j, "p", m->B[(size_t)ids[r] * m->k + t]);
            json_end_object(&j);
            j.pretty = pretty;
        }
        json_end_array(&j);
        json_end_object(&j);
    }
    free(ids);
    json_end_array(&j);
    json_begin_array(&j, "A");
    for (uint32_t a = 0; a < m->k; a++)
        json_row(&j, NULL, m->A + (size_t)a * m->k, m->k);
    json_end_array(&j);
    if (m->alpha)
        json_row(&j, "alpha", m->alpha, m->k);
    else
        json_null(&j, "alpha");
    json_end_object(&j);
}

int jsmf_model_topics_write(FILE *f, const jsmf_model *model, const jsmf_topics_opts *opts)
{
    int levels = 0;
    for (jsmf_model *s = model->sub; s; s = s->sub)
        levels++;
    const jsmf_model *m = model;
    for (uint32_t l = 0; l < opts->level && m; l++)
        m = m->sub;
    if (!m)
        return jsmf_error(JSMF_ENOTFOUND, "%s: no level %u (the model has levels 0..%d)",
                          opts->name, opts->level, levels);
    jsmf_topics_opts o = *opts;
    if (o.top > m->n)
        o.top = m->n; /* also bounds the word buffers of the printers */
    double *pz = malloc(m->k * sizeof *pz);
    if (!pz)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    jsmf_model_topic_sizes(m, pz);
    double *pw = o.lambda < 1 ? malloc(sizeof(double) * m->n) : NULL;
    if (pw)
        jsmf_model_word_marginal(m, pw);
    if (o.format == JSMF_TOPICS_JSON)
        print_json(f, m, &o, pz, pw, levels);
    else if (o.matrix)
        print_matrix(f, m, o.format == JSMF_TOPICS_TSV);
    else if (o.format == JSMF_TOPICS_TSV)
        print_tsv(f, m, &o, pz, pw);
    else
        print_text(f, m, &o, pz, pw);
    free(pz), free(pw);
    return JSMF_OK;
}

void jsmf_topics_opts_init(jsmf_topics_opts *o)
{
    *o = (jsmf_topics_opts){.top = 10, .lambda = JSMF_TOPWORDS_LAMBDA, .format = JSMF_TOPICS_TEXT};
}
