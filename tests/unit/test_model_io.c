/* test_model_io.c — npy round trips and header layout, JSON writer escaping and reader lookups,
 * MODEL directory save/load with levels, overwrite refusal, atomic replacement, validation and
 * the MANIFEST's checks. */
#define _GNU_SOURCE
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "jsmf_model.h"
#include "model/json.h"
#include "model/npy.h"

static char tmpdir[256];

static const char *tpath(const char *name)
{
    static char buf[8][512];
    static int slot;
    slot = (slot + 1) % 8;
    snprintf(buf[slot], sizeof buf[slot], "%s/%s", tmpdir, name);
    return buf[slot];
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) ? -1 : (long)st.st_size;
}

static void test_npy(void)
{
    double a[6] = {1.5, -2, 1e-300, 3.25, 0, 1e300};
    CHECK_OK(npy_write_f64(tpath("a.npy"), a, 2, 3));
    CHECK((file_size(tpath("a.npy")) - 6 * 8) % 64 == 0); /* header padded to 64 bytes */
    double *b = NULL;
    uint32_t r = 0, c = 0;
    CHECK_OK(npy_read_f64(tpath("a.npy"), &b, &r, &c));
    CHECK(r == 2 && c == 3);
    CHECK(b && memcmp(a, b, sizeof a) == 0);
    free(b);

    CHECK_OK(npy_write_f64(tpath("v.npy"), a, 5, 0));
    CHECK_OK(npy_read_f64(tpath("v.npy"), &b, &r, &c));
    CHECK(r == 5 && c == 1 && b[4] == 0);
    free(b);

    uint32_t u[4] = {1, 2, 3, 4000000000u};
    CHECK_OK(npy_write_u32(tpath("u.npy"), u, 2, 2));
    CHECK((file_size(tpath("u.npy")) - 16) % 64 == 0);
    /* The float64 reader refuses another dtype and names the file. */
    CHECK(npy_read_f64(tpath("u.npy"), &b, &r, &c) == JSMF_EFORMAT);
    CHECK(strstr(jsmf_errmsg(), "u.npy") && strstr(jsmf_errmsg(), "<u4"));

    /* Truncated data. */
    FILE *f = fopen(tpath("a.npy"), "r+b");
    CHECK(f && ftruncate(fileno(f), 64 + 40) == 0);
    fclose(f);
    CHECK(npy_read_f64(tpath("a.npy"), &b, &r, &c) == JSMF_EFORMAT);
    CHECK(strstr(jsmf_errmsg(), "truncated") != NULL);
    CHECK(npy_read_f64(tpath("missing.npy"), &b, &r, &c) == JSMF_ENOTFOUND);

    /* A full disk is reported as such, with the path. */
    if (access("/dev/full", W_OK) == 0) {
        CHECK(npy_write_f64("/dev/full", a, 2, 3) == JSMF_ENOSPC);
        CHECK(strstr(jsmf_errmsg(), "/dev/full") != NULL);
        CHECK(access("/dev/full", F_OK) == 0);
    }
}

static char *json_text(void (*fill)(jsmf_json *), int pretty)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    jsmf_json j;
    json_init(&j, f, pretty);
    fill(&j);
    fclose(f);
    return buf;
}

static void fill_sample(jsmf_json *j)
{
    json_begin_object(j, NULL);
    json_string(j, "s", "a\"b\\c\n\t\x01\x1f\xc3\xa9");
    json_number(j, "x", 0.1);
    json_number(j, "nan", NAN);
    json_number(j, "inf", -INFINITY);
    json_int(j, "i", -42);
    json_uint(j, "u", 18446744073709551615ull);
    json_bool(j, "b", 1);
    json_begin_object(j, "metrics");
    json_number(j, "specificity", 2.5);
    json_begin_array(j, "list");
    json_number(j, NULL, 7);
    json_string(j, NULL, "q");
    json_end_array(j);
    json_begin_array(j, "empty");
    json_end_array(j);
    json_end_object(j);
    json_end_object(j);
}

