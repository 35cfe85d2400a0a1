/* lineage.c — which topics of a model continue which topics of a previous one: the l1 distances
 * over the words of both vocabularies (matched by string), a minimum-cost assignment, the
 * threshold; renumbering a model after its lineage; the lineage in summary.json
 * (formats/model.md, "Lineage"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsmf_model.h"
#include "core/hash.h"
#include "core/hungarian.h"
#include "core/threads.h"
#include "json.h"
#include "lineage.h"
#include "model.h"
#include "summary.h"

int model_map_to_vocab(const jsmf_model *a, const jsmf_vocab *v, uint32_t *to_v,
                       unsigned char *seen, uint32_t *common)
{
    jsmf_wordmap *map;
    int rc = jsmf_wordmap_new(v, &map);
    if (rc)
        return rc;
    uint32_t c = 0;
    for (uint32_t w = 0; w < a->n; w++) {
        const char *word = a->vocab->words[w];
        to_v[w] = jsmf_wordmap_find(map, word, strlen(word));
        if (to_v[w] != UINT32_MAX && seen)
            seen[to_v[w]] = 1;
        c += to_v[w] != UINT32_MAX;
    }
    jsmf_wordmap_free(map);
    if (common)
        *common = c;
    return 0;
}

int model_map_words(const jsmf_model *a, const jsmf_model *b, uint32_t *to_b,
                    unsigned char *seen, uint32_t *common)
{
    return model_map_to_vocab(a, b->vocab, to_b, seen, common);
}

/* Each topic of b: the mass it puts on words a lacks (seen[e] 0), beyond `allow`. */
static void mass_beyond(const jsmf_model *b, const unsigned char *seen, double allow,
                        double *beyond)
{
    const uint32_t kb = b->k;
    for (uint32_t s = 0; s < kb; s++)
        beyond[s] = 0;
    for (uint32_t e = 0; e < b->n; e++)
        if (!seen[e])
            for (uint32_t s = 0; s < kb; s++)
                beyond[s] += fabs(b->B[(uint64_t)e * kb + s]);
    for (uint32_t s = 0; s < kb; s++)
        beyond[s] = beyond[s] > allow ? beyond[s] - allow : 0;
}

/* One row of costs: topic t of a against every topic of b, over a's words, plus what b's
 * topics put on words a lacks (`beyond`). */
static void l1_row(const jsmf_model *a, const jsmf_model *b, const uint32_t *to_b,
                   const double *beyond, uint32_t t, double *row)
{
    uint32_t ka = a->k, kb = b->k;
    for (uint32_t s = 0; s < kb; s++)
        row[s] = beyond[s];
    for (uint32_t w = 0; w < a->n; w++) {
        double tw = a->B[(uint64_t)w * ka + t];
        const double *er = to_b[w] == UINT32_MAX ? NULL : b->B + (uint64_t)to_b[w] * kb;
        for (uint32_t s = 0; s < kb; s++)
            row[s] += fabs(tw - (er ? er[s] : 0.0));
    }
}

/* The costs a's topics x b's topics; the mass b's topics put on words a lacks counts beyond
 * `allow` of it (0: all of it, as eval's l1 error counts it). */
static int topic_l1(const jsmf_model *a, const jsmf_model *b, double allow, double *cost,
                    uint32_t *common)
{
    if (!a->vocab || !b->vocab)
        return jsmf_error(JSMF_EINVAL, "topic distances: both models need a vocabulary");
    unsigned char *seen = calloc(b->n ? b->n : 1, 1);
    uint32_t *to_b = malloc((a->n ? a->n : 1) * sizeof *to_b);
    double *beyond = malloc((b->k ? b->k : 1) * sizeof *beyond);
    int rc = seen && to_b && beyond ? model_map_words(a, b, to_b, seen, common)
                                    : jsmf_error(JSMF_ENOMEM, "topic distances: out of memory");
    if (!rc) {
        mass_beyond(b, seen, allow, beyond);
        /* each row is independent: parallel over t, words in order (the same sums whatever
         * the thread count) */
        #pragma omp parallel for schedule(dynamic) num_threads(call_threads())
        for (uint32_t t = 0; t < a->k; t++)
            l1_row(a, b, to_b, beyond, t, cost + (uint64_t)t * b->k);
    }
    free(to_b), free(seen), free(beyond);
    return rc;
}

