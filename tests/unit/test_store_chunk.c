/* test_store_chunk.c — the C chunk codec of formats/store.md: packed chunks round-trip every
 * column gap and every 128-bit sum (zero, negative, -2^127, all bits set), stay within
 * CHUNK_BYTES_MAX, take about 9 bytes for a fixed-point sum of a few contributions, plain
 * (version 2) chunks still decode, a truncated or damaged chunk is refused or decoded within its
 * bounds, never read past, and the chunks of a row hold strictly increasing columns below N. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "../../src/ingest/accum.h"
#include "../../src/store/codec.h"
#include "store/flush.h"

#define N_WORDS 4000000000u
#define ROW 5000

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static uint64_t next_rand(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

static jsmf_sum random_sum(void)
{
    unsigned __int128 hi = next_rand(), lo = next_rand();
    switch (next_rand() % 8) {
    case 0: return 0;
    case 1: return (jsmf_sum)((unsigned __int128)1 << 127);            /* -2^127 */
    case 2: return (jsmf_sum)(hi << 64 | lo);                          /* any 128 bits */
    case 3: return -(jsmf_sum)(lo << (next_rand() % 60));              /* negative */
    case 4: return (jsmf_sum)~(unsigned __int128)0 >> 1;               /* 2^127 - 1 */
    default: /* a few fixed-point contributions, as ingest makes them */
        {
            jsmf_sum v = 0;
            for (uint64_t k = 1 + next_rand() % 4; k; k--)
                v += accum_fixed((double)(1 + next_rand() % 9) * 0x1p90 /
                                 (double)(2 + next_rand() % 500) / 7.0);
            return v;
        }
    }
}

/* Encode a row as a writer does, chunk after chunk; decode each and compare. */
static void test_round_trip(void)
{
    static uint32_t cols[ROW], got_cols[ROW];
    static jsmf_sum vals[ROW], got_vals[ROW];
    static unsigned char buf[CHUNK_BYTES_MAX + PACKED_ENTRY_MAX];
    for (int trial = 0; trial < 40; trial++) {
        uint64_t c = next_rand() % 3;
        uint32_t n = 1 + (uint32_t)(next_rand() % ROW);
        for (uint32_t i = 0; i < n; i++) {
            /* gaps of every varint length, up to the last column of a 4e9-word vocabulary */
            uint64_t gap = trial % 4 == 0 ? next_rand() % ((N_WORDS - c) / (n - i) + 1)
                                          : 1 + next_rand() % (1u << (next_rand() % 22));
            c = i ? c + (gap ? gap : 1) : c;
            if (c >= N_WORDS - (n - i))
                c = N_WORDS - (n - i);
            cols[i] = (uint32_t)c, vals[i] = random_sum();
        }
        uint32_t at = 0, chunks = 0;
        int ok = 1;
        while (at < n) {
            uint32_t taken = 0;
            size_t size = chunk_encode(buf, cols + at, vals + at, n - at, &taken);
            ok &= taken >= 1 && taken <= n - at && size <= CHUNK_BYTES_MAX;
            if (!ok)
                break;
            MDB_val v = {size, buf};
            ok &= chunk_decode(&v, got_cols + at, got_vals + at, n - at, N_WORDS) == taken;
            uint32_t only_cols[ROW];
            ok &= chunk_decode(&v, only_cols, NULL, n - at, N_WORDS) == taken &&
                  !memcmp(only_cols, cols + at, taken * sizeof *cols);
            at += taken, chunks++;
        }
        CHECK(ok);
        CHECK(at == n && !memcmp(got_cols, cols, n * sizeof *cols));
        CHECK(at == n && !memcmp(got_vals, vals, n * sizeof *vals));
        CHECK(chunks <= n / ((CHUNK_BYTES_MAX - 2) / PACKED_ENTRY_MAX) + 1);
    }
}

/* Sums of a few contributions with dense columns: about 11 bytes an entry, not 20. */
static void test_size(void)
{
    uint32_t cols[80];
    jsmf_sum vals[80];
    unsigned char buf[CHUNK_BYTES_MAX + PACKED_ENTRY_MAX];
    size_t total = 0;
    uint32_t entries = 0;
    for (int trial = 0; trial < 200; trial++) {
        for (uint32_t i = 0; i < 80; i++) {
            cols[i] = (i ? cols[i - 1] : 0) + 1 + (uint32_t)(next_rand() % 60);
            vals[i] = accum_fixed(0x1p90 / (double)(2 + next_rand() % 3000));
        }
        uint32_t taken;
        total += chunk_encode(buf, cols, vals, 80, &taken);
        entries += taken;
    }
    CHECK(entries == 200 * 80);
    CHECK((double)total / entries < 11.0);
}

