/* runs.c — C as a few immutable sorted runs (formats/store.md, "C runs"): a checkpoint writes its
 * increments as a new run, in write transactions of bounded size, and registers it in the last
 * one; compaction merges the newest runs so that readers sum only a few. */
#include "runs.h"

#include "codec.h"
#include "registry.h"
#include "rows.h"

#include "core/bigmem.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "flush.h"

/* Run the write transaction body fn, then commit; the transaction is aborted on error. */
static int in_write_txn(jsmf_store *s, int (*fn)(jsmf_store *, MDB_txn *, void *), void *arg,
                        int lazy_sync)
{
    MDB_txn *t;
    int rc = store_write_begin(s, &t);
    if (rc)
        return rc;
    if ((rc = fn(s, t, arg))) {
        mdb_txn_abort(t);
        return rc;
    }
    /* a staged part need not reach the disk before the checkpoint that registers it: that
     * checkpoint's own sync covers it, and a crash before it leaves only an unregistered run */
    if (lazy_sync)
        mdb_env_set_flags(s->env, MDB_NOMETASYNC, 1);
    rc = mdb_txn_commit(t);
    if (lazy_sync)
        mdb_env_set_flags(s->env, MDB_NOMETASYNC, 0);
    return rc ? store_commit_error(s, rc) : JSMF_OK;
}

static int open_live_runs(jsmf_store *s, MDB_txn *t, void *arg)
{
    (void)arg;
    run_list l;
    MDB_dbi dbi;
    int rc = runs_get(s, t, &l);
    for (uint32_t i = 0; i < l.n && !rc; i++)
        rc = run_dbi(s, t, l.r[i].id, 0, &dbi);
    return rc;
}

/* Dead runs at open are what a killed process left: the staged parts of a checkpoint that never
 * registered them, or a compaction's merged runs not yet freed. The writer lock says no other
 * process is staging a run, so they go now, even when this process will write nothing. */
int runs_writer_open(jsmf_store *s)
{
    int rc = in_write_txn(s, open_live_runs, NULL, 0);
    return rc ? rc : runs_drop_dead(s);
}

/* ---- dropping dead runs ------------------------------------------------------------------- */

/* The id of a run database the registry does not list: one merged by a compaction, or one a
 * killed checkpoint left unregistered. 0: none. */
static int find_dead_run(jsmf_store *s, MDB_txn *t, uint32_t *id)
{
    *id = 0;
    run_list l;
    MDB_dbi names;
    MDB_cursor *c;
    int rc = runs_get(s, t, &l);
    if (rc)
        return rc;
    if ((rc = mdb_dbi_open(t, NULL, 0, &names)) || (rc = mdb_cursor_open(t, names, &c)))
        return store_lmdb_error(s, rc, "listing the databases");
    MDB_val k = {4, "run."}, v;
    for (rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE); rc == 0 && !*id;
         rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        char name[16];
        unsigned x;
        if (k.mv_size != 12 || memcmp(k.mv_data, "run.", 4))
            break;
        memcpy(name, k.mv_data, 12), name[12] = 0;
        if (sscanf(name + 4, "%8x", &x) != 1 || x == 0)
            continue;
        uint32_t i = 0;
        while (i < l.n && l.r[i].id != x)
            i++;
        if (i == l.n)
            *id = x;
    }
    mdb_cursor_close(c);
    return rc && rc != MDB_NOTFOUND ? store_lmdb_error(s, rc, "listing the databases") : JSMF_OK;
}

/* One transaction's piece of dropping the dead runs: about a write budget of a dead run's
 * chunks deleted, and the run's database itself once it is empty. mdb_drop alone would do it in
 * one go, but LMDB 0.9.24 reads every leaf page of the database it drops, so a large run would
 * map all of its pages into the process at once. */
