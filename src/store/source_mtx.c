/* source_mtx.c — a MatrixMarket C ('jsmf export --format mm', or another tool's) read into CSR:
 * entries collected, mirrored when symmetric, sorted, duplicates added. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsmf.h"
#include "source_mtx.h"

typedef struct mm_entry {
    uint32_t r, c;
    double v;
} mm_entry;

static int cmp_entry(const void *a, const void *b)
{
    const mm_entry *x = a, *y = b;
    if (x->r != y->r)
        return x->r < y->r ? -1 : 1;
    return x->c < y->c ? -1 : x->c > y->c;
}

/* One line into buf (cut at size - 1 bytes; the rest of a longer line is skipped, so that line
 * numbers stay right); NULL at the end of the file. */
static char *read_line(char *buf, int size, FILE *f)
{
    if (!fgets(buf, size, f))
        return NULL;
    if (!strchr(buf, '\n'))
        for (int c = getc(f); c != EOF && c != '\n'; c = getc(f))
            ;
    return buf;
}

/* The banner, comments and size line; *lineno ends on the size line. */
static int read_header(FILE *f, const char *path, int *sym, uint32_t *n, uint64_t *nnz,
                       unsigned long long *lineno)
{
    char line[1024];
    unsigned rows = 0, cols = 0;
    unsigned long long count = 0;
    if (!read_line(line, sizeof line, f) ||
        strncmp(line, "%%MatrixMarket matrix coordinate real", 37) ||
        (!(*sym = strstr(line, "symmetric") != NULL) && !strstr(line, "general")))
        return jsmf_error(JSMF_EFORMAT, "%s:1: expected '%%%%MatrixMarket matrix coordinate real "
                          "symmetric' (or general)", path);
    *lineno = 1;
    while (read_line(line, sizeof line, f) && (++*lineno, line[0] == '%'))
        ;
    if (sscanf(line, "%u %u %llu", &rows, &cols, &count) != 3 || rows != cols || rows == 0)
        return jsmf_error(JSMF_EFORMAT, "%s:%llu: expected the size line 'N N NNZ' of a square "
                          "matrix", path, *lineno);
    if (count > (uint64_t)SIZE_MAX / (2 * sizeof(mm_entry)) - 1)
        return jsmf_error(JSMF_EFORMAT, "%s:%llu: %llu entries cannot be held in memory", path,
                          *lineno, count);
    *n = rows, *nnz = count;
    return JSMF_OK;
}

/* The announced entries, each mirrored when the matrix is symmetric; *got says how many. */
static int read_entries(FILE *f, const char *path, int sym, uint32_t n, uint64_t nnz,
                        unsigned long long lineno, mm_entry *e, uint64_t *got)
{
    char line[1024];
    uint64_t z = 0;
    for (uint64_t i = 0; i < nnz; i++) {
        unsigned r, c;
        double v;
        lineno++;
        if (!read_line(line, sizeof line, f) || sscanf(line, "%u %u %lf", &r, &c, &v) != 3 ||
            r < 1 || c < 1 || r > n || c > n)
            return jsmf_error(JSMF_EFORMAT, "%s:%llu: expected 'ROW COLUMN VALUE' with 1 <= ROW, "
                              "COLUMN <= %u (%llu entries announced)", path, lineno, n,
                              (unsigned long long)nnz);
        if (!isfinite(v))
            return jsmf_error(JSMF_EFORMAT, "%s:%llu: the value is not a finite number", path,
                              lineno);
        e[z++] = (mm_entry){r - 1, c - 1, v};
        if (sym && r != c)
            e[z++] = (mm_entry){c - 1, r - 1, v};
    }
    *got = z;
    return JSMF_OK;
}

/* Sorted entries into CSR; duplicates add up, empty rows end where the previous row did. */
static int to_csr(const mm_entry *e, uint64_t z, uint32_t n, const char *path, uint64_t **rowptr,
                  uint32_t **cols, double **vals)
{
    uint64_t *rp = *rowptr = calloc((size_t)n + 1, sizeof *rp);
    uint32_t *c = *cols = malloc((z ? z : 1) * sizeof *c);
    double *v = *vals = malloc((z ? z : 1) * sizeof *v);
    if (!rp || !c || !v)
        return jsmf_error(JSMF_ENOMEM, "out of memory reading %s", path);
    uint64_t m = 0;
    for (uint64_t i = 0; i < z; i++) {
        if (m && i && e[i].r == e[i - 1].r && e[i].c == e[i - 1].c) {
            v[m - 1] += e[i].v;
            continue;
        }
        c[m] = e[i].c, v[m] = e[i].v, m++;
        rp[e[i].r + 1] = m;
    }
    for (uint32_t r = 0; r < n; r++)
        if (rp[r + 1] < rp[r])
            rp[r + 1] = rp[r];
    return JSMF_OK;
}

int source_read_mtx(const char *path, uint32_t *n, uint64_t **rowptr, uint32_t **cols,
                    double **vals)
{
    *rowptr = NULL, *cols = NULL, *vals = NULL;
    FILE *f = fopen(path, "r");
    if (!f)
        return jsmf_error(JSMF_EIO, "%s: %s", path, strerror(errno));
    int sym = 0;
    uint64_t nnz = 0, z = 0;
    unsigned long long lineno = 0;
    mm_entry *e = NULL;
    int rc = read_header(f, path, &sym, n, &nnz, &lineno);
    if (!rc && !(e = malloc((sym ? 2 * nnz : nnz) * sizeof *e + 1)))
        rc = jsmf_error(JSMF_ENOMEM, "out of memory reading %s", path);
    if (!rc)
        rc = read_entries(f, path, sym, *n, nnz, lineno, e, &z);
    if (!rc) {
        qsort(e, z, sizeof *e, cmp_entry);
        rc = to_csr(e, z, *n, path, rowptr, cols, vals);
    }
    free(e);
    fclose(f);
    return rc;
}
