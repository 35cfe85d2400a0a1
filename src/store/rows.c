/* rows.c — reading the rows of C: row streams over one database (the legacy C or one run),
 * decoded with codec.c, their row-by-row sum, and the snapshot matrix source built on it. */
#include "rows.h"
#include "docrows.h"
#include "docs.h"
#include "growth.h"

#include "codec.h"
#include "registry.h"
#include "core/clock.h"
#include "core/grow.h"
#include "core/hash.h"

#include <inttypes.h>
#include <stdlib.h>

#include "flush.h"

/* ---- one stream: the rows of one database in key order ----------------------------------- */

static int stream_error(row_stream *m, int rc)
{
    return store_lmdb_error(m->s, rc, "reading C");
}

/* Entries a chunk says it holds (any kind), for sizing the buffers before decoding it. */
static uint32_t chunk_count(const MDB_val *v)
{
    uint16_t c = 0;
    if (v->mv_size >= 2)
        memcpy(&c, v->mv_data, 2);
    return (c & CHUNK_PALETTE) == CHUNK_PALETTE ? c & ~CHUNK_PALETTE
           : c & CHUNK_PACKED                   ? c & ~CHUNK_PACKED
                                                : c;
}

/* Room for `n` entries in the stream's row: streams grow with the rows they meet, so a reader
 * of many runs holds about the rows, not N-wide buffers per run. */
static int stream_room(row_stream *m, uint64_t n)
{
    if (n <= m->cap)
        return JSMF_OK;
    uint64_t cap = grow_capacity(m->cap, n, 1024);
    if (cap > (uint64_t)m->s->n_words + 1) /* a row never holds more than the words */
        cap = (uint64_t)m->s->n_words + 1 > n ? (uint64_t)m->s->n_words + 1 : n;
    if (grow_array(&m->cols, cap, sizeof *m->cols) || grow_array(&m->vals, cap, sizeof *m->vals))
        return jsmf_error(JSMF_ENOMEM, "out of memory for a row of C");
    m->cap = (uint32_t)cap;
    return JSMF_OK;
}

/* The stream's cursor gave `rc` (not 0): its end, where a stream read from its first chunk
 * must have met every chunk its database counts (a damaged page hides some without failing a
 * checksum), or an error. */
static int stream_end(row_stream *m, int rc)
{
    if (rc != MDB_NOTFOUND)
        return stream_error(m, rc);
    m->eof = 1;
    return m->whole ? store_scan_end(m->s, m->cur, m->seen, rc, "reading C") : JSMF_OK;
}

/* Load the row at the cursor (all its chunks) and advance past it. */
static int stream_load_docs(row_stream *m)
{
    uint32_t row, n;
    const uint32_t *cols;
    const jsmf_sum *vals;
    int rc = docrows_next(m->dr, &row, &cols, &vals, &n);
    if (rc < 0 || rc > 1)
        return rc;
    if (rc == 0) {
        m->eof = 1;
        return JSMF_OK;
    }
    if ((rc = stream_room(m, n)))
        return rc;
    m->row = row, m->n = n;
    memcpy(m->cols, cols, (size_t)n * sizeof *cols);
    if (!m->cols_only)
        memcpy(m->vals, vals, (size_t)n * sizeof *vals);
    return JSMF_OK;
}

