/* commit.c — the checkpoint: one write transaction adds a flush's C increments, counters and word
 * statistics and writes the input progress records; map-full grows the map and replays. */
#include "store_int.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/statvfs.h>
#include <unistd.h>

typedef struct emit_ctx {
    jsmf_store *s;
    MDB_txn *t;
    uint64_t new_entries;
    uint32_t last_row;
    int started;
    uint64_t bytes;       /* emitted since the map's pages were last dropped */
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
    if ((c->bytes += (uint64_t)n * ENTRY_BYTES) > (8u << 20)) {
        store_drop_mapped(c->s);
        c->bytes = 0;
    }
    return rows_merge_row(c->s, c->t, row, cols, vals, n, &c->new_entries);
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
        MDB_val k = {12, kb}, v = {input_encode(buf, &in[i]), buf};
        int rc = mdb_put(t, s->inputs, &k, &v, 0);
        if (rc)
            return store_lmdb_error(s, rc, "writing input record");
    }
    return JSMF_OK;
}

/* Everything of one flush inside transaction t. */
static int apply_flush(jsmf_store *s, MDB_txn *t, const jsmf_store_flush *f)
{
    emit_ctx c = {s, t, 0, 0, 0, 0};
    int rc = rows_begin(s, t);
    if (!rc && f->rows)
        rc = f->rows(f->rows_arg, emit_row, &c);
    const jsmf_store_counts *k = &f->counts;
    if (!rc)
        rc = store_meta_add_u64(s, t, "docs", k->docs);
    if (!rc)
        rc = store_meta_add_u64(s, t, "docs_dropped", k->docs_dropped);
    if (!rc)
        rc = store_meta_add_u64(s, t, "tokens", k->tokens);
    if (!rc)
        rc = store_meta_add_u64(s, t, "tokens_dropped", k->tokens_dropped);
    if (!rc)
        rc = store_meta_add_u64(s, t, "oov_tokens", k->oov_tokens);
    if (!rc)
        rc = store_meta_add_u64(s, t, "nnz", c.new_entries);
    if (!rc && (f->df || f->tf))
        rc = add_wordstats(s, t, f->df, f->tf);
    if (!rc)
        rc = put_inputs(s, t, f->inputs, f->n_inputs);
    return rc;
}

int jsmf_store_commit(jsmf_store *s, const jsmf_store_flush *f)
{
    if (!s->writable || !s->has_vocab)
        return jsmf_error(JSMF_EINVAL, "%s: store not open for writing", s->path);
    for (;;) {
        MDB_txn *t;
        int rc = mdb_txn_begin(s->env, NULL, 0, &t);
        if (rc == MDB_MAP_RESIZED)
            rc = mdb_env_set_mapsize(s->env, 0) ? rc : mdb_txn_begin(s->env, NULL, 0, &t);
        if (rc)
            return store_lmdb_error(s, rc, "cannot begin write transaction");
        s->map_full = 0;
        rc = apply_flush(s, t, f);
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
        if (rc && s->map_full) {
            /* no transaction is open now: grow and replay the same flush */
            s->commits--;
            MDB_envinfo info;
            mdb_env_info(s->env, &info);
            s->mapsize = (info.me_mapsize > s->mapsize ? info.me_mapsize : s->mapsize) * 2;
            if ((rc = mdb_env_set_mapsize(s->env, s->mapsize)))
                return store_lmdb_error(s, rc, "cannot grow the map");
            continue;
        }
        if (rc)
            return rc;
        if (s->hook_exit_after == s->commits)
            _exit(97); /* test hook: die right after a checkpoint */
        store_drop_mapped(s);
        return JSMF_OK;
    }
}
