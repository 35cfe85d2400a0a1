/* fit_linalg.c — dense helpers of the fit: reductions over words in a fixed chunk order (so the
 * result never depends on the thread count), orthonormalisation, small eigenproblems, simplex
 * projection and a seeded random generator. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>
#include <lapacke.h>

#include "core/hash.h"
#include "core/threads.h"
#include "fit_internal.h"
#include "mpi/comm.h"

/* C (p x q) = A^T B with A (n x p), B (n x q): partial products per chunk of FIT_CHUNK rows,
 * computed in parallel (single-threaded BLAS inside), summed in chunk order. */
void fit_gemm_tn(uint32_t n, uint32_t p, uint32_t q, const double *A, const double *B, double *C)
{
    uint32_t nch = (n + FIT_CHUNK - 1) / FIT_CHUNK;
    if (nch <= 1) {
        memset(C, 0, sizeof(double) * p * q);
        if (n)
            cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, p, q, n, 1.0, A, p, B, q, 0.0,
                        C, q);
        return;
    }
    double *part = malloc(sizeof(double) * (size_t)nch * p * q);
#pragma omp parallel for schedule(static) num_threads(call_threads())
    for (uint32_t c = 0; c < nch; c++) {
        uint32_t r0 = c * FIT_CHUNK, nb = n - r0 < FIT_CHUNK ? n - r0 : FIT_CHUNK;
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, p, q, nb, 1.0, A + (size_t)r0 * p,
                    p, B + (size_t)r0 * q, q, 0.0, part + (size_t)c * p * q, q);
    }
    memcpy(C, part, sizeof(double) * p * q);
    for (uint32_t c = 1; c < nch; c++)
        for (size_t i = 0; i < (size_t)p * q; i++)
            C[i] += part[(size_t)c * p * q + i];
    free(part);
}

fit_part fit_part_whole(uint32_t n)
{
    return (fit_part){n, 0, n, NULL, NULL};
}

int fit_part_split(const fit_part *L)
{
    return L->comm && jsmf_comm_size(L->comm) > 1;
}

int fit_part_agree(const fit_part *L, int rc)
{
    return L->comm ? comm_agree(L->comm, rc) : rc;
}

int fit_part_owner(const fit_part *L, uint32_t i)
{
    int r = 0;
    while (fit_part_split(L) && r + 1 < jsmf_comm_size(L->comm) && L->starts[r + 1] <= i)
        r++;
    return r;
}

/* The chunks [*c0, *c1) of rows [a, b) (a a multiple of FIT_CHUNK). */
static void chunks_of(uint32_t a, uint32_t b, uint32_t *c0, uint32_t *c1)
{
    *c0 = a / FIT_CHUNK;
    *c1 = b > a ? (b + FIT_CHUNK - 1) / FIT_CHUNK : *c0;
}

void fit_part_chunks(const fit_part *L, uint32_t *c0, uint32_t *c1)
{
    chunks_of(L->r0, L->r1, c0, c1);
}

int fit_part_add_chunks(const fit_part *L, double *part, size_t width, double *sum)
{
    uint32_t nch = (L->n + FIT_CHUNK - 1) / FIT_CHUNK, c0, c1;
    int rc = JSMF_OK;
    if (fit_part_split(L)) {
        int size = jsmf_comm_size(L->comm), rank = jsmf_comm_rank(L->comm);
        uint64_t *counts = malloc(sizeof *counts * (size_t)size);
        if (!counts)
            return jsmf_error(JSMF_ENOMEM, "fit: out of memory");
        for (int r = 0; r < size; r++) {
            chunks_of(L->starts[r], L->starts[r + 1], &c0, &c1);
            counts[r] = (uint64_t)(c1 - c0) * width * sizeof(double);
        }
        fit_part_chunks(L, &c0, &c1);
        rc = comm_allgatherv(L->comm, part + c0 * width, counts[rank], part, counts);
        free(counts);
        if (rc)
            return rc;
    }
    if (!nch) {
        memset(sum, 0, sizeof(double) * width);
        return JSMF_OK;
    }
    memcpy(sum, part, sizeof(double) * width);
    for (uint32_t c = 1; c < nch; c++)
        for (size_t i = 0; i < width; i++)
            sum[i] += part[c * width + i];
    return JSMF_OK;
}

