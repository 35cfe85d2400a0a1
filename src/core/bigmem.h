/* bigmem.h — zeroed memory for large buffers (accumulator tables, a checkpoint's staging and
 * gather buffers), on transparent huge pages where the system allows: the first touch of each
 * 4 KiB page is a fault, and on virtual machines a fault can cost as much as tens of
 * microseconds, so a 32 MiB buffer of small pages costs 8192 of them, of huge pages 16. */
#ifndef JSMF_BIGMEM_H
#define JSMF_BIGMEM_H

#include <stddef.h>

/* NULL when out of memory; bytes > 0. */
void *big_alloc(size_t bytes);
/* p from big_alloc(bytes), or NULL. */
void big_free(void *p, size_t bytes);
/* malloc(bytes) (NULL when out of memory), with its whole huge pages advised onto transparent
 * huge pages when it is large: for buffers freed with free() (the fit's blocks). */
void *big_malloc(size_t bytes);
/* Move a buffer to a bigger one, keeping its first `used` bytes; NULL (the old one kept) when
 * out of memory. */
void *big_realloc(void *p, size_t old_bytes, size_t used, size_t bytes);

#endif
