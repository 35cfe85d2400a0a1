/* npy.c — .npy files (NumPy format 1.0) for B, A and alpha: little-endian float64 or uint32 in C
 * order, header padded to 64 bytes as numpy.save does, so `numpy.load` reads them directly. */
#define _GNU_SOURCE /* fmemopen */
#include "jsmf_model.h"
#include "core/durable.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npy.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npy.c assumes a little-endian host (the files are little-endian)"
#endif

static const char NPY_MAGIC[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};
/* numpy refuses headers above this on load unless told otherwise; ours are tiny anyway. */
#define NPY_MAX_HEADER 65535

/* The header: magic, version 1.0, little-endian length, then the dict padded with spaces and a
 * final newline so that data starts at a multiple of 64 bytes. */
static size_t npy_header(char *buf, size_t cap, const char *descr, uint32_t rows, uint32_t cols,
                         int one_dim)
{
    char dict[256];
    int len = one_dim
                  ? snprintf(dict, sizeof dict,
                             "{'descr': '%s', 'fortran_order': False, 'shape': (%" PRIu32 ",), }",
                             descr, rows)
                  : snprintf(dict, sizeof dict,
                             "{'descr': '%s', 'fortran_order': False, 'shape': (%" PRIu32
                             ", %" PRIu32 "), }",
                             descr, rows, cols);
    size_t total = 10 + (size_t)len + 1;
    total = (total + 63) / 64 * 64;
    if (total > cap)
        return 0;
    size_t hlen = total - 10;
    memcpy(buf, NPY_MAGIC, 6);
    buf[6] = 1, buf[7] = 0;
    buf[8] = (char)(hlen & 0xff), buf[9] = (char)(hlen >> 8);
    memcpy(buf + 10, dict, (size_t)len);
    memset(buf + 10 + len, ' ', hlen - (size_t)len - 1);
    buf[total - 1] = '\n';
    return total;
}

/* cols == 0 writes a 1-D array of `rows` elements. */
static int npy_write(const char *path, const void *data, size_t elem, const char *descr,
                     uint32_t rows, uint32_t cols)
{
    char header[512];
    size_t hlen = npy_header(header, sizeof header, descr, rows, cols, cols == 0);
    size_t count = (size_t)rows * (cols ? cols : 1);
    FILE *f = fopen(path, "wb");
    if (!f)
        return jsmf_error(durable_errcode(errno), "%s: cannot create: %s", path,
                          strerror(errno));
    int ok = fwrite(header, 1, hlen, f) == hlen;
    if (ok && count)
        ok = fwrite(data, elem, count, f) == count;
    int err = ok ? 0 : errno;
    if (fclose(f) && ok)
        ok = 0, err = errno;
    if (!ok) {
        struct stat st; /* remove a partial regular file, never a device such as /dev/full */
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
            unlink(path);
        return jsmf_error(durable_errcode(err), "%s: write error: %s", path,
                          strerror(err ? err : EIO));
    }
    return JSMF_OK;
}

int npy_write_f64(const char *path, const double *data, uint32_t rows, uint32_t cols)
{
    return npy_write(path, data, sizeof(double), "<f8", rows, cols);
}

int npy_write_u32(const char *path, const uint32_t *data, uint32_t rows, uint32_t cols)
{
    return npy_write(path, data, sizeof(uint32_t), "<u4", rows, cols);
}

/* Find the value of 'key' in the header dict; returns a pointer just past the colon or NULL. */
static const char *dict_value(const char *dict, const char *key)
{
    char pat[32];
    snprintf(pat, sizeof pat, "'%s'", key);
    const char *p = strstr(dict, pat);
    if (!p) {
        snprintf(pat, sizeof pat, "\"%s\"", key);
        p = strstr(dict, pat);
    }
    if (!p)
        return NULL;
    p += strlen(pat);
    while (isspace((unsigned char)*p))
        p++;
    if (*p != ':')
        return NULL;
    p++;
    while (isspace((unsigned char)*p))
        p++;
    return p;
}

/* Parse "(a, b)", "(a,)" or "()" into at most 2 dimensions; returns ndim or -1. */
static int parse_shape(const char *p, uint64_t dims[2])
{
    if (*p++ != '(')
        return -1;
    int nd = 0;
    for (;;) {
        while (isspace((unsigned char)*p))
            p++;
        if (*p == ')')
            return nd;
        if (!isdigit((unsigned char)*p) || nd == 2)
            return -1;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(p, &end, 10);
        if (errno)
            return -1;
        dims[nd++] = v;
        p = end;
        while (isspace((unsigned char)*p))
            p++;
        if (*p == ',')
            p++;
        else if (*p != ')')
            return -1;
    }
}

