/* baskets.c — a streaming generator of planted basket corpora (`--format items` lines) with
 * sparse, separable topics, for corpora too large for synth.py (tools/bench/million: a million
 * items, 1e9 tokens), and their ground truth as synth.py writes it (tools/synth/README.md).
 *
 * Design (why spectral recovery is possible, and why memory is O(N c)):
 *  - Topic t is a Gamma(--topic-conc)-weighted distribution over its members: every non-anchor
 *    item joins --item-topics c distinct topics drawn uniformly, so a topic has ~c N / K
 *    members and B has ~c N + K a non-zeros (stored sparse; never N x K in memory).
 *  - Each topic has --anchors-per-topic a anchor items that occur in it alone, each as probable
 *    as the topic's most probable member (synth.py's rule): B is separable, and the anchors,
 *    the most frequent items of their topic, have the least noisy rows of C.
 *  - A basket draws --doc-topics J distinct topics uniformly and Dirichlet(--doc-conc) weights
 *    over them, so A = E[theta theta^T] has a closed form (below), is diagonally dominant and
 *    full rank: C = B A B^T has rank K and its anchors are the corners of its rows' hull.
 *  - Item weights with topic-conc 1 (exponential) keep every item's frequency within a small
 *    factor of T/N, so ">= 1000 tokens per item" holds for nearly every item, not on average
 *    over a few popular ones.
 * A token costs a topic draw among J and one alias-table draw (O(1)); a basket's J topics'
 * tables stay in cache. Deterministic by --seed (xoshiro256**, one thread). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

typedef struct {
    uint64_t items, topics, docs, tokens, tokens_per_item;
    double mean_len, topic_conc, doc_conc;
    uint32_t min_len, item_topics, doc_topics, anchors;
    uint64_t seed;
    int zlevel, force;
    const char *output, *truth;
} options;

/* ---- random numbers: xoshiro256** seeded by splitmix64 ---- */
typedef struct { uint64_t s[4]; } rng;

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void rng_seed(rng *r, uint64_t seed, uint64_t stream)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + stream;
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t next64(rng *r)
{
    uint64_t *s = r->s, out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0], s[3] ^= s[1], s[1] ^= s[2], s[0] ^= s[3], s[2] ^= t, s[3] = rotl(s[3], 45);
    return out;
}

static inline double uniform01(rng *r) { return ((next64(r) >> 11) + 0.5) * 0x1.0p-53; }

/* an integer uniform in [0, n) by the multiply-shift of a 32-bit draw (n < 2^32) */
static inline uint32_t below(uint32_t bits, uint32_t n) { return (uint32_t)(((uint64_t)bits * n) >> 32); }

