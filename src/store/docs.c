/* docs.c — C held by its documents (formats/store.md, "Documents"): a checkpoint window's
 * documents encoded as blocks (LEB128 id gaps and counts, zstd where it pays), written in the
 * checkpoint's transaction; blocks read back in key order; the documents view of a source. */
#include "docs.h"

#include "codec.h"
#include "core/grow.h"

#include <omp.h>
#include <stdlib.h>
#include <zstd.h>

/* A block holds the consecutive documents of one input up to this many raw bytes: large
 * enough for zstd to find the repeats of a vocabulary's frequent ids, small enough to decode
 * in cache. */
#define DOCS_BLOCK_RAW (64u << 10)
/* Compressed blocks are kept only when they save at least an eighth. */
#define DOCS_ZSTD_LEVEL 3
/* The documents view hands out blocks of this many documents, whatever the stored blocks: its
 * block boundaries depend on the documents' sequence only, not on how checkpoints cut it. */
#define DOCS_SCAN_BLOCK 4096

enum { CODEC_RAW = 0, CODEC_ZSTD = 1 };

static inline size_t put_leb(unsigned char *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80)
        p[n++] = (unsigned char)(v | 0x80), v >>= 7;
    p[n++] = (unsigned char)v;
    return n;
}

/* The varint at *p (before end) into *v; 0 when it runs past end or over 64 bits. */
static inline int get_leb(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
        unsigned char b = *(*p)++;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 1;
        }
    }
    return 0;
}

/* ---- writing ------------------------------------------------------------------------------ */

void store_docw_init(store_docw *w)
{
    memset(w, 0, sizeof *w);
}

void store_docw_free(store_docw *w)
{
    free(w->raw), free(w->doc), free(w->keys), free(w->vals), free(w->tmp), free(w->off);
    memset(w, 0, sizeof *w);
}

uint64_t store_docw_doc_bytes(uint32_t k)
{
    /* raw (at most 5 + 2 x 5 bytes an entry), its share of the sealed value and the temporary
     * compression buffer, and the document's entry */
    return 3 * (5 + 10 * (uint64_t)k) + sizeof(docw_doc);
}

uint64_t store_docw_bytes(const store_docw *w)
{
    return 3 * w->raw_len + w->ndocs * sizeof(docw_doc);
}

uint64_t store_docw_docs(const store_docw *w)
{
    return w->ndocs;
}

int store_docw_add(store_docw *w, uint32_t rec, uint64_t pos, const uint32_t *ids,
                   const uint32_t *counts, uint32_t k)
{
    uint64_t need = w->raw_len + 5 + 10 * (uint64_t)k;
    if (need > w->raw_cap) {
        uint64_t c = grow_capacity(w->raw_cap, need, 1u << 16);
        if (grow_array(&w->raw, c, 1))
            return jsmf_error(JSMF_ENOMEM, "out of memory for the documents");
        w->raw_cap = c;
    }
    if (w->ndocs == w->cap_docs) {
        uint64_t c = grow_capacity(w->cap_docs, w->ndocs + 1, 1024);
        if (grow_array(&w->doc, c, sizeof *w->doc))
            return jsmf_error(JSMF_ENOMEM, "out of memory for the documents");
        w->cap_docs = c;
    }
    w->doc[w->ndocs++] = (docw_doc){pos, w->raw_len, rec, k};
    unsigned char *p = w->raw + w->raw_len;
    p += put_leb(p, k);
    for (uint32_t x = 0; x < k; x++)
        p += put_leb(p, x ? ids[x] - ids[x - 1] - 1 : ids[0]);
    for (uint32_t x = 0; x < k; x++)
        p += put_leb(p, counts[x] - 1);
    w->raw_len = (uint64_t)(p - w->raw);
    w->nnz += k;
    w->nnz_bound += (uint64_t)k * k;
    return JSMF_OK;
}

void store_docw_rename(store_docw *w, uint32_t from, uint32_t to)
{
    for (uint64_t m = 0; m < w->ndocs; m++)
        if (w->doc[m].rec == from)
            w->doc[m].rec = to;
}

