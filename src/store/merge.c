/* merge.c — combine stores that share a vocabulary: a k-way merge of their C rows (exact sums)
 * and a copy of their documents' blocks, added counters and word statistics, and the union of
 * their input records, committed into a new store as one checkpoint. */
#include "env.h"
#include "codec.h"
#include "docs.h"
#include "files.h"
#include "rows.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/grow.h"
#include "core/vocab.h"
#include "commit.h"
#include "flush.h"

typedef struct merge_ctx {
    jsmf_store **in;
    MDB_txn **t;
    uint32_t k, n_words;
} merge_ctx;

/* The rows callback of the commit: may run more than once (map growth), so it starts over,
 * summing every input store's rows (its legacy C and its runs) in one reader. */
static int merge_rows(void *arg, jsmf_emit_row_fn emit, void *txnctx)
{
    merge_ctx *c = arg;
    row_reader rd;
    int rc = reader_init(&rd, c->n_words);
    for (uint32_t i = 0; i < c->k && !rc; i++)
        if (!(rc = store_read_begin(c->in[i], &c->t[i])))
            rc = reader_add_store(&rd, c->in[i], c->t[i]);
    uint32_t row, n;
    const uint32_t *cols;
    const jsmf_sum *vals;
    while (!rc && (rc = reader_next(&rd, &row, &cols, &vals, &n)) == 1)
        rc = emit(txnctx, row, cols, vals, n);
    reader_free(&rd);
    for (uint32_t i = 0; i < c->k; i++)
        if (c->t[i])
            mdb_txn_abort(c->t[i]), c->t[i] = NULL;
    return rc;
}

static int same_vocab(jsmf_store *a, jsmf_store *b, const jsmf_vocab *va, const jsmf_vocab *vb)
{
    int rc = vocab_compare(vb, b->path, va, a->path);
    if (rc)
        return rc;
    if (a->params.min_doc_len != b->params.min_doc_len)
        return jsmf_error(JSMF_EMISMATCH, "%s: min_doc_len %u differs from %s (%u)", b->path,
                          b->params.min_doc_len, a->path, a->params.min_doc_len);
    return JSMF_OK;
}

/* Where an input record of one store went in the merged list: the occurrence number it has
 * there (a key two stores share is renumbered), so its documents' keys follow it. */
typedef struct occ_map {
    uint32_t store;
    uint64_t fingerprint;
    uint32_t from, to;
} occ_map;

/* Union of input records; a key already taken gets the next free occurrence number, noted in
 * map (one entry per record, in the merged list's order). */
static int collect_inputs(merge_ctx *c, jsmf_store_input **out, uint32_t *nout, occ_map **map)
{
    occ_map *om = NULL;
    jsmf_store_input *all = NULL;
    uint32_t total = 0;
    for (uint32_t i = 0; i < c->k; i++) {
        jsmf_store_input *a;
        uint32_t n;
        int rc = jsmf_store_inputs_get(c->in[i], &a, &n);
        if (rc) {
            free(all);
            return rc;
        }
        jsmf_store_input *na = realloc(all, (size_t)(total + n + 1) * sizeof *na);
        occ_map *nm = na ? realloc(om, (size_t)(total + n + 1) * sizeof *nm) : NULL;
        all = na ? na : all, om = nm ? nm : om;
        if (!na || !nm) {
            free(a), free(all), free(om);
            return jsmf_error(JSMF_ENOMEM, "out of memory");
        }
        for (uint32_t j = 0; j < n; j++) {
            jsmf_store_input r = a[j];
            for (int again = 1; again;) {
                again = 0;
                for (uint32_t q = 0; q < total; q++)
                    if (all[q].fingerprint == r.fingerprint && all[q].occurrence == r.occurrence) {
                        r.occurrence++;
                        again = 1;
                    }
            }
            om[total] = (occ_map){i, r.fingerprint, a[j].occurrence, r.occurrence};
            all[total++] = r;
        }
        free(a);
    }
    *out = all, *nout = total, *map = om;
    return JSMF_OK;
}

