/* rows.c — the rows of C in LMDB: chunk encoding, adding a row of increments (read-modify-write
 * of the chunks it touches only), and the snapshot matrix source that streams normalised rows. */
#include "store_int.h"

#include <stdlib.h>

/* A chunk value: u16 count, count x u32 column, count x 16-byte sum (all little-endian). */
uint32_t chunk_count(const MDB_val *v)
{
    uint16_t n;
    memcpy(&n, v->mv_data, 2);
    return n;
}

void chunk_decode(const MDB_val *v, uint32_t *cols, jsmf_sum *vals)
{
    uint32_t n = chunk_count(v);
    const char *p = (const char *)v->mv_data + 2;
    memcpy(cols, p, (size_t)n * 4);
    memcpy(vals, p + (size_t)n * 4, (size_t)n * sizeof(jsmf_sum));
}

size_t chunk_encode(unsigned char *buf, const uint32_t *cols, const jsmf_sum *vals, uint32_t n)
{
    uint16_t c = (uint16_t)n;
    memcpy(buf, &c, 2);
    memcpy(buf + 2, cols, (size_t)n * 4);
    memcpy(buf + 2 + (size_t)n * 4, vals, (size_t)n * sizeof(jsmf_sum));
    return 2 + (size_t)n * ENTRY_BYTES;
}

static void chunk_key(unsigned char k[8], uint32_t row, uint32_t col)
{
    put_be32(k, row);
    put_be32(k + 4, col);
}

/* Write entries as chunks of at most CHUNK_SPLIT, each keyed by its first column. */
static int put_pieces(jsmf_store *s, MDB_txn *t, uint32_t row, const uint32_t *cols,
                      const jsmf_sum *vals, uint32_t n)
{
    unsigned char buf[2 + CHUNK_MAX * ENTRY_BYTES], kb[8];
    uint32_t pieces = n <= CHUNK_MAX ? 1 : (n + CHUNK_SPLIT - 1) / CHUNK_SPLIT;
    for (uint32_t p = 0, a = 0; p < pieces; p++) {
        uint32_t b = (uint32_t)((uint64_t)n * (p + 1) / pieces); /* even split */
        chunk_key(kb, row, cols[a]);
        MDB_val k = {8, kb}, v = {chunk_encode(buf, cols + a, vals + a, b - a), buf};
        /* keys beyond the last one are appended: full pages instead of half-split ones */
        unsigned flags = 0;
        if (memcmp(kb, s->last_key, 8) > 0) {
            flags = MDB_APPEND;
            memcpy(s->last_key, kb, 8);
        }
        int rc = mdb_put(t, s->C, &k, &v, flags);
        if (rc)
            return store_lmdb_error(s, rc, "writing C");
        a = b;
    }
    return JSMF_OK;
}

/* Merge sorted increments into the decoded chunk (cols/vals, n entries) into out arrays. */
static uint32_t merge_sorted(const uint32_t *ac, const jsmf_sum *av, uint32_t an,
                             const uint32_t *bc, const jsmf_sum *bv, uint32_t bn, uint32_t *oc,
                             jsmf_sum *ov, uint64_t *added)
{
    uint32_t i = 0, j = 0, o = 0;
    while (i < an || j < bn) {
        if (j == bn || (i < an && ac[i] < bc[j]))
            oc[o] = ac[i], ov[o++] = av[i++];
        else if (i == an || bc[j] < ac[i])
            oc[o] = bc[j], ov[o++] = bv[j++], ++*added;
        else
            oc[o] = ac[i], ov[o++] = av[i++] + bv[j++];
    }
    return o;
}

int rows_begin(jsmf_store *s, MDB_txn *t)
{
    MDB_cursor *cur;
    MDB_val k, v;
    memset(s->last_key, 0, 8);
    int rc = mdb_cursor_open(t, s->C, &cur);
    if (rc)
        return store_lmdb_error(s, rc, "cursor on C");
    rc = mdb_cursor_get(cur, &k, &v, MDB_LAST);
    if (rc == 0 && k.mv_size == 8)
        memcpy(s->last_key, k.mv_data, 8);
    mdb_cursor_close(cur);
    if (rc && rc != MDB_NOTFOUND)
        return store_lmdb_error(s, rc, "reading C");
    return JSMF_OK;
}

