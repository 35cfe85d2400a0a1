/* rows.c — reading the rows of C: the chunk codec, row streams over one database (the legacy C
 * or one run), their row-by-row sum, and the snapshot matrix source built on it. */
#include "store_int.h"

#include <stdlib.h>

/* ---- the chunk codec (formats/store.md, "C runs") ----------------------------------------- */

static int64_t plain_decode(const MDB_val *v, uint32_t n, uint32_t *cols, jsmf_sum *vals,
                            uint32_t room, uint32_t n_words)
{
    if (n > room || v->mv_size != 2 + (size_t)n * CHUNK_PLAIN_ENTRY)
        return -1;
    const char *p = (const char *)v->mv_data + 2;
    memcpy(cols, p, (size_t)n * 4);
    for (uint32_t i = 0; i < n; i++) /* as a packed chunk's: rows of N are summed by column */
        if (cols[i] >= n_words || (i && cols[i] <= cols[i - 1]))
            return -1;
    if (vals)
        memcpy(vals, p + (size_t)n * 4, (size_t)n * sizeof(jsmf_sum));
    return n;
}

static unsigned varint_put(unsigned char *p, uint32_t x)
{
    unsigned n = 0;
    for (; x >= 0x80; x >>= 7)
        p[n++] = (unsigned char)(x | 0x80);
    p[n++] = (unsigned char)x;
    return n;
}

static unsigned varint_size(uint32_t x)
{
    return x < (1u << 7) ? 1 : x < (1u << 14) ? 2 : x < (1u << 21) ? 3 : x < (1u << 28) ? 4 : 5;
}

/* A sum as (trailing zero bits | sign << 7, byte length L, L bytes of |v| >> tz, little-endian):
 * a sum of a few contributions has the 53 significant bits of a double and many trailing zero
 * bits (formats/store.md, the estimator's fixed point), so it takes 9 bytes instead of 16. */
typedef struct packed_sum {
    unsigned __int128 m;
    unsigned char tz_sign, len;
} packed_sum;

static packed_sum sum_pack(jsmf_sum v)
{
    packed_sum r = {v < 0 ? -(unsigned __int128)v : (unsigned __int128)v, v < 0 ? 0x80 : 0, 0};
    if (!r.m)
        return r;
    uint64_t lo = (uint64_t)r.m, hi = (uint64_t)(r.m >> 64);
    unsigned tz = lo ? (unsigned)__builtin_ctzll(lo) : 64 + (unsigned)__builtin_ctzll(hi);
    r.m >>= tz;
    lo = (uint64_t)r.m, hi = (uint64_t)(r.m >> 64);
    unsigned bits = hi ? 128 - (unsigned)__builtin_clzll(hi) : 64 - (unsigned)__builtin_clzll(lo);
    r.tz_sign |= (unsigned char)tz, r.len = (unsigned char)((bits + 7) / 8);
    return r;
}

/* Entries a packed chunk can hold at most (3 bytes each at least: a column and an empty sum). */
#define PACKED_MAX_ENTRIES ((CHUNK_BYTES_MAX - 2) / 3)
/* ... and a palette chunk (2 bytes each at least: a column and an index, or 1 with one value). */
#define PALETTE_MAX_ENTRIES (CHUNK_BYTES_MAX - 3)
#define PALETTE_MAX 256
#define PALETTE_SLOTS 1024 /* open addressing over the distinct sums, load <= 1/4 */

static unsigned char *put_cols(unsigned char *p, const uint32_t *cols, uint32_t k)
{
    for (uint32_t i = 0; i < k; i++)
        p += varint_put(p, i ? cols[i] - cols[i - 1] - 1 : cols[i]);
    return p;
}

static unsigned char *put_sum(unsigned char *p, const packed_sum *ps)
{
    p[0] = ps->tz_sign, p[1] = ps->len;
    memcpy(p + 2, &ps->m, 16); /* all 16 bytes: a fixed-size store, the slack after the chunk
                                  takes the rest (little-endian host) */
    return p + 2 + ps->len;
}

