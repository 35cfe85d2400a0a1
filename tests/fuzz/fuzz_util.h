/* fuzz_util.h — what the libFuzzer targets of tests/fuzz share: the input as a file the readers
 * can open by path (a memfd, so no disk is touched), and a check that aborts with its text. */
#ifndef JSMF_FUZZ_UTIL_H
#define JSMF_FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* An invariant of the reader: a violation is a finding, as a crash is. */
#define FUZZ_CHECK(cond)                                                                    \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed\n", __FILE__, __LINE__, #cond);  \
            abort();                                                                       \
        }                                                                                  \
    } while (0)

typedef struct fuzz_file {
    int fd;
    char path[64];
} fuzz_file;

/* Make `f` hold exactly data[0..size); its path opens it (a regular file, so it is mmap'ed). */
static inline void fuzz_file_set(fuzz_file *f, const void *data, size_t size)
{
    if (f->fd <= 0) {
        f->fd = memfd_create("jsmf-fuzz", 0);
        FUZZ_CHECK(f->fd > 0);
        snprintf(f->path, sizeof f->path, "/proc/self/fd/%d", f->fd);
    }
    FUZZ_CHECK(ftruncate(f->fd, 0) == 0);
    FUZZ_CHECK(size == 0 || pwrite(f->fd, data, size, 0) == (ssize_t)size);
}

/* FNV-1a over a few bytes: documents are compared by a digest of what the reader gave. */
static inline uint64_t fuzz_hash(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

#endif
