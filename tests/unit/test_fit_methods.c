/* test_fit_methods.c — the choices' tables as the library lists them: the names of the fit's
 * methods and of the FDM devices in enum order, NULL past the last (the CLI's choices are these
 * lists); each method's defaults; a value with no method is refused by jsmf_fit and
 * fit_rectify_dense (JSMF_EINVAL), not run as another; --mode dense with a method that
 * has no dense path names the methods that have one; FDM on the CPU draws pairs on the host and
 * a device index with no device is refused. */
#include <string.h>

#include "check.h"
#include "fit_testutil.h"
#include "jsmf_fdm.h"
#include "fit/fit_internal.h"

static int names_are(const char *(*name)(int), const char *const *want, int count)
{
    for (int i = 0; i < count; i++)
        if (!name(i) || strcmp(name(i), want[i]))
            return 0;
    return name(count) == NULL && name(-1) == NULL;
}

int main(void)
{
    static const char *const rectify[] = {"ap", "dr", "none", "compressed"};
    static const char *const anchors[] = {"qr", "fast"};
    static const char *const recover[] = {"admm", "expgrad", "kl", "activeset"};
    static const char *const devices[] = {"auto", "cpu", "cuda"};
    CHECK(names_are(jsmf_fit_rectify_name, rectify, 4));
    CHECK(names_are(jsmf_fit_anchors_name, anchors, 2));
    CHECK(names_are(jsmf_fit_recover_name, recover, 4));
    CHECK(names_are(jsmf_fdm_device_name, devices, 3));
    CHECK(!strcmp(jsmf_fit_rectify_name(JSMF_RECTIFY_COMPRESSED), "compressed"));
    CHECK(!strcmp(jsmf_fdm_device_name(JSMF_FDM_DEVICE_CUDA), "cuda"));

    jsmf_fit_opts o;
    jsmf_fit_opts_init(&o, 3);
    CHECK(fit_rectify_iters(&o) == 100); /* compressed: a cap */
    o.rectify = JSMF_RECTIFY_DR;
    CHECK(fit_rectify_iters(&o) == 15);
    o.rectify_iters = 7;
    CHECK(fit_rectify_iters(&o) == 7);

    uint32_t n = 30, k = 3;
    double *B, *A;
    tu_csr t;
    jsmf_source src;
    tu_planted_source(n, k, 0.0, &B, &A, &t, &src);
    int bad[][3] = {{4, 0, 0}, {-1, 0, 0}, {0, 2, 0}, {0, 0, 4}};
    for (int i = 0; i < 4; i++) {
        jsmf_fit_opts_init(&o, k);
        o.rectify = bad[i][0], o.anchors = bad[i][1], o.recover = bad[i][2];
        jsmf_model *m = NULL;
        double *X = NULL;
        CHECK(jsmf_fit(&src, NULL, &o, &m, NULL) == JSMF_EINVAL);
        CHECK(m == NULL);
        CHECK(strstr(jsmf_errmsg(), "method") != NULL);
        CHECK(fit_rectify_dense(&src, &o, &X) == JSMF_EINVAL);
        CHECK(X == NULL);
    }
    jsmf_fit_opts_init(&o, k);
    o.mode = JSMF_MODE_DENSE;
    jsmf_model *m = NULL;
    CHECK(jsmf_fit(&src, NULL, &o, &m, NULL) == JSMF_EINVAL);
    CHECK(strstr(jsmf_errmsg(), "--mode dense needs --rectify ap, dr or none") != NULL);

    /* the devices: a run on the CPU draws its pairs on the host; no device 7 */
    jsmf_fdm_opts p;
    jsmf_fdm_opts_init(&p);
    p.k = k, p.device = JSMF_FDM_DEVICE_CPU, p.batch = 64, p.steps = 2, p.eval_every = 1;
    p.heldout = 50, p.patience = 0, p.starts = 1, p.threads = 1;
    jsmf_fdm_result r;
    CHECK_OK(jsmf_fdm_train(&src, &p, &r));
    CHECK(!strcmp(r.device, "cpu (1 threads)"));
    CHECK(r.host_sampling == 1);
    jsmf_fdm_result_free(&r);
    p.device = 7;
    CHECK(jsmf_fdm_train(&src, &p, &r) == JSMF_EINVAL);
    CHECK(strstr(jsmf_errmsg(), "no FDM device 7") != NULL);
    free(B), free(A);
    tu_csr_free(&t);
    CHECK_DONE();
}
