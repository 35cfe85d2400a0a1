/* export.h — C streamed as MatrixMarket or .npy (src/store/export.c). */
#ifndef JSMF_STORE_EXPORT_H
#define JSMF_STORE_EXPORT_H

#include <stdio.h>

#include "jsmf_store.h"

/** Write the normalised C as MatrixMarket coordinate real symmetric (lower triangle, 1-based),
 *  streamed to `f`. */
int store_export_mm(jsmf_store *s, FILE *f);

/** Write the normalised C as a dense N x N float64 .npy (C order), one row at a time.
 *  JSMF_EINVAL when N x N x 8 bytes exceeds `max_bytes`. */
int store_export_npy(jsmf_store *s, FILE *f, uint64_t max_bytes);

#endif
