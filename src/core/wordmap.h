/* wordmap.h — internal: the word map's lookup of many tokens at once (jsmf_wordmap_find's
 * results, with the table's cache misses overlapped across tokens). */
#ifndef JSMF_CORE_WORDMAP_H
#define JSMF_CORE_WORDMAP_H

#include "jsmf.h"

/** rows[i] = jsmf_wordmap_find(m, tok[i], len[i]) for i < n. */
void wordmap_find_many(const jsmf_wordmap *m, const char *const *tok, const uint32_t *len,
                       uint32_t n, uint32_t *rows);

#endif
