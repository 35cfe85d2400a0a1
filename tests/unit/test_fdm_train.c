/* test_fdm_train.c — FDM training on the CPU back end: the loss decreases on a planted C = B A B^T,
 * a run is reproducible bit for bit, each step is told with the last held-out loss as its name,
 * a run stopped after a checkpoint (by the JSMF_TEST_FDM_STOP_AFTER hook, or by a stop request in mid-run) and resumed
 * equals the uninterrupted run exactly, a foreign checkpoint is refused, and a warm start from
 * the true model starts near the optimum. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "jsmf_fdm.h"

#define N 40
#define K 4

static double Btrue[N * K], Atrue[K * K];
static uint64_t rowptr[N + 1];
static uint32_t cols[N * N];
static double vals[N * N];

static double rnd(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (((*s >> 8) & 0xFFFF) + 0.5) / 65536.0;
}

static void planted(jsmf_source *src, jsmf_csr *m)
{
    unsigned s = 17u;
    for (int t = 0; t < K; t++) {
        double sum = 0;
        for (int l = 0; l < N; l++) {
            double x = l < K ? (l == t) * 0.08 : (rnd(&s) < 0.4 ? rnd(&s) : 0);
            Btrue[l * K + t] = x;
            sum += x;
        }
        for (int l = 0; l < N; l++)
            Btrue[l * K + t] /= sum;
    }
    double asum = 0;
    for (int i = 0; i < K; i++)
        for (int j = i; j < K; j++) {
            double x = i == j ? 1 + rnd(&s) : 0.2 * rnd(&s);
            Atrue[i * K + j] = Atrue[j * K + i] = x;
        }
    for (int e = 0; e < K * K; e++)
        asum += Atrue[e];
    for (int e = 0; e < K * K; e++)
        Atrue[e] /= asum;
    uint64_t z = 0;
    for (int u = 0; u < N; u++) {
        rowptr[u] = z;
        for (int v = 0; v < N; v++) {
            double c = 0;
            for (int i = 0; i < K; i++)
                for (int j = 0; j < K; j++)
                    c += Btrue[u * K + i] * Atrue[i * K + j] * Btrue[v * K + j];
            if (c > 0)
                cols[z] = v, vals[z] = c, z++;
        }
    }
    rowptr[N] = z;
    m->n = N, m->rowptr = rowptr, m->cols = cols, m->vals = vals;
    jsmf_csr_source(m, src);
}

/* What p->progress was told at each step; a stop request once step `stop_at` is told. */
typedef struct {
    char what[61][32];
    double done[61], total[61];
    int calls, bad_unit;
    uint64_t stop_at;
    volatile sig_atomic_t stop;
} step_log;

static void record(void *arg, const char *what, double done, double total, const char *unit)
{
    step_log *g = arg;
    if (g->calls < 61) {
        snprintf(g->what[g->calls], sizeof g->what[0], "%s", what);
        g->done[g->calls] = done, g->total[g->calls] = total;
    }
    g->calls++;
    g->bad_unit |= strcmp(unit, "steps") != 0;
    if (g->stop_at && done == (double)g->stop_at)
        g->stop = 1; /* as a signal handler would, between two steps */
}

static void small_params(jsmf_fdm_opts *p)
{
    jsmf_fdm_opts_init(p);
    p->k = K, p->device = JSMF_FDM_DEVICE_CPU, p->seed = 5, p->batch = 256, p->lr = 0.05;
    p->steps = 60, p->eval_every = 10, p->heldout = 2000, p->patience = 0, p->threads = 2;
    p->starts = 1; /* the mechanics of one run; the starts have their own check */
}