int fit_gemm_tn_part(const fit_part *L, uint32_t p, uint32_t q, const double *A, const double *B,
                     double *C)
{
    if (!fit_part_split(L)) {
        fit_gemm_tn(L->r1 - L->r0, p, q, A, B, C);
        return JSMF_OK;
    }
    uint32_t nch = (L->n + FIT_CHUNK - 1) / FIT_CHUNK, c0, c1;
    size_t pq = (size_t)p * q;
    fit_part_chunks(L, &c0, &c1);
    double *part = calloc(nch ? nch * pq : 1, sizeof(double));
    if (!part)
        return jsmf_error(JSMF_ENOMEM, "fit: out of memory (%u chunk partials)", nch);
#pragma omp parallel for schedule(static) num_threads(call_threads())
    for (uint32_t c = c0; c < c1; c++) {
        uint32_t r0 = c * FIT_CHUNK, nb = L->r1 - r0 < FIT_CHUNK ? L->r1 - r0 : FIT_CHUNK;
        size_t off = r0 - L->r0;
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, p, q, nb, 1.0, A + off * p, p,
                    B + off * q, q, 0.0, part + c * pq, q);
    }
    int rc = fit_part_add_chunks(L, part, pq, C);
    free(part);
    return rc;
}

int fit_factor_delta(const fit_part *L, uint32_t r, const double *W1, const double *g1,
                     const double *W2, const double *g2, double *delta)
{
    double *H11 = malloc(sizeof(double) * r * r), *H22 = malloc(sizeof(double) * r * r);
    double *H12 = malloc(sizeof(double) * r * r);
    int rc = !H11 || !H22 || !H12 ? jsmf_error(JSMF_ENOMEM, "fit: out of memory") : JSMF_OK;
    rc = fit_part_agree(L, rc);
    if (!rc && !(rc = fit_gemm_tn_part(L, r, r, W1, W1, H11)) &&
        !(rc = fit_gemm_tn_part(L, r, r, W2, W2, H22)) &&
        !(rc = fit_gemm_tn_part(L, r, r, W1, W2, H12))) {
        double a = 0, b = 0, c = 0;
        for (uint32_t i = 0; i < r; i++)
            for (uint32_t j = 0; j < r; j++) {
                double g1i = g1 ? g1[i] : 1, g1j = g1 ? g1[j] : 1;
                double g2i = g2 ? g2[i] : 1, g2j = g2 ? g2[j] : 1;
                a += g1i * H11[i * r + j] * g1j * H11[j * r + i];
                c += g2i * H22[i * r + j] * g2j * H22[j * r + i];
                b += g1i * H12[i * r + j] * g2j * H12[i * r + j];
            }
        double d2 = a - 2 * b + c;
        *delta = sqrt(fmax(d2, 0)) / (a > 0 ? sqrt(a) : 1);
    }
    free(H11), free(H22), free(H12);
    return rc;
}

int fit_part_gather_bytes(const fit_part *L, size_t row_bytes, const void *X, void *full)
{
    if (!fit_part_split(L)) {
        if (full != X)
            memcpy(full, X, row_bytes * (L->r1 - L->r0));
        return JSMF_OK;
    }
    int size = jsmf_comm_size(L->comm);
    uint64_t *counts = malloc(sizeof *counts * (size_t)size);
    if (!counts)
        return jsmf_error(JSMF_ENOMEM, "fit: out of memory");
    for (int r = 0; r < size; r++)
        counts[r] = (uint64_t)(L->starts[r + 1] - L->starts[r]) * row_bytes;
    int rc = comm_allgatherv(L->comm, X, counts[jsmf_comm_rank(L->comm)], full, counts);
    free(counts);
    return rc;
}

int fit_part_gather(const fit_part *L, uint32_t width, const double *X, double *full)
{
    return fit_part_gather_bytes(L, sizeof(double) * width, X, full);
}

typedef struct {
    uint32_t id, at;
} id_at;

