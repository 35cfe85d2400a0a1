/* docs.c — documents from a byte stream: plain text (one document per line), UCI docword
 * (grouped "docID wordID count" lines), LDA-C ("N id:count ...") and items (one basket of
 * whitespace-separated ids per line); format sniffing, resume at a document boundary, and errors
 * that name file, line and byte offset (formats/inputs.md). */
#include "jsmf_io.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/docs.h"
#include "io/stream.h"
#include "docs.h"
#include "tokenize.h"

struct jsmf_docs {
    io_stream *s;
    jsmf_format fmt;
    jsmf_tokenizer tok;
    int raw;                   /* text: leave tokenising to the caller */
    uint64_t index;            /* number of the next document */
    uint64_t end_offset;       /* a line a document: stop before one starting here (0: none) */

    char *tbuf;                /* text, items: token bytes of the current document */
    size_t tbuf_cap;
    const char **toks;
    uint32_t *toklens;
    size_t tok_cap;

    uint32_t *ids, *counts;    /* uci/ldac: the current document */
    uint64_t *pairs;           /* scratch for sorting unsorted ids */
    size_t nids, id_cap;
    uint32_t id_bound;         /* ids must be < this; 0 = unchecked */

    jsmf_vocab *vocab;         /* UCI (or LDA-C with a vocabulary) */
    uint64_t D, W, NNZ;        /* UCI header */
    uint64_t nnz_seen;
    int check_nnz;             /* read from the start, so NNZ can be checked at the end */
    int nnz_checked;
    int pending;               /* a triple read ahead that belongs to a later document */
    uint64_t p_doc, p_off, p_line;
    uint32_t p_word, p_count;

    jsmf_read_stats st;        /* what may surprise: empty documents, invalid UTF-8 */
    int empty_runs;            /* UCI: a run of empty documents may be one jsmf_doc */
    uint64_t run;              /* documents the one being returned stands for */
};

/* ---- the formats ------------------------------------------------------------------------ */

static int sniff_uci(const unsigned char *const *ls, const unsigned char *const *le, int nl);
static int sniff_ldac(const unsigned char *const *ls, const unsigned char *const *le, int nl);
static int open_uci(jsmf_docs *r, const char *path, const jsmf_read_opts *o);
static int open_ldac(jsmf_docs *r, const char *path, const jsmf_read_opts *o);
static int next_text(jsmf_docs *r, jsmf_doc *d);
static int next_uci(jsmf_docs *r, jsmf_doc *d);
static int next_ldac(jsmf_docs *r, jsmf_doc *d);
static int next_items(jsmf_docs *r, jsmf_doc *d);

#define FORMAT_FIRST JSMF_FORMAT_TEXT
#define FORMAT_LAST JSMF_FORMAT_ITEMS

/* Indexed by jsmf_format; auto-detection tries them in this order (UCI's header before LDA-C's
 * pairs), text being what is neither. formats/inputs.md describes each. */
static const io_format formats[] = {
    /* one document a line, tokenised; what is neither of the others */
    [JSMF_FORMAT_TEXT] = {JSMF_FORMAT_TEXT, "text", "text", NULL, NULL, NULL, next_text,
                          .line_per_doc = 1, .tokens = 1, .stopwords = "en", .max_df_frac = 0.5},
    /* a header of D, W, NNZ, then "doc word count" lines grouped by document, over the words of
     * a vocabulary file that always comes with it */
    [JSMF_FORMAT_UCI] = {JSMF_FORMAT_UCI, "uci", "UCI", NULL, sniff_uci, open_uci, next_uci,
                         .line_per_doc = 0, .stopwords = "en", .max_df_frac = 0.5},
    /* one document a line, "N id:count ..." with 0-based ids, bounded (ldac_vocab_size) or
     * numbering a vocabulary file when one is given */
    [JSMF_FORMAT_LDAC] = {JSMF_FORMAT_LDAC, "ldac", "LDA-C", "lda-c", sniff_ldac, open_ldac,
                          next_ldac, .line_per_doc = 1, .stopwords = "en", .max_df_frac = 0.5},
    /* one basket a line, ids between blanks kept byte for byte; no stopwords, no max-df cut:
     * an item in most baskets is popular, not a function word */
    [JSMF_FORMAT_ITEMS] = {JSMF_FORMAT_ITEMS, "items", "items", NULL, NULL, NULL, next_items,
                           .line_per_doc = 1, .tokens = 1, .named_only = 1, .stopwords = "none",
                           .max_df_frac = 1},
};

const io_format *io_format_get(jsmf_format f)
{
    return f >= FORMAT_FIRST && f <= FORMAT_LAST ? &formats[f] : NULL;
}

int io_format_tokens(jsmf_format f)
{
    const io_format *x = io_format_get(f);
    return x && x->tokens;
}

void jsmf_format_vocab_defaults(jsmf_format f, const char **stopwords, double *max_df_frac)
{
    const io_format *x = io_format_get(f);
    if (!x) /* auto: what the formats sniffed share */
        x = &formats[JSMF_FORMAT_TEXT];
    if (stopwords)
        *stopwords = x->stopwords;
    if (max_df_frac)
        *max_df_frac = x->max_df_frac;
}