static int stream_load(row_stream *m)
{
    m->n = 0, m->stale = 0;
    if (m->eof)
        return JSMF_OK;
    if (m->dr)
        return stream_load_docs(m);
    if (m->k.mv_size != 8)
        return jsmf_error(JSMF_ESTORE, "%s: corrupt key in C", m->s->path);
    m->row = get_be32(m->k.mv_data);
    int rc = 0;
    while (rc == 0 && get_be32(m->k.mv_data) == m->row) {
        uint32_t want = chunk_count(&m->v);
        if (want > m->s->n_words - m->n)
            want = m->s->n_words - m->n; /* corrupt: chunk_decode says so */
        if ((rc = stream_room(m, (uint64_t)m->n + want)))
            return rc;
        int64_t cnt = m->row < m->s->n_words
                          ? row_chunk_decode(&m->v, m->cols, m->cols_only ? NULL : m->vals, m->n,
                                             want, m->s->n_words)
                          : -1;
        if (cnt < 0)
            return jsmf_error(JSMF_ESTORE, "%s: corrupt row %u of C", m->s->path, m->row);
        m->n += (uint32_t)cnt;
        m->seen++;
        store_mapped_read(m->s, m->v.mv_size);
        rc = store_cursor_get(m->s, m->cur, &m->k, &m->v, MDB_NEXT);
    }
    return rc ? stream_end(m, rc) : JSMF_OK;
}

static int stream_seek(row_stream *m, uint32_t row, int force)
{
    if (!force && m->n && !m->stale && m->row >= row)
        return JSMF_OK;
    if (m->dr) {
        m->eof = 0;
        docrows_seek(m->dr, row);
        return stream_load(m);
    }
    if (!force && !m->eof && (m->n || m->stale) && get_be32(m->k.mv_data) >= row)
        return stream_load(m); /* the cursor is at the next row already: no search */
    unsigned char kb[8];
    put_be32(kb, row), put_be32(kb + 4, 0);
    m->k = (MDB_val){8, kb};
    m->whole = row == 0, m->seen = 0;
    int rc = store_cursor_get(m->s, m->cur, &m->k, &m->v, MDB_SET_RANGE);
    m->eof = 0;
    if (rc && (rc = stream_end(m, rc)))
        return rc;
    return stream_load(m);
}

/* ---- the reader: streams summed row by row ------------------------------------------------ */

int reader_init(row_reader *r, uint32_t n_words)
{
    memset(r, 0, sizeof *r);
    r->n_words = n_words;
    r->cols = malloc(((size_t)n_words + 1) * sizeof *r->cols);
    r->vals = malloc(((size_t)n_words + 1) * sizeof *r->vals);
    if (!r->cols || !r->vals) {
        reader_free(r);
        return jsmf_error(JSMF_ENOMEM, "out of memory for row buffers");
    }
    return JSMF_OK;
}

/* The reader's next stream slot, zeroed and tied to the store (not counted until it opens). */
static int next_stream(row_reader *r, jsmf_store *s, row_stream **out)
{
    if (r->k == r->cap) {
        uint32_t cap = r->cap ? 2 * r->cap : 4;
        row_stream *ns = realloc(r->st, cap * sizeof *ns);
        if (!ns)
            return jsmf_error(JSMF_ENOMEM, "out of memory");
        r->st = ns, r->cap = cap;
    }
    row_stream *m = &r->st[r->k];
    memset(m, 0, sizeof *m);
    m->s = s;
    m->cols_only = r->cols_only;
    *out = m;
    return JSMF_OK;
}

int reader_add_dbi(row_reader *r, jsmf_store *s, MDB_txn *t, MDB_dbi dbi)
{
    row_stream *m;
    int rc = next_stream(r, s, &m);
    if (rc)
        return rc;
    rc = mdb_cursor_open(t, dbi, &m->cur);
    if (rc)
        return store_lmdb_error(s, rc, "cursor on C");
    r->k++;
    return stream_seek(m, 0, 1);
}

/* The rows of a store holding no rows, computed from its documents. */
static int reader_add_docs(row_reader *r, jsmf_store *s, MDB_txn *t)
{
    row_stream *m;
    int rc = next_stream(r, s, &m);
    if (rc)
        return rc;
    rc = docrows_open(s, t, &m->dr);
    if (rc)
        return rc;
    r->k++;
    /* loaded by the first read, not here: a reader that never asks for rows (the fit through
     * the documents) holds none of their documents (up to half the default budget) */
    m->stale = 1;
    return JSMF_OK;
}