static int drop_dead_piece(jsmf_store *s, MDB_txn *t, void *arg)
{
    int *done = arg;
    uint32_t id;
    MDB_dbi dbi;
    MDB_cursor *c;
    int rc = find_dead_run(s, t, &id);
    if (rc || !id) {
        *done = !rc;
        return rc;
    }
    if ((rc = run_dbi(s, t, id, 0, &dbi)))
        return rc;
    if ((rc = mdb_cursor_open(t, dbi, &c)))
        return store_lmdb_error(s, rc, "dropping a dead run");
    MDB_val k, v;
    uint64_t bytes = 0;
    while (bytes < s->txn_bytes && (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST)) == 0) {
        bytes += 16 + k.mv_size + v.mv_size;
        store_mapped_read(s, 16 + k.mv_size + v.mv_size);
        if ((rc = mdb_cursor_del(c, 0)))
            break;
    }
    mdb_cursor_close(c);
    if (rc == MDB_NOTFOUND) /* empty: the database goes too, reading nothing */
        rc = mdb_drop(t, dbi, 1);
    return rc ? store_lmdb_error(s, rc, "dropping a dead run") : JSMF_OK;
}

int runs_drop_dead(jsmf_store *s)
{
    for (int done = 0; !done;) {
        int rc = in_write_txn(s, drop_dead_piece, &done, 1);
        store_drop_mapped(s);
        if (rc && s->map_full)
            rc = store_grow_map(s);
        if (rc)
            return rc;
        if (!done && ++s->stages == s->hook_exit_stage)
            _exit(99); /* test hook: die with a dead run partly dropped */
    }
    return JSMF_OK;
}

/* ---- writing a run ------------------------------------------------------------------------ */

void run_writer_init(run_writer *w, jsmf_store *s, uint32_t id)
{
    memset(w, 0, sizeof *w);
    w->s = s, w->id = id;
    w->buf = s->stage_buf[0], w->cap = s->stage_buf_cap[0];
    w->out = s->stage_buf[1], w->out_cap = s->stage_buf_cap[1];
    s->stage_buf[0] = s->stage_buf[1] = NULL;
}

void run_writer_free(run_writer *w)
{
    run_writer_drain(w);
    jsmf_store *s = w->s; /* the buffers go back to the store for the next run */
    s->stage_buf[0] = w->buf, s->stage_buf_cap[0] = w->cap;
    s->stage_buf[1] = w->out, s->stage_buf_cap[1] = w->out_cap;
    w->buf = w->out = NULL, w->len = w->cap = w->out_len = w->out_cap = 0;
}

/* A part of a run: records of an encoded buffer. */
typedef struct run_part {
    uint32_t id;
    int fresh;
    const unsigned char *buf;
    size_t len;
} run_part;

/* Put a part's records into t (appending: run keys arrive in increasing order). */
static int part_put(jsmf_store *s, MDB_txn *t, void *arg)
{
    const run_part *part = arg;
    MDB_dbi dbi;
    int rc = run_dbi(s, t, part->id, 1, &dbi);
    if (rc)
        return rc;
    if (!part->fresh && (rc = mdb_drop(t, dbi, 0))) /* leftovers of an attempt that failed */
        return store_lmdb_error(s, rc, "emptying a run");
    for (size_t p = 0; p < part->len;) {
        uint16_t vlen;
        memcpy(&vlen, part->buf + p + 8, 2);
        MDB_val k = {8, (void *)(part->buf + p)}, v = {vlen, (void *)(part->buf + p + 10)};
        if ((rc = store_put(s, t, dbi, &k, &v, MDB_APPEND)))
            return store_lmdb_error(s, rc, "writing C");
        p += 10 + (size_t)vlen;
    }
    return JSMF_OK;
}

/* The size at which a run's buffered records are written out: small at first, since LMDB
 * mallocs a transaction's dirty pages (fresh memory, a fault per page) and reuses them in the
 * next, so that a short ingest touches little; then growing with what this handle has staged,
 * up to the budget, so that a long one pays few per-transaction costs (a data sync, dropping
 * the map's pages read). kjv, one checkpoint of 66 MB: 0.45 s staged at 32 MiB, 0.23 s at
 * 4 MiB; synthetic N = 100k at 256M, GBs staged: 52 s at 32 MiB, 72 s at 4 MiB. */
#define STAGE_MIN_BYTES ((uint64_t)4 << 20)
#define STAGE_RAMP 8

/* The most a part holds: half the budget, as two buffers take turns (one filling, one
 * spilling) within it. */
static uint64_t stage_cap(const jsmf_store *s)
{
    return s->txn_bytes / 2;
}

