/* fit_docs.c — C applied through the documents that define it (jsmf_doc_source), never formed:
 * products C V, chosen rows of C, and every row in order (for the row statistics and the paths
 * that load C whole); formats/fit.md, "C through its documents".
 *
 * With f(a) = 1/(M - a) and a_i the admission point of word i, C_ij = (1/T) sum_m w_m (h_mi h_mj
 * - [i==j] h_mi) f(max(a_i, a_j)). The distinct points a^(0) < a^(1) < ... are levels; ids are
 * admitted in order, so the words below level k are a prefix of the ids and, with F_l =
 * f(a^(l)), a document's contribution to row i (level l_i) is w_m h_mi r_m(l_i) with
 *     r_m(l) = F_top g_m - sum_{k > l} (F_k - F_{k-1}) g_m(<k)
 * where g_m = h_m^T V and g_m(<k) its prefix over the words below level k: one ascending sweep
 * of the document gives every prefix it needs (only the levels the document holds matter).
 * The diagonal term is one vector for all documents: diag_i = F_{l_i} sum_m w_m h_mi / T.
 *
 * Deterministic for any thread count: each document's vectors are computed by one thread, and
 * each row of the product is accumulated by one thread over the documents in their order
 * (threads own ranges of words, the range only decides who adds, never in which order). The
 * in-memory product's cache tiles split those sums, never reorder them: the same bits. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "core/bigmem.h"
#include "core/doccheck.h"
#include "core/error.h"
#include "fit_internal.h"

/* Documents per step of a product: their vectors are held at once (p doubles a level each). */
#define DOC_SUB 2048
/* Rows gathered at once (in parallel) by a scan of rows in order. */
#define GATHER_ROWS 256
/* Entries ahead whose row is asked for while this one is summed (4 and 8 measured no better;
 * for the scatter's rows of Z, 1 and 8 no better). */
#define AHEAD 2
/* Bytes of documents' vectors a tile of the gather holds (in cache while every word adds them). */
#define GATHER_TILE_BYTES ((uint64_t)8 << 20)
/* Bytes of V a tile of the documents' sums holds (in cache while a chunk of documents adds
 * them), and of the sums held at once (each chunk reads V once more). Measured on the 100k
 * planted store, p = 150, 2 threads: 8 MB tiles and chunks of 16k-200k documents took 2.3-4.3
 * CPU s a product against 7.2-8.9 untiled (tools/bench/fit-results.md). */
#define SUM_TILE_BYTES ((uint64_t)8 << 20)
#define SUM_CHUNK_BYTES ((uint64_t)64 << 20)
/* The documents' vectors held at once, as a share of the budget (at least one chunk of sums):
 * a product makes them a run of documents at a time and gathers each run before the next, so
 * G never needs M p numbers (24 GB for 20M baskets at p = 300) and the sums are the same. */
#define HELD_SHARE 16

struct fit_docs {
    const jsmf_doc_source *D;
    uint32_t n;
    int nt;
    uint64_t m;        /* documents */
    double inv_t;      /* 1 / T */
    /* admission levels: lvl[i] for word i (NULL: one level), F[l] = 1 / (M - a^(l)) */
    uint32_t nlev;
    uint32_t *lvl;
    double *F;
    double *diag;      /* diag_i = F_{l_i} sum_m w_m h_mi / T */
    uint64_t *colcnt;  /* nnz(H) of each word */
    uint32_t *wsplit;  /* nt + 1 bounds of the word ranges the threads own */
    /* the documents in memory, when they fit the budget */
    int cached;
    uint64_t mem;      /* the budget */
    uint64_t *offs;
    uint32_t *ids, *counts;
    /* the documents holding each word (built for gathers): doc index and count */
    uint64_t *coff;
    uint32_t *cdoc, *ccnt;
    uint32_t *cslot;    /* the entry's level slot in its document (late words only) */
    uint64_t *wcur;     /* each word's next entry to gather (a tiled gather) */
    double *acc;        /* documents' sums h_m^T V of a chunk (tiled sums, one level) */
    uint64_t *dcur;     /* each chunk document's next entry to add */
    size_t acc_cap, dcur_cap;
    uint64_t tile_gather, tile_sum, chunk_sum, held; /* bytes (fit_docs_tiles) */
    uint64_t *goff;     /* first vector of each document, and the total (M + 1) */
    uint64_t g0;        /* the first vector G holds now (the run's first document's goff) */
    double *dscale;     /* w_m / T of each document */
    double *G;          /* every document's level vectors of a product */
    float *Gf;          /* the same in float32 (single) */
    size_t g_cap;
    uint32_t maxq;      /* the most levels a document holds */
    int direct;         /* one level and no document of weight 0: document m's vector is G's
                         * (or Gf's) row m, and every entry of a word is gathered */
    int single;         /* G in float32: half the memory traffic of the gathers */
    /* the product being formed */
    const double *V;
    double *Z;
    uint32_t p;
    double *R;          /* every document's level vectors of a step */
    size_t r_cap;
    uint64_t roff[DOC_SUB + 1];
    double scale[DOC_SUB];
    uint32_t *eslot;    /* each entry's level slot within its document */
    size_t e_cap;
    double **scratch;   /* per thread: 2 p */
    uint32_t scratch_p;
    /* reads of the source */
    uint64_t scans;
    double scan_secs;
    jsmf_step_progress_fn progress;
    void *progress_arg;
};

/* A row of len bytes on its way to the cache: the rows a product gathers are random, so the
 * next one is asked for while this one is summed (measured: the gathers wait on memory). */
static inline void prefetch_row(const void *row, size_t len)
{
    for (size_t o = 0; o < len; o += 64)
        __builtin_prefetch((const char *)row + o);
}

/* The same for a row about to be added to (the stepped product's scatter: measured 22% off
 * its time at N = 1M, p = 300, where it waited on the rows of Z as the gathers on V's). */
static inline void prefetch_row_w(void *row, size_t len)
{
    for (size_t o = 0; o < len; o += 64)
        __builtin_prefetch((char *)row + o, 1);
}

static double doc_weight(const uint32_t *counts, uint64_t e0, uint64_t e1)
{
    double nm = 0;
    for (uint64_t e = e0; e < e1; e++)
        nm += counts[e];
    return nm >= 2 ? 1.0 / (nm * (nm - 1)) : 0;
}

/* ---- iterating the documents -------------------------------------------------------------- */

typedef int (*block_fn)(fit_docs *fd, const jsmf_doc_block *b, void *arg);

typedef struct {
    fit_docs *fd;
    block_fn fn;
    void *arg;
} scan_ctx;

static int scan_block(void *arg, const jsmf_doc_block *b)
{
    scan_ctx *c = arg;
    int rc = c->fn(c->fd, b, c->arg);
    if (!rc && c->fd->progress)
        rc = cancel_check();
    return rc;
}

