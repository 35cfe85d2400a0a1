/* product_bench.c — one product C V through the documents (src/fit/fit_docs.c) on random baskets
 * of 50 distinct items out of N, held in memory as a documents view; with a budget below half
 * their size the fit's stepped product runs (as on a store whose documents exceed --mem / 2), with
 * more the whole (tiled) one. Each product's wall and CPU seconds, and the largest difference to
 * the first product's Z. MODES is a string of d (float64 vectors) and s (fd->single). Not a test.
 *   cc -O2 -fopenmp -Iinclude -Isrc tools/bench/product_bench.c build/libjsmf.a ... (as fitdocs)
 *   product_bench N ENTRIES P MEM_MB MODES [REPS]     e.g. product_bench 1000000 20000000 300 64 ddd */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/clock.h"
#include "fit/fit_internal.h"
#include "jsmf.h"
static uint64_t rng = 88172645463325252ull;
static uint64_t xr(void){ rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }
static int cmpu(const void *a, const void *b){ uint32_t x=*(const uint32_t*)a, y=*(const uint32_t*)b; return (x>y)-(x<y);}
int main(int argc, char **argv)
{
    uint32_t n = atoi(argv[1]); uint64_t nnz = strtoull(argv[2],0,10); uint32_t p = atoi(argv[3]);
    uint64_t mem = strtoull(argv[4],0,10) << 20; const char *modes = argv[5]; int reps = argc > 6 ? atoi(argv[6]) : 1;
    uint32_t len = 50; uint64_t m = nnz / len;
    uint64_t *offs = malloc(8*(m+1)); uint32_t *ids = malloc(4*m*len), *cnt = malloc(4*m*len);
    offs[0]=0;
    for (uint64_t d=0; d<m; d++){ uint32_t *x = ids + d*len;
        for (uint32_t k=0;k<len;k++){ again: x[k]=xr()%n; for(uint32_t j=0;j<k;j++) if(x[j]==x[k]) goto again; }
        qsort(x,len,4,cmpu); for(uint32_t k=0;k<len;k++) cnt[d*len+k]=1; offs[d+1]=offs[d]+len; }
    jsmf_doc_csr csr = {n, m, offs, ids, cnt, NULL}; jsmf_doc_source D;
    if (jsmf_doc_csr_source(&csr, 4096, &D)) { fprintf(stderr,"src\n"); return 1; }
    fit_docs *fd; if (fit_docs_open(&D, n, mem, omp_get_max_threads(), NULL, NULL, &fd)) { fprintf(stderr,"open %s\n", jsmf_errmsg()); return 1; }
    double *V = malloc(8ull*n*p), *Z = malloc(8ull*n*p), *Z0 = malloc(8ull*n*p);
    for (size_t e=0;e<(size_t)n*p;e++) V[e] = (double)(xr()%2000001)/1e6 - 1;
    printf("n %u nnz %llu p %u cached %d\n", n, (unsigned long long)nnz, p, fit_docs_cached(fd));
    for (int r=0;r<reps;r++) for (const char *c=modes; *c; c++) {
        int single = *c=='s'; fit_docs_single(fd, single);
        double t = clock_seconds(), c0 = clock(); fit_docs_apply(fd, V, p, Z); t = clock_seconds()-t; c0 = (clock()-c0)/CLOCKS_PER_SEC;
        if (c == modes && r == 0) memcpy(Z0, Z, 8ull*n*p);
        double md=0, mz=0; for(size_t e=0;e<(size_t)n*p;e++){ double d=fabs(Z[e]-Z0[e]); if(d>md) md=d; if(fabs(Z0[e])>mz) mz=fabs(Z0[e]); }
        printf("%s %.2f s wall %.2f cpu  max|dZ| %.3g of max|Z| %.3g  (%.3f us/entry)\n", single?"single":"double", t, c0, md, mz, t*1e6/nnz);
        fflush(stdout);
    }
    return 0;
}