static double normal01(rng *r)
{
    double u = uniform01(r), v = uniform01(r);
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* Gamma(shape, 1): Marsaglia and Tsang; shape < 1 through Gamma(shape + 1) U^(1/shape). */
static double gamma_draw(rng *r, double shape)
{
    if (shape == 1)
        return -log(uniform01(r));
    if (shape < 1)
        return gamma_draw(r, shape + 1) * pow(uniform01(r), 1 / shape);
    double d = shape - 1.0 / 3, c = 1 / sqrt(9 * d);
    for (;;) {
        double x = normal01(r), v = 1 + c * x;
        if (v <= 0)
            continue;
        v = v * v * v;
        double u = uniform01(r);
        if (log(u) < 0.5 * x * x + d - d * v + d * log(v))
            return d * v;
    }
}

/* ---- alias tables (Vose): a slot keeps its own value below thresh, else its alias ---- */
typedef struct { uint32_t thresh, keep, alias; } slot;

/* p[0..n) >= 0 (any scale), val[0..n) the values drawn; out gets n slots. */
static int alias_build(const double *p, const uint32_t *val, uint32_t n, slot *out)
{
    double sum = 0;
    for (uint32_t i = 0; i < n; i++)
        sum += p[i];
    double *q = malloc(n * sizeof *q);
    uint32_t *small = malloc(n * sizeof *small), *large = malloc(n * sizeof *large);
    if (!q || !small || !large) {
        free(q), free(small), free(large);
        return -1;
    }
    uint32_t ns = 0, nl = 0;
    for (uint32_t i = 0; i < n; i++) {
        q[i] = p[i] * n / sum;
        if (q[i] < 1)
            small[ns++] = i;
        else
            large[nl++] = i;
    }
    while (ns && nl) {
        uint32_t s = small[--ns], l = large[nl - 1];
        out[s] = (slot){(uint32_t)fmin(q[s] * 4294967296.0, 4294967295.0), val[s], val[l]};
        q[l] -= 1 - q[s];
        if (q[l] < 1)
            nl--, small[ns++] = l;
    }
    while (nl) { /* what rounding leaves is 1 */
        uint32_t l = large[--nl];
        out[l] = (slot){UINT32_MAX, val[l], val[l]};
    }
    while (ns) {
        uint32_t s = small[--ns];
        out[s] = (slot){UINT32_MAX, val[s], val[s]};
    }
    free(q), free(small), free(large);
    return 0;
}

static inline uint32_t alias_draw(const slot *t, uint32_t n, uint64_t bits)
{
    const slot *s = t + below((uint32_t)(bits >> 32), n);
    return (uint32_t)bits < s->thresh ? s->keep : s->alias;
}

/* ---- the planted model ---- */
typedef struct {
    uint32_t n, k, c, a;        /* items, topics, topics per free item, anchors per topic */
    uint32_t nfree;             /* items 0..nfree-1 are free, then a anchors per topic (internal) */
    uint32_t *row;              /* internal item -> row of B (a random permutation) */
    uint32_t *member_topic;     /* free item i's topics: [i*c, i*c+c) */
    double *member_w;           /* their Gamma weights (unnormalised) */
    double *anchor_w;           /* K: each anchor's weight (the topic's largest member weight) */
    double *colsum;             /* K: a column's total weight */
    uint64_t *toff;             /* K+1: topic t's slots are [toff[t], toff[t+1]) */
    slot *slots;
} planted;

static void planted_free(planted *p)
{
    free(p->row), free(p->member_topic), free(p->member_w), free(p->anchor_w), free(p->colsum);
    free(p->toff), free(p->slots);
}

static int planted_draw(planted *p, const options *o)
{
    memset(p, 0, sizeof *p);
    p->n = (uint32_t)o->items, p->k = (uint32_t)o->topics, p->c = o->item_topics, p->a = o->anchors;
    p->nfree = p->n - p->k * p->a;
    uint32_t n = p->n, k = p->k, c = p->c;
    p->row = malloc((size_t)n * sizeof *p->row);
    p->member_topic = malloc(((size_t)p->nfree * c + 1) * sizeof *p->member_topic);
    p->member_w = malloc(((size_t)p->nfree * c + 1) * sizeof *p->member_w);
    p->anchor_w = calloc(k, sizeof *p->anchor_w);
    p->colsum = calloc(k, sizeof *p->colsum);
    p->toff = calloc((size_t)k + 1, sizeof *p->toff);
    if (!p->row || !p->member_topic || !p->member_w || !p->anchor_w || !p->colsum || !p->toff)
        return -1;
    rng r;
    rng_seed(&r, o->seed, 1);
    for (uint32_t i = 0; i < p->nfree; i++) { /* c distinct topics, uniformly */
        uint32_t *mt = p->member_topic + (size_t)i * c;
        for (uint32_t j = 0; j < c; j++) {
            uint32_t t;
            int dup;
            do {
                t = below((uint32_t)next64(&r), k);
                dup = 0;
                for (uint32_t q = 0; q < j; q++)
                    dup |= mt[q] == t;
            } while (dup);
            mt[j] = t;
            double w = gamma_draw(&r, o->topic_conc);
            p->member_w[(size_t)i * c + j] = w;
            p->colsum[t] += w;
            if (w > p->anchor_w[t])
                p->anchor_w[t] = w;
            p->toff[t + 1]++;
        }
    }
    for (uint32_t t = 0; t < k; t++) {
        if (p->anchor_w[t] == 0) /* a topic with no members: its anchors carry it */
            p->anchor_w[t] = 1;
        p->colsum[t] += p->a * p->anchor_w[t];
        p->toff[t + 1] += p->a;
    }
    for (uint32_t i = 0; i < n; i++) /* Fisher-Yates: rows in random order, as synth.py */
        p->row[i] = i;
    for (uint32_t i = n - 1; i > 0; i--) {
        uint32_t j = (uint32_t)(next64(&r) % ((uint64_t)i + 1)), x = p->row[i];
        p->row[i] = p->row[j], p->row[j] = x;
    }
    for (uint32_t t = 0; t < k; t++)
        p->toff[t + 1] += p->toff[t];
    return 0;
}

/* the internal index of topic t's anchor j */
static uint32_t anchor_item(const planted *p, uint32_t t, uint32_t j) { return p->nfree + t * p->a + j; }

/* One alias table per topic over the rows of its members and anchors. */
static int planted_tables(planted *p)
{
    uint64_t total = p->toff[p->k];
    uint64_t *fill = malloc(((size_t)p->k + 1) * sizeof *fill);
    uint32_t *val = malloc((total + 1) * sizeof *val);
    double *w = malloc((total + 1) * sizeof *w);
    p->slots = malloc((total + 1) * sizeof *p->slots);
    int rc = fill && val && w && p->slots ? 0 : -1;
    if (!rc) {
        memcpy(fill, p->toff, ((size_t)p->k + 1) * sizeof *fill);
        for (uint32_t i = 0; i < p->nfree; i++)
            for (uint32_t j = 0; j < p->c; j++) {
                uint32_t t = p->member_topic[(size_t)i * p->c + j];
                val[fill[t]] = p->row[i], w[fill[t]++] = p->member_w[(size_t)i * p->c + j];
            }
        for (uint32_t t = 0; t < p->k; t++)
            for (uint32_t j = 0; j < p->a; j++)
                val[fill[t]] = p->row[anchor_item(p, t, j)], w[fill[t]++] = p->anchor_w[t];
        for (uint32_t t = 0; !rc && t < p->k; t++)
            rc = alias_build(w + p->toff[t], val + p->toff[t],
                             (uint32_t)(p->toff[t + 1] - p->toff[t]), p->slots + p->toff[t]);
    }
    free(fill), free(val), free(w);
    return rc;
}

/* ---- basket lengths: Poisson(mean) conditioned on >= min_len, by an alias table ---- */
typedef struct { slot *s; uint32_t n; double mean; } lengths;

static int lengths_build(lengths *L, double mean, uint32_t min_len)
{
    uint32_t hi = (uint32_t)(mean + 12 * sqrt(mean) + 30);
    double *p = calloc((size_t)hi + 1, sizeof *p);
    uint32_t *v = malloc(((size_t)hi + 1) * sizeof *v);
    L->s = malloc(((size_t)hi + 1) * sizeof *L->s);
    if (!p || !v || !L->s) {
        free(p), free(v);
        return -1;
    }
    double sum = 0, m = 0;
    for (uint32_t x = 0; x <= hi; x++) {
        v[x] = x;
        if (x >= min_len)
            p[x] = exp(x * log(mean) - mean - lgamma(x + 1.0));
        sum += p[x], m += x * p[x];
    }
    L->n = hi + 1, L->mean = m / sum;
    int rc = sum > 0 ? alias_build(p, v, hi + 1, L->s) : -2;
    free(p), free(v);
    return rc;
}

/* ---- output: stdout, a file, or a .zst through libzstd ---- */
typedef struct {
    FILE *f;
    ZSTD_CCtx *z;
    char *buf, *zbuf;
    size_t len, cap, zcap;
    const char *path;
    int err;
} out;

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

/* the buffer holds at least `least` bytes (a whole basket) */
static int out_open(out *o, const char *path, int level, size_t least)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    o->cap = least > (1 << 20) ? least : (1 << 20);
    o->buf = malloc(o->cap);
    o->f = strcmp(path, "-") ? fopen(path, "wb") : stdout;
    if (!o->buf || !o->f)
        return -1;
    if (ends_with(path, ".zst") || ends_with(path, ".zstd")) {
        o->z = ZSTD_createCCtx();
        o->zcap = ZSTD_CStreamOutSize();
        o->zbuf = malloc(o->zcap);
        if (!o->z || !o->zbuf)
            return -1;
        ZSTD_CCtx_setParameter(o->z, ZSTD_c_compressionLevel, level);
        ZSTD_CCtx_setParameter(o->z, ZSTD_c_checksumFlag, 1);
    }
    return 0;
}