/* Every document once, in order: from memory in blocks of DOC_SUB, or a scan of the source. */
static int each_block(fit_docs *fd, block_fn fn, void *arg)
{
    if (fd->cached) {
        for (uint64_t first = 0; first < fd->m; first += DOC_SUB) {
            uint64_t left = fd->m - first;
            jsmf_doc_block b = {first, (uint32_t)(left < DOC_SUB ? left : DOC_SUB),
                                fd->offs + first, fd->ids, fd->counts};
            int rc = fn(fd, &b, arg);
            if (rc)
                return rc;
        }
        return JSMF_OK;
    }
    double t = clock_seconds();
    scan_ctx c = {fd, fn, arg};
    int rc = fd->D->scan(fd->D->ctx, scan_block, &c);
    fd->scans++, fd->scan_secs += clock_seconds() - t;
    if (rc > 0)
        rc = jsmf_error(JSMF_EIO, "fit: documents scan stopped (%d)", rc);
    return rc;
}

/* ---- opening: one read that checks the documents, counts and (budget allowing) keeps them -- */

typedef struct {
    uint64_t docs, nnz;
    double *dsum;       /* sum_m w_m h_mi */
} open_state;

static int open_block(fit_docs *fd, const jsmf_doc_block *b, void *arg)
{
    open_state *o = arg;
    if (b->first != o->docs || b->n_docs > fd->m - o->docs)
        return jsmf_error(JSMF_EFORMAT, "fit: documents block of %u at %llu, expected one "
                          "at %llu within M=%llu", b->n_docs, (unsigned long long)b->first,
                          (unsigned long long)o->docs, (unsigned long long)fd->m);
    for (uint32_t d = 0; d < b->n_docs; d++) {
        uint64_t e0 = b->offs[d], e1 = b->offs[d + 1], m = b->first + d;
        if (e1 < e0 || o->nnz + (e1 - e0) > fd->D->nnz)
            return jsmf_error(JSMF_EFORMAT, "fit: document %llu: more entries than the "
                              "documents' nnz (%llu)", (unsigned long long)m,
                              (unsigned long long)fd->D->nnz);
        uint64_t bad = doc_first_bad_entry(b->ids, b->counts, e0, e1, fd->n);
        if (bad < e1)
            return jsmf_error(JSMF_EFORMAT, "fit: document %llu, entry %llu: id %u %s",
                              (unsigned long long)m, (unsigned long long)(bad - e0), b->ids[bad],
                              b->ids[bad] >= fd->n ? "outside N" : !b->counts[bad]
                              ? "has count 0" : "not ascending");
        double w = doc_weight(b->counts, e0, e1);
        for (uint64_t e = e0; e < e1; e++) {
            fd->colcnt[b->ids[e]]++;
            o->dsum[b->ids[e]] += w * b->counts[e];
        }
        if (fd->cached) {
            memcpy(fd->ids + o->nnz, b->ids + e0, sizeof(uint32_t) * (e1 - e0));
            memcpy(fd->counts + o->nnz, b->counts + e0, sizeof(uint32_t) * (e1 - e0));
            fd->offs[m + 1] = o->nnz + (e1 - e0);
        }
        o->nnz += e1 - e0;
    }
    o->docs += b->n_docs;
    return JSMF_OK;
}

/* Levels from the admission points (nondecreasing in the id, each < M). */
static int set_levels(fit_docs *fd)
{
    const uint64_t *a = fd->D->admit;
    uint32_t n = fd->n;
    fd->nlev = 1;
    if (a)
        for (uint32_t i = 0; i < n; i++) {
            if (a[i] >= fd->m || (i && a[i] < a[i - 1]))
                return jsmf_error(JSMF_EFORMAT, "fit: admission point of word %u (%llu) %s", i,
                                  (unsigned long long)a[i], a[i] >= fd->m
                                  ? "not before the last document" : "before its predecessor's");
            fd->nlev += i && a[i] != a[i - 1];
        }
    fd->F = malloc(sizeof(double) * fd->nlev);
    fd->lvl = a ? malloc(sizeof(uint32_t) * (n ? n : 1)) : NULL;
    if (!fd->F || (a && !fd->lvl))
        return jsmf_error(JSMF_ENOMEM, "fit: out of memory");
    if (!a) {
        fd->F[0] = 1.0 / (double)fd->m;
        return JSMF_OK;
    }
    uint32_t l = 0;
    for (uint32_t i = 0; i < n; i++) {
        l += i && a[i] != a[i - 1];
        fd->lvl[i] = l;
        fd->F[l] = 1.0 / (double)(fd->m - a[i]);
    }
    if (!n)
        fd->F[0] = 1.0 / (double)fd->m;
    return JSMF_OK;
}

static uint32_t level(const fit_docs *fd, uint32_t i)
{
    return fd->lvl ? fd->lvl[i] : 0;
}

/* Word ranges of about equal nnz(H), one per thread: who adds a row, not how. */
static void split_words(fit_docs *fd)
{
    uint64_t tot = 0, acc = 0;
    for (uint32_t i = 0; i < fd->n; i++)
        tot += fd->colcnt[i];
    fd->wsplit[0] = 0;
    uint32_t t = 1;
    for (uint32_t i = 0; i < fd->n && t < (uint32_t)fd->nt; i++) {
        acc += fd->colcnt[i];
        while (t < (uint32_t)fd->nt && acc * (uint64_t)fd->nt >= tot * t)
            fd->wsplit[t++] = i + 1;
    }
    for (; t <= (uint32_t)fd->nt; t++)
        fd->wsplit[t] = fd->n;
}

/* Held: ids and counts (8 bytes an entry) and offsets; the index by word the products build
 * (doc and count, 8 an entry, + 4 for a late word's slot; per word an offset and a cursor; per
 * document its first vector and weight) counted too, so --mem bounds what is held. */
uint64_t fit_docs_bytes(const jsmf_doc_source *D)
{
    uint64_t entry = 2 * sizeof(uint32_t) + 2 * sizeof(uint32_t) + (D->admit ? 4 : 0);
    return D->nnz * entry + (D->n_docs + 1) * 3 * sizeof(uint64_t) +
           ((uint64_t)D->n + 1) * 2 * sizeof(uint64_t);
}

