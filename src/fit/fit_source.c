/* fit_source.c — products C V of the original co-occurrence with tall blocks V, the only way the
 * fit reads C. C is held in memory as CSR when it fits half the budget (read once), and streamed
 * from its source on every product otherwise. Rows dense enough are multiplied as one dense GEMM
 * per row block, the rest by a sparse kernel; in single precision the values and V are float32.
 * The first read also gives each row's sum and sum of squares.
 *
 * In an MPI job each rank reads only its range of rows (cut so that the ranges hold about equal
 * entries), computes those rows of C V, and the ranks exchange their rows of the product
 * (allgather): every rank then holds what one process would, while C is read and held once
 * across the job. Which products are formed, and how (cached or streamed, double or float),
 * is decided from the whole of C, so the fit is the one a single process makes.
 *
 * C defined by its documents (jsmf_source.docs) is applied through them instead (fit_docs.c)
 * when the cost rule below says they are cheaper, or when C has no rows: then every pass of this
 * reader (products, chosen rows, row statistics) uses the documents, and in an MPI job every
 * rank makes the whole product from all the documents (the same bits on every rank, nothing to
 * exchange: the documents path does not divide its work among ranks).
 *
 * (Measured and dropped: replacing a C too large for memory by an unbiased entrywise sample that
 * fits, to read the store once. On a dense planted corpus (N=5000, 97% non-zero) a sample of
 * half the entries moved the K-th eigenvalue by 60% and the l1 error to the truth from 0.39 to
 * 1.48: sampling noise swamps the weaker topics.) */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "core/error.h"
#include "fit_internal.h"
#include "jsmf_comm.h"
#include "mpi/comm.h"

/* Rows per block: the unit of parallel work and of the dense GEMM. A block is the rows
 * [64 b, 64 b + 64) of C, whatever is buffered, so that which rows share a GEMM (and with it
 * every rounding) depends neither on the thread count, nor on how C is streamed, nor on the
 * ranks of an MPI job, whose ranges start at multiples of it. */
#define SRC_BLOCK 64
/* A row with at least n / SRC_DENSE_DIV entries is multiplied densely. */
#define SRC_DENSE_DIV 8
/* Streaming buffer: rows and entries handed to the workers at once. */
#define SRC_BUF_ROWS 4096
#define SRC_BUF_NNZ (1u << 22)

struct fit_csrc {
    const jsmf_source *C;
    uint32_t n;
    jsmf_comm *comm;    /* one process, or the ranks of an MPI job */
    uint32_t r0, r1;    /* the rows this process reads */
    uint32_t *starts;   /* every rank's first row, and n (an MPI job; NULL on one process) */
    int nt, single;
    /* C itself when cached (or the streaming buffer when not) */
    int cached;
    uint64_t cap;     /* entries the cache may hold */
    uint64_t *rowptr;
    uint32_t *rows, *cols;  /* rows: the buffer's row ids (identity when cached) */
    double *vd;
    float *vf;
    uint32_t nrows;
    uint64_t nnz;
    uint64_t buf_nnz;   /* entries the streaming buffer holds now (it grows for a long block) */
    uint32_t *bstart;   /* buffer positions where a block of C starts, and the end */
    /* the product being formed */
    const double *V;
    const float *Vf;
    double share;       /* this rank's part of C's entries (1 on one process) */
    double *Z;          /* the product's rows from z0 (0, or this rank's first row) */
    uint32_t z0;
    uint32_t p;
    float **dense_f;
    double **dense_d;
    float **zf;
    /* row statistics of C, from the first read */
    double *rowsum, *rowsq;
    int have_stats;
    uint64_t passes;
    uint64_t scans;     /* scans of the source, and their time */
    double scan_secs;
    uint32_t planned;   /* passes the caller expects, for the progress line */
    jsmf_step_progress_fn progress;
    void *progress_arg;
    /* C through its documents (NULL: through its rows) */
    fit_docs *docs;
    int have_rowsq;
};

typedef struct {
    jsmf_row_fn fn;
    void *arg;
    uint32_t r0, r1;
} range_filter;

static int filter_row(void *arg, uint32_t row, const uint32_t *cols, const double *vals,
                      uint32_t nv)
{
    range_filter *f = arg;
    return row < f->r0 || row >= f->r1 ? 0 : f->fn(f->arg, row, cols, vals, nv);
}

/* This process's rows of the source: all of them, or a range read by seeking (or filtered). */
static int scan_range(const jsmf_source *C, uint32_t r0, uint32_t r1, jsmf_row_fn fn, void *arg)
{
    if (!C->scan)
        return fit_source_scan(C, r0, r1, fn, arg);
    if (r0 == 0 && r1 >= C->n)
        return C->scan(C->ctx, fn, arg);
    if (C->scan_rows)
        return C->scan_rows(C->ctx, r0, r1, fn, arg);
    range_filter f = {fn, arg, r0, r1};
    return C->scan(C->ctx, filter_row, &f);
}

