/* test_model_lineage.c — the lineage of hand-made models: a permuted copy with one topic
 * replaced and one more is matched, renumbered back (B, A, alpha, anchors) and its record read
 * back from summary.json; a previous model of other words is refused; jsmf_model_diff finds the
 * new words and the topic each went to, and the recorded lineage when there is one. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "jsmf_model.h"
#include "model/lineage.h"

#define N 6

static jsmf_vocab *vocab_of(const char *const *words, uint32_t n)
{
    jsmf_vocab *v = calloc(1, sizeof *v);
    v->n = n;
    v->words = calloc(n, sizeof *v->words);
    for (uint32_t i = 0; i < n; i++)
        v->words[i] = strdup(words[i]);
    return v;
}

/* Topic t of `cols` (K of them) is a spike pair: mass 0.7 on word cols[t], 0.3 on the next. */
static jsmf_model *spikes(const char *const *words, uint32_t n, const uint32_t *cols, uint32_t k)
{
    jsmf_model *m;
    if (jsmf_model_new(n, k, &m))
        return NULL;
    m->vocab = vocab_of(words, n);
    m->alpha = malloc(k * sizeof *m->alpha);
    m->anchors = malloc(k * sizeof *m->anchors);
    for (uint32_t t = 0; t < k; t++) {
        m->B[(uint64_t)cols[t] * k + t] = 0.7;
        m->B[(uint64_t)((cols[t] + 1) % n) * k + t] += 0.3;
        m->A[t * k + t] = (t + 1.0) / (k * (k + 1) / 2.0);
        m->alpha[t] = t + 1;
        m->anchors[t] = cols[t];
    }
    return m;
}

static const char *const words[N] = {"a", "b", "c", "d", "e", "f"};

static void test_renumber(void)
{
    /* previous: topics on words 0, 2, 4 (and a 4th on 5); new: 4, 0, 3 (3: nothing near) */
    const uint32_t prev_cols[4] = {0, 2, 4, 5}, new_cols[3] = {4, 0, 3};
    jsmf_model *prev = spikes(words, N, prev_cols, 4), *m = spikes(words, N, new_cols, 3);
    jsmf_lineage l;
    CHECK_OK(jsmf_model_lineage_get(prev, m, "prev", JSMF_LINEAGE_L1, &l));
    CHECK(l.k == 3 && l.k_prev == 4);
    CHECK(l.prev[0] == 2 && l.prev[1] == 0 && l.prev[2] == JSMF_TOPIC_NONE);
    CHECK_NEAR(l.l1[0], 0, 1e-15);
    CHECK(l.n_retired == 2 && l.retired[0] == 1 && l.retired[1] == 3);
    jsmf_lineage none;
    CHECK(jsmf_model_lineage_read(m, &none) == JSMF_ENOTFOUND &&
          strstr(jsmf_errmsg_for(JSMF_ENOTFOUND), "no lineage"));
    CHECK_OK(jsmf_model_renumber(m, &l));
    /* topic on 0 keeps index 0, on 4 index 2, the new one takes the free index 1 */
    CHECK(m->anchors[0] == 0 && m->anchors[1] == 3 && m->anchors[2] == 4);
    CHECK(m->B[0 * 3 + 0] == 0.7 && m->B[3 * 3 + 1] == 0.7 && m->B[4 * 3 + 2] == 0.7);
    CHECK(m->alpha[0] == 2 && m->alpha[1] == 3 && m->alpha[2] == 1);
    CHECK(m->A[0] == 2 / 6.0 && m->A[4] == 3 / 6.0 && m->A[8] == 1 / 6.0);
    CHECK(l.prev[0] == 0 && l.prev[1] == JSMF_TOPIC_NONE && l.prev[2] == 2);
    /* the record in summary.json reads back */
    CHECK_OK(model_lineage_summarize(m, &l));
    jsmf_lineage r;
    CHECK_OK(jsmf_model_lineage_read(m, &r));
    CHECK(r.k == 3 && r.k_prev == 4 && r.n_retired == 2 && r.retired[1] == 3);
    CHECK(r.prev[0] == 0 && r.prev[1] == JSMF_TOPIC_NONE && r.prev[2] == 2);
    CHECK(!strcmp(r.prev_fingerprint, l.prev_fingerprint) && !strcmp(r.prev_path, "prev"));
    /* diff: the recorded lineage is used */
    jsmf_diff_opts o;
    jsmf_diff_opts_init(&o);
    jsmf_diff *d = NULL;
    CHECK_OK(jsmf_model_diff(prev, m, &o, &d));
    CHECK(d && d->recorded && d->n_continuing == 2 && d->n_new == 1 && d->n_retired == 2);
    CHECK(d && d->n_topics == 5 && d->topics[3].topic == JSMF_TOPIC_NONE && d->topics[3].prev == 1);
    jsmf_diff_free(d);
    jsmf_lineage_free(&r);
    jsmf_lineage_free(&l);
    jsmf_model_free(prev), jsmf_model_free(m);
}