/* Entries of a packed chunk that fit, and their sums. */
static uint32_t packed_plan(const uint32_t *cols, const jsmf_sum *vals, uint32_t n, packed_sum *ps,
                            size_t *bytes)
{
    size_t size = 2;
    uint32_t k = 0;
    for (uint32_t prev = 0; k < n && k < PACKED_MAX_ENTRIES; k++) {
        uint32_t delta = k ? cols[k] - prev - 1 : cols[k];
        ps[k] = sum_pack(vals[k]);
        size_t e = varint_size(delta) + 2 + ps[k].len;
        if (k && size + e > CHUNK_BYTES_MAX)
            break;
        size += e, prev = cols[k];
    }
    *bytes = size;
    return k;
}

/* A palette chunk's plan: the distinct sums in order of first use, and each entry's index. */
typedef struct palette {
    uint32_t k, distinct;
    size_t bytes;
    packed_sum sum[PALETTE_MAX];
    unsigned char idx[PALETTE_MAX_ENTRIES];
} palette;

static inline uint32_t sum_slot(jsmf_sum v)
{
    uint64_t lo = (uint64_t)v, hi = (uint64_t)((unsigned __int128)v >> 64);
    return (uint32_t)(((lo ^ (hi * 0x9e3779b97f4a7c15ULL)) * 0xff51afd7ed558ccdULL) >> 54);
}

/* Entries of a palette chunk that fit: it stops where the next entry would pass
 * CHUNK_BYTES_MAX (counting the index bytes a second value would add) or bring a 257th sum. */
static void palette_plan(const uint32_t *cols, const jsmf_sum *vals, uint32_t n, palette *pl)
{
    uint16_t slot[PALETTE_SLOTS] = {0}; /* index + 1 of the sum there */
    jsmf_sum seen[PALETTE_MAX];
    size_t cols_b = 0, sums_b = 0;
    uint32_t k = 0, d = 0;
    for (uint32_t prev = 0; k < n && k < PALETTE_MAX_ENTRIES; k++) {
        uint32_t h = sum_slot(vals[k]);
        while (slot[h] && seen[slot[h] - 1] != vals[k])
            h = (h + 1) & (PALETTE_SLOTS - 1);
        size_t add_sum = 0;
        if (!slot[h]) {
            if (d == PALETTE_MAX)
                break;
            pl->sum[d] = sum_pack(vals[k]);
            add_sum = 2 + (size_t)pl->sum[d].len;
        }
        size_t cb = cols_b + varint_size(k ? cols[k] - prev - 1 : cols[k]), sb = sums_b + add_sum;
        uint32_t nd = d + (add_sum ? 1 : 0);
        if (k && 3 + cb + sb + (nd > 1 ? k + 1 : 0) > CHUNK_BYTES_MAX)
            break;
        if (add_sum)
            seen[d] = vals[k], slot[h] = (uint16_t)(++d);
        pl->idx[k] = (unsigned char)(slot[h] - 1);
        cols_b = cb, sums_b = sb, prev = cols[k];
    }
    pl->k = k, pl->distinct = d;
    pl->bytes = 3 + cols_b + sums_b + (d > 1 ? k : 0);
}

