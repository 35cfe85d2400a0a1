/* test_fit_part.c — the fit's row-split reductions (fit_part): each rank's chunk partials, added
 * in chunk order, equal the one-process reduction bit for bit; rows picked by id and gathered
 * come from their ranks; the orthonormalisation of split rows equals the whole one. Run alone
 * (one process: the whole layout) and under mpirun -np 2, 3 (tests/cli/mpi_comm.sh), where the
 * ranges are whole chunks of uneven sizes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fit/fit_internal.h"

enum { N = 5 * FIT_CHUNK + 123, P = 7, Q = 5 };

/* Deterministic values every rank can compute: a hash of (row, column, salt) in [-1, 1). */
static double value(uint32_t i, uint32_t j, uint32_t salt)
{
    uint64_t z = ((uint64_t)i << 32 | j) ^ (0x9E3779B97F4A7C15ull * (salt + 1));
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (double)((z ^ (z >> 31)) >> 11) / 4503599627370496.0 - 1.0;
}

static double *filled(uint32_t r0, uint32_t r1, uint32_t w, uint32_t salt)
{
    double *X = malloc(sizeof(double) * (r1 - r0) * w + 1);
    for (uint32_t i = r0; i < r1; i++)
        for (uint32_t j = 0; j < w; j++)
            X[(size_t)(i - r0) * w + j] = value(i, j, salt) * (1 + (i % 97 == 0) * 1e6);
    return X;
}

/* Ranges of whole chunks, skewed: each rank after the first gets one chunk, rank 0 the rest. */
static void ranges(int size, uint32_t *starts)
{
    uint32_t nch = (N + FIT_CHUNK - 1) / FIT_CHUNK;
    starts[0] = 0;
    for (int r = 1; r < size; r++) {
        uint32_t c = nch - (uint32_t)(size - r); /* the others: one chunk each */
        c = c > (uint32_t)r ? c : (uint32_t)r;
        starts[r] = c * FIT_CHUNK < N ? c * FIT_CHUNK : N;
    }
    starts[size] = N;
}

static void test_part(jsmf_comm *c)
{
    int size = jsmf_comm_size(c), rank = jsmf_comm_rank(c);
    uint32_t *starts = malloc(sizeof *starts * ((size_t)size + 1));
    ranges(size, starts);
    fit_part L = {N, starts[rank], starts[rank + 1], starts, size > 1 ? c : NULL};
    fit_part W = fit_part_whole(N);

    /* A^T B: split partials == the one-process blocked product */
    double *A = filled(0, N, P, 1), *B = filled(0, N, Q, 2);
    double *Al = filled(L.r0, L.r1, P, 1), *Bl = filled(L.r0, L.r1, Q, 2);
    double whole[P * Q], split[P * Q];
    fit_gemm_tn(N, P, Q, A, B, whole);
    CHECK_OK(fit_gemm_tn_part(&L, P, Q, Al, Bl, split));
    CHECK(!memcmp(whole, split, sizeof whole));

    /* rows by id, any order, from their ranks */
    uint32_t ids[] = {N - 1, 0, 3 * FIT_CHUNK, FIT_CHUNK - 1, 17, 2 * FIT_CHUNK + 5};
    uint32_t m = sizeof ids / sizeof *ids;
    double got[sizeof ids / sizeof *ids * P];
    CHECK_OK(fit_part_pick(&L, ids, m, Al, P, got));
    for (uint32_t a = 0; a < m; a++)
        CHECK(!memcmp(got + (size_t)a * P, A + (size_t)ids[a] * P, sizeof(double) * P));

    /* gather: every rank's rows in place */
    double *full = malloc(sizeof(double) * N * P);
    memset(full, 0, sizeof(double) * N * P);
    memcpy(full + (size_t)L.r0 * P, Al, sizeof(double) * (L.r1 - L.r0) * P);
    CHECK_OK(fit_part_gather(&L, P, full + (size_t)L.r0 * P, full));
    CHECK(!memcmp(full, A, sizeof(double) * N * P));

    /* orthonormalisation of split rows == of the whole block, rank kept included */
    uint32_t rw = 0, rs = 0;
    CHECK_OK(fit_orth_part(&W, P, A, &rw));
    CHECK_OK(fit_orth_part(&L, P, Al, &rs));
    CHECK(rw == P && rs == rw);
    CHECK(!memcmp(Al, A + (size_t)L.r0 * P, sizeof(double) * (L.r1 - L.r0) * P));
    double G[P * P];
    fit_gemm_tn(N, P, P, A, A, G);
    for (uint32_t a = 0; a < P; a++)
        for (uint32_t b = 0; b < P; b++)
            CHECK(fabs(G[a * P + b] - (a == b)) < 1e-12);

    free(A), free(B), free(Al), free(Bl), free(full), free(starts);
}

int main(void)
{
    jsmf_comm *c;
    CHECK_OK(jsmf_comm_open(&c));
    test_part(c);
    jsmf_comm_close(c);
    CHECK_DONE();
}
