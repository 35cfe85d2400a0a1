/* npy.h — .npy files of float64 and uint32 arrays (src/model/npy.c). */
#ifndef JSMF_MODEL_NPY_H
#define JSMF_MODEL_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "jsmf.h"

/* .npy files (format version 1.0, little-endian float64 or uint32, C order). `cols` = 0 writes
 * a 1-D array of `rows` values. Writers check every write and the close: JSMF_ENOSPC / JSMF_EIO
 * with the path, and a failed write removes the partial file. */
int npy_write_f64(const char *path, const double *data, uint32_t rows, uint32_t cols);
int npy_write_u32(const char *path, const uint32_t *data, uint32_t rows, uint32_t cols);
/** Read a float64 .npy with 1 or 2 dimensions (1-D gives cols = 1). Caller frees *data.
 *  Accepts what numpy.save writes for '<f8' C-order arrays (format 1.0, 2.0, 3.0); Fortran order
 *  and other dtypes are JSMF_EFORMAT with a message naming the file. */
int npy_read_f64(const char *path, double **data, uint32_t *rows, uint32_t *cols);
/** npy_read_f64 of a file already in memory: `size` bytes at `buf` (malloc'ed, taken over:
 *  it becomes *data, or is freed on error). `path` names the file in messages. */
int npy_decode_f64(char *buf, size_t size, const char *path, double **data, uint32_t *rows,
                   uint32_t *cols);

#endif
