/* wordkey.h — internal: a word's first 24 bytes as three integers and a hash of them, so that
 * word tables (the vocabulary counter, the word map) compare most words without touching
 * their bytes elsewhere in memory. Only tables' layouts depend on the hash, never a result. */
#ifndef JSMF_CORE_WORDKEY_H
#define JSMF_CORE_WORDKEY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define WORDKEY_BYTES 24

static inline uint64_t wordkey_load8(const char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* The first 24 bytes of w, zero padded. `padded`: w may be read 24 bytes past its start. */
static inline void wordkey_make(uint64_t k[3], const char *w, size_t len, int padded)
{
    if (padded) {
        k[0] = wordkey_load8(w), k[1] = wordkey_load8(w + 8), k[2] = wordkey_load8(w + 16);
        size_t keep = len < WORDKEY_BYTES ? len : WORDKEY_BYTES;
        for (size_t i = 0; i < 3; i++) {
            size_t bytes = keep > 8 * i ? keep - 8 * i : 0;
            if (bytes < 8)
                k[i] &= bytes ? ~0ULL >> (64 - 8 * bytes) : 0;
        }
    } else {
        k[0] = k[1] = k[2] = 0;
        memcpy(k, w, len < WORDKEY_BYTES ? len : WORDKEY_BYTES);
    }
}

static inline uint64_t wordkey_mix(uint64_t h)
{
    h ^= h >> 32;
    h *= 0xD6E8FEB86659FD93ULL;
    h ^= h >> 32;
    return h;
}

/* Hash of the key words, and of the rest for words longer than the key. */
static inline uint64_t wordkey_hash(const uint64_t k[3], const char *w, size_t len)
{
    const uint64_t m = 0x9E3779B97F4A7C15ULL;
    uint64_t h = (k[0] ^ (len * m)) * m;
    h = (h ^ (h >> 29) ^ k[1]) * m;
    h = (h ^ (h >> 29) ^ k[2]) * m;
    for (size_t i = WORDKEY_BYTES; i < len; i++)
        h = (h ^ (unsigned char)w[i]) * m;
    return wordkey_mix(h);
}

#endif
