/* codec.h — the byte encodings of formats/store.md, below everything else in the store: keys and
 * values (big-endian keys, little-endian values), C chunks (plain, packed, palette), input
 * records and the fixed-point sums as doubles. Pure functions of bytes: no handle, no
 * transaction. */
#ifndef JSMF_STORE_CODEC_H
#define JSMF_STORE_CODEC_H

#include <lmdb.h>
#include <string.h>

#include "jsmf_store.h"
#include "flush.h"

/* C chunks (formats/store.md): a chunk value stays within CHUNK_BYTES_MAX, below LMDB's in-page
 * node limit for 4 KiB pages, so no chunk lives in overflow pages. Version 2 chunks ("plain")
 * hold up to 96 entries of 20 bytes; writers now write "packed" chunks (a column in 1 to 5
 * bytes, a sum in 2 to 18, cut when the next entry would pass CHUNK_BYTES_MAX) or, since
 * version 4, "palette" chunks, whose sums are indices into the chunk's table of its distinct
 * sums (at most 256): chunk_encode picks the form that holds more entries (fewer bytes). */
#define CHUNK_BYTES_MAX 1922
#define CHUNK_PLAIN_MAX 96
#define CHUNK_PLAIN_ENTRY 20 /* u32 column + 16-byte sum */
#define CHUNK_PACKED 0x8000u /* in the count: the chunk is packed */
#define CHUNK_PALETTE 0xC000u /* in the count: the chunk's sums are a palette (version 4) */
#define PACKED_ENTRY_MAX 25  /* an entry's largest size: packed 23, palette 2 more at most */
#define CHUNK_SLACK 16       /* room chunk_encode may write past a chunk */

/* Bytes a row of n entries takes in a run writer's buffer at most: its chunks and, per chunk,
 * an 8-byte key and a 2-byte length. */
static inline size_t row_record_bytes(size_t n)
{
    return n * PACKED_ENTRY_MAX + (n / ((CHUNK_BYTES_MAX - 2) / PACKED_ENTRY_MAX) + 1) * 12 +
           CHUNK_SLACK;
}

/* Big-endian integers for keys (memcmp order = numeric order). */
static inline void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = v >> 24, p[1] = v >> 16, p[2] = v >> 8, p[3] = (unsigned char)v;
}
static inline uint32_t get_be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline void put_be64(unsigned char *p, uint64_t v)
{
    put_be32(p, (uint32_t)(v >> 32)), put_be32(p + 4, (uint32_t)v);
}
static inline uint64_t get_be64(const unsigned char *p)
{
    return (uint64_t)get_be32(p) << 32 | get_be32(p + 4);
}
/* Values: little-endian (x86 native), copied because LMDB values are only 2-byte aligned. */
static inline uint64_t get_u64(const void *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}
static inline uint32_t get_u32(const void *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* Decode a chunk (plain or packed) into cols and, unless vals is NULL, vals; at most room
 * entries, columns below n_words. Returns the entry count, or -1 if the chunk is corrupt. */
int64_t chunk_decode(const MDB_val *v, uint32_t *cols, jsmf_sum *vals, uint32_t room,
                     uint32_t n_words);
/* Decode the next chunk of a row that holds `have` entries so far into cols + have (and
 * vals + have): as chunk_decode, and -1 as well when its first column does not follow the row's
 * last one. Summing the rows of several runs merges them by column into N-wide buffers, so a
 * row read from the store has strictly increasing columns below n_words, whatever its bytes. */
int64_t row_chunk_decode(const MDB_val *v, uint32_t *cols, jsmf_sum *vals, uint32_t have,
                         uint32_t room, uint32_t n_words);
/* Encode a packed chunk of the first entries of cols/vals (n > 0) into buf, as many as fit in
 * CHUNK_BYTES_MAX (at least one); *taken says how many. Returns the chunk's size. buf must
 * have CHUNK_SLACK bytes of room past the chunk (the encoder writes sums in 16-byte stores). */
size_t chunk_encode(unsigned char *buf, const uint32_t *cols, const jsmf_sum *vals, uint32_t n,
                    uint32_t *taken);

/* Input records: the key (fingerprint, occurrence) and the value. */
void input_key(unsigned char key[12], uint64_t fingerprint, uint32_t occurrence);
size_t input_encode(unsigned char *buf, const jsmf_store_input *in);
void input_decode(const MDB_val *key, const MDB_val *val, jsmf_store_input *out);

/* (double)v, correctly rounded as the compiler's conversion is, without its library call (a
 * quarter of the time of reading C): the top 64 bits with a sticky bit for the rest, converted
 * by the hardware and scaled exactly. */
static inline double sum_as_double(jsmf_sum v)
{
    unsigned __int128 u = v < 0 ? -(unsigned __int128)v : (unsigned __int128)v;
    uint64_t hi = (uint64_t)(u >> 64), lo = (uint64_t)u;
    double d;
    if (!hi) {
        d = (double)lo;
    } else {
        unsigned s = 64 - (unsigned)__builtin_clzll(hi); /* 1..64 bits above the low word */
        uint64_t top = (uint64_t)(u >> s) | (uint64_t)((lo << (64 - s)) != 0);
        uint64_t e = (uint64_t)(1023 + s) << 52;
        double scale;
        memcpy(&scale, &e, 8);
        d = (double)top * scale;
    }
    return v < 0 ? -d : d;
}

/* Fixed point to double: S * 2^-90 / M. */
static inline double sum_to_double(jsmf_sum v, double m)
{
    return sum_as_double(v) * 0x1p-90 / m;
}

/** Bytes store_encode_row may write for a row of n entries. */
size_t store_row_bytes(uint32_t n);
/** Encode row `row` (n > 0 entries, columns strictly increasing) into buf, which must hold
 *  store_row_bytes(n); returns the bytes written. Thread-safe. */
size_t store_encode_row(unsigned char *buf, uint32_t row, const uint32_t *cols,
                             const jsmf_sum *vals, uint32_t n);


#endif
