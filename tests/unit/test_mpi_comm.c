/* test_mpi_comm.c — the communicator: on one process every collective is a copy and the row split
 * covers all rows in balanced ranges; run under mpirun (tests/cli/mpi_comm.sh) the same binary
 * checks each collective against values every rank can compute, with messages cut small. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "jsmf_comm.h"
#include "mpi/comm.h"

static void test_split(void)
{
    uint64_t w[1000];
    uint64_t total = 0, wmax = 0;
    for (uint32_t i = 0; i < 1000; i++) {
        w[i] = (i * 7919u) % 97 + (i % 50 == 0 ? 500 : 0);
        total += w[i], wmax = w[i] > wmax ? w[i] : wmax;
    }
    for (int size = 1; size <= 7; size++) {
        uint32_t prev = 0;
        for (int r = 0; r < size; r++) {
            uint32_t a, b;
            comm_split(1000, w, size, r, &a, &b);
            CHECK(a == prev && b >= a);
            uint64_t got = 0;
            for (uint32_t i = a; i < b; i++)
                got += w[i];
            /* each range within one row's weight of its share */
            CHECK(got <= total / (uint64_t)size + wmax && got + wmax + 1 >= total / (uint64_t)size);
            prev = b;
            comm_split(1000, NULL, size, r, &a, &b);
            CHECK(b - a == 1000u / (uint32_t)size || b - a == 1000u / (uint32_t)size + 1);
        }
        CHECK(prev == 1000);
    }
}

static void test_self(void)
{
    jsmf_comm *c = jsmf_comm_self();
    CHECK(jsmf_comm_rank(c) == 0 && jsmf_comm_size(c) == 1);
    CHECK(!strcmp(jsmf_comm_kind(c), "self"));
    char in[5] = "abcd", out[5] = {0};
    uint64_t n = 4;
    CHECK_OK(comm_allgatherv(c, in, 4, out, &n));
    CHECK(!memcmp(out, "abcd", 4));
    memset(out, 0, 4);
    CHECK_OK(comm_alltoallv(c, in, &n, out, &n));
    CHECK(!memcmp(out, "abcd", 4));
    double x[2] = {1.5, -2};
    CHECK_OK(comm_allreduce(c, x, 2, JSMF_COMM_F64, JSMF_COMM_SUM));
    CHECK(x[0] == 1.5 && x[1] == -2);
    CHECK(comm_agree(c, JSMF_EIO) == JSMF_EIO && !jsmf_comm_failed_elsewhere(c));
    CHECK(comm_send(c, in, 1, 0, 1) == JSMF_EINVAL);
}

/* Under mpirun: values every rank can predict. */
static void test_world(jsmf_comm *c)
{
    int rank = jsmf_comm_rank(c), size = jsmf_comm_size(c);
    uint64_t s[3] = {(uint64_t)rank, (uint64_t)rank, (uint64_t)rank};
    CHECK_OK(comm_allreduce(c, s, 3, JSMF_COMM_U64, JSMF_COMM_SUM));
    CHECK(s[0] == (uint64_t)size * (size - 1) / 2 && s[2] == s[0]);
    int64_t m[1] = {rank};
    CHECK_OK(comm_allreduce(c, m, 1, JSMF_COMM_I64, JSMF_COMM_MAX));
    CHECK(m[0] == size - 1);
    /* allgatherv: rank r contributes 1000 r + 3 bytes of value r */
    uint64_t *counts = malloc(sizeof *counts * (size_t)size), total = 0;
    for (int r = 0; r < size; r++)
        counts[r] = 1000u * (unsigned)r + 3, total += counts[r];
    unsigned char *mine = malloc(counts[rank]), *all = malloc(total);
    memset(mine, rank, counts[rank]);
    CHECK_OK(comm_allgatherv(c, mine, counts[rank], all, counts));
    uint64_t at = 0;
    for (int r = 0; r < size; r++)
        for (uint64_t i = 0; i < counts[r]; i++, at++)
            if (all[at] != r) {
                CHECK(all[at] == r);
                r = size;
                break;
            }
    /* alltoallv: rank a sends rank b (a + 1) * 777 + b bytes of value 16 a + b */
    uint64_t *sc = malloc(sizeof *sc * (size_t)size), *rc = malloc(sizeof *rc * (size_t)size);
    uint64_t st = 0, rt = 0;
    for (int b = 0; b < size; b++) {
        sc[b] = (uint64_t)(rank + 1) * 777 + (uint64_t)b, st += sc[b];
        rc[b] = (uint64_t)(b + 1) * 777 + (uint64_t)rank, rt += rc[b];
    }
    unsigned char *sb = malloc(st), *rb = malloc(rt);
    at = 0;
    for (int b = 0; b < size; b++)
        memset(sb + at, 16 * rank + b, sc[b]), at += sc[b];
    CHECK_OK(comm_alltoallv(c, sb, sc, rb, rc));
    at = 0;
    int bad = 0;
    for (int a = 0; a < size; a++)
        for (uint64_t i = 0; i < rc[a]; i++, at++)
            bad |= rb[at] != (unsigned char)(16 * a + rank);
    CHECK(!bad);
    /* point to point: every rank sends rank 0 its number, cut into pieces */
    if (rank == 0) {
        for (int r = 1; r < size; r++) {
            unsigned char buf[3000];
            CHECK_OK(comm_recv(c, buf, sizeof buf, r, 5));
            CHECK(buf[0] == r && buf[2999] == r);
        }
    } else {
        unsigned char buf[3000];
        memset(buf, rank, sizeof buf);
        CHECK_OK(comm_send(c, buf, sizeof buf, 0, 5));
    }
    /* agreement: rank 1 fails; every rank sees the failure, the others know it was elsewhere */
    int got = comm_agree(c, rank == 1 ? JSMF_EFORMAT : JSMF_OK);
    CHECK(got == JSMF_EFORMAT);
    CHECK(jsmf_comm_failed_elsewhere(c) == (rank != 1));
    jsmf_comm_stats cs;
    comm_stats_get(c, &cs);
    CHECK(cs.calls > 0 && cs.bytes_sent > 0);
    free(counts), free(mine), free(all), free(sc), free(rc), free(sb), free(rb);
}

int main(void)
{
    test_split();
    test_self();
    jsmf_comm *c;
    CHECK_OK(jsmf_comm_open(&c));
    if (jsmf_comm_size(c) > 1) {
        CHECK(!strcmp(jsmf_comm_kind(c), "mpi"));
        test_world(c);
    }
    jsmf_comm_close(c);
    CHECK_DONE();
}
