/* growth.c — a vocabulary that grows (formats/store.md, "Growth"): the store's rule, the pending
 * table of words not admitted (exact integer counts, added at checkpoints), and the admission
 * that gives the words passing the rule the next ids, in one transaction. */
#include "codec.h"
#include "env.h"
#include "growth.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/hash.h"

#define RULE_META "rule"
#define RULE_STOP_META "rule_stopwords"

/* ---- the rule as text ------------------------------------------------------------------- */

static int parse_uint(const char *v, uint64_t *out)
{
    char *end;
    if (*v < '0' || *v > '9')
        return -1;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || *end)
        return -1;
    *out = x;
    return 0;
}

int jsmf_store_rule_parse(const char *text, const char *where, jsmf_store_rule *out)
{
    jsmf_store_rule r = {.state = JSMF_RULE_GROW, .min_df = 5, .max_df_frac = 0.5, .stopwords = "en"};
    if (out->state == JSMF_RULE_GROW)
        r = *out; /* keys not given keep their values */
    char buf[512];
    if (strlen(text) >= sizeof buf)
        return jsmf_error(JSMF_EINVAL, "%s: rule too long", where);
    snprintf(buf, sizeof buf, "%s", text);
    int items = 0;
    for (char *save = NULL, *tok = strtok_r(buf, " \t", &save); tok;
         tok = strtok_r(NULL, " \t", &save), items++) {
        if (!strcmp(tok, "frozen") || !strcmp(tok, "grow")) {
            r.state = tok[0] == 'f' ? JSMF_RULE_FROZEN : JSMF_RULE_GROW;
            continue;
        }
        char *eq = strchr(tok, '=');
        if (!eq)
            return jsmf_error(JSMF_EINVAL, "%s: rule item '%s' is not KEY=VALUE (keys: min-df, "
                              "max-df-frac, max-words, stopwords; or the word frozen)", where, tok);
        *eq = 0;
        const char *v = eq + 1;
        int bad = 0;
        if (!strcmp(tok, "min-df")) {
            bad = parse_uint(v, &r.min_df) || r.min_df == 0;
        } else if (!strcmp(tok, "max-df-frac")) {
            char *end;
            errno = 0;
            r.max_df_frac = strtod(v, &end);
            bad = errno || *end || !*v || !(r.max_df_frac > 0) || !isfinite(r.max_df_frac);
        } else if (!strcmp(tok, "max-words")) {
            bad = parse_uint(v, &r.max_words) || r.max_words > UINT32_MAX;
        } else if (!strcmp(tok, "stopwords")) {
            bad = strcmp(v, "en") && strcmp(v, "none") && strcmp(v, "list");
            if (!bad)
                snprintf(r.stopwords, sizeof r.stopwords, "%s", v);
        } else {
            return jsmf_error(JSMF_EINVAL, "%s: unknown rule key '%s' (keys: min-df, max-df-frac, "
                              "max-words, stopwords)", where, tok);
        }
        if (bad)
            return jsmf_error(JSMF_EINVAL, "%s: rule %s=%s: expected %s", where, tok, v,
                              !strcmp(tok, "min-df") ? "an integer >= 1"
                              : !strcmp(tok, "max-df-frac") ? "a number > 0"
                              : !strcmp(tok, "max-words") ? "an integer >= 0 (0: no cap)"
                                                          : "en, none or list");
    }
    if (!items)
        return jsmf_error(JSMF_EINVAL, "%s: empty rule", where);
    *out = r;
    return JSMF_OK;
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

void jsmf_store_rule_format(const jsmf_store_rule *r, char *buf, size_t n)
{
    char frac[32];
    shortest_double(frac, sizeof frac, r->max_df_frac);
    if (r->state == JSMF_RULE_NONE)
        snprintf(buf, n, "none");
    else if (r->state == JSMF_RULE_FROZEN)
        snprintf(buf, n, "frozen");
    else
        snprintf(buf, n, "min-df=%" PRIu64 " max-df-frac=%s max-words=%" PRIu64
                 " stopwords=%s", r->min_df, frac, r->max_words, r->stopwords);
}

/* ---- the rule in the store -------------------------------------------------------------- */

static int rule_read(jsmf_store *s, MDB_txn *t, jsmf_store_rule *out)
{
    memset(out, 0, sizeof *out);
    MDB_val k = store_key(RULE_META), v;
    int rc = store_get(s, t, s->meta, &k, &v);
    if (rc == MDB_NOTFOUND)
        return JSMF_OK;
    if (rc)
        return store_lmdb_error(s, rc, "reading the rule");
    char text[512];
    snprintf(text, sizeof text, "%.*s", (int)(v.mv_size < 511 ? v.mv_size : 511),
             (const char *)v.mv_data);
    memset(out, 0, sizeof *out);
    if (jsmf_store_rule_parse(text, s->path, out))
        return jsmf_error(JSMF_ESTORE, "%s: corrupt rule record '%s'", s->path, text);
    return JSMF_OK;
}

int jsmf_store_rule_get(jsmf_store *s, jsmf_store_rule *out)
{
    MDB_txn *t;
    int rc = store_read_begin(s, &t);
    if (rc)
        return rc;
    rc = rule_read(s, t, out);
    mdb_txn_abort(t);
    return rc;
}

/* The stopword list as one value: the words joined by LF. */
static int put_stopwords(jsmf_store *s, MDB_txn *t, const jsmf_vocab *stop)
{
    MDB_val k = store_key(RULE_STOP_META);
    if (!stop) {
        int rc = mdb_del(t, s->meta, &k, NULL);
        return rc && rc != MDB_NOTFOUND ? store_lmdb_error(s, rc, "writing the rule") : JSMF_OK;
    }
    size_t len = 0;
    for (uint32_t i = 0; i < stop->n; i++)
        len += strlen(stop->words[i]) + 1;
    char *buf = malloc(len ? len : 1), *p = buf;
    if (!buf)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < stop->n; i++) {
        size_t l = strlen(stop->words[i]);
        memcpy(p, stop->words[i], l);
        p += l;
        *p++ = '\n';
    }
    MDB_val v = {len, buf};
    int rc = store_put(s, t, s->meta, &k, &v, 0);
    free(buf);
    return rc ? store_lmdb_error(s, rc, "writing the rule") : JSMF_OK;
}

