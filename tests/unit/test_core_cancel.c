/* test_core_cancel.c — jsmf_cancel from a progress callback stops a fit with JSMF_EINTR at its
 * next check, the request is consumed (the next fit runs), and withdrawing it (0) in time
 * lets the call finish. The ingest's side is tested from Python (python/tests/test_store.py). */
#include <string.h>

#include "check.h"
#include "fit_testutil.h"

typedef struct {
    const char *at; /* cancel when this step starts */
    int withdraw;   /* ... and withdraw it at once */
    int calls;
} stopper;

static void progress(void *arg, const char *what, double done, double total, const char *unit)
{
    stopper *s = arg;
    (void)done, (void)total, (void)unit;
    s->calls++;
    if (s->at && !strcmp(what, s->at)) {
        jsmf_cancel(1);
        if (s->withdraw)
            jsmf_cancel(0);
    }
}

static int fit_with(const jsmf_source *src, stopper *s)
{
    jsmf_fit_opts o;
    jsmf_fit_opts_init(&o, 4);
    o.progress = progress, o.progress_arg = s;
    jsmf_model *m = NULL;
    int rc = jsmf_fit(src, NULL, &o, &m, NULL);
    CHECK((rc == 0) == (m != NULL));
    tu_model_free(m);
    return rc;
}

int main(void)
{
    double *B, *A;
    tu_csr t;
    jsmf_source src;
    tu_planted_source(60, 4, 0.0, &B, &A, &t, &src);
    const char *steps[] = {"rectify", "anchors", "topics", "correlations"};
    for (int i = 0; i < 4; i++) {
        stopper s = {steps[i], 0, 0};
        int rc = fit_with(&src, &s);
        CHECK(rc == JSMF_EINTR);
        CHECK(strstr(jsmf_errmsg_for(rc), "jsmf_cancel") != NULL);
        stopper again = {NULL, 0, 0}; /* consumed: the next fit runs to its end */
        CHECK_OK(fit_with(&src, &again));
    }
    stopper w = {"anchors", 1, 0};
    CHECK_OK(fit_with(&src, &w));
    CHECK(w.calls >= 4);
    tu_csr_free(&t);
    free(B), free(A);
    CHECK_DONE();
}
