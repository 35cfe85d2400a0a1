/* merge.c — combine stores that share a vocabulary: a k-way merge of their C rows (exact sums),
 * added counters and word statistics, and the union of their input records, committed into a
 * new store as one checkpoint. */
#include "store_int.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct merge_in {
    jsmf_store *s;
    MDB_txn *t;
    MDB_cursor *cur;
    int eof;
    uint32_t row, n;   /* the current row and its entries */
    uint32_t *cols;
    jsmf_sum *vals;
    MDB_val k, v;      /* the first chunk not yet consumed */
} merge_in;

typedef struct merge_ctx {
    merge_in *in;
    uint32_t k, n_words;
    uint32_t *cols;    /* output row */
    jsmf_sum *vals;
} merge_ctx;

/* Load the next row of one input (all its chunks). */
static int next_row(merge_in *m)
{
    m->n = 0;
    if (m->eof)
        return 0;
    m->row = get_be32(m->k.mv_data);
    int rc = 0;
    while (rc == 0 && get_be32(m->k.mv_data) == m->row) {
        uint32_t cnt = chunk_count(&m->v);
        if (m->n + cnt > m->s->n_words)
            return jsmf_error(JSMF_ESTORE, "%s: corrupt row %u", m->s->path, m->row);
        chunk_decode(&m->v, m->cols + m->n, m->vals + m->n);
        m->n += cnt;
        rc = mdb_cursor_get(m->cur, &m->k, &m->v, MDB_NEXT);
    }
    if (rc == MDB_NOTFOUND)
        m->eof = 1;
    else if (rc)
        return store_lmdb_error(m->s, rc, "reading C");
    return 0;
}

static void close_inputs(merge_ctx *c)
{
    for (uint32_t i = 0; i < c->k; i++) {
        if (c->in[i].cur)
            mdb_cursor_close(c->in[i].cur);
        if (c->in[i].t)
            mdb_txn_abort(c->in[i].t);
        c->in[i].cur = NULL, c->in[i].t = NULL;
    }
}

/* The rows callback of the commit: may run more than once (map growth), so it starts over. */
static int merge_rows(void *arg, jsmf_emit_row_fn emit, void *txnctx)
{
    merge_ctx *c = arg;
    int rc = 0;
    for (uint32_t i = 0; i < c->k && !rc; i++) {
        merge_in *m = &c->in[i];
        m->eof = 0;
        if ((rc = store_read_begin(m->s, &m->t)))
            break;
        if ((rc = mdb_cursor_open(m->t, m->s->C, &m->cur))) {
            rc = store_lmdb_error(m->s, rc, "cursor on C");
            break;
        }
        int r = mdb_cursor_get(m->cur, &m->k, &m->v, MDB_FIRST);
        if (r == MDB_NOTFOUND)
            m->eof = 1;
        else if (r)
            rc = store_lmdb_error(m->s, r, "reading C");
        if (!rc)
            rc = next_row(m);
    }
    while (!rc) {
        uint32_t row = UINT32_MAX;
        for (uint32_t i = 0; i < c->k; i++)
            if (c->in[i].n && c->in[i].row < row)
                row = c->in[i].row;
        if (row == UINT32_MAX)
            break;
        /* sum the rows that are at `row`: repeated two-way merges into the output buffer */
        uint32_t on = 0;
        for (uint32_t i = 0; i < c->k && !rc; i++) {
            merge_in *m = &c->in[i];
            if (!m->n || m->row != row)
                continue;
            uint32_t a = on;
            /* size of the union, then merge backwards in place (room for n_words entries) */
            uint32_t total = 0;
            {
                uint32_t x = 0, y = 0;
                while (x < a || y < m->n) {
                    if (y == m->n || (x < a && c->cols[x] < m->cols[y]))
                        x++;
                    else if (x == a || m->cols[y] < c->cols[x])
                        y++;
                    else
                        x++, y++;
                    total++;
                }
            }
            int64_t x = (int64_t)a - 1, y = (int64_t)m->n - 1, w = (int64_t)total - 1;
            while (y >= 0) {
                if (x >= 0 && c->cols[x] > m->cols[y])
                    c->cols[w] = c->cols[x], c->vals[w--] = c->vals[x--];
                else if (x >= 0 && c->cols[x] == m->cols[y])
                    c->cols[w] = c->cols[x], c->vals[w--] = c->vals[x--] + m->vals[y--];
                else
                    c->cols[w] = m->cols[y], c->vals[w--] = m->vals[y--];
            }
            on = total;
            rc = next_row(m);
        }
        if (!rc)
            rc = emit(txnctx, row, c->cols, c->vals, on);
    }
    close_inputs(c);
    return rc;
}