int fit_docs_open(const jsmf_doc_source *D, uint32_t n, uint64_t mem, int nt,
                  jsmf_step_progress_fn progress, void *parg, fit_docs **out)
{
    *out = NULL;
    if (D->n != n)
        return jsmf_error(JSMF_EFORMAT, "fit: the documents have N=%u, C has N=%u", D->n, n);
    if (!D->n_docs || !D->scan || !(D->total > 0))
        return jsmf_error(JSMF_EFORMAT, "fit: the documents view is empty (M=%llu, T=%g)",
                          (unsigned long long)D->n_docs, D->total);
    fit_docs *fd = calloc(1, sizeof *fd);
    if (!fd)
        return jsmf_error(JSMF_ENOMEM, "fit: out of memory");
    fd->D = D, fd->n = n, fd->nt = nt > 0 ? nt : 1, fd->m = D->n_docs, fd->inv_t = 1 / D->total;
    fd->progress = progress, fd->progress_arg = parg, fd->mem = mem;
    fit_docs_tiles(fd, 0, 0, 0, 0);
    open_state o = {0, 0, calloc(n ? n : 1, sizeof(double))};
    fd->colcnt = calloc(n ? n : 1, sizeof(uint64_t));
    fd->diag = malloc(sizeof(double) * (n ? n : 1));
    fd->wsplit = malloc(sizeof(uint32_t) * ((size_t)fd->nt + 1));
    fd->scratch = calloc(fd->nt, sizeof(double *));
    int rc = JSMF_OK;
    if (!o.dsum || !fd->colcnt || !fd->diag || !fd->wsplit || !fd->scratch)
        rc = jsmf_error(JSMF_ENOMEM, "fit: out of memory");
    if (!rc)
        rc = set_levels(fd);
    /* the documents in memory when they take at most half the budget, as C's rows would */
    if (!rc && fit_docs_bytes(D) <= mem / 2) {
        fd->offs = malloc(sizeof(uint64_t) * (fd->m + 1));
        fd->ids = big_malloc(sizeof(uint32_t) * (D->nnz ? D->nnz : 1));
        fd->counts = big_malloc(sizeof(uint32_t) * (D->nnz ? D->nnz : 1));
        if (fd->offs && fd->ids && fd->counts) {
            fd->cached = 1, fd->offs[0] = 0;
        } else {
            free(fd->offs), free(fd->ids), free(fd->counts);
            fd->offs = NULL, fd->ids = fd->counts = NULL;
        }
    }
    if (!rc) {
        /* the first read is always the source's (it fills the cache) */
        double t = clock_seconds();
        scan_ctx c = {fd, open_block, &o};
        rc = D->scan(D->ctx, scan_block, &c);
        fd->scans++, fd->scan_secs += clock_seconds() - t;
        if (rc > 0)
            rc = jsmf_error(JSMF_EIO, "fit: documents scan stopped (%d)", rc);
        if (!rc && (o.docs != fd->m || o.nnz != D->nnz))
            rc = jsmf_error(JSMF_EFORMAT, "fit: the documents scan gave %llu documents and %llu "
                            "entries, the view announced %llu and %llu",
                            (unsigned long long)o.docs, (unsigned long long)o.nnz,
                            (unsigned long long)fd->m, (unsigned long long)D->nnz);
    }
    if (!rc) {
        for (uint32_t i = 0; i < n; i++)
            fd->diag[i] = fd->F[level(fd, i)] * o.dsum[i] * fd->inv_t;
        split_words(fd);
    }
    free(o.dsum);
    if (rc) {
        fit_docs_close(fd);
        return rc;
    }
    *out = fd;
    return JSMF_OK;
}

void fit_docs_close(fit_docs *fd)
{
    if (!fd)
        return;
    for (int t = 0; t < fd->nt && fd->scratch; t++)
        free(fd->scratch[t]);
    free(fd->scratch);
    free(fd->lvl), free(fd->F), free(fd->diag), free(fd->colcnt), free(fd->wsplit);
    free(fd->offs), free(fd->ids), free(fd->counts);
    free(fd->coff), free(fd->cdoc), free(fd->ccnt), free(fd->cslot), free(fd->goff);
    free(fd->wcur), free(fd->acc), free(fd->dcur), free(fd->dscale), free(fd->G), free(fd->Gf);
    free(fd->R), free(fd->eslot);
    free(fd);
}

/* A sixteenth of the budget, at most SUM_CHUNK_BYTES and at least a tile: the chunks divide the
 * sums, never reorder them, so a smaller budget gives the same bits. */
uint64_t fit_docs_chunk_bytes(uint64_t mem)
{
    uint64_t c = mem / 16;
    return c > SUM_CHUNK_BYTES ? SUM_CHUNK_BYTES : c < SUM_TILE_BYTES ? SUM_TILE_BYTES : c;
}

void fit_docs_tiles(fit_docs *fd, uint64_t gather, uint64_t sum, uint64_t chunk, uint64_t held)
{
    fd->tile_gather = gather ? gather : GATHER_TILE_BYTES;
    fd->tile_sum = sum ? sum : SUM_TILE_BYTES;
    fd->chunk_sum = chunk ? chunk : fit_docs_chunk_bytes(fd->mem);
    fd->held = held ? held : fd->mem / HELD_SHARE;
}

void fit_docs_single(fit_docs *fd, int single)
{
    fd->single = single;
}

int fit_docs_cached(const fit_docs *fd)
{
    return fd->cached;
}

void fit_docs_scans(const fit_docs *fd, uint64_t *scans, double *secs)
{
    *scans = fd->scans, *secs = fd->scan_secs;
}

/* ---- products ----------------------------------------------------------------------------- */

/* Levels a document holds (ids ascending: its levels are nondecreasing). */
static uint32_t doc_levels(const fit_docs *fd, const uint32_t *ids, uint64_t e0, uint64_t e1)
{
    if (!fd->lvl || e1 == e0)
        return 1;
    uint32_t q = 1;
    for (uint64_t e = e0 + 1; e < e1; e++)
        q += fd->lvl[ids[e]] != fd->lvl[ids[e - 1]];
    return q;
}

/* g += h_e V[id_e] for entry e of a document ending at e1, the row two entries on asked for */
static inline void add_entry(double *g, const double *V, uint32_t p, const jsmf_doc_block *b,
                             uint64_t e, uint64_t e1)
{
    const double *v = V + (size_t)b->ids[e] * p;
    if (e + AHEAD < e1)
        prefetch_row(V + (size_t)b->ids[e + AHEAD] * p, sizeof(double) * p);
    double h = b->counts[e];
#pragma omp simd
    for (uint32_t c = 0; c < p; c++)
        g[c] += h * v[c];
}

/* Document d's level vectors r(l) (scaled by w_m / T) into out, q of them, and each entry's
 * level slot; tmp: 2 p doubles. */
FIT_HOT static void doc_vectors(fit_docs *fd, const jsmf_doc_block *b, uint32_t d, double sc,
                                double *out, uint32_t *eslot, double *tmp)
{
    uint32_t p = fd->p;
    uint64_t e0 = b->offs[d], e1 = b->offs[d + 1];
    const double *V = fd->V;
    double *g = tmp, *E = tmp + p;
    memset(g, 0, sizeof(double) * p);
    if (!fd->lvl) {
        for (uint64_t e = e0; e < e1; e++) {
            add_entry(g, V, p, b, e, e1);
        }
        double s = sc * fd->F[0];
        for (uint32_t c = 0; c < p; c++)
            out[c] = s * g[c];
        return;
    }
    /* one sweep: the prefix before each level's first word (P_j in slot j), then g */
    uint32_t j = 0;
    uint32_t cur = fd->lvl[b->ids[e0]];
    memset(out, 0, sizeof(double) * p);
    for (uint64_t e = e0; e < e1; e++) {
        uint32_t l = fd->lvl[b->ids[e]];
        if (l != cur) {
            cur = l, j++;
            memcpy(out + (size_t)j * p, g, sizeof(double) * p);
        }
        eslot[e - b->offs[0]] = j;
        add_entry(g, V, p, b, e, e1);
    }
    /* backwards: E_j = sum_{k > l_j} (F_k - F_{k-1}) g(<k), r_j = F_top g - E_j, where
     * g(<k) = P_{j'+1} for k in (l_j', l_{j'+1}] and g above the document's last level */
    uint32_t q = j + 1;
    double ftop = fd->F[fd->nlev - 1];
    uint32_t lq = fd->lvl[b->ids[e1 - 1]];
    for (uint32_t c = 0; c < p; c++)
        E[c] = (ftop - fd->F[lq]) * g[c];
    /* the level of slot j: walk the entries again from the end */
    uint64_t e = e1;
    for (uint32_t s = q; s-- > 0;) {
        uint32_t ls = fd->lvl[b->ids[e - 1]];
        while (e > e0 && fd->lvl[b->ids[e - 1]] == ls)
            e--;
        double step = s ? fd->F[ls] - fd->F[fd->lvl[b->ids[e - 1]]] : 0;
        double *o = out + (size_t)s * p;
        for (uint32_t c = 0; c < p; c++) {
            double pj = o[c];
            o[c] = sc * (ftop * g[c] - E[c]);
            E[c] += step * pj;
        }
    }
}