static void test_other_words(void)
{
    const char *const other[N] = {"u", "v", "w", "x", "y", "z"};
    const uint32_t cols[2] = {0, 2};
    jsmf_model *prev = spikes(other, N, cols, 2), *m = spikes(words, N, cols, 2);
    jsmf_lineage l;
    CHECK(jsmf_model_lineage_get(prev, m, "elsewhere", 0.5, &l) == JSMF_EMISMATCH);
    CHECK(strstr(jsmf_errmsg(), "elsewhere") != NULL);
    jsmf_model_free(prev), jsmf_model_free(m);
}

static void test_new_words(void)
{
    /* OLD lacks "f": NEW's word f (topic 1's second word) is new and went to topic 1 */
    const uint32_t old_cols[2] = {0, 2}, new_cols[2] = {0, 4};
    jsmf_model *old = spikes(words, 5, old_cols, 2), *nw = spikes(words, N, new_cols, 2);
    jsmf_diff_opts o;
    jsmf_diff_opts_init(&o);
    jsmf_diff *d = NULL;
    CHECK_OK(jsmf_model_diff(old, nw, &o, &d));
    CHECK(d && !d->recorded && d->n_new_words == 1 && !strcmp(d->new_words[0].word, "f") &&
          d->new_words[0].topic == 1);
    jsmf_diff_free(d);
    jsmf_model_free(old), jsmf_model_free(nw);
}

/* The lineage's allowance for new words (JSMF_LINEAGE_NEW_WORDS): PREV has 2 topics over words
 * a..d; the new model, over a..f, keeps topic 0 but moves a share m of its mass onto the new
 * words e, f, and makes topic 1 of e and f alone. Topic 0 continues while m - 0.25 plus the m it
 * left on the old words is within 0.5 (m = 0.2: distance 0.2; m = 0.4: 0.4 + 0.15 = 0.55, new),
 * topic 1 is 1 + (1 - 0.25) from any previous topic: new; eval's distance counts all of m. */
static void test_new_word_allowance(void)
{
    const double moves[2] = {0.2, 0.4};
    for (int i = 0; i < 2; i++) {
        double m0 = moves[i];
        jsmf_model *prev, *m;
        CHECK_OK(jsmf_model_new(4, 2, &prev));
        CHECK_OK(jsmf_model_new(N, 2, &m));
        prev->vocab = vocab_of(words, 4), m->vocab = vocab_of(words, N);
        const double p0[4] = {0.5, 0.5, 0, 0}, p1[4] = {0, 0, 0.5, 0.5};
        for (uint32_t w = 0; w < 4; w++) {
            prev->B[w * 2] = p0[w], prev->B[w * 2 + 1] = p1[w];
            m->B[w * 2] = (1 - m0) * p0[w];
        }
        m->B[4 * 2] = m->B[5 * 2] = m0 / 2;       /* topic 0: m0 on e, f */
        m->B[4 * 2 + 1] = m->B[5 * 2 + 1] = 0.5; /* topic 1: all on e, f */
        for (uint32_t j = 0; j < 4; j++)
            prev->A[j] = m->A[j] = 0.25;
        jsmf_lineage l;
        CHECK_OK(jsmf_model_lineage_get(prev, m, "prev", JSMF_LINEAGE_L1, &l));
        double want0 = m0 + (m0 > JSMF_LINEAGE_NEW_WORDS ? m0 - JSMF_LINEAGE_NEW_WORDS : 0);
        CHECK_NEAR(l.l1[0], want0, 1e-12);
        CHECK(l.prev[0] == (want0 <= 0.5 ? 0u : JSMF_TOPIC_NONE));
        CHECK_NEAR(l.l1[1], 1 + (1 - JSMF_LINEAGE_NEW_WORDS), 1e-12);
        CHECK(l.prev[1] == JSMF_TOPIC_NONE);
        double cost[4];
        CHECK_OK(model_topic_l1(prev, m, cost)); /* eval's distance: all of the mass counts */
        CHECK_NEAR(cost[0], 2 * m0, 1e-12);
        CHECK_NEAR(cost[3], 2, 1e-12);
        jsmf_lineage_free(&l);
        jsmf_model_free(prev), jsmf_model_free(m);
    }
}

int main(void)
{
    test_renumber();
    test_other_words();
    test_new_words();
    test_new_word_allowance();
    CHECK_DONE();
}
