/* diff_write.c — a jsmf_diff printed as text for people, TSV for scripts or JSON
 * (formats/outputs.md, "jsmf diff"). */
#include <math.h>
#include <stdio.h>

#include "jsmf_model.h"
#include "json.h"

static const char *status_of(const jsmf_diff_topic *t)
{
    return t->topic == JSMF_TOPIC_NONE ? "retired" : t->prev == JSMF_TOPIC_NONE ? "new"
                                                                                : "continuing";
}

static const char *lineage_source(const jsmf_diff *d)
{
    return d->recorded ? "recorded by NEW (fit --previous)" : "computed";
}

/* "word(+0.0123) ..." for text; changes for a continuing topic, probabilities otherwise. */
static void text_words(FILE *f, const jsmf_diff_word *w, uint32_t n, uint32_t top)
{
    for (uint32_t i = 0; i < n && i < top; i++) {
        double before = isnan(w[i].before) ? 0 : w[i].before;
        double after = isnan(w[i].after) ? 0 : w[i].after;
        if (!isnan(w[i].before) && !isnan(w[i].after))
            fprintf(f, " %s(%+.4f)", w[i].word, after - before);
        else
            fprintf(f, " %s(%.4f)", w[i].word, isnan(w[i].after) ? before : after);
    }
}

static void text_topic(FILE *f, const jsmf_diff_topic *t, uint32_t top)
{
    char idx[16] = "-", prev[16] = "new";
    if (t->topic != JSMF_TOPIC_NONE)
        snprintf(idx, sizeof idx, "%u", t->topic);
    if (t->prev != JSMF_TOPIC_NONE)
        snprintf(prev, sizeof prev, "%u", t->prev);
    fprintf(f, "%5s %5s %-10s", idx, prev, status_of(t));
    fprintf(f, isnan(t->l1) ? "      -" : " %6.3f", t->l1);
    fprintf(f, isnan(t->size_prev) ? "       -" : " %6.2f%%", 100 * t->size_prev);
    fprintf(f, isnan(t->size) ? "       -" : " %6.2f%%", 100 * t->size);
    if (t->n_rising)
        fprintf(f, "  %s", t->prev == JSMF_TOPIC_NONE ? "top:" : "up:"),
            text_words(f, t->rising, t->n_rising, top);
    if (t->n_falling)
        fprintf(f, "  %s", t->topic == JSMF_TOPIC_NONE ? "top:" : "down:"),
            text_words(f, t->falling, t->n_falling, top);
    fputc('\n', f);
}

static void write_text(FILE *f, const jsmf_diff *d, const jsmf_diff_opts *o)
{
    const jsmf_lineage *l = &d->lineage;
    fprintf(f, "%s -> %s: K %u -> %u; %u continuing (l1 <= %g), %u new, %u retired; lineage %s\n",
            o->old_name ? o->old_name : "OLD", o->new_name ? o->new_name : "NEW", l->k_prev,
            l->k, d->n_continuing, l->threshold, d->n_new, d->n_retired, lineage_source(d));
    fprintf(f, "%5s %5s %-10s %6s %8s %8s  words (change of p(w|z))\n", "topic", "prev",
            "status", "l1", "size was", "now");
    for (uint32_t i = 0; i < d->n_topics; i++)
        text_topic(f, &d->topics[i], o->top);
    fprintf(f, "new words: %u in NEW's vocabulary, not in OLD's", d->n_new_words);
    for (uint32_t i = 0; i < d->n_new_words && i < o->top; i++)
        fprintf(f, "%s %s(topic %u)", i ? "," : ":", d->new_words[i].word,
                d->new_words[i].topic);
    fprintf(f, "\nOOV share: not in the models (jsmf info STORE counts it)\n");
}

static void tsv_num(FILE *f, double x, int pct)
{
    if (isnan(x))
        fputs("\t-", f);
    else
        fprintf(f, pct ? "\t%.6g" : "\t%.4f", x);
}

static void tsv_words(FILE *f, const jsmf_diff_word *w, uint32_t n)
{
    fputc('\t', f);
    if (!n)
        fputc('-', f);
    for (uint32_t i = 0; i < n; i++) {
        double x = isnan(w[i].before) ? w[i].after : isnan(w[i].after) ? w[i].before
                                                                       : w[i].after - w[i].before;
        fprintf(f, "%s%s:%.6g", i ? " " : "", w[i].word, x);
    }
}

