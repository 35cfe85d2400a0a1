/* hash.h — internal: the small non-cryptographic hashes several folders share: FNV-1a over bytes
 * (store and FDM fingerprints), splitmix64's and MurmurHash3's 64-bit finalizers. Values are
 * stored in stores and checkpoints, so none of them may ever change. (Input fingerprints are
 * jsmf_hash_*, in io/hash.c.) */
#ifndef JSMF_CORE_HASH_H
#define JSMF_CORE_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HASH_FNV1A_OFFSET UINT64_C(0xcbf29ce484222325) /* 14695981039346656037 */
#define HASH_FNV1A_PRIME UINT64_C(0x100000001b3)

/* FNV-1a of `len` bytes continued from `h` (HASH_FNV1A_OFFSET to start). */
static inline uint64_t hash_fnv1a(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * HASH_FNV1A_PRIME;
    return h;
}

/* splitmix64's step: x plus the golden gamma, then its finalizer (a bijection on 64 bits). */
static inline uint64_t hash_mix64(uint64_t x)
{
    x += UINT64_C(0x9E3779B97F4A7C15);
    x = (x ^ (x >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94D049BB133111EB);
    return x ^ (x >> 31);
}

/* MurmurHash3's fmix64: every output bit depends on every input bit. */
static inline uint64_t hash_fmix64(uint64_t x)
{
    x ^= x >> 33;
    x *= UINT64_C(0xFF51AFD7ED558CCD);
    x ^= x >> 33;
    x *= UINT64_C(0xC4CEB9FE1A85EC53);
    return x ^ (x >> 33);
}

#endif
