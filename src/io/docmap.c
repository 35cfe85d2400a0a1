/* docmap.c — a document's words as rows of a vocabulary, one rule for every format and caller. */
#include "io/docmap.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "core/wordmap.h"
#include "docs.h"

int docmap_init(docmap *m, const jsmf_vocab *vocab)
{
    memset(m, 0, sizeof *m);
    m->vocab = vocab;
    return jsmf_wordmap_new(vocab, &m->map);
}

void docmap_free(docmap *m)
{
    jsmf_wordmap_free(m->map);
    free(m->xlat);
    memset(m, 0, sizeof *m);
}

int docmap_input(docmap *m, const jsmf_docs *d)
{
    const jsmf_vocab *fv = docs_vocab(d);
    free(m->xlat);
    m->xlat = NULL, m->nxlat = 0;
    if (!fv)
        return JSMF_OK;
    if (!(m->xlat = malloc((fv->n ? fv->n : 1) * sizeof *m->xlat)))
        return jsmf_error(JSMF_ENOMEM, "%s: out of memory for its vocabulary of %u words",
                          docs_name(d), fv->n);
    for (uint32_t i = 0; i < fv->n; i++)
        m->xlat[i] = jsmf_wordmap_find(m->map, fv->words[i], strlen(fv->words[i]));
    m->nxlat = fv->n;
    return JSMF_OK;
}

int docmap_doc(const docmap *m, const jsmf_docs *d, const jsmf_doc *doc, uint32_t *rows,
               uint32_t *counts, uint32_t *n, uint64_t *oov)
{
    return docmap_doc_words(m, d, doc, rows, counts, n, oov, NULL);
}

int docmap_doc_words(const docmap *m, const jsmf_docs *d, const jsmf_doc *doc, uint32_t *rows,
                     uint32_t *counts, uint32_t *n, uint64_t *oov, docmap_oov *o)
{
    uint32_t k = 0;
    *oov = 0;
    if (o)
        o->n = 0;
    if (io_format_tokens(docs_format(d))) { /* text, items: matched by their bytes */
        /* every token's row first (rows holds ntokens), then compacted in place */
        wordmap_find_many(m->map, doc->tok, doc->toklen, doc->ntokens, rows);
        for (uint32_t i = 0; i < doc->ntokens; i++) {
            uint32_t row = rows[i];
            if (row == UINT32_MAX) {
                ++*oov;
                if (o)
                    o->word[o->n] = doc->tok[i], o->len[o->n] = doc->toklen[i],
                    o->count[o->n++] = 1;
            } else {
                rows[k] = row;
                counts[k++] = 1;
            }
        }
        *n = k;
        return JSMF_OK;
    }
    for (uint32_t i = 0; i < doc->nids; i++) {
        uint32_t row = doc->ids[i];
        if (m->xlat)
            row = row < m->nxlat ? m->xlat[row] : UINT32_MAX;
        else if (row >= m->vocab->n)
            return jsmf_error(JSMF_EFORMAT, "%s:%" PRIu64 ": word id %u out of range: the "
                              "vocabulary has %u words", docs_name(d), doc->line, row,
                              m->vocab->n);
        if (row == UINT32_MAX) {
            *oov += doc->counts[i];
            if (o && doc->ids[i] < m->nxlat) { /* the file's own word names it */
                const char *w = docs_vocab(d)->words[doc->ids[i]];
                o->word[o->n] = w, o->len[o->n] = (uint32_t)strlen(w);
                o->count[o->n++] = doc->counts[i];
            }
        } else {
            rows[k] = row;
            counts[k++] = doc->counts[i];
        }
    }
    *n = k;
    return JSMF_OK;
}
