/* ingest.c — an ingest session: documents in, batches of pairs into the accumulator, and a
 * checkpoint (accumulated sums + counters + input progress, one commit) whenever it is full. */
#include "jsmf_ingest.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "accum.h"
#include "store/docsum.h"
#include "jsmf_io.h"
#include "core/clock.h"
#include "core/grow.h"
#include "ingest_internal.h"
#include "pending.h"
#include "io/stopwords_en.h"
#include "store/commit.h"
#include "store/flush.h"
#include "store/store.h"
#include "store/growth.h"
#include "store/codec.h"
#include "store/docs.h"

/* A batch of documents takes about this share of --mem (see jsmf_ingest_new), between these
 * bounds; per id: id and count, and the accumulator's occurrence lists; per document: offsets,
 * q, the accumulator's table of small products and per-thread prefix lengths. */
#define BATCH_SHARE 32
#define BATCH_MIN_BYTES (2u << 20)
#define BATCH_MAX_BYTES (32u << 20)
#define BATCH_ID_BYTES 16
#define BATCH_DOC_BYTES(T) (280 + 4 * (T))
/* The largest dense triangle of C the automatic choice takes (jsmf_ingest_new). */
#define DENSE_MAX_BYTES (256ull << 20)

struct jsmf_ingest {
    jsmf_store *s;
    uint32_t n_words, min_len;
    accum *acc;                  /* pairs summed in memory, or: */
    docsum *ds;                  /* documents kept, their rows computed at the checkpoint */
    int threads;
    doc_batch b;                 /* the batch being filled */
    doc_batch added;             /* the batch the accumulator is adding meanwhile (if adding) */
    int adding;
    uint64_t *room;              /* per thread, entries the filled batch may still add */
    uint32_t batch_docs;         /* a batch runs when it holds this many documents */
    uint64_t batch_ids;          /* ... or ids */
    uint64_t *add;               /* per thread, the current document's new entries */
    /* document normalisation: counts per word, stamped by document */
    uint32_t *stamp, *cnt, *uniq, *ucnt, docno;
    /* since the last checkpoint */
    jsmf_store_counts counts;
    uint64_t *df, *tf;
    int dirty;
    jsmf_store_input *recs;      /* records to write at the next checkpoint */
    uint32_t nrecs, caprecs;
    int cur;                     /* index of the current input in recs, -1 none */
    /* a document with more pairs than the tables hold, checkpointed alone (solo_rows) */
    int finishing;               /* the last checkpoint: it makes the store's nnz exact */
    uint32_t solo_k;
    double solo_q;
    uint32_t *solo_cols;
    jsmf_sum *solo_vals;
    /* growth (formats/store.md): words outside the vocabulary, counted while the rule grows */
    int grow;
    pending_table pend;
    jsmf_vocab *stop;            /* the rule's stopwords, never counted */
    jsmf_wordmap *stopmap;
    const char *const *oov_w;    /* the next document's words outside the vocabulary */
    const uint32_t *oov_len, *oov_cnt;
    uint32_t oov_n, oov_stamp;
    /* a store that holds its documents (formats/store.md "Documents"): the window's, encoded */
    int keep_docs, docs_only;    /* docs_only: no rows at all, nothing summed */
    store_docw dw;
    uint64_t dw_room;            /* bytes the buffer may take, sealed blocks included */
    jsmf_store_doc_move *moves;  /* stdin records renamed since the last checkpoint */
    uint32_t n_moves, cap_moves;
    jsmf_ingest_summary sum;
    double t0;            /* clock_seconds() at jsmf_ingest_new */
    double every, last_checkpoint;
};

/* Most documents have a few dozen distinct words: an inline insertion sort beats qsort's
 * comparator calls there (qsort and its comparator took 6 % of the CPU of a debdesc ingest, all
 * of it on the serial reading path). Longer ones (kjv's chapters: ~200) go by an LSD radix sort
 * through tmp (n entries), 8 bits a pass, as many passes as the largest id has bytes: qsort took
 * a fifth of the reading thread's time there. */
static void sort_ids(uint32_t *a, uint32_t n, uint32_t *tmp, uint32_t max_id)
{
    if (n > 64) {
        uint32_t *src = a, *dst = tmp;
        for (unsigned shift = 0; shift == 0 || (shift < 32 && (max_id >> shift)); shift += 8) {
            uint32_t at[256] = {0};
            for (uint32_t i = 0; i < n; i++)
                at[src[i] >> shift & 255]++;
            for (uint32_t d = 0, sum = 0; d < 256; d++) {
                uint32_t c = at[d];
                at[d] = sum, sum += c;
            }
            for (uint32_t i = 0; i < n; i++)
                dst[at[src[i] >> shift & 255]++] = src[i];
            uint32_t *x = src;
            src = dst, dst = x;
        }
        if (src != a)
            memcpy(a, src, (size_t)n * sizeof *a);
        return;
    }
    for (uint32_t i = 1; i < n; i++) {
        uint32_t v = a[i], j = i;
        for (; j > 0 && a[j - 1] > v; j--)
            a[j] = a[j - 1];
        a[j] = v;
    }
}