void store_docw_clear(store_docw *w)
{
    w->raw_len = 0, w->ndocs = 0, w->nnz = 0, w->nnz_bound = 0;
    memset(&w->out, 0, sizeof w->out);
}

static int reserve(void *pp, uint64_t *cap, uint64_t need, size_t size)
{
    if (need <= *cap)
        return JSMF_OK;
    uint64_t c = grow_capacity(*cap, need, 64);
    if (grow_array(pp, c, size))
        return jsmf_error(JSMF_ENOMEM, "out of memory for the documents' blocks");
    *cap = c;
    return JSMF_OK;
}

/* The header of a block's value: codec, documents, entries, and for zstd the raw length. */
static size_t block_header(unsigned char *p, int codec, uint64_t docs, uint64_t nnz,
                           uint64_t raw)
{
    size_t n = 0;
    p[n++] = (unsigned char)codec;
    n += put_leb(p + n, docs);
    n += put_leb(p + n, nnz);
    if (codec == CODEC_ZSTD)
        n += put_leb(p + n, raw);
    return n;
}

int store_docw_seal(store_docw *w, const jsmf_store_input *recs, int threads,
                    const jsmf_store_doc_blocks **out)
{
    /* block boundaries: first document of each block, then one past the last */
    uint64_t nb = 0, *first = NULL, cap = 0;
    int rc = JSMF_OK;
    for (uint64_t m = 0; m < w->ndocs && !rc; m++) {
        int cut = m == 0 || w->doc[m].rec != w->doc[m - 1].rec ||
                  w->doc[m].off - w->doc[first[nb - 1]].off >= DOCS_BLOCK_RAW;
        if (cut && !(rc = reserve(&first, &cap, nb + 2, sizeof *first)))
            first[nb++] = m;
    }
    if (!rc && nb)
        first[nb] = w->ndocs;
    /* each block into its own slot of tmp (bound of its compressed size), in parallel */
    uint64_t slots = 0;
    if (!rc && !(rc = reserve(&w->off, &w->off_cap, nb + 1, sizeof *w->off)) &&
        !(rc = reserve(&w->keys, &w->keys_cap, nb * DOCS_KEY_BYTES + 1, 1))) {
        for (uint64_t b = 0; b < nb; b++) {
            uint64_t r0 = w->doc[first[b]].off;
            uint64_t r1 = first[b + 1] < w->ndocs ? w->doc[first[b + 1]].off : w->raw_len;
            w->off[b] = slots;
            slots += 32 + ZSTD_compressBound(r1 - r0);
        }
        w->off[nb] = slots;
        rc = reserve(&w->tmp, &w->tmp_cap, slots + 1, 1);
    }
    uint64_t *len = rc ? NULL : calloc(nb + 1, sizeof *len);
    if (!rc && !len)
        rc = jsmf_error(JSMF_ENOMEM, "out of memory for the documents' blocks");
    int failed = 0;
    const char *codec = getenv("JSMF_STORE_DOCS_CODEC"); /* "raw": measure what zstd saves */
    int try_zstd = !(codec && !strcmp(codec, "raw"));
    if (!rc) {
#pragma omp parallel num_threads(threads > 0 ? threads : 1) reduction(| : failed)
        {
            ZSTD_CCtx *z = try_zstd ? ZSTD_createCCtx() : NULL;
            failed |= try_zstd && !z;
#pragma omp for schedule(dynamic, 1)
            for (uint64_t b = 0; b < nb; b++) {
                uint64_t a = first[b], e = first[b + 1];
                uint64_t r0 = w->doc[a].off, r1 = e < w->ndocs ? w->doc[e].off : w->raw_len;
                uint64_t nnz = 0;
                for (uint64_t m = a; m < e; m++)
                    nnz += w->doc[m].k;
                unsigned char *slot = w->tmp + w->off[b];
                size_t h = block_header(slot, CODEC_ZSTD, e - a, nnz, r1 - r0), c = 0;
                if (z) {
                    c = ZSTD_compressCCtx(z, slot + h, w->off[b + 1] - w->off[b] - h,
                                          w->raw + r0, r1 - r0, DOCS_ZSTD_LEVEL);
                    failed |= ZSTD_isError(c) != 0;
                }
                if (!z || ZSTD_isError(c) || h + c >= (r1 - r0) - (r1 - r0) / 8) {
                    h = block_header(slot, CODEC_RAW, e - a, nnz, 0);
                    memcpy(slot + h, w->raw + r0, r1 - r0);
                    c = r1 - r0;
                }
                len[b] = h + c;
                unsigned char *key = w->keys + b * DOCS_KEY_BYTES;
                const jsmf_store_input *in = &recs[w->doc[a].rec];
                input_key(key, in->fingerprint, in->occurrence);
                put_be64(key + 12, w->doc[a].pos);
            }
            ZSTD_freeCCtx(z);
        }
        if (failed)
            rc = jsmf_error(JSMF_ENOMEM, "compressing the documents failed");
    }
    /* the values, one after the other */
    uint64_t total = 0;
    for (uint64_t b = 0; !rc && b < nb; b++)
        total += len[b];
    if (!rc && !(rc = reserve(&w->vals, &w->vals_cap, total + 1, 1))) {
        uint64_t at = 0;
        for (uint64_t b = 0; b < nb; b++) {
            memmove(w->vals + at, w->tmp + w->off[b], len[b]);
            w->off[b] = at, at += len[b];
        }
        w->off[nb] = at;
        w->out = (jsmf_store_doc_blocks){(uint32_t)nb, w->keys, w->vals, w->off, w->ndocs,
                                         w->nnz, w->nnz_bound};
        *out = &w->out;
    }
    free(first), free(len);
    return rc;
}

