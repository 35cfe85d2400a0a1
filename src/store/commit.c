/* commit.c — the checkpoint: a flush's C increments become a new run (staged in bounded write
 * transactions), and one last transaction registers it together with the counters, word
 * statistics and input progress records; map-full grows the map and replays the flush. */
#include "codec.h"
#include "docs.h"
#include "env.h"
#include "growth.h"
#include "registry.h"
#include "rows.h"
#include "runs.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "commit.h"
#include "flush.h"

typedef struct emit_ctx {
    jsmf_store *s;
    run_writer *w;
    uint32_t last_row;
    int started;
} emit_ctx;

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
    return n ? run_writer_row(c->w, row, cols, vals, n) : JSMF_OK;
}

static int emit_encoded(void *ctxp, uint32_t row, const unsigned char *rec, size_t len,
                        uint32_t entries)
{
    emit_ctx *c = ctxp;
    if (row >= c->s->n_words || (c->started && row <= c->last_row) || len < 10 ||
        get_be32(rec) != row)
        return jsmf_error(JSMF_EINVAL, "%s: flush rows out of order or range (row %u)",
                          c->s->path, row);
    c->started = 1, c->last_row = row;
    return entries ? run_writer_records(c->w, rec, len, entries) : JSMF_OK;
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
        int rc = store_get(s, t, s->wordstats, &k, &v);
        if (rc == 0 && v.mv_size == 16)
            memcpy(cur, v.mv_data, 16);
        else if (rc && rc != MDB_NOTFOUND)
            return store_lmdb_error(s, rc, "reading word statistics");
        cur[0] += d, cur[1] += f;
        v = (MDB_val){16, cur};
        if ((rc = store_put(s, t, s->wordstats, &k, &v, 0)))
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
            rc = store_put(s, t, s->inputs, &k, &v, 0);
        }
        if (rc)
            return store_lmdb_error(s, rc, "writing input record");
    }
    return JSMF_OK;
}

/* nnz after this flush: exact when the store held nothing (every entry is new) or when the
 * flush asks for it (a recount of everything); otherwise an upper bound, marked so. */
static int update_nnz(jsmf_store *s, MDB_txn *t, const jsmf_store_flush *f, const run_writer *w)
{
    uint64_t nnz, exact;
    if (!(s->hold & JSMF_HOLD_ROWS)) /* no rows: store_docs_commit keeps a bound */
        return JSMF_OK;
    int rc = store_meta_get_u64(s, t, "nnz", &nnz);
    if (!rc)
        rc = store_nnz_exact(s, t, &exact);
    if (rc || (!w->entries && (exact || !f->exact_nnz)))
        return rc;
    if (nnz == 0 && exact) {
        nnz = w->entries;
    } else if (f->exact_nnz) {
        if ((rc = store_count_entries(s, t, 0, &nnz))) /* the new run is registered already */
            return rc;
        exact = 1;
    } else {
        nnz += w->entries, exact = 0;
    }
    if (!(rc = store_meta_put_u64(s, t, "nnz", nnz)))
        rc = store_meta_put_u64(s, t, "nnz_exact", exact);
    return rc;
}

/* The checkpoint's transaction: the run's last part and its registration, counters, word
 * statistics and input records. */
static int register_flush(jsmf_store *s, MDB_txn *t, const jsmf_store_flush *f, run_writer *w)
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
    if (!rc)
        rc = update_nnz(s, t, f, w);
    if (!rc && (f->docs || f->n_doc_moves))
        rc = store_docs_commit(s, t, f);
    const jsmf_store_counts *k = &f->counts;
    const char *names[] = {"docs", "docs_dropped", "tokens", "tokens_dropped", "oov_tokens"};
    const uint64_t adds[] = {k->docs, k->docs_dropped, k->tokens, k->tokens_dropped,
                             k->oov_tokens};
    for (int i = 0; i < 5 && !rc; i++)
        rc = store_meta_add_u64(s, t, names[i], adds[i]);
    if (!rc && (f->df || f->tf))
        rc = add_wordstats(s, t, f->df, f->tf);
    if (!rc && f->n_pending)
        rc = store_pending_add(s, t, f->pending, f->n_pending);
    if (!rc && f->counting)
        rc = store_meta_add_u64(s, t, "grow_docs", k->docs);
    if (!rc)
        rc = put_inputs(s, t, f->inputs, f->n_inputs);
    if (!rc) /* an older store now holds runs */
        rc = store_version_bump(s, t);
    return rc;
}

static int commit_final(jsmf_store *s, const jsmf_store_flush *f, run_writer *w)
{
    MDB_txn *t;
    int rc = store_write_begin(s, &t);
    if (rc)
        return rc;
    rc = register_flush(s, t, f, w);
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
        rc = store_commit_error(s, rc);
    }
    if (rc)
        s->commits--;
    else
        s->version = store_written_version(s);
    return rc;
}

/* One attempt at a flush: stage the run, then the checkpoint transaction. */
static int flush_once(jsmf_store *s, const jsmf_store_flush *f)
{
    MDB_txn *rt;
    run_list l;
    int rc = store_read_begin(s, &rt);
    if (rc)
        return rc;
    rc = runs_get(s, rt, &l);
    mdb_txn_abort(rt);
    run_writer w;
    run_writer_init(&w, s, rc ? 0 : l.next_id);
    emit_ctx c = {s, &w, 0, 0};
    if (!rc && f->rows)
        rc = f->rows(f->rows_arg, emit_row, &c);
    else if (!rc && f->rows_encoded)
        rc = f->rows_encoded(f->rows_arg, emit_encoded, &c);
    if (!rc)
        rc = run_writer_drain(&w);
    if (!rc)
        rc = commit_final(s, f, &w);
    run_writer_free(&w);
    store_drop_mapped(s);
    return rc;
}

int store_commit(jsmf_store *s, const jsmf_store_flush *f)
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

void store_set_write_budget(jsmf_store *s, uint64_t bytes)
{
    if (!s->txn_fixed)
        s->txn_bytes = bytes < (64u << 10) ? (64u << 10) : bytes;
}

uint64_t store_write_memory(const jsmf_store *s)
{
    return store_write_memory_for(s->n_words, s->txn_bytes);
}

uint64_t store_write_memory_for(uint32_t n_words, uint64_t txn_bytes)
{
    uint64_t row = row_record_bytes(n_words);
    /* two staging buffers (half the budget + one row each: one filling, one spilling),
     * dirty pages (chunks fill ~94% of a page, plus branch pages and the checkpoint's word
     * statistics), pages of the map read since the last drop (store_mapped_read), readers:
     * one row per live run and two more */
    return txn_bytes + 2 * row + txn_bytes / 8 * 9 + (uint64_t)n_words * 40 + txn_bytes +
           (uint64_t)(RUNS_FANIN + 3) * row;
}