/* Version 2 chunks: u16 count, count u32 columns, count 16-byte sums. */
static void test_plain(void)
{
    unsigned char buf[2 + 3 * CHUNK_PLAIN_ENTRY];
    uint16_t n = 3;
    uint32_t cols[3] = {7, 9, 4000}, got_cols[3];
    jsmf_sum vals[3] = {5, -6, (jsmf_sum)1 << 100}, got_vals[3];
    memcpy(buf, &n, 2), memcpy(buf + 2, cols, sizeof cols), memcpy(buf + 14, vals, sizeof vals);
    MDB_val v = {sizeof buf, buf};
    CHECK(chunk_decode(&v, got_cols, got_vals, 3, 5000) == 3);
    CHECK(!memcmp(got_cols, cols, sizeof cols) && !memcmp(got_vals, vals, sizeof vals));
    CHECK(chunk_decode(&v, got_cols, got_vals, 2, 5000) == -1); /* more than the row holds */
    v.mv_size--;
    CHECK(chunk_decode(&v, got_cols, got_vals, 3, 5000) == -1);
    /* columns are checked as a packed chunk's are (found by tests/fuzz/fuzz_store.c: a column
     * of 0x80000007 in a row of 50 words was handed to the row merge) */
    v.mv_size++;
    CHECK(chunk_decode(&v, got_cols, got_vals, 3, 4000) == -1); /* 4000 is not below N */
    uint32_t unsorted[3] = {7, 7, 9};
    memcpy(buf + 2, unsorted, sizeof unsorted);
    CHECK(chunk_decode(&v, got_cols, got_vals, 3, 5000) == -1);
}

/* A row's chunks go on where the one before ended: a chunk starting at or below the row's last
 * column is refused, as is the row of a damaged store whose merge would pass N entries. */
static void test_row_chunks(void)
{
    uint32_t cols[4] = {3, 8, 20, 21}, row[8];
    jsmf_sum vals[4] = {1, 2, 3, 4}, row_vals[8];
    unsigned char a[64], b[64];
    uint32_t ta, tb;
    MDB_val va = {chunk_encode(a, cols, vals, 2, &ta), a};
    MDB_val vb = {chunk_encode(b, cols + 2, vals + 2, 2, &tb), b};
    CHECK(ta == 2 && tb == 2);
    CHECK(row_chunk_decode(&va, row, row_vals, 0, 4, 100) == 2);
    CHECK(row_chunk_decode(&vb, row, row_vals, 2, 4, 100) == 2);
    CHECK(!memcmp(row, cols, sizeof cols) && !memcmp(row_vals, vals, sizeof vals));
    CHECK(row_chunk_decode(&vb, row, NULL, 2, 4, 100) == 2);
    CHECK(row_chunk_decode(&va, row, row_vals, 2, 4, 100) == -1); /* 3 after 8 */
    CHECK(row_chunk_decode(&va, row, NULL, 2, 4, 100) == -1);
    row[1] = 3;
    CHECK(row_chunk_decode(&va, row, row_vals, 2, 4, 100) == -1); /* 3 after 3 */
}

/* Every prefix of a chunk is refused; damaged bytes decode within bounds or are refused. */
static void test_damage(void)
{
    uint32_t cols[60], got_cols[60];
    jsmf_sum vals[60], got_vals[60];
    unsigned char buf[CHUNK_BYTES_MAX + PACKED_ENTRY_MAX];
    for (uint32_t i = 0; i < 60; i++) /* gaps of 3, and of 1000 every 7th: 1- and 2-byte */
        cols[i] = 3 * i + 1000 * (i / 7), vals[i] = random_sum();
    uint32_t taken;
    size_t size = chunk_encode(buf, cols, vals, 60, &taken);
    CHECK(taken == 60);
    int prefix_ok = 1;
    for (size_t len = 0; len < size; len++) {
        unsigned char *copy = malloc(len ? len : 1); /* exact size: ASan sees any overread */
        memcpy(copy, buf, len);
        MDB_val v = {len, copy};
        prefix_ok &= chunk_decode(&v, got_cols, got_vals, 60, 100000) == -1;
        free(copy);
    }
    CHECK(prefix_ok);
    int bounded = 1;
    for (int trial = 0; trial < 2000; trial++) {
        unsigned char *copy = malloc(size);
        memcpy(copy, buf, size);
        copy[next_rand() % size] ^= (unsigned char)(1u << (next_rand() % 8));
        MDB_val v = {size, copy};
        int64_t n = chunk_decode(&v, got_cols, got_vals, 60, 100000);
        bounded &= n == -1 || (n >= 1 && n <= 60);
        for (int64_t i = 0; i < n; i++)
            bounded &= got_cols[i] < 100000 && (i == 0 || got_cols[i] > got_cols[i - 1]);
        free(copy);
    }
    CHECK(bounded);
    MDB_val v = {size, buf};
    CHECK(chunk_decode(&v, got_cols, got_vals, 60, cols[59]) == -1); /* a column out of range */
}

int main(void)
{
    test_round_trip();
    test_size();
    test_plain();
    test_row_chunks();
    test_damage();
    CHECK_DONE();
}