/* Move the blocks of one input key prefix to another (a stdin record completed). */
static int move_prefix(jsmf_store *s, MDB_txn *t, const jsmf_store_doc_move *mv)
{
    MDB_cursor *c;
    int rc = mdb_cursor_open(t, s->docs, &c);
    if (rc)
        return store_lmdb_error(s, rc, "moving documents");
    unsigned char kb[DOCS_KEY_BYTES], nk[DOCS_KEY_BYTES];
    memcpy(kb, mv->from, 12), memset(kb + 12, 0, 8);
    MDB_val k = {DOCS_KEY_BYTES, kb}, v;
    for (rc = store_cursor_get(s, c, &k, &v, MDB_SET_RANGE);
         rc == 0 && k.mv_size == DOCS_KEY_BYTES && !memcmp(k.mv_data, mv->from, 12);
         rc = store_cursor_get(s, c, &k, &v, MDB_SET_RANGE)) {
        memcpy(nk, mv->to, 12), memcpy(nk + 12, (unsigned char *)k.mv_data + 12, 8);
        MDB_val nkv = {DOCS_KEY_BYTES, nk}, copy = v;
        unsigned char *buf = malloc(v.mv_size ? v.mv_size : 1);
        if (!buf) {
            mdb_cursor_close(c);
            return jsmf_error(JSMF_ENOMEM, "out of memory");
        }
        memcpy(buf, v.mv_data, v.mv_size);
        copy.mv_data = buf;
        if (!(rc = mdb_cursor_del(c, 0)))
            rc = store_put(s, t, s->docs, &nkv, &copy, MDB_NOOVERWRITE);
        free(buf);
        if (rc)
            break;
        memcpy(kb, mv->from, 12), memset(kb + 12, 0, 8);
        k = (MDB_val){DOCS_KEY_BYTES, kb};
    }
    mdb_cursor_close(c);
    return rc == MDB_NOTFOUND || rc == 0 ? JSMF_OK : store_lmdb_error(s, rc, "moving documents");
}