static int batch_reserve(doc_batch *b, int threads, uint32_t docs, uint64_t ids)
{
    if (!b->pairs && !(b->pairs = calloc((size_t)threads, sizeof *b->pairs)))
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    if (docs + 1 > b->cap_docs) {
        uint64_t c = grow_capacity(b->cap_docs, (uint64_t)docs + 1, (uint64_t)docs + 1);
        if (c > UINT32_MAX || grow_array(&b->start, c, sizeof *b->start) ||
            grow_array(&b->q, c, sizeof *b->q))
            return jsmf_error(JSMF_ENOMEM, "out of memory");
        b->cap_docs = (uint32_t)c;
    }
    if (ids > b->cap_ids) {
        uint64_t c = grow_capacity(b->cap_ids, ids, ids);
        if (grow_array(&b->ids, c, sizeof *b->ids) || grow_array(&b->counts, c, sizeof *b->counts))
            return jsmf_error(JSMF_ENOMEM, "out of memory");
        b->cap_ids = c;
    }
    return JSMF_OK;
}

static void batch_reset(doc_batch *b, int threads)
{
    b->ndocs = 0, b->nids = 0;
    if (b->start)
        b->start[0] = 0;
    for (int t = 0; b->pairs && t < threads; t++)
        b->pairs[t] = 0;
}

/* The room each thread's table has left, exact while no batch is being added. */
static void recount_room(jsmf_ingest *g)
{
    if (!g->acc)
        return;
    for (int t = 0; t < g->threads; t++)
        g->room[t] = accum_room(g->acc, t);
}

/* Wait for the batch being added; the accumulator's room is then exact again. The wait is
 * what the summary counts as time waiting for adds: the rest of adding overlaps reading. */
static int wait_batch(jsmf_ingest *g)
{
    int rc = JSMF_OK;
    if (g->adding && g->acc) {
        double t0 = clock_seconds();
        rc = accum_add_wait(g->acc);
        g->adding = 0;
        g->sum.seconds_adding += clock_seconds() - t0;
    }
    recount_room(g);
    return rc;
}

/* Hand the filled batch to the accumulator, which adds it while the next one fills (two
 * buffers take turns); the next may add what room the handed one's bound leaves. */
static int start_batch(jsmf_ingest *g)
{
    int rc = wait_batch(g);
    if (rc || !g->b.ndocs)
        return rc;
    doc_batch full = g->b;
    g->b = g->added, g->added = full;
    batch_reset(&g->b, g->threads);
    for (int t = 0; t < g->threads; t++)
        g->room[t] -= g->added.pairs[t] < g->room[t] ? g->added.pairs[t] : g->room[t];
    double t0 = clock_seconds();
    rc = accum_add_start(g->acc, &g->added);
    g->sum.seconds_adding += clock_seconds() - t0;
    g->adding = !rc;
    return rc;
}

/* Everything read so far added: the accumulator is idle and its room exact. */
static int run_batch(jsmf_ingest *g)
{
    int rc = start_batch(g);
    int rc2 = wait_batch(g);
    return rc ? rc : rc2;
}

/* The df the accumulator's layout is planned by: what the store counted, else the caller's. */
static const uint64_t *planning_df(const jsmf_vocab *v, const jsmf_ingest_opts *o)
{
    for (uint32_t i = 0; i < v->n; i++)
        if (v->df[i])
            return v->df;
    return o ? o->df : NULL;
}

/* The store's write transactions get a sixteenth of the budget, 1 to 32 MiB. */
static uint64_t txn_budget(uint64_t mem)
{
    uint64_t txn = mem / 16;
    return txn < (1u << 20) ? (1u << 20) : txn > (32u << 20) ? (32u << 20) : txn;
}

/* Batches: bigger ones let the accumulator add row by row over more documents (fewer passes
 * over its dense block); counted twice, as the buffers grow by doubling. */
static uint64_t batch_budget(uint64_t mem)
{
    uint64_t batch = mem / BATCH_SHARE;
    return batch < BATCH_MIN_BYTES ? BATCH_MIN_BYTES : batch > BATCH_MAX_BYTES ? BATCH_MAX_BYTES
                                                                                : batch;
}

/* What the budget must hold besides the accumulator's tables: the per-word arrays, the
 * batches, the store's checkpoints (staging, LMDB dirty pages, row readers) and reading. */