static int ensure_step(fit_docs *fd, uint64_t vectors, uint64_t entries)
{
    size_t need = (size_t)vectors * fd->p;
    if (need > fd->r_cap) {
        double *r = realloc(fd->R, sizeof(double) * need);
        if (!r)
            return jsmf_error(JSMF_ENOMEM, "fit: out of memory for documents' vectors");
        fd->R = r, fd->r_cap = need;
    }
    if (fd->lvl && entries > fd->e_cap) {
        uint32_t *s = realloc(fd->eslot, sizeof(uint32_t) * entries);
        if (!s)
            return jsmf_error(JSMF_ENOMEM, "fit: out of memory for documents' vectors");
        fd->eslot = s, fd->e_cap = entries;
    }
    return JSMF_OK;
}

/* Z[lo, hi) += the documents' contributions, in document order. */
FIT_HOT static void scatter(fit_docs *fd, const jsmf_doc_block *b, uint32_t nd, uint32_t lo,
                            uint32_t hi)
{
    uint32_t p = fd->p;
    for (uint32_t d = 0; d < nd; d++) {
        if (fd->scale[d] == 0)
            continue;
        uint64_t e0 = b->offs[d], e1 = b->offs[d + 1], a = e0, z = e1;
        while (a < z) { /* the first entry with id >= lo */
            uint64_t mid = a + (z - a) / 2;
            if (b->ids[mid] < lo)
                a = mid + 1;
            else
                z = mid;
        }
        for (uint64_t e = a; e < e1 && b->ids[e] < hi; e++) {
            if (e + AHEAD < e1 && b->ids[e + AHEAD] < hi)
                prefetch_row_w(fd->Z + (size_t)b->ids[e + AHEAD] * p, sizeof(double) * p);
            uint32_t slot = fd->lvl ? fd->eslot[e - b->offs[0]] : 0;
            const double *r = fd->R + (size_t)(fd->roff[d] + slot) * p;
            double *zr = fd->Z + (size_t)b->ids[e] * p, h = b->counts[e];
#pragma omp simd
            for (uint32_t c = 0; c < p; c++)
                zr[c] += h * r[c];
        }
    }
}

/* DOC_SUB documents at most: their vectors in parallel, then every thread its words. */
static int product_step(fit_docs *fd, const jsmf_doc_block *b, uint32_t nd)
{
    fd->roff[0] = 0;
    for (uint32_t d = 0; d < nd; d++) {
        fd->scale[d] = doc_weight(b->counts, b->offs[d], b->offs[d + 1]) * fd->inv_t;
        fd->roff[d + 1] = fd->roff[d] + doc_levels(fd, b->ids, b->offs[d], b->offs[d + 1]);
    }
    int rc = ensure_step(fd, fd->roff[nd], b->offs[nd] - b->offs[0]);
    if (rc)
        return rc;
#pragma omp parallel num_threads(fd->nt)
    {
        int tid = omp_get_thread_num(), nth = omp_get_num_threads();
#pragma omp for schedule(dynamic, 64)
        for (uint32_t d = 0; d < nd; d++)
            if (fd->scale[d] != 0)
                doc_vectors(fd, b, d, fd->scale[d], fd->R + (size_t)fd->roff[d] * fd->p,
                            fd->eslot, fd->scratch[tid]);
        /* (the loop's implied barrier: every vector is there before any thread adds) */
        for (int t = tid; t < fd->nt; t += nth)
            scatter(fd, b, nd, fd->wsplit[t], fd->wsplit[t + 1]);
    }
    return JSMF_OK;
}

static int product_block(fit_docs *fd, const jsmf_doc_block *b, void *arg)
{
    (void)arg;
    for (uint32_t s = 0; s < b->n_docs; s += DOC_SUB) {
        uint32_t nd = b->n_docs - s < DOC_SUB ? b->n_docs - s : DOC_SUB;
        jsmf_doc_block sub = {b->first + s, nd, b->offs + s, b->ids, b->counts};
        int rc = product_step(fd, &sub, nd);
        if (rc)
            return rc;
    }
    return JSMF_OK;
}

static int build_index(fit_docs *fd);
static int product_whole(fit_docs *fd);

int fit_docs_apply(fit_docs *fd, const double *V, uint32_t p, double *Z)
{
    uint32_t n = fd->n;
    int rc = fd->cached ? build_index(fd) : JSMF_OK;
    if (rc)
        return rc;
    if (p > fd->scratch_p) { /* 2 p, and a document's vectors (float32 G) */
        for (int t = 0; t < fd->nt; t++) {
            free(fd->scratch[t]);
            if (!(fd->scratch[t] = malloc(sizeof(double) * (2 + (size_t)fd->maxq + 1) * p)))
                return jsmf_error(JSMF_ENOMEM, "fit: out of memory");
        }
        fd->scratch_p = p;
    }
    fd->V = V, fd->Z = Z, fd->p = p;
    /* documents in memory: their vectors a run at a time (product_whole) */
    if (fd->cached) {
        rc = product_whole(fd);
        fd->V = NULL, fd->Z = NULL;
        return rc;
    }
    memset(Z, 0, sizeof(double) * n * p);
    if (!rc)
        rc = each_block(fd, product_block, NULL);
    fd->V = NULL, fd->Z = NULL;
    if (rc)
        return rc;
#pragma omp parallel for num_threads(fd->nt) schedule(static)
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t c = 0; c < p; c++)
            Z[(size_t)i * p + c] -= fd->diag[i] * V[(size_t)i * p + c];
    return JSMF_OK;
}

/* ---- rows of C ---------------------------------------------------------------------------- */

typedef struct {
    const uint32_t *ids;
    uint32_t m;
    uint32_t *head, *next; /* word -> first slot asking for it, slot -> the next (repeats) */
    double *out;
} rows_state;

