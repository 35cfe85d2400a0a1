/* wordmap.c — open-addressing hash map from a word's bytes to its row in a vocabulary: the one
 * place where tokens of documents are turned into word ids (ingest, infer, eval). */
#include <stdlib.h>
#include <string.h>

#include "jsmf.h"
#include "core/hash.h"

struct jsmf_wordmap {
    const jsmf_vocab *v;
    uint64_t mask;  /* table size - 1 (a power of two, at least twice the words) */
    uint32_t *slot; /* row, UINT32_MAX = empty */
    uint32_t *len;  /* word lengths, compared before the bytes */
};

/* FNV-1a with a final mix so that the low bits used for the slot depend on every byte (only the
 * table's layout depends on it, never a result). */
static inline uint64_t word_hash(const char *s, size_t len)
{
    return hash_fmix64(hash_fnv1a(HASH_FNV1A_OFFSET, s, len));
}

int jsmf_wordmap_new(const jsmf_vocab *v, jsmf_wordmap **out)
{
    jsmf_wordmap *m = calloc(1, sizeof *m);
    uint64_t size = 16;
    while (size < 2ull * v->n + 1)
        size *= 2;
    if (m) {
        m->slot = malloc(size * sizeof *m->slot);
        m->len = malloc((v->n ? v->n : 1) * sizeof *m->len);
    }
    if (!m || !m->slot || !m->len) {
        jsmf_wordmap_free(m);
        return jsmf_error(JSMF_ENOMEM, "word map: out of memory for %u words", v->n);
    }
    memset(m->slot, 0xff, size * sizeof *m->slot);
    m->v = v;
    m->mask = size - 1;
    for (uint32_t w = 0; w < v->n; w++) {
        m->len[w] = (uint32_t)strlen(v->words[w]);
        uint64_t i = word_hash(v->words[w], m->len[w]) & m->mask;
        while (m->slot[i] != UINT32_MAX)
            i = (i + 1) & m->mask;
        m->slot[i] = w;
    }
    *out = m;
    return JSMF_OK;
}

uint32_t jsmf_wordmap_find(const jsmf_wordmap *m, const char *s, size_t len)
{
    for (uint64_t i = word_hash(s, len) & m->mask;; i = (i + 1) & m->mask) {
        uint32_t w = m->slot[i];
        if (w == UINT32_MAX || (m->len[w] == len && !memcmp(m->v->words[w], s, len)))
            return w;
    }
}

void jsmf_wordmap_free(jsmf_wordmap *m)
{
    if (!m)
        return;
    free(m->slot);
    free(m->len);
    free(m);
}