int main(void)
{
    jsmf_csr m;
    jsmf_source src;
    planted(&src, &m);
    char dir[] = "/tmp/test_fdm_train.XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char ck1[256], ck2[256];
    snprintf(ck1, sizeof ck1, "%s/a.ckpt", dir);
    snprintf(ck2, sizeof ck2, "%s/b.ckpt", dir);

    /* loss decreases; B and A are distributions */
    jsmf_fdm_opts p;
    jsmf_fdm_result r1, r2, r3;
    small_params(&p);
    step_log told = {0};
    p.progress = record, p.progress_arg = &told;
    CHECK_OK(jsmf_fdm_train(&src, &p, &r1));
    p.progress = NULL;
    CHECK(r1.n_curve == 6 && r1.steps == 60 && r1.resumed_from == 0);
    /* every step told, in steps of 60; "training" until the first evaluation (step 10) */
    CHECK(told.calls == 60 && !told.bad_unit);
    for (int s = 1; s <= 60 && told.calls == 60 && r1.n_curve == 6; s++) {
        char want[32] = "training";
        if (s >= 10)
            snprintf(want, sizeof want, "held-out %.4f", r1.curve_heldout[s / 10 - 1]);
        CHECK(!strcmp(told.what[s - 1], want) && told.done[s - 1] == s);
        CHECK(told.total[s - 1] == 60);
    }
    if (r1.n_curve == 6) {
        fprintf(stderr, "held-out loss %.4f -> %.4f\n", r1.curve_heldout[0], r1.curve_heldout[5]);
        CHECK(r1.curve_heldout[5] < r1.curve_heldout[0] - 0.05);
        CHECK(r1.curve_train[5] < r1.curve_train[0]);
    }
    for (int t = 0; t < K; t++) {
        double s = 0;
        for (int l = 0; l < N; l++)
            s += r1.B[l * K + t];
        CHECK_NEAR(s, 1.0, 1e-12);
    }
    double as = 0;
    for (int e = 0; e < K * K; e++)
        as += r1.A[e];
    CHECK_NEAR(as, 1.0, 1e-12);
    CHECK(r1.A[1] == r1.A[K]); /* symmetric */
    CHECK(!strncmp(r1.device, "cpu", 3));

    /* reproducible bit for bit */
    CHECK_OK(jsmf_fdm_train(&src, &p, &r2));
    CHECK(r2.B && !memcmp(r1.B, r2.B, sizeof(double) * N * K));
    jsmf_fdm_result_free(&r2);

    /* several random starts: the best held-out one goes on, reproducibly, and it is at least
     * as good as the first start alone after the same steps */
    p.starts = 4, p.steps = 260; /* 4 probes of 20 evaluations (200 steps), then 60 more */
    CHECK_OK(jsmf_fdm_train(&src, &p, &r2));
    CHECK_OK(jsmf_fdm_train(&src, &p, &r3));
    CHECK(r2.B && r3.B && !memcmp(r2.B, r3.B, sizeof(double) * N * K));
    CHECK(r2.steps == 260 && r2.n_curve == 26);
    jsmf_fdm_result_free(&r3);
    p.starts = 1;
    CHECK_OK(jsmf_fdm_train(&src, &p, &r3));
    CHECK(r2.n_curve == 26 && r3.n_curve == 26);
    if (r2.n_curve == 26 && r3.n_curve == 26) { /* the best of the probes: the chosen one's */
        double b2 = INFINITY, b3 = INFINITY;
        for (int i = 0; i < 20; i++)
            b2 = fmin(b2, r2.curve_heldout[i]), b3 = fmin(b3, r3.curve_heldout[i]);
        CHECK(b2 <= b3);
    }
    jsmf_fdm_result_free(&r2), jsmf_fdm_result_free(&r3);

    /* the probes use up the time: the run trains no step of its own, yet pairs were trained,
     * and pairs/s counts them (it said 0) */
    p.starts = 4, p.time_limit = 1e-9;
    CHECK_OK(jsmf_fdm_train(&src, &p, &r2));
    CHECK(r2.time_limited && r2.steps >= 1);
    CHECK(r2.pairs_per_second > 0);
    jsmf_fdm_result_free(&r2);
    p.starts = 1, p.time_limit = 0;
    p.steps = 60;

    /* stopped after step 30 (checkpoint every 20: the stop writes one too) and resumed */
    p.checkpoint = ck1, p.checkpoint_every = 20;
    setenv("JSMF_TEST_FDM_STOP_AFTER", "30", 1);
    CHECK(jsmf_fdm_train(&src, &p, &r2) == JSMF_EINTR);
    CHECK(access(ck1, F_OK) == 0);
    unsetenv("JSMF_TEST_FDM_STOP_AFTER");
    CHECK_OK(jsmf_fdm_train(&src, &p, &r2));
    CHECK(r2.resumed_from == 30 && r2.steps == 60);
    CHECK(r2.B && !memcmp(r1.B, r2.B, sizeof(double) * N * K));
    CHECK(r2.A && !memcmp(r1.A, r2.A, sizeof(double) * K * K));
    CHECK(r2.n_curve == r1.n_curve);
    if (r2.n_curve == r1.n_curve)
        CHECK(!memcmp(r1.curve_heldout, r2.curve_heldout, r1.n_curve * sizeof(double)) &&
              !memcmp(r1.curve_train, r2.curve_train, r1.n_curve * sizeof(double)));
    jsmf_fdm_result_free(&r2);

    /* a stop request after step 25 (between checkpoints): a checkpoint of step 25, and the run
     * resumed from it equals the uninterrupted one */
    unlink(ck1);
    memset(&told, 0, sizeof told);
    told.stop_at = 25;
    p.progress = record, p.progress_arg = &told, p.stop = &told.stop;
    CHECK(jsmf_fdm_train(&src, &p, &r2) == JSMF_EINTR);
    CHECK(strstr(jsmf_errmsg(), "stopped at step 25 (checkpoint written)") != NULL);
    CHECK(told.calls == 25);
    told.stop = 0, told.stop_at = 0;
    CHECK_OK(jsmf_fdm_train(&src, &p, &r2));
    CHECK(r2.resumed_from == 25 && r2.steps == 60);
    CHECK(r2.B && !memcmp(r1.B, r2.B, sizeof(double) * N * K));
    jsmf_fdm_result_free(&r2);
    p.progress = NULL, p.stop = NULL;

    /* stopped on a checkpoint boundary of a second checkpoint file */
    p.checkpoint = ck2;
    setenv("JSMF_TEST_FDM_STOP_AFTER", "20", 1);
    CHECK(jsmf_fdm_train(&src, &p, &r2) == JSMF_EINTR);
    /* a checkpoint of another run is refused, or replaced on request */
    unsetenv("JSMF_TEST_FDM_STOP_AFTER");
    p.seed = 6;
    CHECK(jsmf_fdm_train(&src, &p, &r2) == JSMF_EMISMATCH);
    p.seed = 5;
    CHECK_OK(jsmf_fdm_train(&src, &p, &r2));
    CHECK(r2.B && !memcmp(r1.B, r2.B, sizeof(double) * N * K));
    jsmf_fdm_result_free(&r2);
    /* a truncated checkpoint is an error naming it */
    FILE *f = fopen(ck2, "r+b");
    if (f) {
        CHECK(ftruncate(fileno(f), 100) == 0);
        fclose(f);
    }
    CHECK(jsmf_fdm_train(&src, &p, &r2) == JSMF_EFORMAT);
    CHECK(strstr(jsmf_errmsg(), "b.ckpt") != NULL);
    p.fresh_on_mismatch = 1;
    CHECK_OK(jsmf_fdm_train(&src, &p, &r2));
    CHECK(r2.B && r2.resumed_from == 0 && !memcmp(r1.B, r2.B, sizeof(double) * N * K));
    jsmf_fdm_result_free(&r2);

    /* warm start from the truth: the first held-out loss is already near the end of a long run */
    small_params(&p);
    p.init_B = Btrue, p.init_A = Atrue, p.steps = 10;
    CHECK_OK(jsmf_fdm_train(&src, &p, &r3));
    if (r3.n_curve && r1.n_curve)
        CHECK(r3.curve_heldout[0] < r1.curve_heldout[r1.n_curve - 1]);
    jsmf_fdm_result_free(&r3);

    /* a stopping rule on the held-out loss ends the run before the step limit */
    small_params(&p);
    p.steps = 100000, p.patience = 3, p.tol = 1e-3;
    CHECK_OK(jsmf_fdm_train(&src, &p, &r3));
    fprintf(stderr, "stopped at step %llu\n", (unsigned long long)r3.steps);
    CHECK(r3.stopped_early && r3.steps < 100000);
    jsmf_fdm_result_free(&r3);

    jsmf_fdm_result_free(&r1);
    unlink(ck1), unlink(ck2), rmdir(dir);
    CHECK_DONE();
}
