/* vocab_build.c — the vocabulary pass: one streaming pass counting document and term frequency
 * per word in an open-addressing string table (memory ~ distinct words), then curation by
 * stopwords, min df, max df fraction and max size (formats/vocab.md). */
#include "jsmf_io.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One cache line per word: a lookup touches its slot and this line, and the arena only for
 * words longer than the inline key. */
#define KEY_BYTES 24
typedef struct word_entry {
    uint64_t key[KEY_BYTES / 8]; /* the word's first 24 bytes, zero padded */
    uint64_t df, tf;
    uint64_t last_doc;   /* the counted document that last raised df (1-based; 0 = none) */
    uint64_t off;        /* the whole word, NUL-terminated, in the arena */
    uint32_t len;
    uint32_t stop;       /* a stopword: never counted */
} word_entry;

struct jsmf_vocab_counter {
    jsmf_vocab_opts opts;
    word_entry *e;
    uint32_t n, cap;
    uint64_t *slot;      /* (hash >> 32) << 32 | (index + 1); 0 = empty; power-of-two size */
    uint64_t mask;
    char *arena;
    uint64_t arena_len, arena_cap;
    uint32_t *doc;       /* entries of the current document's counted tokens */
    uint32_t *doc_cnt;   /* their counts (UCI / LDA-C) */
    uint64_t *hv;        /* hashes of the current document's tokens */
    size_t doc_cap;
    uint32_t *idmap;     /* UCI / LDA-C: file id -> entry + 1 (0 = not yet looked up) */
    size_t idmap_cap;
    jsmf_vocab_stats st;
};

