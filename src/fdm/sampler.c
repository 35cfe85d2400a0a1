/* sampler.c — pairs (u,v) drawn from C: through its documents when the source has them
 * (sampler_docs.c), else a two-stage alias table (row marginals, then each row's non-zeros)
 * built in one streaming pass over its rows, thinned to fit a memory budget. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "alias.h"
#include "fdm_internal.h"
#include "core/hash.h"

struct jsmf_fdm_sampler {
    int documents;      /* drawn through the documents (doc), not the row tables */
    fdm_doc_tables doc;
    uint32_t n;
    float *row_prob;
    uint32_t *row_alias;
    uint64_t *rowptr;
    float *prob;
    uint32_t *alias;
    uint32_t *col;
    jsmf_fdm_sampler_info info;
};

#define BYTES_PER_ROW 16u  /* row_prob, row_alias, rowptr */
#define BYTES_PER_NZ  12u  /* prob, alias, col */

/* Histogram bins for the thinning threshold: 8 per octave of the value. */
#define HIST_PER_OCTAVE 8
#define HIST_OCTAVES 1100
#define HIST_BINS (HIST_PER_OCTAVE * HIST_OCTAVES)

static int value_bin(double x)
{
    int b = (int)floor(log2(x) * HIST_PER_OCTAVE) + HIST_BINS; /* x <= 1 for a normalised C */
    return b < 0 ? 0 : b >= HIST_BINS ? HIST_BINS - 1 : b;
}

typedef struct build_ctx {
    jsmf_fdm_sampler *s;
    double threshold;    /* keep values >= threshold (0: keep every positive one) */
    uint64_t capacity;   /* entries allocated */
    uint64_t *hist;      /* first pass of a thinned build, else NULL */
    double *row_sum;     /* N: full row sums (exact marginals) */
    double *w;           /* scratch, N */
    double *work;        /* scratch, N */
    uint32_t *idx;       /* scratch, 2N */
    uint32_t last_row;   /* rows filled so far (rowptr valid up to it) */
    uint64_t fill;
    uint64_t fingerprint;
    double dropped;
} build_ctx;

static int check_row(uint32_t n, uint32_t row, const uint32_t *cols, const double *vals, uint32_t len)
{
    if (row >= n)
        return jsmf_error(JSMF_EFORMAT, "row %u out of range (N = %u)", row, n);
    for (uint32_t j = 0; j < len; j++) {
        if (cols[j] >= n)
            return jsmf_error(JSMF_EFORMAT, "row %u: column %u out of range (N = %u)", row,
                              cols[j], n);
        if (!(vals[j] >= 0) || !isfinite(vals[j]))
            return jsmf_error(JSMF_EFORMAT, "row %u, column %u: value %g is not a finite "
                              "non-negative number", row, cols[j], vals[j]);
    }
    return 0;
}

static int histogram_row(void *arg, uint32_t row, const uint32_t *cols, const double *vals,
                         uint32_t len)
{
    build_ctx *b = arg;
    int rc = check_row(b->s->n, row, cols, vals, len);
    if (rc)
        return rc;
    for (uint32_t j = 0; j < len; j++)
        if (vals[j] > 0)
            b->hist[value_bin(vals[j])]++;
    return 0;
}

static int fill_row(void *arg, uint32_t row, const uint32_t *cols, const double *vals, uint32_t len)
{
    build_ctx *b = arg;
    jsmf_fdm_sampler *s = b->s;
    int rc = check_row(s->n, row, cols, vals, len);
    if (rc)
        return rc;
    if (row < b->last_row)
        return jsmf_error(JSMF_EFORMAT, "rows out of order (%u after %u)", row, b->last_row - 1);
    while (b->last_row <= row)
        s->rowptr[b->last_row++] = b->fill;
    b->fingerprint = hash_fnv1a(b->fingerprint, &row, sizeof row);
    b->fingerprint = hash_fnv1a(b->fingerprint, cols, (size_t)len * sizeof *cols);
    b->fingerprint = hash_fnv1a(b->fingerprint, vals, (size_t)len * sizeof *vals);

    double sum = 0, kept_sum = 0, best = 0;
    uint32_t nk = 0, best_j = 0;
    for (uint32_t j = 0; j < len; j++) {
        double x = vals[j];
        if (!(x > 0))
            continue;
        sum += x;
        if (x > best)
            best = x, best_j = j;
        if (x >= b->threshold && b->fill + nk < b->capacity) {
            b->w[nk] = x;
            s->col[b->fill + nk] = cols[j];
            nk++, kept_sum += x;
        }
    }
    if (sum > 0 && nk == 0) { /* every entry under the threshold: keep the largest one */
        if (b->fill >= b->capacity)
            return jsmf_error(JSMF_ENOMEM, "sampler table overflow (internal)");
        b->w[0] = best, s->col[b->fill] = cols[best_j], nk = 1, kept_sum = best;
    }
    b->row_sum[row] = sum;
    b->dropped += sum - kept_sum;
    if (nk) {
        fdm_alias_build(b->w, nk, kept_sum, s->prob + b->fill, s->alias + b->fill, b->work, b->idx);
        b->fill += nk;
    }
    return 0;
}