static uint64_t stage_bytes(const jsmf_store *s)
{
    uint64_t b = s->staged / STAGE_RAMP;
    b = b < STAGE_MIN_BYTES ? STAGE_MIN_BYTES : b;
    return b < stage_cap(s) ? b : stage_cap(s);
}

/* The spill thread: the full buffer in a write transaction of its own. Errors are recorded in
 * thread-local storage, so the message travels back in out_err. */
static void *spill_main(void *arg)
{
    run_writer *w = arg;
    run_part part = {w->id, w->fresh, w->out, w->out_len};
    w->out_rc = in_write_txn(w->s, part_put, &part, 1);
    if (w->out_rc)
        snprintf(w->out_err, sizeof w->out_err, "%s", jsmf_errmsg_for(w->out_rc));
    return NULL;
}

/* A part is committed: count it, let the map's pages go, and the test hook. */
static void part_done(run_writer *w)
{
    jsmf_store *s = w->s;
    s->staged += w->out_len;
    w->fresh = 1, w->out_len = 0;
    store_drop_mapped(s); /* LMDB reads map pages while writing (tree edges, freelist) */
    if (++s->stages == s->hook_exit_stage)
        _exit(99); /* test hook: die with part of a run written, not registered */
}

/* How a finished spill went: its error in this thread, or the part counted as committed. */
static int spill_outcome(run_writer *w)
{
    if (w->out_rc)
        return jsmf_error(w->out_rc, "%s", w->out_err);
    part_done(w);
    return JSMF_OK;
}

int run_writer_drain(run_writer *w)
{
    if (!w->in_flight)
        return JSMF_OK;
    pthread_join(w->thread, NULL);
    w->in_flight = 0;
    return spill_outcome(w);
}

/* The full buffer becomes the spill in flight (once the previous one is done), the other
 * buffer takes the next rows: encoding a checkpoint's rows and LMDB writing and syncing them
 * took about as long each (debdesc at 1G: 0.33 s and 0.31 s). */
static int writer_spill(run_writer *w)
{
    int rc = run_writer_drain(w);
    if (rc)
        return rc;
    unsigned char *b = w->out;
    size_t cap = w->out_cap;
    w->out = w->buf, w->out_cap = w->cap, w->out_len = w->len;
    w->buf = b, w->cap = cap, w->len = 0;
    if (pthread_create(&w->thread, NULL, spill_main, w) == 0) {
        w->in_flight = 1;
        return JSMF_OK;
    }
    spill_main(w); /* no thread to be had: write it now */
    return spill_outcome(w);
}

/* Room for `need` more bytes in the buffer. */
static int writer_room(run_writer *w, size_t need)
{
    need += w->len;
    if (need > w->cap) {
        /* a part's most and one more row: spilled there, the buffer never grows again */
        size_t cap = stage_cap(w->s) + row_record_bytes(w->s->n_words);
        if (cap < need)
            cap = need;
        unsigned char *nb = big_realloc(w->buf, w->cap, w->len, cap);
        if (!nb)
            return jsmf_error(JSMF_ENOMEM, "%s: out of memory for a run buffer", w->s->path);
        w->buf = nb, w->cap = cap;
    }
    return JSMF_OK;
}

int run_writer_row(run_writer *w, uint32_t row, const uint32_t *cols, const jsmf_sum *vals,
                   uint32_t n)
{
    int rc = writer_room(w, row_record_bytes(n));
    if (rc)
        return rc;
    w->len += store_encode_row(w->buf + w->len, row, cols, vals, n);
    w->entries += n, w->rows++;
    return w->len >= stage_bytes(w->s) ? writer_spill(w) : JSMF_OK;
}

int run_writer_records(run_writer *w, const unsigned char *rec, size_t len, uint32_t entries)
{
    int rc = writer_room(w, len);
    if (rc)
        return rc;
    memcpy(w->buf + w->len, rec, len);
    w->len += len;
    w->entries += entries, w->rows++;
    return w->len >= stage_bytes(w->s) ? writer_spill(w) : JSMF_OK;
}

int run_writer_finish(run_writer *w, MDB_txn *t)
{
    run_part part = {w->id, w->fresh, w->buf, w->len};
    return part_put(w->s, t, &part);
}

