/* zstd_sniff.c — is it zstd: the magic numbers of an ordinary and of a skippable frame. */
#include "core/zstd_sniff.h"

#include <stdint.h>
#include <stdio.h>

#define ZSTD_FRAME_MAGIC 0xFD2FB528u
#define ZSTD_SKIPPABLE_MAGIC 0x184D2A50u /* the low 4 bits are the user's */
#define ZSTD_SKIPPABLE_MASK 0xFFFFFFF0u

int zstd_sniff(const unsigned char *p, size_t n)
{
    if (n < 4)
        return 0;
    uint32_t m = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    return m == ZSTD_FRAME_MAGIC || (m & ZSTD_SKIPPABLE_MASK) == ZSTD_SKIPPABLE_MAGIC;
}

int zstd_sniff_file(const char *path)
{
    unsigned char m[4];
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(m, 1, sizeof m, f);
    fclose(f);
    return zstd_sniff(m, n);
}
