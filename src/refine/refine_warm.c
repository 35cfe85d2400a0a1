/* refine_warm.c — a night of a growing store started from yesterday's model: its topics carried
 * onto tonight's words, and the prior centred on them that holds them near where they were
 * (formats/model.md, "Nights"). */
#include <stdlib.h>
#include <string.h>

#include "refine_internal.h"
#include "core/error.h"
#include "core/vocab.h"
#include "model/json.h"
#include "model/lineage.h"
#include "model/model.h"
#include "model/summary.h"
#include "store/source_open.h"

void refine_warm_free(refine_warm *w)
{
    jsmf_model_free(w->start), jsmf_model_free(w->prev);
    free(w->prior), free(w->counts);
    memset(w, 0, sizeof *w);
}

/* The tokens yesterday's model was refined over (or fitted from): its summary's refine.tokens,
 * else store.tokens; 0 when it records neither. */
static double previous_tokens(const jsmf_model *prev)
{
    const char *s = prev->summary_json;
    double t = 0;
    if (!s || (json_get_number(s, "refine.tokens", &t) && json_get_number(s, "store.tokens", &t)))
        t = 0;
    jsmf_error_clear();
    return t > 0 ? t : 0;
}

/* The start's summary: what it is (kind "previous"), the store tonight (its fingerprint: what
 * readers of a fit look for) and yesterday's model, by path and fingerprint. */
static char *warm_summary(const jsmf_model *prev, const char *previous, const char *input,
                          const jsmf_source_input *in, uint32_t admitted)
{
    jsmf_summary_buf b;
    if (model_summary_begin(&b))
        return NULL;
    char fp[17];
    jsmf_model_fingerprint(prev, fp);
    json_string(&b.j, "kind", "previous");
    source_summary(&b.j, input, in);
    json_begin_object(&b.j, "previous");
    json_string(&b.j, "path", previous);
    json_string(&b.j, "fingerprint", fp);
    json_uint(&b.j, "n_words", prev->n);
    json_end_object(&b.j);
    json_uint(&b.j, "admitted", admitted);
    return model_summary_end(&b);
}

/* Yesterday's B on tonight's rows (to[j]: the row of its word j), A and anchors carried over. */
static int carry_topics(const jsmf_model *prev, const uint32_t *to, jsmf_model *m)
{
    const uint32_t k = prev->k;
    for (uint32_t j = 0; j < prev->n; j++)
        memcpy(m->B + (uint64_t)to[j] * k, prev->B + (uint64_t)j * k, k * sizeof *m->B);
    memcpy(m->A, prev->A, (uint64_t)k * k * sizeof *m->A);
    if (!prev->anchors)
        return JSMF_OK;
    if (!(m->anchors = malloc(k * sizeof *m->anchors)))
        return jsmf_error(JSMF_ENOMEM, "refine: out of memory for the anchors");
    for (uint32_t t = 0; t < k; t++)
        m->anchors[t] = to[prev->anchors[t]];
    return JSMF_OK;
}

/* The prior: yesterday's topics (on tonight's rows, as the start's B before any mixing), topic
 * k weighted weight x (yesterday's tokens) x p_prev(k). */
static int warm_prior(const jsmf_model *prev, const jsmf_model *start, double weight,
                      double tokens, refine_warm *w)
{
    const uint64_t nk = (uint64_t)start->n * start->k;
    w->prior = malloc(nk * sizeof *w->prior);
    w->counts = malloc(start->k * sizeof *w->counts);
    if (!w->prior || !w->counts)
        return jsmf_error(JSMF_ENOMEM, "refine: out of memory for the prior (%u x %u)", start->n,
                          start->k);
    memcpy(w->prior, start->B, nk * sizeof *w->prior);
    jsmf_model_topic_sizes(prev, w->counts);
    for (uint32_t t = 0; t < start->k; t++)
        w->counts[t] = weight * tokens * (w->counts[t] > 0 ? w->counts[t] : 0);
    return JSMF_OK;
}

int refine_warm_start(const char *previous, const char *input, const jsmf_source_input *in,
                      uint32_t k, double weight, refine_warm *w)
{
    memset(w, 0, sizeof *w);
    int rc = jsmf_model_load(previous, &w->prev);
    if (rc)
        return rc;
    const jsmf_model *prev = w->prev;
    uint32_t *to = malloc(prev->n * sizeof *to), common = 0;
    if (!to)
        rc = jsmf_error(JSMF_ENOMEM, "%s: out of memory", previous);
    else if (prev->k != k || !prev->vocab || !in->vocab)
        rc = REFINE_WARM_COLD; /* another K: a cold night, its lineage still recorded */
    else if (!(rc = model_map_to_vocab(prev, in->vocab, to, NULL, &common)) && common < prev->n)
        rc = REFINE_WARM_COLD; /* words the store lacks: not a model of it as it grew */
    if (!rc)
        w->admitted = in->vocab->n - prev->n;
    if (!rc)
        rc = jsmf_model_new(in->vocab->n, k, &w->start);
    if (!rc)
        rc = carry_topics(prev, to, w->start);
    if (!rc && vocab_copy(in->vocab, 0, &w->start->vocab))
        rc = jsmf_error(JSMF_ENOMEM, "refine: out of memory for the vocabulary");
    if (!rc && !(w->start->summary_json = warm_summary(prev, previous, input, in, w->admitted)))
        rc = jsmf_error(JSMF_ENOMEM, "refine: out of memory for the summary");
    double tokens = previous_tokens(prev);
    if (!rc && weight > 0)
        rc = warm_prior(prev, w->start, weight, tokens > 0 ? tokens : (double)in->stats.tokens, w);
    free(to);
    if (rc)
        refine_warm_free(w);
    return rc;
}