static void test_json(void)
{
    char *c = json_text(fill_sample, 0);
    const char *want = "{\"s\":\"a\\\"b\\\\c\\n\\t\\u0001\\u001f\xc3\xa9\",\"x\":0.10000000000000001,"
                       "\"nan\":null,\"inf\":null,\"i\":-42,\"u\":18446744073709551615,\"b\":true,"
                       "\"metrics\":{\"specificity\":2.5,\"list\":[7,\"q\"],\"empty\":[]}}";
    CHECK(strcmp(c, want) == 0);
    if (strcmp(c, want))
        fprintf(stderr, "got  %s\nwant %s\n", c, want);
    char *p = json_text(fill_sample, 1);
    CHECK(strchr(p, '\n') != NULL);
    CHECK(json_valid(c) && json_valid(p));
    double v;
    CHECK_OK(json_get_number(p, "metrics.specificity", &v));
    CHECK(v == 2.5);
    CHECK_OK(json_get_number(c, "x", &v));
    CHECK(v == 0.1); /* %.17g round-trips */
    CHECK_OK(json_get_number(c, "metrics.list.0", &v));
    CHECK(v == 7);
    CHECK_OK(json_get_number(c, "nan", &v));
    CHECK(isnan(v));
    CHECK(json_get_number(c, "metrics.nope", &v) == JSMF_ENOTFOUND);
    CHECK(json_get_number(c, "s", &v) == JSMF_EFORMAT);
    char *s = NULL;
    CHECK_OK(json_get_string(p, "s", &s));
    CHECK(s && strcmp(s, "a\"b\\c\n\t\x01\x1f\xc3\xa9") == 0);
    free(s);
    CHECK_OK(json_get_string(c, "metrics.list.1", &s));
    CHECK(s && strcmp(s, "q") == 0);
    free(s);
    /* JSON lines: consecutive top-level objects are not comma-separated. */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    jsmf_json jl;
    json_init(&jl, f, 0);
    for (int i = 0; i < 2; i++) {
        json_begin_object(&jl, NULL);
        json_int(&jl, "doc", i);
        json_end_object(&jl);
        fputc('\n', f);
    }
    fclose(f);
    CHECK(strcmp(buf, "{\"doc\":0}\n{\"doc\":1}\n") == 0);
    free(buf);
    CHECK(!json_valid("{\"a\":1,}"));
    CHECK(!json_valid("{\"a\":1} x"));
    CHECK(!json_valid("[1,2"));
    free(c);
    free(p);
}

static jsmf_vocab *make_vocab(uint32_t n, const char *prefix)
{
    jsmf_vocab *v = calloc(1, sizeof *v);
    v->n = n;
    v->words = calloc(n, sizeof *v->words);
    for (uint32_t i = 0; i < n; i++) {
        v->words[i] = malloc(32);
        snprintf(v->words[i], 32, "%s%u", prefix, i);
    }
    return v;
}

/* A valid random-ish model: columns of B and all of A normalised. */
static jsmf_model *make_model(uint32_t n, uint32_t k, unsigned seed)
{
    jsmf_model *m = NULL;
    if (jsmf_model_new(n, k, &m))
        return NULL;
    srand(seed);
    for (uint32_t t = 0; t < k; t++) {
        double s = 0;
        for (uint32_t w = 0; w < n; w++)
            s += m->B[(size_t)w * k + t] = (rand() % 1000 + 1) / 1000.0;
        for (uint32_t w = 0; w < n; w++)
            m->B[(size_t)w * k + t] /= s;
    }
    double s = 0;
    for (uint32_t i = 0; i < k * k; i++)
        s += m->A[i] = (rand() % 100 + 1) / 100.0;
    for (uint32_t i = 0; i < k * k; i++)
        m->A[i] /= s;
    m->vocab = make_vocab(n, "word");
    return m;
}