/* A scan of the source, timed: the rate C is read at is reported. */
static int timed_scan(fit_csrc *s, jsmf_row_fn fn, void *arg)
{
    double t = clock_seconds();
    int rc = scan_range(s->C, s->r0, s->r1, fn, arg);
    s->scan_secs += clock_seconds() - t, s->scans++;
    return rc;
}

/* ---- an MPI job: the ranges, and the rows of results every rank needs --------------------- */

static int count_row(void *arg, uint32_t row, const uint32_t *cols, const double *vals,
                     uint32_t nv)
{
    (void)cols, (void)vals;
    uint64_t *w = arg;
    w[row] = nv;
    return 0;
}

/* Ranges of about equal entries: each rank counts the entries of an equal slice of rows, the
 * counts are added, and every rank cuts the same ranges from them. */
static int split_rows(fit_csrc *s)
{
    int size = jsmf_comm_size(s->comm), rank = jsmf_comm_rank(s->comm);
    s->r0 = 0, s->r1 = s->n;
    if (size == 1)
        return JSMF_OK;
    uint64_t *w = calloc(s->n ? s->n : 1, sizeof *w);
    if (!w)
        return jsmf_error(JSMF_ENOMEM, "fit: out of memory");
    uint32_t a, b;
    comm_split(s->n, NULL, size, rank, &a, &b);
    int rc = scan_range(s->C, a, b, count_row, w);
    if (rc > 0)
        rc = jsmf_error(JSMF_EIO, "fit: source scan stopped (%d)", rc);
    if (!(rc = comm_agree(s->comm, rc)))
        rc = comm_allreduce(s->comm, w, s->n, JSMF_COMM_U64, JSMF_COMM_SUM);
    if (!rc && !(s->starts = malloc(sizeof *s->starts * ((size_t)size + 1))))
        rc = jsmf_error(JSMF_ENOMEM, "fit: out of memory");
    /* ranges of whole chunks of the fit's reductions (FIT_CHUNK, a multiple of C's blocks,
     * SRC_BLOCK), cut by their entries: the factor's rows are split as C's (fit_part) */
    uint32_t nch = (s->n + FIT_CHUNK - 1) / FIT_CHUNK;
    uint64_t *cw = rc ? NULL : calloc(nch ? nch : 1, sizeof *cw);
    if (!rc && !cw)
        rc = jsmf_error(JSMF_ENOMEM, "fit: out of memory");
    for (uint32_t i = 0; !rc && i < s->n; i++)
        cw[i / FIT_CHUNK] += w[i];
    /* a chunk heavier than a rank's share (the frequent words') would leave a range empty:
     * each rank gets at least one chunk while there are enough */
    for (int r = 0, prev = -1; !rc && r < size; r++) {
        uint32_t c0, c1;
        comm_split(nch, cw, size, r, &c0, &c1);
        if (nch >= (uint32_t)size) {
            c0 = (int64_t)c0 > prev ? c0 : (uint32_t)(prev + 1);
            c0 = c0 < nch - size + r ? c0 : nch - size + r;
        }
        prev = (int)c0;
        s->starts[r] = c0 * FIT_CHUNK < s->n ? c0 * FIT_CHUNK : s->n;
    }
    free(cw);
    if (!rc) {
        s->starts[size] = s->n;
        s->r0 = s->starts[rank], s->r1 = s->starts[rank + 1];
        uint64_t mine = 0, all = 0;
        for (uint32_t i = 0; i < s->n; i++)
            all += w[i], mine += i >= s->r0 && i < s->r1 ? w[i] : 0;
        s->share = all ? (double)mine / all : 0;
    }
    free(w);
    return rc;
}

/* Every rank's rows of an n x width array of doubles, to all ranks. */
static int share_rows(fit_csrc *s, double *X, uint32_t width)
{
    if (s->docs) /* every rank made every row */
        return JSMF_OK;
    fit_part L = fit_csrc_part(s);
    return fit_part_gather(&L, width, X + (size_t)s->r0 * width, X);
}

/* The row statistics, once the first read has seen every row of this rank. */
static int share_stats(fit_csrc *s)
{
    int rc = share_rows(s, s->rowsum, 1);
    return rc ? rc : share_rows(s, s->rowsq, 1);
}

void fit_csrc_scans(const fit_csrc *s, uint64_t *scans, double *secs)
{
    if (s->docs)
        fit_docs_scans(s->docs, scans, secs);
    else
        *scans = s->scans, *secs = s->scan_secs;
}

/* ---- one block of buffered rows ---------------------------------------------------------- */