int rows_merge_row(jsmf_store *s, MDB_txn *t, uint32_t row, const uint32_t *cols,
                   const jsmf_sum *vals, uint32_t n, uint64_t *new_entries)
{
    if (n == 0)
        return JSMF_OK;
    /* the starts of the row's existing chunks */
    MDB_cursor *cur;
    int rc = mdb_cursor_open(t, s->C, &cur);
    if (rc)
        return store_lmdb_error(s, rc, "cursor on C");
    unsigned char kb[8];
    chunk_key(kb, row, 0);
    MDB_val k = {8, kb}, v;
    uint32_t nstarts = 0, cap = 0, *starts = NULL;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); rc == 0;
         rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        if (get_be32(k.mv_data) != row)
            break;
        if (nstarts == cap) {
            cap = cap ? 2 * cap : 64;
            uint32_t *ns = realloc(starts, cap * sizeof *ns);
            if (!ns) {
                free(starts);
                mdb_cursor_close(cur);
                return jsmf_error(JSMF_ENOMEM, "out of memory");
            }
            starts = ns;
        }
        starts[nstarts++] = get_be32((unsigned char *)k.mv_data + 4);
    }
    mdb_cursor_close(cur);
    if (rc && rc != MDB_NOTFOUND) {
        free(starts);
        return store_lmdb_error(s, rc, "reading C");
    }
    if (nstarts == 0) {
        free(starts);
        *new_entries += n;
        return put_pieces(s, t, row, cols, vals, n);
    }
    /* increments below the first start go to the first chunk; each chunk takes the columns up
     * to the next chunk's start */
    uint32_t pos = 0;
    rc = JSMF_OK;
    for (uint32_t c = 0; c < nstarts && pos < n && !rc; c++) {
        uint32_t end = pos;
        if (c + 1 == nstarts)
            end = n;
        else
            while (end < n && cols[end] < starts[c + 1])
                end++;
        if (end == pos)
            continue;
        chunk_key(kb, row, starts[c]);
        k = (MDB_val){8, kb};
        if ((rc = mdb_get(t, s->C, &k, &v))) {
            rc = store_lmdb_error(s, rc, "reading C chunk");
            break;
        }
        uint32_t have = chunk_count(&v), add = end - pos;
        if ((rc = store_tmp_reserve(s, 2 * ((size_t)have + add))))
            break;
        uint32_t *ac = s->tmp_cols, *oc = s->tmp_cols + have + add;
        jsmf_sum *av = s->tmp_vals, *ov = s->tmp_vals + have + add;
        chunk_decode(&v, ac, av);
        uint32_t m = merge_sorted(ac, av, have, cols + pos, vals + pos, add, oc, ov, new_entries);
        if (oc[0] != starts[c] && (rc = mdb_del(t, s->C, &k, NULL))) {
            rc = store_lmdb_error(s, rc, "deleting C chunk");
            break;
        }
        rc = put_pieces(s, t, row, oc, ov, m);
        pos = end;
    }
    free(starts);
    return rc;
}

/* ---- the snapshot source ---------------------------------------------------------------- */

static int source_scan(void *ctx, jsmf_row_fn fn, void *arg)
{
    jsmf_store *s = ctx;
    if (!s->src_txn)
        return jsmf_error(JSMF_EINVAL, "%s: source was released", s->path);
    uint64_t m;
    int rc = store_meta_get_u64(s, s->src_txn, "docs", &m);
    if (rc)
        return rc;
    if ((rc = store_tmp_reserve(s, (size_t)s->n_words + CHUNK_MAX)))
        return rc;
    MDB_cursor *cur;
    if ((rc = mdb_cursor_open(s->src_txn, s->C, &cur)))
        return store_lmdb_error(s, rc, "cursor on C");
    MDB_val k, v;
    uint32_t row = UINT32_MAX, n = 0;
    double dm = (double)m;
    int r;
    for (r = mdb_cursor_get(cur, &k, &v, MDB_FIRST); r == 0;
         r = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        uint32_t kr = get_be32(k.mv_data), cnt = chunk_count(&v);
        if (kr != row && n) {
            if ((rc = fn(arg, row, s->tmp_cols, s->tmp_dvals, n)))
                break;
            n = 0;
        }
        row = kr;
        if (n + cnt > s->tmp_cap || kr >= s->n_words) {
            rc = jsmf_error(JSMF_ESTORE, "%s: corrupt row %u of C", s->path, kr);
            break;
        }
        chunk_decode(&v, s->tmp_cols + n, s->tmp_vals);
        for (uint32_t i = 0; i < cnt; i++)
            s->tmp_dvals[n + i] = sum_to_double(s->tmp_vals[i], dm);
        n += cnt;
    }
    if (!rc && r != MDB_NOTFOUND && r != 0)
        rc = store_lmdb_error(s, r, "reading C");
    if (!rc && n)
        rc = fn(arg, row, s->tmp_cols, s->tmp_dvals, n);
    mdb_cursor_close(cur);
    return rc;
}

int jsmf_store_source(jsmf_store *s, jsmf_source *out)
{
    jsmf_store_source_release(s);
    int rc = store_read_begin(s, &s->src_txn);
    if (rc) {
        s->src_txn = NULL;
        return rc;
    }
    uint64_t nnz;
    if ((rc = store_meta_get_u64(s, s->src_txn, "nnz", &nnz))) {
        jsmf_store_source_release(s);
        return rc;
    }
    out->n = s->n_words;
    out->nnz = nnz;
    out->ctx = s;
    out->scan = source_scan;
    return JSMF_OK;
}

void jsmf_store_source_release(jsmf_store *s)
{
    if (s && s->src_txn) {
        mdb_txn_abort(s->src_txn);
        s->src_txn = NULL;
    }
}