static int cmp_id_at(const void *a, const void *b)
{
    const id_at *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

int fit_part_pick(const fit_part *L, const uint32_t *ids, uint32_t m, const double *X,
                  uint32_t w, double *out)
{
    if (!fit_part_split(L)) {
        for (uint32_t a = 0; a < m; a++)
            memcpy(out + (size_t)a * w, X + (size_t)(ids[a] - L->r0) * w, sizeof(double) * w);
        return JSMF_OK;
    }
    int size = jsmf_comm_size(L->comm), rank = jsmf_comm_rank(L->comm);
    id_at *ord = malloc(sizeof *ord * (m ? m : 1));
    double *buf = malloc(sizeof(double) * m * w + 1);
    uint64_t *counts = calloc((size_t)size, sizeof *counts);
    int rc = ord && buf && counts ? JSMF_OK : jsmf_error(JSMF_ENOMEM, "fit: out of memory");
    if ((rc = fit_part_agree(L, rc)))
        goto out;
    for (uint32_t a = 0; a < m; a++)
        ord[a] = (id_at){ids[a], a};
    qsort(ord, m, sizeof *ord, cmp_id_at);
    /* ranges ascend with rank: the rows arrive in the sorted order */
    uint32_t first = 0;
    for (uint32_t b = 0; b < m; b++) {
        int r = fit_part_owner(L, ord[b].id);
        counts[r] += sizeof(double) * w;
        first += r < rank;
        if (r == rank)
            memcpy(buf + (size_t)b * w, X + (size_t)(ord[b].id - L->r0) * w, sizeof(double) * w);
    }
    if (!(rc = comm_allgatherv(L->comm, buf + (size_t)first * w, counts[rank], buf, counts)))
        for (uint32_t b = 0; b < m; b++)
            memcpy(out + (size_t)ord[b].at * w, buf + (size_t)b * w, sizeof(double) * w);
out:
    free(ord), free(buf), free(counts);
    return rc;
}

/* C = alpha A S + beta C, one dgemm a row chunk, chunks in parallel. */
static void gemm_chunks(uint32_t n, uint32_t p, uint32_t q, double alpha, const double *A,
                        const double *S, double beta, double *C)
{
    uint32_t nch = (n + FIT_CHUNK - 1) / FIT_CHUNK;
#pragma omp parallel for schedule(static) num_threads(call_threads())
    for (uint32_t c = 0; c < nch; c++) {
        uint32_t r0 = c * FIT_CHUNK, nb = n - r0 < FIT_CHUNK ? n - r0 : FIT_CHUNK;
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nb, q, p, alpha,
                    A + (size_t)r0 * p, p, S, q, beta, C + (size_t)r0 * q, q);
    }
}

void fit_gemm_nn(uint32_t n, uint32_t p, uint32_t q, const double *A, const double *S, double *C)
{
    gemm_chunks(n, p, q, 1.0, A, S, 0.0, C);
}

void fit_gemm_nn_acc(uint32_t n, uint32_t p, uint32_t q, double alpha, const double *A,
                     const double *S, double *C)
{
    gemm_chunks(n, p, q, alpha, A, S, 1.0, C);
}

/* Each chunk's product goes to its thread's FIT_CHUNK x p buffer and back over the chunk: the
 * same dgemm on the same rows as fit_gemm_nn, so the same bits, without an n-row scratch. */
int fit_gemm_nn_inplace(uint32_t n, uint32_t p, double *A, const double *S)
{
    uint32_t nch = (n + FIT_CHUNK - 1) / FIT_CHUNK, rows = n < FIT_CHUNK ? n : FIT_CHUNK;
    int nt = call_threads();
    double *buf = malloc(sizeof(double) * (size_t)(nt > 0 ? nt : 1) * rows * p + 1);
    if (!buf)
        return jsmf_error(JSMF_ENOMEM, "fit: out of memory (%d x %u x %u)", nt, rows, p);
#pragma omp parallel for schedule(static) num_threads(nt)
    for (uint32_t c = 0; c < nch; c++) {
        uint32_t r0 = c * FIT_CHUNK, nb = n - r0 < FIT_CHUNK ? n - r0 : FIT_CHUNK;
        double *me = buf + (size_t)omp_get_thread_num() * rows * p, *a = A + (size_t)r0 * p;
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nb, p, p, 1.0, a, p, S, p, 0.0,
                    me, p);
        memcpy(a, me, sizeof(double) * nb * p);
    }
    free(buf);
    return JSMF_OK;
}