static void sparse_row_d(const fit_csrc *s, uint64_t e0, uint64_t e1, double *z)
{
    uint32_t p = s->p;
    for (uint64_t e = e0; e < e1; e++) {
        double v = s->vd[e];
        const double *x = s->V + (size_t)s->cols[e] * p;
        if (e + 4 < e1)
            __builtin_prefetch(s->V + (size_t)s->cols[e + 4] * p);
#pragma omp simd
        for (uint32_t c = 0; c < p; c++)
            z[c] += v * x[c];
    }
}

static void sparse_row_f(const fit_csrc *s, uint64_t e0, uint64_t e1, float *z)
{
    uint32_t p = s->p;
    for (uint64_t e = e0; e < e1; e++) {
        float v = s->vf[e];
        const float *x = s->Vf + (size_t)s->cols[e] * p;
        if (e + 4 < e1)
            __builtin_prefetch(s->Vf + (size_t)s->cols[e + 4] * p);
#pragma omp simd
        for (uint32_t c = 0; c < p; c++)
            z[c] += v * x[c];
    }
}

/* Rows b0 .. b1-1 of the buffer: dense ones gathered into one GEMM, the others sparse. */
static void block_product(fit_csrc *s, uint32_t b0, uint32_t b1, int tid)
{
    uint32_t n = s->n, p = s->p, dense_min = n / SRC_DENSE_DIV, nd = 0;
    uint32_t drow[SRC_BLOCK];
    for (uint32_t r = b0; r < b1; r++) {
        uint64_t e0 = s->rowptr[r], e1 = s->rowptr[r + 1];
        double *z = s->Z + (size_t)(s->rows[r] - s->z0) * p;
        if (e1 - e0 >= dense_min && dense_min > 0) {
            drow[nd++] = r;
            continue;
        }
        if (s->single) {
            float *zf = s->zf[tid];
            memset(zf, 0, sizeof(float) * p);
            sparse_row_f(s, e0, e1, zf);
            for (uint32_t c = 0; c < p; c++)
                z[c] = zf[c];
        } else {
            memset(z, 0, sizeof(double) * p);
            sparse_row_d(s, e0, e1, z);
        }
    }
    if (!nd)
        return;
    if (s->single) {
        float *D = s->dense_f[tid], *out = s->zf[tid];
        memset(D, 0, sizeof(float) * (size_t)nd * n);
        for (uint32_t a = 0; a < nd; a++)
            for (uint64_t e = s->rowptr[drow[a]]; e < s->rowptr[drow[a] + 1]; e++)
                D[(size_t)a * n + s->cols[e]] = s->vf[e];
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nd, p, n, 1.0f, D, n, s->Vf, p,
                    0.0f, out, p);
        for (uint32_t a = 0; a < nd; a++)
            for (uint32_t c = 0; c < p; c++)
                s->Z[(size_t)(s->rows[drow[a]] - s->z0) * p + c] = out[(size_t)a * p + c];
    } else {
        double *D = s->dense_d[tid], *out = (double *)s->zf[tid];
        memset(D, 0, sizeof(double) * (size_t)nd * n);
        for (uint32_t a = 0; a < nd; a++)
            for (uint64_t e = s->rowptr[drow[a]]; e < s->rowptr[drow[a] + 1]; e++)
                D[(size_t)a * n + s->cols[e]] = s->vd[e];
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nd, p, n, 1.0, D, n, s->V, p, 0.0,
                    out, p);
        for (uint32_t a = 0; a < nd; a++)
            memcpy(s->Z + (size_t)(s->rows[drow[a]] - s->z0) * p, out + (size_t)a * p,
                   sizeof(double) * p);
    }
}

static void buffer_product(fit_csrc *s)
{
    uint32_t nblk = 0;
    for (uint32_t r = 0; r < s->nrows; r++)
        if (r == 0 || s->rows[r] / SRC_BLOCK != s->rows[r - 1] / SRC_BLOCK)
            s->bstart[nblk++] = r;
    s->bstart[nblk] = s->nrows;
#pragma omp parallel for schedule(dynamic, 1) num_threads(s->nt)
    for (uint32_t b = 0; b < nblk; b++)
        block_product(s, s->bstart[b], s->bstart[b + 1], omp_get_thread_num());
}

/* Room for nv more entries in the streaming buffer: it is emptied only between blocks, so a
 * block with more entries than it holds makes it grow (to one block's entries at most). */
static int stream_room(fit_csrc *s, uint32_t nv)
{
    if (s->nnz + nv <= s->buf_nnz)
        return JSMF_OK;
    uint64_t cap = s->nnz + nv > 2 * s->buf_nnz ? s->nnz + nv : 2 * s->buf_nnz;
    uint32_t *c = realloc(s->cols, sizeof *c * cap);
    if (c)
        s->cols = c;
    void *v = s->single ? realloc(s->vf, sizeof(float) * cap) : realloc(s->vd, sizeof(double) * cap);
    if (v && s->single)
        s->vf = v;
    else if (v)
        s->vd = v;
    if (!c || !v)
        return jsmf_error(JSMF_ENOMEM, "fit: out of memory for a block of C's rows");
    s->buf_nnz = cap;
    return JSMF_OK;
}

