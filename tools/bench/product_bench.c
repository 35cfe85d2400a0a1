/* product_bench.c — one product C V through the documents (src/fit/fit_docs.c) on random baskets
 * of 50 distinct items out of N, held in memory as a documents view; with a budget below half
 * their size the fit's stepped product runs (as on a store whose documents exceed --mem / 2), with
 * more the whole (tiled) one. Each product's wall and CPU seconds, and the largest difference to
 * the first product's Z. MODES is a string of d (float64 vectors) and s (fd->single). Not a test:
 * build it against two revisions' build/libjsmf.a and run both in one session to compare them.
 *   product_bench N ENTRIES P MEM_MB MODES [REPS]     e.g. product_bench 1000000 20000000 300 64 ddd
 * (the build command is in tools/bench/README.md) */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "fit/fit_internal.h"
#include "jsmf.h"

#define BASKET 50

static uint64_t rng_state = 88172645463325252ull;

static uint64_t xorshift(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static void die(const char *what)
{
    fprintf(stderr, "product_bench: %s (%s)\n", what, jsmf_errmsg());
    exit(1);
}

/* m baskets of BASKET distinct ids < n (ascending), each count 1. */
static void random_baskets(uint32_t n, uint64_t m, uint64_t *offs, uint32_t *ids, uint32_t *cnt)
{
    offs[0] = 0;
    for (uint64_t d = 0; d < m; d++) {
        uint32_t *x = ids + d * BASKET;
        for (uint32_t k = 0; k < BASKET; k++) {
            int dup;
            do {
                x[k] = (uint32_t)(xorshift() % n);
                dup = 0;
                for (uint32_t j = 0; j < k && !dup; j++)
                    dup = x[j] == x[k];
            } while (dup);
            cnt[d * BASKET + k] = 1;
        }
        qsort(x, BASKET, sizeof *x, cmp_u32);
        offs[d + 1] = offs[d] + BASKET;
    }
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: product_bench N ENTRIES P MEM_MB MODES [REPS]\n");
        return 2;
    }
    uint32_t n = (uint32_t)strtoul(argv[1], NULL, 10), p = (uint32_t)strtoul(argv[3], NULL, 10);
    uint64_t entries = strtoull(argv[2], NULL, 10), mem = strtoull(argv[4], NULL, 10) << 20;
    const char *modes = argv[5];
    int reps = argc > 6 ? atoi(argv[6]) : 1;
    uint64_t m = entries / BASKET;
    if (n < 2 * BASKET || !p || !m || !*modes) {
        fprintf(stderr, "product_bench: needs N >= 100, P > 0, ENTRIES >= 50, MODES not empty\n");
        return 2;
    }
    size_t np = (size_t)n * p;
    uint64_t *offs = malloc(sizeof(uint64_t) * (m + 1));
    uint32_t *ids = malloc(sizeof(uint32_t) * m * BASKET), *cnt = malloc(sizeof(uint32_t) * m * BASKET);
    double *V = malloc(sizeof(double) * np), *Z = malloc(sizeof(double) * np);
    double *Z0 = malloc(sizeof(double) * np);
    if (!offs || !ids || !cnt || !V || !Z || !Z0)
        die("out of memory");
    random_baskets(n, m, offs, ids, cnt);
    for (size_t e = 0; e < np; e++)
        V[e] = (double)(xorshift() % 2000001) / 1e6 - 1;

    jsmf_doc_csr csr = {n, m, offs, ids, cnt, NULL};
    jsmf_doc_source D;
    fit_docs *fd = NULL;
    if (jsmf_doc_csr_source(&csr, 4096, &D))
        die("documents view");
    if (fit_docs_open(&D, n, mem, omp_get_max_threads(), NULL, NULL, &fd))
        die("fit_docs_open");
    printf("N %u entries %llu p %u %s product\n", n, (unsigned long long)(m * BASKET), p,
           fit_docs_cached(fd) ? "whole" : "stepped");
    for (int r = 0; r < reps; r++) {
        for (const char *c = modes; *c; c++) {
            fit_docs_single(fd, *c == 's');
            double wall = clock_seconds();
            clock_t cpu = clock();
            if (fit_docs_apply(fd, V, p, Z))
                die("fit_docs_apply");
            wall = clock_seconds() - wall;
            double cpu_s = (double)(clock() - cpu) / CLOCKS_PER_SEC;
            if (r == 0 && c == modes)
                memcpy(Z0, Z, sizeof(double) * np);
            double dz = 0, zmax = 0;
            for (size_t e = 0; e < np; e++) {
                dz = fmax(dz, fabs(Z[e] - Z0[e]));
                zmax = fmax(zmax, fabs(Z0[e]));
            }
            printf("%s %.2f s wall %.2f cpu  max|dZ| %.3g of max|Z| %.3g  (%.3f us/entry)\n",
                   *c == 's' ? "single" : "double", wall, cpu_s, dz, zmax,
                   wall * 1e6 / (double)(m * BASKET));
            fflush(stdout);
        }
    }
    fit_docs_close(fd);
    jsmf_doc_csr_source_free(&D);
    free(offs), free(ids), free(cnt), free(V), free(Z), free(Z0);
    return 0;
}
