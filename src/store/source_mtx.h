/* source_mtx.h — the MatrixMarket reader behind jsmf_source_open. */
#ifndef JSMF_SOURCE_MTX_H
#define JSMF_SOURCE_MTX_H

#include <stdint.h>

/* Read a MatrixMarket 'coordinate real symmetric' (either triangle, mirrored) or 'general' square
 * matrix into CSR with both triangles, rows and columns increasing, duplicates added: *n rows,
 * rowptr n+1 entries, cols/vals rowptr[n] (caller frees all three, also on error). Errors are
 * JSMF_EFORMAT naming the file and line, JSMF_EIO, JSMF_ENOMEM. */
int source_read_mtx(const char *path, uint32_t *n, uint64_t **rowptr, uint32_t **cols,
                    double **vals);

#endif