int model_topic_l1(const jsmf_model *a, const jsmf_model *b, double *cost)
{
    return topic_l1(a, b, 0, cost, NULL);
}

void jsmf_lineage_free(jsmf_lineage *l)
{
    if (!l)
        return;
    free(l->prev), free(l->l1), free(l->retired), free(l->prev_path);
    memset(l, 0, sizeof *l);
}

static int lineage_alloc(jsmf_lineage *l, uint32_t k, uint32_t k_prev, const char *path)
{
    memset(l, 0, sizeof *l);
    l->k = k, l->k_prev = k_prev;
    l->prev = malloc(k * sizeof *l->prev);
    l->l1 = malloc(k * sizeof *l->l1);
    l->retired = malloc((k_prev ? k_prev : 1) * sizeof *l->retired);
    l->prev_path = path ? strdup(path) : NULL;
    if (!l->prev || !l->l1 || !l->retired || (path && !l->prev_path)) {
        jsmf_lineage_free(l);
        return jsmf_error(JSMF_ENOMEM, "lineage: out of memory for K=%u", k);
    }
    return 0;
}

/* The square assignment of n = max(k, k_prev): rows are m's topics, columns prev's; padding
 * costs 2 (the largest l1), so that it changes no choice among real pairs. */
static int assign_topics(const double *cost, uint32_t k, uint32_t kp, uint32_t *match)
{
    uint32_t n = k > kp ? k : kp;
    double *sq = malloc((size_t)n * n * sizeof *sq);
    uint32_t *as = malloc(n * sizeof *as);
    int rc = sq && as ? 0 : jsmf_error(JSMF_ENOMEM, "lineage: out of memory for K=%u", n);
    for (uint32_t i = 0; !rc && i < n; i++)
        for (uint32_t j = 0; j < n; j++)
            sq[(size_t)i * n + j] = i < k && j < kp ? cost[(size_t)j * k + i] : 2.0;
    if (!rc)
        rc = hungarian(sq, n, as, NULL);
    for (uint32_t i = 0; !rc && i < k; i++)
        match[i] = as[i] < kp ? as[i] : JSMF_TOPIC_NONE;
    free(sq), free(as);
    return rc;
}

/* From the assignment: continuing or new, and the retired list (marked in place first). */
static void lineage_fill(jsmf_lineage *l, const double *cost, const uint32_t *match)
{
    uint32_t *kept = l->retired;
    for (uint32_t p = 0; p < l->k_prev; p++)
        kept[p] = 0;
    for (uint32_t t = 0; t < l->k; t++) {
        uint32_t p = match[t];
        l->l1[t] = p == JSMF_TOPIC_NONE ? NAN : cost[(size_t)p * l->k + t];
        l->prev[t] = p != JSMF_TOPIC_NONE && l->l1[t] <= l->threshold ? p : JSMF_TOPIC_NONE;
        if (l->prev[t] != JSMF_TOPIC_NONE)
            kept[p] = 1;
    }
    l->n_retired = 0;
    for (uint32_t p = 0; p < l->k_prev; p++)
        if (!kept[p])
            l->retired[l->n_retired++] = p;
}