/* ---- reading the source ------------------------------------------------------------------ */

static void note_stats(fit_csrc *s, uint32_t row, const double *vals, uint32_t nv)
{
    double a = 0, b = 0;
    for (uint32_t e = 0; e < nv; e++)
        a += vals[e], b += vals[e] * vals[e];
    s->rowsum[row] = a, s->rowsq[row] = b;
}

static void put_row(fit_csrc *s, uint32_t row, const uint32_t *cols, const double *vals,
                    uint32_t nv)
{
    memcpy(s->cols + s->nnz, cols, sizeof(uint32_t) * nv);
    if (s->single)
        for (uint32_t e = 0; e < nv; e++)
            s->vf[s->nnz + e] = (float)vals[e];
    else
        memcpy(s->vd + s->nnz, vals, sizeof(double) * nv);
    s->rows[s->nrows] = row;
    s->rowptr[s->nrows] = s->nnz;
    s->nnz += nv;
    s->nrows++;
    s->rowptr[s->nrows] = s->nnz;
}

static int check_row(fit_csrc *s, uint32_t row, const uint32_t *cols, uint32_t nv)
{
    if (row >= s->n)
        return jsmf_error(JSMF_EFORMAT, "fit: source row %u outside N=%u", row, s->n);
    for (uint32_t e = 0; e < nv; e++)
        if (cols[e] >= s->n)
            return jsmf_error(JSMF_EFORMAT, "fit: source column %u outside N=%u (row %u)",
                              cols[e], s->n, row);
    return 0;
}

/* Progress of a read of C; JSMF_EINTR (stopping the scan) when the callback asked to cancel. */
static int pass_progress(fit_csrc *s, uint32_t row)
{
    uint64_t pass = s->passes < s->planned ? s->passes : s->planned - 1;
    if (!s->progress)
        return JSMF_OK;
    s->progress(s->progress_arg, "reading C", (double)pass * s->n + row,
                (double)s->planned * s->n, "rows");
    return cancel_check();
}

void fit_csrc_plan(fit_csrc *s, uint32_t passes)
{
    s->planned = passes > 0 ? passes : 1;
}

static int stream_row(void *arg, uint32_t row, const uint32_t *cols, const double *vals,
                      uint32_t nv)
{
    fit_csrc *s = arg;
    int rc = check_row(s, row, cols, nv);
    if (rc)
        return rc;
    if (!s->have_stats)
        note_stats(s, row, vals, nv);
    int boundary = s->nrows && row / SRC_BLOCK != s->rows[s->nrows - 1] / SRC_BLOCK;
    if (boundary && (s->nrows + SRC_BLOCK > SRC_BUF_ROWS || s->nnz + nv > SRC_BUF_NNZ)) {
        buffer_product(s);
        s->nrows = 0, s->nnz = 0;
        if ((rc = pass_progress(s, row)))
            return rc;
    }
    if (nv > SRC_BUF_NNZ) { /* longer than the whole buffer: a block of its own, in pieces */
        double *z = s->Z + (size_t)(row - s->z0) * s->p;
        for (uint32_t e = 0; e < nv; e++)
            for (uint32_t c = 0; c < s->p; c++)
                z[c] += vals[e] * (s->single ? (double)s->Vf[(size_t)cols[e] * s->p + c]
                                             : s->V[(size_t)cols[e] * s->p + c]);
        return 0;
    }
    if ((rc = stream_room(s, nv)))
        return rc;
    put_row(s, row, cols, vals, nv);
    return 0;
}

typedef struct {
    fit_csrc *s;
} load_ctx;

static int load_row(void *arg, uint32_t row, const uint32_t *cols, const double *vals,
                    uint32_t nv)
{
    load_ctx *l = arg;
    fit_csrc *s = l->s;
    int rc = check_row(s, row, cols, nv);
    if (rc)
        return rc;
    if (s->nrows && row <= s->rows[s->nrows - 1])
        return jsmf_error(JSMF_EFORMAT, "fit: source rows out of order at %u", row);
    note_stats(s, row, vals, nv);
    if (s->nnz + nv > s->cap)
        return 1; /* more entries than the source announced: stream instead */
    put_row(s, row, cols, vals, nv);
    if ((row & 1023) == 0)
        return pass_progress(s, row);
    return 0;
}

static uint64_t cache_bytes(uint32_t n, uint64_t nnz, int single)
{
    return nnz * (sizeof(uint32_t) + (single ? sizeof(float) : sizeof(double))) +
           ((uint64_t)n + 1) * (sizeof(uint64_t) + sizeof(uint32_t));
}