size_t chunk_encode(unsigned char *buf, const uint32_t *cols, const jsmf_sum *vals, uint32_t n,
                    uint32_t *taken)
{
    /* the form that holds more entries (fewer bytes each): a palette pays when sums repeat,
     * as those of one document's pairs do (formats/store.md) */
    packed_sum ps[PACKED_MAX_ENTRIES];
    palette pl;
    palette_plan(cols, vals, n, &pl);
    /* the packed form of the palette's entries, from the sizes the palette knows: when they
     * pass a chunk, the packed one holds fewer, and its plan (a sum_pack an entry) is skipped */
    size_t pbytes = 2;
    for (uint32_t i = 0; i < pl.k && pbytes <= CHUNK_BYTES_MAX; i++)
        pbytes += varint_size(i ? cols[i] - cols[i - 1] - 1 : cols[i]) + 2 + pl.sum[pl.idx[i]].len;
    uint32_t k = 0;
    if (pbytes <= CHUNK_BYTES_MAX)
        k = packed_plan(cols, vals, n, ps, &pbytes);
    unsigned char *p;
    if (pl.k > k || (pl.k == k && pl.bytes < pbytes)) {
        uint16_t c = (uint16_t)(pl.k | CHUNK_PALETTE);
        memcpy(buf, &c, 2);
        buf[2] = (unsigned char)(pl.distinct - 1);
        p = put_cols(buf + 3, cols, pl.k); /* columns first, as in a packed chunk */
        for (uint32_t i = 0; i < pl.distinct; i++)
            p = put_sum(p, &pl.sum[i]);
        if (pl.distinct > 1)
            memcpy(p, pl.idx, pl.k), p += pl.k;
        k = pl.k;
    } else {
        uint16_t c = (uint16_t)(k | CHUNK_PACKED);
        memcpy(buf, &c, 2);
        p = put_cols(buf + 2, cols, k);
        for (uint32_t i = 0; i < k; i++)
            p = put_sum(p, &ps[i]);
    }
    *taken = k;
    return (size_t)(p - buf);
}

/* Columns of a packed or palette chunk from p; the position after them, NULL if corrupt. */
static const unsigned char *get_cols(const unsigned char *p, const unsigned char *end, uint32_t n,
                                     uint32_t *cols, uint32_t n_words)
{
    uint64_t col = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (p == end)
            return NULL;
        uint32_t x = *p++;
        if (x & 0x80) { /* a gap of 128 or more: rare in a row of C */
            x &= 0x7f;
            for (unsigned shift = 7;; shift += 7) {
                if (p == end || shift > 28)
                    return NULL;
                x |= (uint32_t)(*p & 0x7f) << shift;
                if (!(*p++ & 0x80))
                    break;
            }
        }
        col = i ? col + x + 1 : x;
        if (col >= n_words)
            return NULL;
        cols[i] = (uint32_t)col;
    }
    return p;
}

/* n sum fields from p into vals; the position after them, NULL if corrupt. */
static const unsigned char *get_sums(const unsigned char *p, const unsigned char *end, uint32_t n,
                                     jsmf_sum *vals)
{
    for (uint32_t i = 0; i < n; i++) {
        if (end - p < 2)
            return NULL;
        unsigned tz = p[0] & 0x7f, len = p[1];
        if (len > 16 || end - p - 2 < len)
            return NULL;
        unsigned __int128 m = 0;
        if (len <= 8 && end - p >= 10) { /* one unaligned load, the bytes past len masked */
            uint64_t x;
            memcpy(&x, p + 2, 8);
            m = len == 8 ? x : x & ((1ULL << (8 * len)) - 1);
        } else {
            memcpy(&m, p + 2, len);
        }
        if (tz && (m >> (128 - tz)))
            return NULL; /* would not fit in 128 bits */
        m <<= tz;
        vals[i] = (jsmf_sum)(p[0] & 0x80 ? 0 - m : m); /* -2^127 included */
        p += 2 + len;
    }
    return p;
}

static int64_t packed_decode(const MDB_val *v, uint32_t n, uint32_t *cols, jsmf_sum *vals,
                             uint32_t room, uint32_t n_words)
{
    if (n > room || n == 0)
        return -1;
    const unsigned char *p = (const unsigned char *)v->mv_data + 2, *end = p + v->mv_size - 2;
    if (!(p = get_cols(p, end, n, cols, n_words)))
        return -1;
    if (!vals)
        return n;
    p = get_sums(p, end, n, vals);
    return p == end ? (int64_t)n : -1;
}

