/* test_fit_lowrank.c — products with the compressed rectified C (fit_compress.c): against the
 * dense R its rows give, and P = max(-Y Y_I^T, 0) kept by fit_lowrank_set for the products
 * against P made again by each product (the same bits, for 1 and 2 threads, and after the
 * factor changes). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fit/fit_internal.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double unif(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return ((rng >> 11) + 0.5) / 9007199254740992.0;
}

/* Z = R V with R dense from fit_lowrank_rows. */
static void dense_product(const fit_lowrank *lr, uint32_t n, const double *V, uint32_t p,
                          double *Z)
{
    double *R = malloc(sizeof(double) * n * n);
    fit_lowrank_rows(lr, 0, n, R);
    memset(Z, 0, sizeof(double) * n * p);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++)
            for (uint32_t c = 0; c < p; c++)
                Z[(size_t)i * p + c] += R[(size_t)i * n + j] * V[(size_t)j * p + c];
    free(R);
}

static double max_abs_diff(const double *a, const double *b, size_t len, double *scale)
{
    double d = 0, s = 0;
    for (size_t e = 0; e < len; e++)
        d = fmax(d, fabs(a[e] - b[e])), s = fmax(s, fabs(b[e]));
    *scale = s;
    return d;
}

int main(void)
{
    /* n above the blocks of 256 rows the products make, so P is read at offsets */
    uint32_t n = 700, k = 5, l = 12, p = 7;
    fit_part L = fit_part_whole(n);
    double *Y = malloc(sizeof(double) * n * k), *V = malloc(sizeof(double) * n * p);
    double *Zk = malloc(sizeof(double) * n * p), *Zr = malloc(sizeof(double) * n * p);
    double *Zd = malloc(sizeof(double) * n * p);
    for (size_t e = 0; e < (size_t)n * p; e++)
        V[e] = unif() - 0.5;
    for (int round = 0; round < 2; round++) {
        /* a factor with negative entries in Y Y^T to repair (the second: another factor) */
        for (size_t e = 0; e < (size_t)n * k; e++)
            Y[e] = (unif() - 0.3) * 0.01;
        for (int nt = 1; nt <= 2; nt++) {
            fit_lowrank *keep = fit_lowrank_new(&L, k, l, nt);
            fit_lowrank *again = fit_lowrank_new(&L, k, l, nt);
            CHECK(keep && again);
            if (!keep || !again)
                return 1;
            fit_lowrank_keep_p(again, 0);
            if (round) { /* P made for an earlier factor, then this one */
                double *Y0 = malloc(sizeof(double) * n * k);
                for (size_t e = 0; e < (size_t)n * k; e++)
                    Y0[e] = unif() - 0.5;
                CHECK_OK(fit_lowrank_set(keep, Y0, NULL, 0));
                CHECK_OK(fit_lowrank_apply(keep, V, p, Zk));
                free(Y0);
            }
            uint32_t extra[2] = {3, n - 1}; /* rows added to I, as the anchors' are */
            CHECK_OK(fit_lowrank_set(keep, Y, extra, 2));
            CHECK_OK(fit_lowrank_set(again, Y, extra, 2));
            CHECK(fit_lowrank_l(keep) == l + 2 || fit_lowrank_l(keep) == l + 1);
            for (int rep = 0; rep < 2; rep++) { /* the kept P serves every product */
                CHECK_OK(fit_lowrank_apply(keep, V, p, Zk));
                CHECK_OK(fit_lowrank_apply(again, V, p, Zr));
                CHECK(memcmp(Zk, Zr, sizeof(double) * n * p) == 0);
            }
            dense_product(keep, n, V, p, Zd);
            double scale, err = max_abs_diff(Zk, Zd, (size_t)n * p, &scale);
            CHECK(err <= 1e-12 * scale);
            fit_lowrank_free(keep), fit_lowrank_free(again);
        }
    }
    free(Y), free(V), free(Zk), free(Zr), free(Zd);
    CHECK_DONE();
}
