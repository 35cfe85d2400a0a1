/* test_fit_threads.c — a thread count is a parameter of one call: after jsmf_fit,
 * fit_rectify_dense and jsmf_fdm_train the caller's OpenMP default and OpenBLAS's count
 * are what they were, whatever count the call was given (OpenBLAS's OpenMP build resets
 * OpenMP's default whenever its own count is set, which once left the caller with OpenBLAS's). */
#include <omp.h>

#include <cblas.h>

#include "check.h"
#include "fit_testutil.h"
#include "jsmf_fdm.h"
#include "fit/fit_internal.h"

static int caller_threads;

static void check_unchanged(const char *after, int blas)
{
    int omp = omp_get_max_threads(), now_blas = openblas_get_num_threads();
    if (omp != caller_threads || now_blas != blas)
        fprintf(stderr, "after %s: OpenMP %d (was %d), OpenBLAS %d (was %d)\n", after, omp,
                caller_threads, now_blas, blas);
    CHECK(omp == caller_threads);
    CHECK(now_blas == blas);
}

int main(void)
{
    uint32_t n = 40, k = 4;
    double *B, *A;
    tu_csr t;
    jsmf_source src;
    tu_planted_source(n, k, 0.0, &B, &A, &t, &src);

    /* a count neither OpenBLAS's (at most the processors) nor one a call is given below */
    caller_threads = omp_get_num_procs() + 3;
    omp_set_num_threads(caller_threads);
    int blas = openblas_get_num_threads();

    jsmf_fit_opts o;
    jsmf_fit_opts_init(&o, k);
    o.rectify = JSMF_RECTIFY_AP;
    o.rectify_iters = 2;
    int counts[] = {0, 1, 2};
    for (int i = 0; i < 3; i++) {
        jsmf_model *m = NULL;
        o.threads = counts[i];
        o.mode = i == 1 ? JSMF_MODE_DENSE : JSMF_MODE_STREAM;
        CHECK_OK(jsmf_fit(&src, NULL, &o, &m, NULL));
        check_unchanged("jsmf_fit", blas);
        tu_model_free(m);
    }
    double *X = NULL;
    o.threads = 2;
    CHECK_OK(fit_rectify_dense(&src, &o, &X));
    check_unchanged("fit_rectify_dense", blas);
    free(X);
    o.k = n; /* refused: the count is put back on the error path too */
    CHECK(jsmf_fit(&src, NULL, &o, &(jsmf_model *){NULL}, NULL) == JSMF_EINVAL);
    check_unchanged("a refused jsmf_fit", blas);

    jsmf_fdm_opts p;
    jsmf_fdm_opts_init(&p);
    p.k = k, p.device = JSMF_FDM_DEVICE_CPU, p.batch = 64, p.steps = 4, p.eval_every = 2;
    p.heldout = 100, p.patience = 0, p.starts = 1, p.threads = 2;
    jsmf_fdm_result r;
    CHECK_OK(jsmf_fdm_train(&src, &p, &r));
    check_unchanged("jsmf_fdm_train", blas);
    CHECK(!strcmp(r.device, "cpu (2 threads)"));
    jsmf_fdm_result_free(&r);
    p.threads = 0; /* the caller's default, read, not set */
    CHECK_OK(jsmf_fdm_train(&src, &p, &r));
    check_unchanged("jsmf_fdm_train", blas);
    char want[64];
    snprintf(want, sizeof want, "cpu (%d threads)", caller_threads);
    CHECK(!strcmp(r.device, want));
    jsmf_fdm_result_free(&r);

    tu_csr_free(&t);
    free(B), free(A);
    CHECK_DONE();
}