/* ---- compaction --------------------------------------------------------------------------- */

/* A run's tier: runs of one tier are within a factor RUNS_FANIN of each other in entries. */
static unsigned tier(uint64_t entries)
{
    unsigned t = 0;
    for (; entries >= RUNS_FANIN; entries /= RUNS_FANIN)
        t++;
    return t;
}

/* Merge runs [j, n) (size-tiered): the newest runs of the newest run's tier or below, once
 * there are RUNS_FANIN of them; their sum is at least RUNS_FANIN times the tier's floor, so it
 * lands a tier higher and an entry is rewritten at most once per tier: log_FANIN of the store
 * over the smallest run. Beyond RUNS_LIVE_MAX live runs the newest RUNS_FANIN merge anyway.
 * j >= n - 1: nothing to merge. */
static uint32_t compact_from(const run_list *l)
{
    if (l->n < 2)
        return l->n;
    uint32_t j = l->n - 1;
    unsigned t = tier(l->r[j].entries);
    while (j > 0 && tier(l->r[j - 1].entries) <= t)
        j--;
    if (l->n - j >= RUNS_FANIN)
        return j;
    return l->n > RUNS_LIVE_MAX ? l->n - RUNS_FANIN : l->n;
}

typedef struct compact_ctx {
    run_writer *w;
    const run_list *old;
    uint32_t from;
    int legacy;             /* the legacy C database holds entries */
} compact_ctx;

static int compact_register(jsmf_store *s, MDB_txn *t, void *arg)
{
    compact_ctx *c = arg;
    int rc = run_writer_finish(c->w, t);
    run_list l = *c->old; /* the merged runs leave the registry; runs_drop_dead frees them */
    l.n = c->from;
    l.r[l.n++] = (run_info){c->w->id, c->w->entries};
    l.next_id = c->w->id + 1;
    if (!rc && c->from == 0 && !c->legacy) { /* the merged run is all of C: count known */
        if (!(rc = store_meta_put_u64(s, t, "nnz", c->w->entries)))
            rc = store_meta_put_u64(s, t, "nnz_exact", 1);
    }
    return rc ? rc : runs_put(s, t, &l);
}

static int compact_once(jsmf_store *s, int *merged)
{
    *merged = 0;
    MDB_txn *rt;
    run_list l;
    int rc = store_read_begin(s, &rt);
    if (rc)
        return rc;
    if ((rc = runs_get(s, rt, &l))) {
        mdb_txn_abort(rt);
        return rc;
    }
    uint32_t from = compact_from(&l);
    if (l.n < 2 || from + 1 >= l.n) {
        mdb_txn_abort(rt);
        return JSMF_OK;
    }
    row_reader rd;
    run_writer w;
    run_writer_init(&w, s, l.next_id);
    rc = reader_init(&rd, s->n_words);
    for (uint32_t i = from; i < l.n && !rc; i++) {
        MDB_dbi dbi;
        if (!(rc = run_dbi(s, rt, l.r[i].id, 0, &dbi)))
            rc = reader_add_dbi(&rd, s, rt, dbi);
    }
    uint32_t row, n;
    const uint32_t *cols;
    const jsmf_sum *vals;
    while (!rc && (rc = reader_next(&rd, &row, &cols, &vals, &n)) == 1) {
        rc = run_writer_row(&w, row, cols, vals, n);
    }
    MDB_stat st;
    int legacy = mdb_stat(rt, s->C, &st) != 0 || st.ms_entries > 0;
    reader_free(&rd);
    mdb_txn_abort(rt);
    if (!rc)
        rc = run_writer_drain(&w);
    if (!rc) {
        compact_ctx c = {&w, &l, from, legacy};
        rc = in_write_txn(s, compact_register, &c, 0);
        *merged = !rc;
    }
    run_writer_free(&w);
    store_drop_mapped(s);
    return rc ? rc : runs_drop_dead(s);
}

int runs_compact(jsmf_store *s)
{
    for (;;) { /* a merge can complete the next tier's set */
        int merged, rc = compact_once(s, &merged);
        if (rc && s->map_full)
            rc = store_grow_map(s), merged = 1; /* grown: the same merge again */
        if (rc || !merged)
            return rc;
    }
}