/* A document's pairs with every asked word it holds, added to that word's row. */
static int rows_block(fit_docs *fd, const jsmf_doc_block *b, void *arg)
{
    rows_state *r = arg;
    uint32_t n = fd->n;
    for (uint32_t d = 0; d < b->n_docs; d++) {
        uint64_t e0 = b->offs[d], e1 = b->offs[d + 1];
        double w = doc_weight(b->counts, e0, e1) * fd->inv_t;
        if (w == 0)
            continue;
        for (uint64_t e = e0; e < e1; e++) {
            uint32_t i = b->ids[e];
            if (r->head[i] == UINT32_MAX)
                continue;
            uint32_t li = level(fd, i);
            double hi = b->counts[e] * w;
            for (uint32_t a = r->head[i]; a != UINT32_MAX; a = r->next[a]) {
                double *o = r->out + (size_t)a * n;
                for (uint64_t f = e0; f < e1; f++) {
                    uint32_t j = b->ids[f], lj = level(fd, j);
                    o[j] += hi * b->counts[f] * fd->F[lj > li ? lj : li];
                }
            }
        }
    }
    return JSMF_OK;
}

int fit_docs_rows(fit_docs *fd, const uint32_t *ids, uint32_t m, double *out)
{
    uint32_t n = fd->n;
    if (!m)
        return JSMF_OK;
    memset(out, 0, sizeof(double) * m * n);
    rows_state r = {ids, m, malloc(sizeof(uint32_t) * (n ? n : 1)),
                    malloc(sizeof(uint32_t) * m), out};
    if (!r.head || !r.next) {
        free(r.head), free(r.next);
        return jsmf_error(JSMF_ENOMEM, "fit: out of memory");
    }
    for (uint32_t i = 0; i < n; i++)
        r.head[i] = UINT32_MAX;
    for (uint32_t a = m; a-- > 0;) {
        if (ids[a] >= n) {
            free(r.head), free(r.next);
            return jsmf_error(JSMF_EINVAL, "fit: row %u outside N=%u", ids[a], n);
        }
        r.next[a] = r.head[ids[a]], r.head[ids[a]] = a;
    }
    int rc = each_block(fd, rows_block, &r);
    for (uint32_t a = 0; a < m && !rc; a++) /* the diagonal: - w_m h_mi f(a_i) / T */
        out[(size_t)a * n + ids[a]] -= fd->diag[ids[a]];
    free(r.head), free(r.next);
    return rc;
}

/* The documents holding each word (from the documents in memory), each entry's level slot in
 * its document, and where each document's vectors start in G. */
static int build_index(fit_docs *fd)
{
    if (fd->coff)
        return JSMF_OK;
    uint32_t n = fd->n;
    uint64_t nnz = fd->offs[fd->m];
    if (fd->m > UINT32_MAX)
        return jsmf_error(JSMF_ENOTSUP, "fit: more than 2^32 documents for a gather of rows");
    fd->coff = malloc(sizeof(uint64_t) * ((size_t)n + 1));
    fd->cdoc = big_malloc(sizeof(uint32_t) * (nnz ? nnz : 1));
    fd->ccnt = big_malloc(sizeof(uint32_t) * (nnz ? nnz : 1));
    fd->cslot = fd->lvl ? malloc(sizeof(uint32_t) * (nnz ? nnz : 1)) : NULL;
    fd->goff = malloc(sizeof(uint64_t) * (fd->m + 1));
    fd->wcur = malloc(sizeof(uint64_t) * (n ? n : 1));
    fd->dscale = malloc(sizeof(double) * fd->m);
    uint64_t *pos = malloc(sizeof(uint64_t) * (n ? n : 1));
    if (!fd->coff || !fd->cdoc || !fd->ccnt || (fd->lvl && !fd->cslot) || !fd->goff ||
        !fd->wcur || !fd->dscale || !pos) {
        free(pos);
        free(fd->coff), free(fd->cdoc), free(fd->ccnt), free(fd->cslot), free(fd->goff);
        free(fd->wcur), free(fd->dscale);
        fd->coff = fd->goff = fd->wcur = NULL, fd->cdoc = fd->ccnt = fd->cslot = NULL;
        fd->dscale = NULL;
        return jsmf_error(JSMF_ENOMEM, "fit: out of memory for the documents of each word");
    }
    fd->coff[0] = 0;
    for (uint32_t i = 0; i < n; i++)
        fd->coff[i + 1] = fd->coff[i] + fd->colcnt[i];
    memcpy(pos, fd->coff, sizeof(uint64_t) * n);
    fd->goff[0] = 0;
    for (uint64_t m = 0; m < fd->m; m++) {
        uint64_t e0 = fd->offs[m], e1 = fd->offs[m + 1];
        uint32_t slot = 0;
        fd->dscale[m] = doc_weight(fd->counts, e0, e1) * fd->inv_t;
        for (uint64_t e = e0; e < e1; e++) {
            uint64_t at = pos[fd->ids[e]]++;
            fd->cdoc[at] = (uint32_t)m, fd->ccnt[at] = fd->counts[e];
            if (fd->lvl) {
                slot += e > e0 && fd->lvl[fd->ids[e]] != fd->lvl[fd->ids[e - 1]];
                fd->cslot[at] = slot;
            }
        }
        uint32_t q = doc_levels(fd, fd->ids, e0, e1);
        fd->goff[m + 1] = fd->goff[m] + q;
        fd->maxq = q > fd->maxq ? q : fd->maxq;
    }
    fd->direct = !fd->lvl;
    for (uint64_t m = 0; m < fd->m && fd->direct; m++)
        fd->direct = fd->dscale[m] != 0;
    free(pos);
    return JSMF_OK;
}

/* z += the vectors of entries [c0, c1) of word i's documents, in their order, where document
 * m's vector is G's row m (fd->direct, double): the general case's sums without its two lookups
 * an entry (the vector's offset, the document's weight). */
FIT_HOT static void gather_direct(const fit_docs *fd, uint64_t c0, uint64_t c1, double *z)
{
    uint32_t p = fd->p;
    for (uint64_t c = c0; c < c1; c++) {
        const double *r = fd->G + (size_t)(fd->cdoc[c] - fd->g0) * p;
        double h = fd->ccnt[c];
        if (c + AHEAD < c1)
            prefetch_row(fd->G + (size_t)(fd->cdoc[c + AHEAD] - fd->g0) * p, sizeof(double) * p);
#pragma omp simd
        for (uint32_t k = 0; k < p; k++)
            z[k] += h * r[k];
    }
}

/* The same with the vectors in float32 (fd->single). */
FIT_HOT static void gather_direct_f(const fit_docs *fd, uint64_t c0, uint64_t c1, double *z)
{
    uint32_t p = fd->p;
    for (uint64_t c = c0; c < c1; c++) {
        const float *r = fd->Gf + (size_t)(fd->cdoc[c] - fd->g0) * p;
        double h = fd->ccnt[c];
        if (c + AHEAD < c1)
            prefetch_row(fd->Gf + (size_t)(fd->cdoc[c + AHEAD] - fd->g0) * p, sizeof(float) * p);
#pragma omp simd
        for (uint32_t k = 0; k < p; k++)
            z[k] += h * r[k];
    }
}