static void out_write_raw(out *o, ZSTD_EndDirective end)
{
    if (!o->z) {
        if (o->len && fwrite(o->buf, 1, o->len, o->f) != o->len)
            o->err = errno ? errno : EIO;
        o->len = 0;
        return;
    }
    ZSTD_inBuffer in = {o->buf, o->len, 0};
    size_t left;
    do {
        ZSTD_outBuffer zo = {o->zbuf, o->zcap, 0};
        left = ZSTD_compressStream2(o->z, &zo, &in, end);
        if (ZSTD_isError(left)) {
            o->err = EIO;
            return;
        }
        if (zo.pos && fwrite(o->zbuf, 1, zo.pos, o->f) != zo.pos)
            o->err = errno ? errno : EIO;
    } while (end == ZSTD_e_end ? left != 0 : in.pos < in.size);
    o->len = 0;
}

static int out_close(out *o)
{
    out_write_raw(o, ZSTD_e_end);
    if (o->f && fflush(o->f))
        o->err = errno;
    if (o->f && o->f != stdout && fclose(o->f))
        o->err = errno;
    ZSTD_freeCCtx(o->z);
    free(o->buf), free(o->zbuf);
    return o->err;
}

/* ---- item names: "sku<row+1>", as synth.py --item-ids sku ---- */
/* Written digit by digit: a table of names would cost a cache miss a token at N = 1M. */
static inline size_t item_name(char *dst, uint32_t row)
{
    char tmp[10];
    uint32_t x = row + 1, n = 0;
    do
        tmp[n++] = (char)('0' + x % 10), x /= 10;
    while (x);
    dst[0] = 's', dst[1] = 'k', dst[2] = 'u';
    for (uint32_t i = 0; i < n; i++)
        dst[3 + i] = tmp[n - 1 - i];
    return 3 + n;
}

