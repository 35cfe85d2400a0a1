/* bigmem.c — large zeroed buffers from mmap, advised onto transparent huge pages. */
#include "core/bigmem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Below this a huge page would mostly hold unused memory. */
#define HUGE_MIN_BYTES ((size_t)4 << 20)

void *big_alloc(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
#ifdef MADV_HUGEPAGE
    if (bytes >= HUGE_MIN_BYTES)
        madvise(p, bytes, MADV_HUGEPAGE);
#endif
    return p;
}

void *big_malloc(size_t bytes)
{
    void *p = malloc(bytes);
#ifdef MADV_HUGEPAGE
    /* glibc serves blocks this large from their own mapping: advising the 2 MiB-aligned part
     * inside it changes nothing else, and free() unmaps it whole */
    const uintptr_t huge = (uintptr_t)2 << 20;
    if (p && bytes >= HUGE_MIN_BYTES) {
        uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1);
        uintptr_t b = ((uintptr_t)p + bytes) & ~(huge - 1);
        if (b > a)
            madvise((void *)a, b - a, MADV_HUGEPAGE);
    }
#endif
    return p;
}

void big_free(void *p, size_t bytes)
{
    if (p)
        munmap(p, bytes);
}

void *big_realloc(void *p, size_t old_bytes, size_t used, size_t bytes)
{
    void *q = big_alloc(bytes);
    if (q && p) {
        memcpy(q, p, used);
        big_free(p, old_bytes);
    }
    return q;
}