/* The same through each entry's vector offset (levels, documents of weight 0). */
FIT_HOT static void gather_indexed(const fit_docs *fd, uint64_t c0, uint64_t c1, double *z)
{
    uint32_t p = fd->p;
    for (uint64_t c = c0; c < c1; c++) {
        uint32_t m = fd->cdoc[c];
        if (fd->dscale[m] == 0)
            continue;
        size_t at = (fd->goff[m] - fd->g0 + (fd->cslot ? fd->cslot[c] : 0)) * p;
        double h = fd->ccnt[c];
        if (c + AHEAD < c1) {
            size_t nx = (fd->goff[fd->cdoc[c + AHEAD]] - fd->g0 +
                         (fd->cslot ? fd->cslot[c + AHEAD] : 0)) * p;
            if (fd->single)
                prefetch_row(fd->Gf + nx, sizeof(float) * p);
            else
                prefetch_row(fd->G + nx, sizeof(double) * p);
        }
        if (fd->single) {
            const float *r = fd->Gf + at;
#pragma omp simd
            for (uint32_t k = 0; k < p; k++)
                z[k] += h * r[k];
        } else {
            const double *r = fd->G + at;
#pragma omp simd
            for (uint32_t k = 0; k < p; k++)
                z[k] += h * r[k];
        }
    }
}

/* Row i of Z += the vectors of the documents before m1 holding word i not added yet (from
 * wcur[i]), in their order. */
static void gather_word_upto(fit_docs *fd, uint32_t i, uint64_t m1)
{
    uint64_t c0 = fd->wcur[i], c1 = c0, end = fd->coff[i + 1];
    while (c1 < end && fd->cdoc[c1] < m1)
        c1++;
    if (c1 == c0)
        return;
    double *z = fd->Z + (size_t)i * fd->p;
    if (fd->direct)
        (fd->single ? gather_direct_f : gather_direct)(fd, c0, c1, z);
    else
        gather_indexed(fd, c0, c1, z);
    fd->wcur[i] = c1;
}

/* Documents a tile of the gather: their vectors (about tile_gather bytes) stay in cache while
 * every word adds them, where a gather over all documents at once read each vector from memory
 * once per entry. */
static uint64_t gather_tile_docs(const fit_docs *fd)
{
    double row = (fd->single ? sizeof(float) : sizeof(double)) * (double)fd->p *
                 ((double)fd->goff[fd->m] / (double)fd->m);
    double t = (double)fd->tile_gather / (row > 0 ? row : 1);
    return t >= (double)fd->m ? fd->m : t >= 1 ? (uint64_t)t : 1;
}

/* Document m's sum g += h V over its entries from dcur[a] whose word is below w1 (a: its place
 * in the chunk), in their order; the cursor moves past them. */
FIT_HOT static void sum_doc_upto(fit_docs *fd, uint64_t m, uint64_t a, uint32_t w1)
{
    uint32_t p = fd->p;
    uint64_t e = fd->dcur[a], e1 = fd->offs[m + 1], stop = e;
    const double *V = fd->V;
    double *g = fd->acc + (size_t)a * p;
    while (stop < e1 && fd->ids[stop] < w1)
        stop++;
    for (; e < stop; e++) {
        const double *v = V + (size_t)fd->ids[e] * p;
        if (e + AHEAD < stop)
            prefetch_row(V + (size_t)fd->ids[e + AHEAD] * p, sizeof(double) * p);
        double h = fd->counts[e];
#pragma omp simd
        for (uint32_t c = 0; c < p; c++)
            g[c] += h * v[c];
    }
    fd->dcur[a] = stop;
}

/* A chunk's vectors from its sums: s g, s = w_m F / T, as doc_vectors makes them. */
FIT_HOT static void put_doc_vector(fit_docs *fd, uint64_t m, const double *g)
{
    uint32_t p = fd->p;
    double s = fd->dscale[m] * fd->F[0];
    if (fd->single) {
        float *out = fd->Gf + (size_t)(fd->goff[m] - fd->g0) * p;
        for (uint32_t c = 0; c < p; c++)
            out[c] = (float)(s * g[c]);
    } else {
        double *out = fd->G + (size_t)(fd->goff[m] - fd->g0) * p;
        for (uint32_t c = 0; c < p; c++)
            out[c] = s * g[c];
    }
}

/* Words a tile of the sums (their rows of V, about tile_sum bytes, stay in cache while a chunk's
 * documents add them) and documents a chunk (their sums, about chunk_sum bytes, in double). */
static uint32_t sum_tile_words(const fit_docs *fd)
{
    uint64_t w = fd->tile_sum / (sizeof(double) * fd->p);
    return w >= fd->n ? fd->n : w ? (uint32_t)w : 1;
}

static uint64_t sum_chunk_docs(const fit_docs *fd)
{
    uint64_t d = fd->chunk_sum / (sizeof(double) * fd->p);
    return d >= fd->m ? fd->m : d ? d : 1;
}

/* The vectors of documents [s0, s1) (one level): a chunk of documents at a time, its sums over
 * the words a tile at a time. Words are added in the order of the document's entries
 * (ascending, as the tiles), so each sum has the bits of doc_vectors' sweep. Called by every
 * thread of a team. */
static void tiled_vectors(fit_docs *fd, uint64_t s0, uint64_t s1, uint64_t chunk, uint32_t wtile)
{
    uint32_t n = fd->n, p = fd->p;
    for (uint64_t d0 = s0; d0 < s1; d0 += chunk) {
        uint64_t d1 = s1 - d0 < chunk ? s1 : d0 + chunk;
#pragma omp for schedule(static)
        for (uint64_t m = d0; m < d1; m++) {
            memset(fd->acc + (size_t)(m - d0) * p, 0, sizeof(double) * p);
            fd->dcur[m - d0] = fd->offs[m];
        }
        for (uint32_t w0 = 0; w0 < n; w0 += wtile) {
            uint32_t w1 = n - w0 < wtile ? n : w0 + wtile;
#pragma omp for schedule(dynamic, 256)
            for (uint64_t m = d0; m < d1; m++)
                if (fd->dscale[m] != 0)
                    sum_doc_upto(fd, m, m - d0, w1);
        }
#pragma omp for schedule(static)
        for (uint64_t m = d0; m < d1; m++)
            if (fd->dscale[m] != 0)
                put_doc_vector(fd, m, fd->acc + (size_t)(m - d0) * p);
    }
}

/* The same one document at a time (levels: each document's prefixes in one sweep). */
static void swept_vectors(fit_docs *fd, uint64_t s0, uint64_t s1, double *tmp)
{
    uint32_t p = fd->p;
    double *vec = tmp + 2 * (size_t)p;
    jsmf_doc_block all = {0, (uint32_t)fd->m, fd->offs, fd->ids, fd->counts};
#pragma omp for schedule(dynamic, 256)
    for (uint64_t m = s0; m < s1; m++) {
        if (fd->dscale[m] == 0)
            continue;
        uint64_t g0 = (fd->goff[m] - fd->g0) * p, len = (fd->goff[m + 1] - fd->goff[m]) * p;
        doc_vectors(fd, &all, (uint32_t)m, fd->dscale[m], fd->single ? vec : fd->G + g0,
                    fd->eslot, tmp);
        for (uint64_t k = 0; fd->single && k < len; k++)
            fd->Gf[g0 + k] = (float)vec[k];
    }
}

