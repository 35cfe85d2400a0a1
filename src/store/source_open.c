/* source_open.c — the input of fit, fdm and eval: a store, a dense .npy C or a MatrixMarket C
 * (what 'jsmf export' writes), recognised by content, with the vocabulary beside a matrix file;
 * and its provenance in summary.json. Uses the store only through jsmf_store.h. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jsmf_model.h"
#include "jsmf_store.h"
#include "source_mtx.h"
#include "core/error.h"
#include "model/json.h"
#include "model/npy.h"
#include "source_open.h"

/* A matrix file held in memory as CSR (both triangles), wrapped by jsmf_csr_source. */
struct jsmf_source_matrix {
    uint64_t *rowptr;
    uint32_t *cols;
    double *vals;
    jsmf_csr csr;
};

const char *source_kind_name(jsmf_source_kind kind)
{
    return kind == JSMF_SOURCE_STORE ? "store" : kind == JSMF_SOURCE_NPY ? "npy"
                                     : kind == JSMF_SOURCE_MTX ? "mtx" : "unknown";
}

static int matrix_alloc(uint32_t n, uint64_t nnz, struct jsmf_source_matrix *m, const char *path)
{
    m->rowptr = malloc(((size_t)n + 1) * sizeof *m->rowptr);
    m->cols = malloc((nnz ? nnz : 1) * sizeof *m->cols);
    m->vals = malloc((nnz ? nnz : 1) * sizeof *m->vals);
    if (!m->rowptr || !m->cols || !m->vals)
        return jsmf_error(JSMF_ENOMEM, "out of memory reading %s", path);
    return JSMF_OK;
}

/* A dense N x N .npy into CSR: its non-zeros, row by row. */
static int read_npy(const char *path, uint32_t *n_out, struct jsmf_source_matrix *m)
{
    double *c = NULL;
    uint32_t rows, cols;
    int rc = npy_read_f64(path, &c, &rows, &cols);
    if (rc)
        return rc;
    if (rows != cols || rows == 0) {
        free(c);
        return jsmf_error(JSMF_EFORMAT, "%s: C must be a square N x N matrix, not %u x %u", path,
                          rows, cols);
    }
    uint32_t n = rows;
    uint64_t nnz = 0;
    for (size_t e = 0; e < (size_t)n * n; e++) {
        if (!isfinite(c[e])) {
            free(c);
            return jsmf_error(JSMF_EFORMAT, "%s: entry (%zu, %zu) is not a finite number", path,
                              e / n, e % n);
        }
        nnz += c[e] != 0;
    }
    if ((rc = matrix_alloc(n, nnz, m, path))) {
        free(c);
        return rc;
    }
    uint64_t z = 0;
    for (uint32_t i = 0; i < n; i++) {
        m->rowptr[i] = z;
        for (uint32_t j = 0; j < n; j++)
            if (c[(size_t)i * n + j] != 0)
                m->cols[z] = j, m->vals[z] = c[(size_t)i * n + j], z++;
    }
    m->rowptr[n] = z;
    free(c);
    *n_out = n;
    return JSMF_OK;
}

/* FILE.vocab.txt as 'jsmf export' writes it, or the name with its extension replaced. */
static int read_side_vocab(const char *path, uint32_t n, int need, jsmf_vocab **out)
{
    size_t len = strlen(path) + 16;
    char *vp = malloc(len);
    if (!vp)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    snprintf(vp, len, "%s.vocab.txt", path);
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    if (access(vp, F_OK) && dot && (!slash || dot > slash))
        snprintf(vp, len, "%.*s.vocab.txt", (int)(dot - path), path);
    int rc = JSMF_OK;
    if (access(vp, F_OK) && !need)
        ; /* a matrix of another tool: its rows stay unnamed */
    else if ((rc = jsmf_vocab_load(vp, out)))
        rc = error_context(rc, "the vocabulary of %s (FILE.vocab.txt beside it)", path);
    else if ((*out)->n != n)
        rc = jsmf_error(JSMF_EMISMATCH, "%s has %u words but %s is %u x %u", vp, (*out)->n, path,
                        n, n);
    free(vp);
    return rc;
}

