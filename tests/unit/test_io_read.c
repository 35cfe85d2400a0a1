/* test_io_read.c — the input readers: tokenizer cases, the three formats giving the same
 * documents for one generated corpus, file / .zst / pipe giving identical documents and offsets,
 * resuming from every document boundary, the fingerprint hash, and every malformed input. */
#include <fcntl.h>
#include <stdarg.h>
#include <strings.h>
#include <inttypes.h>
#include <omp.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "jsmf_io.h"
#include "io/docs.h"
#include "io/hash.h"

/* docs_next as one value: 1 (a document), 0 (the end) or a negative code. */
static int next_doc(jsmf_docs *r, jsmf_doc *d)
{
    int got, rc = docs_next(r, d, &got);
    return rc ? rc : got;
}

static char dir[256];

static char *path_in(const char *name)
{
    static char bufs[8][512];
    static int k;
    char *p = bufs[k++ % 8];
    snprintf(p, 512, "%s/%s", dir, name);
    return p;
}

static void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, n, f) != n) {
        perror(path);
        exit(2);
    }
    fclose(f);
}

static void write_str(const char *path, const char *s) { write_bytes(path, s, strlen(s)); }

static void zstd_file(const char *in, const char *out, const char *flags)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "zstd -q -f %s '%s' -o '%s'", flags, in, out);
    if (system(cmd) != 0) {
        fprintf(stderr, "zstd failed: %s\n", cmd);
        exit(2);
    }
}

/* ---- documents as comparable strings --------------------------------------------------------- */

typedef struct {
    char *s;
    size_t n, cap;
} sbuf;

static void sb_add(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_add(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (b->s && b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return;
        }
        b->cap = (b->cap + (size_t)k + 1) * 2;
        b->s = realloc(b->s, b->cap);
        if (!b->n)
            b->s[0] = 0;
    }
}

/* Read every document of `path`; the result lists, per document, its numbers and content.
 * words: map ids to strings through the reader's vocabulary, or (text) keep tokens. */
static int read_all(const char *path, const jsmf_read_opts *o, sbuf *out, int with_offsets)
{
    jsmf_docs *r;
    int rc = docs_open(path, o, &r);
    if (rc)
        return rc;
    jsmf_doc d;
    while ((rc = next_doc(r, &d)) == 1) {
        sb_add(out, "#%" PRIu64, d.index);
        if (with_offsets)
            sb_add(out, " @%" PRIu64 "-%" PRIu64 " L%" PRIu64 "-%" PRIu64, d.offset, d.next_offset,
                   d.line, d.next_line);
        sb_add(out, ":");
        for (uint32_t i = 0; i < d.ntokens; i++)
            sb_add(out, " %.*s", (int)d.toklen[i], d.tok[i]);
        for (uint32_t i = 0; i < d.nids; i++)
            sb_add(out, " %u:%u", d.ids[i], d.counts[i]);
        sb_add(out, "\n");
    }
    docs_close(r);
    return rc;
}

/* ---- a small generated corpus ---------------------------------------------------------------- */

#define NDOCS 40
static const char *const words[] = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta",
                                    "theta", "iota", "kappa", "lambda", "omicron", "Upsilon", "sigma"};
#define NWORDS (sizeof words / sizeof words[0])
static int doc_word[NDOCS][NWORDS]; /* counts per document of each word (lowercased "nu") */

static uint64_t rng = 88172645463325252ULL;
static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

/* Text corpus (with empty documents, punctuation, CRLF on some lines); UCI (1-based, a repeated
 * wordID split over two lines, docs with no words left out) and LDA-C of the same counts. */