static uint64_t fixed_bytes(uint32_t n_words, uint64_t mem, uint64_t store_write)
{
    return (uint64_t)n_words * 68 + 2 * batch_budget(mem) + store_write + JSMF_IO_READER_BYTES;
}

int ingest_mem_check(uint32_t n_words, uint64_t mem)
{
    uint64_t need = fixed_bytes(n_words, mem, store_write_memory_for(n_words,
                                                                         txn_budget(mem))) +
                    (1u << 20);
    if (mem >= need)
        return JSMF_OK;
    return jsmf_error(JSMF_ENOMEM, "--mem %.0f MiB is below the %.0f MiB an ingest of %u words "
                      "needs (reading, the store's writes, the per-word arrays and the smallest "
                      "accumulator); give --mem %lluM or more", mem / 1048576.0,
                      need / 1048576.0, n_words,
                      (unsigned long long)((need + (1u << 20) - 1) >> 20));
}

/* The stopwords a rule names: the compiled-in list, the store's list, or none. */
int ingest_rule_stopwords(jsmf_store *s, const jsmf_store_rule *r, jsmf_vocab **out)
{
    *out = NULL;
    if (r->state != JSMF_RULE_GROW || !strcmp(r->stopwords, "none"))
        return JSMF_OK;
    if (!strcmp(r->stopwords, "list"))
        return jsmf_store_rule_stopwords_get(s, out);
    return stopwords_en(out);
}

/* While the store's rule grows, the session counts the words outside the vocabulary in a
 * table of its own, a share of the budget (PENDING_SHARE, bounded), checkpointing when it is
 * full as when the accumulator is. */
#define PENDING_SHARE 16
#define PENDING_MIN_BYTES (1u << 20)
#define PENDING_MAX_BYTES (256u << 20)
static int setup_growth(jsmf_ingest *g, uint64_t mem, uint64_t *fixed)
{
    jsmf_store_rule r;
    int rc = jsmf_store_rule_get(g->s, &r);
    if (rc || r.state != JSMF_RULE_GROW)
        return rc;
    g->grow = 1;
    if ((rc = ingest_rule_stopwords(g->s, &r, &g->stop)) ||
        (g->stop && g->stop->n && (rc = jsmf_wordmap_new(g->stop, &g->stopmap))))
        return rc;
    uint64_t share = mem / PENDING_SHARE;
    share = share < PENDING_MIN_BYTES ? PENDING_MIN_BYTES
            : share > PENDING_MAX_BYTES ? PENDING_MAX_BYTES : share;
    *fixed += share;
    return pending_init(&g->pend, share);
}

