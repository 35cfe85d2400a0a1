/* pending.h — the words outside the vocabulary that an ingest window met (src/ingest/pending.c):
 * an open-addressing table of word bytes with exact document and term frequencies, handed to the
 * store at each checkpoint (formats/store.md, "Growth") and bounded by its share of --mem. */
#ifndef JSMF_INGEST_PENDING_H
#define JSMF_INGEST_PENDING_H

#include <stdint.h>

#include "store/flush.h"

/* Bytes a type takes at most, besides its word's bytes (twice: the arena grows by doubling):
 * its slot (32 bytes at load <= 1/2, doubled when the table doubles) and its entry in the list
 * a checkpoint hands over (24 bytes). */
#define PENDING_TYPE_BYTES (2 * 2 * 32 + 24)

typedef struct pending_slot {
    uint32_t off, len;   /* the word in the arena; len 0: empty slot */
    uint32_t stamp, pad; /* the last document that counted it (df counts a document once) */
    uint64_t df, tf;
} pending_slot;

typedef struct pending_table {
    pending_slot *slots;
    uint32_t cap, n;     /* slots (a power of two), types held */
    char *arena;
    uint64_t used, arena_cap;
    uint64_t limit;      /* bytes the table may take (PENDING_TYPE_BYTES a type + 2 x bytes) */
    jsmf_pending_word *list; /* the checkpoint's list */
} pending_table;

int pending_init(pending_table *p, uint64_t limit);
void pending_free(pending_table *p);
/* Forget every type (after a checkpoint stored them). */
void pending_clear(pending_table *p);
/* 1 when `types` more types of `bytes` bytes in all fit the limit (0: checkpoint first; an
 * empty table always takes them). */
int pending_fits(const pending_table *p, uint64_t types, uint64_t bytes);
/* Count `count` occurrences of a word in document `stamp` (distinct per document, not 0). */
int pending_add(pending_table *p, const char *w, uint32_t len, uint64_t count, uint32_t stamp);
/* Add counts counted elsewhere (the shards of an MPI job) to a word's. */
int pending_add_counts(pending_table *p, const char *w, uint32_t len, uint64_t df, uint64_t tf);
/* The hash a word's slot is found by (also what a pre-pass splits the words into parts by). */
uint64_t pending_word_hash(const char *w, uint32_t len);
/* The types held, sorted by bytes, into *out (owned by the table until the next clear). */
int pending_list(pending_table *p, const jsmf_pending_word **out, uint32_t *n);

#endif