static int alloc_rows(fit_csrc *s, uint32_t rows, uint64_t nnz)
{
    s->buf_nnz = nnz;
    free(s->bstart);
    s->bstart = malloc(sizeof(uint32_t) * ((size_t)rows + 2));
    s->rowptr = malloc(sizeof(uint64_t) * ((size_t)rows + 1));
    s->rows = malloc(sizeof(uint32_t) * ((size_t)rows + 1));
    s->cols = malloc(sizeof(uint32_t) * (nnz ? nnz : 1));
    if (s->single)
        s->vf = malloc(sizeof(float) * (nnz ? nnz : 1));
    else
        s->vd = malloc(sizeof(double) * (nnz ? nnz : 1));
    if (!s->rowptr || !s->rows || !s->cols || (!s->vf && !s->vd) || !s->bstart)
        return jsmf_error(JSMF_ENOMEM, "fit: no memory for %llu entries of C",
                          (unsigned long long)nnz);
    s->rowptr[0] = 0;
    return JSMF_OK;
}

static void free_rows(fit_csrc *s)
{
    free(s->rowptr), free(s->rows), free(s->cols), free(s->vd), free(s->vf), free(s->bstart);
    s->rowptr = NULL, s->rows = s->cols = NULL, s->vd = NULL, s->vf = NULL, s->bstart = NULL;
    s->nrows = 0, s->nnz = 0;
}

/* ---- the documents path ------------------------------------------------------------------ */

/* The cost rule (formats/fit.md, "Which form"). C's rows held in memory are kept: their
 * product runs dense rows as one GEMM and sparse rows in order, and measured against the
 * documents' gathers (a random row of the block per entry of H) it won on a planted corpus
 * with 56x fewer entries of H than of C (N=20k: 1.3 against 2.3 CPU s a product) and lost on
 * kjv and debdesc (2-5x), no count separating them. C's rows read from the store on every
 * pass are the case the documents are for: there the rows cost nnz(C) p multiply-adds plus the
 * bytes of a scan (one multiply-add each), the documents 2 nnz(H) p multiply-adds weighted
 * SRC_DOC_WEIGHT (a gathered row against a streamed one: 2 on debdesc, 9 on the planted N=20k
 * corpus, measured in CPU seconds a product), plus their bytes when they are not in memory
 * either. Only counts and sizes, never timings: the same choice on every run, thread count and
 * rank. */
#define SRC_RULE_P 64
#define SRC_DOC_WEIGHT 4

static int rows_in_memory(const jsmf_source *C, uint64_t mem)
{
    return cache_bytes(C->n, C->nnz, 1) <= mem / 2;
}

static double rows_cost(const jsmf_source *C, uint32_t p)
{
    return (double)C->nnz * p + (double)(C->bytes ? C->bytes : 12 * C->nnz);
}

static double docs_cost(const jsmf_doc_source *D, uint64_t mem, uint32_t p)
{
    uint64_t bytes = fit_docs_bytes(D);
    int kept = bytes <= mem / 2;
    return 2.0 * SRC_DOC_WEIGHT * (double)D->nnz * p +
           (kept ? 0 : (double)(D->bytes ? D->bytes : bytes));
}

double fit_source_held(const jsmf_source *C, uint64_t mem, int products, int *docs)
{
    *docs = fit_source_use_docs(C, mem, products);
    if (*docs) {
        uint64_t b = fit_docs_bytes(C->docs);
        return b <= mem / 2 ? (double)b : 0;
    }
    /* as fit_csrc_open holds C's rows for the compressed path: double, else float32 */
    uint64_t rows = cache_bytes(C->n, C->nnz, 0), rows32 = cache_bytes(C->n, C->nnz, 1);
    return rows <= mem / 2 ? (double)rows : rows32 <= mem / 2 ? (double)rows32 : 0;
}

int fit_source_use_docs(const jsmf_source *C, uint64_t mem, int products)
{
    if (!C->docs)
        return 0;
    if (!C->scan || products == JSMF_PRODUCTS_DOCUMENTS)
        return 1;
    if (products == JSMF_PRODUCTS_ROWS)
        return 0;
    /* documents kept in memory: measured idle, the whole default fit took 0.55 against 1.2 s
     * on kjv, 6.1-6.4 against 8.9-9.6 s on debdesc, and the same (4.5-4.9 s) on a planted
     * N=20k corpus whose C's rows fit in memory too (formats/fit.md, "Which form") */
    if (fit_docs_bytes(C->docs) <= mem / 2)
        return 1;
    if (rows_in_memory(C, mem))
        return 0;
    return docs_cost(C->docs, mem, SRC_RULE_P) < rows_cost(C, SRC_RULE_P);
}

/* The documents opened (kept in memory when they fit half the budget) and the row sums from
 * one product with the ones vector. */