typedef struct { char *text; uint64_t *off; } names;

static int names_build(names *nm, uint32_t n)
{
    nm->off = malloc(((size_t)n + 1) * sizeof *nm->off);
    nm->text = malloc((size_t)n * 14 + 1);
    if (!nm->off || !nm->text)
        return -1;
    uint64_t pos = 0;
    for (uint32_t i = 0; i < n; i++) {
        nm->off[i] = pos;
        pos += (uint64_t)sprintf(nm->text + pos, "sku%u", i + 1);
    }
    nm->off[n] = pos;
    return 0;
}

/* ---- the corpus ---- */
typedef struct { uint64_t docs, tokens; double seconds; } corpus_stats;

/* J distinct topics, uniformly, and their cumulative Dirichlet(doc_conc) weights as 32-bit
 * thresholds (the last is 2^32, so a draw always lands). */
static void basket_topics(rng *r, const options *o, uint32_t *tp, uint64_t *cut)
{
    uint32_t j = o->doc_topics;
    double w[64], sum = 0;
    for (uint32_t i = 0; i < j; i++) {
        uint32_t t;
        int dup;
        do {
            t = below((uint32_t)next64(r), (uint32_t)o->topics);
            dup = 0;
            for (uint32_t q = 0; q < i; q++)
                dup |= tp[q] == t;
        } while (dup);
        tp[i] = t;
        w[i] = gamma_draw(r, o->doc_conc);
        sum += w[i];
    }
    if (!(sum > 0)) /* every Gamma(doc_conc) draw underflowed: equal weights */
        for (uint32_t i = 0; i < j; i++)
            w[i] = 1, sum = j;
    double acc = 0;
    for (uint32_t i = 0; i < j; i++) {
        acc += w[i];
        cut[i] = i + 1 == j ? (1ull << 32) : (uint64_t)(acc / sum * 4294967296.0);
    }
}