static void make_corpus(void)
{
    FILE *t = fopen(path_in("corpus.txt"), "wb");
    for (int d = 0; d < NDOCS; d++) {
        int len = (d % 7 == 3) ? 0 : 1 + (int)rnd(30);
        for (int i = 0; i < len; i++) {
            int w = (int)rnd(NWORDS);
            doc_word[d][w]++;
            fprintf(t, "%s%s", i ? (rnd(4) ? " " : ", ") : "", words[w]);
            if (rnd(10) == 0)
                fputs(" 42 a-", t); /* a number and a too-short run: no tokens */
        }
        fputs(d % 5 == 1 ? "\r\n" : "\n", t);
    }
    fclose(t);
    /* ids: the alphabetical order of lowercased words */
    FILE *v = fopen(path_in("vocab.c.txt"), "wb");
    for (size_t w = 0; w < NWORDS; w++) {
        char lw[16];
        size_t i;
        for (i = 0; words[w][i]; i++)
            lw[i] = (char)(words[w][i] | 0x20);
        lw[i] = 0;
        fprintf(v, "%s\n", lw);
    }
    fclose(v);
    uint64_t nnz = 0;
    for (int d = 0; d < NDOCS; d++)
        for (size_t w = 0; w < NWORDS; w++)
            nnz += doc_word[d][w] > 0 ? (doc_word[d][w] > 1 && w == 2 ? 2 : 1) : 0;
    FILE *u = fopen(path_in("docword.c.txt"), "wb");
    fprintf(u, "%d\n%zu\n%" PRIu64 "\n", NDOCS, NWORDS, nnz);
    FILE *l = fopen(path_in("corpus.ldac"), "wb");
    for (int d = 0; d < NDOCS; d++) {
        int n = 0;
        for (size_t w = 0; w < NWORDS; w++)
            n += doc_word[d][w] > 0;
        fprintf(l, "%d", n);
        for (size_t w = NWORDS; w-- > 0;) /* descending ids: the reader must sort */
            if (doc_word[d][w])
                fprintf(l, " %zu:%d", w, doc_word[d][w]);
        fputc('\n', l);
        for (size_t w = 0; w < NWORDS; w++) {
            int c = doc_word[d][w];
            if (!c)
                continue;
            if (c > 1 && w == 2) /* repeated wordID: summed by the reader */
                fprintf(u, "%d %zu %d\n%d %zu %d\n", d + 1, w + 1, 1, d + 1, w + 1, c - 1);
            else
                fprintf(u, "%d %zu %d\n", d + 1, w + 1, c);
        }
    }
    fclose(u);
    fclose(l);
}

/* The expected id:count content of each document, as read_all prints it without offsets. */
static void expected_ids(sbuf *b)
{
    for (int d = 0; d < NDOCS; d++) {
        sb_add(b, "#%d:", d);
        for (size_t w = 0; w < NWORDS; w++)
            if (doc_word[d][w])
                sb_add(b, " %zu:%d", w, doc_word[d][w]);
        sb_add(b, "\n");
    }
}

/* Text documents turned into id:count through the word list (tokens map back to words). */
static void text_as_ids(const char *path, sbuf *b)
{
    jsmf_docs *r;
    CHECK_OK(docs_open(path, NULL, &r));
    if (!r)
        return;
    jsmf_doc d;
    while (next_doc(r, &d) == 1) {
        int cnt[NWORDS] = {0};
        for (uint32_t i = 0; i < d.ntokens; i++)
            for (size_t w = 0; w < NWORDS; w++)
                if (strlen(words[w]) == d.toklen[i] && !strncasecmp(words[w], d.tok[i], d.toklen[i]))
                    cnt[w]++;
        sb_add(b, "#%" PRIu64 ":", d.index);
        for (size_t w = 0; w < NWORDS; w++)
            if (cnt[w])
                sb_add(b, " %zu:%d", w, cnt[w]);
        sb_add(b, "\n");
    }
    docs_close(r);
}

/* ---- tests ------------------------------------------------------------------------------------ */

static void test_tokenizer(void)
{
    jsmf_tokenizer t = JSMF_TOKENIZER_DEFAULT;
    const char *text = "Hello, WORLD! it's a re-run of café_au_lait x42abc 12345 ab "
                       "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmno";
    size_t n = strlen(text);
    char out[256];
    const char *tok[128];
    uint32_t len[128];
    uint32_t k = jsmf_tokenize(&t, text, n, out, tok, len);
    const char *want[] = {"hello", "world", "run", "café", "lait", "abc"};
    CHECK(k == 6);
    for (uint32_t i = 0; i < k && i < 6; i++)
        CHECK(len[i] == strlen(want[i]) && !memcmp(tok[i], want[i], len[i]));
    /* max_len 64: the 67-letter run is dropped, a 64-letter one kept */
    jsmf_tokenizer t2 = {.min_len = 1, .max_len = 5};
    k = jsmf_tokenize(&t2, "a bb ccccc dddddd", 17, out, tok, len);
    CHECK(k == 3 && len[2] == 5);
    /* worst case for the token bound: single letters, min_len 1 */
    k = jsmf_tokenize(&t2, "a b c d e", 9, out, tok, len);
    CHECK(k == 5 && k <= JSMF_TOKENS_MAX(9, 1));
    CHECK(jsmf_tokenize(&t, "", 0, out, tok, len) == 0);
    CHECK(jsmf_tokenize(&t, "\x01\x02 12 !!", 8, out, tok, len) == 0);
    /* NUL separates inside the tokenizer (the reader rejects it earlier) */
    k = jsmf_tokenize(&t2, "ab\0cd", 5, out, tok, len);
    CHECK(k == 2);
}