/* The smallest bin index whose entries (with all larger ones) fit `room`. */
static double threshold_for(const uint64_t *hist, uint64_t room)
{
    uint64_t acc = 0;
    int b = HIST_BINS - 1;
    for (; b >= 0; b--) {
        if (acc + hist[b] > room)
            break;
        acc += hist[b];
    }
    if (b < 0)
        return 0;
    /* Bin b is the first that does not fit: keep bins above it. */
    return exp2((double)(b + 1 - HIST_BINS) / HIST_PER_OCTAVE);
}

static void sampler_release(jsmf_fdm_sampler *s)
{
    fdm_doc_sampler_free(&s->doc);
    free(s->row_prob), free(s->row_alias), free(s->rowptr);
    free(s->prob), free(s->alias), free(s->col);
    free(s);
}

void fdm_sampler_free(jsmf_fdm_sampler *s)
{
    if (s)
        sampler_release(s);
}

/* From the documents: exact and smaller than C's rows (formats/fdm.md). */
static int build_from_documents(const jsmf_source *src, uint64_t mem_budget,
                                jsmf_fdm_sampler **out)
{
    double t0 = clock_seconds();
    jsmf_fdm_sampler *s = calloc(1, sizeof *s);
    if (!s)
        return jsmf_error(JSMF_ENOMEM, "out of memory for the pair sampler");
    s->documents = 1;
    s->n = src->n;
    int rc = fdm_doc_sampler_build(src->docs, src->n, mem_budget, &s->doc, &s->info);
    if (rc) {
        sampler_release(s);
        return rc;
    }
    s->info.build_seconds = clock_seconds() - t0;
    *out = s;
    return 0;
}

uint64_t fdm_sampler_plan(const jsmf_source *src, uint64_t *least, uint64_t *scratch)
{
    uint64_t n = src->n;
    if (src->docs) {
        int late = src->docs->admit != NULL;
        uint64_t full = fdm_doc_sampler_bytes(src->docs->n_docs, src->docs->nnz, src->n, late);
        *least = full; /* documents are never thinned */
        *scratch = fdm_doc_build_scratch(src->docs->n_docs, late);
        return full;
    }
    uint64_t row_bytes = (uint64_t)BYTES_PER_ROW * n + 8;
    *least = row_bytes + (uint64_t)BYTES_PER_NZ * n; /* one entry a row */
    /* build_ctx: row_sum, w, work (N doubles each), idx (2N), and a thinned build's histogram */
    *scratch = 3 * 8 * n + 2 * 4 * n + (uint64_t)HIST_BINS * sizeof(uint64_t);
    return row_bytes + (uint64_t)BYTES_PER_NZ * src->nnz;
}

