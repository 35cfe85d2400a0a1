/* docrows.c — the rows of C computed from a store's documents on demand, in row order: the
 * exact fixed-point sums a store holding rows would hold (ingest's docsum does the sums). When
 * the documents do not fit the budget, rows go in ranges, each a pass over the documents that
 * keeps those holding a word of the range. */
#include "docrows.h"

#include "docs.h"
#include "docsum.h"

#include <omp.h>
#include <stdlib.h>

struct docrows {
    jsmf_store *s;
    MDB_txn *t;
    uint32_t n_words;
    docsum *d;
    uint32_t *bound;     /* pass p holds the rows bound[p] <= i < bound[p + 1] */
    uint32_t npass;
    int64_t pass;        /* the pass whose documents d holds, -1 none */
    uint32_t blk_r0, blk_r1, next;
    int computed;        /* rows blk_r0 .. blk_r1 are summed */
    int whole;           /* one pass holds every document */
    int threads;
    uint64_t budget;
};

/* The budget for the documents: JSMF_STORE_DOCS_MEM (tests: force several passes), else half
 * the default --mem. */
static uint64_t docrows_budget(void)
{
    const char *e = getenv("JSMF_STORE_DOCS_MEM");
    long long v = e && *e ? atoll(e) : 0;
    return v > 0 ? (uint64_t)v : jsmf_mem_default() / 2;
}

/* A pass from row a keeps each document whose first word at or after a (f) is below the
 * pass's end: hist[f] gets its bytes, and the pass ends where their sum would exceed the room. */
typedef struct plan_ctx {
    uint64_t *hist;
    uint32_t a;
} plan_ctx;

static uint64_t first_at(const uint32_t *ids, uint64_t k, uint32_t a)
{
    uint64_t x = 0, y = k;
    while (x < y) {
        uint64_t mid = (x + y) / 2;
        if (ids[mid] < a)
            x = mid + 1;
        else
            y = mid;
    }
    return x;
}

static int plan_block(void *arg, const store_docdec *b)
{
    plan_ctx *c = arg;
    for (uint32_t m = 0; m < b->n_docs; m++) {
        uint64_t a = b->offs[m], k = b->offs[m + 1] - a, x = first_at(b->ids + a, k, c->a);
        if (x < k)
            c->hist[b->ids[a + x]] += docsum_need(1, k) - docsum_need(0, 0);
    }
    return 0;
}

/* The pass that starts at row a (the last known bound): where it ends, exactly as its documents
 * fit; the room grows when the documents of row a alone do not fit. */
static int plan_pass(docrows *r)
{
    uint32_t N = r->n_words, a = r->bound[r->npass];
    uint64_t *hist = calloc((size_t)N + 1, sizeof *hist);
    if (!hist)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    plan_ctx c = {hist, a};
    int rc = store_docs_each_block(r->s, r->t, plan_block, &c);
    uint64_t room = docsum_room(r->d) - docsum_need(0, 0), used = hist[a];
    while (!rc && used > docsum_room(r->d) - docsum_need(0, 0)) { /* row a's documents */
        r->budget += 2 * (used - (docsum_room(r->d) - docsum_need(0, 0)));
        docsum_free(r->d), r->d = NULL;
        rc = docsum_new(N, r->threads, r->budget, &r->d);
        room = rc ? 0 : docsum_room(r->d) - docsum_need(0, 0);
    }
    uint32_t b = a + 1;
    for (; !rc && b < N && used + hist[b] <= room; b++)
        used += hist[b];
    free(hist);
    if (!rc)
        r->bound[++r->npass] = b;
    return rc;
}

int docrows_open(jsmf_store *s, MDB_txn *t, docrows **out)
{
    *out = NULL;
    docrows *r = calloc(1, sizeof *r);
    if (!r)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    r->s = s, r->t = t, r->n_words = s->n_words, r->pass = -1;
    r->budget = docrows_budget(), r->threads = omp_get_max_threads();
    uint64_t docs = 0, nnz = 0;
    int rc = store_meta_get_u64(s, t, "docs", &docs);
    if (!rc)
        rc = store_meta_get_u64(s, t, "doc_nnz", &nnz);
    if (!rc)
        rc = docsum_new(s->n_words, r->threads, r->budget, &r->d);
    if (!rc && !(r->bound = malloc(((size_t)s->n_words + 2) * sizeof *r->bound)))
        rc = jsmf_error(JSMF_ENOMEM, "out of memory");
    if (!rc) {
        r->bound[0] = 0, r->npass = 0;
        r->whole = docsum_need(docs, nnz) <= docsum_room(r->d); /* one pass holds them all */
        if (r->whole)
            r->bound[++r->npass] = s->n_words;
    }
    if (rc) {
        docrows_free(r);
        return rc;
    }
    *out = r;
    return JSMF_OK;
}

void docrows_free(docrows *r)
{
    if (!r)
        return;
    docsum_free(r->d);
    free(r->bound);
    free(r);
}

typedef struct load_ctx {
    docsum *d;
    uint32_t lo, hi, whole;
} load_ctx;

static int load_block(void *arg, const store_docdec *b)
{
    load_ctx *c = arg;
    for (uint32_t m = 0; m < b->n_docs; m++) {
        uint64_t a = b->offs[m], k = b->offs[m + 1] - a;
        const uint32_t *ids = b->ids + a;
        if (!c->whole) { /* keep a document holding a word of [lo, hi) */
            uint64_t x = first_at(ids, k, c->lo);
            if (x == k || ids[x] >= c->hi)
                continue;
        }
        uint64_t len = 0;
        for (uint64_t x = 0; x < k; x++)
            len += b->counts[a + x];
        int rc = docsum_add(c->d, ids, b->counts + a, (uint32_t)k, accum_doc_q(len));
        if (rc)
            return rc;
    }
    return 0;
}

static int load_pass(docrows *r, uint32_t p)
{
    docsum_clear(r->d);
    r->pass = -1, r->computed = 0;
    load_ctx c = {r->d, r->bound[p], r->bound[p + 1], r->whole};
    int rc = store_docs_each_block(r->s, r->t, load_block, &c);
    if (!rc)
        rc = docsum_prepare_rows(r->d);
    if (!rc)
        r->pass = p;
    return rc;
}

int docrows_seek(docrows *r, uint32_t row)
{
    r->next = row;
    return JSMF_OK;
}

int docrows_next(docrows *r, uint32_t *row, const uint32_t **cols, const jsmf_sum **vals,
                 uint32_t *n)
{
    while (r->next < r->n_words) {
        int rc;
        while (r->bound[r->npass] <= r->next) /* passes are planned as rows ask for them */
            if ((rc = plan_pass(r)))
                return rc;
        uint32_t p = 0;
        while (r->bound[p + 1] <= r->next)
            p++;
        if (r->pass != (int64_t)p && (rc = load_pass(r, p)))
            return rc;
        if (!r->computed || r->next < r->blk_r0 || r->next >= r->blk_r1) {
            if ((rc = docsum_sum_block(r->d, r->next, r->bound[p + 1], &r->blk_r1)))
                return rc;
            r->blk_r0 = r->next, r->computed = 1;
        }
        for (; r->next < r->blk_r1; r->next++) {
            uint32_t k = docsum_block_row(r->d, r->next, cols, vals);
            if (k) {
                *row = r->next++, *n = k;
                return 1;
            }
        }
    }
    return 0;
}
