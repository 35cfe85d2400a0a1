/* source.c — an in-memory CSR matrix seen through the jsmf_source contract, so that the fit
 * stages can be tested and used without a store. */
#include <stdlib.h>

#include "jsmf.h"
#include "core/doccheck.h"

static int csr_scan_rows(void *ctx, uint32_t r0, uint32_t r1, jsmf_row_fn fn, void *arg)
{
    const jsmf_csr *m = ctx;
    for (uint32_t i = r0; i < r1 && i < m->n; i++) {
        uint64_t a = m->rowptr[i], b = m->rowptr[i + 1];
        if (a == b)
            continue;
        int rc = fn(arg, i, m->cols + a, m->vals + a, (uint32_t)(b - a));
        if (rc)
            return rc;
    }
    return JSMF_OK;
}

static int csr_scan(void *ctx, jsmf_row_fn fn, void *arg)
{
    return csr_scan_rows(ctx, 0, UINT32_MAX, fn, arg);
}

void jsmf_csr_source(const jsmf_csr *csr, jsmf_source *out)
{
    out->n = csr->n;
    out->nnz = csr->rowptr[csr->n];
    out->ctx = (void *)csr;
    out->scan = csr_scan;
    out->bytes = 0;
    out->scan_rows = csr_scan_rows;
    out->docs = NULL;
}

/* A document block view over in-memory CSR documents: each block points into the arrays. */
typedef struct doc_csr_view {
    jsmf_doc_csr d;
    uint32_t block_docs;
} doc_csr_view;

static int doc_csr_scan(void *ctx, jsmf_doc_fn fn, void *arg)
{
    const doc_csr_view *v = ctx;
    for (uint64_t first = 0; first < v->d.n_docs; first += v->block_docs) {
        uint64_t left = v->d.n_docs - first;
        jsmf_doc_block b = {first, (uint32_t)(left < v->block_docs ? left : v->block_docs),
                            v->d.offs + first, v->d.ids, v->d.counts};
        int rc = fn(arg, &b);
        if (rc)
            return rc;
    }
    return JSMF_OK;
}

double jsmf_doc_mass(const uint32_t *ids, const uint32_t *counts, uint32_t k,
                     const uint64_t *admit, uint64_t n_docs)
{
    /* Words with equal admission points form runs (ids ascending); a pair is divided by the
     * later of its two points: within a run G^2 - G ordered pairs, across runs 2 G P with P
     * the tokens of the earlier runs. */
    double n = 0;
    for (uint32_t e = 0; e < k; e++)
        n += counts[e];
    double mass = 0, before = 0;
    for (uint32_t e = 0; e < k;) {
        uint64_t a = admit ? admit[ids[e]] : 0;
        double g = 0;
        for (; e < k && (admit ? admit[ids[e]] : 0) == a; e++)
            g += counts[e];
        mass += (g * g - g + 2.0 * g * before) / (double)(n_docs - a);
        before += g;
    }
    return mass / (n * (n - 1));
}

static int check_doc(const jsmf_doc_csr *d, uint64_t m)
{
    uint64_t a = d->offs[m], b = d->offs[m + 1], tokens = 0;
    if (b < a)
        return jsmf_error(JSMF_EINVAL, "documents: offsets of document %llu decrease",
                          (unsigned long long)m);
    uint64_t bad = doc_first_bad_entry(d->ids, d->counts, a, b, d->n);
    if (bad < b)
        return jsmf_error(JSMF_EINVAL, "documents: document %llu, entry %llu: id %u %s",
                          (unsigned long long)m, (unsigned long long)(bad - a), d->ids[bad],
                          d->ids[bad] >= d->n ? "out of range" : !d->counts[bad]
                          ? "has count 0" : "not ascending");
    for (uint64_t e = a; e < b; e++) {
        if (d->admit && d->admit[d->ids[e]] >= d->n_docs)
            return jsmf_error(JSMF_EINVAL, "documents: word %u admitted after the last document",
                              d->ids[e]);
        tokens += d->counts[e];
    }
    if (tokens < 2)
        return jsmf_error(JSMF_EINVAL, "documents: document %llu has %llu tokens (needs 2)",
                          (unsigned long long)m, (unsigned long long)tokens);
    return JSMF_OK;
}

int jsmf_doc_csr_source(const jsmf_doc_csr *d, uint32_t block_docs, jsmf_doc_source *out)
{
    if (!d || !out || !d->n_docs || d->offs[0])
        return jsmf_error(JSMF_EINVAL, "documents: none, or offs[0] is not 0");
    double total = 0;
    uint64_t tokens = 0;
    for (uint64_t m = 0; m < d->n_docs; m++) {
        int rc = check_doc(d, m);
        if (rc)
            return rc;
        uint64_t a = d->offs[m], k = d->offs[m + 1] - a;
        for (uint64_t e = a; e < a + k; e++)
            tokens += d->counts[e];
        if (d->admit)
            total += jsmf_doc_mass(d->ids + a, d->counts + a, (uint32_t)k, d->admit, d->n_docs);
    }
    doc_csr_view *v = malloc(sizeof *v);
    if (!v)
        return jsmf_error(JSMF_ENOMEM, "documents: out of memory");
    v->d = *d;
    v->block_docs = block_docs ? block_docs : 4096;
    *out = (jsmf_doc_source){d->n, d->n_docs, d->offs[d->n_docs], tokens, d->admit,
                             d->admit ? total : 1.0, v, doc_csr_scan, 0};
    return JSMF_OK;
}

void jsmf_doc_csr_source_free(jsmf_doc_source *s)
{
    if (s) {
        free(s->ctx);
        s->ctx = NULL;
    }
}