int fdm_sampler_build(const jsmf_source *src, uint64_t mem_budget, jsmf_fdm_sampler **out)
{
    double t0 = clock_seconds();
    *out = NULL;
    uint32_t n = src->n;
    if (n == 0)
        return jsmf_error(JSMF_EINVAL, "empty matrix (N = 0)");
    if (src->docs)
        return build_from_documents(src, mem_budget, out);
    uint64_t row_bytes = (uint64_t)BYTES_PER_ROW * n + 8;
    uint64_t full_bytes = row_bytes + (uint64_t)BYTES_PER_NZ * src->nnz;
    int thin = mem_budget && full_bytes > mem_budget;
    uint64_t capacity = src->nnz;
    if (thin) {
        if (mem_budget < row_bytes + (uint64_t)BYTES_PER_NZ * n)
            return jsmf_error(JSMF_ENOMEM, "a memory budget of %llu bytes cannot hold even one entry "
                              "per row of the pair sampler (needs %llu)", (unsigned long long)mem_budget,
                              (unsigned long long)(row_bytes + (uint64_t)BYTES_PER_NZ * n));
        capacity = (mem_budget - row_bytes) / BYTES_PER_NZ;
    }

    jsmf_fdm_sampler *s = calloc(1, sizeof *s);
    build_ctx b = {0};
    if (!s)
        return jsmf_error(JSMF_ENOMEM, "out of memory for the pair sampler");
    s->n = n;
    s->row_prob = malloc(n * sizeof *s->row_prob);
    s->row_alias = malloc(n * sizeof *s->row_alias);
    s->rowptr = malloc(((size_t)n + 1) * sizeof *s->rowptr);
    s->prob = malloc((capacity ? capacity : 1) * sizeof *s->prob);
    s->alias = malloc((capacity ? capacity : 1) * sizeof *s->alias);
    s->col = malloc((capacity ? capacity : 1) * sizeof *s->col);
    b.s = s;
    b.capacity = capacity;
    b.row_sum = calloc(n, sizeof *b.row_sum);
    b.w = malloc(n * sizeof *b.w);
    b.work = malloc(n * sizeof *b.work);
    b.idx = malloc(2 * (size_t)n * sizeof *b.idx);
    b.fingerprint = HASH_FNV1A_OFFSET;
    int rc = 0;
    if (!s->row_prob || !s->row_alias || !s->rowptr || !s->prob || !s->alias || !s->col ||
        !b.row_sum || !b.w || !b.work || !b.idx) {
        rc = jsmf_error(JSMF_ENOMEM, "out of memory for the pair sampler (%llu bytes)",
                        (unsigned long long)(row_bytes + BYTES_PER_NZ * capacity));
        goto done;
    }
    if (thin) {
        /* Keep the largest values that fit, leaving room for one entry per row. */
        b.hist = calloc(HIST_BINS, sizeof *b.hist);
        if (!b.hist) {
            rc = jsmf_error(JSMF_ENOMEM, "out of memory for the sampler histogram");
            goto done;
        }
        rc = src->scan(src->ctx, histogram_row, &b);
        if (rc)
            goto done;
        b.threshold = threshold_for(b.hist, capacity > n ? capacity - n : 0);
    }
    rc = src->scan(src->ctx, fill_row, &b);
    if (rc)
        goto done;
    while (b.last_row <= n)
        s->rowptr[b.last_row++] = b.fill;

    double total = 0;
    for (uint32_t i = 0; i < n; i++)
        total += b.row_sum[i];
    if (!(total > 0)) {
        rc = jsmf_error(JSMF_EINVAL, "the co-occurrence matrix has no positive entry");
        goto done;
    }
    fdm_alias_build(b.row_sum, n, total, s->row_prob, s->row_alias, b.work, b.idx);

    jsmf_fdm_sampler_info *in = &s->info;
    in->n = n;
    in->nnz = src->nnz;
    in->kept = b.fill;
    in->thinned = thin;
    in->dropped_mass = b.dropped;
    in->total_mass = total;
    in->bytes = row_bytes + (uint64_t)BYTES_PER_NZ * capacity;
    in->fingerprint = b.fingerprint;
    in->build_seconds = clock_seconds() - t0;
done:
    free(b.hist), free(b.row_sum), free(b.w), free(b.work), free(b.idx);
    if (rc)
        sampler_release(s);
    else
        *out = s;
    return rc;
}

void fdm_sampler_info_get(const jsmf_fdm_sampler *s, jsmf_fdm_sampler_info *out)
{
    *out = s->info;
}

void fdm_sampler_tables_get(const jsmf_fdm_sampler *s, jsmf_fdm_sampler_tables *out)
{
    memset(out, 0, sizeof *out);
    out->documents = s->documents;
    out->doc = s->doc;
    out->n = s->n;
    out->kept = s->info.kept;
    out->row_prob = s->row_prob;
    out->row_alias = s->row_alias;
    out->rowptr = s->rowptr;
    out->prob = s->prob;
    out->alias = s->alias;
    out->col = s->col;
}

