/* wordmap.c — open-addressing hash map from a word's bytes to its row in a vocabulary: the one
 * place where tokens of documents are turned into word ids (ingest, infer, eval). */
#include <stdlib.h>
#include <string.h>

#include "jsmf.h"
#include "core/wordkey.h"
#include "core/wordmap.h"

/* A row's word as the lookups compare it: its first 24 bytes inline, so that a hit touches
 * its slot and this entry (two per cache line), and the vocabulary's bytes only for words
 * longer than the key. With the words' lengths and bytes behind pointers a lookup took four
 * dependent cache misses, ~70% of an ingest of 100k words (tools/bench/ingest_large). */
typedef struct {
    uint64_t key[3];
    uint32_t len;
    uint32_t unused;
} wordmap_entry;

struct jsmf_wordmap {
    const jsmf_vocab *v;
    uint64_t mask;          /* table size - 1 (a power of two, at least twice the words) */
    uint64_t *slot;         /* (hash >> 32) << 32 | (row + 1); 0 = empty */
    wordmap_entry *e;       /* one per row */
};

int jsmf_wordmap_new(const jsmf_vocab *v, jsmf_wordmap **out)
{
    jsmf_wordmap *m = calloc(1, sizeof *m);
    uint64_t size = 16;
    while (size < 2ull * v->n + 1)
        size *= 2;
    if (m) {
        m->slot = calloc(size, sizeof *m->slot);
        m->e = malloc((v->n ? v->n : 1) * sizeof *m->e);
    }
    if (!m || !m->slot || !m->e) {
        jsmf_wordmap_free(m);
        return jsmf_error(JSMF_ENOMEM, "word map: out of memory for %u words", v->n);
    }
    m->v = v;
    m->mask = size - 1;
    for (uint32_t w = 0; w < v->n; w++) {
        wordmap_entry *e = &m->e[w];
        e->len = (uint32_t)strlen(v->words[w]), e->unused = 0;
        wordkey_make(e->key, v->words[w], e->len, 0);
        uint64_t h = wordkey_hash(e->key, v->words[w], e->len), i = h & m->mask;
        while (m->slot[i])
            i = (i + 1) & m->mask;
        m->slot[i] = (h >> 32) << 32 | ((uint64_t)w + 1);
    }
    *out = m;
    return JSMF_OK;
}

/* The probe from the word's hash: a slot's tag (the hash's high half) rejects almost every
 * other word before its entry is read. A duplicated word resolves to its first row. */
static uint32_t find_hashed(const jsmf_wordmap *m, const uint64_t k[3], const char *s,
                            size_t len, uint64_t h)
{
    const uint64_t tag = h >> 32;
    for (uint64_t i = h & m->mask;; i = (i + 1) & m->mask) {
        uint64_t sl = m->slot[i];
        if (!sl)
            return UINT32_MAX;
        if (sl >> 32 != tag)
            continue;
        uint32_t w = (uint32_t)sl - 1;
        const wordmap_entry *e = &m->e[w];
        if (e->len == len && e->key[0] == k[0] && e->key[1] == k[1] && e->key[2] == k[2] &&
            (len <= WORDKEY_BYTES ||
             !memcmp(m->v->words[w] + WORDKEY_BYTES, s + WORDKEY_BYTES, len - WORDKEY_BYTES)))
            return w;
    }
}

uint32_t jsmf_wordmap_find(const jsmf_wordmap *m, const char *s, size_t len)
{
    uint64_t k[3];
    wordkey_make(k, s, len, 0);
    return find_hashed(m, k, s, len, wordkey_hash(k, s, len));
}

void wordmap_find_many(const jsmf_wordmap *m, const char *const *tok, const uint32_t *len,
                       uint32_t n, uint32_t *rows)
{
    enum { AHEAD = 32 };
    uint64_t h[AHEAD], k[AHEAD][3];
    for (uint32_t b = 0; b < n; b += AHEAD) {
        uint32_t nb = n - b < AHEAD ? n - b : AHEAD;
        /* hash the block and ask for its slots first: their misses overlap */
        for (uint32_t i = 0; i < nb; i++) {
            wordkey_make(k[i], tok[b + i], len[b + i], 0);
            h[i] = wordkey_hash(k[i], tok[b + i], len[b + i]);
            __builtin_prefetch(&m->slot[h[i] & m->mask]);
        }
        for (uint32_t i = 0; i < nb; i++) { /* then the entries their first probes name */
            uint64_t sl = m->slot[h[i] & m->mask];
            if (sl)
                __builtin_prefetch(&m->e[(uint32_t)sl - 1]);
        }
        for (uint32_t i = 0; i < nb; i++)
            rows[b + i] = find_hashed(m, k[i], tok[b + i], len[b + i], h[i]);
    }
}

void jsmf_wordmap_free(jsmf_wordmap *m)
{
    if (!m)
        return;
    free(m->slot);
    free(m->e);
    free(m);
}