static int write_corpus(const options *o, const planted *p, const lengths *L, corpus_stats *st)
{
    out w;
    const slot **tok_slot = malloc(L->n * sizeof *tok_slot);
    uint32_t *tok_bits = malloc(L->n * sizeof *tok_bits);
    if (!tok_slot || !tok_bits || out_open(&w, o->output, o->zlevel, (size_t)L->n * 16)) {
        fprintf(stderr, "baskets: %s: %s\n", o->output, strerror(errno ? errno : ENOMEM));
        return 1;
    }
    rng r;
    rng_seed(&r, o->seed, 2);
    uint32_t tp[64];
    uint64_t cut[64];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint64_t tokens = 0;
    for (uint64_t d = 0; d < o->docs && !w.err; d++) {
        uint32_t len = alias_draw(L->s, L->n, next64(&r));
        basket_topics(&r, o, tp, cut);
        /* two passes: the slots of every token first (prefetched: a topic's table is cold
         * when a basket starts), then the items, so the cache misses overlap */
        for (uint32_t i = 0; i < len; i++) {
            uint64_t bits = next64(&r);
            uint32_t q = 0, u = (uint32_t)(next64(&r) >> 32);
            while (u >= cut[q])
                q++;
            uint32_t t = tp[q], size = (uint32_t)(p->toff[t + 1] - p->toff[t]);
            tok_slot[i] = p->slots + p->toff[t] + below((uint32_t)(bits >> 32), size);
            tok_bits[i] = (uint32_t)bits;
            __builtin_prefetch(tok_slot[i]);
        }
        if (w.len + (size_t)len * 16 > w.cap)
            out_write_raw(&w, ZSTD_e_continue);
        for (uint32_t i = 0; i < len; i++) {
            const slot *sl = tok_slot[i];
            w.len += item_name(w.buf + w.len, tok_bits[i] < sl->thresh ? sl->keep : sl->alias);
            w.buf[w.len++] = i + 1 == len ? '\n' : ' ';
        }
        if (!len) {
            if (w.len + 1 > w.cap)
                out_write_raw(&w, ZSTD_e_continue);
            w.buf[w.len++] = '\n';
        }
        tokens += len;
    }
    int err = out_close(&w);
    free(tok_slot), free(tok_bits);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    st->docs = o->docs, st->tokens = tokens;
    st->seconds = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
    if (err) {
        fprintf(stderr, "baskets: writing %s: %s\n", o->output, strerror(err));
        return 1;
    }
    return 0;
}

/* ---- the truth: a MODEL directory of kind "truth" (formats/model.md) ---- */
static int npy_header(FILE *f, uint64_t rows, uint64_t cols, int two_d)
{
    char dict[160];
    int n = two_d ? snprintf(dict, sizeof dict,
                             "{'descr': '<f8', 'fortran_order': False, 'shape': (%llu, %llu), }",
                             (unsigned long long)rows, (unsigned long long)cols)
                  : snprintf(dict, sizeof dict,
                             "{'descr': '<f8', 'fortran_order': False, 'shape': (%llu,), }",
                             (unsigned long long)rows);
    int total = 10 + n + 1, pad = (64 - total % 64) % 64;
    unsigned hl = (unsigned)(n + pad + 1);
    fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    fputc(hl & 0xff, f), fputc(hl >> 8, f);
    fwrite(dict, 1, (size_t)n, f);
    for (int i = 0; i < pad; i++)
        fputc(' ', f);
    fputc('\n', f);
    return ferror(f) ? -1 : 0;
}

/* A = E[theta theta^T]: J of K topics uniformly, Dirichlet(beta) over them (s = J beta):
 * A_tt = (J/K) beta(beta+1) / (s(s+1)), A_tu = J(J-1)/(K(K-1)) beta^2 / (s(s+1)). */
static double a_entry(const options *o, int diag)
{
    double J = o->doc_topics, K = (double)o->topics, b = o->doc_conc, s = J * b;
    if (diag)
        return J / K * b * (b + 1) / (s * (s + 1));
    return K > 1 ? J * (J - 1) / (K * (K - 1)) * b * b / (s * (s + 1)) : 0;
}

static int write_b(const char *path, const planted *p)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    uint32_t *inv = malloc((size_t)p->n * sizeof *inv);
    double *rowv = calloc(p->k, sizeof *rowv);
    int rc = inv && rowv ? npy_header(f, p->n, p->k, 1) : -1;
    for (uint32_t i = 0; !rc && i < p->n; i++)
        inv[p->row[i]] = i;
    for (uint32_t r = 0; !rc && r < p->n; r++) {
        uint32_t i = inv[r];
        if (i < p->nfree) {
            for (uint32_t j = 0; j < p->c; j++) {
                uint32_t t = p->member_topic[(size_t)i * p->c + j];
                rowv[t] = p->member_w[(size_t)i * p->c + j] / p->colsum[t];
            }
        } else {
            uint32_t t = (i - p->nfree) / p->a;
            rowv[t] = p->anchor_w[t] / p->colsum[t];
        }
        if (fwrite(rowv, sizeof *rowv, p->k, f) != p->k)
            rc = -1;
        memset(rowv, 0, p->k * sizeof *rowv);
    }
    free(inv), free(rowv);
    if (fclose(f))
        rc = -1;
    return rc;
}