/* Documents a run: their vectors (at most fd->held bytes, at least a chunk of sums) are made
 * and gathered before the next run's. Runs end on chunk boundaries, so the sums are the
 * whole product's. */
static uint64_t run_docs(const fit_docs *fd, uint64_t chunk)
{
    double row = (fd->single ? sizeof(float) : sizeof(double)) * (double)fd->p *
                 ((double)fd->goff[fd->m] / (double)fd->m);
    double r = (double)fd->held / (row > 0 ? row : 1);
    uint64_t run = r >= (double)fd->m ? fd->m : r >= 1 ? (uint64_t)r : 1;
    run = run > chunk ? run / chunk * chunk : chunk;
    return run < fd->m ? run : fd->m;
}

/* G for the largest run of documents (vectors: goff's span). */
static int ensure_held(fit_docs *fd, uint64_t run)
{
    uint64_t most = 0;
    for (uint64_t s0 = 0; s0 < fd->m; s0 += run) {
        uint64_t s1 = fd->m - s0 < run ? fd->m : s0 + run;
        most = fd->goff[s1] - fd->goff[s0] > most ? fd->goff[s1] - fd->goff[s0] : most;
    }
    size_t need = (size_t)most * fd->p;
    if (need <= fd->g_cap && (fd->single ? (void *)fd->Gf : (void *)fd->G))
        return JSMF_OK;
    free(fd->G), free(fd->Gf);
    fd->G = NULL, fd->Gf = NULL, fd->g_cap = 0;
    if (fd->single)
        fd->Gf = big_malloc(sizeof(float) * (need ? need : 1));
    else
        fd->G = big_malloc(sizeof(double) * (need ? need : 1));
    if (!fd->G && !fd->Gf)
        return jsmf_error(JSMF_ENOMEM, "fit: out of memory for the documents' vectors");
    fd->g_cap = need;
    return JSMF_OK;
}

/* Documents in memory: a run of documents' vectors into G (documents in parallel), then each
 * row of Z gathered over the run's documents holding its word, in their order (words in
 * parallel), run after run: Z is written once a row a run, where the stepped product adds to
 * it once an entry, and each row's sum runs over its documents in their order, so the bits are
 * those of one sweep whatever the runs and tiles. */