int jsmf_ingest_new(jsmf_store *s, const jsmf_ingest_opts *o, jsmf_ingest **out)
{
    *out = NULL;
    if (!store_has_vocab(s))
        return jsmf_error(JSMF_EINVAL, "%s: store has no vocabulary", jsmf_store_path(s));
    jsmf_store_stats st;
    jsmf_store_params p;
    int rc = jsmf_store_stats_get(s, &st);
    if (rc || (rc = jsmf_store_params_get(s, &p)))
        return rc;
    jsmf_ingest *g = calloc(1, sizeof *g);
    if (!g)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    g->t0 = clock_seconds();
    g->s = s;
    g->n_words = st.n_words;
    g->min_len = p.min_doc_len < 2 ? 2 : p.min_doc_len;
    g->threads = o && o->threads > 0 ? o->threads : omp_get_max_threads();
    g->cur = -1;
    g->every = o && o->checkpoint_secs ? o->checkpoint_secs : 300;
    g->last_checkpoint = clock_seconds();
    size_t N = g->n_words;
    g->add = calloc((size_t)g->threads, sizeof *g->add);
    g->room = calloc((size_t)g->threads, sizeof *g->room);
    g->stamp = calloc(N, sizeof *g->stamp);
    g->cnt = calloc(N, sizeof *g->cnt);
    g->uniq = malloc(N * sizeof *g->uniq);
    g->ucnt = malloc(N * sizeof *g->ucnt);
    g->df = calloc(N, sizeof *g->df);
    g->tf = calloc(N, sizeof *g->tf);
    g->solo_cols = malloc(N * sizeof *g->solo_cols);
    g->solo_vals = malloc(N * sizeof *g->solo_vals);
    if (!g->add || !g->room || !g->stamp || !g->cnt || !g->uniq || !g->ucnt || !g->df || !g->tf ||
        !g->solo_cols || !g->solo_vals) {
        jsmf_ingest_free(g);
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    }
    /* the budget: tables get what reading, the batch buffers, the per-word arrays and the
     * store's checkpoints (staging buffer, LMDB dirty pages, row readers) leave */
    uint64_t mem = o && o->mem ? o->mem : jsmf_mem_default();
    if (!(o && o->mem_below_need) && (rc = ingest_mem_check(g->n_words, mem))) {
        jsmf_ingest_free(g);
        return rc;
    }
    store_set_write_budget(s, txn_budget(mem));
    uint64_t batch = batch_budget(mem);
    g->batch_ids = batch / 4 / BATCH_ID_BYTES; /* two buffers take turns, each half of it */
    g->batch_docs = (uint32_t)(batch / 4 / BATCH_DOC_BYTES(g->threads));
    uint64_t fixed = fixed_bytes(g->n_words, mem, store_write_memory(s));
    if ((rc = setup_growth(g, mem, &fixed))) {
        jsmf_ingest_free(g);
        return rc;
    }
    uint64_t tables = mem > fixed + (1u << 20) ? mem - fixed : (1u << 20);
    g->sum.mem_needed = fixed + (1u << 20);
    jsmf_vocab *v = NULL;
    if ((rc = jsmf_store_vocab_get(s, &v))) {
        jsmf_ingest_free(g);
        return rc;
    }
    /* a dense triangle only while it is small: zeroing and scanning it costs more than
     * summing rows from the documents above that (debdesc, N = 17.7k at 4G: 2.5 GB dense
     * 3.64 s, documents 1.15 s; kjv, 0.16 GB: 0.28 s and 0.31 s); hash tables when even the
     * rows' per-thread buffers would take a quarter of the budget */
    g->keep_docs = (p.hold & JSMF_HOLD_DOCS) != 0;
    g->docs_only = p.hold == JSMF_HOLD_DOCS;
    store_docw_init(&g->dw);
    if (g->keep_docs) { /* documents only: all of it; with rows: a quarter */
        g->dw_room = g->docs_only ? tables : tables / 4;
        tables -= g->docs_only ? 0 : g->dw_room;
        const char *cap = getenv("JSMF_TEST_DOCS_BYTES"); /* tests: many small windows */
        if (cap && atoll(cap) > 0 && (uint64_t)atoll(cap) < g->dw_room)
            g->dw_room = (uint64_t)atoll(cap);
    }
    int mode = o ? o->accumulator : ACCUM_AUTO;
    uint64_t dense_max = tables < DENSE_MAX_BYTES ? tables : DENSE_MAX_BYTES;
    if (mode == ACCUM_AUTO && !accum_dense_fits(g->n_words, dense_max) &&
        docsum_fixed_bytes(g->n_words, g->threads) <= tables / 4)
        mode = ACCUM_DOCS;
    if (g->docs_only) {
        rc = JSMF_OK; /* nothing summed */
    } else if (mode == ACCUM_DOCS) {
        rc = docsum_new(g->n_words, g->threads, tables, &g->ds);
    } else {
        rc = accum_new(g->n_words, g->threads, tables, mode, planning_df(v, o), &g->acc);
        if (!rc)
            g->sum.dense_width = accum_dense_width(g->acc);
    }
    jsmf_vocab_free(v);
    g->sum.doc_buffer = g->docs_only ? 2 : g->ds != NULL;
    if (rc || (rc = batch_reserve(&g->b, g->threads, g->batch_docs, g->batch_ids)) ||
        (rc = batch_reserve(&g->added, g->threads, g->batch_docs, g->batch_ids))) {
        jsmf_ingest_free(g);
        return rc;
    }
    batch_reset(&g->b, g->threads);
    batch_reset(&g->added, g->threads);
    recount_room(g);
    *out = g;
    return JSMF_OK;
}

void jsmf_ingest_free(jsmf_ingest *g)
{
    if (!g)
        return;
    accum_free(g->acc); /* waits for a batch being added */
    docsum_free(g->ds);
    doc_batch *bs[2] = {&g->b, &g->added};
    for (int i = 0; i < 2; i++)
        free(bs[i]->start), free(bs[i]->ids), free(bs[i]->counts), free(bs[i]->q), free(bs[i]->pairs);
    free(g->add), free(g->room), free(g->stamp), free(g->cnt), free(g->uniq), free(g->ucnt);
    free(g->df), free(g->tf), free(g->recs), free(g->solo_cols), free(g->solo_vals);
    pending_free(&g->pend);
    store_docw_free(&g->dw);
    free(g->moves);
    jsmf_wordmap_free(g->stopmap);
    jsmf_vocab_free(g->stop);
    free(g);
}

/* The rows of one document's C_m straight from its word counts (both triangles), with the
 * values the accumulator would have added: no table, so no memory beyond O(distinct words). */