int store_docs_commit(jsmf_store *s, MDB_txn *t, const jsmf_store_flush *f)
{
    int rc = JSMF_OK;
    for (uint32_t i = 0; i < f->n_doc_moves && !rc; i++)
        rc = move_prefix(s, t, &f->doc_moves[i]);
    const jsmf_store_doc_blocks *d = f->docs;
    if (rc || !d || !d->n)
        return rc;
    for (uint32_t b = 0; b < d->n && !rc; b++) {
        MDB_val k = {DOCS_KEY_BYTES, (void *)(d->keys + (size_t)b * DOCS_KEY_BYTES)};
        MDB_val v = {d->off[b + 1] - d->off[b], (void *)(d->vals + d->off[b])};
        if ((rc = store_put(s, t, s->docs, &k, &v, MDB_NOOVERWRITE)))
            rc = rc == MDB_KEYEXIST
                     ? jsmf_error(JSMF_ESTORE, "%s: a block of documents is stored twice (input "
                                  "%016llx, document %llu)", s->path,
                                  (unsigned long long)get_be64(k.mv_data),
                                  (unsigned long long)get_be64((unsigned char *)k.mv_data + 12))
                     : store_lmdb_error(s, rc, "writing documents");
    }
    if (!rc)
        rc = store_meta_add_u64(s, t, "doc_nnz", d->nnz);
    if (!rc)
        rc = store_meta_add_u64(s, t, "doc_bytes", d->off[d->n]);
    if (!rc && !(s->hold & JSMF_HOLD_ROWS)) { /* C's entries are bounded, not counted */
        if (!(rc = store_meta_add_u64(s, t, "nnz", d->nnz_bound)))
            rc = store_meta_put_u64(s, t, "nnz_exact", 0);
    }
    return rc;
}

/* ---- reading ------------------------------------------------------------------------------ */

void store_docdec_free(store_docdec *d)
{
    free(d->offs), free(d->ids), free(d->counts), free(d->raw);
    ZSTD_freeDCtx(d->zd);
    memset(d, 0, sizeof *d);
}

static int corrupt(jsmf_store *s, const MDB_val *k, const char *what)
{
    return jsmf_error(JSMF_ESTORE, "%s: corrupt block of documents (input %016llx, document "
                      "%llu): %s", s->path,
                      k->mv_size == DOCS_KEY_BYTES ? (unsigned long long)get_be64(k->mv_data) : 0ull,
                      k->mv_size == DOCS_KEY_BYTES
                          ? (unsigned long long)get_be64((unsigned char *)k->mv_data + 12)
                          : 0ull,
                      what);
}

