/* sampler_docs.c — pairs drawn from C through the documents that define it (jsmf_doc_source):
 * the documents held in memory (words, cumulative counts, offsets), a document drawn, then two
 * of its tokens (fdm_docdraw.h); exact, no thinning, memory O(nnz(H) + M). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alias.h"
#include "fdm_internal.h"
#include "core/hash.h"

/* Bytes a documents sampler holds: 8 a document (offsets) + 8 an entry (word, cumulative
 * count); with late words also the alias table over the documents (8 a document) and the
 * admission points (8 a word). */
uint64_t fdm_doc_sampler_bytes(uint64_t docs, uint64_t nnz, uint32_t n, int late)
{
    return 8 * (docs + 1) + 8 * nnz + (late ? 8 * docs + 8 * (uint64_t)n : 0);
}

/* What the build holds besides the tables, freed before training: with late words, each
 * document's mass and the alias build's scratch (24 bytes a document). */
uint64_t fdm_doc_build_scratch(uint64_t docs, int late)
{
    return late ? 24 * docs : 0;
}

typedef struct load_ctx {
    fdm_doc_tables *t;
    uint64_t *offs;
    uint32_t *ids, *cum;
    uint64_t cap_docs, cap_nnz; /* what the source announced (n_docs, nnz) */
    uint64_t next_doc;          /* documents seen (held or not) */
    uint64_t nnz_seen;
    uint64_t held_nnz;
    uint64_t fingerprint;
} load_ctx;

static int check_entry(const load_ctx *c, uint64_t doc, uint32_t e, uint32_t id, uint32_t prev,
                       uint32_t count)
{
    const fdm_doc_tables *t = c->t;
    if (id >= t->n)
        return jsmf_error(JSMF_EFORMAT, "documents: document %llu, entry %u: word %u out of "
                          "range (N = %u)", (unsigned long long)doc, e, id, t->n);
    if (e && id <= prev)
        return jsmf_error(JSMF_EFORMAT, "documents: document %llu, entry %u: word %u after %u "
                          "(ids must ascend)", (unsigned long long)doc, e, id, prev);
    if (!count)
        return jsmf_error(JSMF_EFORMAT, "documents: document %llu, word %u has count 0",
                          (unsigned long long)doc, id);
    if (t->admit && t->admit[id] >= t->m)
        return jsmf_error(JSMF_EFORMAT, "documents: word %u admitted at %llu, not before the "
                          "last of %llu documents", id, (unsigned long long)t->admit[id],
                          (unsigned long long)t->m);
    return 0;
}

/* One document: checked, hashed, and held when it has two tokens or more. */
static int load_doc(load_ctx *c, uint64_t doc, const uint32_t *ids, const uint32_t *counts,
                    uint64_t len)
{
    if (len > UINT32_MAX)
        return jsmf_error(JSMF_EFORMAT, "documents: document %llu has %llu distinct words",
                          (unsigned long long)doc, (unsigned long long)len);
    if (c->nnz_seen + len > c->cap_nnz)
        return jsmf_error(JSMF_EFORMAT, "documents: more entries than the %llu announced",
                          (unsigned long long)c->cap_nnz);
    uint32_t k = (uint32_t)len;
    c->fingerprint = hash_fnv1a(c->fingerprint, &k, sizeof k);
    c->fingerprint = hash_fnv1a(c->fingerprint, ids, (size_t)k * sizeof *ids);
    c->fingerprint = hash_fnv1a(c->fingerprint, counts, (size_t)k * sizeof *counts);
    c->nnz_seen += len;
    uint64_t tokens = 0, at = c->held_nnz;
    for (uint32_t e = 0; e < k; e++) {
        int rc = check_entry(c, doc, e, ids[e], e ? ids[e - 1] : 0, counts[e]);
        if (rc)
            return rc;
        tokens += counts[e];
        if (tokens > UINT32_MAX)
            return jsmf_error(JSMF_EFORMAT, "documents: document %llu has more than 2^32 "
                              "tokens", (unsigned long long)doc);
        c->ids[at + e] = ids[e];
        c->cum[at + e] = (uint32_t)tokens;
    }
    if (tokens < 2) /* no pair: no mass */
        return 0;
    fdm_doc_tables *t = c->t;
    c->held_nnz += k;
    t->docs++;
    c->offs[t->docs] = c->held_nnz;
    return 0;
}

