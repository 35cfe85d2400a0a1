/* grow.h — internal: arrays that grow by doubling as they fill (a document's ids, a row of C, a
 * loss curve), so that n appends cost O(n) copies; the one capacity rule and one realloc that
 * keeps the old array when memory runs out. */
#ifndef JSMF_CORE_GROW_H
#define JSMF_CORE_GROW_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The capacity that holds `need` elements: `cap` (or `first` when cap is 0) doubled until it
 * does. */
static inline uint64_t grow_capacity(uint64_t cap, uint64_t need, uint64_t first)
{
    uint64_t c = cap ? cap : first ? first : 1;
    while (c < need)
        c = c > UINT64_MAX / 2 ? need : 2 * c;
    return c;
}

/* Resize the array whose pointer is at `pp` (any T **) to `n` elements of `size` bytes. Returns
 * 0, or -1 with the array as it was (still the caller's to free) when memory runs short. */
static inline int grow_array(void *pp, uint64_t n, size_t size)
{
    void *old, *p;
    memcpy(&old, pp, sizeof old);
    if (size && n > SIZE_MAX / size)
        return -1;
    if (!(p = realloc(old, (size_t)(n ? n : 1) * size)))
        return -1;
    memcpy(pp, &p, sizeof p);
    return 0;
}

#endif