static int same_vocab(jsmf_store *a, jsmf_store *b, const jsmf_vocab *va, const jsmf_vocab *vb)
{
    if (va->n != vb->n) {
        uint32_t n = va->n < vb->n ? va->n : vb->n;
        for (uint32_t i = 0; i < n; i++)
            if (strcmp(va->words[i], vb->words[i]))
                return jsmf_error(JSMF_EMISMATCH,
                                  "%s: vocabulary differs from %s at row %u: '%s' vs '%s'", b->path,
                                  a->path, i + 1, vb->words[i], va->words[i]);
        return jsmf_error(JSMF_EMISMATCH, "%s: vocabulary has %u words, %s has %u", b->path,
                          vb->n, a->path, va->n);
    }
    for (uint32_t i = 0; i < va->n; i++)
        if (strcmp(va->words[i], vb->words[i]))
            return jsmf_error(JSMF_EMISMATCH,
                              "%s: vocabulary differs from %s at row %u: '%s' vs '%s'", b->path,
                              a->path, i + 1, vb->words[i], va->words[i]);
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
        int rc = jsmf_store_inputs(c->in[i].s, &a, &n);
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
    snprintf(data, sizeof data, "%s/data.mdb", out);
    if (stat(data, &st) == 0)
        return jsmf_error(JSMF_EEXIST, "%s: output store already exists", out);
    merge_ctx c = {calloc(n, sizeof(merge_in)), n, 0, NULL, NULL};
    jsmf_vocab *v0 = NULL;
    uint64_t *df = NULL, *tf = NULL;
    jsmf_store_input *inputs = NULL;
    uint32_t n_inputs = 0;
    jsmf_store_flush f = {0};
    jsmf_store *o = NULL;
    if (!c.in)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    int rc = 0;
    for (uint32_t i = 0; i < n && !rc; i++) {
        if ((rc = jsmf_store_open(paths[i], JSMF_STORE_RDONLY, &c.in[i].s)))
            break;
        jsmf_vocab *v;
        if ((rc = jsmf_store_vocab(c.in[i].s, &v)))
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
            rc = same_vocab(c.in[0].s, c.in[i].s, v0, v);
        }
        for (uint32_t w = 0; w < v->n && !rc; w++)
            df[w] += v->df[w], tf[w] += v->tf[w];
        if (i)
            jsmf_vocab_free(v);
        jsmf_store_stats st2;
        if (!rc && !(rc = jsmf_store_stats_get(c.in[i].s, &st2))) {
            f.counts.docs += st2.docs, f.counts.docs_dropped += st2.docs_dropped;
            f.counts.tokens += st2.tokens, f.counts.tokens_dropped += st2.tokens_dropped;
            f.counts.oov_tokens += st2.oov_tokens;
        }
        if (!rc) {
            merge_in *m = &c.in[i];
            m->cols = malloc((size_t)c.n_words * sizeof *m->cols);
            m->vals = malloc((size_t)c.n_words * sizeof *m->vals);
            if (!m->cols || !m->vals)
                rc = jsmf_error(JSMF_ENOMEM, "out of memory for merge rows");
        }
    }
    if (!rc) {
        c.cols = malloc((size_t)c.n_words * sizeof *c.cols);
        c.vals = malloc((size_t)c.n_words * sizeof *c.vals);
        if (!c.cols || !c.vals)
            rc = jsmf_error(JSMF_ENOMEM, "out of memory for merge rows");
    }
    if (!rc)
        rc = collect_inputs(&c, &inputs, &n_inputs);
    if (!rc && !(rc = jsmf_store_open(out, JSMF_STORE_CREATE, &o)))
        rc = jsmf_store_init(o, v0, &c.in[0].s->params);
    if (!rc) {
        f.rows = merge_rows, f.rows_arg = &c;
        f.df = df, f.tf = tf;
        f.inputs = inputs, f.n_inputs = n_inputs;
        rc = jsmf_store_commit(o, &f);
    }
    jsmf_store_close(o);
    if (rc && o) {
        /* no half-written output: a merge is one checkpoint or nothing */
        const char *files[] = {"data.mdb", "lock.mdb", "writer.lock"};
        for (int i = 0; i < 3; i++) {
            snprintf(data, sizeof data, "%s/%s", out, files[i]);
            unlink(data);
        }
        rmdir(out);
    }
    for (uint32_t i = 0; i < n; i++) {
        jsmf_store_close(c.in[i].s);
        free(c.in[i].cols), free(c.in[i].vals);
    }
    free(c.in), free(c.cols), free(c.vals), free(df), free(tf), free(inputs);
    jsmf_vocab_free(v0);
    return rc;
}