int reader_add_store(row_reader *r, jsmf_store *s, MDB_txn *t)
{
    run_list l;
    int rc = runs_get(s, t, &l);
    if (!rc && !(s->hold & JSMF_HOLD_ROWS))
        rc = reader_add_docs(r, s, t);
    if (!rc)
        rc = reader_add_dbi(r, s, t, s->C);
    for (uint32_t i = 0; i < l.n && !rc; i++) {
        MDB_dbi dbi;
        if (!(rc = run_dbi(s, t, l.r[i].id, 0, &dbi)))
            rc = reader_add_dbi(r, s, t, dbi);
    }
    return rc;
}

int reader_seek(row_reader *r, uint32_t row)
{
    int rc = JSMF_OK;
    for (uint32_t i = 0; i < r->k && !rc; i++)
        rc = stream_seek(&r->st[i], row, 0);
    return rc;
}

int reader_rewind(row_reader *r)
{
    int rc = JSMF_OK;
    for (uint32_t i = 0; i < r->k && !rc; i++)
        rc = stream_seek(&r->st[i], 0, 1);
    return rc;
}

/* out (on entries) += m's row, merged backwards in place: out has room for n_words entries.
 * Without values (a columns-only reader) only the union of the columns is formed. */
static uint32_t add_into(uint32_t *oc, jsmf_sum *ov, uint32_t on, const row_stream *m)
{
    uint32_t total = 0, x = 0, y = 0;
    while (x < on || y < m->n) {
        if (y == m->n || (x < on && oc[x] < m->cols[y]))
            x++;
        else if (x == on || m->cols[y] < oc[x])
            y++;
        else
            x++, y++;
        total++;
    }
    int vals = !m->cols_only;
    int64_t a = (int64_t)on - 1, b = (int64_t)m->n - 1, w = (int64_t)total - 1;
    for (; b >= 0; w--) {
        if (a >= 0 && oc[a] > m->cols[b]) {
            oc[w] = oc[a];
            if (vals)
                ov[w] = ov[a];
            a--;
        } else if (a >= 0 && oc[a] == m->cols[b]) {
            oc[w] = oc[a];
            if (vals)
                ov[w] = ov[a] + m->vals[b];
            a--, b--;
        } else {
            oc[w] = m->cols[b];
            if (vals)
                ov[w] = m->vals[b];
            b--;
        }
    }
    return total;
}

/* Above this many runs holding a row, their parts are added into an N-wide row and gathered
 * in column order (linear in the entries and N/64) instead of merged pairwise (linear in the
 * entries times the runs). */
#define DENSE_MERGE_HITS 3

static int dense_merge(row_reader *r, uint32_t row, uint32_t *out)
{
    uint64_t words = ((uint64_t)r->n_words + 63) / 64;
    if (!r->bits && (!(r->bits = calloc(words, 8)) ||
                     !(r->dense = calloc((size_t)r->n_words, sizeof *r->dense))))
        return jsmf_error(JSMF_ENOMEM, "out of memory for a row of C");
    for (uint32_t i = 0; i < r->k; i++) {
        row_stream *m = &r->st[i];
        if (!m->n || m->row != row)
            continue;
        for (uint32_t x = 0; x < m->n; x++) {
            uint32_t j = m->cols[x];
            r->bits[j >> 6] |= 1ULL << (j & 63);
            if (!m->cols_only)
                r->dense[j] += m->vals[x];
        }
        m->stale = 1;
    }
    uint32_t n = 0;
    for (uint64_t b = 0; b < words; b++) {
        for (uint64_t x = r->bits[b]; x; x &= x - 1) {
            uint32_t j = (uint32_t)(b * 64 + (uint64_t)__builtin_ctzll(x));
            r->cols[n] = j, r->vals[n++] = r->dense[j];
            r->dense[j] = 0;
        }
        r->bits[b] = 0;
    }
    *out = n;
    return JSMF_OK;
}