static int open_docs(fit_csrc *s, uint64_t mem)
{
    /* float32 where C's rows would be float32: C too large for the budget in double */
    s->single = s->single && s->C->nnz && cache_bytes(s->n, s->C->nnz, 0) > mem / 2;
    s->r0 = 0, s->r1 = s->n;
    int rc = fit_docs_open(s->C->docs, s->n, mem, s->nt, s->progress, s->progress_arg,
                           &s->docs);
    if (!rc)
        fit_docs_single(s->docs, s->single);
    double *one = rc ? NULL : malloc(sizeof(double) * (s->n ? s->n : 1));
    if (!rc && !one)
        rc = jsmf_error(JSMF_ENOMEM, "fit: out of memory");
    for (uint32_t i = 0; !rc && i < s->n; i++)
        one[i] = 1;
    if (!rc)
        rc = fit_docs_apply(s->docs, one, 1, s->rowsum);
    free(one);
    if (rc)
        return rc;
    /* "in memory" as the fit plans with it (the eigensolver's pass cap, keeping C for the
     * metrics): as C's rows would be, so that the documents make the rows' fit; a C of
     * unknown size goes by the documents themselves */
    s->cached = s->C->nnz ? cache_bytes(s->n, s->C->nnz, 1) <= mem / 2
                          : fit_docs_cached(s->docs);
    s->have_stats = 1, s->passes = 1;
    return JSMF_OK;
}

int fit_csrc_docs(const fit_csrc *s)
{
    return s->docs != NULL;
}

/* A rows scan of a source that holds only documents: each row gathered from them (in
 * memory for the gather, whatever the budget: they are the smaller form). */
int fit_source_scan(const jsmf_source *C, uint32_t r0, uint32_t r1, jsmf_row_fn fn, void *arg)
{
    if (!C->docs)
        return jsmf_error(JSMF_EINVAL, "fit: the source has neither rows nor documents");
    fit_docs *fd = NULL;
    int rc = fit_docs_open(C->docs, C->n, UINT64_MAX, omp_get_max_threads(), NULL, NULL, &fd);
    if (!rc)
        rc = fit_docs_scan_rows(fd, r0, r1, fn, arg);
    fit_docs_close(fd);
    return rc;
}

int fit_csrc_open(const jsmf_source *C, uint64_t mem, int nt, int single, int products,
                  jsmf_comm *comm, jsmf_step_progress_fn progress, void *parg,
                  fit_csrc **out)
{
    *out = NULL;
    fit_csrc *s = calloc(1, sizeof *s);
    if (!s)
        return jsmf_error(JSMF_ENOMEM, "fit: out of memory");
    s->C = C, s->n = C->n, s->nt = nt > 0 ? nt : 1, s->single = single;
    s->comm = comm ? comm : jsmf_comm_self();
    s->share = 1;
    s->progress = progress, s->progress_arg = parg, s->planned = 1;
    s->rowsum = calloc(C->n, sizeof(double));
    s->rowsq = calloc(C->n, sizeof(double));
    s->dense_f = calloc(s->nt, sizeof(float *));
    s->dense_d = calloc(s->nt, sizeof(double *));
    s->zf = calloc(s->nt, sizeof(float *));
    int rc = JSMF_OK;
    if (!s->rowsum || !s->rowsq || !s->dense_f || !s->dense_d || !s->zf)
        rc = jsmf_error(JSMF_ENOMEM, "fit: out of memory");
    if ((rc = comm_agree(s->comm, rc)))
        goto fail;
    if (fit_source_use_docs(C, mem, products)) {
        if ((rc = open_docs(s, mem)))
            goto fail;
        *out = s;
        return JSMF_OK;
    }
    if ((rc = split_rows(s)))
        goto fail;
    /* C in memory when it takes at most half the budget: later passes read RAM, not the store.
     * In double whenever that fits (exact, and the metrics reuse it); float32 is for C larger
     * than that, where the products are bound by memory traffic. Decided from all of C, as one
     * process decides, so that an MPI job makes the same fit (each rank holds its rows). */
    if (single && cache_bytes(C->n, C->nnz, 0) <= mem / 2)
        s->single = single = 0;
    int cached = 0;
    if (cache_bytes(C->n, C->nnz, single) <= mem / 2) {
        s->cap = C->nnz;
        load_ctx l = {s};
        if (!(rc = alloc_rows(s, C->n, s->cap)))
            rc = timed_scan(s, load_row, &l);
        if (rc == 1) { /* the source announced fewer entries than it has */
            free_rows(s);
            rc = 0;
        } else if (rc) {
            rc = rc < 0 ? rc : jsmf_error(JSMF_EIO, "fit: source scan stopped (%d)", rc);
        } else {
            cached = 1;
        }
    }
    int64_t all_cached = cached; /* every rank, or none: the fit's passes depend on it */
    if ((rc = comm_agree(s->comm, rc)) ||
        (rc = comm_allreduce(s->comm, &all_cached, 1, JSMF_COMM_I64, JSMF_COMM_MIN)))
        goto fail;
    if (all_cached) {
        s->cached = 1, s->have_stats = 1, s->passes = 1;
        if ((rc = share_stats(s)))
            goto fail;
    } else if (cached) {
        free_rows(s);
    }
    if (!s->cached && (rc = alloc_rows(s, SRC_BUF_ROWS, SRC_BUF_NNZ)))
        goto fail;
    *out = s;
    return JSMF_OK;
fail:
    fit_csrc_close(s);
    return rc;
}

