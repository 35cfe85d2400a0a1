/* zstd_sniff.h — internal: the one test of whether bytes are zstd, by magic number and never by
 * name, so that every reader and the MPI planner agree on which files are compressed. */
#ifndef JSMF_CORE_ZSTD_SNIFF_H
#define JSMF_CORE_ZSTD_SNIFF_H

#include <stddef.h>

/* Whether the first `n` bytes at `p` open a zstd stream: an ordinary frame (0xFD2FB528) or a
 * skippable frame (0x184D2A50..0x184D2A5F, what pzstd writes first), little-endian. */
int zstd_sniff(const unsigned char *p, size_t n);

/* zstd_sniff on the first bytes of the file at `path`; 0 when it cannot be read. */
int zstd_sniff_file(const char *path);

#endif