int store_rule_put(jsmf_store *s, MDB_txn *t, const jsmf_store_rule *r, const jsmf_vocab *stop)
{
    char text[256];
    jsmf_store_rule_format(r, text, sizeof text);
    int list = r->state == JSMF_RULE_GROW && !strcmp(r->stopwords, "list");
    if (list && !stop)
        return jsmf_error(JSMF_EINVAL, "%s: a rule with stopwords=list needs its list", s->path);
    MDB_val k = store_key(RULE_META), v = {strlen(text), text};
    int rc;
    if (r->state == JSMF_RULE_NONE) {
        if ((rc = mdb_del(t, s->meta, &k, NULL)) == MDB_NOTFOUND)
            rc = 0;
    } else {
        rc = store_put(s, t, s->meta, &k, &v, 0);
    }
    if (rc)
        return store_lmdb_error(s, rc, "writing the rule");
    return r->state != JSMF_RULE_FROZEN ? put_stopwords(s, t, list ? stop : NULL) : JSMF_OK;
}

int jsmf_store_rule_set(jsmf_store *s, const jsmf_store_rule *r, const jsmf_vocab *stop)
{
    if (!s->writable)
        return jsmf_error(JSMF_EINVAL, "%s: store opened read-only", s->path);
    for (;;) {
        MDB_txn *t;
        int rc = store_write_begin(s, &t);
        if (rc)
            return rc;
        rc = store_rule_put(s, t, r, stop);
        if (!rc && (rc = mdb_txn_commit(t)))
            rc = store_commit_error(s, rc);
        else if (rc)
            mdb_txn_abort(t);
        if (rc && s->map_full) {
            if ((rc = store_grow_map(s)))
                return rc;
            continue;
        }
        return rc;
    }
}

