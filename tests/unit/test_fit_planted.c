/* test_fit_planted.c — with the exact C = B A B^T of a separable model, both the dense and the
 * streaming path find the planted anchors and recover B and A; streaming agrees with dense;
 * the result is identical for 1 and 2 threads; every recovery method gets B; the progress
 * callback names each step and the unit of each count. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "fit_testutil.h"
#include "fit/fit_internal.h"

static double max_abs_diff(const double *a, const double *b, size_t n)
{
    double d = 0;
    for (size_t i = 0; i < n; i++)
        d = fmax(d, fabs(a[i] - b[i]));
    return d;
}

/* Topic a of the fit matched to the planted topic through its anchor word. */
static double b_error(const jsmf_model *m, uint32_t n, uint32_t k, const double *B)
{
    double err = 0;
    for (uint32_t a = 0; a < k; a++) {
        uint32_t t = m->anchors[a];
        if (t >= k)
            return INFINITY;
        for (uint32_t i = 0; i < n; i++)
            err = fmax(err, fabs(m->B[(size_t)i * k + a] - B[(size_t)i * k + t]));
    }
    return err;
}

/* Every distinct "what/unit" the fit reported, and whether a count left 0..total. */
typedef struct {
    char seen[1024];
    int bad;
} progress_log;

static void record(void *arg, const char *what, double done, double total, const char *unit)
{
    progress_log *g = arg;
    char key[64];
    snprintf(key, sizeof key, "[%s/%s]", what, unit);
    if (!strstr(g->seen, key) && strlen(g->seen) + strlen(key) < sizeof g->seen)
        strcat(g->seen, key);
    if (!(total > 0 && done >= 0 && done <= total))
        g->bad = 1;
}

/* Each step starts at 0 of 1 (a fraction: no unit); the counts within steps (the streaming
 * path's reads of C too) have their unit. */
static void check_progress(const progress_log *g)
{
    fprintf(stderr, "planted: progress %s\n", g->seen);
    CHECK(!g->bad);
    const char *want[] = {"[rectify/]", "[rectify/iterations]", "[anchors/]", "[topics/]",
                          "[topics/words]", "[correlations/]", "[reading C/rows]"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        CHECK(strstr(g->seen, want[i]) != NULL);
}

int main(void)
{
    uint32_t n = 150, k = 6;
    double *B, *A;
    tu_csr t;
    jsmf_source src;
    tu_planted_source(n, k, 0.0, &B, &A, &t, &src);

    jsmf_fit_opts o;
    jsmf_fit_opts_init(&o, k);
    o.rectify = JSMF_RECTIFY_AP;
    o.rectify_iters = 5;
    o.eig_tol = 1e-12;
    o.snls_tol = 1e-12;
    o.snls_maxit = 20000;
    jsmf_model *md = NULL, *ms = NULL, *m1 = NULL;
    jsmf_fit_report rep;
    o.mode = JSMF_MODE_DENSE;
    CHECK_OK(jsmf_fit(&src, NULL, &o, &md, &rep));
    CHECK(rep.mode == JSMF_MODE_DENSE);
    o.mode = JSMF_MODE_STREAM;
    o.threads = 2;
    CHECK_OK(jsmf_fit(&src, NULL, &o, &ms, &rep));
    CHECK(rep.mode == JSMF_MODE_STREAM);
    o.threads = 1; /* the words' count is told by thread 0: with one, always */
    progress_log pl = {{0}, 0};
    o.progress = record, o.progress_arg = &pl;
    CHECK_OK(jsmf_fit(&src, NULL, &o, &m1, NULL));
    check_progress(&pl);
    o.progress = NULL;
    if (md && ms && m1) {
        unsigned found = 0;
        for (uint32_t a = 0; a < k; a++)
            found |= md->anchors[a] < k ? 1u << md->anchors[a] : 0;
        CHECK(found == (1u << k) - 1);
        double ed = b_error(md, n, k, B), es = b_error(ms, n, k, B);
        fprintf(stderr, "planted: B error dense %.3g stream %.3g\n", ed, es);
        CHECK(ed < 1e-6);
        CHECK(es < 1e-6);
        for (uint32_t a = 0; a < k; a++)
            CHECK(md->anchors[a] == ms->anchors[a]);
        /* A matched through the anchors */
        double ea = 0;
        for (uint32_t a = 0; a < k; a++)
            for (uint32_t b = 0; b < k; b++)
                ea = fmax(ea, fabs(md->A[a * k + b] -
                                   A[md->anchors[a] * k + md->anchors[b]]));
        fprintf(stderr, "planted: A error %.3g\n", ea);
        CHECK(ea < 1e-6);
        CHECK(max_abs_diff(md->B, ms->B, (size_t)n * k) < 1e-7);
        /* identical output for 1 and 2 threads */
        CHECK(memcmp(ms->B, m1->B, sizeof(double) * n * k) == 0);
        CHECK(memcmp(ms->A, m1->A, sizeof(double) * k * k) == 0);
        CHECK(rep.metrics.approximation < 1e-6);
        CHECK(rep.metrics.recovery < 1e-6);
    }
    tu_model_free(md), tu_model_free(ms), tu_model_free(m1);
    /* every recovery method and FastAnchorWords on the exact C */
    int methods[] = {JSMF_RECOVER_EXPGRAD, JSMF_RECOVER_KL, JSMF_RECOVER_ACTIVESET};
    for (int mi = 0; mi < 3; mi++) {
        jsmf_model *m = NULL;
        o.mode = JSMF_MODE_DENSE;
        o.recover = methods[mi];
        o.snls_tol = 1e-11;
        o.snls_maxit = 3000;
        CHECK_OK(jsmf_fit(&src, NULL, &o, &m, NULL));
        if (m) {
            double e = b_error(m, n, k, B);
            fprintf(stderr, "planted: %s B error %.3g\n", jsmf_fit_recover_name(methods[mi]), e);
            CHECK(e < 1e-4);
        }
        tu_model_free(m);
    }
    o.recover = JSMF_RECOVER_ADMM;
    o.anchors = JSMF_ANCHORS_FAST;
    for (int mode = JSMF_MODE_DENSE; mode <= JSMF_MODE_STREAM; mode++) {
        jsmf_model *m = NULL;
        o.mode = mode;
        CHECK_OK(jsmf_fit(&src, NULL, &o, &m, NULL));
        if (m) {
            unsigned found = 0;
            for (uint32_t a = 0; a < k; a++)
                found |= m->anchors[a] < k ? 1u << m->anchors[a] : 0;
            CHECK(found == (1u << k) - 1);
        }
        tu_model_free(m);
    }
    /* the default, the compressed iterate, recovers the planted topics from the exact C too */
    {
        jsmf_fit_opts d;
        jsmf_fit_opts_init(&d, k);
        d.snls_tol = 1e-12;
        d.snls_maxit = 20000;
        jsmf_model *m = NULL;
        CHECK(d.rectify == JSMF_RECTIFY_COMPRESSED);
        CHECK_OK(jsmf_fit(&src, NULL, &d, &m, NULL));
        if (m) {
            unsigned found = 0;
            for (uint32_t a = 0; a < k; a++)
                found |= m->anchors[a] < k ? 1u << m->anchors[a] : 0;
            CHECK(found == (1u << k) - 1);
            double e = b_error(m, n, k, B);
            fprintf(stderr, "planted: compressed B error %.3g\n", e);
            CHECK(e < 1e-5);
        }
        tu_model_free(m);
    }
    tu_csr_free(&t);
    free(B), free(A);
    CHECK_DONE();
}