const char *jsmf_format_name(jsmf_format f)
{
    const io_format *x = io_format_get(f);
    return x ? x->name : f == JSMF_FORMAT_AUTO ? "auto" : NULL;
}

int jsmf_format_parse(const char *name)
{
    if (!name)
        return -1;
    if (!strcmp(name, "auto"))
        return JSMF_FORMAT_AUTO;
    for (jsmf_format f = FORMAT_FIRST; f <= FORMAT_LAST; f++)
        if (!strcmp(name, formats[f].name) || (formats[f].alias && !strcmp(name, formats[f].alias)))
            return f;
    return -1;
}

/* ---- small parsing helpers ---------------------------------------------------------------- */

static inline int is_blank(unsigned char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
static inline int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

static const unsigned char *skip_blanks(const unsigned char *p, const unsigned char *e)
{
    while (p < e && is_blank(*p))
        p++;
    return p;
}

/* A field: the bytes up to the next blank (or `stop` when non-zero). */
static size_t field_len(const unsigned char *p, const unsigned char *e, unsigned char stop)
{
    const unsigned char *q = p;
    while (q < e && !is_blank(*q) && *q != stop)
        q++;
    return (size_t)(q - p);
}

/* Parse an unsigned decimal of exactly `n` bytes at p. Returns 0, or -1 (not digits), -2 (overflow). */
static int parse_u64(const unsigned char *p, size_t n, uint64_t *v)
{
    if (n == 0)
        return -1;
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_digit(p[i]))
            return -1;
        unsigned d = p[i] - '0';
        if (x > (UINT64_MAX - d) / 10)
            return -2;
        x = x * 10 + d;
    }
    *v = x;
    return 0;
}

/* Shown in messages: at most 40 bytes of a field. */
#define FIELD_FMT "'%.*s%s'"
#define FIELD_ARG(p, n) (int)((n) > 40 ? 40 : (n)), (const char *)(p), ((n) > 40 ? "..." : "")

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 64;
    while (nc < need)
        nc *= 2;
    void *q = realloc(*p, nc * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = nc;
    return 0;
}

static int oom(const jsmf_docs *r)
{
    return jsmf_error(JSMF_ENOMEM, "%s: out of memory", r->s->name);
}