static int count_leftovers(const char *prefix)
{
    DIR *d = opendir(tmpdir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, prefix, strlen(prefix)) && strchr(e->d_name, '-'))
            n++;
    closedir(d);
    return n;
}

static void test_model_roundtrip(void)
{
    jsmf_model *m = make_model(12, 4, 1);
    m->anchors = malloc(4 * sizeof *m->anchors);
    for (int t = 0; t < 4; t++)
        m->anchors[t] = 3 * t + 1;
    m->alpha = malloc(4 * sizeof *m->alpha);
    for (int t = 0; t < 4; t++)
        m->alpha[t] = 0.1 * (t + 1);
    m->summary_json = strdup("{\"format\": \"jsmf-model\", \"version\": 1, \"kind\": \"anchor\"}");
    jsmf_model *s1 = make_model(4, 2, 2);
    jsmf_vocab_free(s1->vocab);
    s1->vocab = NULL; /* labels are generated from the topics below */
    s1->anchors = malloc(2 * sizeof *s1->anchors);
    s1->anchors[0] = 2, s1->anchors[1] = 0; /* topics 2 and 0 of the top: word7, word1 */
    m->sub = s1;
    jsmf_model *s2 = make_model(2, 1, 3);
    jsmf_vocab_free(s2->vocab);
    s2->vocab = NULL;
    s1->sub = s2;

    const char *dir = tpath("m1");
    CHECK_OK(jsmf_model_save(dir, m, 0));
    jsmf_model *l = NULL;
    CHECK_OK(jsmf_model_load(dir, &l));
    CHECK(l && l->n == 12 && l->k == 4);
    CHECK(l && memcmp(l->B, m->B, 12 * 4 * sizeof(double)) == 0);
    CHECK(l && memcmp(l->A, m->A, 16 * sizeof(double)) == 0);
    CHECK(l && l->anchors && memcmp(l->anchors, m->anchors, 4 * sizeof(uint32_t)) == 0);
    CHECK(l && l->alpha && l->alpha[3] == m->alpha[3]);
    CHECK(l && l->summary_json && strstr(l->summary_json, "\"anchor\""));
    CHECK(l && !strcmp(l->vocab->words[11], "word11"));
    CHECK(l && l->sub && l->sub->n == 4 && l->sub->k == 2);
    CHECK(l && l->sub && !strcmp(l->sub->vocab->words[1], "t1:word4"));
    CHECK(l && l->sub && l->sub->anchors && l->sub->anchors[0] == 2);
    CHECK(l && l->sub && memcmp(l->sub->B, s1->B, 8 * sizeof(double)) == 0);
    CHECK(l && l->sub && l->sub->sub && l->sub->sub->k == 1 && !l->sub->sub->sub);
    CHECK(l && l->sub && l->sub->sub && !strcmp(l->sub->sub->vocab->words[0], "t0:word7"));
    CHECK(l && l->sub && l->sub->sub && !strcmp(l->sub->sub->vocab->words[1], "t1:word1"));
    CHECK(l && l->sub && l->sub->summary_json && strstr(l->sub->summary_json, "jsmf-model"));
    jsmf_model_free(l);

    double pz[4], sum = 0;
    jsmf_model_topic_sizes(m, pz);
    for (int t = 0; t < 4; t++)
        sum += pz[t];
    CHECK_NEAR(sum, 1, 1e-12);
    uint32_t ids[12];
    CHECK(jsmf_model_top_words(m, 2, 20, ids) == 12);
    for (int i = 1; i < 12; i++)
        CHECK(m->B[ids[i - 1] * 4 + 2] >= m->B[ids[i] * 4 + 2]);

    /* Refuse to replace without overwrite; replace with it. */
    jsmf_model *other = make_model(5, 2, 9);
    CHECK(jsmf_model_save(dir, other, 0) == JSMF_EEXIST);
    CHECK(strstr(jsmf_errmsg(), "m1") != NULL);
    CHECK_OK(jsmf_model_save(dir, other, 1));
    CHECK_OK(jsmf_model_load(dir, &l));
    CHECK(l && l->n == 5 && l->k == 2 && !l->sub && !l->anchors && !l->alpha);
    jsmf_model_free(l);
    CHECK(access(tpath("m1/level1"), F_OK) != 0); /* the old levels went with the old model */

    /* A save that fails half-way (inconsistent level 1) leaves the old model and no debris. */
    jsmf_model *bad = make_model(6, 3, 4);
    bad->sub = make_model(7, 2, 5); /* 7 rows, but the level below has 3 topics */
    CHECK(jsmf_model_save(dir, bad, 1) == JSMF_EINVAL);
    CHECK_OK(jsmf_model_load(dir, &l));
    CHECK(l && l->n == 5 && l->k == 2);
    jsmf_model_free(l);
    CHECK(count_leftovers("m1.") == 0);

    /* Overwrite never deletes a directory that is not a model. */
    mkdir(tpath("notamodel"), 0777);
    FILE *f = fopen(tpath("notamodel/precious.txt"), "w");
    fputs("x\n", f);
    fclose(f);
    CHECK(jsmf_model_save(tpath("notamodel"), other, 1) == JSMF_EEXIST);
    CHECK(access(tpath("notamodel/precious.txt"), F_OK) == 0);
    /* A trailing slash names the same directory. */
    char slashed[600];
    snprintf(slashed, sizeof slashed, "%s/", tpath("m2"));
    CHECK_OK(jsmf_model_save(slashed, other, 0));
    CHECK(access(tpath("m2/B.npy"), F_OK) == 0);

    jsmf_model_free(bad);
    jsmf_model_free(other);
    jsmf_model_free(m);
}

