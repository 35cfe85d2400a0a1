/* merge.c — combine stores that share a vocabulary: a k-way merge of their C rows (exact sums),
 * added counters and word statistics, and the union of their input records, committed into a
 * new store as one checkpoint. */
#include "env.h"
#include "files.h"
#include "rows.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

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
    int rc = jsmf_vocab_compare(vb, b->path, va, a->path);
    if (rc)
        return rc;
    if (a->params.min_doc_len != b->params.min_doc_len)
        return jsmf_error(JSMF_EMISMATCH, "%s: min_doc_len %u differs from %s (%u)", b->path,
                          b->params.min_doc_len, a->path, a->params.min_doc_len);
    return JSMF_OK;
}

/* Union of input records; a key already taken gets the next free occurrence number. */
static int collect_inputs(merge_ctx *c, jsmf_store_input **out, uint32_t *nout)
{
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
        if (!na) {
            free(a), free(all);
            return jsmf_error(JSMF_ENOMEM, "out of memory");
        }
        all = na;
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
            all[total++] = r;
        }
        free(a);
    }
    *out = all, *nout = total;
    return JSMF_OK;
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
        rc = collect_inputs(&c, &inputs, &n_inputs);
    jsmf_store_params params = c.in[0]->params;
    params.hold = JSMF_HOLD_ROWS; /* C's sums; inputs holding documents give their rows */
    if (!rc)
        rc = jsmf_store_create(out, v0, &params, &o);
    if (!rc) {
        f.rows = merge_rows, f.rows_arg = &c;
        f.df = df, f.tf = tf;
        f.inputs = inputs, f.n_inputs = n_inputs;
        f.exact_nnz = 1;
        rc = jsmf_store_commit(o, &f);
    }
    jsmf_store_close(o);
    if (rc && o)
        jsmf_store_files_remove(out, NULL, 1); /* no half-written output: a merge is one checkpoint or nothing */
    for (uint32_t i = 0; i < n; i++) {
        jsmf_store_close(c.in[i]);
    }
    free(c.in), free(c.t), free(df), free(tf), free(inputs);
    jsmf_vocab_free(v0);
    return rc;
}
