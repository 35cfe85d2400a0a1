/* export.c — the normalised C of a store written for other tools: MatrixMarket (any N, streamed,
 * symmetric lower triangle) or a dense float64 .npy (small N, one row at a time), with its
 * vocabulary beside it. */
#include "env.h"
#include "core/durable.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "core/out.h"
#include "export.h"

#define NPY_LIMIT (4ULL << 30) /* dense files above 4 GiB are refused: use mm */

static int write_error(void)
{
    return jsmf_error(durable_errcode(errno), "export: write error: %s",
                      strerror(errno));
}

static int count_lower(void *arg, uint32_t row, const uint32_t *cols, const double *vals,
                       uint32_t n)
{
    (void)vals;
    uint64_t *cnt = arg;
    for (uint32_t i = 0; i < n && cols[i] <= row; i++)
        ++*cnt;
    return 0;
}

static int write_lower(void *arg, uint32_t row, const uint32_t *cols, const double *vals,
                       uint32_t n)
{
    FILE *f = arg;
    for (uint32_t i = 0; i < n && cols[i] <= row; i++)
        if (fprintf(f, "%u %u %.17g\n", row + 1, cols[i] + 1, vals[i]) < 0)
            return write_error();
    return 0;
}

int store_export_mm(jsmf_store *s, FILE *f)
{
    jsmf_source src;
    int rc = jsmf_store_source(s, &src);
    if (rc)
        return rc;
    uint64_t lower = 0;
    if (!(rc = src.scan(src.ctx, count_lower, &lower))) {
        if (fprintf(f, "%%%%MatrixMarket matrix coordinate real symmetric\n"
                       "%% jsmf co-occurrence matrix C, normalised: the entries of the full "
                       "symmetric matrix sum to 1\n"
                       "%% rows and columns follow the store's vocabulary order\n"
                       "%u %u %" PRIu64 "\n",
                    src.n, src.n, lower) < 0)
            rc = write_error();
    }
    if (!rc)
        rc = src.scan(src.ctx, write_lower, f);
    if (!rc && fflush(f))
        rc = write_error();
    jsmf_store_source_release(s);
    return rc;
}

typedef struct npy_ctx {
    FILE *f;
    uint32_t n, next; /* next row to write */
    double *row;
} npy_ctx;

static int npy_zero_rows(npy_ctx *c, uint32_t upto)
{
    memset(c->row, 0, (size_t)c->n * sizeof *c->row);
    for (; c->next < upto; c->next++)
        if (fwrite(c->row, sizeof *c->row, c->n, c->f) != c->n)
            return write_error();
    return 0;
}

static int npy_row(void *arg, uint32_t row, const uint32_t *cols, const double *vals, uint32_t n)
{
    npy_ctx *c = arg;
    int rc = npy_zero_rows(c, row);
    if (rc)
        return rc;
    for (uint32_t i = 0; i < n; i++)
        c->row[cols[i]] = vals[i];
    if (fwrite(c->row, sizeof *c->row, c->n, c->f) != c->n)
        return write_error();
    c->next = row + 1;
    return 0;
}

int store_export_npy(jsmf_store *s, FILE *f, uint64_t max_bytes)
{
    uint64_t n = s->n_words;
    if (n * n * 8 > max_bytes)
        return jsmf_error(JSMF_EINVAL,
                          "%s: a dense %" PRIu64 " x %" PRIu64 " matrix needs %.1f GiB, above the "
                          "npy limit of %.1f GiB; use --format mm",
                          s->path, n, n, n * n * 8.0 / (1 << 30), max_bytes / (double)(1 << 30));
    char header[128];
    int len = snprintf(header, sizeof header,
                       "{'descr': '<f8', 'fortran_order': False, 'shape': (%u, %u), }", s->n_words,
                       s->n_words);
    int total = 10 + len + 1, pad = (64 - total % 64) % 64;
    uint16_t hlen = (uint16_t)(len + pad + 1);
    if (fwrite("\x93NUMPY\x01\x00", 1, 8, f) != 8 || fwrite(&hlen, 2, 1, f) != 1 ||
        fwrite(header, 1, (size_t)len, f) != (size_t)len || fprintf(f, "%*s\n", pad, "") < 0)
        return write_error();
    npy_ctx c = {f, s->n_words, 0, malloc((size_t)s->n_words * sizeof(double))};
    if (!c.row)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    jsmf_source src;
    int rc = jsmf_store_source(s, &src);
    if (!rc)
        rc = src.scan(src.ctx, npy_row, &c);
    if (!rc)
        rc = npy_zero_rows(&c, c.n);
    if (!rc && fflush(f))
        rc = write_error();
    jsmf_store_source_release(s);
    free(c.row);
    return rc;
}

static int write_vocab(jsmf_store *s, const char *out)
{
    jsmf_vocab *v;
    int rc = jsmf_store_vocab_get(s, &v);
    if (rc)
        return rc;
    size_t len = strlen(out) + 16;
    char *path = malloc(len);
    if (!path) {
        jsmf_vocab_free(v);
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    }
    snprintf(path, len, "%s.vocab.txt", out);
    /* plain words: the file is row labels, not a vocabulary with counts */
    free(v->df), free(v->tf);
    v->df = v->tf = NULL;
    rc = jsmf_vocab_save(path, v);
    free(path);
    jsmf_vocab_free(v);
    return rc;
}

int jsmf_store_export(jsmf_store *s, const char *out, int npy)
{
    struct stat st; /* a device or a pipe gets no OUT.vocab.txt (no /dev/null.vocab.txt) */
    int with_vocab = strcmp(out, "-") && (stat(out, &st) != 0 || S_ISREG(st.st_mode));
    jsmf_out *o = NULL;
    int rc = out_open(out, &o);
    if (rc)
        return rc;
    FILE *f = out_file(o);
    rc = npy ? store_export_npy(s, f, NPY_LIMIT) : store_export_mm(s, f);
    if (!rc && with_vocab)
        rc = write_vocab(s, out);
    return out_close(o, rc);
}