int jsmf_store_rule_stopwords_get(jsmf_store *s, jsmf_vocab **out)
{
    *out = NULL;
    MDB_txn *t;
    int rc = store_read_begin(s, &t);
    if (rc)
        return rc;
    MDB_val k = store_key(RULE_STOP_META), v;
    rc = store_get(s, t, s->meta, &k, &v);
    if (rc == MDB_NOTFOUND) {
        mdb_txn_abort(t);
        return JSMF_OK;
    }
    if (rc) {
        mdb_txn_abort(t);
        return store_lmdb_error(s, rc, "reading the rule's stopwords");
    }
    jsmf_vocab *w = calloc(1, sizeof *w);
    const char *p = v.mv_data, *end = p + v.mv_size;
    uint32_t n = 0;
    for (const char *q = p; q < end; q++)
        n += *q == '\n';
    if (w && !(w->words = calloc(n ? n : 1, sizeof *w->words)))
        free(w), w = NULL;
    for (uint32_t i = 0; w && i < n; i++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t l = (size_t)(nl - p);
        if (!(w->words[i] = malloc(l + 1))) {
            jsmf_vocab_free(w), w = NULL;
            break;
        }
        memcpy(w->words[i], p, l);
        w->words[i][l] = 0;
        w->n = i + 1;
        p = nl + 1;
    }
    mdb_txn_abort(t);
    if (!w)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    *out = w;
    return JSMF_OK;
}

/* ---- pending words ---------------------------------------------------------------------- */

int store_pending_add(jsmf_store *s, MDB_txn *t, const jsmf_pending_word *w, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (w[i].len == 0 || w[i].len > STORE_PENDING_WORD_MAX)
            continue;
        MDB_val k = {w[i].len, (void *)w[i].word}, v;
        uint64_t cur[2] = {0, 0};
        int rc = store_get(s, t, s->pending, &k, &v);
        if (rc == 0 && v.mv_size == 16)
            memcpy(cur, v.mv_data, 16);
        else if (rc && rc != MDB_NOTFOUND)
            return store_lmdb_error(s, rc, "reading pending words");
        cur[0] += w[i].df, cur[1] += w[i].tf;
        v = (MDB_val){16, cur};
        if ((rc = store_put(s, t, s->pending, &k, &v, 0)))
            return store_lmdb_error(s, rc, "writing pending words");
    }
    return JSMF_OK;
}

int store_pending_each(jsmf_store *s, int (*fn)(void *arg, const char *w, uint32_t len,
                                                uint64_t df, uint64_t tf), void *arg)
{
    if (!s->has_growth_dbs)
        return JSMF_OK;
    MDB_txn *t;
    MDB_cursor *c;
    int rc = store_read_begin(s, &t);
    if (rc)
        return rc;
    if ((rc = mdb_cursor_open(t, s->pending, &c))) {
        mdb_txn_abort(t);
        return store_lmdb_error(s, rc, "reading pending words");
    }
    MDB_val k, v;
    int g;
    uint64_t seen = 0;
    for (g = store_cursor_get(s, c, &k, &v, MDB_FIRST); g == 0 && !rc;
         seen++, g = store_cursor_get(s, c, &k, &v, MDB_NEXT))
        rc = v.mv_size == 16 ? fn(arg, k.mv_data, (uint32_t)k.mv_size, get_u64(v.mv_data),
                                  get_u64((char *)v.mv_data + 8))
                             : jsmf_error(JSMF_ESTORE, "%s: corrupt pending word record", s->path);
    if (!rc)
        rc = store_scan_end(s, c, seen, g, "reading pending words");
    mdb_cursor_close(c);
    mdb_txn_abort(t);
    return rc;
}

/* ---- admission points ------------------------------------------------------------------- */

