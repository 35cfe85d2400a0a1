/* doc_csr_read.c — a corpus file's documents in memory over a vocabulary's rows (jsmf_doc_csr),
 * for jsmf_refine and other readers of documents until a store holds them. */
#include <stdlib.h>
#include <string.h>

#include "jsmf_refine.h"
#include "core/error.h"
#include "core/grow.h"
#include "io/docreader.h"

#define READ_BATCH 4096

/* The growing arrays of the documents read so far. */
typedef struct csr_build {
    uint64_t *offs;
    uint32_t *ids, *counts;
    uint64_t docs, cap_docs, cap_ids, dropped;
} csr_build;

static int append_batch(csr_build *c, const jsmf_docbatch *b, uint32_t min_len)
{
    for (uint32_t d = 0; d < b->ndocs; d++) {
        uint64_t a = b->start[d], z = b->start[d + 1], tokens = 0;
        for (uint64_t e = a; e < z; e++)
            tokens += b->counts[e];
        if (tokens < min_len) {
            c->dropped++;
            continue;
        }
        uint64_t at = c->offs ? c->offs[c->docs] : 0;
        if (c->docs + 2 > c->cap_docs) {
            uint64_t cap = grow_capacity(c->cap_docs, c->docs + 2, 4096);
            if (grow_array(&c->offs, cap, sizeof *c->offs))
                return jsmf_error(JSMF_ENOMEM, "documents: out of memory");
            c->cap_docs = cap;
            c->offs[c->docs] = at;
        }
        if (at + (z - a) > c->cap_ids) {
            uint64_t cap = grow_capacity(c->cap_ids, at + (z - a), 65536);
            if (grow_array(&c->ids, cap, sizeof *c->ids) ||
                grow_array(&c->counts, cap, sizeof *c->counts))
                return jsmf_error(JSMF_ENOMEM, "documents: out of memory");
            c->cap_ids = cap;
        }
        memcpy(c->ids + at, b->ids + a, (z - a) * sizeof *c->ids);
        memcpy(c->counts + at, b->counts + a, (z - a) * sizeof *c->counts);
        c->offs[++c->docs] = at + (z - a);
    }
    return JSMF_OK;
}

void jsmf_doc_csr_free(jsmf_doc_csr *d)
{
    if (!d)
        return;
    free((void *)d->offs);
    free((void *)d->ids);
    free((void *)d->counts);
    free((void *)d->admit);
    memset(d, 0, sizeof *d);
}

int jsmf_doc_csr_read(const char *const *inputs, uint32_t n, const jsmf_read_opts *ro,
                      const jsmf_vocab *vocab, uint32_t min_doc_len, jsmf_doc_csr *out,
                      uint64_t *dropped)
{
    if (!inputs || !n || !vocab || !vocab->n || !out)
        return jsmf_error(JSMF_EINVAL, "documents: no inputs or no vocabulary");
    docreader *r;
    int rc = docreader_open(inputs, n, ro, vocab, &r);
    if (rc)
        return rc;
    csr_build c = {0};
    jsmf_docbatch b = {0};
    uint32_t got;
    const uint32_t min_len = min_doc_len > 2 ? min_doc_len : 2;
    while (!(rc = docreader_next(r, &b, READ_BATCH, &got)) && got)
        if ((rc = append_batch(&c, &b, min_len)))
            break;
    jsmf_docbatch_free(&b);
    docreader_close(r);
    if (!rc && !c.docs)
        rc = jsmf_error(JSMF_EINVAL, "documents: %s%s: no document has %u in-vocabulary tokens",
                        inputs[0], n > 1 ? " and the others" : "", min_len);
    if (rc) {
        free(c.offs), free(c.ids), free(c.counts);
        return rc;
    }
    jsmf_doc_csr d = {vocab->n, c.docs, c.offs, c.ids, c.counts, NULL};
    *out = d;
    if (dropped)
        *dropped = c.dropped;
    return JSMF_OK;
}
