/* fit_rect_sparse.c — R as C's own rows in memory (CSR): the unrectified C of --rectify none.
 * Its products and sums go by the nonzeros, never by N x N rows. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "core/threads.h"
#include "fit_internal.h"

typedef struct {
    uint64_t *rowptr; /* n + 1 */
    uint32_t *cols;
    double *vals;
} csr;

static void sparse_free(void *state)
{
    csr *m = state;
    if (m)
        free(m->rowptr), free(m->cols), free(m->vals);
    free(m);
}

static void sparse_rows(const fit_mat *R, uint32_t r0, uint32_t nb, double *out, uint64_t *nneg,
                        double *negmass)
{
    const csr *m = R->state;
    size_t n = R->n;
    memset(out, 0, sizeof(double) * nb * n);
    for (uint32_t i = 0; i < nb; i++)
        for (uint64_t e = m->rowptr[r0 + i]; e < m->rowptr[r0 + i + 1]; e++)
            out[i * n + m->cols[e]] = m->vals[e];
    *nneg = 0, *negmass = 0;
}

static int sparse_apply(const fit_mat *R, const double *V, uint32_t p, double *Z, uint64_t *nneg,
                        double *negmass)
{
    const csr *m = R->state;
#pragma omp parallel for schedule(dynamic, 256) num_threads(R->threads > 0 ? R->threads : call_threads())
    for (uint32_t i = 0; i < R->n; i++) {
        double *z = Z + (size_t)i * p;
        memset(z, 0, sizeof(double) * p);
        for (uint64_t e = m->rowptr[i]; e < m->rowptr[i + 1]; e++)
            cblas_daxpy(p, m->vals[e], V + (size_t)m->cols[e] * p, 1, z, 1);
    }
    if (nneg)
        *nneg = 0;
    if (negmass)
        *negmass = 0;
    return JSMF_OK;
}

/* C sums to 1 as the source gives it. */
static int sparse_finish(fit_mat *R, double *c, double *q2, jsmf_fit_report *rep)
{
    const csr *m = R->state;
    (void)rep;
    for (uint32_t i = 0; i < R->n; i++) {
        double a = 0, b = 0;
        for (uint64_t e = m->rowptr[i]; e < m->rowptr[i + 1]; e++)
            a += m->vals[e], b += m->vals[e] * m->vals[e];
        c[i] = a, q2[i] = b;
    }
    return JSMF_OK;
}

static const fit_mat_ops sparse_ops = {
    .rows = sparse_rows,
    .apply = sparse_apply,
    .finish = sparse_finish,
    .free = sparse_free,
    .cheap_product = 1,
};

typedef struct {
    csr *m;
    uint32_t n;
    uint64_t cap, used;
    uint32_t next;
} csr_load;

static int csr_row(void *arg, uint32_t row, const uint32_t *cols, const double *vals, uint32_t nv)
{
    csr_load *c = arg;
    csr *m = c->m;
    if (row >= c->n || row < c->next)
        return jsmf_error(JSMF_EFORMAT, "fit: source rows out of order at %u", row);
    while (c->used + nv > c->cap) {
        uint64_t cap = c->cap ? c->cap * 2 : 1 << 16;
        uint32_t *nc = realloc(m->cols, cap * sizeof *nc);
        double *nvv = nc ? realloc(m->vals, cap * sizeof *nvv) : NULL;
        if (nc)
            m->cols = nc;
        if (!nvv)
            return jsmf_error(JSMF_ENOMEM, "fit: no memory for C (%llu entries)",
                              (unsigned long long)cap);
        m->vals = nvv;
        c->cap = cap;
    }
    for (uint32_t i = c->next; i <= row; i++)
        m->rowptr[i] = c->used;
    memcpy(m->cols + c->used, cols, nv * sizeof *cols);
    memcpy(m->vals + c->used, vals, nv * sizeof *vals);
    c->used += nv;
    c->next = row + 1;
    return 0;
}

int fit_rect_sparse_load(const jsmf_source *C, fit_mat *R)
{
    memset(R, 0, sizeof *R);
    csr *m = calloc(1, sizeof *m);
    if (!m || !(m->rowptr = calloc((size_t)C->n + 1, sizeof *m->rowptr))) {
        sparse_free(m);
        return jsmf_error(JSMF_ENOMEM, "fit: no memory for C rows");
    }
    csr_load c = {m, C->n, 0, 0, 0};
    int rc = C->scan ? C->scan(C->ctx, csr_row, &c) : fit_source_scan(C, 0, C->n, csr_row, &c);
    if (rc) {
        sparse_free(m);
        return rc < 0 ? rc : jsmf_error(JSMF_EIO, "fit: source scan stopped (%d)", rc);
    }
    for (uint32_t i = c.next; i <= C->n; i++)
        m->rowptr[i] = c.used;
    R->ops = &sparse_ops, R->state = m, R->n = C->n;
    return JSMF_OK;
}