int reader_next(row_reader *r, uint32_t *row, const uint32_t **cols, const jsmf_sum **vals,
                uint32_t *n)
{
    uint32_t min = UINT32_MAX, at = 0, hits = 0;
    for (uint32_t i = 0; i < r->k; i++) {
        row_stream *m = &r->st[i];
        int rc = m->stale ? stream_load(m) : JSMF_OK;
        if (rc)
            return rc;
        if (!m->n)
            continue;
        if (m->row < min)
            min = m->row, at = i, hits = 1;
        else if (m->row == min)
            hits++;
    }
    if (min == UINT32_MAX)
        return 0;
    *row = min;
    if (hits == 1) { /* the common case: hand out the stream's own buffers */
        row_stream *m = &r->st[at];
        *cols = m->cols, *vals = m->vals, *n = m->n;
        m->stale = 1;
        return 1;
    }
    uint32_t on = 0;
    if (hits > DENSE_MERGE_HITS) {
        int rc = dense_merge(r, min, &on);
        if (rc)
            return rc;
    } else {
        for (uint32_t i = 0; i < r->k; i++) {
            row_stream *m = &r->st[i];
            if (m->n && m->row == min) {
                on = add_into(r->cols, r->vals, on, m);
                m->stale = 1;
            }
        }
    }
    *cols = r->cols, *vals = r->vals, *n = on;
    return 1;
}

void reader_free(row_reader *r)
{
    for (uint32_t i = 0; i < r->k; i++) {
        if (r->st[i].cur)
            mdb_cursor_close(r->st[i].cur);
        docrows_free(r->st[i].dr);
        free(r->st[i].cols), free(r->st[i].vals);
    }
    free(r->st), free(r->cols), free(r->vals), free(r->dense), free(r->bits);
    memset(r, 0, sizeof *r);
}

/* Entries of C (distinct row, column pairs) over the legacy C, the live runs and run `extra`
 * (0: none), read in transaction t: one pass over every run, columns only. */
int store_count_entries(jsmf_store *s, MDB_txn *t, uint32_t extra, uint64_t *out)
{
    row_reader rd;
    int rc = reader_init(&rd, s->n_words);
    if (rc)
        return rc;
    rd.cols_only = 1;
    MDB_dbi dbi;
    rc = reader_add_store(&rd, s, t);
    if (!rc && extra && !(rc = run_dbi(s, t, extra, 0, &dbi)))
        rc = reader_add_dbi(&rd, s, t, dbi);
    uint64_t total = 0;
    uint32_t row, n;
    const uint32_t *cols;
    const jsmf_sum *vals;
    while (!rc && (rc = reader_next(&rd, &row, &cols, &vals, &n)) == 1)
        total += n, rc = JSMF_OK;
    reader_free(&rd);
    *out = total;
    return rc;
}

/* ---- the snapshot source ---------------------------------------------------------------- */

static int source_find_total(jsmf_store *s);

static int source_scan_rows(void *ctx, uint32_t r0, uint32_t r1, jsmf_row_fn fn, void *arg)
{
    jsmf_store *s = ctx;
    if (!s->src_txn)
        return jsmf_error(JSMF_EINVAL, "%s: source was released", s->path);
    uint64_t m;
    int rc = s->src_total_known ? JSMF_OK : source_find_total(s);
    if (!rc)
        rc = store_meta_get_u64(s, s->src_txn, "docs", &m);
    if (!rc)
        rc = reader_rewind(s->src_rd);
    if (!rc && r0)
        rc = reader_seek(s->src_rd, r0);
    double dm = (double)m;
    uint32_t row, n;
    const uint32_t *cols;
    const jsmf_sum *vals;
    while (!rc && (rc = reader_next(s->src_rd, &row, &cols, &vals, &n)) == 1) {
        if (row >= r1)
            return JSMF_OK;
        for (uint32_t i = 0; i < n; i++)
            s->src_vals[i] = sum_to_double(vals[i], store_pair_docs(dm, s->src_adm, row, cols[i]) *
                                                        s->src_total);
        rc = fn(arg, row, cols, s->src_vals, n);
    }
    return rc;
}