static inline uint64_t load8(const char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* The first 24 bytes of w, zero padded. `padded`: w may be read 24 bytes past its start. */
static inline void make_key(uint64_t k[3], const char *w, size_t len, int padded)
{
    if (padded) {
        k[0] = load8(w), k[1] = load8(w + 8), k[2] = load8(w + 16);
        size_t keep = len < KEY_BYTES ? len : KEY_BYTES;
        for (size_t i = 0; i < 3; i++) {
            size_t bytes = keep > 8 * i ? keep - 8 * i : 0;
            if (bytes < 8)
                k[i] &= bytes ? ~0ULL >> (64 - 8 * bytes) : 0;
        }
    } else {
        k[0] = k[1] = k[2] = 0;
        memcpy(k, w, len < KEY_BYTES ? len : KEY_BYTES);
    }
}

static inline uint64_t mix(uint64_t h)
{
    h ^= h >> 32;
    h *= 0xD6E8FEB86659FD93ULL;
    h ^= h >> 32;
    return h;
}

/* Hash of the key words, and of the rest for long words. */
static inline uint64_t word_hash(const uint64_t k[3], const char *w, size_t len)
{
    const uint64_t m = 0x9E3779B97F4A7C15ULL;
    uint64_t h = (k[0] ^ (len * m)) * m;
    h = (h ^ (h >> 29) ^ k[1]) * m;
    h = (h ^ (h >> 29) ^ k[2]) * m;
    for (size_t i = KEY_BYTES; i < len; i++)
        h = (h ^ (unsigned char)w[i]) * m;
    return mix(h);
}

static int table_grow(jsmf_vocab_counter *c)
{
    uint64_t ns = (c->mask + 1) * 2;
    uint64_t *slot = calloc(ns, sizeof *slot);
    if (!slot)
        return jsmf_error(JSMF_ENOMEM, "out of memory for the word table (%u words)", c->n);
    for (uint64_t i = 0; i <= c->mask; i++) {
        uint64_t s = c->slot[i];
        if (!s)
            continue;
        const word_entry *e = &c->e[(uint32_t)s - 1];
        uint64_t h = word_hash(e->key, c->arena + e->off, e->len) & (ns - 1);
        while (slot[h])
            h = (h + 1) & (ns - 1);
        slot[h] = s;
    }
    free(c->slot);
    c->slot = slot;
    c->mask = ns - 1;
    return 0;
}

static int64_t insert(jsmf_vocab_counter *c, const uint64_t k[3], const char *w, size_t len,
                      uint64_t hv, uint64_t h)
{
    if (c->n == UINT32_MAX - 1)
        return jsmf_error(JSMF_ENOMEM, "more than 4 billion distinct words");
    if (c->n == c->cap) {
        uint32_t nc = c->cap ? (c->cap > UINT32_MAX / 2 ? UINT32_MAX - 1 : c->cap * 2) : 4096;
        word_entry *ne = realloc(c->e, (size_t)nc * sizeof *ne);
        if (!ne)
            return jsmf_error(JSMF_ENOMEM, "out of memory for the word table (%u words)", c->n);
        c->e = ne;
        c->cap = nc;
    }
    if (c->arena_len + len + 1 > c->arena_cap) {
        uint64_t na = c->arena_cap ? c->arena_cap * 2 : 1 << 16;
        while (na < c->arena_len + len + 1)
            na *= 2;
        char *a = realloc(c->arena, na);
        if (!a)
            return jsmf_error(JSMF_ENOMEM, "out of memory for the word table (%u words)", c->n);
        c->arena = a;
        c->arena_cap = na;
    }
    word_entry *e = &c->e[c->n];
    memset(e, 0, sizeof *e);
    memcpy(e->key, k, sizeof e->key);
    e->off = c->arena_len;
    e->len = (uint32_t)len;
    memcpy(c->arena + c->arena_len, w, len);
    c->arena[c->arena_len + len] = 0;
    c->arena_len += len + 1;
    c->slot[h] = (hv >> 32) << 32 | ++c->n;
    if ((uint64_t)c->n * 2 > c->mask + 1) {
        int rc = table_grow(c);
        if (rc)
            return rc;
    }
    return c->n - 1;
}

/* Entry of a word whose hash is hv, inserted if new. Returns the index or a negative error. */
static inline int64_t lookup_hashed(jsmf_vocab_counter *c, const uint64_t k[3], const char *w,
                                    size_t len, uint64_t hv)
{
    uint64_t tag = hv >> 32, h = hv & c->mask, s;
    while ((s = c->slot[h]) != 0) {
        if (s >> 32 == tag) {
            const word_entry *e = &c->e[(uint32_t)s - 1];
            if (e->len == len && e->key[0] == k[0] && e->key[1] == k[1] && e->key[2] == k[2] &&
                (len <= KEY_BYTES ||
                 !memcmp(c->arena + e->off + KEY_BYTES, w + KEY_BYTES, len - KEY_BYTES)))
                return (uint32_t)s - 1;
        }
        h = (h + 1) & c->mask;
    }
    return insert(c, k, w, len, hv, h);
}

static inline int64_t lookup(jsmf_vocab_counter *c, const char *w, size_t len, int padded)
{
    uint64_t k[3];
    make_key(k, w, len, padded);
    return lookup_hashed(c, k, w, len, word_hash(k, w, len));
}

int jsmf_vocab_counter_new(const jsmf_vocab_opts *opts, jsmf_vocab_counter **out)
{
    *out = NULL;
    jsmf_vocab_opts def = JSMF_VOCAB_OPTS_DEFAULT;
    jsmf_vocab_counter *c = calloc(1, sizeof *c);
    if (!c)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    c->opts = opts ? *opts : def;
    if (!(c->opts.max_df_frac > 0))
        c->opts.max_df_frac = 0; /* NaN or negative: every counted word is too frequent */
    c->mask = 8191;
    c->slot = calloc(c->mask + 1, sizeof *c->slot);
    if (!c->slot) {
        free(c);
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    }
    const jsmf_vocab *sw = c->opts.stopwords;
    c->opts.stopwords = NULL; /* not kept: the caller may free it */
    for (uint32_t i = 0; sw && i < sw->n; i++) {
        char buf[256];
        size_t len = strlen(sw->words[i]);
        if (len >= sizeof buf)
            continue; /* longer than any token can be */
        for (size_t k = 0; k < len; k++) {
            unsigned char ch = (unsigned char)sw->words[i][k];
            buf[k] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
        }
        int64_t idx = lookup(c, buf, len, 0);
        if (idx < 0) {
            jsmf_vocab_counter_free(c);
            return (int)idx;
        }
        c->e[idx].stop = 1;
    }
    *out = c;
    return JSMF_OK;
}

void jsmf_vocab_counter_free(jsmf_vocab_counter *c)
{
    if (!c)
        return;
    free(c->e);
    free(c->slot);
    free(c->arena);
    free(c->doc);
    free(c->doc_cnt);
    free(c->hv);
    free(c->idmap);
    free(c);
}

static int reserve_doc(jsmf_vocab_counter *c, size_t n)
{
    if (n <= c->doc_cap)
        return 0;
    size_t nc = c->doc_cap ? c->doc_cap : 1024;
    while (nc < n)
        nc *= 2;
    uint32_t *d = realloc(c->doc, nc * sizeof *d);
    if (d)
        c->doc = d;
    uint32_t *k = d ? realloc(c->doc_cnt, nc * sizeof *k) : NULL;
    if (k)
        c->doc_cnt = k;
    uint64_t *h = k ? realloc(c->hv, nc * sizeof *h) : NULL;
    if (!h)
        return jsmf_error(JSMF_ENOMEM, "out of memory for a document of %zu words", n);
    c->hv = h;
    c->doc_cap = nc;
    return 0;
}

/* Count the `n` entries in c->doc (with c->doc_cnt when `weighted`) as one document. */
static void count_doc(jsmf_vocab_counter *c, uint32_t n, int weighted, uint64_t len)
{
    if (len < c->opts.min_doc_len) {
        c->st.docs_short++;
        return;
    }
    uint64_t docno = ++c->st.docs_counted;
    c->st.tokens_counted += len;
    for (uint32_t i = 0; i < n; i++) {
        word_entry *e = &c->e[c->doc[i]];
        e->tf += weighted ? c->doc_cnt[i] : 1;
        if (e->last_doc != docno) {
            e->last_doc = docno;
            e->df++;
        }
    }
}

/* Hash every token first and prefetch its slot, then look them up: the slot misses of a
 * document overlap instead of following one another. */
static int add_text_doc(jsmf_vocab_counter *c, const jsmf_doc *d)
{
    int rc = reserve_doc(c, d->ntokens);
    if (rc)
        return rc;
    uint64_t *hv = c->hv;
    uint32_t n = 0;
    for (uint32_t i = 0; i < d->ntokens; i++) {
        uint64_t k[3];
        make_key(k, d->tok[i], d->toklen[i], 1);
        hv[i] = word_hash(k, d->tok[i], d->toklen[i]);
        __builtin_prefetch(&c->slot[hv[i] & c->mask]);
    }
    for (uint32_t i = 0; i < d->ntokens; i++) {
        uint64_t k[3];
        make_key(k, d->tok[i], d->toklen[i], 1);
        int64_t idx = lookup_hashed(c, k, d->tok[i], d->toklen[i], hv[i]);
        if (idx < 0)
            return (int)idx;
        if (!c->e[idx].stop)
            c->doc[n++] = (uint32_t)idx;
    }
    c->st.tokens_read += d->ntokens;
    count_doc(c, n, 0, n);
    return 0;
}

/* Entry for a file id (UCI / LDA-C): the vocabulary's word, else the decimal id. */
static int64_t id_entry(jsmf_vocab_counter *c, const jsmf_vocab *v, uint32_t id)
{
    if (id >= c->idmap_cap) {
        size_t nc = c->idmap_cap ? c->idmap_cap : 1024;
        while (nc <= id)
            nc *= 2;
        uint32_t *m = realloc(c->idmap, nc * sizeof *m);
        if (!m)
            return jsmf_error(JSMF_ENOMEM, "out of memory for the id map");
        memset(m + c->idmap_cap, 0, (nc - c->idmap_cap) * sizeof *m);
        c->idmap = m;
        c->idmap_cap = nc;
    }
    if (c->idmap[id])
        return c->idmap[id] - 1;
    char num[16];
    const char *w = num;
    size_t len;
    if (v && id < v->n) {
        w = v->words[id];
        len = strlen(w);
    } else {
        len = (size_t)snprintf(num, sizeof num, "%u", id);
    }
    int64_t idx = lookup(c, w, len, 0);
    if (idx >= 0)
        c->idmap[id] = (uint32_t)idx + 1;
    return idx;
}

static int add_ids_doc(jsmf_vocab_counter *c, const jsmf_doc *d, const jsmf_vocab *v)
{
    int rc = reserve_doc(c, d->nids);
    if (rc)
        return rc;
    uint32_t n = 0;
    uint64_t len = 0;
    for (uint32_t i = 0; i < d->nids; i++) {
        int64_t idx = id_entry(c, v, d->ids[i]);
        if (idx < 0)
            return (int)idx;
        c->st.tokens_read += d->counts[i];
        if (c->e[idx].stop)
            continue;
        c->doc[n] = (uint32_t)idx;
        c->doc_cnt[n] = d->counts[i];
        len += d->counts[i];
        n++;
    }
    count_doc(c, n, 1, len);
    return 0;
}

int jsmf_vocab_counter_add(jsmf_vocab_counter *c, const char *path, const jsmf_read_opts *ro,
                           jsmf_progress_fn progress, void *arg)
{
    jsmf_docs *r;
    int rc = jsmf_docs_open(path, ro, &r);
    if (rc)
        return rc;
    const jsmf_vocab *v = jsmf_docs_vocab(r);
    int text = jsmf_docs_format(r) == JSMF_FORMAT_TEXT;
    if (c->idmap_cap) /* ids are per input: forget the previous input's mapping */
        memset(c->idmap, 0, c->idmap_cap * sizeof *c->idmap);
    jsmf_doc d;
    uint64_t size = jsmf_docs_size(r);
    while ((rc = jsmf_docs_next(r, &d)) == 1) {
        c->st.docs_read++;
        rc = text ? add_text_doc(c, &d) : add_ids_doc(c, &d, v);
        if (rc)
            break;
        if (progress && (c->st.docs_read & 4095) == 0)
            progress(arg, jsmf_docs_disk_position(r), size);
    }
    if (!rc && progress)
        progress(arg, jsmf_docs_disk_position(r), size);
    jsmf_docs_close(r);
    return rc;
}

typedef struct {
    const word_entry *e;
    const char *word;
} ranked;

static int by_df_then_word(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->e->df != y->e->df)
        return x->e->df > y->e->df ? -1 : 1;
    return strcmp(x->word, y->word);
}