static void test_hash(void)
{
    unsigned char data[1000];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (unsigned char)(i * 131 + 7);
    jsmf_hash h;
    hash_init(&h);
    hash_update(&h, data, sizeof data);
    uint64_t whole = hash_final(&h);
    /* known answers from an independent implementation of formats/inputs.md's specification:
     * stores keep these values, so the function must never change */
    CHECK(whole == 0x0bf0bdbcc82eb373ULL);
    hash_init(&h);
    CHECK(hash_final(&h) == 0x3fdf455f9dcf1e62ULL);
    hash_update(&h, "jsmf", 4);
    CHECK(hash_final(&h) == 0x975f8cafe8a4acedULL);
    for (int trial = 0; trial < 50; trial++) {
        hash_init(&h);
        size_t at = 0;
        while (at < sizeof data) {
            size_t k = rnd(70);
            if (k > sizeof data - at)
                k = sizeof data - at;
            hash_update(&h, data + at, k);
            at += k;
        }
        CHECK(hash_final(&h) == whole);
    }
    /* every length gives a distinct value, and one flipped bit changes it */
    uint64_t seen[65];
    for (int n = 0; n <= 64; n++) {
        hash_init(&h);
        hash_update(&h, data, (size_t)n);
        seen[n] = hash_final(&h);
        for (int m = 0; m < n; m++)
            CHECK(seen[m] != seen[n]);
    }
    data[500] ^= 4;
    hash_init(&h);
    hash_update(&h, data, sizeof data);
    CHECK(hash_final(&h) != whole);
    write_bytes(path_in("hash.bin"), data, sizeof data);
    uint64_t fh, fs;
    CHECK_OK(fingerprint_file(path_in("hash.bin"), &fh, &fs));
    CHECK(fh == hash_final(&h) && fs == sizeof data);
    write_bytes(path_in("empty.bin"), "", 0);
    CHECK_OK(fingerprint_file(path_in("empty.bin"), &fh, &fs));
    CHECK(fs == 0);
    CHECK(fingerprint_file("-", &fh, &fs) == JSMF_ENOTSUP);
    CHECK(fingerprint_file(path_in("nope"), &fh, &fs) == JSMF_ENOTFOUND);
}

static void test_formats_agree(void)
{
    sbuf want = {0}, u = {0}, l = {0}, t = {0};
    expected_ids(&want);
    jsmf_read_opts o = JSMF_READ_OPTS_DEFAULT;
    CHECK_OK(read_all(path_in("docword.c.txt"), &o, &u, 0));
    CHECK_OK(read_all(path_in("corpus.ldac"), &o, &l, 0));
    text_as_ids(path_in("corpus.txt"), &t);
    CHECK(u.s && !strcmp(u.s, want.s));
    CHECK(l.s && !strcmp(l.s, want.s));
    CHECK(t.s && !strcmp(t.s, want.s));
    if (u.s && strcmp(u.s, want.s))
        fprintf(stderr, "UCI:\n%s\nwant:\n%s\n", u.s, want.s);
    /* sniffing picked each format */
    const char *files[3] = {"corpus.txt", "docword.c.txt", "corpus.ldac"};
    jsmf_format fmts[3] = {JSMF_FORMAT_TEXT, JSMF_FORMAT_UCI, JSMF_FORMAT_LDAC};
    for (int i = 0; i < 3; i++) {
        jsmf_docs *r;
        CHECK_OK(docs_open(path_in(files[i]), NULL, &r));
        if (r) {
            CHECK(docs_format(r) == fmts[i]);
            CHECK((docs_vocab(r) != NULL) == (i == 1));
            docs_close(r);
        }
    }
    free(want.s), free(u.s), free(l.s), free(t.s);
}

/* raw_text: the caller tokenises the line itself and gets the same tokens as the reader's */
static void test_raw_text(void)
{
    jsmf_read_opts o = JSMF_READ_OPTS_DEFAULT, raw = JSMF_READ_OPTS_DEFAULT;
    raw.raw_text = 1;
    jsmf_docs *a = NULL, *b = NULL;
    CHECK_OK(docs_open(path_in("corpus.txt"), &o, &a));
    CHECK_OK(docs_open(path_in("corpus.txt"), &raw, &b));
    if (!a || !b)
        return;
    jsmf_doc da, db;
    jsmf_tokenizer t = JSMF_TOKENIZER_DEFAULT;
    int n = 0;
    while (next_doc(a, &da) == 1) {
        CHECK(next_doc(b, &db) == 1);
        CHECK(db.ntokens == 0 && db.text && db.text_len == da.text_len);
        CHECK(!memchr(db.text, '\n', db.text_len) &&
              (db.text_len == 0 || db.text[db.text_len - 1] != '\r'));
        char *out = malloc(db.text_len + 1);
        size_t cap = JSMF_TOKENS_MAX(db.text_len, t.min_len);
        const char **tok = malloc(cap * sizeof *tok);
        uint32_t *len = malloc(cap * sizeof *len);
        uint32_t k = jsmf_tokenize(&t, db.text, db.text_len, out, tok, len);
        CHECK(k == da.ntokens);
        for (uint32_t i = 0; i < k && i < da.ntokens; i++)
            CHECK(len[i] == da.toklen[i] && !memcmp(tok[i], da.tok[i], len[i]));
        free(out), free(tok), free(len);
        n++;
    }
    int got = 1;
    CHECK(n == NDOCS && docs_next(b, &db, &got) == 0 && got == 0); /* the end: no error */
    docs_close(a);
    docs_close(b);
}