/* A real write failure half-way through a save (file size limit: writes fail with EFBIG) leaves
 * the old model as it was and no temporary directory behind. */
static void test_failed_write(void)
{
    const char *dir = tpath("w");
    jsmf_model *old = make_model(10, 2, 21), *big = make_model(2000, 8, 22);
    CHECK_OK(jsmf_model_save(dir, old, 0));
    struct rlimit saved, lim;
    signal(SIGXFSZ, SIG_IGN);
    getrlimit(RLIMIT_FSIZE, &saved);
    lim = saved;
    lim.rlim_cur = 64 * 1024; /* vocab.txt fits, B.npy (128 KB) does not */
    setrlimit(RLIMIT_FSIZE, &lim);
    int rc = jsmf_model_save(dir, big, 1);
    setrlimit(RLIMIT_FSIZE, &saved);
    CHECK(rc == JSMF_EIO);
    CHECK(strstr(jsmf_errmsg(), "B.npy: write error") != NULL);
    jsmf_model *l = NULL;
    CHECK_OK(jsmf_model_load(dir, &l));
    CHECK(l && l->n == 10 && l->k == 2 && memcmp(l->B, old->B, 20 * sizeof(double)) == 0);
    jsmf_model_free(l);
    CHECK(count_leftovers("w.") == 0);
    CHECK_OK(jsmf_model_save(dir, big, 1)); /* and with room again it goes through */
    CHECK_OK(jsmf_model_load(dir, &l));
    CHECK(l && l->n == 2000 && l->k == 8);
    jsmf_model_free(l);
    jsmf_model_free(old);
    jsmf_model_free(big);
}