int store_docdec_block(jsmf_store *s, const MDB_val *k, const MDB_val *v, store_docdec *d)
{
    const unsigned char *p = v->mv_data, *end = p + v->mv_size;
    uint64_t docs, nnz, raw = 0;
    if (k->mv_size != DOCS_KEY_BYTES || v->mv_size < 3)
        return corrupt(s, k, "bad size");
    int codec = *p++;
    if ((codec != CODEC_RAW && codec != CODEC_ZSTD) || !get_leb(&p, end, &docs) ||
        !get_leb(&p, end, &nnz) || (codec == CODEC_ZSTD && !get_leb(&p, end, &raw)) ||
        docs == 0 || docs > UINT32_MAX || nnz < docs || nnz > (uint64_t)s->n_words * docs ||
        (codec == CODEC_RAW && (raw = (uint64_t)(end - p), 0)) || raw > (1ull << 34))
        return corrupt(s, k, "bad header");
    if (reserve(&d->offs, &d->cap_docs, docs + 1, sizeof *d->offs) ||
        reserve(&d->ids, &d->cap_ids, nnz, sizeof *d->ids) ||
        reserve(&d->counts, &d->cap_cnt, nnz, sizeof *d->counts))
        return jsmf_error(JSMF_ENOMEM, "out of memory for a block of documents");
    if (codec == CODEC_ZSTD) {
        if (reserve(&d->raw, &d->raw_cap, raw + 1, 1) || (!d->zd && !(d->zd = ZSTD_createDCtx())))
            return jsmf_error(JSMF_ENOMEM, "out of memory for a block of documents");
        size_t got = ZSTD_decompressDCtx(d->zd, d->raw, raw, p, (size_t)(end - p));
        if (ZSTD_isError(got) || got != raw)
            return corrupt(s, k, "bad compressed data");
        p = d->raw, end = d->raw + raw;
    }
    uint64_t at = 0;
    d->offs[0] = 0;
    for (uint64_t m = 0; m < docs; m++) {
        uint64_t kk, x, prev = 0;
        if (!get_leb(&p, end, &kk) || kk == 0 || kk > nnz - at || kk > s->n_words)
            return corrupt(s, k, "bad document size");
        for (uint64_t e = 0; e < kk; e++) {
            if (!get_leb(&p, end, &x))
                return corrupt(s, k, "truncated");
            uint64_t id = e ? prev + 1 + x : x;
            if (id >= s->n_words || (e && x > UINT32_MAX))
                return corrupt(s, k, "word id out of range");
            d->ids[at + e] = (uint32_t)id, prev = id;
        }
        for (uint64_t e = 0; e < kk; e++) {
            if (!get_leb(&p, end, &x) || x >= UINT32_MAX)
                return corrupt(s, k, "bad count");
            d->counts[at + e] = (uint32_t)x + 1;
        }
        at += kk;
        d->offs[m + 1] = at;
    }
    if (at != nnz || p != end)
        return corrupt(s, k, "sizes disagree");
    d->n_docs = (uint32_t)docs, d->nnz = nnz;
    store_mapped_read(s, v->mv_size);
    return JSMF_OK;
}

typedef struct {
    store_docblock_fn fn;
    void *arg;
} each_block_ctx;

static int decoded_only(void *arg, const MDB_val *k, const MDB_val *v, const store_docdec *d)
{
    (void)k, (void)v;
    each_block_ctx *c = arg;
    return c->fn(c->arg, d);
}

int store_docs_each_block(jsmf_store *s, MDB_txn *t, store_docblock_fn fn, void *arg)
{
    each_block_ctx c = {fn, arg};
    return store_docs_each_stored(s, t, decoded_only, &c);
}

/* Bytes of documents read between two drops of the map's pages from this process. */
#define DOCS_MAPPED_BYTES ((uint64_t)32 << 20)

int store_docs_each_stored(jsmf_store *s, MDB_txn *t, store_docstored_fn fn, void *arg)
{
    if (!s->has_docs_db)
        return JSMF_OK;
    MDB_cursor *c;
    int rc = mdb_cursor_open(t, s->docs, &c);
    if (rc)
        return store_lmdb_error(s, rc, "reading documents");
    store_docdec d = {0};
    MDB_val k, v;
    int r;
    uint64_t read = 0, seen = 0;
    for (r = store_cursor_get(s, c, &k, &v, MDB_FIRST); r == 0 && !rc;
         seen++, r = store_cursor_get(s, c, &k, &v, MDB_NEXT)) {
        if (!(rc = store_docdec_block(s, &k, &v, &d)))
            rc = fn(arg, &k, &v, &d);
        /* a scan of a large store (every product of a fit that streams the documents) would
         * otherwise keep each page it mapped resident: given back as it goes */
        if ((read += k.mv_size + v.mv_size) >= DOCS_MAPPED_BYTES)
            store_drop_mapped(s), read = 0;
    }
    if (!rc)
        rc = store_scan_end(s, c, seen, r, "reading documents");
    mdb_cursor_close(c);
    store_docdec_free(&d);
    return rc;
}

uint64_t store_docs_pages(jsmf_store *s, MDB_txn *t)
{
    MDB_stat st;
    if (!s->has_docs_db || mdb_stat(t, s->docs, &st))
        return 0;
    return (st.ms_branch_pages + st.ms_leaf_pages + st.ms_overflow_pages) * st.ms_psize;
}

/* ---- the documents view ------------------------------------------------------------------- */