/* Random damage to every kind of input: each read ends in documents or a clean error (ASan and
 * UBSan watch the rest), and an error always names the file. */
static void test_mutations(void)
{
    const char *srcs[3] = {"docword.c.txt", "corpus.ldac", "corpus.txt"};
    static const char junk[] = "\n\n 0:-19\r\0\t:x9999999999999999999999 ";
    jsmf_read_opts o = JSMF_READ_OPTS_DEFAULT;
    int rejected = 0;
    for (int round = 0; round < 300; round++) {
        const char *src = srcs[round % 3];
        FILE *f = fopen(path_in(src), "rb");
        static char buf[1 << 16];
        size_t n = fread(buf, 1, sizeof buf - 64, f);
        fclose(f);
        int edits = 1 + (int)rnd(4);
        for (int e = 0; e < edits; e++) {
            size_t at = rnd((uint32_t)n);
            switch (rnd(3)) {
            case 0: buf[at] = junk[rnd(sizeof junk - 1)]; break;          /* replace */
            case 1: n = at + 1; break;                                      /* truncate */
            default:                                                        /* insert */
                memmove(buf + at + 1, buf + at, n - at);
                buf[at] = junk[rnd(sizeof junk - 1)];
                n++;
            }
        }
        char name[64];
        snprintf(name, sizeof name, "docword.m%d.txt", round % 3);
        write_bytes(path_in(name), buf, n);
        jsmf_read_opts m = o;
        m.format = (jsmf_format)(round % 4);
        m.uci_vocab = path_in("vocab.c.txt");
        m.max_line = 4096;
        sbuf s = {0};
        int rc = read_all(path_in(name), &m, &s, 1);
        CHECK(rc == 0 || rc == JSMF_EFORMAT || rc == JSMF_EINVAL || rc == JSMF_ENOTFOUND);
        if (rc < 0)
            CHECK(strstr(jsmf_errmsg(), name) != NULL);
        rejected += rc < 0;
        free(s.s);
    }
    fprintf(stderr, "mutations: %d of 300 damaged inputs rejected\n", rejected);
    CHECK(rejected > 30 && rejected < 300);
}

/* Feed a file to our stdin through a pipe (a child process writes it). */
static pid_t stdin_from(const char *path, int *saved)
{
    int fds[2];
    if (pipe(fds))
        exit(2);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        FILE *f = fopen(path, "rb");
        char buf[777]; /* odd-sized writes */
        size_t n;
        while (f && (n = fread(buf, 1, sizeof buf, f)) > 0)
            if (write(fds[1], buf, n) != (ssize_t)n)
                break;
        _exit(0);
    }
    close(fds[1]);
    *saved = dup(0);
    dup2(fds[0], 0);
    close(fds[0]);
    return pid;
}

static void stdin_restore(pid_t pid, int saved)
{
    dup2(saved, 0);
    close(saved);
    waitpid(pid, NULL, 0);
}

/* The reader's fingerprint of what it read equals the file's, from a file, a .zst and stdin. */
static void fingerprint_after_read(const char *path, const char *as, uint64_t want, uint64_t wsize)
{
    jsmf_docs *r;
    CHECK_OK(docs_open(as, NULL, &r));
    if (!r)
        return;
    jsmf_doc d;
    uint64_t h = 0, n = 0;
    (void)path;
    while (next_doc(r, &d) == 1)
        ;
    CHECK_OK(docs_fingerprint(r, &h, &n));
    CHECK(h == want && n == wsize);
    docs_close(r);
}

static void test_reader_fingerprint(void)
{
    const char *files[2] = {"corpus.txt", "long.txt.zst"};
    for (int i = 0; i < 2; i++) {
        const char *p = path_in(files[i]);
        uint64_t want, size;
        CHECK_OK(fingerprint_file(p, &want, &size));
        fingerprint_after_read(p, p, want, size);
        int saved;
        pid_t pid = stdin_from(p, &saved);
        fingerprint_after_read(p, "-", want, size);
        stdin_restore(pid, saved);
    }
}