static void write_tsv(FILE *f, const jsmf_diff *d)
{
    fputs("status\ttopic\tprevious\tl1\tsize_previous\tsize\trising\tfalling\n", f);
    for (uint32_t i = 0; i < d->n_topics; i++) {
        const jsmf_diff_topic *t = &d->topics[i];
        fputs(status_of(t), f);
        fprintf(f, t->topic == JSMF_TOPIC_NONE ? "\t-" : "\t%u", t->topic);
        fprintf(f, t->prev == JSMF_TOPIC_NONE ? "\t-" : "\t%u", t->prev);
        tsv_num(f, t->l1, 0), tsv_num(f, t->size_prev, 1), tsv_num(f, t->size, 1);
        tsv_words(f, t->rising, t->n_rising), tsv_words(f, t->falling, t->n_falling);
        fputc('\n', f);
    }
    for (uint32_t i = 0; i < d->n_new_words; i++)
        fprintf(f, "new_word\t%u\t-\t-\t-\t%.6g\t%s\t-\n", d->new_words[i].topic,
                d->new_words[i].after, d->new_words[i].word);
}

static void json_words(jsmf_json *j, const char *key, const jsmf_diff_word *w, uint32_t n)
{
    json_begin_array(j, key);
    for (uint32_t i = 0; i < n; i++) {
        json_begin_object(j, NULL);
        json_string(j, "word", w[i].word);
        json_number(j, "before", w[i].before);
        json_number(j, "after", w[i].after);
        json_end_object(j);
    }
    json_end_array(j);
}

static void json_index(jsmf_json *j, const char *key, uint32_t v)
{
    if (v == JSMF_TOPIC_NONE)
        json_null(j, key);
    else
        json_uint(j, key, v);
}

static void json_topic(jsmf_json *j, const jsmf_diff_topic *t)
{
    json_begin_object(j, NULL);
    json_index(j, "topic", t->topic);
    json_index(j, "previous", t->prev);
    json_string(j, "status", status_of(t));
    json_number(j, "l1", t->l1);
    json_number(j, "size_previous", t->size_prev);
    json_number(j, "size", t->size);
    json_words(j, "rising", t->rising, t->n_rising);
    json_words(j, "falling", t->falling, t->n_falling);
    json_end_object(j);
}

static void write_json(FILE *f, const jsmf_diff *d, const jsmf_diff_opts *o)
{
    jsmf_json j;
    json_init(&j, f, 1);
    json_begin_object(&j, NULL);
    json_string(&j, "old", o->old_name ? o->old_name : "");
    json_string(&j, "new", o->new_name ? o->new_name : "");
    json_uint(&j, "k_previous", d->lineage.k_prev);
    json_uint(&j, "k", d->lineage.k);
    json_number(&j, "threshold", d->lineage.threshold);
    json_string(&j, "lineage", d->recorded ? "recorded" : "computed");
    json_uint(&j, "continuing", d->n_continuing);
    json_uint(&j, "new", d->n_new);
    json_uint(&j, "retired", d->n_retired);
    json_begin_array(&j, "topics");
    for (uint32_t i = 0; i < d->n_topics; i++)
        json_topic(&j, &d->topics[i]);
    json_end_array(&j);
    json_begin_array(&j, "new_words");
    for (uint32_t i = 0; i < d->n_new_words; i++) {
        json_begin_object(&j, NULL);
        json_string(&j, "word", d->new_words[i].word);
        json_number(&j, "p", d->new_words[i].after);
        json_uint(&j, "topic", d->new_words[i].topic);
        json_end_object(&j);
    }
    json_end_array(&j);
    json_null(&j, "oov_share"); /* the models do not hold it: the store does */
    json_end_object(&j);
}

void jsmf_diff_write(FILE *f, const jsmf_diff *d, const jsmf_diff_opts *o)
{
    if (o->format == JSMF_TOPICS_TSV)
        write_tsv(f, d);
    else if (o->format == JSMF_TOPICS_JSON)
        write_json(f, d, o);
    else
        write_text(f, d, o);
}