/* Damage one file of a saved model and expect a load error that names it. */
static void expect_load_error(const char *dir, int code, const char *needle)
{
    jsmf_model *l = NULL;
    int rc = jsmf_model_load(dir, &l);
    CHECK(rc == code);
    CHECK(strstr(jsmf_errmsg(), needle) != NULL);
    if (rc != code || !strstr(jsmf_errmsg(), needle))
        fprintf(stderr, "  rc %d, message: %s\n", rc, jsmf_errmsg());
    jsmf_model_free(l);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static void test_validation(void)
{
    jsmf_model *m = make_model(6, 2, 7);
    m->anchors = malloc(2 * sizeof *m->anchors);
    m->anchors[0] = 0, m->anchors[1] = 5;
    const char *dir = tpath("v");
    CHECK_OK(jsmf_model_save(dir, m, 0));
    char p[600];
    /* The files are changed by hand below, as another tool would: without MANIFEST, so that
     * what is checked is the validation of what they hold (test_manifest checks the rest). */
    snprintf(p, sizeof p, "%s/MANIFEST", dir);
    CHECK(unlink(p) == 0);

    snprintf(p, sizeof p, "%s/B.npy", dir);
    double bad[12];
    memcpy(bad, m->B, sizeof bad);
    bad[1] += 1e-3; /* column 1 no longer sums to 1 */
    CHECK_OK(npy_write_f64(p, bad, 6, 2));
    expect_load_error(dir, JSMF_EFORMAT, "B.npy: column 1 sums");
    CHECK_OK(npy_write_f64(p, m->B, 4, 3)); /* 4 rows for 6 words */
    expect_load_error(dir, JSMF_EFORMAT, "rows but vocab.txt has 6");
    CHECK_OK(npy_write_f64(p, m->B, 6, 2));

    snprintf(p, sizeof p, "%s/A.npy", dir);
    CHECK_OK(npy_write_f64(p, m->A, 4, 1));
    expect_load_error(dir, JSMF_EFORMAT, "A.npy: shape 4 x 1");
    double a2[4] = {0.5, 0.5, 0.5, 0.5};
    CHECK_OK(npy_write_f64(p, a2, 2, 2));
    expect_load_error(dir, JSMF_EFORMAT, "A.npy: entries sum to 2");
    CHECK_OK(npy_write_f64(p, m->A, 2, 2));

    snprintf(p, sizeof p, "%s/anchors.txt", dir);
    write_file(p, "0\t0\tword0\n1\t9\tword9\n");
    expect_load_error(dir, JSMF_EFORMAT, "anchors.txt:2: word id 9 out of range");
    write_file(p, "0\t0\tword0\n1\t4\tword5\n");
    expect_load_error(dir, JSMF_EFORMAT, "anchors.txt:2: word 'word5' is not word 4");
    write_file(p, "0\t0\tword0\n");
    expect_load_error(dir, JSMF_EFORMAT, "anchors.txt: 1 anchors for 2 topics");
    write_file(p, "0\t0\tword0\n1\t5\tword5\n");

    snprintf(p, sizeof p, "%s/summary.json", dir);
    write_file(p, "{\"format\": \"jsmf-model\", \"version\": 2}\n");
    expect_load_error(dir, JSMF_EVERSION, "summary.json: model format version 2");
    write_file(p, "{\"format\": \"jsmf-model\", \"version\": 1, \"future_key\": [1, {}]}\n");
    jsmf_model *l = NULL;
    CHECK_OK(jsmf_model_load(dir, &l)); /* unknown keys are ignored */
    jsmf_model_free(l);
    write_file(p, "{\"format\": ");
    expect_load_error(dir, JSMF_EFORMAT, "summary.json: not valid JSON");

    expect_load_error(tpath("nonexistent"), JSMF_ENOTFOUND, "nonexistent");
    jsmf_model_free(m);
}

/* Write `len` bytes of `data` to PATH, replacing it. */
static void write_bytes(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(data, 1, len, f) == len);
    if (f)
        fclose(f);
}

/* PATH whole into a malloc'ed buffer (*len bytes). */
static char *read_bytes(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = malloc(1 << 20);
    *len = f && buf ? fread(buf, 1, 1 << 20, f) : 0;
    if (f)
        fclose(f);
    return buf;
}

