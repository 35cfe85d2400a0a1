/* diff.c — what changed between two models ('jsmf diff OLD NEW', formats/outputs.md): the
 * lineage of NEW's topics (recorded by a --previous fit, else computed), topic sizes, the words
 * rising and falling within each continuing topic, the words NEW has and OLD lacks. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsmf_model.h"
#include "lineage.h"
#include "model.h"

void jsmf_diff_opts_init(jsmf_diff_opts *o)
{
    memset(o, 0, sizeof *o);
    o->top = 10;
    o->threshold = JSMF_LINEAGE_L1;
    o->format = JSMF_TOPICS_TEXT;
}

static void free_words(jsmf_diff_word *w, uint32_t n)
{
    for (uint32_t i = 0; w && i < n; i++)
        free(w[i].word);
    free(w);
}

void jsmf_diff_free(jsmf_diff *d)
{
    if (!d)
        return;
    for (uint32_t t = 0; t < d->n_topics; t++) {
        free_words(d->topics[t].rising, d->topics[t].n_rising);
        free_words(d->topics[t].falling, d->topics[t].n_falling);
    }
    free(d->topics);
    free_words(d->new_words, d->n_new_words);
    jsmf_lineage_free(&d->lineage);
    free(d);
}

/* The words of both models: new's rows, then old's words new lacks; row in each (or NONE). */
typedef struct word_union {
    uint32_t n;
    const char **word;
    uint32_t *in_new, *in_old;
} word_union;

static int union_make(const jsmf_model *old, const jsmf_model *nw, word_union *u)
{
    memset(u, 0, sizeof *u);
    uint64_t cap = (uint64_t)old->n + nw->n;
    u->word = malloc(cap * sizeof *u->word);
    u->in_new = malloc(cap * sizeof *u->in_new);
    u->in_old = malloc(cap * sizeof *u->in_old);
    unsigned char *seen = calloc(old->n ? old->n : 1, 1);
    int rc = u->word && u->in_new && u->in_old && seen
                 ? model_map_words(nw, old, u->in_old, seen, NULL)
                 : jsmf_error(JSMF_ENOMEM, "diff: out of memory");
    for (uint32_t w = 0; !rc && w < nw->n; w++)
        u->word[u->n] = nw->vocab->words[w], u->in_new[u->n++] = w;
    for (uint32_t o = 0; !rc && o < old->n; o++)
        if (!seen[o])
            u->word[u->n] = old->vocab->words[o], u->in_new[u->n] = JSMF_TOPIC_NONE,
            u->in_old[u->n++] = o;
    free(seen);
    return rc;
}

static void union_free(word_union *u)
{
    free(u->word), free(u->in_new), free(u->in_old);
}

static int word_set(jsmf_diff_word *w, const char *s, double before, double after,
                    uint32_t topic)
{
    w->word = strdup(s), w->before = before, w->after = after, w->topic = topic;
    return w->word ? 0 : jsmf_error(JSMF_ENOMEM, "diff: out of memory");
}

static double b_of(const jsmf_model *m, uint32_t row, uint32_t topic)
{
    return row == JSMF_TOPIC_NONE || topic == JSMF_TOPIC_NONE ? 0.0
                                                              : m->B[(uint64_t)row * m->k + topic];
}

/* The `top` words of largest `key` into *out; only strictly positive keys count (the caller
 * passes new - old for the rising words, old - new for the falling ones). */
static int pick_words(const jsmf_model *old, const jsmf_model *nw, const word_union *u,
                      uint32_t t, uint32_t p, double *key, uint32_t *idx, uint32_t top,
                      jsmf_diff_word **out, uint32_t *n)
{
    *n = 0;
    *out = NULL;
    int rc;
    uint32_t got = model_top_of(key, 1, u->n, top, idx), m = 0;
    while (m < got && key[idx[m]] > 0)
        m++;
    *out = calloc(m ? m : 1, sizeof **out);
    if (!*out)
        return jsmf_error(JSMF_ENOMEM, "diff: out of memory");
    for (uint32_t i = 0; i < m; i++) {
        uint32_t w = idx[i];
        double before = p == JSMF_TOPIC_NONE ? NAN : b_of(old, u->in_old[w], p);
        double after = t == JSMF_TOPIC_NONE ? NAN : b_of(nw, u->in_new[w], t);
        if ((rc = word_set(&(*out)[i], u->word[w], before, after, t)))
            return rc;
        ++*n;
    }
    return 0;
}