int fit_ranked_desc(const void *a, const void *b)
{
    const fit_ranked *x = a, *y = b;
    if (x->v != y->v)
        return x->v < y->v ? 1 : -1;
    return x->i < y->i ? -1 : x->i > y->i;
}

double fit_sum_ordered(const double *x, uint64_t n)
{
    double s = 0;
    for (uint64_t i = 0; i < n; i++)
        s += x[i];
    return s;
}

int fit_syev(uint32_t p, double *A, double *w)
{
    if (p == 0)
        return 0;
    return LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', 'U', p, A, p, w);
}

/* One SVQB sweep: G = Q^T Q = V D V^T, Q <- Q V D^-1/2 over the well-conditioned directions
 * (robust to rank deficiency, unlike Cholesky QR). Q holds this rank's rows of L; *rank gets
 * the rank kept. In place, a row chunk at a time (no n-row scratch). */
static int svqb(const fit_part *L, uint32_t p, double *Q, uint32_t *rank)
{
    uint32_t nl = L->r1 - L->r0;
    double *G = malloc(sizeof(double) * p * p), *w = malloc(sizeof(double) * p);
    double *S = calloc((size_t)p * p, sizeof(double));
    int rc = !G || !w || !S ? jsmf_error(JSMF_ENOMEM, "fit: out of memory (%u x %u)", p, p)
                            : fit_gemm_tn_part(L, p, p, Q, Q, G);
    if (rc)
        goto out;
    fit_syev(p, G, w);
    double wmax = w[p - 1] > 0 ? w[p - 1] : 0;
    *rank = 0;
    /* keep directions by descending eigenvalue so the order is stable */
    for (int32_t j = (int32_t)p - 1; j >= 0; j--) {
        if (!(w[j] > wmax * 1e-24) || w[j] <= 0)
            continue;
        double f = 1.0 / sqrt(w[j]);
        for (uint32_t i = 0; i < p; i++)
            S[(size_t)i * p + *rank] = G[(size_t)i * p + j] * f;
        (*rank)++;
    }
    rc = fit_part_agree(L, fit_gemm_nn_inplace(nl, p, Q, S));
out:
    free(G), free(w), free(S);
    return rc;
}

int fit_orth_part(const fit_part *L, uint32_t p, double *Q, uint32_t *rank)
{
    int rc = svqb(L, p, Q, rank);
    return rc ? rc : svqb(L, p, Q, rank);
}

uint64_t fit_rng_next(uint64_t *s)
{
    uint64_t z = hash_mix64(*s);
    *s += UINT64_C(0x9E3779B97F4A7C15); /* splitmix64: the state steps by the gamma */
    return z;
}

double fit_rng_gauss(uint64_t *s)
{
    double u1 = ((fit_rng_next(s) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
    double u2 = ((fit_rng_next(s) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* The values of x[0, m) above theta, in order, into y (which may be x): how many. */
static uint32_t keep_above(uint32_t m, const double *x, double theta, double *y)
{
    uint32_t kept = 0;
    for (uint32_t j = 0; j < m; j++) {
        double xj = x[j];
        y[kept] = xj;
        kept += xj > theta;
    }
    return kept;
}

/* Euclidean projection onto the probability simplex: the threshold theta with
 * sum_j max(v_j - theta, 0) = 1, found by Michelot's fixed point (1986): start from the mean
 * over all coordinates and drop those at or below the current theta until none is dropped.
 * theta only grows, so at most k rounds, usually 2-4: no sort (qsort dominated B's recovery).
 * The coordinates still above theta are kept, in their order, in scratch (k doubles): a round
 * sums only those, the same additions in the same order as a scan of all k that skips the
 * others (so the same theta to the bit), without a branch a coordinate to mispredict. */
void fit_simplex_project(uint32_t k, const double *v, double *out, double *scratch)
{
    double theta = -INFINITY;
    uint32_t m = keep_above(k, v, theta, scratch);
    for (;;) {
        double sum = 0;
        for (uint32_t j = 0; j < m; j++)
            sum += scratch[j];
        double t = (sum - 1.0) / m;
        if (!(t > theta))
            break;
        theta = t;
        m = keep_above(m, scratch, theta, scratch);
    }
    for (uint32_t j = 0; j < k; j++)
        out[j] = v[j] > theta ? v[j] - theta : 0.0;
}