int jsmf_model_lineage_get(const jsmf_model *prev, const jsmf_model *m, const char *prev_path,
                           double threshold, jsmf_lineage *out)
{
    const char *name = prev_path ? prev_path : "the previous model";
    memset(out, 0, sizeof *out);
    double *cost = malloc((size_t)prev->k * m->k * sizeof *cost);
    uint32_t *match = malloc(m->k * sizeof *match);
    uint32_t common = 0;
    int rc = cost && match ? topic_l1(prev, m, JSMF_LINEAGE_NEW_WORDS, cost, &common)
                           : jsmf_error(JSMF_ENOMEM, "lineage: out of memory");
    if (!rc && common == 0)
        rc = jsmf_error(JSMF_EMISMATCH, "%s: the previous model has no word in common with "
                        "this one (a model of another corpus?)", name);
    if (!rc)
        rc = assign_topics(cost, m->k, prev->k, match);
    if (!rc)
        rc = lineage_alloc(out, m->k, prev->k, prev_path);
    if (!rc) {
        out->threshold = threshold;
        jsmf_model_fingerprint(prev, out->prev_fingerprint);
        lineage_fill(out, cost, match);
    }
    free(cost), free(match);
    return rc;
}

/* perm[new index] = present index: continuing topics at their predecessor's index when it
 * exists here, the others in the free indices in their present order. */
static void lineage_perm(const jsmf_lineage *l, uint32_t *perm, unsigned char *taken)
{
    uint32_t k = l->k;
    for (uint32_t i = 0; i < k; i++)
        perm[i] = JSMF_TOPIC_NONE, taken[i] = 0;
    for (uint32_t t = 0; t < k; t++)
        if (l->prev[t] != JSMF_TOPIC_NONE && l->prev[t] < k)
            perm[l->prev[t]] = t, taken[t] = 1;
    uint32_t free_i = 0;
    for (uint32_t t = 0; t < k; t++) {
        if (taken[t])
            continue;
        while (perm[free_i] != JSMF_TOPIC_NONE)
            free_i++;
        perm[free_i] = t;
    }
}

/* Columns of an rows x k matrix permuted: x'[r][i] = x[r][perm[i]]. */
static void permute_cols(double *x, uint64_t rows, uint32_t k, const uint32_t *perm,
                         double *tmp)
{
    for (uint64_t r = 0; r < rows; r++) {
        double *row = x + r * k;
        for (uint32_t i = 0; i < k; i++)
            tmp[i] = row[perm[i]];
        memcpy(row, tmp, k * sizeof *tmp);
    }
}

/* Rows of a k x cols matrix permuted: x'[i] = x[perm[i]] (`copy` holds k x cols). */
static void permute_rows(double *x, uint32_t k, uint32_t cols, const uint32_t *perm,
                         double *copy)
{
    memcpy(copy, x, (size_t)k * cols * sizeof *copy);
    for (uint32_t i = 0; i < k; i++)
        memcpy(x + (size_t)i * cols, copy + (size_t)perm[i] * cols, cols * sizeof *x);
}

/* The first hierarchy level's "words" are this level's topics: its B rows follow them, its
 * anchors (topics below) are renamed, its labels made again by the saver. */
static void renumber_sub(jsmf_model *sub, const uint32_t *perm, const uint32_t *inv,
                         double *copy)
{
    if (!sub)
        return;
    permute_rows(sub->B, sub->n, sub->k, perm, copy);
    for (uint32_t i = 0; sub->anchors && i < sub->k; i++)
        sub->anchors[i] = inv[sub->anchors[i]];
    jsmf_vocab_free(sub->vocab);
    sub->vocab = NULL;
}

static void renumber_small(jsmf_model *m, const uint32_t *perm, double *tmp)
{
    uint32_t k = m->k;
    if (m->alpha)
        permute_cols(m->alpha, 1, k, perm, tmp);
    if (m->anchors) {
        uint32_t *a = (uint32_t *)(tmp + k); /* tmp holds 2k doubles */
        for (uint32_t i = 0; i < k; i++)
            a[i] = m->anchors[perm[i]];
        memcpy(m->anchors, a, k * sizeof *a);
    }
}

/* The lineage in the new numbering. */
static void renumber_lineage(jsmf_lineage *l, const uint32_t *perm, double *tmp)
{
    uint32_t *p = (uint32_t *)(tmp + l->k);
    for (uint32_t i = 0; i < l->k; i++)
        tmp[i] = l->l1[perm[i]], p[i] = l->prev[perm[i]];
    memcpy(l->l1, tmp, l->k * sizeof *tmp);
    memcpy(l->prev, p, l->k * sizeof *p);
}