/* One topic's words: continuing, the rising and falling ones; new, its top words in NEW
 * (rising); retired, its top words in OLD (falling). */
static int topic_words(const jsmf_model *old, const jsmf_model *nw, const word_union *u,
                       jsmf_diff_topic *dt, uint32_t top, double *key, uint32_t *idx)
{
    uint32_t t = dt->topic, p = dt->prev;
    int rc = 0;
    if (t != JSMF_TOPIC_NONE) {
        for (uint32_t w = 0; w < u->n; w++)
            key[w] = b_of(nw, u->in_new[w], t) - b_of(old, u->in_old[w], p);
        rc = pick_words(old, nw, u, t, p, key, idx, top, &dt->rising, &dt->n_rising);
    }
    if (!rc && p != JSMF_TOPIC_NONE) {
        for (uint32_t w = 0; w < u->n; w++)
            key[w] = b_of(old, u->in_old[w], p) - b_of(nw, u->in_new[w], t);
        rc = pick_words(old, nw, u, t, p, key, idx, top, &dt->falling, &dt->n_falling);
    }
    return rc;
}

/* The topics: NEW's in order, then the retired ones of OLD. */
static int diff_topics(const jsmf_model *old, const jsmf_model *nw, const word_union *u,
                       jsmf_diff *d, uint32_t top)
{
    const jsmf_lineage *l = &d->lineage;
    double *pz = malloc(nw->k * sizeof *pz), *pz_old = malloc(old->k * sizeof *pz_old);
    double *key = malloc((u->n ? u->n : 1) * sizeof *key);
    uint32_t *idx = malloc((top ? top : 1) * sizeof *idx);
    d->topics = calloc(nw->k + l->n_retired, sizeof *d->topics);
    d->n_topics = d->topics ? nw->k + l->n_retired : 0;
    int rc = pz && pz_old && key && idx && d->topics ? 0 : jsmf_error(JSMF_ENOMEM, "diff: out of memory");
    if (!rc)
        jsmf_model_topic_sizes(nw, pz), jsmf_model_topic_sizes(old, pz_old);
    for (uint32_t i = 0; !rc && i < d->n_topics; i++) {
        jsmf_diff_topic *dt = &d->topics[i];
        dt->topic = i < nw->k ? i : JSMF_TOPIC_NONE;
        dt->prev = i < nw->k ? l->prev[i] : l->retired[i - nw->k];
        dt->l1 = i < nw->k ? l->l1[i] : NAN;
        dt->size = i < nw->k ? pz[i] : NAN;
        dt->size_prev = dt->prev != JSMF_TOPIC_NONE ? pz_old[dt->prev] : NAN;
        d->n_continuing += i < nw->k && dt->prev != JSMF_TOPIC_NONE;
        d->n_new += dt->prev == JSMF_TOPIC_NONE;
        d->n_retired += i >= nw->k;
        rc = topic_words(old, nw, u, dt, top, key, idx);
    }
    free(pz), free(pz_old), free(key), free(idx);
    return rc;
}

/* Indices sorted by a key, decreasing (ties: lower index first): all of NEW's new words, which
 * may be many (a top-n selection would be quadratic). */
typedef struct keyed {
    double key;
    uint32_t i;
} keyed;

static int by_key_desc(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    return x->key > y->key ? -1 : x->key < y->key ? 1 : (x->i > y->i) - (x->i < y->i);
}

