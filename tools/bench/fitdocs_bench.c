/* fitdocs_bench.c — the fit's products with C through its rows against through its documents, on
 * a store and the UCI docword file it was ingested from: the documents are rebuilt in memory in
 * the store's word order (words by string; words the store lacks dropped, as ingest drops them),
 * checked against the store's C (row sums), then
 *   - one product C V at width p, best of --reps, from the rows in memory (as the fit holds them
 *     when they fit half of --mem), from the store (streamed), from the documents in memory;
 *   - with -o PREFIX, the default fit (options as 'jsmf fit' sets them) through the rows and
 *     through the documents, each timed, the models written to PREFIX.rows and PREFIX.docs for
 *     'jsmf eval --truth'.
 * With --fit-only rows|docs, only that fit: the model written to the directory -o names, its
 * summary.json printed (tools/bench/fit's documents row).
 * Not a test: timings depend on the machine and its load. Built and run by tools/bench/fitdocs.
 *   fitdocs_bench STORE DOCWORD[.zst] VOCAB [-k K] [-p P] [--reps R] [--mem BYTES] [-o PREFIX]
 *                 [--min-doc-len L] [--no-stream] [--fit-only rows|docs] */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "core/clock.h"
#include "fit/fit_internal.h"
#include "jsmf.h"
#include "jsmf_fit.h"
#include "jsmf_model.h"
#include "jsmf_store.h"

static void die(const char *what, int rc)
{
    fprintf(stderr, "fitdocs_bench: %s: %s (%s)\n", what, jsmf_strerror(rc), jsmf_errmsg());
    exit(1);
}

static FILE *open_text(const char *path, int *piped)
{
    size_t len = strlen(path);
    *piped = len > 4 && strcmp(path + len - 4, ".zst") == 0;
    if (!*piped)
        return fopen(path, "r");
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "zstd -dc '%s'", path);
    return popen(cmd, "r");
}

static int cmp_pair(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* The UCI documents in the store's ids (map: UCI word id - 1 -> store id or UINT32_MAX);
 * documents of fewer than min_len tokens left out, as ingest leaves them out. */
static void read_docs(const char *path, const uint32_t *map, uint32_t nuci, uint32_t n,
                      uint32_t min_len, jsmf_doc_csr *d)
{
    int piped;
    FILE *f = open_text(path, &piped);
    if (!f) {
        perror(path);
        exit(1);
    }
    unsigned long long D, W, NNZ;
    if (fscanf(f, "%llu %llu %llu", &D, &W, &NNZ) != 3 || W != nuci) {
        fprintf(stderr, "fitdocs_bench: %s: not a UCI docword file of %u words\n", path, nuci);
        exit(1);
    }
    uint64_t *offs = malloc(sizeof(uint64_t) * (D + 1));
    uint32_t *ids = malloc(sizeof(uint32_t) * (NNZ + 1)), *cnt = malloc(sizeof(uint32_t) * (NNZ + 1));
    uint32_t *pairs = malloc(sizeof(uint32_t) * 2 * (NNZ + 1));
    uint64_t m = 0, e = 0, np = 0;
    unsigned long long doc, word, c, cur = 0;
    offs[0] = 0;
    int more;
    do {
        more = fscanf(f, "%llu %llu %llu", &doc, &word, &c) == 3;
        if (!more || doc != cur) { /* the document before ends */
            if (np) {
                qsort(pairs, np, 2 * sizeof(uint32_t), cmp_pair);
                uint64_t tokens = 0, e0 = e;
                for (uint64_t a = 0; a < np; a++) {
                    if (e > e0 && ids[e - 1] == pairs[2 * a])
                        cnt[e - 1] += pairs[2 * a + 1];
                    else
                        ids[e] = pairs[2 * a], cnt[e++] = pairs[2 * a + 1];
                    tokens += pairs[2 * a + 1];
                }
                if (tokens >= min_len && tokens >= 2)
                    offs[++m] = e;
                else
                    e = e0;
            }
            np = 0, cur = doc;
        }
        if (more && word >= 1 && word <= nuci && map[word - 1] != UINT32_MAX && c > 0)
            pairs[2 * np] = map[word - 1], pairs[2 * np + 1] = (uint32_t)c, np++;
    } while (more);
    if (piped)
        pclose(f);
    else
        fclose(f);
    free(pairs);
    *d = (jsmf_doc_csr){n, m, offs, ids, cnt, NULL};
}

typedef struct {
    const char *w;
    uint32_t i;
} word_id;

static int cmp_word(const void *a, const void *b)
{
    return strcmp(((const word_id *)a)->w, ((const word_id *)b)->w);
}

/* UCI word ids to the store's, by string. */
static uint32_t *map_words(const char *vocab_path, const jsmf_vocab *v, uint32_t *nuci)
{
    FILE *f = fopen(vocab_path, "r");
    if (!f) {
        perror(vocab_path);
        exit(1);
    }
    word_id *sorted = malloc(sizeof(word_id) * v->n);
    for (uint32_t i = 0; i < v->n; i++)
        sorted[i] = (word_id){v->words[i], i};
    qsort(sorted, v->n, sizeof(word_id), cmp_word);
    uint32_t cap = 1024, n = 0, *map = malloc(sizeof(uint32_t) * cap);
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        if (n == cap)
            map = realloc(map, sizeof(uint32_t) * (cap *= 2));
        word_id key = {line, 0}, *hit = bsearch(&key, sorted, v->n, sizeof(word_id), cmp_word);
        map[n++] = hit ? hit->i : UINT32_MAX;
    }
    fclose(f);
    free(sorted);
    *nuci = n;
    return map;
}

