/* vocab_build.c — the vocabulary pass: one streaming pass counting document and term frequency
 * per word in an open-addressing string table (memory ~ distinct words), then curation by
 * stopwords, min df, max df fraction and max size (formats/vocab.md). */
#include "jsmf_io.h"
#include "core/grow.h"

#include <inttypes.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/out.h"
#include "core/vocab.h"
#include "core/wordkey.h"
#include "stopwords_en.h"
#include "docs.h"
#include "tokenize.h"
#include "vocab_build.h"

/* One cache line per word: a lookup touches its slot and this line, and the arena only for
 * words longer than the inline key. */
#define KEY_BYTES WORDKEY_BYTES
typedef struct word_entry {
    uint64_t key[KEY_BYTES / 8]; /* the word's first 24 bytes, zero padded */
    uint64_t df, tf;
    uint64_t last_doc;   /* the counted document that last raised df (1-based; 0 = none) */
    uint64_t off;        /* the whole word, NUL-terminated, in the arena */
    uint32_t len;
    uint32_t stop;       /* a stopword (STOP_WORDS, STOP_ITEMS): never counted as such */
} word_entry;

/* A stopword list is matched against words lowercased, as text's tokens are (and as UCI and
 * LDA-C words are matched, unchanged), and against item ids byte for byte: its entry says
 * which. An entry that is a stopword one way may still be counted the other way. */
#define STOP_WORDS 1u
#define STOP_ITEMS 2u

/* A word table with its per-document scratch: one per thread counting text in parallel. */
typedef struct word_table {
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
    uint32_t min_doc_len;
    jsmf_vocab_stats st;
    /* text scratch for raw lines tokenised by this thread */
    char *tbuf;
    const char **toks;
    uint32_t *toklens;
    size_t tbuf_cap, tok_cap;
    /* what this thread met in the current input: lines without a token, tokens dropped as
     * invalid UTF-8, and the first of those in the current batch (line index, byte) */
    uint64_t empty, bad_utf8;
    size_t bad_line;
    uint32_t bad_col;
} word_table;

struct jsmf_vocab_counter {
    jsmf_vocab_opts opts;
    word_table **tabs;   /* tabs[0] holds the result; the others are merged into it at the end */
    int ntabs;
    uint32_t *idmap;     /* UCI / LDA-C: file id -> entry + 1 in tabs[0] (0 = not looked up) */
    size_t idmap_cap;
    char *batch;         /* parallel text: raw lines of a batch, one after another */
    size_t batch_cap;
    uint64_t *line_off;  /* start of line i in batch; line_off[n] = end */
    uint64_t *line_pos;  /* decoded offset of line i of the batch in its input (messages) */
    uint64_t first_line; /* line number of the batch's first line */
    size_t line_cap;
    jsmf_read_stats in;  /* parallel text: what the current input showed (read_stats_warn) */
};

static int table_grow(word_table *c)
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
        uint64_t h = wordkey_hash(e->key, c->arena + e->off, e->len) & (ns - 1);
        while (slot[h])
            h = (h + 1) & (ns - 1);
        slot[h] = s;
    }
    free(c->slot);
    c->slot = slot;
    c->mask = ns - 1;
    return 0;
}