static int open_store(const char *path, jsmf_source_input *in)
{
    in->kind = JSMF_SOURCE_STORE;
    int rc = jsmf_store_open(path, JSMF_STORE_RDONLY, &in->store);
    if (!rc)
        rc = jsmf_store_stats_get(in->store, &in->stats);
    if (!rc)
        rc = jsmf_store_vocab_get(in->store, &in->vocab);
    if (!rc)
        rc = jsmf_store_source(in->store, &in->src);
    return rc;
}

static int open_matrix(const char *path, jsmf_source_kind kind, int flags, jsmf_source_input *in)
{
    in->kind = kind;
    struct jsmf_source_matrix *m = in->matrix = calloc(1, sizeof *m);
    if (!m)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    uint32_t n = 0;
    int rc = kind == JSMF_SOURCE_NPY ? read_npy(path, &n, m)
                                     : source_read_mtx(path, &n, &m->rowptr, &m->cols, &m->vals);
    if (rc)
        return rc;
    m->csr = (jsmf_csr){n, m->rowptr, m->cols, m->vals};
    jsmf_csr_source(&m->csr, &in->src);
    return read_side_vocab(path, n, flags & JSMF_SOURCE_NEED_VOCAB, &in->vocab);
}

static int has_suffix(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

int jsmf_source_open(const char *path, int flags, jsmf_source_input *out)
{
    memset(out, 0, sizeof *out);
    struct stat st;
    if (stat(path, &st))
        return jsmf_error(errno == ENOENT ? JSMF_ENOTFOUND : JSMF_EIO,
                          "%s: no such store or matrix file (%s)", path, strerror(errno));
    int rc;
    if (S_ISDIR(st.st_mode)) {
        rc = open_store(path, out);
    } else {
        char magic[16] = "";
        FILE *f = fopen(path, "rb");
        if (!f)
            return jsmf_error(JSMF_EIO, "%s: %s", path, strerror(errno));
        size_t got = fread(magic, 1, sizeof magic - 1, f);
        fclose(f);
        if ((got >= 6 && !memcmp(magic, "\x93NUMPY", 6)) || has_suffix(path, ".npy"))
            rc = open_matrix(path, JSMF_SOURCE_NPY, flags, out);
        else if (got >= 14 && !memcmp(magic, "%%MatrixMarket", 14))
            rc = open_matrix(path, JSMF_SOURCE_MTX, flags, out);
        else
            return jsmf_error(JSMF_EFORMAT, "%s: not a store directory, a .npy matrix or a "
                              "MatrixMarket file", path);
    }
    if (rc)
        jsmf_source_close(out);
    return rc;
}

void jsmf_source_close(jsmf_source_input *in)
{
    if (in->store) {
        jsmf_store_source_release(in->store);
        jsmf_store_close(in->store);
    }
    jsmf_vocab_free(in->vocab);
    if (in->matrix) {
        free(in->matrix->rowptr), free(in->matrix->cols), free(in->matrix->vals);
        free(in->matrix);
    }
    memset(in, 0, sizeof *in);
}

void source_summary(jsmf_json *j, const char *path, const jsmf_source_input *in)
{
    if (in->kind != JSMF_SOURCE_STORE) {
        json_begin_object(j, "input");
        json_string(j, "path", path);
        json_string(j, "kind", source_kind_name(in->kind));
        json_end_object(j);
        return;
    }
    char fp[32];
    snprintf(fp, sizeof fp, "%016" PRIx64, in->stats.fingerprint);
    json_begin_object(j, "store");
    json_string(j, "path", path);
    json_string(j, "fingerprint", fp);
    json_uint(j, "docs", in->stats.docs);
    json_uint(j, "tokens", in->stats.tokens);
    json_end_object(j);
}