/* The documents of every input store, block by block as stored (a block is copied, not
 * decoded and encoded again), each key's occurrence moved where its record went. */
typedef struct docs_copy {
    jsmf_store *in;
    uint32_t store;
    const occ_map *map;
    uint32_t n_map;
    unsigned char *keys, *vals;
    uint64_t *off;
    uint32_t n, cap;
    uint64_t vals_len, vals_cap;
    uint64_t docs, nnz, nnz_bound;
} docs_copy;

static int copy_block(void *arg, const MDB_val *k, const MDB_val *v, const store_docdec *d)
{
    docs_copy *dc = arg;
    const unsigned char *key = k->mv_data;
    uint64_t fp = get_be64(key);
    uint32_t occ = get_be32(key + 8), a = 0;
    while (a < dc->n_map && !(dc->map[a].store == dc->store && dc->map[a].fingerprint == fp &&
                              dc->map[a].from == occ))
        a++;
    if (a == dc->n_map) /* e.g. stdin's documents under key 0 before its ingest completed */
        return jsmf_error(JSMF_ESTORE, "%s: documents of an input it lists as incomplete or not "
                          "at all (input %016llx): finish its ingest, then merge", dc->in->path,
                          (unsigned long long)fp);
    uint64_t cap = grow_capacity(dc->cap, (uint64_t)dc->n + 1, 256);
    if (cap > dc->cap) {
        if (grow_array(&dc->keys, cap, DOCS_KEY_BYTES) ||
            grow_array(&dc->off, cap + 1, sizeof *dc->off))
            return jsmf_error(JSMF_ENOMEM, "merge: out of memory for the documents' blocks");
        dc->cap = (uint32_t)cap;
    }
    uint64_t vcap = grow_capacity(dc->vals_cap, dc->vals_len + v->mv_size, 1 << 20);
    if (vcap > dc->vals_cap) {
        if (grow_array(&dc->vals, vcap, 1))
            return jsmf_error(JSMF_ENOMEM, "merge: out of memory for the documents' blocks "
                              "(%llu bytes so far)", (unsigned long long)dc->vals_len);
        dc->vals_cap = vcap;
    }
    unsigned char *nk = dc->keys + (size_t)dc->n * DOCS_KEY_BYTES;
    memcpy(nk, key, DOCS_KEY_BYTES);
    put_be32(nk + 8, dc->map[a].to);
    dc->off[dc->n] = dc->vals_len;
    memcpy(dc->vals + dc->vals_len, v->mv_data, v->mv_size);
    dc->vals_len += v->mv_size, dc->off[++dc->n] = dc->vals_len;
    dc->docs += d->n_docs, dc->nnz += d->nnz;
    for (uint32_t m = 0; m < d->n_docs; m++) {
        uint64_t kk = d->offs[m + 1] - d->offs[m];
        dc->nnz_bound += kk * kk;
    }
    return JSMF_OK;
}

static int copy_docs(merge_ctx *c, const occ_map *map, uint32_t n_map, docs_copy *dc)
{
    int rc = JSMF_OK;
    dc->map = map, dc->n_map = n_map;
    for (uint32_t i = 0; i < c->k && !rc; i++) {
        MDB_txn *t = NULL;
        dc->in = c->in[i], dc->store = i;
        if (!(rc = store_read_begin(c->in[i], &t)))
            rc = store_docs_each_stored(c->in[i], t, copy_block, dc);
        if (t)
            mdb_txn_abort(t);
    }
    return rc;
}