/* Stored blocks regrouped into blocks of DOCS_SCAN_BLOCK documents. */
typedef struct scan_ctx {
    jsmf_doc_fn fn;
    void *arg;
    uint64_t next;          /* global index of the next document */
    uint32_t n_docs;        /* documents gathered */
    uint64_t *offs;
    uint32_t *ids, *counts;
    uint64_t cap_ids;
} scan_ctx;

static int scan_emit(scan_ctx *c)
{
    if (!c->n_docs)
        return 0;
    jsmf_doc_block b = {c->next, c->n_docs, c->offs, c->ids, c->counts};
    c->next += c->n_docs;
    c->n_docs = 0;
    return c->fn(c->arg, &b);
}

static int scan_block(void *arg, const store_docdec *d)
{
    scan_ctx *c = arg;
    for (uint32_t m = 0; m < d->n_docs; m++) {
        uint64_t a = d->offs[m], k = d->offs[m + 1] - a, at = c->offs[c->n_docs];
        if (at + k > c->cap_ids) {
            uint64_t cap = grow_capacity(c->cap_ids, at + k, 1u << 16);
            if (grow_array(&c->ids, cap, 4) || grow_array(&c->counts, cap, 4))
                return jsmf_error(JSMF_ENOMEM, "out of memory for a block of documents");
            c->cap_ids = cap;
        }
        memcpy(c->ids + at, d->ids + a, k * 4), memcpy(c->counts + at, d->counts + a, k * 4);
        c->offs[++c->n_docs] = at + k;
        if (c->n_docs == DOCS_SCAN_BLOCK) {
            int rc = scan_emit(c);
            c->offs[0] = 0;
            if (rc)
                return rc;
        }
    }
    return 0;
}

static int doc_scan(void *ctx, jsmf_doc_fn fn, void *arg)
{
    jsmf_store *s = ctx;
    if (!s->src_txn)
        return jsmf_error(JSMF_EINVAL, "%s: source was released", s->path);
    scan_ctx c = {fn, arg, 0, 0, malloc((DOCS_SCAN_BLOCK + 1) * sizeof(uint64_t)), NULL, NULL, 0};
    if (!c.offs)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    c.offs[0] = 0;
    int rc = store_docs_each_block(s, s->src_txn, scan_block, &c);
    if (!rc)
        rc = scan_emit(&c);
    free(c.offs), free(c.ids), free(c.counts);
    return rc;
}

typedef struct mass_ctx {
    const uint64_t *adm;
    uint64_t m;
    double total;
} mass_ctx;

static int add_mass(void *arg, const jsmf_doc_block *b)
{
    mass_ctx *c = arg;
    for (uint32_t d = 0; d < b->n_docs; d++) {
        uint64_t a = b->offs[d];
        c->total += jsmf_doc_mass(b->ids + a, b->counts + a, (uint32_t)(b->offs[d + 1] - a),
                                  c->adm, c->m);
    }
    return 0;
}

int store_doc_source(jsmf_store *s, const uint64_t *adm, jsmf_doc_source *out)
{
    uint64_t m, nnz, tokens;
    int rc = store_meta_get_u64(s, s->src_txn, "docs", &m);
    if (!rc)
        rc = store_meta_get_u64(s, s->src_txn, "doc_nnz", &nnz);
    if (!rc)
        rc = store_meta_get_u64(s, s->src_txn, "tokens", &tokens);
    if (rc)
        return rc;
    *out = (jsmf_doc_source){.n = s->n_words, .n_docs = m, .nnz = nnz, .tokens = tokens,
                             .admit = adm, .total = 1.0, .ctx = s, .scan = doc_scan,
                             .bytes = store_docs_pages(s, s->src_txn)};
    if (!adm)
        return JSMF_OK;
    mass_ctx c = {adm, m, 0};
    if ((rc = doc_scan(s, add_mass, &c)))
        return rc;
    if (!(c.total > 0))
        return jsmf_error(JSMF_ENUMERIC, "%s: the documents' C sums to %g", s->path, c.total);
    out->total = c.total;
    return JSMF_OK;
}
