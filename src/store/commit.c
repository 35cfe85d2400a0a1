/* commit.c — the checkpoint: a flush's C increments become a new run (staged in bounded write
 * transactions), and one last transaction registers it together with the counters, word
 * statistics and input progress records; map-full grows the map and replays the flush. */
#include "store_int.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/statvfs.h>
#include <unistd.h>

typedef struct emit_ctx {
    jsmf_store *s;
    run_writer *w;
    row_reader *rd;         /* rows already stored, to count new entries; NULL if none */
    int have, end;          /* the reader's row handed out last (valid until its next call) */
    uint32_t prow, pn;
    const uint32_t *pcols;
    uint64_t new_entries;
    uint32_t last_row;
    int started;
} emit_ctx;

/* The stored columns of `row` (n = 0 when it has none). */
static int stored_row(emit_ctx *c, uint32_t row, const uint32_t **cols, uint32_t *n)
{
    *n = 0;
    if (c->have && c->prow < row)
        c->have = 0;
    if (!c->have && !c->end) {
        const jsmf_sum *vals;
        int rc = reader_seek(c->rd, row);
        if (!rc)
            rc = reader_next(c->rd, &c->prow, &c->pcols, &vals, &c->pn);
        if (rc < 0)
            return rc;
        c->have = rc == 1, c->end = rc == 0;
    }
    if (c->have && c->prow == row)
        *cols = c->pcols, *n = c->pn;
    return JSMF_OK;
}

/* Entries of the increment row that C does not hold yet (both sorted). */
static uint32_t count_new(const uint32_t *a, uint32_t an, const uint32_t *b, uint32_t bn)
{
    uint32_t i = 0, j = 0, common = 0;
    while (i < an && j < bn) {
        if (a[i] < b[j])
            i++;
        else if (b[j] < a[i])
            j++;
        else
            i++, j++, common++;
    }
    return an - common;
}

static int emit_row(void *ctxp, uint32_t row, const uint32_t *cols, const jsmf_sum *vals,
                    uint32_t n)
{
    emit_ctx *c = ctxp;
    if (row >= c->s->n_words || (c->started && row <= c->last_row))
        return jsmf_error(JSMF_EINVAL, "%s: flush rows out of order or range (row %u)",
                          c->s->path, row);
    for (uint32_t i = 0; i < n; i++)
        if (cols[i] >= c->s->n_words || (i && cols[i] <= cols[i - 1]))
            return jsmf_error(JSMF_EINVAL, "%s: flush columns out of order in row %u",
                              c->s->path, row);
    c->started = 1, c->last_row = row;
    if (n == 0)
        return JSMF_OK;
    uint32_t added = n;
    if (c->rd) {
        const uint32_t *have;
        uint32_t hn;
        int rc = stored_row(c, row, &have, &hn);
        if (rc)
            return rc;
        added = count_new(cols, n, have, hn);
    }
    c->new_entries += added;
    return run_writer_row(c->w, row, cols, vals, n);
}

/* LMDB reports a short write as EIO: tell a full disk apart by the free space left. */
static int disk_full(jsmf_store *s)
{
    struct statvfs v;
    return statvfs(s->path, &v) == 0 && (uint64_t)v.f_bavail * v.f_frsize < (1u << 20);
}

static int add_wordstats(jsmf_store *s, MDB_txn *t, const uint64_t *df, const uint64_t *tf)
{
    for (uint32_t i = 0; i < s->n_words; i++) {
        uint64_t d = df ? df[i] : 0, f = tf ? tf[i] : 0;
        if (!d && !f)
            continue;
        unsigned char kb[4];
        put_be32(kb, i);
        MDB_val k = {4, kb}, v;
        uint64_t cur[2] = {0, 0};
        int rc = mdb_get(t, s->wordstats, &k, &v);
        if (rc == 0 && v.mv_size == 16)
            memcpy(cur, v.mv_data, 16);
        else if (rc && rc != MDB_NOTFOUND)
            return store_lmdb_error(s, rc, "reading word statistics");
        cur[0] += d, cur[1] += f;
        v = (MDB_val){16, cur};
        if ((rc = mdb_put(t, s->wordstats, &k, &v, 0)))
            return store_lmdb_error(s, rc, "writing word statistics");
    }
    return JSMF_OK;
}

static int put_inputs(jsmf_store *s, MDB_txn *t, const jsmf_store_input *in, uint32_t n)
{
    unsigned char kb[12], buf[sizeof in->path + 128];
    for (uint32_t i = 0; i < n; i++) {
        input_key(kb, in[i].fingerprint, in[i].occurrence);
        MDB_val k = {12, kb}, v = {0, buf};
        int rc;
        if (in[i].state == JSMF_INPUT_REMOVE) {
            if ((rc = mdb_del(t, s->inputs, &k, NULL)) == MDB_NOTFOUND)
                rc = 0;
        } else {
            v.mv_size = input_encode(buf, &in[i]);
            rc = mdb_put(t, s->inputs, &k, &v, 0);
        }
        if (rc)
            return store_lmdb_error(s, rc, "writing input record");
    }
    return JSMF_OK;
}

/* The checkpoint's transaction: the run's last part and its registration, counters, word
 * statistics and input records. */