void fit_csrc_close(fit_csrc *s)
{
    if (!s)
        return;
    fit_docs_close(s->docs);
    free_rows(s);
    for (int t = 0; t < s->nt && s->dense_f; t++)
        free(s->dense_f[t]), free(s->dense_d[t]), free(s->zf[t]);
    free(s->dense_f), free(s->dense_d), free(s->zf);
    free(s->rowsum), free(s->rowsq), free(s->starts);
    free(s);
}

static int ensure_scratch(fit_csrc *s, uint32_t p)
{
    for (int t = 0; t < s->nt; t++) {
        size_t zb = (size_t)SRC_BLOCK * p * sizeof(double);
        free(s->zf[t]);
        s->zf[t] = malloc(zb);
        if (!s->zf[t])
            return jsmf_error(JSMF_ENOMEM, "fit: out of memory");
        if (s->single && !s->dense_f[t])
            s->dense_f[t] = malloc(sizeof(float) * (size_t)SRC_BLOCK * s->n);
        if (!s->single && !s->dense_d[t])
            s->dense_d[t] = malloc(sizeof(double) * (size_t)SRC_BLOCK * s->n);
        if (s->single ? !s->dense_f[t] : !s->dense_d[t])
            return jsmf_error(JSMF_ENOMEM, "fit: out of memory for %u-row blocks", SRC_BLOCK);
    }
    return JSMF_OK;
}

/* Z = C V on this rank's rows, into Z's rows from z0; V has all n rows. */
static int product(fit_csrc *s, const double *V, uint32_t p, double *Z, uint32_t z0)
{
    uint32_t n = s->n;
    if (s->docs) { /* every row, on every rank (z0 is 0: the part is whole) */
        int rc = fit_docs_apply(s->docs, V, p, Z);
        s->passes++;
        return rc ? rc : pass_progress(s, 0);
    }
    float *Vf = NULL;
    int rc = ensure_scratch(s, p);
    if (rc)
        return rc;
    if (s->single) {
        if (!(Vf = malloc(sizeof(float) * (size_t)n * p)))
            return jsmf_error(JSMF_ENOMEM, "fit: out of memory (%u x %u block)", n, p);
        for (size_t e = 0; e < (size_t)n * p; e++)
            Vf[e] = (float)V[e];
    }
    s->V = V, s->Vf = Vf, s->Z = Z, s->z0 = z0, s->p = p;
    memset(Z + (size_t)(s->r0 - z0) * p, 0, sizeof(double) * (s->r1 - s->r0) * p);
    if (s->cached) {
        buffer_product(s);
    } else {
        s->nrows = 0, s->nnz = 0;
        rc = timed_scan(s, stream_row, s);
        if (rc)
            rc = rc < 0 ? rc : jsmf_error(JSMF_EIO, "fit: source scan stopped (%d)", rc);
        else if (s->nrows)
            buffer_product(s);
        s->nrows = 0, s->nnz = 0;
        if (!rc)
            s->have_stats = 1;
    }
    s->passes++;
    free(Vf);
    return comm_agree(s->comm, rc);
}

int fit_csrc_apply(void *ctx, const double *V, uint32_t p, double *Z)
{
    fit_csrc *s = ctx;
    int first = !s->have_stats;
    int rc = product(s, V, p, Z, 0);
    if (!rc)
        rc = share_rows(s, Z, p);
    if (!rc && first && s->have_stats)
        rc = share_stats(s);
    return rc;
}

fit_part fit_csrc_part(const fit_csrc *s)
{
    fit_part L = fit_part_whole(s->n);
    if (jsmf_comm_size(s->comm) > 1 && !s->docs)
        L.r0 = s->r0, L.r1 = s->r1, L.starts = s->starts, L.comm = s->comm;
    return L;
}

int fit_csrc_apply_part(void *ctx, const double *V, uint32_t p, double *Z)
{
    fit_csrc *s = ctx;
    fit_part L = fit_csrc_part(s);
    if (!fit_part_split(&L))
        return fit_csrc_apply(ctx, V, p, Z);
    int first = !s->have_stats;
    double *full = malloc(sizeof(double) * s->n * p);
    int rc = full ? JSMF_OK
                  : jsmf_error(JSMF_ENOMEM, "fit: out of memory (%u x %u block)", s->n, p);
    if (!(rc = comm_agree(s->comm, rc)) && !(rc = fit_part_gather(&L, p, V, full)))
        rc = product(s, full, p, Z, s->r0);
    free(full);
    if (!rc && first && s->have_stats)
        rc = share_stats(s);
    return rc;
}