/* Damage FILE of a copy of the saved model `dir` with `edit` and expect the load to name it. */
static void expect_damage(const char *dir, const char *file, void (*edit)(char *, size_t *),
                          const char *needle)
{
    char p[600];
    size_t len;
    snprintf(p, sizeof p, "%s/%s", dir, file);
    char *orig = read_bytes(p, &len), *copy = malloc(len + 1);
    size_t n = len;
    memcpy(copy, orig, len);
    edit(copy, &n);
    write_bytes(p, copy, n);
    expect_load_error(dir, JSMF_EFORMAT, needle);
    write_bytes(p, orig, len);
    free(orig), free(copy);
}

static void flip_last_bit(char *b, size_t *n) { b[*n - 1] ^= 1; }
static void cut_half(char *b, size_t *n) { (void)b, *n /= 2; }
static void flip_first_bit(char *b, size_t *n) { (void)n, b[0] ^= 0x20; }

/* A saved model (with two levels) has a MANIFEST at the top and in each level; a flipped bit or
 * a truncation of any file, a damaged MANIFEST, a listed file gone and an unlisted file are
 * refused naming the file; without MANIFEST the model reads, unchecked. */
static void test_manifest(void)
{
    jsmf_model *m = make_model(12, 4, 5);
    jsmf_model *s1 = make_model(4, 2, 6);
    jsmf_vocab_free(s1->vocab);
    s1->vocab = NULL;
    m->sub = s1;
    const char *dir = tpath("mf");
    CHECK_OK(jsmf_model_save(dir, m, 0));
    CHECK(jsmf_model_has_manifest(dir) == 1);
    char p[600];
    snprintf(p, sizeof p, "%s/level1", dir);
    CHECK(jsmf_model_has_manifest(p) == 1);
    jsmf_model *l = NULL;
    CHECK_OK(jsmf_model_load(dir, &l));
    CHECK(l && l->sub && l->sub->n == 4);
    jsmf_model_free(l);
    CHECK_OK(jsmf_model_load(p, &l)); /* a level alone: checked by its own MANIFEST */
    jsmf_model_free(l);

    expect_damage(dir, "B.npy", flip_last_bit, "B.npy: damaged: its checksum does not match");
    expect_damage(dir, "vocab.txt", cut_half, "vocab.txt: damaged: its size does not match");
    expect_damage(dir, "summary.json", flip_first_bit, "summary.json: damaged");
    expect_damage(dir, "level1/A.npy", flip_last_bit, "level1/A.npy: damaged");
    expect_damage(dir, "MANIFEST", flip_first_bit, "MANIFEST: damaged");
    expect_damage(dir, "MANIFEST", flip_last_bit, "MANIFEST: damaged");
    expect_damage(dir, "MANIFEST", cut_half, "MANIFEST: damaged");

    snprintf(p, sizeof p, "%s/alpha.npy", dir); /* a file MANIFEST does not list */
    double alpha[4] = {1, 1, 1, 1};
    CHECK_OK(npy_write_f64(p, alpha, 4, 0));
    expect_load_error(dir, JSMF_EFORMAT, "alpha.npy: not in");
    CHECK(unlink(p) == 0);
    snprintf(p, sizeof p, "%s/A.npy", dir); /* a listed file gone */
    size_t len;
    char *a = read_bytes(p, &len);
    CHECK(unlink(p) == 0);
    expect_load_error(dir, JSMF_EFORMAT, "A.npy: damaged: missing");
    write_bytes(p, a, len);
    free(a);

    snprintf(p, sizeof p, "%s/MANIFEST", dir); /* a model of an earlier jsmf */
    CHECK(unlink(p) == 0);
    CHECK(jsmf_model_has_manifest(dir) == 0);
    CHECK_OK(jsmf_model_load(dir, &l));
    CHECK(l && memcmp(l->B, m->B, 48 * sizeof(double)) == 0);
    jsmf_model_free(l);
    jsmf_model_free(m);
}

/* Run a Python snippet with numpy; returns its exit status, or -1 when numpy is unavailable. */
static int run_python(const char *code)
{
    const char *py = getenv("PYTHON") ? getenv("PYTHON") : "/usr/bin/python3";
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' -c 'import numpy' 2>/dev/null", py);
    if (system(cmd) != 0)
        return -1;
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' -c \"%s\"", tmpdir, py, code);
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : 1;
}