int jsmf_model_renumber(jsmf_model *m, jsmf_lineage *l)
{
    if (l->k != m->k)
        return jsmf_error(JSMF_EINVAL, "renumber: a lineage of %u topics for a model of %u",
                          l->k, m->k);
    uint32_t k = m->k;
    size_t ncopy = (size_t)k * k;
    if (m->sub && (size_t)m->sub->n * m->sub->k > ncopy)
        ncopy = (size_t)m->sub->n * m->sub->k;
    if (m->sub && m->sub->n != k)
        return jsmf_error(JSMF_EINVAL, "renumber: a level of %u rows under %u topics",
                          m->sub->n, k);
    uint32_t *perm = malloc(k * sizeof *perm), *inv = malloc(k * sizeof *inv);
    unsigned char *taken = malloc(k);
    double *tmp = malloc(2 * (size_t)k * sizeof *tmp), *copy = malloc(ncopy * sizeof *copy);
    int rc = perm && inv && taken && tmp && copy
                 ? 0 : jsmf_error(JSMF_ENOMEM, "renumber: out of memory");
    if (!rc) { /* nothing below can fail */
        lineage_perm(l, perm, taken);
        for (uint32_t i = 0; i < k; i++)
            inv[perm[i]] = i;
        permute_rows(m->A, k, k, perm, copy);
        renumber_sub(m->sub, perm, inv, copy);
        permute_cols(m->A, k, k, perm, tmp);
        permute_cols(m->B, m->n, k, perm, tmp);
        renumber_small(m, perm, tmp);
        renumber_lineage(l, perm, tmp);
    }
    free(perm), free(inv), free(taken), free(tmp), free(copy);
    return rc;
}

