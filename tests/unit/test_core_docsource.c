/* test_core_docsource.c — an in-memory documents view (jsmf_doc_csr_source) checks its
 * documents, scans them in blocks, and its T makes the C the documents define sum to 1, late
 * words included (against a dense C built pair by pair). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "jsmf.h"

enum { N = 7, M = 5 };

/* Five documents; words 5 and 6 admitted after 2 and 3 documents. */
static const uint64_t offs[M + 1] = {0, 3, 5, 8, 11, 13};
static const uint32_t ids[] = {0, 2, 4, 1, 3, 0, 1, 5, 2, 5, 6, 3, 6};
static const uint32_t counts[] = {2, 1, 1, 3, 1, 1, 1, 2, 1, 1, 4, 2, 1};
static const uint64_t admit[N] = {0, 0, 0, 0, 0, 2, 3};

typedef struct { uint64_t docs, entries; uint32_t blocks; } tally;

static int count_block(void *arg, const jsmf_doc_block *b)
{
    tally *t = arg;
    t->blocks++;
    t->docs += b->n_docs;
    t->entries += b->offs[b->n_docs] - b->offs[0];
    return 0;
}

/* The dense unnormalised C, pair by pair, as include/jsmf.h defines it. */
static double dense_total(const uint64_t *adm)
{
    double total = 0;
    for (int m = 0; m < M; m++) {
        double n = 0;
        for (uint64_t e = offs[m]; e < offs[m + 1]; e++)
            n += counts[e];
        for (uint64_t e = offs[m]; e < offs[m + 1]; e++)
            for (uint64_t f = offs[m]; f < offs[m + 1]; f++) {
                double c = (double)counts[e] * counts[f] - (e == f ? counts[e] : 0);
                uint64_t a = adm ? (adm[ids[e]] > adm[ids[f]] ? adm[ids[e]] : adm[ids[f]]) : 0;
                total += c / (n * (n - 1)) / (double)(M - a);
            }
    }
    return total;
}

int main(void)
{
    jsmf_doc_csr d = {N, M, offs, ids, counts, NULL};
    jsmf_doc_source s;
    CHECK(jsmf_doc_csr_source(&d, 2, &s) == JSMF_OK);
    CHECK(s.n == N && s.n_docs == M && s.nnz == 13 && s.tokens == 21 && s.total == 1.0);
    CHECK(fabs(dense_total(NULL) - 1.0) < 1e-12);
    tally t = {0};
    CHECK(s.scan(s.ctx, count_block, &t) == 0);
    CHECK(t.blocks == 3 && t.docs == M && t.entries == 13);
    jsmf_doc_csr_source_free(&s);

    d.admit = admit;
    CHECK(jsmf_doc_csr_source(&d, 0, &s) == JSMF_OK);
    CHECK(fabs(s.total - dense_total(admit)) < 1e-12 && s.total > 1.0);
    jsmf_doc_csr_source_free(&s);

    /* a document out of order, one of a single token, an id out of range */
    uint32_t bad_ids[sizeof ids / sizeof *ids], bad_counts[sizeof counts / sizeof *counts];
    memcpy(bad_ids, ids, sizeof ids);
    memcpy(bad_counts, counts, sizeof counts);
    bad_ids[1] = 0;
    d.ids = bad_ids;
    CHECK(jsmf_doc_csr_source(&d, 0, &s) == JSMF_EINVAL && strstr(jsmf_errmsg(), "document 0"));
    memcpy(bad_ids, ids, sizeof ids);
    bad_ids[4] = N;
    CHECK(jsmf_doc_csr_source(&d, 0, &s) == JSMF_EINVAL && strstr(jsmf_errmsg(), "out of range"));
    memcpy(bad_ids, ids, sizeof ids);
    d.ids = ids;
    bad_counts[11] = 1, bad_counts[12] = 0;
    d.counts = bad_counts;
    CHECK(jsmf_doc_csr_source(&d, 0, &s) == JSMF_EINVAL && strstr(jsmf_errmsg(), "count 0"));
    CHECK_DONE();
}