static int reserve_ids(jsmf_docs *r, size_t need)
{
    if (need <= r->id_cap)
        return 0;
    size_t cap = r->id_cap;
    if (grow((void **)&r->ids, &cap, need, sizeof *r->ids))
        return oom(r);
    cap = r->id_cap;
    if (grow((void **)&r->counts, &cap, need, sizeof *r->counts))
        return oom(r);
    cap = r->id_cap;
    if (grow((void **)&r->pairs, &cap, need, sizeof *r->pairs))
        return oom(r);
    r->id_cap = cap;
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Make the current document's ids unique (summing counts) and increasing. */
static int merge_repeats(jsmf_docs *r, uint64_t line, uint64_t off)
{
    size_t n = r->nids, i;
    for (i = 1; i < n; i++)
        if (r->ids[i] <= r->ids[i - 1])
            break;
    if (i >= n)
        return 0;
    for (i = 0; i < n; i++)
        r->pairs[i] = (uint64_t)r->ids[i] << 32 | r->counts[i];
    qsort(r->pairs, n, sizeof *r->pairs, cmp_u64);
    size_t m = 0;
    for (i = 0; i < n; i++) {
        uint32_t id = (uint32_t)(r->pairs[i] >> 32), c = (uint32_t)r->pairs[i];
        if (m > 0 && r->ids[m - 1] == id) {
            if (r->counts[m - 1] > UINT32_MAX - c)
                return jsmf_error(JSMF_EFORMAT,
                                  "%s:%" PRIu64 ": document at byte %" PRIu64
                                  ": total count of word id %u overflows 32 bits",
                                  r->s->name, line, off, id);
            r->counts[m - 1] += c;
        } else {
            r->ids[m] = id;
            r->counts[m] = c;
            m++;
        }
    }
    r->nids = m;
    return 0;
}

/* ---- format sniffing ---------------------------------------------------------------------- */

/* Is [p, e) one unsigned integer, blanks around allowed? */
static int line_is_integer(const unsigned char *p, const unsigned char *e)
{
    p = skip_blanks(p, e);
    size_t n = field_len(p, e, 0);
    uint64_t v;
    if (parse_u64(p, n, &v))
        return 0;
    return skip_blanks(p + n, e) == e;
}

static int line_is_triple(const unsigned char *p, const unsigned char *e)
{
    for (int k = 0; k < 3; k++) {
        p = skip_blanks(p, e);
        size_t n = field_len(p, e, 0);
        uint64_t v;
        if (parse_u64(p, n, &v))
            return 0;
        p += n;
    }
    return skip_blanks(p, e) == e;
}

/* "N id:count ...": returns the number of pairs, or -1 if the line is not of that shape. */
static long long line_ldac_pairs(const unsigned char *p, const unsigned char *e)
{
    p = skip_blanks(p, e);
    size_t n = field_len(p, e, 0);
    uint64_t v;
    if (parse_u64(p, n, &v))
        return -1;
    p += n;
    long long pairs = 0;
    for (;;) {
        p = skip_blanks(p, e);
        if (p == e)
            return pairs;
        size_t a = field_len(p, e, ':');
        if (parse_u64(p, a, &v) || p + a == e || p[a] != ':')
            return -1;
        p += a + 1;
        size_t b = field_len(p, e, 0);
        if (parse_u64(p, b, &v))
            return -1;
        p += b;
        pairs++;
    }
}

/* UCI: three lines of one integer (D, W, NNZ), then a "doc word count" line if any. */
static int sniff_uci(const unsigned char *const *ls, const unsigned char *const *le, int nl)
{
    return nl >= 3 && line_is_integer(ls[0], le[0]) && line_is_integer(ls[1], le[1]) &&
           line_is_integer(ls[2], le[2]) && (nl == 3 || line_is_triple(ls[3], le[3]));
}

/* LDA-C: every line "N id:count ..." or empty, and at least one pair among them. */
static int sniff_ldac(const unsigned char *const *ls, const unsigned char *const *le, int nl)
{
    int with_pairs = 0;
    for (int i = 0; i < nl; i++) {
        long long k = line_ldac_pairs(ls[i], le[i]);
        if (k < 0) {
            if (skip_blanks(ls[i], le[i]) == le[i])
                continue; /* an empty line is an empty document in either format */
            return 0;
        }
        with_pairs |= k > 0;
    }
    return with_pairs;
}

/* Look at up to 64 KiB of complete lines from the start: the first format of the table whose
 * sniff accepts them, else the fallback (text). */
static jsmf_format sniff(const unsigned char *p, size_t n, int at_eof)
{
    const unsigned char *ls[16], *le[16];
    int nl = 0;
    const unsigned char *q = p, *end = p + n;
    while (nl < 16 && q < end) {
        const unsigned char *x = memchr(q, '\n', (size_t)(end - q));
        if (!x) {
            if (!at_eof)
                break;
            x = end;
        }
        ls[nl] = q, le[nl] = x;
        nl++;
        q = x + 1;
    }
    jsmf_format fallback = JSMF_FORMAT_TEXT;
    for (jsmf_format f = FORMAT_FIRST; f <= FORMAT_LAST; f++) {
        if (formats[f].named_only)
            continue;
        if (!formats[f].sniff)
            fallback = f;
        else if (formats[f].sniff(ls, le, nl))
            return f;
    }
    return fallback;
}

/* ---- UCI header and vocabulary -------------------------------------------------------------- */

/* "dir/docword.X.txt[.zst]" -> "dir/vocab.X.txt"; NULL if the name does not follow the pattern. */
static char *uci_vocab_path(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (strncmp(base, "docword.", 8))
        return NULL;
    size_t dirlen = (size_t)(base - path), rest = strlen(base + 8);
    static const char *const suffixes[] = {".zst", ".zstd"};
    for (size_t i = 0; i < 2; i++) {
        size_t sl = strlen(suffixes[i]);
        if (rest > sl && !strcmp(base + 8 + rest - sl, suffixes[i])) {
            rest -= sl;
            break;
        }
    }
    char *out = malloc(dirlen + 6 + rest + 1);
    if (!out)
        return NULL;
    memcpy(out, path, dirlen);
    memcpy(out + dirlen, "vocab.", 6);
    memcpy(out + dirlen + 6, base + 8, rest);
    out[dirlen + 6 + rest] = 0;
    return out;
}

static int read_header_value(jsmf_docs *r, const char *what, uint64_t *v)
{
    const unsigned char *line;
    size_t n;
    uint64_t off;
    uint64_t lineno = r->s->line;
    int rc = io_stream_line(r->s, &line, &n, &off);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return jsmf_error(JSMF_EFORMAT,
                          "%s:%" PRIu64 ": malformed UCI header: input ends before line %" PRIu64
                          " (%s)", r->s->name, lineno, lineno, what);
    const unsigned char *e = line + n, *p = skip_blanks(line, e);
    size_t f = field_len(p, e, 0);
    int bad = parse_u64(p, f, v);
    if (bad || skip_blanks(p + f, e) != e)
        return jsmf_error(JSMF_EFORMAT,
                          "%s:%" PRIu64 ": malformed UCI header: line %" PRIu64
                          " must hold %s as one non-negative integer, got " FIELD_FMT "%s",
                          r->s->name, lineno, lineno, what, FIELD_ARG(line, n),
                          bad == -2 ? " (too large)" : "");
    return 0;
}

static int uci_open(jsmf_docs *r, const char *path, const jsmf_read_opts *o)
{
    int rc;
    if ((rc = read_header_value(r, "D, the number of documents", &r->D)) ||
        (rc = read_header_value(r, "W, the number of words", &r->W)) ||
        (rc = read_header_value(r, "NNZ, the number of (doc, word) lines", &r->NNZ)))
        return rc;
    if (r->W == 0 || r->W > UINT32_MAX)
        return jsmf_error(JSMF_EFORMAT, "%s:2: malformed UCI header: W = %" PRIu64
                          " must be between 1 and 4294967295", r->s->name, r->W);
    if (r->D > 0 && r->NNZ / r->D > r->W)
        return jsmf_error(JSMF_EFORMAT, "%s:3: malformed UCI header: NNZ = %" PRIu64
                          " exceeds D x W = %" PRIu64 " x %" PRIu64, r->s->name, r->NNZ, r->D, r->W);
    if (r->D == 0 && r->NNZ > 0)
        return jsmf_error(JSMF_EFORMAT, "%s:3: malformed UCI header: NNZ = %" PRIu64
                          " but D = 0", r->s->name, r->NNZ);
    r->id_bound = (uint32_t)r->W;
    char *vpath = NULL;
    const char *vp = o->uci_vocab;
    if (!vp) {
        vpath = strcmp(path, "-") ? uci_vocab_path(path) : NULL;
        if (!vpath)
            return jsmf_error(JSMF_EINVAL,
                              "%s: UCI input needs its vocabulary file: name it (--uci-vocab), "
                              "or call the input docword.X.txt[.zst] with vocab.X.txt beside it",
                              r->s->name);
        vp = vpath;
    }
    rc = jsmf_vocab_load(vp, &r->vocab);
    if (rc == JSMF_ENOTFOUND && vpath)
        rc = jsmf_error(JSMF_ENOTFOUND, "%s: UCI vocabulary %s not found (give it with "
                        "--uci-vocab)", r->s->name, vpath);
    if (!rc && r->vocab->n != r->W)
        rc = jsmf_error(JSMF_EFORMAT, "%s: UCI header says W = %" PRIu64 " words but %s has %u",
                        r->s->name, r->W, vp, r->vocab->n);
    free(vpath);
    return rc;
}

/* UCI: the header and the vocabulary file, and a resume point past the header. */
static int open_uci(jsmf_docs *r, const char *path, const jsmf_read_opts *o)
{
    int rc = uci_open(r, path, o);
    if (rc)
        return rc;
    uint64_t header_end = io_stream_offset(r->s);
    r->check_nnz = o->start_offset <= header_end;
    if (o->start_offset > 0 && o->start_offset < header_end)
        return jsmf_error(JSMF_EINVAL, "%s: resume offset %" PRIu64
                          " falls inside the UCI header (%" PRIu64 " bytes)",
                          r->s->name, o->start_offset, header_end);
    if (o->start_doc > r->D)
        return jsmf_error(JSMF_EINVAL, "%s: resume at document %" PRIu64 " but D = %" PRIu64,
                          r->s->name, o->start_doc, r->D);
    return JSMF_OK;
}

/* LDA-C: the id bound, and the vocabulary file its ids number when one is given. */
static int open_ldac(jsmf_docs *r, const char *path, const jsmf_read_opts *o)
{
    (void)path;
    r->id_bound = o->ldac_vocab_size;
    if (o->uci_vocab) {
        int rc = jsmf_vocab_load(o->uci_vocab, &r->vocab);
        if (rc)
            return rc;
        if (!r->id_bound || r->id_bound > r->vocab->n)
            r->id_bound = r->vocab->n;
    }
    return JSMF_OK;
}

/* ---- open / close ------------------------------------------------------------------------- */

int docs_open(const char *path, const jsmf_read_opts *opts, jsmf_docs **out)
{
    *out = NULL;
    jsmf_read_opts def = JSMF_READ_OPTS_DEFAULT;
    const jsmf_read_opts *o = opts ? opts : &def;
    if (o->format != JSMF_FORMAT_AUTO && !io_format_get(o->format))
        return jsmf_error(JSMF_EINVAL, "%s: unknown input format %d", path, (int)o->format);
    jsmf_docs *r = calloc(1, sizeof *r);
    if (!r)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    r->tok = o->tok;
    r->raw = o->raw_text; /* text only: next_items splits its lines itself */
    r->empty_runs = o->empty_runs;
    if (r->tok.min_len == 0 && r->tok.max_len == 0) {
        jsmf_tokenizer d = JSMF_TOKENIZER_DEFAULT;
        r->tok = d;
    }
    /* token counts are 32-bit: a line holds fewer than 2^32 bytes */
    uint64_t max_line = o->max_line > UINT32_MAX ? UINT32_MAX : o->max_line;
    int rc = io_stream_open(path, max_line, o->threads, &r->s);
    if (rc)
        goto fail;
    r->fmt = o->format;
    if (r->fmt == JSMF_FORMAT_AUTO) {
        const unsigned char *p;
        long long n = io_stream_peek(r->s, 65536, &p);
        if (n < 0) {
            rc = (int)n;
            goto fail;
        }
        r->fmt = sniff(p, (size_t)n, r->s->eof && r->s->len - r->s->pos == (size_t)n);
    }
    r->s->reject_nul = 1;
    const io_format *fmt = &formats[r->fmt];
    if (fmt->open && (rc = fmt->open(r, path, o)))
        goto fail;
    /* A resume point names the line at its offset; reading from the start (a UCI file: from
     * the end of its header) keeps the lines counted so far, so messages give file lines. */
    uint64_t here = io_stream_offset(r->s);
    if (o->start_offset > here) {
        if ((rc = io_stream_seek(r->s, o->start_offset)))
            goto fail;
        r->s->line = o->start_line ? o->start_line : 1;
    } else if (o->start_offset > 0 && o->start_line > 0) {
        r->s->line = o->start_line;
    }
    r->index = o->start_doc;
    if (o->end_offset && !fmt->line_per_doc) {
        /* a document spans lines: a byte range does not end at a document boundary */
        rc = jsmf_error(JSMF_EINVAL, "%s: %s input cannot be read in pieces", r->s->name,
                        fmt->title);
        goto fail;
    }
    r->end_offset = o->end_offset;
    *out = r;
    return JSMF_OK;
fail:
    docs_close(r);
    return rc;
}

void docs_close(jsmf_docs *r)
{
    if (!r)
        return;
    io_stream_close(r->s);
    free(r->tbuf);
    free(r->toks);
    free(r->toklens);
    free(r->ids);
    free(r->counts);
    free(r->pairs);
    jsmf_vocab_free(r->vocab);
    free(r);
}

jsmf_format docs_format(const jsmf_docs *r) { return r->fmt; }
const jsmf_vocab *docs_vocab(const jsmf_docs *r) { return r->vocab; }
uint64_t docs_size(const jsmf_docs *r) { return r->s->disk_size; }
uint64_t docs_disk_position(const jsmf_docs *r) { return io_stream_disk_position(r->s); }
const char *docs_name(const jsmf_docs *r) { return r->s->name; }

void docs_progress(const jsmf_docs *r, jsmf_step_progress_fn progress, void *arg)
{
    if (progress)
        progress(arg, r->s->name, (double)docs_disk_position(r) / 1e6,
                 (double)r->s->disk_size / 1e6, "MB");
}

int docs_fingerprint(jsmf_docs *r, uint64_t *hash, uint64_t *size)
{
    return io_stream_fingerprint(r->s, hash, size);
}

/* ---- text and items ----------------------------------------------------------------------- */

/* The next line as a document's text, a UTF-8 byte-order mark at the start of the input skipped
 * (*bom: its 3 bytes, or 0): it is not part of the first word. 1, 0 at the end, or an error. */
static int read_line_doc(jsmf_docs *r, jsmf_doc *d, const unsigned char **line, size_t *n,
                         uint64_t *bom)
{
    uint64_t off;
    int rc = io_stream_line(r->s, line, n, &off);
    if (rc <= 0)
        return rc;
    *bom = 0;
    if (off == 0 && *n >= 3 && !memcmp(*line, "\xEF\xBB\xBF", 3)) {
        *line += 3;
        *n -= 3;
        *bom = 3;
    }
    d->offset = off;
    d->line = r->s->line - 1;
    d->text = (const char *)*line;
    d->text_len = *n;
    return 1;
}

/* Room for the tokens of a line of n bytes: their bytes with the pad after them, and `most`
 * (pointer, length) spans. */
static int reserve_tokens(jsmf_docs *r, size_t n, size_t most)
{
    size_t cap = r->tok_cap;
    if (grow((void **)&r->tbuf, &r->tbuf_cap, n + JSMF_TOKEN_PAD, 1) ||
        grow((void **)&r->toks, &cap, most, sizeof *r->toks))
        return oom(r);
    cap = r->tok_cap;
    if (grow((void **)&r->toklens, &cap, most, sizeof *r->toklens))
        return oom(r);
    r->tok_cap = cap;
    return 0;
}

/* `count` tokens dropped as invalid UTF-8, the first at decoded byte `at` of line `line`. */
static void note_bad_utf8(jsmf_docs *r, uint64_t line, uint64_t at, uint64_t count)
{
    if (count && !r->st.bad_utf8) {
        r->st.bad_utf8_line = line;
        r->st.bad_utf8_offset = at;
    }
    r->st.bad_utf8 += count;
}

static int next_text(jsmf_docs *r, jsmf_doc *d)
{
    const unsigned char *line;
    size_t n;
    uint64_t bom;
    int rc = read_line_doc(r, d, &line, &n, &bom);
    if (rc <= 0 || r->raw)
        return rc;
    if (reserve_tokens(r, n, JSMF_TOKENS_MAX(n, r->tok.min_len)))
        return oom(r);
    jsmf_token_stats ts;
    d->ntokens = tokenize_ex(&r->tok, (const char *)line, n, r->tbuf, r->toks, r->toklens,
                                  &ts);
    note_bad_utf8(r, d->line, d->offset + bom + ts.first_bad, ts.bad_utf8);
    memset(r->tbuf + n, 0, JSMF_TOKEN_PAD); /* defined bytes for word-at-a-time readers */
    d->tok = r->toks;
    d->toklen = r->toklens;
    return 1;
}

/* A basket: every run of non-blank bytes is an item id, byte for byte. An id too long is an
 * error, not cut (a cut id could merge with another); one that is not UTF-8 is dropped and
 * counted as text's tokens are (it could not be told apart from another encoding's). */
static int next_items(jsmf_docs *r, jsmf_doc *d)
{
    const unsigned char *line;
    size_t n;
    uint64_t bom;
    int rc = read_line_doc(r, d, &line, &n, &bom);
    if (rc <= 0)
        return rc;
    if (reserve_tokens(r, n, n / 2 + 1))
        return oom(r);
    const unsigned char *e = line + n, *p = line;
    char *o = r->tbuf;
    uint32_t k = 0;
    for (;;) {
        p = skip_blanks(p, e);
        if (p == e)
            break;
        size_t len = field_len(p, e, 0);
        uint64_t at = d->offset + bom + (uint64_t)(p - line);
        if (len > JSMF_ITEM_MAX_BYTES)
            return jsmf_error(JSMF_EFORMAT, "%s:%" PRIu64 ": item id of %zu bytes at byte %"
                              PRIu64 " is longer than the limit of %d bytes: " FIELD_FMT
                              " (formats/inputs.md, \"Items\")", r->s->name, d->line, len, at,
                              JSMF_ITEM_MAX_BYTES, FIELD_ARG(p, len));
        if (utf8_valid(p, len)) {
            memcpy(o, p, len);
            r->toks[k] = o;
            r->toklens[k++] = (uint32_t)len;
            o += len;
        } else {
            note_bad_utf8(r, d->line, at, 1);
        }
        p += len;
    }
    memset(o, 0, JSMF_TOKEN_PAD); /* defined bytes for word-at-a-time readers */
    d->ntokens = k;
    d->tok = r->toks;
    d->toklen = r->toklens;
    return 1;
}

/* ---- LDA-C -------------------------------------------------------------------------------- */

static int next_ldac(jsmf_docs *r, jsmf_doc *d)
{
    const unsigned char *line;
    size_t n;
    uint64_t off;
    int rc = io_stream_line(r->s, &line, &n, &off);
    if (rc <= 0)
        return rc;
    uint64_t lineno = r->s->line - 1;
    const char *name = r->s->name;
    d->offset = off;
    d->line = lineno;
    r->nids = 0;
    const unsigned char *e = line + n, *p = skip_blanks(line, e);
    if (p == e)
        return 1; /* empty line: a document with no words */
    size_t f = field_len(p, e, 0);
    uint64_t N;
    if (parse_u64(p, f, &N))
        return jsmf_error(JSMF_EFORMAT, "%s:%" PRIu64 ": LDA-C line must start with N, the number "
                          "of id:count pairs, got " FIELD_FMT " (byte %" PRIu64 ")",
                          name, lineno, FIELD_ARG(p, f), off + (uint64_t)(p - line));
    p += f;
    if (reserve_ids(r, N < n / 4 + 1 ? N + 1 : n / 4 + 1))
        return oom(r);
    for (;;) {
        p = skip_blanks(p, e);
        if (p == e)
            break;
        uint64_t at = off + (uint64_t)(p - line), id, cnt;
        size_t a = field_len(p, e, ':');
        int bad = parse_u64(p, a, &id);
        if (bad || p + a == e || p[a] != ':') {
            size_t whole = field_len(p, e, 0);
            return jsmf_error(JSMF_EFORMAT, "%s:%" PRIu64 ": expected id:count, got " FIELD_FMT
                              " (byte %" PRIu64 ")", name, lineno, FIELD_ARG(p, whole), at);
        }
        if (id >= UINT32_MAX || (r->id_bound && id >= r->id_bound))
            return jsmf_error(JSMF_EFORMAT, "%s:%" PRIu64 ": word id %" PRIu64
                              " out of range (must be below %u) (byte %" PRIu64 ")",
                              name, lineno, id, r->id_bound ? r->id_bound : UINT32_MAX, at);
        const unsigned char *c = p + a + 1;
        size_t b = field_len(c, e, 0);
        bad = parse_u64(c, b, &cnt);
        if (bad == -1)
            return jsmf_error(JSMF_EFORMAT, "%s:%" PRIu64 ": count " FIELD_FMT " of word id %"
                              PRIu64 " is not a positive integer (byte %" PRIu64 ")",
                              name, lineno, FIELD_ARG(c, b), id, at);
        if (bad == -2 || cnt > UINT32_MAX)
            return jsmf_error(JSMF_EFORMAT, "%s:%" PRIu64 ": count " FIELD_FMT " of word id %"
                              PRIu64 " is too large (byte %" PRIu64 ")",
                              name, lineno, FIELD_ARG(c, b), id, at);
        if (cnt == 0)
            return jsmf_error(JSMF_EFORMAT, "%s:%" PRIu64 ": count of word id %" PRIu64
                              " is 0; counts must be >= 1 (byte %" PRIu64 ")", name, lineno, id, at);
        if (reserve_ids(r, r->nids + 1))
            return oom(r);
        r->ids[r->nids] = (uint32_t)id;
        r->counts[r->nids] = (uint32_t)cnt;
        r->nids++;
        p = c + b;
    }
    if (N != r->nids)
        return jsmf_error(JSMF_EFORMAT, "%s:%" PRIu64 ": N = %" PRIu64 " but the line has %zu "
                          "id:count pairs (byte %" PRIu64 ")", name, lineno, N, r->nids, off);
    int rc2 = merge_repeats(r, lineno, off);
    return rc2 ? rc2 : 1;
}

/* ---- UCI ---------------------------------------------------------------------------------- */

/* Read the next "docID wordID count" line into the pending slot. Returns 1, 0 at end, or error. */
static int uci_read_triple(jsmf_docs *r)
{
    const unsigned char *line;
    size_t n;
    uint64_t off;
    for (;;) {
        int rc = io_stream_line(r->s, &line, &n, &off);
        if (rc <= 0)
            return rc;
        if (skip_blanks(line, line + n) != line + n)
            break; /* blank lines carry nothing and are skipped */
    }
    uint64_t lineno = r->s->line - 1;
    const char *name = r->s->name;
    static const char *const what[3] = {"docID", "wordID", "count"};
    uint64_t v[3];
    const unsigned char *e = line + n, *p = line;
    for (int k = 0; k < 3; k++) {
        p = skip_blanks(p, e);
        size_t f = field_len(p, e, 0);
        uint64_t at = off + (uint64_t)(p - line);
        if (f == 0)
            return jsmf_error(JSMF_EFORMAT, "%s:%" PRIu64 ": expected 'docID wordID count', the "
                              "line ends before %s (byte %" PRIu64 ")", name, lineno, what[k], at);
        int bad = parse_u64(p, f, &v[k]);
        if (bad == -1)
            return jsmf_error(JSMF_EFORMAT, "%s:%" PRIu64 ": %s " FIELD_FMT " is not a positive "
                              "integer (byte %" PRIu64 ")", name, lineno, what[k], FIELD_ARG(p, f), at);
        if (bad == -2)
            return jsmf_error(JSMF_EFORMAT, "%s:%" PRIu64 ": %s " FIELD_FMT " is too large (byte %"
                              PRIu64 ")", name, lineno, what[k], FIELD_ARG(p, f), at);
        p += f;
    }
    if (skip_blanks(p, e) != e)
        return jsmf_error(JSMF_EFORMAT, "%s:%" PRIu64 ": expected 'docID wordID count', found more "
                          "fields (byte %" PRIu64 ")", name, lineno, off);
    if (v[0] < 1 || v[0] > r->D)
        return jsmf_error(JSMF_EFORMAT, "%s:%" PRIu64 ": docID %" PRIu64 " out of range 1..%" PRIu64
                          " (byte %" PRIu64 ")", name, lineno, v[0], r->D, off);
    if (v[1] < 1 || v[1] > r->W)
        return jsmf_error(JSMF_EFORMAT, "%s:%" PRIu64 ": wordID %" PRIu64 " out of range 1..%" PRIu64
                          " (byte %" PRIu64 ")", name, lineno, v[1], r->W, off);
    if (v[2] == 0)
        return jsmf_error(JSMF_EFORMAT, "%s:%" PRIu64 ": count is 0; counts must be >= 1 (byte %"
                          PRIu64 ")", name, lineno, off);
    if (v[2] > UINT32_MAX)
        return jsmf_error(JSMF_EFORMAT, "%s:%" PRIu64 ": count %" PRIu64 " is too large (byte %"
                          PRIu64 ")", name, lineno, v[2], off);
    if (v[0] <= r->index) { /* the slot still holds the line read before this one, if any */
        if (r->p_doc)
            return jsmf_error(JSMF_EFORMAT, "%s:%" PRIu64 ": documents out of order: docID %"
                              PRIu64 " after docID %" PRIu64 " on line %" PRIu64 " (byte %"
                              PRIu64 "; a document's lines must come together, by increasing "
                              "docID)", name, lineno, v[0], r->p_doc, r->p_line, off);
        return jsmf_error(JSMF_EFORMAT, "%s:%" PRIu64 ": documents out of order: docID %" PRIu64
                          " where the read resumed after docID %" PRIu64 " (byte %" PRIu64 ")",
                          name, lineno, v[0], r->index, off);
    }
    r->nnz_seen++;
    r->pending = 1;
    r->p_doc = v[0];
    r->p_word = (uint32_t)(v[1] - 1);
    r->p_count = (uint32_t)v[2];
    r->p_off = off;
    r->p_line = lineno;
    return 1;
}

static int uci_check_end(jsmf_docs *r)
{
    if (r->check_nnz && !r->nnz_checked && r->nnz_seen != r->NNZ)
        return jsmf_error(JSMF_EFORMAT, "%s:3: UCI header says NNZ = %" PRIu64 " but the file "
                          "has %" PRIu64 " docID wordID count lines (it ends at line %" PRIu64 ")",
                          r->s->name, r->NNZ, r->nnz_seen, r->s->line - 1);
    r->nnz_checked = 1;
    return 0;
}

static int next_uci(jsmf_docs *r, jsmf_doc *d)
{
    int rc;
    uint64_t want = r->index + 1; /* the docID of the document to return */
    if (!r->pending && (rc = uci_read_triple(r)) < 0)
        return rc;
    if (!r->pending) { /* end of input: documents up to D with no lines are empty */
        if ((rc = uci_check_end(r)))
            return rc;
        if (r->index >= r->D)
            return 0;
        d->offset = io_stream_offset(r->s);
        d->line = r->s->line;
        r->nids = 0;
        r->run = r->empty_runs ? r->D - r->index : 1;
        return 1;
    }
    d->offset = r->p_off;
    d->line = r->p_line;
    r->nids = 0;
    if (r->p_doc > want) { /* docIDs with no lines: empty documents at this boundary */
        r->run = r->empty_runs ? r->p_doc - want : 1;
        return 1;
    }
    for (;;) {
        if (reserve_ids(r, r->nids + 1))
            return oom(r);
        r->ids[r->nids] = r->p_word;
        r->counts[r->nids] = r->p_count;
        r->nids++;
        r->pending = 0;
        /* lines of a later document end this one; read-ahead compares against `want` */
        uint64_t save = r->index;
        r->index = want - 1;
        rc = uci_read_triple(r);
        r->index = save;
        if (rc < 0)
            return rc;
        if (rc == 0 || r->p_doc != want)
            break;
    }
    rc = merge_repeats(r, d->line, d->offset);
    return rc ? rc : 1;
}

/* The next document: 1, 0 at the end, or a negative code. */
static int docs_next_one(jsmf_docs *r, jsmf_doc *d)
{
    memset(d, 0, sizeof *d);
    if (r->end_offset && formats[r->fmt].line_per_doc && io_stream_offset(r->s) >= r->end_offset)
        return 0; /* the end of this piece: the next document is another process's */
    r->run = 1;
    int rc = formats[r->fmt].next(r, d);
    if (rc <= 0)
        return rc;
    d->index = r->index;
    d->ndocs = r->run;
    r->index += r->run;
    if (r->fmt == JSMF_FORMAT_UCI && r->pending) {
        d->next_offset = r->p_off;
        d->next_line = r->p_line;
        if (d->offset > d->next_offset) /* empty document: it occupies no bytes */
            d->offset = d->next_offset;
    } else {
        d->next_offset = io_stream_offset(r->s);
        d->next_line = r->s->line;
    }
    int tokens = formats[r->fmt].tokens;
    if (!tokens) {
        d->nids = (uint32_t)r->nids;
        d->ids = r->ids;
        d->counts = r->counts;
    }
    r->st.docs += r->run;
    if (r->raw && r->fmt == JSMF_FORMAT_TEXT ? d->text_len == 0
                                             : tokens ? d->ntokens == 0 : d->nids == 0)
        r->st.empty_docs += r->run;
    return 1;
}

int docs_next(jsmf_docs *r, jsmf_doc *d, int *got)
{
    int rc = docs_next_one(r, d);
    *got = rc == 1;
    return rc < 0 ? rc : JSMF_OK;
}

void docs_stats(const jsmf_docs *r, jsmf_read_stats *out) { *out = r->st; }

void read_stats_warn(const char *name, const jsmf_read_stats *st, jsmf_warn_fn warn,
                          void *arg)
{
    char msg[1400];
    if (!warn)
        return;
    if (st->docs == 0) {
        snprintf(msg, sizeof msg, "%s: empty input: no documents", name);
        warn(arg, msg);
    } else if (st->empty_docs == st->docs) {
        snprintf(msg, sizeof msg, "%s: all %" PRIu64 " document%s empty (blank lines, or no "
                 "token a word could match)", name, st->docs, st->docs == 1 ? " is" : "s are");
        warn(arg, msg);
    }
    if (st->bad_utf8) {
        snprintf(msg, sizeof msg, "%s:%" PRIu64 ": invalid UTF-8 at byte %" PRIu64 ": %" PRIu64
                 " token%s with invalid UTF-8 dropped from this input (is it in another "
                 "encoding? formats/inputs.md)", name, st->bad_utf8_line, st->bad_utf8_offset,
                 st->bad_utf8, st->bad_utf8 == 1 ? "" : "s");
        warn(arg, msg);
    }
}

void jsmf_read_opts_init(jsmf_read_opts *o)
{
    *o = (jsmf_read_opts)JSMF_READ_OPTS_DEFAULT;
}