static int source_scan(void *ctx, jsmf_row_fn fn, void *arg)
{
    return source_scan_rows(ctx, 0, UINT32_MAX, fn, arg);
}

static int add_row_sum(void *arg, uint32_t row, const uint32_t *cols, const double *vals, uint32_t n)
{
    (void)row, (void)cols;
    double *total = arg;
    for (uint32_t i = 0; i < n; i++)
        *total += vals[i];
    return JSMF_OK;
}

/* A grown store's pairs are divided by different document counts, so its entries no longer
 * sum to 1; every reader (the fit's rectification and anchors, fdm's sampler, export) assumes
 * a joint distribution, and a fit of the unscaled matrix lost its topics on a planted corpus
 * (mean l1 0.16 -> 0.89). One more pass finds the total, in the scan's fixed row order. */
static int source_find_total(jsmf_store *s)
{
    s->src_total = 1.0, s->src_total_known = 1; /* the scan below reads with 1 */
    if (!s->src_adm)
        return JSMF_OK;
    double total = 0;
    int rc = source_scan(s, add_row_sum, &total);
    s->src_total_known = !rc;
    if (!rc && !(total > 0))
        rc = jsmf_error(JSMF_ENUMERIC, "%s: C sums to %g", s->path, total);
    if (!rc)
        s->src_total = total;
    return rc;
}

/* A word admitted at M (by the admission that ends a command, after its last document) can
 * hold no pairs until a later command counts documents: its row of C is zero whatever point it
 * is divided by. Readers take its point as its predecessor's, so no reader divides by
 * M - a_i = 0 and C is the same as without it (formats/store.md, "What C means for a late
 * word"). A point past M is damage. All points 0 again: no admissions at all. */
static int source_settle_admissions(jsmf_store *s)
{
    uint64_t m, *a = s->src_adm;
    if (!a)
        return JSMF_OK;
    int rc = store_meta_get_u64(s, s->src_txn, "docs", &m);
    if (rc)
        return rc;
    int late = 0;
    for (uint32_t i = 0; i < s->n_words; i++) {
        if (a[i] > m)
            return jsmf_error(JSMF_ESTORE, "%s: word %u admitted at %" PRIu64 ", after the %"
                              PRIu64 " documents counted (a damaged store)", s->path, i, a[i], m);
        if (a[i] == m && m)
            a[i] = i ? a[i - 1] : 0;
        late |= a[i] != 0;
    }
    if (!late) {
        free(s->src_adm);
        s->src_adm = NULL;
    }
    return JSMF_OK;
}

/* Bytes of the pages holding C (its live runs and the legacy database): what a scan reads. */
static uint64_t c_bytes(jsmf_store *s, MDB_txn *t)
{
    run_list l;
    MDB_stat st;
    uint64_t bytes = 0;
    if (mdb_stat(t, s->C, &st) == 0)
        bytes += (st.ms_branch_pages + st.ms_leaf_pages + st.ms_overflow_pages) * st.ms_psize;
    if (runs_get(s, t, &l))
        return 0;
    for (uint32_t i = 0; i < l.n; i++) {
        MDB_dbi dbi;
        if (run_dbi(s, t, l.r[i].id, 0, &dbi) || mdb_stat(t, dbi, &st))
            return 0;
        bytes += (st.ms_branch_pages + st.ms_leaf_pages + st.ms_overflow_pages) * st.ms_psize;
    }
    return bytes;
}

