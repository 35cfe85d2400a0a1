/* source.c — an in-memory CSR matrix seen through the jsmf_source contract, so that the fit
 * stages can be tested and used without a store. */
#include "jsmf.h"

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
