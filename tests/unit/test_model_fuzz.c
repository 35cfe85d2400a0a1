/* test_model_fuzz.c — randomised robustness of the readers: mutated and truncated JSON, .npy
 * headers and anchors.txt files must give an answer or a clean error, never a crash or an
 * out-of-bounds read (run under ASan by make check-asan). Seed: JSMF_TEST_SEED (default 1). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "jsmf_model.h"
#include "model/json.h"
#include "model/npy.h"

static uint64_t rng_state;
static uint32_t rnd(uint32_t n)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)((rng_state >> 33) % n);
}

static void mutate(char *buf, size_t len)
{
    static const char alphabet[] = "{}[]\",:\\0123456789.eE-+ tfnul'()ab\x01\x80\xff";
    int edits = 1 + (int)rnd(4);
    for (int e = 0; e < edits; e++)
        buf[rnd((uint32_t)len)] = alphabet[rnd(sizeof alphabet - 1)];
}

static void fuzz_json(int rounds)
{
    const char *sample = "{\"format\": \"jsmf-model\", \"version\": 1, \"k\": 25,\n"
                         " \"metrics\": {\"specificity\": 1.5e-3, \"list\": [1, \"a\\u00e9\\n\", "
                         "null, true, {\"x\": -0.5}]}, \"store\": {\"path\": \"s\"}}";
    size_t len = strlen(sample);
    static const char *paths[] = {"format", "version", "metrics.specificity", "metrics.list.1",
                                  "metrics.list.4.x", "store.path", "nope.deeper", "metrics.list.9"};
    int valid = 0;
    for (int r = 0; r < rounds; r++) {
        size_t n = rnd(4) ? len : rnd((uint32_t)len); /* sometimes truncated */
        char *buf = malloc(n + 1);                      /* exact size: ASan sees overreads */
        memcpy(buf, sample, n);
        buf[n] = 0;
        if (n)
            mutate(buf, n);
        valid += json_valid(buf);
        for (size_t p = 0; p < sizeof paths / sizeof *paths; p++) {
            double v;
            char *s = NULL;
            json_get_number(buf, paths[p], &v);
            if (json_get_string(buf, paths[p], &s) == 0)
                free(s);
        }
        free(buf);
    }
    CHECK(json_valid(sample));
    fprintf(stderr, "json: %d of %d mutations still valid\n", valid, rounds);
}

static void fuzz_npy(const char *dir, int rounds)
{
    char path[512];
    snprintf(path, sizeof path, "%s/f.npy", dir);
    double v[6] = {1, 2, 3, 4, 5, 6};
    CHECK_OK(npy_write_f64(path, v, 2, 3));
    FILE *f = fopen(path, "rb");
    char orig[128 + 48];
    size_t len = fread(orig, 1, sizeof orig, f);
    fclose(f);
    int ok = 0;
    for (int r = 0; r < rounds; r++) {
        char buf[sizeof orig];
        memcpy(buf, orig, len);
        size_t n = rnd(5) ? len : rnd((uint32_t)len);
        mutate(buf, rnd(3) ? 80 : n ? n : 1); /* mostly the header */
        f = fopen(path, "wb");
        fwrite(buf, 1, n, f);
        fclose(f);
        double *d = NULL;
        uint32_t rows, cols;
        if (npy_read_f64(path, &d, &rows, &cols) == 0) {
            ok++;
            CHECK((size_t)rows * cols * 8 <= n); /* never more values than bytes read */
            free(d);
        }
    }
    fprintf(stderr, "npy: %d of %d mutations still readable\n", ok, rounds);
}

static void fuzz_anchors(const char *dir, int rounds)
{
    jsmf_model *m = NULL;
    CHECK_OK(jsmf_model_new(4, 2, &m));
    m->vocab = calloc(1, sizeof *m->vocab);
    m->vocab->n = 4;
    m->vocab->words = calloc(4, sizeof(char *));
    for (int i = 0; i < 4; i++) {
        m->vocab->words[i] = strdup("w0");
        m->vocab->words[i][1] = (char)('0' + i);
        m->B[i * 2] = m->B[i * 2 + 1] = 0.25;
    }
    m->A[0] = m->A[3] = 0.5;
    m->anchors = malloc(2 * sizeof *m->anchors);
    m->anchors[0] = 1, m->anchors[1] = 3;
    char mdir[512], path[600];
    snprintf(mdir, sizeof mdir, "%s/am", dir);
    CHECK_OK(jsmf_model_save(mdir, m, 0));
    snprintf(path, sizeof path, "%s/anchors.txt", mdir);
    const char *orig = "0\t1\tw1\n1\t3\tw3\n";
    int ok = 0;
    for (int r = 0; r < rounds; r++) {
        char buf[64];
        size_t n = strlen(orig);
        memcpy(buf, orig, n);
        mutate(buf, n);
        FILE *f = fopen(path, "wb");
        fwrite(buf, 1, rnd(4) ? n : rnd((uint32_t)n), f);
        fclose(f);
        jsmf_model *l = NULL;
        if (jsmf_model_load(mdir, &l) == 0) {
            ok++;
            for (uint32_t t = 0; t < l->k; t++)
                CHECK(l->anchors[t] < l->n);
            jsmf_model_free(l);
        }
    }
    fprintf(stderr, "anchors: %d of %d mutations still loadable\n", ok, rounds);
    jsmf_model_free(m);
}

int main(void)
{
    const char *seed = getenv("JSMF_TEST_SEED");
    rng_state = seed ? strtoull(seed, NULL, 10) : 1;
    fprintf(stderr, "seed %llu\n", (unsigned long long)rng_state);
    char dir[] = "/tmp/jsmf-fuzz-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    fuzz_json(3000);
    fuzz_npy(dir, 1500);
    fuzz_anchors(dir, 600);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) {
    }
    CHECK_DONE();
}
