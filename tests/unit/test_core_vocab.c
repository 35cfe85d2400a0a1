/* test_core_vocab.c — vocabulary file round trip (item ids escaped where a line needs it) and its
 * error messages; error plumbing; the word map against a linear search. */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/error.h"
#include "core/wordkey.h"
#include "core/wordmap.h"

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    fputs(text, f);
    fclose(f);
}

static void test_round_trip(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/v.txt", dir);
    write_file(path, "# comment\nalpha\t3\t10\nbeta\t2\t4\r\ngamma\t1\t1\n");
    jsmf_vocab *v = NULL;
    CHECK_OK(jsmf_vocab_load(path, &v));
    CHECK(v && v->n == 3);
    CHECK(v && !strcmp(v->words[1], "beta"));
    CHECK(v && v->df && v->df[0] == 3 && v->tf[2] == 1);
    char out[512];
    snprintf(out, sizeof out, "%s/w.txt", dir);
    CHECK_OK(jsmf_vocab_save(out, v));
    jsmf_vocab *w = NULL;
    CHECK_OK(jsmf_vocab_load(out, &w));
    CHECK(w && w->n == 3 && !strcmp(w->words[2], "gamma") && w->tf[0] == 10);
    jsmf_vocab_free(v);
    jsmf_vocab_free(w);
}

static void test_plain_words(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/plain.txt", dir);
    write_file(path, "one\ntwo\nthree");
    jsmf_vocab *v = NULL;
    CHECK_OK(jsmf_vocab_load(path, &v));
    CHECK(v && v->n == 3 && v->df == NULL && !strcmp(v->words[2], "three"));
    jsmf_vocab_free(v);
}

static char *read_all(const char *path)
{
    static char buf[4096];
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = 0;
    return buf;
}

/* Item ids that start with '#' or a backslash get a backslash before them in the file and read
 * back as they were; every other word is written as it is, so text vocabularies do not change. */
static void test_escape(const char *dir)
{
    static const char *const words[] = {"#tag", "\\back", "\\#x", "\\\\y", "a\\b", "tag#",
                                        "SKU-12", "sku-12", "#"};
    static const char file[] = "\\#tag\t9\t9\n\\\\back\t8\t8\n\\\\#x\t7\t7\n\\\\\\y\t6\t6\n"
                               "a\\b\t5\t5\ntag#\t4\t4\nSKU-12\t3\t3\nsku-12\t2\t2\n\\#\t1\t1\n";
    enum { N = sizeof words / sizeof *words };
    jsmf_vocab v = {0};
    uint64_t df[N], tf[N];
    v.n = N, v.words = (char **)words, v.df = df, v.tf = tf;
    for (uint32_t i = 0; i < N; i++)
        df[i] = tf[i] = N - i;
    char path[512];
    snprintf(path, sizeof path, "%s/items.txt", dir);
    CHECK_OK(jsmf_vocab_save(path, &v));
    CHECK(!strcmp(read_all(path), file));
    jsmf_vocab *w = NULL;
    CHECK_OK(jsmf_vocab_load(path, &w));
    CHECK(w && w->n == N);
    for (uint32_t i = 0; w && i < w->n; i++)
        CHECK(!strcmp(w->words[i], words[i]));
    jsmf_vocab_free(w);
    /* written before the escape: a backslash before anything but '#' or a backslash stays */
    snprintf(path, sizeof path, "%s/legacy.txt", dir);
    write_file(path, "\\x\n# a comment\n\\#tag\nplain\n");
    CHECK_OK(jsmf_vocab_load(path, &w));
    CHECK(w && w->n == 3 && !strcmp(w->words[0], "\\x") && !strcmp(w->words[1], "#tag"));
    jsmf_vocab_free(w);
    /* a word no line can hold is refused before anything is written */
    static const char *const bad[] = {"a\tb", "a\nb", "ab\r", ""};
    static const char *const why[] = {"holds a TAB", "holds a line feed", "ends in a CR", "empty"};
    for (int i = 0; i < 4; i++) {
        const char *two[] = {"ok", bad[i]};
        jsmf_vocab b = {0};
        b.n = 2, b.words = (char **)two;
        snprintf(path, sizeof path, "%s/bad%d.txt", dir, i);
        CHECK(jsmf_vocab_save(path, &b) == JSMF_EINVAL);
        CHECK(strstr(jsmf_errmsg(), why[i]) && strstr(jsmf_errmsg(), "word 2"));
        CHECK(access(path, F_OK) != 0);
    }
}

static void expect_error(const char *dir, const char *name, const char *text, int code,
                         const char *needle)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    write_file(path, text);
    jsmf_vocab *v = NULL;
    int rc = jsmf_vocab_load(path, &v);
    CHECK(rc == code);
    CHECK(v == NULL);
    CHECK(strstr(jsmf_errmsg(), needle) != NULL);
    if (!strstr(jsmf_errmsg(), needle))
        fprintf(stderr, "  message was: %s\n", jsmf_errmsg());
}

/* The word map against a linear search: words of every length around the inline key's 24
 * bytes, long words sharing their first 24 bytes and their length, prefixes and extensions of
 * words (absent), a duplicated word (its first row), and the many-token lookup's results equal
 * to one lookup each. */