static int write_a(const char *path, const options *o)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int rc = npy_header(f, o->topics, o->topics, 1);
    double on = a_entry(o, 1), off = a_entry(o, 0);
    for (uint64_t i = 0; !rc && i < o->topics; i++)
        for (uint64_t j = 0; j < o->topics; j++)
            if (fwrite(i == j ? &on : &off, sizeof on, 1, f) != 1)
                rc = -1;
    if (fclose(f))
        rc = -1;
    return rc;
}

static int write_text_files(const char dir[4000], const options *o, const planted *p, const names *nm,
                            const corpus_stats *st)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/vocab.txt", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    for (uint32_t r = 0; r < p->n; r++)
        fprintf(f, "%.*s\n", (int)(nm->off[r + 1] - nm->off[r]), nm->text + nm->off[r]);
    if (fclose(f))
        return -1;
    if (p->a) {
        snprintf(path, sizeof path, "%s/anchors.txt", dir);
        if (!(f = fopen(path, "w")))
            return -1;
        for (uint32_t t = 0; t < p->k; t++) {
            uint32_t r = p->row[anchor_item(p, t, 0)];
            fprintf(f, "%u\t%u\t%.*s\n", t, r, (int)(nm->off[r + 1] - nm->off[r]),
                    nm->text + nm->off[r]);
        }
        if (fclose(f))
            return -1;
    }
    snprintf(path, sizeof path, "%s/summary.json", dir);
    if (!(f = fopen(path, "w")))
        return -1;
    fprintf(f, "{\n  \"format\": \"jsmf-model\",\n  \"version\": 1,\n  \"kind\": \"truth\",\n"
               "  \"k\": %llu,\n  \"n_words\": %llu,\n  \"generator\": {\"tool\": \"baskets\", "
               "\"items\": %llu, \"topics\": %llu, \"item_topics\": %u, \"topic_conc\": %.17g, "
               "\"anchors_per_topic\": %u, \"doc_topics\": %u, \"doc_conc\": %.17g, "
               "\"mean_len\": %.17g, \"min_len\": %u, \"docs\": %llu, \"seed\": %llu, "
               "\"mix\": \"subset-dirichlet\", \"a_estimate\": \"exact\"},\n"
               "  \"corpus\": {\"format\": \"items\", \"docs\": %llu, \"tokens\": %llu}\n}\n",
            (unsigned long long)o->topics, (unsigned long long)o->items,
            (unsigned long long)o->items, (unsigned long long)o->topics, o->item_topics,
            o->topic_conc, o->anchors, o->doc_topics, o->doc_conc, o->mean_len, o->min_len,
            (unsigned long long)o->docs, (unsigned long long)o->seed,
            (unsigned long long)st->docs, (unsigned long long)st->tokens);
    return fclose(f) ? -1 : 0;
}

static const char *truth_files[] = {"vocab.txt", "B.npy", "A.npy", "anchors.txt", "summary.json"};

static void remove_model_dir(const char *dir)
{
    char path[4096];
    for (size_t i = 0; i < sizeof truth_files / sizeof *truth_files; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, truth_files[i]);
        unlink(path);
    }
    rmdir(dir);
}