/* Validate the header of a float64 array and return its shape. */
static int npy_read_header(FILE *f, const char *path, uint64_t dims[2], int *ndim)
{
    unsigned char pre[12];
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, NPY_MAGIC, 6))
        return jsmf_error(JSMF_EFORMAT, "%s: not a .npy file (bad magic)", path);
    unsigned major = pre[6];
    size_t hlen;
    if (major == 1) {
        hlen = pre[8] | (size_t)pre[9] << 8;
    } else if (major == 2 || major == 3) {
        if (fread(pre + 10, 1, 2, f) != 2)
            return jsmf_error(JSMF_EFORMAT, "%s: truncated .npy header", path);
        hlen = pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
    } else {
        return jsmf_error(JSMF_EVERSION, "%s: .npy format version %u.%u is not supported", path,
                          major, pre[7]);
    }
    if (hlen == 0 || hlen > (1u << 20))
        return jsmf_error(JSMF_EFORMAT, "%s: implausible .npy header length %zu", path, hlen);
    char *dict = malloc(hlen + 1);
    if (!dict)
        return jsmf_error(JSMF_ENOMEM, "%s: out of memory for a .npy header of %zu bytes",
                          path, hlen);
    int rc = JSMF_OK;
    if (fread(dict, 1, hlen, f) != hlen) {
        free(dict);
        return jsmf_error(JSMF_EFORMAT, "%s: truncated .npy header", path);
    }
    dict[hlen] = 0;
    const char *descr = dict_value(dict, "descr");
    const char *fortran = dict_value(dict, "fortran_order");
    const char *shape = dict_value(dict, "shape");
    if (!descr || !fortran || !shape) {
        rc = jsmf_error(JSMF_EFORMAT, "%s: .npy header lacks descr, fortran_order or shape",
                        path);
    } else if (strncmp(descr, "'<f8'", 5) && strncmp(descr, "\"<f8\"", 5)) {
        const char *q = descr + (*descr == '\'' || *descr == '"');
        int n = 0;
        while (q[n] && q[n] != '\'' && q[n] != '"' && n < 16)
            n++;
        rc = jsmf_error(JSMF_EFORMAT,
                        "%s: dtype '%.*s' is not supported (expected little-endian float64 "
                        "'<f8'; use numpy.asarray(x, dtype='<f8'))",
                        path, n, q);
    } else if (strncmp(fortran, "False", 5)) {
        rc = jsmf_error(JSMF_EFORMAT,
                        "%s: Fortran-order arrays are not supported (save a C-contiguous "
                        "array: numpy.ascontiguousarray)",
                        path);
    } else if ((*ndim = parse_shape(shape, dims)) < 1) {
        rc = jsmf_error(JSMF_EFORMAT, "%s: only 1-D and 2-D arrays are supported (shape %.40s)",
                        path, shape);
    }
    free(dict);
    return rc;
}

int npy_read_f64(const char *path, double **data, uint32_t *rows, uint32_t *cols)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return jsmf_error(errno == ENOENT ? JSMF_ENOTFOUND : JSMF_EIO, "%s: cannot open: %s",
                          path, strerror(errno));
    uint64_t dims[2] = {0, 1};
    int ndim = 0;
    int rc = npy_read_header(f, path, dims, &ndim);
    if (!rc && (dims[0] > UINT32_MAX || dims[1] > UINT32_MAX))
        rc = jsmf_error(JSMF_EFORMAT, "%s: array too large (%" PRIu64 " x %" PRIu64 ")", path,
                        dims[0], dims[1]);
    size_t count = (size_t)dims[0] * (size_t)dims[1];
    double *buf = NULL;
    if (!rc) {
        buf = malloc((count ? count : 1) * sizeof *buf);
        if (!buf)
            rc = jsmf_error(JSMF_ENOMEM, "%s: cannot allocate %zu values", path, count);
    }
    if (!rc && count && fread(buf, sizeof *buf, count, f) != count)
        rc = jsmf_error(ferror(f) ? JSMF_EIO : JSMF_EFORMAT,
                        "%s: truncated data (expected %zu float64 values after the header)",
                        path, count);
    if (!rc && fgetc(f) != EOF)
        rc = jsmf_error(JSMF_EFORMAT, "%s: trailing bytes after %zu float64 values", path, count);
    fclose(f);
    if (rc) {
        free(buf);
        return rc;
    }
    *data = buf;
    *rows = (uint32_t)dims[0];
    *cols = (uint32_t)dims[1];
    return JSMF_OK;
}

int npy_decode_f64(char *buf, size_t size, const char *path, double **data, uint32_t *rows,
                   uint32_t *cols)
{
    FILE *f = fmemopen(buf, size, "rb");
    if (!f) {
        free(buf);
        return jsmf_error(JSMF_ENOMEM, "%s: out of memory", path);
    }
    uint64_t dims[2] = {0, 1};
    int ndim = 0;
    int rc = npy_read_header(f, path, dims, &ndim);
    long at = ftell(f);
    fclose(f);
    if (!rc && at < 0)
        rc = jsmf_error(JSMF_EIO, "%s: cannot read the .npy header", path);
    if (!rc && (dims[0] > UINT32_MAX || dims[1] > UINT32_MAX))
        rc = jsmf_error(JSMF_EFORMAT, "%s: array too large (%" PRIu64 " x %" PRIu64 ")", path,
                        dims[0], dims[1]);
    size_t count = (size_t)dims[0] * (size_t)dims[1];
    size_t have = rc || at < 0 ? 0 : (size - (size_t)at) / sizeof(double);
    if (!rc && have < count)
        rc = jsmf_error(JSMF_EFORMAT,
                        "%s: truncated data (expected %zu float64 values after the header)",
                        path, count);
    else if (!rc && size - (size_t)at != count * sizeof(double))
        rc = jsmf_error(JSMF_EFORMAT, "%s: trailing bytes after %zu float64 values", path, count);
    if (rc) {
        free(buf);
        return rc;
    }
    /* The values to the front of the buffer, which becomes the array: one copy of the file in
     * memory at a time, however large B is. */
    memmove(buf, buf + at, count * sizeof(double));
    double *d = realloc(buf, (count ? count : 1) * sizeof(double));
    *data = d ? d : (double *)(void *)buf;
    *rows = (uint32_t)dims[0];
    *cols = (uint32_t)dims[1];
    return JSMF_OK;
}