static void test_sources_and_resume(const char *plain, const jsmf_read_opts *base)
{
    char zst[600], multi[600], catted[600];
    snprintf(zst, sizeof zst, "%s.zst", plain);
    zstd_file(plain, zst, "");
    sbuf ref = {0};
    CHECK_OK(read_all(plain, base, &ref, 1));
    sbuf z = {0};
    CHECK_OK(read_all(zst, base, &z, 1));
    CHECK(ref.s && z.s && !strcmp(ref.s, z.s));
    /* stdin, plain and compressed */
    const char *srcs[2] = {plain, zst};
    for (int k = 0; k < 2; k++) {
        int saved;
        pid_t pid = stdin_from(srcs[k], &saved);
        sbuf s = {0};
        jsmf_read_opts o = *base;
        if (o.format == JSMF_FORMAT_UCI || strstr(plain, "docword"))
            o.uci_vocab = path_in("vocab.c.txt");
        CHECK_OK(read_all("-", &o, &s, 1));
        stdin_restore(pid, saved);
        CHECK(s.s && ref.s && !strcmp(ref.s, s.s));
        free(s.s);
    }
    /* a file of two zstd frames decodes as the concatenation */
    snprintf(multi, sizeof multi, "%s.2.zst", plain);
    snprintf(catted, sizeof catted, "%s.2", plain);
    char cmd[4000];
    snprintf(cmd, sizeof cmd, "cat '%s' '%s' > '%s' && cat '%s' '%s' > '%s'", plain, plain, catted,
             zst, zst, multi);
    CHECK(system(cmd) == 0);
    sbuf c1 = {0}, c2 = {0};
    jsmf_read_opts o2 = *base;
    if (strstr(plain, "docword"))
        o2.format = JSMF_FORMAT_TEXT; /* two UCI headers make no UCI file; compare as text */
    CHECK_OK(read_all(catted, &o2, &c1, 1));
    CHECK_OK(read_all(multi, &o2, &c2, 1));
    CHECK(c1.s && c2.s && !strcmp(c1.s, c2.s));
    free(c1.s), free(c2.s);

    /* resume from every document's next_offset, from file and from .zst */
    const char *rs[2] = {plain, zst};
    for (int k = 0; k < 2; k++) {
        jsmf_docs *r;
        CHECK_OK(docs_open(rs[k], base, &r));
        if (!r)
            continue;
        jsmf_doc d;
        uint64_t offs[NDOCS + 2], docs[NDOCS + 2], lines[NDOCS + 2];
        int nb = 0;
        while (next_doc(r, &d) == 1 && nb < NDOCS + 2) {
            offs[nb] = d.next_offset, docs[nb] = d.index + 1, lines[nb] = d.next_line;
            nb++;
        }
        docs_close(r);
        CHECK(nb >= 1);
        for (int i = 0; i < nb; i++) {
            jsmf_read_opts o = *base;
            o.start_offset = offs[i], o.start_doc = docs[i], o.start_line = lines[i];
            sbuf s = {0};
            CHECK_OK(read_all(rs[k], &o, &s, 1));
            /* the suffix of the reference from document docs[i] on */
            char key[40];
            snprintf(key, sizeof key, "#%" PRIu64 " ", docs[i]);
            const char *suffix = strstr(ref.s, key);
            if (!suffix)
                suffix = "";
            if (!((s.s ? s.s : (char *)"")[0] == 0 ? *suffix == 0 : !strcmp(s.s, suffix))) {
                CHECK(0);
                fprintf(stderr, "resume %s at %d: got\n%s\nwant\n%s\n", rs[k], i,
                        s.s ? s.s : "", suffix);
            } else {
                CHECK(1);
            }
            free(s.s);
        }
    }
    free(ref.s), free(z.s);
}

/* Items: ids between blanks byte for byte (a BOM and CRs dropped as for text), raw_text
 * ignored, empty baskets, and pieces cut at a line start. */
