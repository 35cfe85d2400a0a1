/* test_fdm_sampler.c — the two-stage alias sampler: pair frequencies converge to C (a
 * chi-square bound), zero entries are never drawn, draws are a function of (seed, stream, index),
 * and a budget too small for the table thins it with exact row marginals. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "jsmf_fdm.h"
#include "fdm/fdm_internal.h"

#define N 7

/* A symmetric C with zeros, a dominant entry and an empty row (row 5), normalised to sum 1. */
static void make_c(double c[N][N])
{
    memset(c, 0, sizeof(double) * N * N);
    unsigned s = 5u;
    for (int i = 0; i < N; i++)
        for (int j = i; j < N; j++) {
            s = s * 1103515245u + 12345u;
            double x = ((s >> 8) % 1000) / 1000.0;
            if (i == 5 || j == 5 || (i + j) % 4 == 1)
                x = 0;
            c[i][j] = c[j][i] = x;
        }
    c[2][3] = c[3][2] = 3.0;
    double tot = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            tot += c[i][j];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            c[i][j] /= tot;
}

static void to_csr(double c[N][N], uint64_t *rowptr, uint32_t *cols, double *vals, jsmf_csr *m)
{
    uint64_t z = 0;
    for (int i = 0; i < N; i++) {
        rowptr[i] = z;
        for (int j = 0; j < N; j++)
            if (c[i][j] > 0)
                cols[z] = j, vals[z] = c[i][j], z++;
    }
    rowptr[N] = z;
    m->n = N, m->rowptr = rowptr, m->cols = cols, m->vals = vals;
}

/* Pearson statistic of `draws` pairs against C over C's support; counts outside it returned. */
static double chi2(const jsmf_fdm_sampler *smp, double c[N][N], uint32_t draws, uint64_t seed,
                   uint64_t *outside, int *dof)
{
    uint32_t *u = malloc(draws * sizeof *u), *v = malloc(draws * sizeof *v);
    static double cnt[N][N];
    memset(cnt, 0, sizeof cnt);
    /* in uneven chunks: a chunked draw is the same stream */
    for (uint32_t off = 0; off < draws;) {
        uint32_t m = draws - off < 70001 ? draws - off : 70001;
        fdm_sampler_draw_default(smp, seed, 1, off, m, u + off, v + off);
        off += m;
    }
    for (uint32_t i = 0; i < draws; i++)
        cnt[u[i]][v[i]]++;
    double x2 = 0;
    *outside = 0, *dof = -1;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            if (c[i][j] > 0) {
                double e = c[i][j] * draws;
                x2 += (cnt[i][j] - e) * (cnt[i][j] - e) / e;
                (*dof)++;
            } else {
                *outside += (uint64_t)cnt[i][j];
            }
        }
    free(u), free(v);
    return x2;
}

int main(void)
{
    double c[N][N];
    uint64_t rowptr[N + 1];
    uint32_t cols[N * N];
    double vals[N * N];
    jsmf_csr m;
    jsmf_source src;
    make_c(c);
    to_csr(c, rowptr, cols, vals, &m);
    jsmf_csr_source(&m, &src);

    jsmf_fdm_sampler *smp = NULL;
    CHECK_OK(fdm_sampler_build(&src, 0, &smp));
    if (!smp)
        CHECK_DONE();
    jsmf_fdm_sampler_info info;
    fdm_sampler_info_get(smp, &info);
    CHECK(info.kept == src.nnz && !info.thinned && info.dropped_mass == 0);
    CHECK_NEAR(info.total_mass, 1.0, 1e-12);
    CHECK(info.bytes == 16u * N + 8 + 12u * src.nnz);

    uint64_t outside;
    int dof;
    double x2 = chi2(smp, c, 1000000, 42, &outside, &dof);
    /* chi-square with dof degrees of freedom: mean dof, sd sqrt(2 dof); 6 sd is a safe bound */
    fprintf(stderr, "full table: chi2 = %.1f with %d dof, %llu draws outside the support\n", x2,
            dof, (unsigned long long)outside);
    CHECK(x2 < dof + 6 * sqrt(2.0 * dof));
    CHECK(outside == 0);

    /* pure function of (seed, stream, index) */
    uint32_t u1[100], v1[100], u2[50], v2[50];
    fdm_sampler_draw_default(smp, 9, 3, 1000, 100, u1, v1);
    fdm_sampler_draw_default(smp, 9, 3, 1050, 50, u2, v2);
    CHECK(!memcmp(u1 + 50, u2, sizeof u2) && !memcmp(v1 + 50, v2, sizeof v2));
    fdm_sampler_draw_default(smp, 10, 3, 1000, 50, u2, v2);
    CHECK(memcmp(u1, u2, sizeof u2) || memcmp(v1, v2, sizeof v2));
    fdm_sampler_free(smp);

    /* a budget for about half the entries: thinned, row marginals still exact */
    uint64_t budget = 16u * N + 8 + 12u * (src.nnz / 2 + N);
    CHECK_OK(fdm_sampler_build(&src, budget, &smp));
    if (smp) {
        fdm_sampler_info_get(smp, &info);
        fprintf(stderr, "thinned: kept %llu of %llu, dropped mass %.4f, %llu bytes (budget %llu)\n",
                (unsigned long long)info.kept, (unsigned long long)info.nnz, info.dropped_mass,
                (unsigned long long)info.bytes, (unsigned long long)budget);
        CHECK(info.thinned && info.kept < info.nnz && info.dropped_mass > 0);
        CHECK(info.bytes <= budget);
        uint32_t draws = 400000, *u = malloc(draws * 4), *v = malloc(draws * 4);
        double rows[N] = {0}, x2r = 0;
        fdm_sampler_draw_default(smp, 1, 1, 0, draws, u, v);
        for (uint32_t i = 0; i < draws; i++)
            rows[u[i]]++;
        int rdof = -1;
        for (int i = 0; i < N; i++) {
            double e = 0;
            for (int j = 0; j < N; j++)
                e += c[i][j];
            if (e > 0) {
                x2r += (rows[i] - e * draws) * (rows[i] - e * draws) / (e * draws);
                rdof++;
            } else {
                CHECK(rows[i] == 0);
            }
        }
        CHECK(x2r < rdof + 6 * sqrt(2.0 * rdof));
        for (uint32_t i = 0; i < draws; i++)
            CHECK(c[u[i]][v[i]] > 0 || (fprintf(stderr, "drew a zero cell\n"), i = draws, 0));
        free(u), free(v);
        fdm_sampler_free(smp);
    }
    /* too small for even one entry per row: a clear error */
    CHECK(fdm_sampler_build(&src, 64, &smp) == JSMF_ENOMEM);
    /* negative values are refused */
    vals[0] = -1;
    CHECK(fdm_sampler_build(&src, 0, &smp) == JSMF_EFORMAT);
    CHECK_DONE();
}