int store_admissions_load(jsmf_store *s, MDB_txn *t, uint64_t **out)
{
    *out = NULL;
    if (!s->has_growth_dbs)
        return JSMF_OK;
    MDB_stat st;
    int rc = mdb_stat(t, s->admitted, &st);
    if (rc)
        return store_lmdb_error(s, rc, "reading admissions");
    if (st.ms_entries == 0)
        return JSMF_OK;
    uint64_t *a = calloc(s->n_words ? s->n_words : 1, sizeof *a);
    MDB_cursor *c;
    if (!a)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    if ((rc = mdb_cursor_open(t, s->admitted, &c))) {
        free(a);
        return store_lmdb_error(s, rc, "reading admissions");
    }
    MDB_val k, v;
    int r;
    uint64_t seen = 0;
    for (r = store_cursor_get(s, c, &k, &v, MDB_FIRST); r == 0;
         seen++, r = store_cursor_get(s, c, &k, &v, MDB_NEXT)) {
        uint32_t id = k.mv_size == 4 ? get_be32(k.mv_data) : UINT32_MAX;
        if (id >= s->n_words || v.mv_size != 8) {
            rc = jsmf_error(JSMF_ESTORE, "%s: corrupt admission record", s->path);
            break;
        }
        a[id] = get_u64(v.mv_data);
    }
    if (!rc)
        rc = store_scan_end(s, c, seen, r, "reading admissions");
    mdb_cursor_close(c);
    if (rc) {
        free(a);
        return rc;
    }
    *out = a;
    return JSMF_OK;
}

int jsmf_store_admissions_get(jsmf_store *s, uint64_t **out)
{
    *out = NULL;
    MDB_txn *t = NULL;
    int rc = store_read_begin(s, &t);
    uint64_t *a = NULL;
    if (!rc) {
        rc = store_admissions_load(s, t, &a);
        mdb_txn_abort(t);
    }
    if (rc)
        return rc;
    if (!a && !(a = calloc(s->n_words ? s->n_words : 1, sizeof *a)))
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    *out = a;
    return JSMF_OK;
}

int jsmf_store_growth_get(jsmf_store *s, jsmf_store_growth *out)
{
    memset(out, 0, sizeof *out);
    MDB_txn *t;
    int rc = store_read_begin(s, &t);
    if (rc)
        return rc;
    if (!(rc = rule_read(s, t, &out->rule)))
        rc = store_meta_get_u64(s, t, "grow_docs", &out->grow_docs);
    uint64_t h = 14695981039346656037ull;
    MDB_stat st;
    if (!rc && s->has_growth_dbs && !(rc = mdb_stat(t, s->admitted, &st)))
        out->admitted_late = (uint32_t)st.ms_entries;
    MDB_cursor *c;
    if (!rc && s->has_growth_dbs && !(rc = mdb_cursor_open(t, s->pending, &c))) {
        MDB_val k, v;
        int r;
        for (r = store_cursor_get(s, c, &k, &v, MDB_FIRST); r == 0;
             r = store_cursor_get(s, c, &k, &v, MDB_NEXT)) {
            out->pending++;
            h = hash_fnv1a(h, &k.mv_size, sizeof k.mv_size);
            h = hash_fnv1a(h, k.mv_data, k.mv_size);
            h = hash_fnv1a(h, v.mv_data, v.mv_size);
        }
        rc = store_scan_end(s, c, out->pending, r, "reading growth");
        mdb_cursor_close(c);
    }
    if (rc > 0)
        rc = store_lmdb_error(s, rc, "reading growth");
    mdb_txn_abort(t);
    out->pending_digest = h;
    out->first_words = s->n_words - out->admitted_late;
    return rc;
}

/* ---- admission -------------------------------------------------------------------------- */

typedef struct candidate {
    char *word;
    uint32_t len;
    uint64_t df, tf;   /* what the rule judges: stored counts plus a pre-pass's */
    uint64_t sdf, stf; /* the stored (pending) counts: the word statistics it starts with */
} candidate;