static int solo_rows(void *arg, jsmf_emit_row_fn emit, void *txnctx)
{
    jsmf_ingest *g = arg;
    const uint32_t *ids = g->uniq, *cnt = g->ucnt;
    for (uint32_t x = 0; x < g->solo_k; x++) {
        uint64_t hi = cnt[x];
        uint32_t n = 0;
        for (uint32_t y = 0; y < g->solo_k; y++) {
            uint64_t h = y == x ? hi * hi - hi : hi * cnt[y];
            if (h == 0)
                continue;
            g->solo_cols[n] = ids[y];
            g->solo_vals[n++] = accum_fixed((double)h * g->solo_q);
        }
        int rc = emit(txnctx, ids[x], g->solo_cols, g->solo_vals, n);
        if (rc)
            return rc;
    }
    return JSMF_OK;
}

/* Forget what the accumulator (or the document buffer) holds. */
static void clear_window(jsmf_ingest *g)
{
    if (g->acc)
        accum_clear(g->acc);
    else if (g->ds)
        docsum_clear(g->ds);
    store_docw_clear(&g->dw);
    g->n_moves = 0;
}

/* The checkpoint: everything added so far, with the inputs' progress, in one commit. */
static int checkpoint(jsmf_ingest *g)
{
    int rc = run_batch(g);
    if (rc)
        return rc;
    if (!g->dirty && g->nrecs == 0 && !g->finishing)
        return JSMF_OK;
    double t0 = clock_seconds();
    if ((rc = g->acc ? accum_prepare_rows(g->acc) : g->ds ? docsum_prepare_rows(g->ds) : 0))
        return rc;
    jsmf_store_flush f = {0};
    if (g->solo_k)
        f.rows = solo_rows, f.rows_arg = g;
    else if (g->acc && accum_entries(g->acc))
        f.rows = accum_rows, f.rows_arg = g->acc;
    else if (g->ds && docsum_docs(g->ds))
        f.rows_encoded = docsum_rows, f.rows_arg = g->ds;
    f.counts = g->counts;
    f.df = g->df, f.tf = g->tf;
    f.inputs = g->recs, f.n_inputs = g->nrecs;
    f.exact_nnz = g->finishing;
    if (g->keep_docs && store_docw_docs(&g->dw) &&
        (rc = store_docw_seal(&g->dw, g->recs, g->threads, &f.docs)))
        return rc;
    f.doc_moves = g->moves, f.n_doc_moves = g->n_moves;
    f.counting = g->grow;
    if (g->grow && (rc = pending_list(&g->pend, &f.pending, &f.n_pending)))
        return rc;
    if ((rc = store_commit(g->s, &f)))
        return rc;
    pending_clear(&g->pend);
    g->sum.seconds_checkpoints += clock_seconds() - t0;
    g->sum.flushes++;
    g->solo_k = 0;
    clear_window(g);
    recount_room(g);
    memset(&g->counts, 0, sizeof g->counts);
    memset(g->df, 0, (size_t)g->n_words * sizeof *g->df);
    memset(g->tf, 0, (size_t)g->n_words * sizeof *g->tf);
    g->dirty = 0;
    g->last_checkpoint = clock_seconds();
    /* only the input in progress needs writing again */
    if (g->cur >= 0) {
        g->recs[0] = g->recs[g->cur];
        g->nrecs = 1, g->cur = 0;
    } else {
        g->nrecs = 0;
    }
    return JSMF_OK;
}

int jsmf_ingest_input(jsmf_ingest *g, const jsmf_store_input *rec)
{
    if (g->nrecs == g->caprecs) {
        uint32_t c = g->caprecs ? 2 * g->caprecs : 8;
        jsmf_store_input *r = realloc(g->recs, c * sizeof *r);
        if (!r)
            return jsmf_error(JSMF_ENOMEM, "out of memory");
        g->recs = r, g->caprecs = c;
    }
    g->recs[g->nrecs] = *rec;
    g->recs[g->nrecs].state = JSMF_INPUT_PARTIAL;
    g->cur = (int)g->nrecs++;
    return JSMF_OK;
}

int jsmf_ingest_input_done(jsmf_ingest *g)
{
    if (g->cur < 0)
        return jsmf_error(JSMF_EINVAL, "ingest: no input in progress");
    g->recs[g->cur].state = JSMF_INPUT_COMPLETE;
    g->cur = -1;
    g->sum.inputs_done++;
    return JSMF_OK;
}

int jsmf_ingest_checkpoint(jsmf_ingest *g)
{
    return checkpoint(g);
}

uint64_t ingest_checkpoints(const jsmf_ingest *g)
{
    return g->sum.flushes;
}

void ingest_totals(const jsmf_ingest *g, jsmf_ingest_summary *out)
{
    *out = g->sum;
}

/* The documents of record `old` (key of `r`) move to (fingerprint, occurrence): those stored
 * by earlier checkpoints in the next commit, those buffered now at once. */
