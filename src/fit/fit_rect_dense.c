/* fit_rect_dense.c — R held whole in memory (N x N doubles): the dense path's rectified C, or
 * a generated R made dense where it fits; every pass reads its rows in place. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "core/threads.h"
#include "fit_internal.h"

static void dense_rows(const fit_mat *R, uint32_t r0, uint32_t nb, double *out, uint64_t *nneg,
                       double *negmass)
{
    const double *X = R->state;
    memcpy(out, X + (size_t)r0 * R->n, sizeof(double) * nb * R->n);
    *nneg = 0, *negmass = 0;
}

static const double *dense_rows_at(const fit_mat *R, uint32_t r0)
{
    const double *X = R->state;
    return X + (size_t)r0 * R->n;
}

/* Normalised already (by the dense rectification, or by the finish that made it dense). */
static int dense_finish(fit_mat *R, double *c, double *q2, jsmf_fit_report *rep)
{
    (void)rep;
    return fit_mat_sums_rows(R, c, q2, NULL, NULL);
}

static const fit_mat_ops dense_ops = {
    .rows = dense_rows,
    .rows_at = dense_rows_at,
    .finish = dense_finish,
    .free = free,
    .product_passes = 1,
};

void fit_rect_dense(fit_mat *R, uint32_t n, double *X)
{
    memset(R, 0, sizeof *R);
    R->ops = &dense_ops, R->state = X, R->n = n;
}

int fit_rect_dense_adopt(fit_mat *R, uint64_t *nneg, double *negmass)
{
    size_t n = R->n;
    uint32_t b = R->block ? R->block : 64, nblk = (uint32_t)((n + b - 1) / b);
    double *X = malloc(sizeof(double) * n * n);
    uint64_t *cnt = calloc(nblk, sizeof *cnt);
    double *mass = calloc(nblk, sizeof *mass);
    int rc = X && cnt && mass ? fit_mat_gather(R)
                              : jsmf_error(JSMF_ENOMEM, "fit: no memory for a dense %zu x %zu R",
                                           n, n);
    if (rc) {
        free(X), free(cnt), free(mass);
        return rc;
    }
#pragma omp parallel for schedule(dynamic, 1) num_threads(R->threads > 0 ? R->threads : call_threads())
    for (uint32_t blk = 0; blk < nblk; blk++) {
        uint32_t r0 = blk * b, nb = (uint32_t)(n - r0 < b ? n - r0 : b);
        fit_mat_rows(R, r0, nb, X + (size_t)r0 * n, &cnt[blk], &mass[blk]);
    }
    *nneg = 0, *negmass = 0;
    for (uint32_t blk = 0; blk < nblk; blk++)
        *nneg += cnt[blk], *negmass += mass[blk];
    free(cnt), free(mass);
    if (R->ops->free)
        R->ops->free(R->state);
    R->ops = &dense_ops, R->state = X;
    return JSMF_OK;
}

void fit_rect_dense_divide(fit_mat *R, double tot)
{
    double *X = R->state;
    for (size_t e = 0; e < (size_t)R->n * R->n; e++)
        X[e] /= tot;
}

int fit_rect_dense_as(fit_mat *R)
{
    uint64_t nneg;
    double negmass;
    return fit_rect_dense_adopt(R, &nneg, &negmass);
}
