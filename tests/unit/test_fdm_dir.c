/* test_fdm_dir.c — jsmf_fdm_to_dir, 'jsmf fdm' as one library call: the start --init asks for
 * and its lines told through the callback, an existing directory refused and left as it was, a
 * stop that leaves a checkpoint the same call resumes from, a stop request made during the warm
 * start (as by a signal) that stops at step 1 with its checkpoint, a stop before any checkpoint
 * (a cold start comparing its random starts) that promises none, and a MODEL directory as the
 * start. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "fit_testutil.h"
#include "jsmf_fdm.h"
#include "jsmf_model.h"
#include "model/npy.h"

enum { N = 40, K = 4 };

static char told[8192];

static void on_info(void *arg, const char *line)
{
    (void)arg;
    size_t len = strlen(told);
    snprintf(told + len, sizeof told - len, "%s\n", line);
}

static volatile sig_atomic_t stop_flag;

static int exists(const char *dir, const char *name)
{
    char path[512];
    struct stat st;
    snprintf(path, sizeof path, "%s%s%s", dir, name ? "/" : "", name ? name : "");
    return stat(path, &st) == 0;
}

static long file_text(const char *dir, const char *name, char *buf, size_t size)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    long n = (long)fread(buf, 1, size - 1, f);
    buf[n] = 0;
    fclose(f);
    return n;
}

/* C = B A B^T of a planted model, as C.npy with its vocabulary beside it. */
static void write_input(const char *dir, char *input, size_t len)
{
    double B[N * K], A[K * K], C[N * N];
    tu_planted(N, K, 0.0, B, A, C);
    snprintf(input, len, "%s/C.npy", dir);
    CHECK_OK(npy_write_f64(input, C, N, N));
    char path[300];
    snprintf(path, sizeof path, "%s/C.npy.vocab.txt", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    for (int w = 0; f && w < N; w++)
        fprintf(f, "w%d\n", w);
    if (f)
        fclose(f);
}

static void small_params(jsmf_fdm_opts *p)
{
    jsmf_fdm_opts_init(p);
    p->k = K;
    p->device = JSMF_FDM_DEVICE_CPU;
    p->threads = 1;
    p->steps = 30;
    p->batch = 128;
    p->eval_every = 10;
    p->heldout = 500;
}

int main(void)
{
    char dir[] = "/tmp/test_fdm_dir.XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char input[300], m[300], w[300], c[300], s[300], x[300], ckpt[320];
    write_input(dir, input, sizeof input);
    snprintf(m, sizeof m, "%s/m", dir);
    snprintf(w, sizeof w, "%s/w", dir);
    snprintf(c, sizeof c, "%s/c", dir);
    snprintf(s, sizeof s, "%s/s", dir);
    snprintf(x, sizeof x, "%s/x", dir);
    jsmf_fdm_dir_opts d = {.init = "none", .info = on_info};
    jsmf_fdm_opts p;
    jsmf_fdm_result r;
    char before[16384], after[16384];

    /* a cold start: no warm-start line; the model written, no checkpoint left */
    small_params(&p);
    CHECK_OK(jsmf_fdm_to_dir(input, m, &d, &p, &r));
    CHECK(r.k == K && r.steps == 30 && r.B != NULL);
    jsmf_fdm_result_free(&r);
    CHECK(exists(m, "B.npy") && !exists(dir, "m.ckpt"));
    CHECK(strstr(told, "warm start") == NULL);
    CHECK(file_text(m, "summary.json", before, sizeof before) > 0);
    CHECK(strstr(before, "\"init\": \"none\"") != NULL);

    /* the directory exists: refused before any work, left byte for byte, nothing to free */
    CHECK(jsmf_fdm_to_dir(input, m, &d, &p, &r) == JSMF_EEXIST);
    CHECK(r.B == NULL && r.steps == 0);
    CHECK(file_text(m, "summary.json", after, sizeof after) > 0 && !strcmp(before, after));

    /* auto: a warm start, told; stopped after step 5 with its checkpoint, which is told, and
     * the same call resumes from it and removes it once the model is written */
    told[0] = 0;
    d.init = "auto";
    setenv("JSMF_TEST_FDM_STOP_AFTER", "5", 1);
    CHECK(jsmf_fdm_to_dir(input, w, &d, &p, &r) == JSMF_EINTR);
    snprintf(ckpt, sizeof ckpt, "%s.ckpt", w);
    CHECK(strstr(told, "warm start: spectral fit of 4 topics (") != NULL);
    CHECK(strstr(told, "interrupted; the same command resumes from ") != NULL);
    CHECK(strstr(told, ckpt) != NULL);
    CHECK(exists(ckpt, NULL) && !exists(w, NULL));
    unsetenv("JSMF_TEST_FDM_STOP_AFTER");
    CHECK_OK(jsmf_fdm_to_dir(input, w, &d, &p, &r));
    CHECK(r.resumed_from == 5 && r.steps == 30);
    jsmf_fdm_result_free(&r);
    CHECK(exists(w, "B.npy") && !exists(ckpt, NULL));

    /* a stop requested before training (a signal during the warm-start fit): the run stops
     * after step 1 with its checkpoint, and the same call resumes from there */
    told[0] = 0;
    p.stop = &stop_flag;
    stop_flag = 1;
    CHECK(jsmf_fdm_to_dir(input, s, &d, &p, &r) == JSMF_EINTR);
    CHECK(strstr(jsmf_errmsg(), "stopped at step 1 (checkpoint written)") != NULL);
    CHECK(strstr(told, "warm start: spectral fit of 4 topics (") != NULL);
    CHECK(strstr(told, "interrupted; the same command resumes from ") != NULL);
    CHECK(exists(dir, "s.ckpt") && !exists(s, NULL));
    stop_flag = 0;
    CHECK_OK(jsmf_fdm_to_dir(input, s, &d, &p, &r));
    CHECK(r.resumed_from == 1 && r.steps == 30);
    jsmf_fdm_result_free(&r);
    CHECK(exists(s, "B.npy") && !exists(dir, "s.ckpt"));

    /* a stop while a cold start compares its random starts: no checkpoint, none promised */
    told[0] = 0;
    d.init = "none";
    stop_flag = 1;
    CHECK(jsmf_fdm_to_dir(input, c, &d, &p, &r) == JSMF_EINTR);
    CHECK(strstr(told, "resumes from") == NULL);
    CHECK(!exists(dir, "c.ckpt") && !exists(c, NULL));
    stop_flag = 0;
    p.stop = NULL;

    /* a MODEL as the start gives K; no options at all: auto, silent */
    d.init = m;
    p.k = 0;
    CHECK_OK(jsmf_fdm_to_dir(input, x, &d, &p, &r));
    CHECK(r.k == K);
    jsmf_fdm_result_free(&r);
    CHECK(file_text(x, "summary.json", after, sizeof after) > 0);
    CHECK(strstr(after, "\"init_from\": \"model\"") != NULL);
    told[0] = 0;
    p.k = K;
    snprintf(x, sizeof x, "%s/y", dir);
    CHECK_OK(jsmf_fdm_to_dir(input, x, NULL, &p, &r));
    jsmf_fdm_result_free(&r);
    CHECK(told[0] == 0 && exists(x, "B.npy"));

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(getenv("KEEP") || system(cmd) == 0);
    CHECK_DONE();
}