static double cpu_seconds(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

/* The best of reps products at width p: wall seconds, and CPU seconds (all threads) in *cpu
 * (the steadier figure on a shared machine). */
static double time_product(fit_csrc *s, uint32_t n, uint32_t p, int reps, double *Z, double *cpu)
{
    double *V = malloc(sizeof(double) * n * p), best = INFINITY, bc = INFINITY;
    uint64_t st = 7;
    for (size_t e = 0; e < (size_t)n * p; e++)
        V[e] = fit_rng_gauss(&st);
    for (int r = 0; r < reps; r++) {
        double t = clock_seconds(), c = cpu_seconds();
        int rc = fit_csrc_apply(s, V, p, Z);
        if (rc)
            die("product", rc);
        best = fmin(best, clock_seconds() - t), bc = fmin(bc, cpu_seconds() - c);
    }
    free(V);
    if (cpu)
        *cpu = bc;
    return best;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: fitdocs_bench STORE DOCWORD VOCAB [-k K] [-p P] [--reps R] "
                        "[--mem BYTES] [-o PREFIX] [--min-doc-len L] [--no-stream]\n");
        return 2;
    }
    const char *store = argv[1], *docword = argv[2], *vocab = argv[3], *prefix = NULL;
    uint32_t k = 100, p = 0, min_len = 5;
    int reps = 3, stream = 1, only = -1;
    uint64_t mem = 0;
    for (int a = 4; a < argc; a++) {
        if (!strcmp(argv[a], "-k") && a + 1 < argc)
            k = (uint32_t)atoi(argv[++a]);
        else if (!strcmp(argv[a], "-p") && a + 1 < argc)
            p = (uint32_t)atoi(argv[++a]);
        else if (!strcmp(argv[a], "--reps") && a + 1 < argc)
            reps = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--mem") && a + 1 < argc)
            mem = strtoull(argv[++a], NULL, 10);
        else if (!strcmp(argv[a], "--min-doc-len") && a + 1 < argc)
            min_len = (uint32_t)atoi(argv[++a]);
        else if (!strcmp(argv[a], "-o") && a + 1 < argc)
            prefix = argv[++a];
        else if (!strcmp(argv[a], "--fit-only") && a + 1 < argc)
            only = !strcmp(argv[++a], "docs");
        else if (!strcmp(argv[a], "--no-stream"))
            stream = 0;
        else {
            fprintf(stderr, "fitdocs_bench: unknown argument %s\n", argv[a]);
            return 2;
        }
    }
    jsmf_source_input in;
    int rc = jsmf_source_open(store, 0, &in);
    if (rc)
        die(store, rc);
    uint32_t n = in.src.n, nuci;
    jsmf_fit_opts o;
    jsmf_fit_opts_init(&o, k);
    if (mem)
        o.mem_bytes = mem;
    if ((rc = fit_input_check(store, &in, &o)))
        die(store, rc);
    if (!p) /* the first eigendecomposition's block, K + K/2 */
        p = k + (k / 2 > 10 ? k / 2 : 10);
    uint32_t *map = map_words(vocab, in.vocab, &nuci);
    jsmf_doc_csr dc;
    double t0 = clock_seconds();
    read_docs(docword, map, nuci, n, min_len, &dc);
    double t_read = clock_seconds() - t0;
    jsmf_doc_source D;
    if ((rc = jsmf_doc_csr_source(&dc, 0, &D)))
        die("documents", rc);
    jsmf_source rows = in.src, docs = {n, 0, NULL, NULL, 0, NULL, &D}, both = in.src;
    rows.docs = NULL, both.docs = &D;
    if (only >= 0) {
        if (!prefix)
            die("--fit-only needs -o DIR", JSMF_EINVAL);
        jsmf_model *m = NULL;
        jsmf_fit_report rep;
        if ((rc = jsmf_fit(only ? &docs : &rows, in.vocab, &o, &m, &rep)) ||
            (rc = jsmf_fit_summarize(m, &o, &rep, store, &in)) ||
            (rc = jsmf_model_save(prefix, m, 1)))
            die("fit", rc);
        printf("%s\n", m->summary_json);
        jsmf_model_free(m);
        jsmf_doc_csr_source_free(&D);
        jsmf_source_close(&in);
        return 0;
    }
    printf("store %s: N=%u M=%llu nnz(C)=%llu; documents: M=%llu nnz(H)=%llu tokens=%llu "
           "(read in %.2f s); nnz(C)/nnz(H) %.1f\n", store, n,
           (unsigned long long)in.stats.docs, (unsigned long long)in.src.nnz,
           (unsigned long long)D.n_docs, (unsigned long long)D.nnz,
           (unsigned long long)D.tokens, t_read, (double)in.src.nnz / D.nnz);
    printf("cost rule at --mem %llu: %s\n", (unsigned long long)o.mem_bytes,
           fit_source_use_docs(&both, o.mem_bytes) ? "documents" : "rows");
    /* the two C's: row sums (the store's are fixed-point sums, relative 1e-9 or so) */
    fit_csrc *sr = NULL, *sd = NULL;
    t0 = clock_seconds();
    if ((rc = fit_csrc_open(&rows, o.mem_bytes, omp_get_max_threads(), 1, JSMF_PRODUCTS_AUTO,
                            NULL, NULL, NULL, &sr)))
        die("rows", rc);
    double t_open_r = clock_seconds() - t0;
    t0 = clock_seconds();
    if ((rc = fit_csrc_open(&docs, o.mem_bytes, omp_get_max_threads(), 1, JSMF_PRODUCTS_AUTO,
                            NULL, NULL, NULL, &sd)))
        die("documents", rc);
    double t_open_d = clock_seconds() - t0;
    double *Zr = malloc(sizeof(double) * n * p), *Zd = malloc(sizeof(double) * n * p);
    if (!fit_csrc_rowsums(sr))
        (void)time_product(sr, n, 1, 1, Zr, NULL);
    const double *a = fit_csrc_rowsums(sr), *b = fit_csrc_rowsums(sd);
    double dmax = 0, amax = 0;
    for (uint32_t i = 0; i < n; i++)
        dmax = fmax(dmax, fabs(a[i] - b[i])), amax = fmax(amax, fabs(a[i]));
    printf("row sums of C, store against documents: max difference %.3g of max %.3g\n", dmax,
           amax);
    printf("open (first read): rows %.3f s (%s), documents %.3f s (%s)\n", t_open_r,
           fit_csrc_cached(sr) ? (fit_csrc_exact(sr) ? "in memory, double" : "in memory, float")
                               : "streamed", t_open_d,
           fit_csrc_cached(sd) ? "in memory" : "streamed");
    double cr, cd, tr = time_product(sr, n, p, reps, Zr, &cr), td = time_product(sd, n, p, reps, Zd, &cd);
    double zd = 0, zm = 0;
    for (size_t e = 0; e < (size_t)n * p; e++)
        zd = fmax(zd, fabs(Zr[e] - Zd[e])), zm = fmax(zm, fabs(Zr[e]));
    printf("product C V, p=%u, best of %d: rows %.3f s (CPU %.3f s), documents %.3f s (CPU %.3f "
           "s), rows/documents %.1fx wall, %.1fx CPU (max difference %.2g of max %.2g)\n", p, reps,
           tr, cr, td, cd, tr / td, cr / cd, zd, zm);
    fit_csrc_close(sr);
    if (stream) {
        if ((rc = fit_csrc_open(&rows, 1, omp_get_max_threads(), 1, JSMF_PRODUCTS_AUTO,
                                NULL, NULL, NULL, &sr)))
            die("rows", rc);
        double cs, ts = time_product(sr, n, p, 1, Zr, &cs);
        printf("product C V, p=%u, rows streamed from the store: %.3f s (CPU %.3f s)\n", p, ts, cs);
        fit_csrc_close(sr);
    }
    fit_csrc_close(sd);
    free(Zr), free(Zd);
    if (prefix) {
        char path[4200];
        const char *tags[2] = {"rows", "docs"};
        jsmf_source *srcs[2] = {&rows, &docs};
        for (int w = 0; w < 2; w++) {
            jsmf_model *m = NULL;
            jsmf_fit_report rep;
            t0 = clock_seconds();
            if ((rc = jsmf_fit(srcs[w], in.vocab, &o, &m, &rep)))
                die("fit", rc);
            double t = clock_seconds() - t0;
            printf("fit through the %s: %.2f s (load %.2f, rectify %.2f, anchors %.2f, B %.2f, "
                   "metrics %.2f), %llu passes, %s\n", tags[w], t, rep.t_load, rep.t_rectify,
                   rep.t_anchors, rep.t_recover_b, rep.t_metrics,
                   (unsigned long long)rep.passes, rep.c_documents ? "documents" : "rows");
            snprintf(path, sizeof path, "%s.%s", prefix, tags[w]);
            if ((rc = jsmf_model_save(path, m, 1)))
                die(path, rc);
            jsmf_model_free(m);
        }
    }
    jsmf_doc_csr_source_free(&D);
    free((void *)dc.offs), free((void *)dc.ids), free((void *)dc.counts), free(map);
    jsmf_source_close(&in);
    return 0;
}
