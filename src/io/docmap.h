/* docmap.h — internal: the one mapping of a read document to the rows of a vocabulary, shared by
 * ingest (the store's vocabulary) and infer/eval (a model's): text tokens by word, UCI ids (and
 * LDA-C ids read with a vocabulary file) through the file's own words, bare LDA-C ids as rows. */
#ifndef JSMF_IO_DOCMAP_H
#define JSMF_IO_DOCMAP_H

#include <stdint.h>

#include "jsmf_io.h"
#include "docs.h"

typedef struct docmap {
    const jsmf_vocab *vocab; /* the rows mapped to (borrowed) */
    jsmf_wordmap *map;       /* word -> row of vocab */
    uint32_t *xlat;          /* the input's own word ids -> row (UINT32_MAX: not in vocab) */
    uint32_t nxlat;
} docmap;

/* Map onto `vocab`, which must outlive the map. */
int docmap_init(docmap *m, const jsmf_vocab *vocab);
void docmap_free(docmap *m);

/* Start an input: its own vocabulary (UCI; LDA-C read with one), if any, translated by word. */
int docmap_input(docmap *m, const jsmf_docs *d);

/* The rows of `doc` in reading order into rows[] and counts[] (room for doc->ntokens, or
 * doc->nids, entries; a text token counts 1), their number in *n and the tokens outside the
 * vocabulary in *oov. The rule for bare LDA-C ids is formats/inputs.md's: every id must be below
 * the vocabulary's size (JSMF_EFORMAT naming the line), never dropped as out of vocabulary; the
 * reader opened with ldac_vocab_size = vocab->n refuses them first, with the byte. */
int docmap_doc(const docmap *m, const jsmf_docs *d, const jsmf_doc *doc, uint32_t *rows,
               uint32_t *counts, uint32_t *n, uint64_t *oov);

/* Where docmap_doc_words puts the words outside the vocabulary (room for as many entries as
 * rows): the token (text) or the file's word (UCI; LDA-C read with one), its length and count. */
typedef struct docmap_oov {
    const char **word;
    uint32_t *len, *count;
    uint32_t n;
} docmap_oov;

/* docmap_doc, also listing the words outside the vocabulary in *o (text: one entry a token,
 * repeats included; bare LDA-C has no words). */
int docmap_doc_words(const docmap *m, const jsmf_docs *d, const jsmf_doc *doc, uint32_t *rows,
                     uint32_t *counts, uint32_t *n, uint64_t *oov, docmap_oov *o);

#endif