/* What we write is byte for byte what numpy.save writes, and numpy's files read back here. */
static void test_numpy_compat(void)
{
    double v[12];
    for (int i = 0; i < 12; i++)
        v[i] = i * 0.25 - 1;
    uint32_t u[6] = {0, 1, 2, 3, 4, 4000000000u};
    CHECK_OK(npy_write_f64(tpath("c2.npy"), v, 3, 4));
    CHECK_OK(npy_write_f64(tpath("c1.npy"), v, 12, 0));
    CHECK_OK(npy_write_u32(tpath("cu.npy"), u, 2, 3));
    int rc = run_python(
        "import numpy as np, sys\n"
        "x = np.arange(12) * 0.25 - 1\n"
        "np.save('p2.npy', x.reshape(3, 4)); np.save('p1.npy', x)\n"
        "np.save('pu.npy', np.array([0, 1, 2, 3, 4, 4000000000], dtype='<u4').reshape(2, 3))\n"
        "for c, p in (('c2', 'p2'), ('c1', 'p1'), ('cu', 'pu')):\n"
        "    a, b = open(c + '.npy', 'rb').read(), open(p + '.npy', 'rb').read()\n"
        "    assert a == b, (c, a[:128], b[:128])\n"
        "assert np.load('cu.npy').dtype == np.uint32 and np.load('cu.npy')[1, 2] == 4000000000\n"
        "assert np.array_equal(np.load('c2.npy'), x.reshape(3, 4))\n"
        "np.save('fort.npy', np.asfortranarray(x.reshape(3, 4)))\n"
        "np.save('f32.npy', x.astype(np.float32))\n"
        "np.save('big.npy', x.astype('>f8'))\n"
        "np.save('three.npy', x.reshape(2, 2, 3))\n"
        "np.save('wide.npy', np.linspace(0, 1, 7000).reshape(1, 7000))\n");
    if (rc < 0) {
        fprintf(stderr, "numpy not available: numpy compatibility not checked\n");
        return;
    }
    CHECK(rc == 0);
    double *d = NULL;
    uint32_t r, c;
    CHECK_OK(npy_read_f64(tpath("p2.npy"), &d, &r, &c));
    CHECK(r == 3 && c == 4 && d && memcmp(d, v, sizeof v) == 0);
    free(d);
    CHECK_OK(npy_read_f64(tpath("p1.npy"), &d, &r, &c));
    CHECK(r == 12 && c == 1 && d && d[11] == v[11]);
    free(d);
    CHECK_OK(npy_read_f64(tpath("wide.npy"), &d, &r, &c));
    CHECK(r == 1 && c == 7000 && d && d[6999] == 1.0);
    free(d);
    CHECK(npy_read_f64(tpath("fort.npy"), &d, &r, &c) == JSMF_EFORMAT);
    CHECK(strstr(jsmf_errmsg(), "fort.npy") && strstr(jsmf_errmsg(), "Fortran"));
    CHECK(npy_read_f64(tpath("f32.npy"), &d, &r, &c) == JSMF_EFORMAT);
    CHECK(strstr(jsmf_errmsg(), "f32.npy") && strstr(jsmf_errmsg(), "<f4"));
    CHECK(npy_read_f64(tpath("big.npy"), &d, &r, &c) == JSMF_EFORMAT);
    CHECK(strstr(jsmf_errmsg(), ">f8") != NULL);
    CHECK(npy_read_f64(tpath("three.npy"), &d, &r, &c) == JSMF_EFORMAT);
    CHECK(strstr(jsmf_errmsg(), "2-D") != NULL);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/jsmf-model-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_npy();
    test_numpy_compat();
    test_json();
    test_model_roundtrip();
    test_validation();
    test_manifest();
    test_failed_write();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd)) {
    }
    CHECK_DONE();
}