static int64_t palette_decode(const MDB_val *v, uint32_t n, uint32_t *cols, jsmf_sum *vals,
                              uint32_t room, uint32_t n_words)
{
    if (n > room || n == 0 || v->mv_size < 3)
        return -1;
    const unsigned char *p = (const unsigned char *)v->mv_data, *end = p + v->mv_size;
    uint32_t d = (uint32_t)p[2] + 1;
    if (!(p = get_cols(p + 3, end, n, cols, n_words)))
        return -1;
    if (!vals)
        return n;
    jsmf_sum pal[PALETTE_MAX];
    if (!(p = get_sums(p, end, d, pal)))
        return -1;
    if (d == 1) {
        for (uint32_t i = 0; i < n; i++)
            vals[i] = pal[0];
        return p == end ? (int64_t)n : -1;
    }
    if ((size_t)(end - p) != n)
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        if (p[i] >= d)
            return -1;
        vals[i] = pal[p[i]];
    }
    return n;
}

int64_t chunk_decode(const MDB_val *v, uint32_t *cols, jsmf_sum *vals, uint32_t room,
                     uint32_t n_words)
{
    uint16_t c;
    if (v->mv_size < 2)
        return -1;
    memcpy(&c, v->mv_data, 2);
    if ((c & CHUNK_PALETTE) == CHUNK_PALETTE)
        return palette_decode(v, c & ~CHUNK_PALETTE, cols, vals, room, n_words);
    if (c & CHUNK_PACKED)
        return packed_decode(v, c & ~CHUNK_PACKED, cols, vals, room, n_words);
    return plain_decode(v, c, cols, vals, room, n_words);
}

int64_t row_chunk_decode(const MDB_val *v, uint32_t *cols, jsmf_sum *vals, uint32_t have,
                         uint32_t room, uint32_t n_words)
{
    int64_t cnt = chunk_decode(v, cols + have, vals ? vals + have : NULL, room, n_words);
    if (cnt > 0 && have && cols[have] <= cols[have - 1])
        return -1;
    return cnt;
}

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
    uint64_t cap = m->cap ? 2 * (uint64_t)m->cap : 1024;
    while (cap < n)
        cap *= 2;
    if (cap > (uint64_t)m->s->n_words + 1)
        cap = (uint64_t)m->s->n_words + 1 > n ? (uint64_t)m->s->n_words + 1 : n;
    uint32_t *c = realloc(m->cols, cap * sizeof *c);
    if (c)
        m->cols = c;
    jsmf_sum *v = realloc(m->vals, cap * sizeof *v);
    if (v)
        m->vals = v;
    if (!c || !v)
        return jsmf_error(JSMF_ENOMEM, "out of memory for a row of C");
    m->cap = (uint32_t)cap;
    return JSMF_OK;
}

/* Load the row at the cursor (all its chunks) and advance past it. */
static int stream_load(row_stream *m)
{
    m->n = 0, m->stale = 0;
    if (m->eof)
        return JSMF_OK;
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
        store_mapped_read(m->s, m->v.mv_size);
        rc = mdb_cursor_get(m->cur, &m->k, &m->v, MDB_NEXT);
    }
    if (rc == MDB_NOTFOUND)
        m->eof = 1;
    else if (rc)
        return stream_error(m, rc);
    return JSMF_OK;
}

static int stream_seek(row_stream *m, uint32_t row, int force)
{
    if (!force && m->n && !m->stale && m->row >= row)
        return JSMF_OK;
    if (!force && !m->eof && (m->n || m->stale) && get_be32(m->k.mv_data) >= row)
        return stream_load(m); /* the cursor is at the next row already: no search */
    unsigned char kb[8];
    put_be32(kb, row), put_be32(kb + 4, 0);
    m->k = (MDB_val){8, kb};
    int rc = mdb_cursor_get(m->cur, &m->k, &m->v, MDB_SET_RANGE);
    m->eof = rc == MDB_NOTFOUND;
    if (rc && !m->eof)
        return stream_error(m, rc);
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

int reader_add_dbi(row_reader *r, jsmf_store *s, MDB_txn *t, MDB_dbi dbi)
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
    int rc = mdb_cursor_open(t, dbi, &m->cur);
    if (rc)
        return store_lmdb_error(s, rc, "cursor on C");
    r->k++;
    return stream_seek(m, 0, 1);
}