static int register_flush(jsmf_store *s, MDB_txn *t, const jsmf_store_flush *f, run_writer *w,
                          uint64_t new_entries)
{
    run_list l;
    int rc = runs_get(s, t, &l);
    if (!rc && w->entries) {
        if (l.n >= RUNS_MAX)
            return jsmf_error(JSMF_ESTORE, "%s: %u runs of C are live; compaction failed",
                              s->path, l.n);
        if (!(rc = run_writer_finish(w, t))) {
            l.r[l.n++] = (run_info){w->id, w->entries};
            l.next_id = w->id + 1;
            rc = runs_put(s, t, &l);
        }
    }
    const jsmf_store_counts *k = &f->counts;
    const char *names[] = {"docs", "docs_dropped", "tokens", "tokens_dropped", "oov_tokens", "nnz"};
    const uint64_t adds[] = {k->docs, k->docs_dropped, k->tokens, k->tokens_dropped,
                             k->oov_tokens, new_entries};
    for (int i = 0; i < 6 && !rc; i++)
        rc = store_meta_add_u64(s, t, names[i], adds[i]);
    if (!rc && (f->df || f->tf))
        rc = add_wordstats(s, t, f->df, f->tf);
    if (!rc)
        rc = put_inputs(s, t, f->inputs, f->n_inputs);
    if (!rc && s->version < JSMF_STORE_FORMAT_VERSION) /* an older store now holds runs */
        rc = store_meta_put_u64(s, t, "version", JSMF_STORE_FORMAT_VERSION);
    return rc;
}

static int commit_final(jsmf_store *s, const jsmf_store_flush *f, run_writer *w,
                        uint64_t new_entries)
{
    MDB_txn *t;
    int rc = mdb_txn_begin(s->env, NULL, 0, &t);
    if (rc)
        return store_lmdb_error(s, rc, "cannot begin write transaction");
    s->map_full = 0;
    rc = register_flush(s, t, f, w, new_entries);
    s->commits++;
    if (!rc && s->hook_exit_inside == s->commits)
        _exit(98); /* test hook: die with the transaction written but not committed */
    if (!rc && s->hook_enospc == s->commits) {
        mdb_txn_abort(t);
        return store_lmdb_error(s, ENOSPC, "commit (simulated by JSMF_TEST_ENOSPC_AT_COMMIT)");
    }
    if (rc) {
        mdb_txn_abort(t);
    } else if ((rc = mdb_txn_commit(t))) {
        rc = store_lmdb_error(s, disk_full(s) ? ENOSPC : rc, "commit");
    }
    if (rc)
        s->commits--;
    else
        s->version = JSMF_STORE_FORMAT_VERSION;
    return rc;
}

/* One attempt at a flush: stage the run (counting new entries against the stored rows in a
 * read transaction), then the checkpoint transaction. */
static int flush_once(jsmf_store *s, const jsmf_store_flush *f)
{
    MDB_txn *rt = NULL;
    run_list l;
    uint64_t nnz = 0;
    int rc = store_read_begin(s, &rt);
    if (!rc)
        rc = runs_get(s, rt, &l);
    if (!rc)
        rc = store_meta_get_u64(s, rt, "nnz", &nnz);
    run_writer w;
    run_writer_init(&w, s, rc ? 0 : l.next_id);
    row_reader rd;
    emit_ctx c = {s, &w, NULL, 0, 0, 0, 0, NULL, 0, 0, 0};
    if (!rc && nnz && !(rc = reader_init(&rd, s->n_words))) {
        c.rd = &rd;
        rd.cols_only = 1; /* only which entries exist matters here */
        rc = reader_add_store(&rd, s, rt);
    }
    if (!rc && f->rows)
        rc = f->rows(f->rows_arg, emit_row, &c);
    if (c.rd)
        reader_free(&rd);
    if (rt)
        mdb_txn_abort(rt);
    if (!rc)
        rc = commit_final(s, f, &w, c.new_entries);
    run_writer_free(&w);
    store_drop_mapped(s);
    return rc;
}

int store_grow_map(jsmf_store *s)
{
    MDB_envinfo info;
    mdb_env_info(s->env, &info);
    s->mapsize = (info.me_mapsize > s->mapsize ? info.me_mapsize : s->mapsize) * 2;
    int rc = mdb_env_set_mapsize(s->env, s->mapsize);
    return rc ? store_lmdb_error(s, rc, "cannot grow the map") : JSMF_OK;
}

int jsmf_store_commit(jsmf_store *s, const jsmf_store_flush *f)
{
    if (!s->writable || !s->has_vocab)
        return jsmf_error(JSMF_EINVAL, "%s: store not open for writing", s->path);
    for (;;) {
        int rc = flush_once(s, f);
        if (rc && s->map_full) { /* no transaction is open now: grow and replay the flush */
            if ((rc = store_grow_map(s)))
                return rc;
            continue;
        }
        if (rc)
            return rc;
        if (s->hook_exit_after == s->commits)
            _exit(97); /* test hook: die right after a checkpoint */
        return runs_compact(s);
    }
}

void jsmf_store_set_write_budget(jsmf_store *s, uint64_t bytes)
{
    if (!s->txn_fixed)
        s->txn_bytes = bytes < (64u << 10) ? (64u << 10) : bytes;
}

uint64_t jsmf_store_write_memory(const jsmf_store *s)
{
    uint64_t row = (uint64_t)s->n_words * ENTRY_BYTES + ((uint64_t)s->n_words / CHUNK_MAX + 1) * 12;
    /* staging buffer (budget + one row), dirty pages (chunks fill ~94% of a page, plus branch
     * pages and the checkpoint's word statistics), readers: one row per live run and two more */
    return s->txn_bytes + row + s->txn_bytes / 8 * 9 + (uint64_t)s->n_words * 40 +
           (uint64_t)(RUNS_KEEP + 3) * row;
}