static void test_items(void)
{
    const char *path = path_in("baskets.txt");
    write_str(path, "\xEF\xBB\xBFSKU-12 sku-12\t#tag\r\n \v\f\n"
                    "spotify:track:4uLU6h  12345 caf\xC3\xA9 a\\b x=1\r\n\nSKU-12");
    const char *want = "#0 @0-23 L1-2: SKU-12 sku-12 #tag\n#1 @23-27 L2-3:\n"
                       "#2 @27-70 L3-4: spotify:track:4uLU6h 12345 caf\xC3\xA9 a\\b x=1\n"
                       "#3 @70-71 L4-5:\n#4 @71-77 L5-6: SKU-12\n";
    for (int raw = 0; raw <= 1; raw++) {
        jsmf_read_opts o = JSMF_READ_OPTS_DEFAULT;
        o.format = JSMF_FORMAT_ITEMS;
        o.raw_text = raw; /* text's alone: items are always split */
        sbuf got = {0};
        CHECK_OK(read_all(path, &o, &got, 1));
        CHECK(got.s && !strcmp(got.s, want));
        if (got.s && strcmp(got.s, want))
            fprintf(stderr, "items read:\n%s\nwant:\n%s\n", got.s, want);
        free(got.s);
    }
    /* a piece ends before the first basket starting at or after end_offset */
    jsmf_read_opts o = JSMF_READ_OPTS_DEFAULT;
    o.format = JSMF_FORMAT_ITEMS;
    o.end_offset = 27;
    sbuf piece = {0};
    CHECK_OK(read_all(path, &o, &piece, 0));
    CHECK(piece.s && !strcmp(piece.s, "#0: SKU-12 sku-12 #tag\n#1:\n"));
    free(piece.s);
    /* never sniffed: the same file is text */
    jsmf_docs *r = NULL;
    CHECK_OK(docs_open(path, NULL, &r));
    CHECK(r && docs_format(r) == JSMF_FORMAT_TEXT);
    docs_close(r);
    CHECK(jsmf_format_parse("items") == JSMF_FORMAT_ITEMS);
    CHECK(!strcmp(jsmf_format_name(JSMF_FORMAT_ITEMS), "items"));
    CHECK(jsmf_format_name((jsmf_format)(JSMF_FORMAT_ITEMS + 1)) == NULL);
}

/* Open + read all; return the first error and check the message mentions `needle`. */
static int bad(const char *path, const jsmf_read_opts *o, const char *needle)
{
    sbuf s = {0};
    int rc = read_all(path, o, &s, 0);
    free(s.s);
    const char *m = jsmf_errmsg();
    if (needle && !strstr(m, needle)) {
        fprintf(stderr, "expected '%s' in message: %s\n", needle, m);
        return 999;
    }
    if (rc < 0 && !strstr(m, path) && strcmp(path, "-")) {
        fprintf(stderr, "message does not name the file: %s\n", m);
        return 998;
    }
    return rc;
}