int reader_add_store(row_reader *r, jsmf_store *s, MDB_txn *t)
{
    run_list l;
    int rc = runs_get(s, t, &l);
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
        mdb_cursor_close(r->st[i].cur);
        free(r->st[i].cols), free(r->st[i].vals);
    }
    free(r->st), free(r->cols), free(r->vals), free(r->dense), free(r->bits);
    memset(r, 0, sizeof *r);
}

/* ---- the snapshot source ---------------------------------------------------------------- */

static int source_scan(void *ctx, jsmf_row_fn fn, void *arg)
{
    jsmf_store *s = ctx;
    if (!s->src_txn)
        return jsmf_error(JSMF_EINVAL, "%s: source was released", s->path);
    uint64_t m;
    int rc = store_meta_get_u64(s, s->src_txn, "docs", &m);
    if (!rc)
        rc = reader_rewind(s->src_rd);
    double dm = (double)m;
    uint32_t row, n;
    const uint32_t *cols;
    const jsmf_sum *vals;
    while (!rc && (rc = reader_next(s->src_rd, &row, &cols, &vals, &n)) == 1) {
        for (uint32_t i = 0; i < n; i++)
            s->src_vals[i] = sum_to_double(vals[i], dm);
        rc = fn(arg, row, cols, s->src_vals, n);
    }
    return rc;
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
    if (!rc)
        rc = store_meta_get_u64(s, s->src_txn, "nnz", &nnz);
    if (!rc)
        rc = store_nnz_exact(s, s->src_txn, &exact);
    if (!rc && !exact) /* an interrupted ingest left an upper bound: count */
        rc = store_count_entries(s, s->src_txn, 0, &nnz);
    if (rc) {
        jsmf_store_source_release(s);
        return rc;
    }
    out->n = s->n_words;
    out->nnz = nnz;
    out->ctx = s;
    out->scan = source_scan;
    out->bytes = c_bytes(s, s->src_txn);
    return JSMF_OK;
}

void jsmf_store_source_release(jsmf_store *s)
{
    if (s) {
        free(s->src_vals);
        s->src_vals = NULL;
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

/* ---- a full read, checked ----------------------------------------------------------------- */

typedef struct check_ctx {
    jsmf_store *s;
    jsmf_store_check_result *r;
    int64_t last_row;
} check_ctx;

static int check_row(void *arg, uint32_t row, const uint32_t *cols, const double *vals,
                     uint32_t n)
{
    check_ctx *c = arg;
    if ((int64_t)row <= c->last_row)
        return jsmf_error(JSMF_ESTORE, "%s: row %u of C out of order", c->s->path, row);
    c->last_row = row;
    double part[4] = {0, 0, 0, 0}; /* four chains of additions, not one long dependent one */
    for (uint32_t i = 0; i < n; i++) {
        if (i && cols[i] <= cols[i - 1])
            return jsmf_error(JSMF_ESTORE, "%s: columns out of order in row %u of C",
                              c->s->path, row);
        part[i & 3] += vals[i];
    }
    c->r->sum += (part[0] + part[1]) + (part[2] + part[3]);
    c->r->entries += n;
    return 0;
}

int jsmf_store_check(jsmf_store *s, jsmf_store_check_result *out)
{
    memset(out, 0, sizeof *out);
    jsmf_source src;
    int rc = jsmf_store_source(s, &src);
    if (rc)
        return rc;
    check_ctx c = {s, out, -1};
    out->bytes = src.bytes;
    rc = src.scan(src.ctx, check_row, &c);
    if (!rc && out->entries != src.nnz)
        rc = jsmf_error(JSMF_ESTORE, "%s: C holds %llu entries, the store counts %llu", s->path,
                        (unsigned long long)out->entries, (unsigned long long)src.nnz);
    jsmf_store_source_release(s);
    return rc;
}