void jsmf_model_fingerprint(const jsmf_model *m, char out[17])
{
    uint64_t h = HASH_FNV1A_OFFSET;
    for (uint32_t w = 0; m->vocab && w < m->vocab->n; w++)
        h = hash_fnv1a(h, m->vocab->words[w], strlen(m->vocab->words[w]) + 1);
    h = hash_fnv1a(h, m->B, (size_t)m->n * m->k * sizeof *m->B);
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* The "lineage" key's object (formats/model.md). */
static void lineage_json(jsmf_json *j, const jsmf_lineage *l)
{
    json_begin_object(j, "lineage");
    json_begin_object(j, "previous");
    if (l->prev_path)
        json_string(j, "path", l->prev_path);
    json_string(j, "fingerprint", l->prev_fingerprint);
    json_uint(j, "k", l->k_prev);
    json_end_object(j);
    json_number(j, "threshold", l->threshold);
    json_begin_array(j, "topics");
    for (uint32_t t = 0; t < l->k; t++) {
        json_begin_object(j, NULL);
        json_uint(j, "topic", t);
        if (l->prev[t] == JSMF_TOPIC_NONE)
            json_null(j, "previous");
        else
            json_uint(j, "previous", l->prev[t]);
        json_number(j, "l1", l->l1[t]);
        json_string(j, "status", l->prev[t] == JSMF_TOPIC_NONE ? "new" : "continuing");
        json_end_object(j);
    }
    json_end_array(j);
    json_begin_array(j, "retired");
    for (uint32_t r = 0; r < l->n_retired; r++)
        json_uint(j, NULL, l->retired[r]);
    json_end_array(j);
    json_end_object(j);
}

int model_lineage_summarize(jsmf_model *m, const jsmf_lineage *l)
{
    jsmf_summary_buf b;
    int rc = model_summary_begin(&b);
    if (rc)
        return rc;
    if (!m->summary_json)
        model_summary_header(&b.j, m, "unknown");
    lineage_json(&b.j, l);
    char *add = model_summary_end(&b);
    if (!add)
        return jsmf_error(JSMF_ENOMEM, "out of memory for summary.json");
    if (!m->summary_json) {
        m->summary_json = add;
        return 0;
    }
    /* "{ ...old keys }" + "{ lineage }" -> "{ ...old keys, lineage }": both are objects
     * written by the same pretty writer at the top level */
    char *old = m->summary_json, *end = strrchr(old, '}'), *start = strchr(add, '{');
    size_t keep = end ? (size_t)(end - old) : 0;
    while (keep && (old[keep - 1] == '\n' || old[keep - 1] == ' '))
        keep--;
    int empty = keep && old[keep - 1] == '{';
    size_t len = keep + 1 + strlen(start + 1) + 1;
    char *text = end && start ? malloc(len) : NULL;
    if (!text) {
        free(add);
        return jsmf_error(JSMF_ENOMEM, "out of memory for summary.json");
    }
    snprintf(text, len, "%.*s%s%s", (int)keep, old, empty ? "" : ",", start + 1);
    free(add), free(old);
    m->summary_json = text;
    return 0;
}

static int get_uint(const char *text, const char *path, uint32_t *out)
{
    double v;
    int rc = json_get_number(text, path, &v);
    if (!rc && (isnan(v) || v < 0 || v >= UINT32_MAX || v != floor(v)))
        rc = jsmf_error(JSMF_EFORMAT, "summary.json: %s is not an index", path);
    if (!rc)
        *out = (uint32_t)v;
    return rc;
}

/* One topic's record: its predecessor (null: new) and distance. */
static int read_topic(const char *text, jsmf_lineage *l, uint32_t t)
{
    char key[96];
    double prev;
    snprintf(key, sizeof key, "lineage.topics.%u.previous", t);
    int rc = json_get_number(text, key, &prev);
    if (!rc && !isnan(prev) && (prev < 0 || prev >= l->k_prev || prev != floor(prev)))
        rc = jsmf_error(JSMF_EFORMAT, "summary.json: %s is not a previous topic", key);
    if (rc)
        return rc;
    l->prev[t] = isnan(prev) ? JSMF_TOPIC_NONE : (uint32_t)prev;
    snprintf(key, sizeof key, "lineage.topics.%u.l1", t);
    return json_get_number(text, key, &l->l1[t]);
}

static int read_record(const char *text, jsmf_lineage *l)
{
    int rc = json_get_number(text, "lineage.threshold", &l->threshold);
    for (uint32_t t = 0; !rc && t < l->k; t++)
        rc = read_topic(text, l, t);
    char *fp = NULL;
    if (!rc && !(rc = json_get_string(text, "lineage.previous.fingerprint", &fp)))
        snprintf(l->prev_fingerprint, sizeof l->prev_fingerprint, "%s", fp);
    free(fp);
    char key[64];
    for (l->n_retired = 0; !rc && l->n_retired < l->k_prev; l->n_retired++) {
        snprintf(key, sizeof key, "lineage.retired.%u", l->n_retired);
        int r = get_uint(text, key, &l->retired[l->n_retired]);
        if (r == JSMF_ENOTFOUND)
            break;
        rc = r || l->retired[l->n_retired] >= l->k_prev ? JSMF_EFORMAT : 0;
    }
    return rc;
}

int jsmf_model_lineage_read(const jsmf_model *m, jsmf_lineage *out)
{
    memset(out, 0, sizeof *out);
    uint32_t kp;
    const char *text = m->summary_json;
    double k_rec;
    if (!text || json_get_number(text, "lineage.previous.k", &k_rec) == JSMF_ENOTFOUND)
        return jsmf_error(JSMF_ENOTFOUND, "the model records no lineage (it was not fitted "
                          "after a previous model)");
    int rc = get_uint(text, "lineage.previous.k", &kp);
    if (rc)
        return jsmf_error(JSMF_EFORMAT, "summary.json: lineage.previous.k is missing or bad");
    char *path = NULL;
    json_get_string(text, "lineage.previous.path", &path);
    rc = lineage_alloc(out, m->k, kp, path);
    free(path);
    if (!rc && (rc = read_record(text, out))) {
        jsmf_lineage_free(out);
        rc = jsmf_error(JSMF_EFORMAT, "summary.json: the lineage record is malformed");
    }
    return rc;
}