static int load_block(void *arg, const jsmf_doc_block *b)
{
    load_ctx *c = arg;
    if (b->first != c->next_doc)
        return jsmf_error(JSMF_EFORMAT, "documents: a block starts at document %llu, expected "
                          "%llu", (unsigned long long)b->first, (unsigned long long)c->next_doc);
    if (b->n_docs > c->cap_docs - c->next_doc)
        return jsmf_error(JSMF_EFORMAT, "documents: more than the %llu announced",
                          (unsigned long long)c->cap_docs);
    if (c->t->docs + (uint64_t)b->n_docs > UINT32_MAX - 1)
        return jsmf_error(JSMF_ENOTSUP, "documents: more than 2^32 - 2 documents of two tokens");
    for (uint32_t d = 0; d < b->n_docs; d++) {
        uint64_t a = b->offs[d], z = b->offs[d + 1];
        if (z < a)
            return jsmf_error(JSMF_EFORMAT, "documents: offsets of document %llu decrease",
                              (unsigned long long)(b->first + d));
        int rc = load_doc(c, b->first + d, b->ids + a, b->counts + a, z - a);
        if (rc)
            return rc;
    }
    c->next_doc += b->n_docs;
    return 0;
}

static int check_source(const jsmf_doc_source *d, uint32_t n)
{
    if (d->n != n)
        return jsmf_error(JSMF_EINVAL, "documents of %u words for a matrix of %u", d->n, n);
    if (!d->n_docs)
        return jsmf_error(JSMF_EINVAL, "the co-occurrence matrix has no documents");
    if (d->admit)
        for (uint32_t i = 1; i < n; i++)
            if (d->admit[i] < d->admit[i - 1])
                return jsmf_error(JSMF_EFORMAT, "documents: admission points decrease at word "
                                  "%u (%llu after %llu)", i, (unsigned long long)d->admit[i],
                                  (unsigned long long)d->admit[i - 1]);
    return 0;
}

/* `bytes` for people: "583 bytes" or "12.3 MiB". */
static const char *size_text(uint64_t bytes, char *buf, size_t len)
{
    if (bytes < (1u << 20))
        snprintf(buf, len, "%llu bytes", (unsigned long long)bytes);
    else
        snprintf(buf, len, "%.1f MiB", bytes / 1048576.0);
    return buf;
}

static int check_budget(const jsmf_doc_source *d, uint64_t mem_budget)
{
    int late = d->admit != NULL;
    uint64_t need = fdm_doc_sampler_bytes(d->n_docs, d->nnz, d->n, late) +
                    fdm_doc_build_scratch(d->n_docs, late);
    if (!mem_budget || need <= mem_budget)
        return 0;
    uint64_t mib = (need + (1u << 20) - 1) >> 20, least = JSMF_MEM_MIN >> 20;
    char a[32], b[32];
    return jsmf_error(JSMF_ENOMEM, "the pair sampler holds the %llu documents (%llu entries) "
                      "in memory: %s, more than the memory budget (--mem) of %s; give --mem "
                      "%lluM or more", (unsigned long long)d->n_docs, (unsigned long long)d->nnz,
                      size_text(need, a, sizeof a), size_text(mem_budget, b, sizeof b),
                      (unsigned long long)(mib > least ? mib : least));
}

void fdm_doc_sampler_free(fdm_doc_tables *t)
{
    free((void *)t->offs), free((void *)t->ids), free((void *)t->cum);
    free((void *)t->admit), free((void *)t->doc_prob), free((void *)t->doc_alias);
    memset(t, 0, sizeof *t);
}

/* With late words: the alias table over the held documents by their mass; the sum of the
 * masses over T in *total (1 when the source's T is right). */
static int build_doc_alias(fdm_doc_tables *t, double T, double *total)
{
    double *mass = malloc((size_t)t->docs * sizeof *mass);
    double *work = malloc((size_t)t->docs * sizeof *work);
    uint32_t *idx = malloc(2 * (size_t)t->docs * sizeof *idx);
    float *prob = malloc((size_t)t->docs * sizeof *prob);
    uint32_t *alias = malloc((size_t)t->docs * sizeof *alias);
    int rc = 0;
    if (!mass || !work || !idx || !prob || !alias) {
        rc = jsmf_error(JSMF_ENOMEM, "out of memory for the documents' alias table");
        free(prob), free(alias);
        goto out;
    }
    double sum = 0;
    for (uint32_t d = 0; d < t->docs; d++) {
        uint32_t early;
        mass[d] = fdm_doc_mix(t, t->offs[d], t->offs[d + 1] - t->offs[d], HUGE_VAL, &early);
        sum += mass[d];
    }
    fdm_alias_build(mass, t->docs, sum, prob, alias, work, idx);
    t->doc_prob = prob, t->doc_alias = alias;
    *total = sum / T;
out:
    free(mass), free(work), free(idx);
    return rc;
}