typedef struct {
    fit_csrc *s;
    const uint32_t *ids;
    uint32_t m;
    double *out;
} rows_ctx;

static void put_dense(rows_ctx *r, uint32_t a, const uint32_t *cols, const double *vals,
                      uint32_t nv)
{
    double *o = r->out + (size_t)a * r->s->n;
    for (uint32_t e = 0; e < nv; e++)
        o[cols[e]] = vals[e];
}

static int rows_row(void *arg, uint32_t row, const uint32_t *cols, const double *vals,
                    uint32_t nv)
{
    rows_ctx *r = arg;
    int rc = check_row(r->s, row, cols, nv);
    if (rc)
        return rc;
    if (!r->s->have_stats)
        note_stats(r->s, row, vals, nv);
    for (uint32_t a = 0; a < r->m; a++) /* an id may repeat */
        if (r->ids[a] == row)
            put_dense(r, a, cols, vals, nv);
    return 0;
}

int fit_csrc_rows(fit_csrc *s, const uint32_t *ids, uint32_t m, double *out)
{
    if (s->docs) { /* the row sums are known since the open; rows are one read */
        if (!m)
            return JSMF_OK;
        s->passes++;
        return fit_docs_rows(s->docs, ids, m, out);
    }
    if (m)
        memset(out, 0, sizeof(double) * m * s->n);
    if (s->cached) {
        for (uint32_t a = 0; a < m; a++) {
            /* the cached rows are the non-empty ones, ascending */
            uint32_t lo = 0, hi = s->nrows;
            while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (s->rows[mid] < ids[a])
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo == s->nrows || s->rows[lo] != ids[a])
                continue;
            double *o = out + (size_t)a * s->n;
            for (uint64_t e = s->rowptr[lo]; e < s->rowptr[lo + 1]; e++)
                o[s->cols[e]] = s->single ? s->vf[e] : s->vd[e];
        }
        /* each row is one rank's, zeros elsewhere: the sum is that row exactly */
        return comm_allreduce(s->comm, out, (uint64_t)m * s->n, JSMF_COMM_F64,
                                   JSMF_COMM_SUM);
    }
    rows_ctx r = {s, ids, m, out};
    int rc = timed_scan(s, rows_row, &r), first = !s->have_stats;
    if (rc)
        rc = rc < 0 ? rc : jsmf_error(JSMF_EIO, "fit: source scan stopped (%d)", rc);
    if ((rc = comm_agree(s->comm, rc)))
        return rc;
    s->have_stats = 1;
    s->passes++;
    if (first && (rc = share_stats(s)))
        return rc;
    return comm_allreduce(s->comm, out, (uint64_t)m * s->n, JSMF_COMM_F64, JSMF_COMM_SUM);
}

const double *fit_csrc_rowsums(const fit_csrc *s)
{
    return s->have_stats ? s->rowsum : NULL;
}

const double *fit_csrc_rowsq(const fit_csrc *s)
{
    return s->have_stats && (!s->docs || s->have_rowsq) ? s->rowsq : NULL;
}

int fit_csrc_need_rowsq(fit_csrc *s)
{
    if (!s->docs)
        return s->have_stats ? JSMF_OK : fit_csrc_rows(s, NULL, 0, NULL);
    if (s->have_rowsq)
        return JSMF_OK;
    /* every row gathered from the documents: sum_m nnz_m^2 multiply-adds, once */
    int rc = fit_docs_rowsq(s->docs, s->rowsq);
    s->have_rowsq = !rc;
    return rc;
}

uint64_t fit_csrc_passes(const fit_csrc *s)
{
    return s->passes;
}

int fit_csrc_cached(const fit_csrc *s)
{
    return s->cached;
}

int fit_csrc_exact(const fit_csrc *s)
{
    return !s->single;
}

void fit_note_scans(jsmf_fit_report *rep, const fit_csrc *src, const jsmf_source *C)
{
    fit_csrc_scans(src, &rep->c_scans, &rep->c_scan_secs);
    rep->c_bytes = src->docs ? C->docs->bytes : (uint64_t)(C->bytes * src->share);
    rep->c_documents = src->docs != NULL;
    rep->ranks = jsmf_comm_size(src->comm);
    rep->rank_rows_min = rep->rank_rows_max = src->r1 - src->r0;
    for (int r = 0; r < rep->ranks && src->starts; r++) {
        uint32_t rows = src->starts[r + 1] - src->starts[r];
        rep->rank_rows_min = rows < rep->rank_rows_min ? rows : rep->rank_rows_min;
        rep->rank_rows_max = rows > rep->rank_rows_max ? rows : rep->rank_rows_max;
    }
}