static int sort_desc(uint32_t *idx, uint32_t n, const double *key)
{
    keyed *k = malloc((n ? n : 1) * sizeof *k);
    if (!k)
        return jsmf_error(JSMF_ENOMEM, "diff: out of memory");
    for (uint32_t i = 0; i < n; i++)
        k[i].key = key[i], k[i].i = i;
    qsort(k, n, sizeof *k, by_key_desc);
    for (uint32_t i = 0; i < n; i++)
        idx[i] = k[i].i;
    free(k);
    return 0;
}

/* NEW's words absent from OLD, by p(w) decreasing, with the topic of largest p(z|w). */
static int diff_new_words(const jsmf_model *nw, const word_union *u, jsmf_diff *d)
{
    double *pz = malloc(nw->k * sizeof *pz), *pw = malloc(nw->n * sizeof *pw);
    double *key = calloc(nw->n ? nw->n : 1, sizeof *key);
    uint32_t *idx = malloc((nw->n ? nw->n : 1) * sizeof *idx), count = 0;
    int rc = pz && pw && key && idx ? 0 : jsmf_error(JSMF_ENOMEM, "diff: out of memory");
    if (!rc) {
        jsmf_model_topic_sizes(nw, pz), jsmf_model_word_marginal(nw, pw);
        for (uint32_t w = 0; w < nw->n; w++) /* the union lists new's rows first */
            if (u->in_old[w] == JSMF_TOPIC_NONE)
                key[w] = pw[w] > 0 ? pw[w] : 1e-300, count++;
        rc = sort_desc(idx, nw->n, key);
    }
    if (!rc) {
        d->new_words = calloc(count ? count : 1, sizeof *d->new_words);
        rc = d->new_words ? 0 : jsmf_error(JSMF_ENOMEM, "diff: out of memory");
    }
    for (uint32_t i = 0; !rc && i < count; i++) {
        uint32_t w = idx[i], best = 0;
        for (uint32_t z = 1; z < nw->k; z++)
            if (b_of(nw, w, z) * pz[z] > b_of(nw, w, best) * pz[best])
                best = z;
        rc = word_set(&d->new_words[i], nw->vocab->words[w], 0, pw[w], best);
        d->n_new_words += !rc;
    }
    free(pz), free(pw), free(key), free(idx);
    return rc;
}

/* The lineage NEW records when it names OLD, else a new matching. */
static int diff_lineage(const jsmf_model *old, const jsmf_model *nw, const jsmf_diff_opts *o,
                        jsmf_diff *d)
{
    char fp[17];
    jsmf_model_fingerprint(old, fp);
    int rc = jsmf_model_lineage_read(nw, &d->lineage);
    if (!rc && !strcmp(fp, d->lineage.prev_fingerprint) && d->lineage.k_prev == old->k) {
        d->recorded = 1;
        return 0;
    }
    jsmf_lineage_free(&d->lineage);
    if (rc && rc != JSMF_ENOTFOUND)
        return rc;
    if (rc)
        jsmf_error_clear(); /* no record: computed */
    return jsmf_model_lineage_get(old, nw, o->old_name, o->threshold, &d->lineage);
}

int jsmf_model_diff(const jsmf_model *old, const jsmf_model *new_, const jsmf_diff_opts *o,
                    jsmf_diff **out)
{
    *out = NULL;
    if (!old->vocab || !new_->vocab)
        return jsmf_error(JSMF_EINVAL, "diff: both models need a vocabulary");
    jsmf_diff *d = calloc(1, sizeof *d);
    if (!d)
        return jsmf_error(JSMF_ENOMEM, "diff: out of memory");
    word_union u;
    int rc = diff_lineage(old, new_, o, d);
    if (!rc) {
        if (!(rc = union_make(old, new_, &u)))
            rc = diff_topics(old, new_, &u, d, o->top);
        if (!rc)
            rc = diff_new_words(new_, &u, d);
        union_free(&u);
    }
    if (rc)
        jsmf_diff_free(d);
    else
        *out = d;
    return rc;
}
