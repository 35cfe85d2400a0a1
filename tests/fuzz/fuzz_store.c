/* fuzz_store.c — libFuzzer target: the store's value decoders (formats/store.md) without LMDB.
 * The input is a row of C as stored: a 4-byte vocabulary size N, then chunk values, each as a
 * 2-byte length and its bytes. They are decoded as a row stream loads them (rows.c): a row that
 * decodes has strictly increasing columns below N — what summing rows of several runs relies on
 * — and encodes and decodes back to itself. The same bytes also go through the input-record
 * decoder. */
#include <string.h>

#include "fuzz_util.h"
#include "../../src/store/codec.h"
#include "store/flush.h"

/* Entries the chunk says it holds, as the row stream sizes its buffers. */
static uint32_t claimed(const uint8_t *p, size_t len)
{
    uint16_t c = 0;
    if (len >= 2)
        memcpy(&c, p, 2);
    return (c & CHUNK_PALETTE) == CHUNK_PALETTE ? c & ~CHUNK_PALETTE
           : c & CHUNK_PACKED                   ? c & ~CHUNK_PACKED
                                                : c;
}

/* Encode the row chunk after chunk, decode each, compare. */
static void round_trip(const uint32_t *rc, const jsmf_sum *rv, uint32_t n, uint32_t n_words)
{
    static unsigned char buf[CHUNK_BYTES_MAX + CHUNK_SLACK + PACKED_ENTRY_MAX];
    uint32_t *c2 = malloc(((size_t)n + 1) * sizeof *c2);
    jsmf_sum *v2 = malloc(((size_t)n + 1) * sizeof *v2);
    FUZZ_CHECK(c2 && v2);
    for (uint32_t at = 0; at < n;) {
        uint32_t taken = 0;
        size_t size = chunk_encode(buf, rc + at, rv + at, n - at, &taken);
        FUZZ_CHECK(taken >= 1 && taken <= n - at && size <= CHUNK_BYTES_MAX);
        MDB_val v = {size, buf};
        FUZZ_CHECK(chunk_decode(&v, c2 + at, v2 + at, taken, n_words) == taken);
        at += taken;
    }
    FUZZ_CHECK(!memcmp(c2, rc, (size_t)n * sizeof *c2));
    FUZZ_CHECK(!memcmp(v2, rv, (size_t)n * sizeof *v2));
    free(c2), free(v2);
}

/* Room for n entries in the row, exactly: ASan sees a decoder writing past what it was given. */
static void row_room(uint32_t **cols, jsmf_sum **vals, uint32_t **only, size_t n)
{
    *cols = realloc(*cols, (n ? n : 1) * sizeof **cols);
    *vals = realloc(*vals, (n ? n : 1) * sizeof **vals);
    *only = realloc(*only, (n ? n : 1) * sizeof **only);
    FUZZ_CHECK(*cols && *vals && *only);
}

static void fuzz_row(const uint8_t *data, size_t size)
{
    if (size < 4)
        return;
    uint32_t n_words;
    memcpy(&n_words, data, 4);
    data += 4, size -= 4;
    uint32_t n = 0, *cols = NULL, *only = NULL;
    jsmf_sum *vals = NULL;
    int64_t got = 0;
    while (size >= 2 && got >= 0) {
        uint16_t len;
        memcpy(&len, data, 2);
        data += 2, size -= 2;
        if (len > size)
            len = (uint16_t)size;
        uint8_t *val = malloc(len ? len : 1); /* in a buffer of its own size, as LMDB's */
        FUZZ_CHECK(val);
        memcpy(val, data, len);
        data += len, size -= len;
        uint32_t want = claimed(val, len); /* sized as the row stream sizes its buffers */
        if (want > n_words - n)
            want = n_words - n;
        row_room(&cols, &vals, &only, (size_t)n + want);
        MDB_val v = {len, val};
        got = row_chunk_decode(&v, cols, vals, n, want, n_words);
        int64_t got_cols = row_chunk_decode(&v, only, NULL, n, want, n_words);
        if (got >= 0) { /* the columns alone decode as the whole chunk does */
            FUZZ_CHECK(got_cols == got && !memcmp(only + n, cols + n, (size_t)got * 4));
            n += (uint32_t)got;
        }
        free(val);
    }
    if (got >= 0 && n) {
        for (uint32_t i = 0; i < n; i++)
            FUZZ_CHECK(cols[i] < n_words && (i == 0 || cols[i] > cols[i - 1]));
        round_trip(cols, vals, n, n_words);
    }
    free(cols), free(vals), free(only);
}

static void fuzz_input_record(const uint8_t *data, size_t size)
{
    unsigned char key[12];
    input_key(key, 0x0123456789abcdefULL, 7);
    uint8_t *copy = malloc(size ? size : 1);
    FUZZ_CHECK(copy);
    memcpy(copy, data, size);
    MDB_val k = {12, key}, v = {size, copy};
    jsmf_store_input in;
    input_decode(&k, &v, &in);
    FUZZ_CHECK(in.fingerprint == 0x0123456789abcdefULL && in.occurrence == 7);
    FUZZ_CHECK(memchr(in.path, 0, sizeof in.path));
    free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_row(data, size);
    fuzz_input_record(data, size);
    return 0;
}