/* Pair `index` of the stream through the documents: Philox's four words at counter
 * (index, stream), and with late words four more at (index, stream ^ 2^63), a stretch no
 * other stream reaches (steps count from 1, the fixed streams sit just below 2^64). */
static inline void doc_draw_one(const fdm_doc_tables *t, uint64_t seed, uint64_t stream,
                                uint64_t index, uint32_t *u, uint32_t *v)
{
    uint32_t r[8];
    fdm_philox(seed, stream, index, r);
    if (t->admit)
        fdm_philox(seed, stream ^ (UINT64_C(1) << 63), index, r + 4);
    fdm_doc_draw(t, r, u, v);
}

void fdm_sampler_draw(const jsmf_fdm_sampler *s, uint64_t seed, uint64_t stream, uint64_t first,
                      uint32_t count, uint32_t *u, uint32_t *v, int nt)
{
    if (s->documents) {
#pragma omp parallel for schedule(static) if (count > 4096) num_threads(nt)
        for (uint32_t i = 0; i < count; i++)
            doc_draw_one(&s->doc, seed, stream, first + i, u + i, v + i);
        return;
    }
#pragma omp parallel for schedule(static) if (count > 4096) num_threads(nt)
    for (uint32_t i = 0; i < count; i++) {
        uint32_t r[4];
        fdm_philox(seed, stream, first + i, r);
        uint32_t row = fdm_scale32(r[0], s->n);
        if (fdm_unit32(r[1]) >= s->row_prob[row])
            row = s->row_alias[row];
        uint64_t a = s->rowptr[row], len = s->rowptr[row + 1] - a;
        uint32_t j = fdm_scale32(r[2], len);
        if (fdm_unit32(r[3]) >= s->prob[a + j])
            j = s->alias[a + j];
        u[i] = row;
        v[i] = s->col[a + j];
    }
}

void fdm_sampler_draw_default(const jsmf_fdm_sampler *s, uint64_t seed, uint64_t stream,
                           uint64_t first, uint32_t count, uint32_t *u, uint32_t *v)
{
    fdm_sampler_draw(s, seed, stream, first, count, u, v, omp_get_max_threads());
}

int fdm_sampler_rows_dist(const jsmf_fdm_sampler *s, const uint32_t *rows, uint32_t k,
                               double *out)
{
    uint32_t n = s->n;
    double *tmp = malloc((size_t)(s->documents ? k : n) * sizeof *tmp);
    uint32_t *slot = s->documents ? malloc((size_t)n * sizeof *slot) : NULL;
    if (!tmp || (s->documents && !slot)) {
        free(tmp), free(slot);
        return jsmf_error(JSMF_ENOMEM, "out of memory for %u rows of C", k);
    }
    if (s->documents) {
        fdm_doc_rows_dist(&s->doc, rows, k, out, slot, tmp);
    } else {
        for (uint32_t c = 0; c < k; c++) {
            fdm_sampler_row_dist(s, rows[c], tmp);
            for (uint32_t j = 0; j < n; j++)
                out[(size_t)j * k + c] = tmp[j];
        }
    }
    free(tmp), free(slot);
    return 0;
}

void fdm_sampler_row_dist(const jsmf_fdm_sampler *s, uint32_t row, double *out)
{
    if (s->documents) {
        uint32_t *slot = malloc((size_t)s->n * sizeof *slot);
        double total;
        if (slot) /* (a test's call: training asks for its rows at once) */
            fdm_doc_rows_dist(&s->doc, &row, 1, out, slot, &total);
        else
            memset(out, 0, (size_t)s->n * sizeof *out);
        free(slot);
        return;
    }
    memset(out, 0, (size_t)s->n * sizeof(double));
    uint64_t a = s->rowptr[row], len = s->rowptr[row + 1] - a;
    /* Entry j keeps prob[j] of its own slot and takes 1 - prob[i] of each slot i aliased to it;
     * every slot is drawn with probability 1 / len. */
    for (uint64_t j = 0; j < len; j++) {
        double keep = s->prob[a + j] < 1 ? s->prob[a + j] : 1;
        out[s->col[a + j]] += keep / len;
        if (keep < 1)
            out[s->col[a + s->alias[a + j]]] += (1 - keep) / len;
    }
}