static int add_move(jsmf_ingest *g, const jsmf_store_input *r, uint64_t fingerprint,
                    uint32_t occurrence, uint32_t old)
{
    if (g->n_moves == g->cap_moves) {
        uint32_t c = g->cap_moves ? 2 * g->cap_moves : 4;
        jsmf_store_doc_move *m = realloc(g->moves, c * sizeof *m);
        if (!m)
            return jsmf_error(JSMF_ENOMEM, "out of memory");
        g->moves = m, g->cap_moves = c;
    }
    jsmf_store_doc_move *m = &g->moves[g->n_moves++];
    put_be64(m->from, r->fingerprint), put_be32(m->from + 8, r->occurrence);
    put_be64(m->to, fingerprint), put_be32(m->to + 8, occurrence);
    store_docw_rename(&g->dw, old, (uint32_t)g->cur);
    return JSMF_OK;
}

int ingest_input_done_as(jsmf_ingest *g, uint64_t fingerprint, uint32_t occurrence,
                              uint64_t size, int stored)
{
    if (g->cur < 0)
        return jsmf_error(JSMF_EINVAL, "ingest: no input in progress");
    jsmf_store_input *r = &g->recs[g->cur];
    int rekey = r->fingerprint != fingerprint || r->occurrence != occurrence;
    if (rekey && stored) {
        /* the same commit deletes the record under its old key, then writes the new one */
        jsmf_store_input copy = *r;
        uint32_t old = (uint32_t)g->cur;
        int rc = jsmf_ingest_input(g, &copy); /* appended: the copy becomes the current one */
        if (!rc && g->keep_docs) /* its documents follow it, the stored ones in the commit */
            rc = add_move(g, &copy, fingerprint, occurrence, old);
        if (rc)
            return rc;
        g->recs[g->cur - 1].state = JSMF_INPUT_REMOVE;
        r = &g->recs[g->cur];
    }
    r->fingerprint = fingerprint, r->occurrence = occurrence, r->size = size;
    return jsmf_ingest_input_done(g);
}

int ingest_input_discard(jsmf_ingest *g)
{
    if (g->cur < 0 || g->nrecs != 1)
        return jsmf_error(JSMF_EINVAL, "ingest: discarding an input needs a checkpoint before it");
    int rc = wait_batch(g); /* what it added is discarded with the rest */
    batch_reset(&g->b, g->threads);
    clear_window(g);
    recount_room(g);
    jsmf_store_counts *c = &g->counts; /* all of it the discarded input's */
    g->sum.docs -= c->docs, g->sum.docs_dropped -= c->docs_dropped;
    g->sum.tokens -= c->tokens, g->sum.tokens_dropped -= c->tokens_dropped;
    g->sum.oov_tokens -= c->oov_tokens;
    memset(&g->counts, 0, sizeof g->counts);
    memset(g->df, 0, (size_t)g->n_words * sizeof *g->df);
    memset(g->tf, 0, (size_t)g->n_words * sizeof *g->tf);
    pending_clear(&g->pend);
    g->dirty = 0;
    g->nrecs = 0, g->cur = -1;
    return rc;
}

/* Sum repeats and sort: uniq/ucnt get the document's distinct ids in increasing order. */
static uint32_t normalise(jsmf_ingest *g, const uint32_t *ids, const uint32_t *counts,
                          uint32_t n, uint64_t *total)
{
    uint32_t k = 0;
    uint64_t tot = 0;
    if (++g->docno == 0) { /* stamps wrapped: forget them */
        memset(g->stamp, 0, (size_t)g->n_words * sizeof *g->stamp);
        g->docno = 1;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t id = ids[i], c = counts ? counts[i] : 1;
        if (g->stamp[id] != g->docno) {
            g->stamp[id] = g->docno;
            g->cnt[id] = 0;
            g->uniq[k++] = id;
        }
        g->cnt[id] += c;
        tot += c;
    }
    sort_ids(g->uniq, k, g->ucnt, g->n_words - 1); /* ucnt is free until filled below */
    for (uint32_t i = 0; i < k; i++)
        g->ucnt[i] = g->cnt[g->uniq[i]];
    *total = tot;
    return k;
}

/* q = 2^90 / (n (n - 1)) of a document of n tokens, with the bits every accumulator uses. */
static double doc_q(uint64_t len)
{
    return accum_doc_q(len);
}