/* Bytes as LMDB orders keys: memcmp, a prefix first. */
static int bytes_cmp(const char *a, uint32_t la, const char *b, uint32_t lb)
{
    int c = memcmp(a, b, la < lb ? la : lb);
    return c ? c : (la > lb) - (la < lb);
}

/* df descending, then the bytes as LMDB orders keys. */
static int candidate_cmp(const void *a, const void *b)
{
    const candidate *x = a, *y = b;
    if (x->df != y->df)
        return x->df > y->df ? -1 : 1;
    return bytes_cmp(x->word, x->len, y->word, y->len);
}

static void candidates_free(candidate *c, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        free(c[i].word);
    free(c);
}

/* The pre-pass count of a word (the list is sorted by bytes), NULL when it has none. */
static const jsmf_pending_word *ahead_find(const store_ahead *x, const char *w, uint32_t len)
{
    uint32_t lo = 0, hi = x ? x->n_words : 0;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int c = bytes_cmp(x->words[mid].word, x->words[mid].len, w, len);
        if (!c)
            return &x->words[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

typedef struct collector {
    const jsmf_store_rule *r;
    const jsmf_wordmap *stop;
    double max_df;
    candidate *a;
    uint32_t n, cap;
} collector;

/* Keep a word when its counts pass the rule (min df, max df fraction, not a stopword). */
static int consider(collector *k, const char *w, uint32_t len, uint64_t df, uint64_t tf,
                    uint64_t sdf, uint64_t stf)
{
    if (df < k->r->min_df || (k->r->max_df_frac < 1 && (double)df > k->max_df))
        return JSMF_OK;
    if (k->stop && jsmf_wordmap_find(k->stop, w, len) != UINT32_MAX)
        return JSMF_OK;
    if (k->n == k->cap) {
        uint32_t cap = k->cap ? 2 * k->cap : 64;
        candidate *na = realloc(k->a, cap * sizeof *na);
        if (!na)
            return jsmf_error(JSMF_ENOMEM, "out of memory");
        k->a = na, k->cap = cap;
    }
    candidate *c = &k->a[k->n];
    if (!(c->word = malloc(len + 1)))
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    memcpy(c->word, w, len);
    c->word[len] = 0;
    c->len = len, c->df = df, c->tf = tf, c->sdf = sdf, c->stf = stf;
    k->n++;
    return JSMF_OK;
}

/* The words that pass the rule (min df, max df fraction of the documents counted, not a
 * stopword), in admission order: the pending words with their counts, plus (when `x`) the
 * counts of a pre-pass over the command's new inputs, its documents added to grow_docs. */
static int collect_candidates(jsmf_store *s, MDB_txn *t, const jsmf_store_rule *r,
                              uint64_t grow_docs, const jsmf_wordmap *stop, const store_ahead *x,
                              candidate **out, uint32_t *nout)
{
    *out = NULL, *nout = 0;
    MDB_cursor *c;
    int rc = mdb_cursor_open(t, s->pending, &c);
    if (rc)
        return store_lmdb_error(s, rc, "reading pending words");
    collector k = {r, stop, r->max_df_frac * (double)(grow_docs + (x ? x->docs : 0)), NULL, 0, 0};
    MDB_val kv, v;
    int g;
    uint64_t seen = 0;
    for (g = store_cursor_get(s, c, &kv, &v, MDB_FIRST); g == 0 && !rc;
         seen++, g = store_cursor_get(s, c, &kv, &v, MDB_NEXT)) {
        if (v.mv_size != 16) {
            rc = jsmf_error(JSMF_ESTORE, "%s: corrupt pending word record", s->path);
            break;
        }
        uint64_t df = get_u64(v.mv_data), tf = get_u64((char *)v.mv_data + 8);
        const jsmf_pending_word *e = ahead_find(x, kv.mv_data, (uint32_t)kv.mv_size);
        rc = consider(&k, kv.mv_data, (uint32_t)kv.mv_size, df + (e ? e->df : 0),
                      tf + (e ? e->tf : 0), df, tf);
    }
    if (!rc)
        rc = store_scan_end(s, c, seen, g, "reading pending words");
    mdb_cursor_close(c);
    /* the pre-pass's words that nothing stored counts yet */
    for (uint32_t i = 0; x && !rc && i < x->n_words; i++) {
        const jsmf_pending_word *e = &x->words[i];
        if (e->len == 0 || e->len > STORE_PENDING_WORD_MAX)
            continue;
        MDB_val pk = {e->len, (void *)e->word};
        int g = store_get(s, t, s->pending, &pk, &v);
        if (g == MDB_NOTFOUND)
            rc = consider(&k, e->word, e->len, e->df, e->tf, 0, 0);
        else if (g)
            rc = store_lmdb_error(s, g, "reading pending words");
    }
    if (rc) {
        candidates_free(k.a, k.n);
        return rc;
    }
    if (k.n > 1)
        qsort(k.a, k.n, sizeof *k.a, candidate_cmp);
    *out = k.a, *nout = k.n;
    return JSMF_OK;
}

/* Give `n` candidates the ids N, N+1, ...: vocabulary, word statistics (their stored counts),
 * admission point, out of pending; then N. */
static int admit_words(jsmf_store *s, MDB_txn *t, const candidate *c, uint32_t n, uint64_t m)
{
    int rc = JSMF_OK;
    for (uint32_t i = 0; i < n && !rc; i++) {
        unsigned char kb[4];
        put_be32(kb, s->n_words + i);
        MDB_val k = {4, kb}, w = {c[i].len, c[i].word}, pk = {c[i].len, c[i].word};
        uint64_t stats[2] = {c[i].sdf, c[i].stf};
        MDB_val sv = {16, stats}, av = {8, &m};
        if ((rc = store_put(s, t, s->vocab, &k, &w, MDB_APPEND)) ||
            (rc = store_put(s, t, s->wordstats, &k, &sv, 0)) ||
            (rc = store_put(s, t, s->admitted, &k, &av, MDB_APPEND)) ||
            ((rc = mdb_del(t, s->pending, &pk, NULL)) && rc != MDB_NOTFOUND))
            rc = store_lmdb_error(s, rc, "admitting words");
        else
            rc = 0;
    }
    if (!rc)
        rc = store_meta_put_u64(s, t, "n_words", (uint64_t)s->n_words + n);
    if (!rc)
        rc = store_version_bump(s, t);
    return rc;
}

/* The pre-pass's inputs as records with no progress: the mark that their command's admission
 * is done, so that a rerun after a kill resumes them without admitting again. */
static int put_marks(jsmf_store *s, MDB_txn *t, const store_ahead *x)
{
    unsigned char kb[12], buf[sizeof x->inputs->path + 128];
    for (uint32_t i = 0; x && i < x->n_inputs; i++) {
        input_key(kb, x->inputs[i].fingerprint, x->inputs[i].occurrence);
        MDB_val k = {12, kb}, v = {input_encode(buf, &x->inputs[i]), buf};
        int rc = store_put(s, t, s->inputs, &k, &v, MDB_NOOVERWRITE);
        if (rc == MDB_KEYEXIST)
            return jsmf_error(JSMF_ESTORE, "%s: %s already has a record (fingerprint %016" PRIx64
                              ", occurrence %u)", s->path, x->inputs[i].path,
                              x->inputs[i].fingerprint, x->inputs[i].occurrence);
        if (rc)
            return store_lmdb_error(s, rc, "writing input record");
    }
    return JSMF_OK;
}

/* One attempt: the candidates, the cap and the writes (and the pre-pass's marks), in one
 * transaction. */
static int admit_once(jsmf_store *s, const jsmf_wordmap *stop, const store_ahead *x,
                      uint32_t *admitted)
{
    MDB_txn *t;
    int rc = store_write_begin(s, &t);
    if (rc)
        return rc;
    jsmf_store_rule r;
    uint64_t m = 0, grow_docs = 0;
    candidate *c = NULL;
    uint32_t n = 0, ncand = 0;
    if (!(rc = rule_read(s, t, &r)) && r.state == JSMF_RULE_GROW &&
        !(rc = store_meta_get_u64(s, t, "docs", &m)) &&
        !(rc = store_meta_get_u64(s, t, "grow_docs", &grow_docs)))
        rc = collect_candidates(s, t, &r, grow_docs, stop, x, &c, &ncand);
    n = ncand;
    if (!rc && r.max_words) {
        uint64_t room = r.max_words > s->n_words ? r.max_words - s->n_words : 0;
        if (n > room)
            n = (uint32_t)room;
    }
    if (!rc && (uint64_t)s->n_words + n > UINT32_MAX - 1)
        n = UINT32_MAX - 1 - s->n_words;
    if (!rc && n)
        rc = admit_words(s, t, c, n, m);
    candidates_free(c, ncand);
    int marks = x && x->n_inputs;
    if (!rc && marks)
        rc = put_marks(s, t, x);
    if (!rc && (n || marks)) {
        s->commits++;
        if (s->hook_exit_inside == s->commits)
            _exit(98); /* test hook: die with the admission written but not committed */
        if ((rc = mdb_txn_commit(t)))
            rc = store_commit_error(s, rc), s->commits--;
        if (!rc && s->hook_exit_after == s->commits)
            _exit(97);
    } else {
        mdb_txn_abort(t);
    }
    if (!rc) {
        s->n_words += n;
        if (n)
            s->version = store_written_version(s);
        *admitted = n;
    }
    return rc;
}

static int admit_with(jsmf_store *s, const jsmf_vocab *stop, const store_ahead *x,
                      uint32_t *admitted)
{
    *admitted = 0;
    if (!s->writable || !s->has_vocab)
        return jsmf_error(JSMF_EINVAL, "%s: store not open for writing", s->path);
    jsmf_wordmap *sm = NULL;
    int rc = stop && stop->n ? jsmf_wordmap_new(stop, &sm) : JSMF_OK;
    while (!rc) {
        rc = admit_once(s, sm, x, admitted);
        if (!(rc && s->map_full))
            break;
        rc = store_grow_map(s); /* no transaction is open now: grow and try again */
    }
    jsmf_wordmap_free(sm);
    return rc;
}

int jsmf_store_admit(jsmf_store *s, const jsmf_vocab *stop, uint32_t *admitted)
{
    return admit_with(s, stop, NULL, admitted);
}

int store_admit_ahead(jsmf_store *s, const jsmf_vocab *stop, const store_ahead *x,
                      uint32_t *admitted)
{
    return admit_with(s, stop, x, admitted);
}

int store_pending_df(jsmf_store *s, const jsmf_pending_word *w, uint32_t n, uint64_t *df)
{
    memset(df, 0, (size_t)n * sizeof *df);
    if (!s->has_growth_dbs || !n)
        return JSMF_OK;
    MDB_txn *t;
    int rc = store_read_begin(s, &t);
    if (rc)
        return rc;
    for (uint32_t i = 0; i < n && !rc; i++) {
        if (w[i].len == 0 || w[i].len > STORE_PENDING_WORD_MAX)
            continue;
        MDB_val k = {w[i].len, (void *)w[i].word}, v;
        int g = store_get(s, t, s->pending, &k, &v);
        if (g == 0 && v.mv_size == 16)
            df[i] = get_u64(v.mv_data);
        else if (g == 0)
            rc = jsmf_error(JSMF_ESTORE, "%s: corrupt pending word record", s->path);
        else if (g != MDB_NOTFOUND)
            rc = store_lmdb_error(s, g, "reading pending words");
    }
    mdb_txn_abort(t);
    return rc;
}