static void test_bad_inputs(void)
{
    jsmf_read_opts uci = JSMF_READ_OPTS_DEFAULT;
    uci.format = JSMF_FORMAT_UCI;
    char v3[512];
    snprintf(v3, sizeof v3, "%s", path_in("v3.txt"));
    uci.uci_vocab = v3;
    write_str(path_in("v3.txt"), "aaa\nbbb\nccc\n");
    struct {
        const char *content, *needle;
        int code;
    } u[] = {
        {"", "line 1", JSMF_EFORMAT},                          /* empty: no header */
        {"x\n3\n2\n", ":1: malformed UCI header", JSMF_EFORMAT},
        {"2\n3 4\n2\n", ":2: malformed UCI header", JSMF_EFORMAT},
        {"2\n4\n2\n1 1 1\n2 1 1\n", "W = 4", JSMF_EFORMAT},  /* vocab has 3 */
        {"2\n3\n", "before line 3", JSMF_EFORMAT},
        {"2\n3\n2\n1 4 1\n2 1 1\n", ":4: wordID 4 out of range", JSMF_EFORMAT},
        {"2\n3\n2\n1 0 1\n2 1 1\n", ":4: wordID 0 out of range", JSMF_EFORMAT},
        {"2\n3\n2\n1 1 1\n3 1 1\n", ":5: docID 3 out of range", JSMF_EFORMAT},
        {"2\n3\n2\n1 1 -2\n2 1 1\n", ":4: count '-2' is not a positive", JSMF_EFORMAT},
        {"2\n3\n2\n1 1 x\n2 1 1\n", ":4: count 'x'", JSMF_EFORMAT},
        {"2\n3\n2\n1 1 0\n", ":4: count is 0", JSMF_EFORMAT},
        {"2\n3\n2\n1 1 1.5\n", "count '1.5'", JSMF_EFORMAT},
        {"2\n3\n2\n2 1 1\n1 1 1\n", ":5: documents out of order", JSMF_EFORMAT},
        {"2\n3\n3\n1 1 1\n2 1 1\n", "NNZ = 3", JSMF_EFORMAT},
        {"2\n3\n2\n1 1\n2 1 1\n", "line ends before count", JSMF_EFORMAT},
        {"2\n3\n2\n1 1 1 1\n", "more fields", JSMF_EFORMAT},
        {"2\n3\n2\n1 1 1\n2 \0 1\n", "binary data", JSMF_EFORMAT},
    };
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++) {
        size_t n = strlen(u[i].content);
        if (strstr(u[i].needle, "binary"))
            n = 18;
        write_bytes(path_in("bad.uci"), u[i].content, n);
        int rc = bad(path_in("bad.uci"), &uci, u[i].needle);
        if (rc != u[i].code)
            fprintf(stderr, "UCI case %zu: rc %d: %s\n", i, rc, jsmf_errmsg());
        CHECK(rc == u[i].code);
    }
    /* good UCI with a skipped docID and trailing empty documents: D documents in all */
    write_str(path_in("gaps.uci"), "5\n3\n3\n1 2 1\n3 1 2\n3 3 1\n");
    sbuf s = {0};
    CHECK_OK(read_all(path_in("gaps.uci"), &uci, &s, 1));
    CHECK(s.s && !strcmp(s.s, "#0 @6-12 L4-5: 1:1\n#1 @12-12 L5-5:\n#2 @12-24 L5-7: 0:2 2:1\n"
                              "#3 @24-24 L7-7:\n#4 @24-24 L7-7:\n"));
    if (s.s && strncmp(s.s, "#0 @6-12", 8))
        fprintf(stderr, "gaps.uci read as:\n%s", s.s);
    free(s.s);
    /* missing vocabulary beside a docword file */
    write_str(path_in("docword.novocab.txt"), "1\n1\n1\n1 1 1\n");
    CHECK(bad(path_in("docword.novocab.txt"), NULL, "vocab.novocab.txt") == JSMF_ENOTFOUND);

    jsmf_read_opts ldac = JSMF_READ_OPTS_DEFAULT;
    ldac.format = JSMF_FORMAT_LDAC;
    ldac.ldac_vocab_size = 10;
    struct {
        const char *content, *needle;
    } l[] = {
        {"2 1:1 3:2\n2 1:1\n", ":2: N = 2 but the line has 1"},
        {"1 10:1\n", "word id 10 out of range"},
        {"1 1:-1\n", "count '-1'"},
        {"1 1:0\n", "count of word id 1 is 0"},
        {"x 1:1\n", "must start with N"},
        {"1 a:1\n", "expected id:count, got 'a:1'"},
        {"1 1:1 junk\n", "expected id:count, got 'junk'"},
        {"1 1:1\n1 2:\0\n", "binary data (NUL byte) at byte 10"},
    };
    for (size_t i = 0; i < sizeof l / sizeof l[0]; i++) {
        size_t n = strlen(l[i].content);
        if (strstr(l[i].needle, "binary"))
            n = 12;
        write_bytes(path_in("bad.ldac"), l[i].content, n);
        int rc = bad(path_in("bad.ldac"), &ldac, l[i].needle);
        if (rc != JSMF_EFORMAT)
            fprintf(stderr, "LDA-C case %zu: rc %d: %s\n", i, rc, jsmf_errmsg());
        CHECK(rc == JSMF_EFORMAT);
    }
    /* a UTF-8 byte-order mark does not stick to the first word */
    write_str(path_in("bom.txt"), "\xEF\xBB\xBFHello world\n");
    s.s = NULL, s.n = s.cap = 0;
    CHECK_OK(read_all(path_in("bom.txt"), NULL, &s, 1));
    CHECK(s.s && !strcmp(s.s, "#0 @0-15 L1-2: hello world\n"));
    free(s.s);
    /* text: binary garbage, empty input, a line over the limit (plain and streamed) */
    jsmf_read_opts text = JSMF_READ_OPTS_DEFAULT;
    text.format = JSMF_FORMAT_TEXT;
    write_bytes(path_in("bin.txt"), "good line\nbad\0line\n", 19);
    CHECK(bad(path_in("bin.txt"), &text, ":2: binary data (NUL byte) at byte 13") == JSMF_EFORMAT);
    write_bytes(path_in("empty.txt"), "", 0);
    s.s = NULL, s.n = s.cap = 0;
    CHECK(read_all(path_in("empty.txt"), NULL, &s, 0) == 0 && s.s == NULL);
    zstd_file(path_in("empty.txt"), path_in("empty.txt.zst"), "");
    CHECK(read_all(path_in("empty.txt.zst"), NULL, &s, 0) == 0 && s.s == NULL);
    free(s.s);
    {
        size_t big = 3 << 20; /* longer than the decoded window: exercises its growth */
        char *b = malloc(big + 20);
        memset(b, 'a', big + 20);
        memcpy(b, "x\n", 2);
        for (size_t i = 7; i < big; i += 8)
            b[i] = ' ';
        b[big] = '\n';
        memcpy(b + big + 1, "last line\n", 10);
        write_bytes(path_in("long.txt"), b, big + 11);
        free(b);
        zstd_file(path_in("long.txt"), path_in("long.txt.zst"), "");
        text.max_line = 1000;
        CHECK(bad(path_in("long.txt"), &text, ":2: line starting at byte 2 is longer than the "
                                              "limit of 1000 bytes") == JSMF_EFORMAT);
        CHECK(bad(path_in("long.txt.zst"), &text, ":2: line starting at byte 2 is longer than "
                                                  "the limit of 1000 bytes") == JSMF_EFORMAT);
        text.max_line = 0;
        sbuf a = {0}, z = {0};
        CHECK_OK(read_all(path_in("long.txt"), &text, &a, 1));
        CHECK_OK(read_all(path_in("long.txt.zst"), &text, &z, 1));
        CHECK(a.s && z.s && !strcmp(a.s, z.s) && strstr(a.s, "#2 @3145729-3145739 L3-4: last line"));
        free(a.s), free(z.s);
    }
    /* zstd: truncated and corrupt frames, named with the compressed offset */
    {
        FILE *f = fopen(path_in("long.txt.zst"), "rb");
        static unsigned char zb[1 << 20];
        size_t n = fread(zb, 1, sizeof zb, f);
        fclose(f);
        write_bytes(path_in("trunc.zst"), zb, n - 10);
        CHECK(bad(path_in("trunc.zst"), NULL, "truncated zstd frame") == JSMF_EFORMAT);
        CHECK(strstr(jsmf_errmsg(), "compressed byte") != NULL);
        for (size_t i = n / 2; i < n / 2 + 64; i++)
            zb[i] ^= 0x5a;
        write_bytes(path_in("corrupt.zst"), zb, n);
        CHECK(bad(path_in("corrupt.zst"), NULL, "corrupt zstd data near compressed byte") ==
              JSMF_EFORMAT);
        /* garbage after a valid frame */
        f = fopen(path_in("corpus.txt.zst"), "rb");
        n = fread(zb, 1, sizeof zb, f);
        fclose(f);
        memcpy(zb + n, "garbage!", 8);
        write_bytes(path_in("tail.zst"), zb, n + 8);
        CHECK(bad(path_in("tail.zst"), NULL, "zstd") == JSMF_EFORMAT);
    }
    /* a skippable frame before the data is accepted (and detected as zstd) */
    {
        FILE *f = fopen(path_in("corpus.txt.zst"), "rb");
        static unsigned char zb[1 << 16];
        unsigned char hdr[12] = {0x50, 0x2A, 0x4D, 0x18, 4, 0, 0, 0, 'j', 's', 'm', 'f'};
        memcpy(zb, hdr, 12);
        size_t n = fread(zb + 12, 1, sizeof zb - 12, f);
        fclose(f);
        write_bytes(path_in("skip.zst"), zb, n + 12);
        sbuf a = {0}, b = {0};
        CHECK_OK(read_all(path_in("skip.zst"), NULL, &a, 1));
        CHECK_OK(read_all(path_in("corpus.txt"), NULL, &b, 1));
        CHECK(a.s && b.s && !strcmp(a.s, b.s));
        free(a.s), free(b.s);
    }
    /* resume past the end, inside a UCI header; missing file; directory */
    jsmf_read_opts o = JSMF_READ_OPTS_DEFAULT;
    o.start_offset = 1 << 20;
    CHECK(bad(path_in("corpus.txt"), &o, "past the end") == JSMF_EINVAL);
    o.start_offset = 2;
    o.uci_vocab = path_in("vocab.c.txt");
    CHECK(bad(path_in("docword.c.txt"), &o, "inside the UCI header") == JSMF_EINVAL);
    CHECK(bad(path_in("missing.txt"), NULL, "cannot open") == JSMF_ENOTFOUND);
    CHECK(bad(dir, NULL, "directory") == JSMF_EINVAL);
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/test_io_read.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    make_corpus();
    test_tokenizer();
    test_hash();
    test_formats_agree();
    test_raw_text();
    test_items();
    test_mutations();
    /* zstd files are decoded on a second thread when OpenMP allows more than one; both ways */
    for (int threads = 1; threads <= 2; threads++) {
        omp_set_num_threads(threads);
        jsmf_read_opts o = JSMF_READ_OPTS_DEFAULT;
        test_sources_and_resume(path_in("corpus.txt"), &o);
        test_sources_and_resume(path_in("corpus.ldac"), &o);
        test_sources_and_resume(path_in("docword.c.txt"), &o);
        o.format = JSMF_FORMAT_ITEMS; /* the text corpus as baskets: resume, stdin, zstd */
        test_sources_and_resume(path_in("corpus.txt"), &o);
        test_bad_inputs();
        test_reader_fingerprint(); /* after test_bad_inputs: it makes long.txt.zst */
    }
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (!check_failures && system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    CHECK_DONE();
}