/* A contributing document's words outside the vocabulary, but the rule's stopwords. */
static int count_oov(jsmf_ingest *g)
{
    if (++g->oov_stamp == 0) { /* stamps wrapped: no slot may hold the new one */
        for (uint32_t i = 0; i < g->pend.cap; i++)
            g->pend.slots[i].stamp = 0;
        g->oov_stamp = 1;
    }
    for (uint32_t i = 0; i < g->oov_n; i++) {
        if (g->stopmap && jsmf_wordmap_find(g->stopmap, g->oov_w[i], g->oov_len[i]) != UINT32_MAX)
            continue;
        if (g->oov_len[i] > STORE_PENDING_WORD_MAX)
            continue;
        int rc = pending_add(&g->pend, g->oov_w[i], g->oov_len[i], g->oov_cnt[i], g->oov_stamp);
        if (rc)
            return rc;
    }
    return JSMF_OK;
}

/* A contributing document's counters and word statistics, and the document itself in a store
 * that holds them (its position: its index in the input, the record's resume point before it). */
static int count_doc(jsmf_ingest *g, jsmf_store_input *r, uint32_t k, uint64_t len)
{
    if (g->keep_docs) {
        int rc = store_docw_add(&g->dw, (uint32_t)g->cur, r->next_doc, g->uniq, g->ucnt, k);
        if (rc)
            return rc;
    }
    for (uint32_t i = 0; i < k; i++)
        g->df[g->uniq[i]]++, g->tf[g->uniq[i]] += g->ucnt[i];
    g->counts.docs++, g->counts.tokens += len;
    r->docs++, r->tokens += len;
    g->sum.docs++, g->sum.tokens += len;
    g->sum.pairs += (uint64_t)k * (k + 1) / 2;
    return JSMF_OK;
}

/* The document buffer's way (g->ds): a checkpoint when it is full or the window is old; a
 * document larger than the whole buffer goes alone, as with the tables. */
static int keep_doc(jsmf_ingest *g, uint32_t k, uint64_t len, int *oversize)
{
    int rc = JSMF_OK;
    int old = g->every > 0 && clock_seconds() - g->last_checkpoint > g->every;
    if ((old || !docsum_fits(g->ds, k)) && docsum_docs(g->ds) && (rc = checkpoint(g)))
        return rc;
    double q = doc_q(len);
    if (k > docsum_limit(g->ds))
        *oversize = 1, g->solo_k = k, g->solo_q = q;
    else if ((rc = docsum_add(g->ds, g->uniq, g->ucnt, k, q)))
        return rc;
    if ((rc = count_doc(g, &g->recs[g->cur], k, len)))
        return rc;
    return g->grow ? count_oov(g) : JSMF_OK;
}

void jsmf_ingest_doc_words(jsmf_ingest *g, const char *const *words, const uint32_t *len,
                           const uint32_t *count, uint32_t n)
{
    g->oov_w = words, g->oov_len = len, g->oov_cnt = count, g->oov_n = n;
}

/* Room in the table of words outside the vocabulary for the next document's, else a
 * checkpoint first (the table is part of it). */
static int oov_room(jsmf_ingest *g)
{
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < g->oov_n; i++)
        bytes += g->oov_len[i];
    if (pending_fits(&g->pend, g->oov_n, bytes))
        return JSMF_OK;
    return checkpoint(g);
}

static int ingest_doc(jsmf_ingest *g, const uint32_t *ids, const uint32_t *counts, uint32_t n,
                      uint64_t oov, uint64_t next_offset, uint64_t next_line, uint64_t next_doc);

/* Room in the document buffer for a document of k words, else a checkpoint first; in a store
 * without rows the time rule of the other buffers too. 0, or an error. */
static int docs_room(jsmf_ingest *g, uint32_t k)
{
    if (!store_docw_docs(&g->dw))
        return JSMF_OK;
    int old = g->docs_only && g->every > 0 && clock_seconds() - g->last_checkpoint > g->every;
    if (old || store_docw_bytes(&g->dw) + store_docw_doc_bytes(k) > g->dw_room)
        return checkpoint(g);
    return JSMF_OK;
}

int jsmf_ingest_doc(jsmf_ingest *g, const uint32_t *ids, const uint32_t *counts, uint32_t n,
                    uint64_t oov, uint64_t next_offset, uint64_t next_line, uint64_t next_doc)
{
    if (!g->grow)
        g->oov_n = 0;
    int rc = ingest_doc(g, ids, counts, n, oov, next_offset, next_line, next_doc);
    g->oov_n = 0; /* the words were this document's only */
    return rc;
}