/* Written in a sibling directory, then renamed into place (an existing DIR only with --force). */
static int write_truth(const options *o, const planted *p, const names *nm, const corpus_stats *st)
{
    struct stat sb;
    if (!stat(o->truth, &sb) && !o->force) {
        fprintf(stderr, "baskets: %s: already exists (use --force to replace it)\n", o->truth);
        return 1;
    }
    char tmp[4000], old[4000], path[4096]; /* the truth's name is < 3900 bytes (options) */
    snprintf(tmp, sizeof tmp, "%s.tmp-%ld", o->truth, (long)getpid());
    snprintf(old, sizeof old, "%s.old-%ld", o->truth, (long)getpid());
    if (mkdir(tmp, 0755)) {
        fprintf(stderr, "baskets: %s: %s\n", tmp, strerror(errno));
        return 1;
    }
    snprintf(path, sizeof path, "%s/B.npy", tmp);
    int rc = write_b(path, p);
    snprintf(path, sizeof path, "%s/A.npy", tmp);
    if (!rc)
        rc = write_a(path, o);
    if (!rc)
        rc = write_text_files(tmp, o, p, nm, st);
    if (!rc && !stat(o->truth, &sb)) {
        snprintf(path, sizeof path, "%s/B.npy", o->truth);
        if (stat(path, &sb)) {
            fprintf(stderr, "baskets: %s: exists and does not look like a model; not replacing "
                            "it\n", o->truth);
            remove_model_dir(tmp);
            return 1;
        }
        rc = rename(o->truth, old);
    }
    if (!rc)
        rc = rename(tmp, o->truth);
    if (rc) {
        fprintf(stderr, "baskets: writing the truth %s: %s\n", o->truth, strerror(errno));
        remove_model_dir(tmp);
        return 1;
    }
    remove_model_dir(old);
    return 0;
}

/* ---- options ---- */
static void usage(FILE *f)
{
    fprintf(f,
        "usage: baskets -o FILE|- [--truth DIR] [--items N] [--topics K]\n"
        "               [--docs M | --tokens T | --tokens-per-item R] [--mean-len L] [--min-len m]\n"
        "               [--item-topics c] [--topic-conc x] [--anchors-per-topic a]\n"
        "               [--doc-topics J] [--doc-conc b] [--seed S] [--zstd-level z] [--force]\n"
        "Planted basket corpus (--format items lines, .zst compressed by name) and its truth\n"
        "MODEL directory; tools/synth/README.md.\n");
}

static int parse_u64(const char *s, uint64_t *v)
{
    char *end;
    errno = 0;
    double d = strtod(s, &end); /* accepts 1e9 */
    if (errno || *end || d < 0 || d > 1.8e19 || d != floor(d))
        return -1;
    *v = (uint64_t)d;
    return 0;
}