int jsmf_store_source(jsmf_store *s, jsmf_source *out)
{
    jsmf_store_source_release(s);
    uint64_t nnz;
    int rc = store_read_begin(s, &s->src_txn);
    if (rc) {
        s->src_txn = NULL;
        return rc;
    }
    s->src_vals = malloc(((size_t)s->n_words + 1) * sizeof *s->src_vals);
    if (!s->src_vals || !(s->src_rd = calloc(1, sizeof *s->src_rd)))
        rc = jsmf_error(JSMF_ENOMEM, "out of memory");
    else if (!(rc = reader_init(s->src_rd, s->n_words)))
        rc = reader_add_store(s->src_rd, s, s->src_txn);
    uint64_t exact = 1;
    int rows = (s->hold & JSMF_HOLD_ROWS) != 0;
    s->src_total_known = 0;
    if (!rc)
        rc = store_admissions_load(s, s->src_txn, &s->src_adm);
    if (!rc)
        rc = source_settle_admissions(s);
    if (!rc)
        rc = store_meta_get_u64(s, s->src_txn, "nnz", &nnz);
    if (!rc)
        rc = store_nnz_exact(s, s->src_txn, &exact);
    if (!rc && !exact && rows) /* an interrupted ingest left an upper bound: count */
        rc = store_count_entries(s, s->src_txn, 0, &nnz);
    if (!rc && !rows && (double)nnz > (double)s->n_words * s->n_words) /* a bound */
        nnz = (uint64_t)s->n_words * s->n_words;
    if (!rc && rows) /* without rows, the first scan of them finds it */
        rc = source_find_total(s);
    if (!rc && (s->hold & JSMF_HOLD_DOCS))
        rc = store_doc_source(s, s->src_adm, &s->src_docs);
    if (rc) {
        jsmf_store_source_release(s);
        return rc;
    }
    out->n = s->n_words;
    out->nnz = nnz;
    out->ctx = s;
    out->scan = source_scan;
    out->scan_rows = source_scan_rows;
    out->docs = (s->hold & JSMF_HOLD_DOCS) ? &s->src_docs : NULL;
    out->bytes = rows ? c_bytes(s, s->src_txn) : store_docs_pages(s, s->src_txn);
    return JSMF_OK;
}

void jsmf_store_source_release(jsmf_store *s)
{
    if (s) {
        free(s->src_vals), free(s->src_adm);
        s->src_vals = NULL, s->src_adm = NULL;
    }
    if (s && s->src_rd) {
        reader_free(s->src_rd);
        free(s->src_rd);
        s->src_rd = NULL;
    }
    if (s && s->src_txn) {
        mdb_txn_abort(s->src_txn);
        s->src_txn = NULL;
    }
}

/* ---- exact sums, for combining stores across processes ------------------------------------ */

/* Rows [r0, r1) as stored sums, or (sums == NULL) the number of entries of each row into
 * count[row]; one read transaction. */
static int scan_range(jsmf_store *s, uint32_t r0, uint32_t r1, int cols_only,
                      jsmf_sum_row_fn fn, void *arg, uint64_t *count)
{
    MDB_txn *t;
    int rc = store_read_begin(s, &t);
    if (rc)
        return rc;
    row_reader rd;
    if ((rc = reader_init(&rd, s->n_words))) {
        mdb_txn_abort(t);
        return rc;
    }
    rd.cols_only = cols_only;
    if (!(rc = reader_add_store(&rd, s, t)) && r0)
        rc = reader_seek(&rd, r0);
    uint32_t row, n;
    const uint32_t *cols;
    const jsmf_sum *vals;
    while (!rc && (rc = reader_next(&rd, &row, &cols, &vals, &n)) == 1) {
        rc = JSMF_OK;
        if (row >= r1)
            break;
        if (count)
            count[row] = n;
        else
            rc = fn(arg, row, cols, vals, n);
    }
    reader_free(&rd);
    mdb_txn_abort(t);
    return rc;
}

int store_scan_sums(jsmf_store *s, uint32_t r0, uint32_t r1, jsmf_sum_row_fn fn, void *arg)
{
    return scan_range(s, r0, r1, 0, fn, arg, NULL);
}

int store_row_entries(jsmf_store *s, uint64_t *count)
{
    memset(count, 0, sizeof *count * s->n_words);
    return scan_range(s, 0, s->n_words, 1, NULL, NULL, count);
}
