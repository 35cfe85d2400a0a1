/* wordmap.c — open-addressing hash map from a word's text to its row in a vocabulary, so that
 * infer and eval can map tokens of new documents to the model's rows. */
#include <stdlib.h>
#include <string.h>

#include "jsmf_eval.h"

struct jsmf_wordmap {
    const jsmf_vocab *v;
    uint32_t mask;     /* table size - 1 (a power of two, at least twice the words) */
    uint32_t *slot;    /* row + 1, 0 = empty */
};

static uint64_t word_hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a, then a final mix */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

int jsmf_wordmap_new(const jsmf_vocab *v, jsmf_wordmap **out)
{
    jsmf_wordmap *m = calloc(1, sizeof *m);
    uint32_t size = 16;
    while (size < 2ull * v->n + 1)
        size *= 2;
    if (m)
        m->slot = calloc(size, sizeof *m->slot);
    if (!m || !m->slot) {
        free(m);
        return jsmf_error(JSMF_ENOMEM, "word map: out of memory for %u words", v->n);
    }
    m->v = v;
    m->mask = size - 1;
    for (uint32_t w = 0; w < v->n; w++) {
        size_t len = strlen(v->words[w]);
        uint32_t i = (uint32_t)word_hash(v->words[w], len) & m->mask;
        while (m->slot[i])
            i = (i + 1) & m->mask;
        m->slot[i] = w + 1;
    }
    *out = m;
    return 0;
}

uint32_t jsmf_wordmap_find(const jsmf_wordmap *m, const char *s, size_t len)
{
    uint32_t i = (uint32_t)word_hash(s, len) & m->mask;
    for (; m->slot[i]; i = (i + 1) & m->mask) {
        const char *w = m->v->words[m->slot[i] - 1];
        if (!strncmp(w, s, len) && w[len] == 0)
            return m->slot[i] - 1;
    }
    return UINT32_MAX;
}

void jsmf_wordmap_free(jsmf_wordmap *m)
{
    if (!m)
        return;
    free(m->slot);
    free(m);
}