static void test_wordmap(void)
{
    enum { NW = 3000 };
    static char buf[NW][48];
    const char *words[NW + 1];
    uint32_t n = 0;
    for (uint32_t i = 0; i < NW; i++) {
        uint32_t len = 1 + i % 40;
        for (uint32_t c = 0; c < len; c++) /* long words: the same first 24 bytes per length */
            buf[i][c] = (char)(c < 24 && len > 24 ? 'a' + (len + c) % 26
                                                  : 'a' + (i * 7 + c * 13 + i / 26) % 26);
        buf[i][len] = 0;
        words[n++] = buf[i];
    }
    words[n++] = buf[5]; /* a duplicate: the map answers its first row */
    jsmf_vocab v = {.n = n, .words = (char **)words};
    jsmf_wordmap *m = NULL;
    CHECK_OK(jsmf_wordmap_new(&v, &m));
    if (!m)
        return;
    uint32_t wrong = 0, nq = 0;
    static char q[3 * NW][50];
    const char *toks[3 * NW];
    uint32_t lens[3 * NW], expect[3 * NW], rows[3 * NW];
    for (uint32_t i = 0; i < NW; i++) {
        size_t len = strlen(buf[i]);
        memcpy(q[nq], buf[i], len + 1); /* present */
        memcpy(q[nq + 1], buf[i], len + 1), q[nq + 1][len] = 'z', q[nq + 1][len + 1] = 0;
        memcpy(q[nq + 2], buf[i], len), q[nq + 2][len - 1] ^= 1, q[nq + 2][len] = 0;
        for (uint32_t j = 0; j < 3; j++, nq++) {
            toks[nq] = q[nq], lens[nq] = (uint32_t)strlen(q[nq]);
            expect[nq] = UINT32_MAX;
            for (uint32_t w = 0; w < n && expect[nq] == UINT32_MAX; w++)
                if (!strcmp(words[w], q[nq]))
                    expect[nq] = w;
            wrong += jsmf_wordmap_find(m, toks[nq], lens[nq]) != expect[nq];
        }
    }
    CHECK(wrong == 0);
    CHECK(jsmf_wordmap_find(m, buf[5], strlen(buf[5])) == 5);
    CHECK(jsmf_wordmap_find(m, "", 0) == UINT32_MAX);
    wordmap_find_many(m, toks, lens, nq, rows);
    CHECK(!memcmp(rows, expect, nq * sizeof *rows));
    jsmf_wordmap_free(m);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Two words whose hashes agree in the slot's tag and in the first probe of a 16-slot table are
 * told apart by their bytes: found by a birthday search over 600k words (36 bits to match). */
static void test_wordmap_collision(void)
{
    enum { NW = 600000 };
    uint64_t *h = malloc(NW * sizeof *h);
    if (!h)
        return;
    char w[16];
    for (uint32_t i = 0; i < NW; i++) {
        uint64_t k[3];
        snprintf(w, sizeof w, "w%07u", i);
        wordkey_make(k, w, 8, 0);
        uint64_t x = wordkey_hash(k, w, 8);
        h[i] = ((x >> 32) << 4 | (x & 15)) << 20 | i; /* i < 2^20 */
    }
    qsort(h, NW, sizeof *h, cmp_u64);
    uint32_t a = UINT32_MAX, b = UINT32_MAX;
    for (uint32_t i = 1; i < NW && a == UINT32_MAX; i++)
        if (h[i] >> 20 == h[i - 1] >> 20)
            a = (uint32_t)(h[i - 1] & 0xfffff), b = (uint32_t)(h[i] & 0xfffff);
    free(h);
    CHECK(a != UINT32_MAX);
    if (a == UINT32_MAX)
        return;
    char wa[16], wb[16];
    snprintf(wa, sizeof wa, "w%07u", a), snprintf(wb, sizeof wb, "w%07u", b);
    const char *one[1] = {wa}, *two[2] = {wa, wb};
    jsmf_vocab v1 = {.n = 1, .words = (char **)one}, v2 = {.n = 2, .words = (char **)two};
    jsmf_wordmap *m1 = NULL, *m2 = NULL;
    CHECK_OK(jsmf_wordmap_new(&v1, &m1));
    CHECK_OK(jsmf_wordmap_new(&v2, &m2));
    if (m1 && m2) {
        CHECK(jsmf_wordmap_find(m1, wa, 8) == 0 && jsmf_wordmap_find(m1, wb, 8) == UINT32_MAX);
        CHECK(jsmf_wordmap_find(m2, wa, 8) == 0 && jsmf_wordmap_find(m2, wb, 8) == 1);
    }
    jsmf_wordmap_free(m1), jsmf_wordmap_free(m2);
}

int main(void)
{
    char dir[] = "/tmp/jsmf-test-vocab-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    test_round_trip(dir);
    test_plain_words(dir);
    test_escape(dir);
    test_wordmap();
    test_wordmap_collision();
    expect_error(dir, "dup.txt", "a\nb\na\n", JSMF_EFORMAT, "appears twice");
    expect_error(dir, "empty.txt", "", JSMF_EFORMAT, "empty");
    expect_error(dir, "blank.txt", "a\n\nb\n", JSMF_EFORMAT, "blank.txt:2");
    expect_error(dir, "badcount.txt", "a\tx\t1\n", JSMF_EFORMAT, "badcount.txt:1");
    /* found by tests/fuzz/fuzz_vocab.c: "a\r" before a TAB was a word that, written without
     * counts, read back as "a" */
    expect_error(dir, "cr.txt", "b\na\r\t1\t2\n", JSMF_EFORMAT, "cr.txt:2: word ends in a CR");
    jsmf_vocab *v = NULL;
    CHECK(jsmf_vocab_load("/nonexistent/v.txt", &v) == JSMF_ENOTFOUND);
    CHECK(error_context(JSMF_EIO, "while testing") == JSMF_EIO);
    CHECK(!strncmp(jsmf_errmsg(), "while testing: ", 15));
    CHECK(strstr(jsmf_version(), JSMF_VERSION_STRING) != NULL);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    CHECK_DONE();
}
