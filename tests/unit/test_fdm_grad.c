/* test_fdm_grad.c — the CPU back end's analytic gradients of the FDM batch loss (w.r.t. the
 * logits of mu and alpha) against central finite differences in double. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "jsmf_fdm.h"
#include "fdm/fdm_internal.h"

static double rnd(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return ((*s >> 8) & 0xFFFF) / 65536.0;
}

static double loss_at(uint32_t n, uint32_t k, const double *w, const double *a, const uint32_t *u,
                      const uint32_t *v, uint32_t cnt)
{
    double l = NAN;
    if (fdm_loss_grad_cpu(n, k, w, a, u, v, cnt, &l, NULL, NULL))
        return NAN;
    return l;
}

static void check_case(uint32_t n, uint32_t k, uint32_t cnt, unsigned seed)
{
    double w[64 * 8], a[8 * 8], gw[64 * 8], ga[8 * 8];
    uint32_t u[64], v[64];
    for (uint32_t e = 0; e < n * k; e++)
        w[e] = 2 * rnd(&seed) - 1;
    for (uint32_t e = 0; e < k * k; e++)
        a[e] = 2 * rnd(&seed) - 1; /* not symmetric: the model symmetrises */
    for (uint32_t i = 0; i < cnt; i++) {
        u[i] = (uint32_t)(rnd(&seed) * n) % n;
        v[i] = i % 3 ? (uint32_t)(rnd(&seed) * n) % n : u[i]; /* repeats and u == v pairs */
    }
    double l0;
    CHECK_OK(fdm_loss_grad_cpu(n, k, w, a, u, v, cnt, &l0, gw, ga));
    CHECK(isfinite(l0) && l0 > 0);
    const double h = 1e-5;
    double worst = 0;
    for (uint32_t e = 0; e < n * k; e++) {
        double keep = w[e];
        w[e] = keep + h;
        double lp = loss_at(n, k, w, a, u, v, cnt);
        w[e] = keep - h;
        double lm = loss_at(n, k, w, a, u, v, cnt);
        w[e] = keep;
        double fd = (lp - lm) / (2 * h), err = fabs(fd - gw[e]) / fmax(1e-3, fabs(fd));
        if (err > worst)
            worst = err;
        CHECK(fabs(fd - gw[e]) <= 1e-7 + 1e-5 * fabs(fd));
    }
    for (uint32_t e = 0; e < k * k; e++) {
        double keep = a[e];
        a[e] = keep + h;
        double lp = loss_at(n, k, w, a, u, v, cnt);
        a[e] = keep - h;
        double lm = loss_at(n, k, w, a, u, v, cnt);
        a[e] = keep;
        double fd = (lp - lm) / (2 * h);
        CHECK(fabs(fd - ga[e]) <= 1e-7 + 1e-5 * fabs(fd));
    }
    /* the gradient of mu's logits sums to zero per topic (softmax invariance) */
    for (uint32_t t = 0; t < k; t++) {
        double s = 0;
        for (uint32_t l = 0; l < n; l++)
            s += gw[l * k + t];
        CHECK(fabs(s) < 1e-12);
    }
    fprintf(stderr, "N=%u K=%u B=%u: loss %.6f, worst relative error %.2e\n", n, k, cnt, l0, worst);
}

int main(void)
{
    check_case(12, 3, 20, 7u);
    check_case(40, 5, 64, 11u);
    check_case(9, 1, 5, 3u);
    /* bad input is refused, not read out of bounds */
    double w[4] = {0}, a[1] = {0}, l;
    uint32_t u[1] = {7}, v[1] = {0};
    CHECK(fdm_loss_grad_cpu(4, 1, w, a, u, v, 1, &l, NULL, NULL) == JSMF_EINVAL);
    CHECK_DONE();
}