int jsmf_vocab_counter_finish(jsmf_vocab_counter *c, jsmf_vocab **out, jsmf_vocab_stats *stats)
{
    *out = NULL;
    jsmf_vocab_stats *st = &c->st;
    st->words_seen = st->dropped_min_df = st->dropped_max_df = st->dropped_max_words = 0;
    ranked *keep = malloc(((size_t)c->n + 1) * sizeof *keep);
    if (!keep)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    double max_df = c->opts.max_df_frac * (double)st->docs_counted;
    size_t k = 0;
    for (uint32_t i = 0; i < c->n; i++) {
        const word_entry *e = &c->e[i];
        if (e->stop || e->df == 0)
            continue;
        st->words_seen++;
        if (e->df < c->opts.min_df)
            st->dropped_min_df++;
        else if (c->opts.max_df_frac < 1 && (double)e->df > max_df)
            st->dropped_max_df++;
        else
            keep[k++] = (ranked){e, c->arena + e->off};
    }
    qsort(keep, k, sizeof *keep, by_df_then_word);
    if (c->opts.max_words && k > c->opts.max_words) {
        st->dropped_max_words = k - c->opts.max_words;
        k = c->opts.max_words;
    }
    st->words_kept = k;
    jsmf_vocab *v = calloc(1, sizeof *v);
    int rc = JSMF_OK;
    if (!v || !(v->words = calloc(k + 1, sizeof *v->words)) || !(v->df = malloc((k + 1) * 8)) ||
        !(v->tf = malloc((k + 1) * 8))) {
        rc = jsmf_error(JSMF_ENOMEM, "out of memory");
    }
    for (size_t i = 0; !rc && i < k; i++) {
        v->words[i] = strdup(keep[i].word);
        if (!v->words[i]) {
            rc = jsmf_error(JSMF_ENOMEM, "out of memory");
            break;
        }
        v->df[i] = keep[i].e->df;
        v->tf[i] = keep[i].e->tf;
        v->n = (uint32_t)(i + 1);
    }
    free(keep);
    if (rc) {
        jsmf_vocab_free(v);
        return rc;
    }
    if (stats)
        *stats = *st;
    *out = v;
    return JSMF_OK;
}
