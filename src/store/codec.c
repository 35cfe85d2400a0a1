/* codec.c — the byte encodings of formats/store.md: C chunks (plain, packed, palette) and input
 * records. */
#include "codec.h"

#include <stdlib.h>

#include "flush.h"

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

/* ---- input records ---------------------------------------------------------------------- */

/* state, format (u32), then size, next_offset, next_line, next_doc, docs, docs_dropped, tokens,
 * tokens_dropped, oov_tokens (u64), then the path bytes. */
#define INPUT_FIXED (8 + 9 * 8)

void input_key(unsigned char key[12], uint64_t fingerprint, uint32_t occurrence)
{
    put_be64(key, fingerprint);
    put_be32(key + 8, occurrence);
}

size_t input_encode(unsigned char *buf, const jsmf_store_input *in)
{
    uint32_t u32[2] = {in->state, in->format};
    uint64_t u64[9] = {in->size,   in->next_offset,  in->next_line, in->next_doc,
                       in->docs,   in->docs_dropped, in->tokens,    in->tokens_dropped,
                       in->oov_tokens};
    memcpy(buf, u32, 8);
    memcpy(buf + 8, u64, sizeof u64);
    size_t pl = strnlen(in->path, sizeof in->path - 1);
    memcpy(buf + INPUT_FIXED, in->path, pl);
    return INPUT_FIXED + pl;
}

void input_decode(const MDB_val *key, const MDB_val *val, jsmf_store_input *out)
{
    memset(out, 0, sizeof *out);
    out->fingerprint = get_be64(key->mv_data);
    out->occurrence = get_be32((const unsigned char *)key->mv_data + 8);
    if (val->mv_size < INPUT_FIXED)
        return;
    const char *p = val->mv_data;
    out->state = get_u32(p), out->format = get_u32(p + 4);
    uint64_t *f[9] = {&out->size,   &out->next_offset,  &out->next_line, &out->next_doc,
                      &out->docs,   &out->docs_dropped, &out->tokens,    &out->tokens_dropped,
                      &out->oov_tokens};
    for (int i = 0; i < 9; i++)
        *f[i] = get_u64(p + 8 + 8 * i);
    size_t pl = val->mv_size - INPUT_FIXED;
    if (pl > sizeof out->path - 1)
        pl = sizeof out->path - 1;
    memcpy(out->path, p + INPUT_FIXED, pl);
}

size_t store_row_bytes(uint32_t n)
{
    return row_record_bytes(n);
}

size_t store_encode_row(unsigned char *buf, uint32_t row, const uint32_t *cols,
                             const jsmf_sum *vals, uint32_t n)
{
    size_t len = 0;
    for (uint32_t a = 0, m; a < n; a += m) {
        unsigned char *p = buf + len;
        put_be32(p, row), put_be32(p + 4, cols[a]);
        uint16_t vlen = (uint16_t)chunk_encode(p + 10, cols + a, vals + a, n - a, &m);
        memcpy(p + 8, &vlen, 2);
        len += 10 + (size_t)vlen;
    }
    return len;
}