int fdm_doc_sampler_build(const jsmf_doc_source *d, uint32_t n, uint64_t mem_budget,
                          fdm_doc_tables *t, jsmf_fdm_sampler_info *info)
{
    memset(t, 0, sizeof *t);
    int rc = check_source(d, n);
    if (rc || (rc = check_budget(d, mem_budget)))
        return rc;
    load_ctx c = {0};
    c.t = t;
    t->n = n, t->m = d->n_docs;
    c.cap_docs = d->n_docs, c.cap_nnz = d->nnz;
    c.offs = malloc(((size_t)d->n_docs + 1) * sizeof *c.offs);
    c.ids = malloc((d->nnz ? (size_t)d->nnz : 1) * sizeof *c.ids);
    c.cum = malloc((d->nnz ? (size_t)d->nnz : 1) * sizeof *c.cum);
    uint64_t *admit = d->admit ? malloc((size_t)n * sizeof *admit) : NULL;
    t->offs = c.offs, t->ids = c.ids, t->cum = c.cum, t->admit = admit;
    if (!c.offs || !c.ids || !c.cum || (d->admit && !admit)) {
        rc = jsmf_error(JSMF_ENOMEM, "out of memory for the documents of the pair sampler");
        goto fail;
    }
    if (admit)
        memcpy(admit, d->admit, (size_t)n * sizeof *admit);
    c.offs[0] = 0;
    c.fingerprint = hash_fnv1a(HASH_FNV1A_OFFSET, "documents", 9);
    c.fingerprint = hash_fnv1a(c.fingerprint, &n, sizeof n);
    c.fingerprint = hash_fnv1a(c.fingerprint, &d->n_docs, sizeof d->n_docs);
    if (admit)
        c.fingerprint = hash_fnv1a(c.fingerprint, admit, (size_t)n * sizeof *admit);
    if ((rc = d->scan(d->ctx, load_block, &c)))
        goto fail;
    if (c.next_doc != d->n_docs) {
        rc = jsmf_error(JSMF_EFORMAT, "documents: %llu scanned, %llu announced",
                        (unsigned long long)c.next_doc, (unsigned long long)d->n_docs);
        goto fail;
    }
    if (!t->docs) {
        rc = jsmf_error(JSMF_EINVAL, "the co-occurrence matrix has no positive entry (no "
                        "document has two tokens)");
        goto fail;
    }
    double total = (double)t->docs / (double)t->m;
    if (admit && (rc = build_doc_alias(t, d->total, &total)))
        goto fail;
    memset(info, 0, sizeof *info);
    info->n = n;
    info->nnz = d->nnz;
    info->kept = c.held_nnz;
    info->total_mass = total;
    /* for every document and entry announced, those of < 2 tokens included (as allocated) */
    info->bytes = fdm_doc_sampler_bytes(d->n_docs, d->nnz, n, admit != NULL);
    info->fingerprint = c.fingerprint;
    info->documents = t->docs;
    return 0;
fail:
    fdm_doc_sampler_free(t);
    return rc;
}

/* Document d's share of row `row` of C (unnormalised) added to column `col` of out (N x k). */
static double add_row_share(const fdm_doc_tables *t, uint32_t d, uint64_t at, uint32_t row,
                            double *out, uint32_t k, uint32_t col)
{
    uint64_t a = t->offs[d], len = t->offs[d + 1] - a;
    double n = t->cum[a + len - 1], w = 1.0 / (n * (n - 1)), sum = 0;
    double h = t->cum[at] - (at > a ? t->cum[at - 1] : 0);
    for (uint64_t e = 0; e < len; e++) {
        uint32_t j = t->ids[a + e];
        double hj = t->cum[a + e] - (e ? t->cum[a + e - 1] : 0), x = w * h * (hj - (j == row));
        if (t->admit) {
            uint64_t g = t->admit[j] > t->admit[row] ? t->admit[j] : t->admit[row];
            x /= (double)(t->m - g);
        }
        out[(size_t)j * k + col] += x;
        sum += x;
    }
    return sum;
}

/* p(v | u = rows[c]) in column c of out (N x k, row-major), for all k rows in one pass over
 * the documents: sum over the documents holding the row of h_row (h_v - [v == row]) /
 * (n (n - 1)), times f(max(a_row, a_v)) with late words, normalised. A row repeated in rows[]
 * gets the same column. */
void fdm_doc_rows_dist(const fdm_doc_tables *t, const uint32_t *rows, uint32_t k, double *out,
                       uint32_t *slot, double *total)
{
    memset(out, 0, (size_t)t->n * k * sizeof(double));
    for (uint32_t i = 0; i < t->n; i++)
        slot[i] = UINT32_MAX;
    for (uint32_t c = 0; c < k; c++) {
        total[c] = 0;
        if (slot[rows[c]] == UINT32_MAX)
            slot[rows[c]] = c;
    }
    for (uint32_t d = 0; d < t->docs; d++)
        for (uint64_t e = t->offs[d]; e < t->offs[d + 1]; e++) {
            uint32_t c = slot[t->ids[e]];
            if (c != UINT32_MAX)
                total[c] += add_row_share(t, d, e, t->ids[e], out, k, c);
        }
    for (uint32_t c = 0; c < k; c++) {
        uint32_t first = slot[rows[c]];
        for (uint32_t j = 0; j < t->n; j++) {
            double *x = out + (size_t)j * k;
            x[c] = first == c ? (total[c] > 0 ? x[c] / total[c] : 0) : x[first];
        }
    }
}
