/* doccheck.h — the rule every holder of documents checks its entries by (include/jsmf.h,
 * jsmf_doc_block): ids below N and strictly ascending, counts at least 1. */
#ifndef JSMF_DOCCHECK_H
#define JSMF_DOCCHECK_H

#include <stdint.h>

/* The first of entries [e0, e1) of a document that breaks the rule, or e1 when none does. */
static inline uint64_t doc_first_bad_entry(const uint32_t *ids, const uint32_t *counts,
                                           uint64_t e0, uint64_t e1, uint32_t n)
{
    for (uint64_t e = e0; e < e1; e++)
        if (ids[e] >= n || (e > e0 && ids[e] <= ids[e - 1]) || !counts[e])
            return e;
    return e1;
}

#endif