static int ingest_doc(jsmf_ingest *g, const uint32_t *ids, const uint32_t *counts, uint32_t n,
                      uint64_t oov, uint64_t next_offset, uint64_t next_line, uint64_t next_doc)
{
    if (g->cur < 0)
        return jsmf_error(JSMF_EINVAL, "ingest: document outside an input");
    int rc0 = g->oov_n ? oov_room(g) : JSMF_OK;
    if (rc0)
        return rc0;
    jsmf_store_input *r = &g->recs[g->cur];
    for (uint32_t i = 0; i < n; i++)
        if (ids[i] >= g->n_words)
            return jsmf_error(JSMF_EFORMAT, "%s: document %llu: word id %u out of range (the "
                              "store's vocabulary has %u words)", r->path,
                              (unsigned long long)r->next_doc, ids[i], g->n_words);
    uint64_t len;
    uint32_t k = normalise(g, ids, counts, n, &len);
    int T = g->threads, oversize = 0;
    if (len < g->min_len) {
        g->counts.docs_dropped++, g->counts.tokens_dropped += len;
        r->docs_dropped++, r->tokens_dropped += len;
        g->sum.docs_dropped++, g->sum.tokens_dropped += len;
    } else if (g->keep_docs && (rc0 = docs_room(g, k))) {
        return rc0;
    } else if (g->docs_only) {
        r = &g->recs[g->cur]; /* a checkpoint moves the current record to the front */
        int rc = count_doc(g, r, k, len);
        if (rc || (g->grow && (rc = count_oov(g))))
            return rc;
    } else if (g->ds) {
        r = &g->recs[g->cur];
        int rc = keep_doc(g, k, len, &oversize);
        if (rc)
            return rc;
        r = &g->recs[g->cur];
    } else {
        r = &g->recs[g->cur];
        accum_doc_pairs(g->acc, g->uniq, k, g->add);
        /* a long run in a big budget still checkpoints now and then */
        int over = g->every > 0 && clock_seconds() - g->last_checkpoint > g->every;
        for (int t = 0; t < T; t++)
            over |= g->b.pairs[t] + g->add[t] > g->room[t];
        if (over) {
            int rc = run_batch(g);
            if (rc)
                return rc;
            over = clock_seconds() - g->last_checkpoint > g->every && g->every > 0;
            for (int t = 0; t < T; t++)
                over |= g->add[t] > g->room[t];
            if (over && (rc = checkpoint(g)))
                return rc;
            r = &g->recs[g->cur]; /* a checkpoint moves the current record to the front */
            /* a document with more pairs than the tables hold is checkpointed alone, its rows
             * generated from its counts (solo_rows) */
            for (int t = 0; t < T; t++)
                oversize |= g->add[t] > accum_limit(g->acc);
        }
        double q = doc_q(len);
        int rc;
        if (oversize) {
            g->solo_k = k, g->solo_q = q;
        } else { /* into the batch the accumulator adds next */
            if ((rc = batch_reserve(&g->b, T, g->b.ndocs + 1, g->b.nids + k)))
                return rc;
            doc_batch *b = &g->b;
            memcpy(b->ids + b->nids, g->uniq, (size_t)k * sizeof *b->ids);
            memcpy(b->counts + b->nids, g->ucnt, (size_t)k * sizeof *b->counts);
            b->q[b->ndocs] = q;
            b->nids += k;
            b->start[++b->ndocs] = b->nids;
            for (int t = 0; t < T; t++)
                b->pairs[t] += g->add[t];
        }
        if ((rc = count_doc(g, r, k, len)) || (g->grow && (rc = count_oov(g))))
            return rc;
        if ((g->b.ndocs >= g->batch_docs || g->b.nids >= g->batch_ids) && (rc = start_batch(g)))
            return rc;
    }
    g->counts.oov_tokens += oov, r->oov_tokens += oov, g->sum.oov_tokens += oov;
    r->next_offset = next_offset, r->next_line = next_line, r->next_doc = next_doc;
    g->dirty = 1;
    if (oversize) {
        g->sum.oversize_docs++;
        return checkpoint(g);
    }
    return JSMF_OK;
}

int ingest_empty_docs(jsmf_ingest *g, uint64_t n, uint64_t next_offset, uint64_t next_line,
                           uint64_t next_doc)
{
    if (g->cur < 0)
        return jsmf_error(JSMF_EINVAL, "ingest: document outside an input");
    jsmf_store_input *r = &g->recs[g->cur];
    g->counts.docs_dropped += n, r->docs_dropped += n, g->sum.docs_dropped += n; /* min_len >= 2 */
    r->next_offset = next_offset, r->next_line = next_line, r->next_doc = next_doc;
    g->dirty = 1;
    return JSMF_OK;
}

int jsmf_ingest_finish(jsmf_ingest *g, jsmf_ingest_summary *sum)
{
    g->finishing = 1;
    int rc = checkpoint(g);
    g->sum.seconds = clock_seconds() - g->t0;
    if (sum)
        *sum = g->sum;
    jsmf_ingest_free(g);
    return rc;
}

void jsmf_ingest_opts_init(jsmf_ingest_opts *o)
{
    *o = (jsmf_ingest_opts){0};
}