int jsmf_store_merge(const char *out, const char *const *paths, uint32_t n)
{
    if (n == 0)
        return jsmf_error(JSMF_EINVAL, "merge: no input stores");
    struct stat st;
    char data[4096];
    store_file_path(data, sizeof data, out, STORE_FILE_DATA);
    if (stat(data, &st) == 0)
        return jsmf_error(JSMF_EEXIST, "%s: output store already exists", out);
    merge_ctx c = {calloc(n, sizeof(jsmf_store *)), calloc(n, sizeof(MDB_txn *)), n, 0};
    jsmf_vocab *v0 = NULL;
    uint64_t *df = NULL, *tf = NULL;
    jsmf_store_input *inputs = NULL;
    uint32_t n_inputs = 0;
    jsmf_store_flush f = {0};
    jsmf_store *o = NULL;
    occ_map *map = NULL;
    docs_copy dc = {0};
    uint32_t hold_all = JSMF_HOLD_BOTH;
    if (!c.in || !c.t) {
        free(c.in), free(c.t);
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    }
    int rc = 0;
    for (uint32_t i = 0; i < n && !rc; i++) {
        if ((rc = jsmf_store_open(paths[i], JSMF_STORE_RDONLY, &c.in[i])))
            break;
        jsmf_vocab *v;
        if ((rc = jsmf_store_vocab_get(c.in[i], &v)))
            break;
        if (i == 0) {
            v0 = v;
            c.n_words = v->n;
            df = calloc(v->n, sizeof *df), tf = calloc(v->n, sizeof *tf);
            if (!df || !tf) {
                rc = jsmf_error(JSMF_ENOMEM, "out of memory");
                break;
            }
        } else {
            rc = same_vocab(c.in[0], c.in[i], v0, v);
        }
        for (uint32_t w = 0; w < v->n && !rc; w++)
            df[w] += v->df[w], tf[w] += v->tf[w];
        if (i)
            jsmf_vocab_free(v);
        hold_all &= c.in[i]->params.hold ? c.in[i]->params.hold : JSMF_HOLD_ROWS;
        jsmf_store_growth g;
        if (!rc && !(rc = jsmf_store_growth_get(c.in[i], &g)) && g.admitted_late)
            rc = jsmf_error(JSMF_EMISMATCH, "%s: its vocabulary grew (%u words admitted after "
                            "its first documents): merging stores whose words joined at "
                            "different points is not defined (formats/store.md, \"Growth\")",
                            paths[i], g.admitted_late);
        jsmf_store_stats st2;
        if (!rc && !(rc = jsmf_store_stats_get(c.in[i], &st2))) {
            f.counts.docs += st2.docs, f.counts.docs_dropped += st2.docs_dropped;
            f.counts.tokens += st2.tokens, f.counts.tokens_dropped += st2.tokens_dropped;
            f.counts.oov_tokens += st2.oov_tokens;
        }
    }
    if (!rc)
        rc = collect_inputs(&c, &inputs, &n_inputs, &map);
    /* documents when every input holds them (then rows too only when every input holds rows);
     * else rows, the inputs holding documents giving their rows computed from them */
    jsmf_store_params params = c.in[0]->params;
    params.hold = hold_all & JSMF_HOLD_DOCS ? hold_all : JSMF_HOLD_ROWS;
    jsmf_store_doc_blocks blocks = {0};
    if (!rc && (params.hold & JSMF_HOLD_DOCS) && !(rc = copy_docs(&c, map, n_inputs, &dc)))
        blocks = (jsmf_store_doc_blocks){dc.n, dc.keys, dc.vals, dc.off, dc.docs, dc.nnz,
                                         dc.nnz_bound};
    if (!rc)
        rc = jsmf_store_create(out, v0, &params, &o);
    if (!rc) {
        if (params.hold & JSMF_HOLD_ROWS)
            f.rows = merge_rows, f.rows_arg = &c;
        if (params.hold & JSMF_HOLD_DOCS)
            f.docs = &blocks;
        f.df = df, f.tf = tf;
        f.inputs = inputs, f.n_inputs = n_inputs;
        f.exact_nnz = (params.hold & JSMF_HOLD_ROWS) != 0;
        rc = store_commit(o, &f);
    }
    jsmf_store_close(o);
    if (rc && o)
        store_files_remove(out, NULL, 1); /* no half-written output: a merge is one checkpoint or nothing */
    for (uint32_t i = 0; i < n; i++) {
        jsmf_store_close(c.in[i]);
    }
    free(c.in), free(c.t), free(df), free(tf), free(inputs), free(map);
    free(dc.keys), free(dc.vals), free(dc.off);
    jsmf_vocab_free(v0);
    return rc;
}
