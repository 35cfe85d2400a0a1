/* check.c — jsmf info --check: one timed read of all of C through the snapshot source, checking
 * the order of rows and columns and the count of entries, with a digest of the content. Above
 * rows.c and store.c (it calls both), so that neither calls the other back. */
#include "env.h"
#include "codec.h"
#include "jsmf_model.h"
#include "core/clock.h"
#include "core/hash.h"

#include <inttypes.h>
#include <string.h>
#include "core/out.h"
#include "flush.h"
#include "rows.h"
#include "docs.h"
#include "growth.h"

#include <stdlib.h>

typedef struct check_ctx {
    jsmf_store *s;
    jsmf_store_check_result *r;
    int64_t last_row;
    double m;          /* documents: sums over M are C's entries */
    uint64_t *adm;     /* admission points (NULL: all 0): a pair divides by M - max(a_i, a_j) */
} check_ctx;

static int check_row(void *arg, uint32_t row, const uint32_t *cols, const jsmf_sum *sums,
                     uint32_t n)
{
    check_ctx *c = arg;
    if ((int64_t)row <= c->last_row)
        return jsmf_error(JSMF_ESTORE, "%s: row %u of C out of order", c->s->path, row);
    c->last_row = row;
    double part[4] = {0, 0, 0, 0}; /* four chains of additions, not one long dependent one */
    uint64_t h = c->r->digest;
    for (uint32_t i = 0; i < n; i++) {
        if (i && cols[i] <= cols[i - 1])
            return jsmf_error(JSMF_ESTORE, "%s: columns out of order in row %u of C",
                              c->s->path, row);
        part[i & 3] += sum_to_double(sums[i], store_pair_docs(c->m, c->adm, row, cols[i]));
        unsigned __int128 u = (unsigned __int128)sums[i];
        h = hash_fmix64(h ^ ((uint64_t)row << 32 | cols[i]));
        h = hash_fmix64(h ^ (uint64_t)u) + (uint64_t)(u >> 64);
    }
    c->r->digest = h;
    c->r->sum += (part[0] + part[1]) + (part[2] + part[3]);
    c->r->entries += n;
    return 0;
}

static int check_docs_block(void *arg, const store_docdec *d)
{
    jsmf_store_check_result *r = arg;
    uint64_t h = r->doc_digest;
    for (uint32_t m = 0; m < d->n_docs; m++) {
        h = hash_fmix64(h ^ (d->offs[m + 1] - d->offs[m]));
        for (uint64_t x = d->offs[m]; x < d->offs[m + 1]; x++)
            h = hash_fmix64(h ^ ((uint64_t)d->ids[x] << 32 | d->counts[x]));
    }
    r->doc_digest = h;
    r->docs += d->n_docs, r->doc_entries += d->nnz;
    return 0;
}

/* Every block of documents decoded (corrupt ones named), counted and hashed in key order. */
static int check_docs(jsmf_store *s, const jsmf_store_stats *st, jsmf_store_check_result *out)
{
    MDB_txn *t;
    int rc = store_read_begin(s, &t);
    if (rc)
        return rc;
    out->doc_digest = HASH_FNV1A_OFFSET;
    rc = store_docs_each_block(s, t, check_docs_block, out);
    mdb_txn_abort(t);
    if (!rc && (out->docs != st->docs || out->doc_entries != st->doc_nnz))
        rc = jsmf_error(JSMF_ESTORE, "%s: the documents held are %llu with %llu entries, the "
                        "store counts %llu with %llu", s->path, (unsigned long long)out->docs,
                        (unsigned long long)out->doc_entries, (unsigned long long)st->docs,
                        (unsigned long long)st->doc_nnz);
    return rc;
}

int jsmf_store_check(jsmf_store *s, jsmf_store_check_result *out)
{
    memset(out, 0, sizeof *out);
    double t0 = clock_seconds();
    jsmf_source src;
    int rc = jsmf_store_source(s, &src); /* for C's bytes and its exact count of entries */
    if (rc)
        return rc;
    uint64_t nnz = src.nnz;
    out->bytes = src.bytes;
    jsmf_store_source_release(s);
    jsmf_store_stats st;
    if ((rc = jsmf_store_stats_get(s, &st)))
        return rc;
    check_ctx c = {s, out, -1, (double)st.docs, NULL};
    MDB_txn *t;
    if ((rc = store_read_begin(s, &t)))
        return rc;
    rc = store_admissions_load(s, t, &c.adm);
    mdb_txn_abort(t);
    if (!rc)
        rc = store_scan_sums(s, 0, s->n_words, check_row, &c);
    free(c.adm);
    if (!rc && (st.hold & JSMF_HOLD_DOCS))
        rc = check_docs(s, &st, out);
    if (!rc && out->entries != nnz && (s->hold & JSMF_HOLD_ROWS)) /* else nnz is a bound */
        rc = jsmf_error(JSMF_ESTORE, "%s: C holds %llu entries, the store counts %llu", s->path,
                        (unsigned long long)out->entries, (unsigned long long)nnz);
    out->seconds = clock_seconds() - t0;
    return rc;
}

void jsmf_store_check_write(FILE *f, const char *prefix, const char *path,
                            const jsmf_store_check_result *r)
{
    double t = r->seconds;
    report_line(f, prefix, "%s: C read and checked: %" PRIu64 " entries summing to %.6f,",
                     path, r->entries, r->sum);
    report_line(f, prefix, "  content digest %016" PRIx64 ", %.2f GB of store in %.2f s "
                     "(%.2f GB/s)", r->digest, r->bytes / 1e9, t, t > 0 ? r->bytes / 1e9 / t : 0.0);
    if (r->docs)
        report_line(f, prefix, "  documents: %" PRIu64 " with %" PRIu64 " entries, digest "
                         "%016" PRIx64, r->docs, r->doc_entries, r->doc_digest);
}