static int product_whole(fit_docs *fd)
{
    uint32_t n = fd->n, p = fd->p;
    if (fd->lvl && fd->offs[fd->m] > fd->e_cap) {
        uint32_t *e = realloc(fd->eslot, sizeof(uint32_t) * fd->offs[fd->m]);
        if (!e)
            return jsmf_error(JSMF_ENOMEM, "fit: out of memory for the documents' vectors");
        fd->eslot = e, fd->e_cap = fd->offs[fd->m];
    }
    uint64_t tile = gather_tile_docs(fd), chunk = sum_chunk_docs(fd), run = run_docs(fd, chunk);
    uint32_t wtile = fd->lvl ? n : sum_tile_words(fd);
    int tiled = wtile < n; /* (levels: each document's prefixes in one sweep, untiled) */
    int rc = ensure_held(fd, run);
    if (rc)
        return rc;
    if (tiled && (chunk * p > fd->acc_cap || chunk > fd->dcur_cap)) {
        free(fd->acc), free(fd->dcur);
        fd->acc = big_malloc(sizeof(double) * chunk * p);
        fd->dcur = malloc(sizeof(uint64_t) * chunk);
        int ok = fd->acc && fd->dcur;
        fd->acc_cap = ok ? chunk * p : 0, fd->dcur_cap = ok ? chunk : 0;
        if (!ok)
            return jsmf_error(JSMF_ENOMEM, "fit: out of memory for the documents' vectors");
    }
#pragma omp parallel num_threads(fd->nt)
    {
        double *tmp = fd->scratch[omp_get_thread_num()];
#pragma omp for schedule(static)
        for (uint32_t i = 0; i < n; i++) {
            memset(fd->Z + (size_t)i * p, 0, sizeof(double) * p);
            fd->wcur[i] = fd->coff[i];
        }
        for (uint64_t s0 = 0; s0 < fd->m; s0 += run) {
            uint64_t s1 = fd->m - s0 < run ? fd->m : s0 + run;
#pragma omp single
            fd->g0 = fd->goff[s0];
            /* (single's barrier: every thread sees the run's first vector) */
            if (tiled)
                tiled_vectors(fd, s0, s1, chunk, wtile);
            else
                swept_vectors(fd, s0, s1, tmp);
            /* Z row by row, a tile of documents at a time */
            for (uint64_t m0 = s0; m0 < s1; m0 += tile) {
                uint64_t m1 = s1 - m0 < tile ? s1 : m0 + tile;
#pragma omp for schedule(dynamic, 64)
                for (uint32_t i = 0; i < n; i++)
                    gather_word_upto(fd, i, m1);
            }
        }
#pragma omp for schedule(static)
        for (uint32_t i = 0; i < n; i++) {
            double *z = fd->Z + (size_t)i * p, dg = fd->diag[i];
            const double *v = fd->V + (size_t)i * p;
            for (uint32_t k = 0; k < p; k++)
                z[k] -= dg * v[k];
        }
    }
    return JSMF_OK;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Row i of C, its non-zeros sorted, into cols/vals; acc (n zeros) and seen (n zeros) are
 * left as they were found. Each sum runs over the word's documents in order. */
static uint32_t gather_row(const fit_docs *fd, uint32_t i, double *acc, unsigned char *seen,
                           uint32_t *cols, double *vals)
{
    uint32_t li = level(fd, i), nv = 0;
    for (uint64_t c = fd->coff[i]; c < fd->coff[i + 1]; c++) {
        uint64_t m = fd->cdoc[c], e0 = fd->offs[m], e1 = fd->offs[m + 1];
        double w = doc_weight(fd->counts, e0, e1) * fd->inv_t * fd->ccnt[c];
        if (w == 0)
            continue;
        for (uint64_t e = e0; e < e1; e++) {
            uint32_t j = fd->ids[e], lj = level(fd, j);
            if (!seen[j])
                seen[j] = 1, cols[nv++] = j;
            acc[j] += w * fd->counts[e] * fd->F[lj > li ? lj : li];
        }
    }
    if (seen[i]) /* the diagonal: - sum_m w_m h_mi f(a_i) / T */
        acc[i] -= fd->diag[i];
    qsort(cols, nv, sizeof *cols, cmp_u32);
    uint32_t out = 0;
    for (uint32_t a = 0; a < nv; a++) {
        uint32_t j = cols[a];
        double v = acc[j];
        acc[j] = 0, seen[j] = 0;
        if (v != 0)
            vals[out] = v, cols[out++] = j;
    }
    return out;
}

/* Sum of squares of row i, gathered as gather_row does but unsorted: touched lists the
 * columns in the order the documents first reach them (fixed), acc is left zero. */
static double gather_rowsq(const fit_docs *fd, uint32_t i, double *acc, uint32_t *touched)
{
    uint32_t li = level(fd, i), nv = 0;
    for (uint64_t c = fd->coff[i]; c < fd->coff[i + 1]; c++) {
        uint64_t m = fd->cdoc[c], e0 = fd->offs[m], e1 = fd->offs[m + 1];
        double w = doc_weight(fd->counts, e0, e1) * fd->inv_t * fd->ccnt[c];
        for (uint64_t e = e0; e < e1 && w != 0; e++) {
            uint32_t j = fd->ids[e], lj = level(fd, j);
            if (acc[j] == 0)
                touched[nv++] = j; /* (a sum back at exactly 0 is listed again: reset below) */
            acc[j] += w * fd->counts[e] * fd->F[lj > li ? lj : li];
        }
    }
    if (fd->coff[i + 1] > fd->coff[i]) {
        if (acc[i] == 0)
            touched[nv++] = i;
        acc[i] -= fd->diag[i];
    }
    double q = 0;
    for (uint32_t a = 0; a < nv; a++) {
        double v = acc[touched[a]];
        q += v * v;
        acc[touched[a]] = 0;
    }
    return q;
}

int fit_docs_rowsq(fit_docs *fd, double *q)
{
    if (!fd->cached)
        return jsmf_error(JSMF_ENOTSUP, "fit: C's rows are gathered from the documents in "
                          "memory, and they do not fit the budget (raise --mem)");
    int rc = build_index(fd);
    if (rc)
        return rc;
    uint32_t n = fd->n;
    /* a column is listed at most once per document of the row, and once more for the diagonal */
    int fail = 0;
#pragma omp parallel num_threads(fd->nt) reduction(| : fail)
    {
        double *acc = calloc(n ? n : 1, sizeof(double));
        uint32_t *touched = NULL;
        uint64_t cap = 0;
        if (!acc)
            fail = 1;
#pragma omp for schedule(dynamic, 64)
        for (uint32_t i = 0; i < n; i++) {
            if (fail)
                continue;
            uint64_t need = 1;
            for (uint64_t c = fd->coff[i]; c < fd->coff[i + 1]; c++)
                need += fd->offs[fd->cdoc[c] + 1] - fd->offs[fd->cdoc[c]];
            if (need > cap) {
                free(touched);
                cap = need > 2 * cap ? need : 2 * cap;
                if (!(touched = malloc(sizeof(uint32_t) * cap))) {
                    fail = 1, cap = 0;
                    continue;
                }
            }
            q[i] = gather_rowsq(fd, i, acc, touched);
        }
        free(acc), free(touched);
    }
    return fail ? jsmf_error(JSMF_ENOMEM, "fit: out of memory for rows of C") : JSMF_OK;
}

/* Per-thread scratch of a gather, and each gathered row of a batch until it is handed on. */
typedef struct {
    double **acc, **tvals, **vals;
    unsigned char **seen;
    uint32_t **tcols, **cols, *nv;
} gather_bufs;

static void gather_free(gather_bufs *g, int nt, uint32_t nb)
{
    for (int t = 0; t < nt; t++) {
        if (g->acc)
            free(g->acc[t]);
        if (g->tvals)
            free(g->tvals[t]);
        if (g->seen)
            free(g->seen[t]);
        if (g->tcols)
            free(g->tcols[t]);
    }
    for (uint32_t a = 0; a < nb; a++) {
        if (g->vals)
            free(g->vals[a]);
        if (g->cols)
            free(g->cols[a]);
    }
    free(g->acc), free(g->tvals), free(g->vals), free(g->seen), free(g->tcols), free(g->cols);
    free(g->nv);
}

static int gather_alloc(gather_bufs *g, int nt, uint32_t n, uint32_t nb)
{
    memset(g, 0, sizeof *g);
    g->acc = calloc(nt, sizeof *g->acc), g->tvals = calloc(nt, sizeof *g->tvals);
    g->seen = calloc(nt, sizeof *g->seen), g->tcols = calloc(nt, sizeof *g->tcols);
    g->vals = calloc(nb, sizeof *g->vals), g->cols = calloc(nb, sizeof *g->cols);
    g->nv = calloc(nb, sizeof *g->nv);
    int fail = !g->acc || !g->tvals || !g->seen || !g->tcols || !g->vals || !g->cols || !g->nv;
    for (int t = 0; t < nt && !fail; t++) {
        g->acc[t] = calloc(n ? n : 1, sizeof(double));
        g->tvals[t] = malloc(sizeof(double) * (n ? n : 1));
        g->seen[t] = calloc(n ? n : 1, 1);
        g->tcols[t] = malloc(sizeof(uint32_t) * (n ? n : 1));
        fail = !g->acc[t] || !g->tvals[t] || !g->seen[t] || !g->tcols[t];
    }
    return fail ? jsmf_error(JSMF_ENOMEM, "fit: out of memory for rows of C") : JSMF_OK;
}

int fit_docs_scan_rows(fit_docs *fd, uint32_t r0, uint32_t r1, jsmf_row_fn fn, void *arg)
{
    if (!fd->cached)
        return jsmf_error(JSMF_ENOTSUP, "fit: C's rows are gathered from the documents in "
                          "memory, and they do not fit the budget (raise --mem)");
    int rc = build_index(fd);
    if (rc)
        return rc;
    uint32_t nb = GATHER_ROWS;
    r1 = r1 < fd->n ? r1 : fd->n;
    gather_bufs g;
    if ((rc = gather_alloc(&g, fd->nt, fd->n, nb))) {
        gather_free(&g, fd->nt, nb);
        return rc;
    }
    /* rows gathered in parallel a batch at a time, handed on in order */
    for (uint32_t b0 = r0; !rc && b0 < r1; b0 += nb) {
        uint32_t cnt = r1 - b0 < nb ? r1 - b0 : nb;
        int bad = 0;
#pragma omp parallel for num_threads(fd->nt) schedule(dynamic, 1) reduction(| : bad)
        for (uint32_t a = 0; a < cnt; a++) {
            int t = omp_get_thread_num();
            uint32_t k = gather_row(fd, b0 + a, g.acc[t], g.seen[t], g.tcols[t], g.tvals[t]);
            free(g.cols[a]), free(g.vals[a]);
            g.cols[a] = malloc(sizeof(uint32_t) * (k ? k : 1));
            g.vals[a] = malloc(sizeof(double) * (k ? k : 1));
            if (!g.cols[a] || !g.vals[a]) {
                bad = 1;
                continue;
            }
            memcpy(g.cols[a], g.tcols[t], sizeof(uint32_t) * k);
            memcpy(g.vals[a], g.tvals[t], sizeof(double) * k);
            g.nv[a] = k;
        }
        if (bad)
            rc = jsmf_error(JSMF_ENOMEM, "fit: out of memory for rows of C");
        for (uint32_t a = 0; a < cnt && !rc; a++)
            if (g.nv[a])
                rc = fn(arg, b0 + a, g.cols[a], g.vals[a], g.nv[a]);
        if (!rc && fd->progress)
            rc = cancel_check();
    }
    gather_free(&g, fd->nt, nb);
    return rc;
}
