/* hash.c — the content fingerprint of inputs: a 64-bit hash with four independent lanes of
 * multiply-rotate over 32-byte stripes (so the CPU overlaps them) and a final avalanche; the
 * streamed and the whole-buffer forms give the same value. Not cryptographic. */
#include "jsmf_io.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hash.h"

#define P1 0x9E3779B185EBCA87ULL
#define P2 0xC2B2AE3D27D4EB4FULL
#define P3 0x165667B19E3779F9ULL
#define P4 0x85EBCA77C2B2AE63ULL
#define P5 0x27D4EB2F165667C5ULL

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t load64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static inline uint64_t lane_step(uint64_t acc, uint64_t v)
{
    acc += v * P2;
    acc = rotl64(acc, 31);
    return acc * P1;
}

static void stripes(uint64_t st[4], const unsigned char *p, size_t nstripes)
{
    uint64_t a = st[0], b = st[1], c = st[2], d = st[3];
    for (size_t i = 0; i < nstripes; i++, p += 32) {
        a = lane_step(a, load64(p));
        b = lane_step(b, load64(p + 8));
        c = lane_step(c, load64(p + 16));
        d = lane_step(d, load64(p + 24));
    }
    st[0] = a, st[1] = b, st[2] = c, st[3] = d;
}

void hash_init(jsmf_hash *h)
{
    memset(h, 0, sizeof *h);
    h->state[0] = P1 + P2;
    h->state[1] = P2;
    h->state[2] = 0;
    h->state[3] = 0 - P1;
}

void hash_update(jsmf_hash *h, const void *data, size_t len)
{
    const unsigned char *p = data;
    h->total += len;
    if (h->nbuf) {
        size_t take = 32 - h->nbuf < len ? 32 - h->nbuf : len;
        memcpy(h->buf + h->nbuf, p, take);
        h->nbuf += (uint32_t)take;
        p += take, len -= take;
        if (h->nbuf < 32)
            return;
        stripes(h->state, h->buf, 1);
        h->nbuf = 0;
    }
    size_t n = len / 32;
    stripes(h->state, p, n);
    p += n * 32, len -= n * 32;
    memcpy(h->buf, p, len);
    h->nbuf = (uint32_t)len;
}

static inline uint64_t avalanche(uint64_t x)
{
    x ^= x >> 33;
    x *= P2;
    x ^= x >> 29;
    x *= P3;
    x ^= x >> 32;
    return x;
}

uint64_t hash_final(const jsmf_hash *h)
{
    const uint64_t *s = h->state;
    uint64_t x = rotl64(s[0], 1) + rotl64(s[1], 7) + rotl64(s[2], 12) + rotl64(s[3], 18);
    for (int i = 0; i < 4; i++)
        x = (x ^ lane_step(0, s[i])) * P1 + P4;
    x += h->total;
    const unsigned char *p = h->buf;
    uint32_t n = h->nbuf;
    for (; n >= 8; n -= 8, p += 8)
        x = rotl64(x ^ lane_step(0, load64(p)), 27) * P1 + P4;
    for (; n > 0; n--, p++)
        x = rotl64(x ^ (*p * P5), 11) * P1;
    return avalanche(x);
}

int fingerprint_file(const char *path, uint64_t *hash, uint64_t *size)
{
    if (!strcmp(path, "-"))
        return jsmf_error(JSMF_ENOTSUP, "<stdin>: a stream is fingerprinted only while it is read");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return jsmf_error(errno == ENOENT ? JSMF_ENOTFOUND : JSMF_EIO, "%s: cannot open: %s", path,
                          strerror(errno));
    struct stat st;
    errno = 0;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        int e = errno;
        close(fd);
        return jsmf_error(JSMF_EINVAL, "%s: not a regular file%s%s", path, e ? ": " : "",
                          e ? strerror(e) : "");
    }
    jsmf_hash h;
    hash_init(&h);
    uint64_t n = (uint64_t)st.st_size;
    /* map and hash in windows so a huge file does not hold its whole mapping at once */
    const uint64_t window = (uint64_t)64 << 20; /* bounded resident size, whatever the file */
    for (uint64_t off = 0; off < n; off += window) {
        size_t len = (size_t)(n - off < window ? n - off : window);
        void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)off);
        if (m == MAP_FAILED) {
            int e = errno;
            close(fd);
            return jsmf_error(JSMF_EIO, "%s: cannot map: %s", path, strerror(e));
        }
        madvise(m, len, MADV_SEQUENTIAL);
        hash_update(&h, m, len);
        munmap(m, len);
    }
    close(fd);
    *hash = hash_final(&h);
    *size = n;
    return JSMF_OK;
}