static int64_t insert(word_table *c, const uint64_t k[3], const char *w, size_t len,
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
static inline int64_t lookup_hashed(word_table *c, const uint64_t k[3], const char *w,
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

static inline int64_t lookup(word_table *c, const char *w, size_t len, int padded)
{
    uint64_t k[3];
    wordkey_make(k, w, len, padded);
    return lookup_hashed(c, k, w, len, wordkey_hash(k, w, len));
}

static void table_free(word_table *t)
{
    if (!t)
        return;
    free(t->e);
    free(t->slot);
    free(t->arena);
    free(t->doc);
    free(t->doc_cnt);
    free(t->hv);
    free(t->tbuf);
    free(t->toks);
    free(t->toklens);
    free(t);
}

static word_table *table_new(uint32_t min_doc_len)
{
    word_table *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->mask = 8191;
    t->slot = calloc(t->mask + 1, sizeof *t->slot);
    if (!t->slot) {
        free(t);
        return NULL;
    }
    t->min_doc_len = min_doc_len;
    t->bad_line = SIZE_MAX;
    return t;
}

/* Tables 1..n-1 for parallel counting, with the stopwords of table 0. */
static int ensure_tables(jsmf_vocab_counter *c, int n)
{
    if (n <= c->ntabs)
        return 0;
    word_table **tabs = realloc(c->tabs, (size_t)n * sizeof *tabs);
    if (!tabs)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    c->tabs = tabs;
    const word_table *m = c->tabs[0];
    while (c->ntabs < n) {
        word_table *t = table_new(c->opts.min_doc_len);
        if (!t)
            return jsmf_error(JSMF_ENOMEM, "out of memory");
        c->tabs[c->ntabs++] = t;
        for (uint32_t i = 0; i < m->n; i++) {
            if (!m->e[i].stop)
                continue;
            int64_t idx = lookup(t, m->arena + m->e[i].off, m->e[i].len, 0);
            if (idx < 0)
                return (int)idx;
            t->e[idx].stop = m->e[i].stop;
        }
    }
    return 0;
}

/* A stopword as item ids meet it (as it is) and as words do (ASCII letters lowercased). */
static int add_stopword(word_table *t, const char *word)
{
    size_t len = strlen(word);
    int64_t idx = lookup(t, word, len, 0);
    if (idx < 0)
        return (int)idx;
    t->e[idx].stop |= STOP_ITEMS;
    char buf[256];
    if (len >= sizeof buf)
        return 0; /* longer than any token can be */
    for (size_t k = 0; k < len; k++) {
        unsigned char ch = (unsigned char)word[k];
        buf[k] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
    }
    if ((idx = lookup(t, buf, len, 0)) < 0)
        return (int)idx;
    t->e[idx].stop |= STOP_WORDS;
    return 0;
}

int vocab_counter_new(const jsmf_vocab_opts *opts, jsmf_vocab_counter **out)
{
    *out = NULL;
    jsmf_vocab_opts def = JSMF_VOCAB_OPTS_DEFAULT;
    jsmf_vocab_counter *c = calloc(1, sizeof *c);
    if (c)
        c->tabs = calloc(1, sizeof *c->tabs);
    if (!c || !c->tabs) {
        free(c);
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    }
    c->opts = opts ? *opts : def;
    if (!(c->opts.max_df_frac > 0))
        c->opts.max_df_frac = 0; /* NaN or negative: every counted word is too frequent */
    c->tabs[0] = table_new(c->opts.min_doc_len);
    if (!c->tabs[0]) {
        free(c->tabs);
        free(c);
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    }
    c->ntabs = 1;
    word_table *t = c->tabs[0];
    const jsmf_vocab *sw = c->opts.stopwords;
    c->opts.stopwords = NULL; /* not kept: the caller may free it */
    for (uint32_t i = 0; sw && i < sw->n; i++) {
        int rc = add_stopword(t, sw->words[i]);
        if (rc) {
            vocab_counter_free(c);
            return rc;
        }
    }
    *out = c;
    return JSMF_OK;
}

void vocab_counter_free(jsmf_vocab_counter *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->ntabs; i++)
        table_free(c->tabs[i]);
    free(c->tabs);
    free(c->idmap);
    free(c->batch);
    free(c->line_off);
    free(c->line_pos);
    free(c);
}

static int reserve_doc(word_table *c, size_t n)
{
    if (n <= c->doc_cap)
        return 0;
    size_t nc = grow_capacity(c->doc_cap, n, 1024);
    if (grow_array(&c->doc, nc, sizeof *c->doc) || grow_array(&c->doc_cnt, nc, sizeof *c->doc_cnt) ||
        grow_array(&c->hv, nc, sizeof *c->hv))
        return jsmf_error(JSMF_ENOMEM, "out of memory for a document of %zu words", n);
    c->doc_cap = nc;
    return 0;
}

/* Count the `n` entries in c->doc (with c->doc_cnt when `weighted`) as one document. */
static void count_doc(word_table *c, uint32_t n, int weighted, uint64_t len)
{
    if (len < c->min_doc_len) {
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
 * document overlap instead of following one another. `stop`: which stopwords apply (text's
 * lowercased tokens: STOP_WORDS; item ids: STOP_ITEMS). */
static int add_text_doc(word_table *c, const jsmf_doc *d, uint32_t stop)
{
    int rc = reserve_doc(c, d->ntokens);
    if (rc)
        return rc;
    uint64_t *hv = c->hv;
    uint32_t n = 0;
    for (uint32_t i = 0; i < d->ntokens; i++) {
        uint64_t k[3];
        wordkey_make(k, d->tok[i], d->toklen[i], 1);
        hv[i] = wordkey_hash(k, d->tok[i], d->toklen[i]);
        __builtin_prefetch(&c->slot[hv[i] & c->mask]);
    }
    for (uint32_t i = 0; i < d->ntokens; i++) {
        uint64_t k[3];
        wordkey_make(k, d->tok[i], d->toklen[i], 1);
        int64_t idx = lookup_hashed(c, k, d->tok[i], d->toklen[i], hv[i]);
        if (idx < 0)
            return (int)idx;
        if (!(c->e[idx].stop & stop))
            c->doc[n++] = (uint32_t)idx;
    }
    c->st.tokens_read += d->ntokens;
    count_doc(c, n, 0, n);
    return 0;
}

/* Entry for a file id (UCI / LDA-C) in table 0: the vocabulary's word, else the decimal id. */
static int64_t id_entry(jsmf_vocab_counter *vc, const jsmf_vocab *v, uint32_t id)
{
    if (id >= vc->idmap_cap) {
        size_t nc = vc->idmap_cap ? vc->idmap_cap : 1024;
        while (nc <= id)
            nc *= 2;
        uint32_t *m = realloc(vc->idmap, nc * sizeof *m);
        if (!m)
            return jsmf_error(JSMF_ENOMEM, "out of memory for the id map");
        memset(m + vc->idmap_cap, 0, (nc - vc->idmap_cap) * sizeof *m);
        vc->idmap = m;
        vc->idmap_cap = nc;
    }
    if (vc->idmap[id])
        return vc->idmap[id] - 1;
    char num[16];
    const char *w = num;
    size_t len;
    if (v && id < v->n) {
        w = v->words[id];
        len = strlen(w);
    } else {
        len = (size_t)snprintf(num, sizeof num, "%u", id);
    }
    int64_t idx = lookup(vc->tabs[0], w, len, 0);
    if (idx >= 0)
        vc->idmap[id] = (uint32_t)idx + 1;
    return idx;
}

static int add_ids_doc(jsmf_vocab_counter *vc, const jsmf_doc *d, const jsmf_vocab *v)
{
    word_table *c = vc->tabs[0];
    int rc = reserve_doc(c, d->nids);
    if (rc)
        return rc;
    uint32_t n = 0;
    uint64_t len = 0;
    for (uint32_t i = 0; i < d->nids; i++) {
        int64_t idx = id_entry(vc, v, d->ids[i]);
        if (idx < 0)
            return (int)idx;
        c->st.tokens_read += d->counts[i];
        if (c->e[idx].stop & STOP_WORDS)
            continue;
        c->doc[n] = (uint32_t)idx;
        c->doc_cnt[n] = d->counts[i];
        len += d->counts[i];
        n++;
    }
    count_doc(c, n, 1, len);
    return 0;
}

/* Tokenise one raw line with this table's scratch and count it. */
static int add_raw_line(word_table *t, const jsmf_tokenizer *tok, const char *line, size_t len,
                        size_t index)
{
    size_t ntok = JSMF_TOKENS_MAX(len, tok->min_len);
    if (len + JSMF_TOKEN_PAD > t->tbuf_cap) {
        size_t nc = (len + JSMF_TOKEN_PAD) * 2;
        char *b = realloc(t->tbuf, nc);
        if (!b)
            return jsmf_error(JSMF_ENOMEM, "out of memory for a line of %zu bytes", len);
        t->tbuf = b, t->tbuf_cap = nc;
    }
    if (ntok > t->tok_cap) {
        size_t nc = ntok * 2;
        const char **a = realloc(t->toks, nc * sizeof *a);
        if (a)
            t->toks = a;
        uint32_t *l = a ? realloc(t->toklens, nc * sizeof *l) : NULL;
        if (!l)
            return jsmf_error(JSMF_ENOMEM, "out of memory for a line of %zu bytes", len);
        t->toklens = l, t->tok_cap = nc;
    }
    jsmf_doc d;
    memset(&d, 0, sizeof d);
    jsmf_token_stats ts;
    d.ntokens = tokenize_ex(tok, line, len, t->tbuf, t->toks, t->toklens, &ts);
    t->empty += d.ntokens == 0;
    t->bad_utf8 += ts.bad_utf8;
    if (ts.bad_utf8 && index < t->bad_line)
        t->bad_line = index, t->bad_col = ts.first_bad;
    memset(t->tbuf + len, 0, JSMF_TOKEN_PAD);
    d.tok = t->toks;
    d.toklen = t->toklens;
    t->st.docs_read++;
    return add_text_doc(t, &d, STOP_WORDS);
}

/* Gather what the threads met in a batch into the input's stats (the first invalid UTF-8 is
 * the one of the lowest line, whichever thread counted it). */
static void note_batch(jsmf_vocab_counter *vc)
{
    size_t first = SIZE_MAX;
    uint32_t col = 0;
    for (int k = 0; k < vc->ntabs; k++) {
        word_table *t = vc->tabs[k];
        if (t->bad_line < first)
            first = t->bad_line, col = t->bad_col;
        vc->in.empty_docs += t->empty;
        t->empty = 0, t->bad_line = SIZE_MAX;
        vc->in.bad_utf8 += t->bad_utf8;
        t->bad_utf8 = 0;
    }
    if (first != SIZE_MAX && vc->in.bad_utf8_line == 0) {
        vc->in.bad_utf8_line = vc->first_line + first;
        vc->in.bad_utf8_offset = vc->line_pos[first] + col;
    }
}

/* Count the lines of the current batch on every thread, each into its own table. */
static int count_batch(jsmf_vocab_counter *vc, const jsmf_tokenizer *tok, size_t nlines)
{
    jsmf_error_slot err = {0}; /* the failing worker's message, for the calling thread */
#pragma omp parallel num_threads(vc->ntabs)
    {
        word_table *t = vc->tabs[omp_get_thread_num()];
#pragma omp for schedule(dynamic, 256)
        for (size_t i = 0; i < nlines; i++) {
            if (error_pending(&err))
                continue;
            int e = add_raw_line(t, tok, vc->batch + vc->line_off[i],
                                 (size_t)(vc->line_off[i + 1] - vc->line_off[i]), i);
            if (e)
                error_capture(&err, e);
        }
    }
    note_batch(vc);
    return error_restore(&err);
}

#define PARALLEL_MIN_THREADS 3
#define BATCH_BYTES ((size_t)8 << 20)
#define BATCH_LINES ((size_t)1 << 16)

/* Text on several threads: the reader hands over raw lines, which are copied into a batch and
 * counted in parallel. Counts are sums, so the result does not depend on the partition. */
static int add_text_parallel(jsmf_vocab_counter *vc, jsmf_docs *r, const jsmf_tokenizer *tok,
                             jsmf_step_progress_fn progress, void *arg)
{
    jsmf_doc d;
    int rc = 0, more = 1;
    while (more && !rc) {
        size_t n = 0, used = 0;
        while (n < BATCH_LINES && used < BATCH_BYTES) {
            int got;
            rc = docs_next(r, &d, &got);
            if (rc || !got) {
                more = 0;
                break;
            }
            if (used + d.text_len > vc->batch_cap) {
                size_t nc = (used + d.text_len) * 2 > BATCH_BYTES ? (used + d.text_len) * 2
                                                                   : BATCH_BYTES;
                char *b = realloc(vc->batch, nc);
                if (!b) {
                    rc = jsmf_error(JSMF_ENOMEM, "out of memory for a batch of lines");
                    break;
                }
                vc->batch = b, vc->batch_cap = nc;
            }
            if (n + 2 > vc->line_cap) {
                size_t nc = vc->line_cap ? vc->line_cap * 2 : 4096;
                uint64_t *o = realloc(vc->line_off, nc * sizeof *o);
                if (o)
                    vc->line_off = o;
                uint64_t *q = o ? realloc(vc->line_pos, nc * sizeof *q) : NULL;
                if (!q) {
                    rc = jsmf_error(JSMF_ENOMEM, "out of memory for a batch of lines");
                    break;
                }
                vc->line_pos = q, vc->line_cap = nc;
            }
            memcpy(vc->batch + used, d.text, d.text_len);
            if (n == 0)
                vc->first_line = d.line;
            vc->line_pos[n] = d.offset;
            vc->line_off[n++] = used;
            used += d.text_len;
        }
        if (rc < 0)
            break;
        if (n) {
            vc->line_off[n] = used;
            rc = count_batch(vc, tok, n);
        }
        docs_progress(r, progress, arg);
    }
    return rc < 0 ? rc : 0;
}

static uint64_t counted_docs(const jsmf_vocab_counter *vc)
{
    uint64_t n = 0;
    for (int k = 0; k < vc->ntabs; k++)
        n += vc->tabs[k]->st.docs_counted;
    return n;
}

/* After an input read to its end: what the reader (or, for parallel text, the threads) met,
 * and an input none of whose documents was counted. */
static void warn_input(jsmf_vocab_counter *vc, jsmf_docs *r, uint64_t counted_before,
                       int parallel)
{
    if (!vc->opts.warn)
        return;
    jsmf_read_stats st;
    docs_stats(r, &st);
    if (parallel) {
        st.empty_docs = vc->in.empty_docs;
        st.bad_utf8 = vc->in.bad_utf8;
        st.bad_utf8_line = vc->in.bad_utf8_line;
        st.bad_utf8_offset = vc->in.bad_utf8_offset;
    }
    const char *name = docs_name(r);
    read_stats_warn(name, &st, vc->opts.warn, vc->opts.warn_arg);
    if (st.docs > st.empty_docs && counted_docs(vc) == counted_before) {
        char msg[1200];
        snprintf(msg, sizeof msg, "%s: none of its %" PRIu64 " documents was counted: each has "
                 "fewer than %u tokens besides stopwords (--min-doc-len)", name, st.docs,
                 vc->opts.min_doc_len);
        vc->opts.warn(vc->opts.warn_arg, msg);
    }
}

int vocab_counter_add(jsmf_vocab_counter *vc, const char *path, const jsmf_read_opts *ro,
                           jsmf_step_progress_fn progress, void *arg)
{
    jsmf_read_opts o = JSMF_READ_OPTS_DEFAULT;
    if (ro)
        o = *ro;
    /* Parallel counting copies lines into batches and gives every thread its own table; with
     * two threads the second is better spent decoding zstd (measured on the 2-core build box:
     * 0.19 s CPU one thread vs 0.28 s two, debdesc), so it starts at three. */
    int threads = o.threads > 0 ? o.threads : omp_get_max_threads();
    if (threads < PARALLEL_MIN_THREADS)
        threads = 1;
    o.raw_text = threads > 1;
    o.empty_runs = 1;
    jsmf_docs *r;
    int rc = docs_open(path, &o, &r);
    if (rc)
        return rc;
    const jsmf_vocab *v = docs_vocab(r);
    jsmf_format fmt = docs_format(r);
    int text = fmt == JSMF_FORMAT_TEXT, tokens = io_format_tokens(fmt);
    uint64_t counted = counted_docs(vc);
    if (text && threads > 1) {
        jsmf_tokenizer tok = o.tok;
        if (tok.min_len == 0 && tok.max_len == 0) {
            jsmf_tokenizer def = JSMF_TOKENIZER_DEFAULT;
            tok = def;
        }
        memset(&vc->in, 0, sizeof vc->in);
        rc = ensure_tables(vc, threads);
        if (!rc)
            rc = add_text_parallel(vc, r, &tok, progress, arg);
        if (!rc)
            warn_input(vc, r, counted, 1);
        docs_close(r);
        return rc;
    }
    if (vc->idmap_cap) /* ids are per input: forget the previous input's mapping */
        memset(vc->idmap, 0, vc->idmap_cap * sizeof *vc->idmap);
    word_table *c = vc->tabs[0];
    jsmf_doc d;
    int got;
    while (!(rc = docs_next(r, &d, &got)) && got) {
        c->st.docs_read++;
        if (d.ndocs > 1) { /* empty documents, counted as count_doc would one by one */
            c->st.docs_read += d.ndocs - 1;
            *(c->min_doc_len ? &c->st.docs_short : &c->st.docs_counted) += d.ndocs;
            continue;
        }
        rc = tokens ? add_text_doc(c, &d, text ? STOP_WORDS : STOP_ITEMS)
                    : add_ids_doc(vc, &d, v);
        if (rc)
            break;
        if ((c->st.docs_read & 4095) == 0)
            docs_progress(r, progress, arg);
    }
    if (!rc)
        docs_progress(r, progress, arg);
    if (!rc)
        warn_input(vc, r, counted, 0);
    docs_close(r);
    return rc;
}

/* Add the counts of table `t` into table `m` (same stopwords). */
static int merge_table(word_table *m, const word_table *t)
{
    for (uint32_t i = 0; i < t->n; i++) {
        const word_entry *e = &t->e[i];
        if (e->df == 0) /* never counted: stopwords among them */
            continue;
        int64_t idx = lookup(m, t->arena + e->off, e->len, 0);
        if (idx < 0)
            return (int)idx;
        m->e[idx].df += e->df;
        m->e[idx].tf += e->tf;
    }
    m->st.docs_read += t->st.docs_read;
    m->st.docs_counted += t->st.docs_counted;
    m->st.docs_short += t->st.docs_short;
    m->st.tokens_read += t->st.tokens_read;
    m->st.tokens_counted += t->st.tokens_counted;
    return 0;
}

/* Fold the per-thread tables into tabs[0]. */
static int merge_tables(jsmf_vocab_counter *vc)
{
    while (vc->ntabs > 1) {
        int rc = merge_table(vc->tabs[0], vc->tabs[vc->ntabs - 1]);
        if (rc)
            return rc;
        table_free(vc->tabs[--vc->ntabs]);
    }
    return JSMF_OK;
}

/* ---- counts that travel: processes that each counted part of the inputs ------------------- */

#define PACK_STATS 5

int vocab_counter_pack(jsmf_vocab_counter *vc, unsigned char **out, uint64_t *len)
{
    *out = NULL, *len = 0;
    int rc = merge_tables(vc);
    if (rc)
        return rc;
    const word_table *t = vc->tabs[0];
    uint64_t bytes = PACK_STATS * 8;
    for (uint32_t i = 0; i < t->n; i++)
        if (t->e[i].df)
            bytes += 4 + t->e[i].len + 16;
    unsigned char *b = malloc(bytes), *q = b;
    if (!b)
        return jsmf_error(JSMF_ENOMEM, "out of memory packing the word counts");
    const uint64_t st[PACK_STATS] = {t->st.docs_read, t->st.docs_counted, t->st.docs_short,
                                     t->st.tokens_read, t->st.tokens_counted};
    memcpy(q, st, sizeof st), q += sizeof st;
    for (uint32_t i = 0; i < t->n; i++) {
        const word_entry *e = &t->e[i];
        if (!e->df)
            continue;
        memcpy(q, &e->len, 4), q += 4;
        memcpy(q, t->arena + e->off, e->len), q += e->len;
        memcpy(q, &e->df, 8), memcpy(q + 8, &e->tf, 8), q += 16;
    }
    *out = b, *len = bytes;
    return JSMF_OK;
}

/* 0 when buf is whole packed counts (checked before anything is added). */
static int check_packed(const unsigned char *b, uint64_t len)
{
    if (len < PACK_STATS * 8)
        return jsmf_error(JSMF_EFORMAT, "packed word counts: %llu bytes", (unsigned long long)len);
    for (uint64_t at = PACK_STATS * 8; at < len;) {
        uint32_t n;
        if (at + 4 > len || (memcpy(&n, b + at, 4), at + 4 + (uint64_t)n + 16 > len))
            return jsmf_error(JSMF_EFORMAT, "packed word counts cut at byte %llu",
                              (unsigned long long)at);
        at += 4 + (uint64_t)n + 16;
    }
    return JSMF_OK;
}

int vocab_counter_unpack(jsmf_vocab_counter *vc, const unsigned char *b, uint64_t len)
{
    int rc = check_packed(b, len);
    if (rc || (rc = merge_tables(vc)))
        return rc;
    word_table *m = vc->tabs[0];
    uint64_t st[PACK_STATS], at = sizeof st;
    memcpy(st, b, sizeof st);
    while (at < len) {
        uint32_t n;
        memcpy(&n, b + at, 4);
        int64_t idx = lookup(m, (const char *)b + at + 4, n, 0);
        if (idx < 0)
            return (int)idx;
        uint64_t df, tf;
        memcpy(&df, b + at + 4 + n, 8), memcpy(&tf, b + at + 12 + n, 8);
        m->e[idx].df += df, m->e[idx].tf += tf; /* counted there: no stopword as it was met */
        at += 4 + (uint64_t)n + 16;
    }
    m->st.docs_read += st[0], m->st.docs_counted += st[1], m->st.docs_short += st[2];
    m->st.tokens_read += st[3], m->st.tokens_counted += st[4];
    return JSMF_OK;
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

int vocab_counter_finish(jsmf_vocab_counter *vc, jsmf_vocab **out, jsmf_vocab_stats *stats)
{
    *out = NULL;
    int rc0 = merge_tables(vc);
    if (rc0)
        return rc0;
    word_table *c = vc->tabs[0];
    jsmf_vocab_stats *st = &c->st;
    st->words_seen = st->dropped_min_df = st->dropped_max_df = st->dropped_max_words = 0;
    ranked *keep = malloc(((size_t)c->n + 1) * sizeof *keep);
    if (!keep)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    const jsmf_vocab_opts *opt = &vc->opts;
    double max_df = opt->max_df_frac * (double)st->docs_counted;
    size_t k = 0;
    for (uint32_t i = 0; i < c->n; i++) {
        const word_entry *e = &c->e[i];
        if (e->df == 0) /* never counted: stopwords among them */
            continue;
        st->words_seen++;
        if (e->df < opt->min_df)
            st->dropped_min_df++;
        else if (opt->max_df_frac < 1 && (double)e->df > max_df)
            st->dropped_max_df++;
        else
            keep[k++] = (ranked){e, c->arena + e->off};
    }
    qsort(keep, k, sizeof *keep, by_df_then_word);
    if (opt->max_words && k > opt->max_words) {
        st->dropped_max_words = k - opt->max_words;
        k = opt->max_words;
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

int jsmf_vocab_count(const char *const *inputs, uint32_t n, const jsmf_read_opts *ro,
                     const jsmf_vocab_opts *vo, jsmf_step_progress_fn progress, void *arg,
                     jsmf_vocab **out, jsmf_vocab_stats *st)
{
    *out = NULL;
    jsmf_vocab_counter *c = NULL;
    int rc = vocab_counter_new(vo, &c);
    for (uint32_t i = 0; i < n && !rc; i++)
        rc = vocab_counter_add(c, inputs[i], ro, progress, arg);
    if (!rc)
        rc = vocab_counter_finish(c, out, st);
    vocab_counter_free(c);
    return rc;
}

/* The stopwords of a curation as the rule names them: none, en (the compiled-in list), or
 * list (any other list, written out on "# jsmf-stopwords:" lines). */
static const char *stopwords_name(const jsmf_vocab *sw)
{
    if (!sw || !sw->n)
        return "none";
    jsmf_vocab *en = NULL;
    int same = !stopwords_en(&en) && en->n == sw->n;
    for (uint32_t i = 0; same && i < sw->n; i++)
        same = !strcmp(en->words[i], sw->words[i]);
    jsmf_vocab_free(en);
    return same ? "en" : "list";
}

/* The shortest decimal that reads back as x (0.3, not 0.29999999999999999). */
static void shortest_double(char *buf, size_t n, double x)
{
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, n, "%.*g", p, x);
        if (strtod(buf, NULL) == x)
            return;
    }
}

/* The comment lines that carry the curation rule (formats/vocab.md): a store made with this
 * vocabulary admits new words by it. */
static int rule_lines(const jsmf_vocab_opts *o, char **out)
{
    const char *sw = stopwords_name(o->stopwords);
    size_t cap = 256;
    if (!strcmp(sw, "list"))
        for (uint32_t i = 0; i < o->stopwords->n; i++)
            cap += strlen(o->stopwords->words[i]) + 24;
    char *b = malloc(cap);
    if (!b)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    char frac[32];
    shortest_double(frac, sizeof frac, o->max_df_frac);
    size_t len = (size_t)snprintf(b, cap, "# jsmf-rule: min-df=%" PRIu64 " max-df-frac=%s "
                                  "max-words=%u stopwords=%s\n", o->min_df, frac,
                                  o->max_words, sw);
    for (uint32_t i = 0; !strcmp(sw, "list") && i < o->stopwords->n; i++)
        len += (size_t)snprintf(b + len, cap - len, "%s%s%s", i % 16 ? " " : "# jsmf-stopwords: ",
                                o->stopwords->words[i],
                                i % 16 == 15 || i + 1 == o->stopwords->n ? "\n" : "");
    *out = b;
    return JSMF_OK;
}

int jsmf_vocab_build(const char *const *inputs, uint32_t n, const jsmf_read_opts *ro,
                     const jsmf_vocab_opts *vo, const char *output,
                     jsmf_step_progress_fn progress, void *arg, jsmf_vocab_stats *st)
{
    jsmf_vocab_opts def = JSMF_VOCAB_OPTS_DEFAULT;
    const jsmf_vocab_opts *o = vo ? vo : &def;
    jsmf_vocab *v = NULL;
    memset(st, 0, sizeof *st);
    int rc = jsmf_vocab_count(inputs, n, ro, o, progress, arg, &v, st);
    int to_stdout = !strcmp(output, "-");
    if (!rc && st->words_kept == 0) /* ingest refuses an empty vocabulary: write none */
        rc = jsmf_error(JSMF_EFORMAT, "no words kept: %" PRIu64 " documents read, %" PRIu64
                        " counted, %" PRIu64 " distinct words, %" PRIu64 " below --min-df %" PRIu64
                        ", %" PRIu64 " above --max-df-frac %g; %s%s written", st->docs_read,
                        st->docs_counted, st->words_seen, st->dropped_min_df, o->min_df,
                        st->dropped_max_df, o->max_df_frac, to_stdout ? "nothing" : output,
                        to_stdout ? "" : " not");
    char *rule = NULL;
    if (!rc)
        rc = rule_lines(o, &rule);
    if (!rc)
        rc = vocab_save_commented(output, v, rule);
    free(rule);
    jsmf_vocab_free(v);
    return rc;
}

void jsmf_vocab_stats_write(FILE *f, const char *p, const jsmf_vocab_stats *st)
{
    report_line(f, p, "%" PRIu64 " documents read, %" PRIu64 " counted, %" PRIu64
                     " too short", st->docs_read, st->docs_counted, st->docs_short);
    report_line(f, p, "%" PRIu64 " tokens read, %" PRIu64 " counted", st->tokens_read,
                     st->tokens_counted);
    report_line(f, p, "%" PRIu64 " distinct words, %" PRIu64 " kept", st->words_seen,
                     st->words_kept);
    report_line(f, p, "dropped %" PRIu64 " below min-df, %" PRIu64 " above max-df-frac, %"
                     PRIu64 " beyond max-words", st->dropped_min_df, st->dropped_max_df,
                     st->dropped_max_words);
}

void jsmf_vocab_opts_init(jsmf_vocab_opts *o)
{
    *o = (jsmf_vocab_opts)JSMF_VOCAB_OPTS_DEFAULT;
}