static int parse_options(int argc, char **argv, options *o)
{
    *o = (options){.items = 10000, .topics = 20, .mean_len = 50, .min_len = 2, .item_topics = 2,
                   .topic_conc = 1, .anchors = 1, .doc_topics = 3, .doc_conc = 1, .seed = 1,
                   .zlevel = 1};
    enum { O_ITEMS = 256, O_TOPICS, O_DOCS, O_TOKENS, O_TPI, O_MEAN, O_MIN, O_ITOP, O_TCONC,
           O_ANCH, O_DTOP, O_DCONC, O_SEED, O_ZL, O_TRUTH, O_FORCE, O_HELP };
    static const struct option lo[] = {
        {"items", 1, 0, O_ITEMS}, {"topics", 1, 0, O_TOPICS}, {"docs", 1, 0, O_DOCS},
        {"tokens", 1, 0, O_TOKENS}, {"tokens-per-item", 1, 0, O_TPI},
        {"mean-len", 1, 0, O_MEAN}, {"min-len", 1, 0, O_MIN}, {"item-topics", 1, 0, O_ITOP},
        {"topic-conc", 1, 0, O_TCONC}, {"anchors-per-topic", 1, 0, O_ANCH},
        {"doc-topics", 1, 0, O_DTOP}, {"doc-conc", 1, 0, O_DCONC}, {"seed", 1, 0, O_SEED},
        {"zstd-level", 1, 0, O_ZL}, {"truth", 1, 0, O_TRUTH}, {"force", 0, 0, O_FORCE},
        {"output", 1, 0, 'o'}, {"help", 0, 0, O_HELP}, {0, 0, 0, 0}};
    int ch, bad = 0;
    uint64_t v;
    while ((ch = getopt_long(argc, argv, "o:", lo, NULL)) != -1) {
        char *e = NULL;
        switch (ch) {
        case 'o': o->output = optarg; break;
        case O_TRUTH: o->truth = optarg; break;
        case O_FORCE: o->force = 1; break;
        case O_HELP: usage(stdout); exit(0);
        case O_MEAN: o->mean_len = strtod(optarg, &e); bad |= *e || !(o->mean_len > 0); break;
        case O_TCONC: o->topic_conc = strtod(optarg, &e); bad |= *e || !(o->topic_conc > 0); break;
        case O_DCONC: o->doc_conc = strtod(optarg, &e); bad |= *e || !(o->doc_conc > 0); break;
        case '?': usage(stderr); exit(2);
        default:
            if (parse_u64(optarg, &v)) {
                fprintf(stderr, "baskets: bad number '%s'\n", optarg);
                exit(2);
            }
            switch (ch) {
            case O_ITEMS: o->items = v; break;
            case O_TOPICS: o->topics = v; break;
            case O_DOCS: o->docs = v; break;
            case O_TOKENS: o->tokens = v; break;
            case O_TPI: o->tokens_per_item = v; break;
            case O_MIN: o->min_len = (uint32_t)v; bad |= v > 1000000; break;
            case O_ITOP: o->item_topics = (uint32_t)v; break;
            case O_ANCH: o->anchors = (uint32_t)v; break;
            case O_DTOP: o->doc_topics = (uint32_t)v; break;
            case O_SEED: o->seed = v; break;
            case O_ZL: o->zlevel = (int)v; bad |= v < 1 || v > 19; break;
            }
        }
    }
    if (bad || optind != argc) {
        fprintf(stderr, "baskets: bad option value or stray argument\n");
        usage(stderr);
        return -1;
    }
    const char *why = NULL;
    if (!o->output)
        why = "-o FILE (or - for stdout) is required";
    else if (o->topics < 1 || o->topics > 100000)
        why = "--topics must be 1..100000";
    else if (o->items > UINT32_MAX - 1 || o->items <= o->topics * o->anchors)
        why = "--items must exceed --topics x --anchors-per-topic (and fit 32 bits)";
    else if (o->item_topics < 1 || o->item_topics > o->topics)
        why = "--item-topics must be 1..K";
    else if (o->doc_topics < 1 || o->doc_topics > o->topics || o->doc_topics > 64)
        why = "--doc-topics must be 1..min(K, 64)";
    else if (!!o->docs + !!o->tokens + !!o->tokens_per_item > 1)
        why = "give one of --docs, --tokens, --tokens-per-item";
    else if (o->mean_len > 1e6)
        why = "--mean-len is at most 1e6";
    else if (o->truth && strlen(o->truth) > 3900)
        why = "--truth: the path is too long";
    if (why) {
        fprintf(stderr, "baskets: %s\n", why);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    options o;
    if (parse_options(argc, argv, &o))
        return 2;
    lengths L;
    int lrc = lengths_build(&L, o.mean_len, o.min_len);
    if (lrc) {
        fprintf(stderr, "baskets: %s\n", lrc == -2 ? "--min-len is far above --mean-len"
                                                   : "out of memory");
        return 1;
    }
    if (o.tokens_per_item)
        o.tokens = o.tokens_per_item * o.items;
    if (o.tokens)
        o.docs = (uint64_t)llround(o.tokens / L.mean);
    else if (!o.docs)
        o.docs = 1000;
    planted p;
    names nm;
    if (planted_draw(&p, &o) || planted_tables(&p) || names_build(&nm, p.n)) {
        fprintf(stderr, "baskets: out of memory for N=%llu\n", (unsigned long long)o.items);
        return 1;
    }
    corpus_stats st;
    int rc = write_corpus(&o, &p, &L, &st);
    if (!rc && o.truth)
        rc = write_truth(&o, &p, &nm, &st);
    if (!rc)
        fprintf(stderr, "baskets: %llu baskets, %llu tokens, N=%llu, K=%llu in %.2f s "
                        "(%.1fM tokens/s)%s%s\n",
                (unsigned long long)st.docs, (unsigned long long)st.tokens,
                (unsigned long long)o.items, (unsigned long long)o.topics, st.seconds,
                st.tokens / (st.seconds > 0 ? st.seconds : 1e-9) / 1e6,
                o.truth ? "; truth in " : "", o.truth ? o.truth : "");
    planted_free(&p);
    free(nm.text), free(nm.off), free(L.s);
    return rc;
}
