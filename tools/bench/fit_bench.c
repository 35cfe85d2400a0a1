/* fit_bench.c — one timed jsmf_fit on a synthetic co-occurrence matrix built in memory (built by
 * tools/bench/fit). The corpus: M documents of ~L tokens from K topics (each word in one or two
 * topics, Zipf weights, Dirichlet(0.1) mixtures), C = (1/M) sum_m (h h^T - diag h)/(n(n-1)).
 * usage: fit_bench N K MODE [ITERS [EIG_TOL [DOCS [LEN [STEP_MAXIT]]]]]; prints one line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "jsmf.h"
#include "jsmf_fit.h"
#include "jsmf_model.h"

static uint64_t rs = 88172645463325252ull;
static double unif(void)
{
    rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
    return ((rs >> 11) + 0.5) / 9007199254740992.0;
}
static double gamma01(double a) /* Gamma(a) for a < 1 (Marsaglia-Tsang with boost) */
{
    double boost = pow(unif(), 1.0 / a);
    a += 1.0;
    double d = a - 1.0 / 3, c = 1.0 / sqrt(9 * d);
    for (;;) {
        double x, v;
        do {
            double u1 = unif(), u2 = unif();
            x = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
            v = 1 + c * x;
        } while (v <= 0);
        v = v * v * v;
        if (log(unif()) < 0.5 * x * x + d - d * v + d * log(v))
            return d * v * boost;
    }
}

typedef struct {
    uint32_t n, k, *len, **words;
    double **cdf;
} topics;

static void make_topics(uint32_t n, uint32_t k, topics *t)
{
    t->n = n, t->k = k;
    t->len = calloc(k, sizeof(uint32_t));
    t->words = calloc(k, sizeof(uint32_t *));
    t->cdf = calloc(k, sizeof(double *));
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t a = 0; a < k; a++)
            if (pass)
                t->words[a] = malloc(sizeof(uint32_t) * t->len[a]),
                t->cdf[a] = malloc(sizeof(double) * t->len[a]), t->len[a] = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t a = i % k, b = (uint32_t)((i * 7ull + 3) % k);
            uint32_t tl[2] = {a, b};
            int nt = (i >= k && b != a) ? 2 : 1; /* words 0..k-1 are anchors */
            for (int e = 0; e < nt; e++) {
                if (pass) {
                    t->words[tl[e]][t->len[tl[e]]] = i;
                    t->cdf[tl[e]][t->len[tl[e]]] = 1.0 / pow(1.0 + i / k, 1.05);
                }
                t->len[tl[e]]++;
            }
        }
    }
    for (uint32_t a = 0; a < k; a++) {
        double s = 0;
        for (uint32_t j = 0; j < t->len[a]; j++)
            t->cdf[a][j] = (s += t->cdf[a][j]);
        for (uint32_t j = 0; j < t->len[a]; j++)
            t->cdf[a][j] /= s;
    }
}

static uint32_t draw(const double *cdf, uint32_t len)
{
    double u = unif();
    uint32_t lo = 0, hi = len - 1;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (cdf[mid] < u)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* One document's bag (sorted distinct words with counts). */
static uint32_t make_doc(const topics *t, uint32_t L, uint32_t *tok, uint32_t *w, double *cnt,
                         double *theta)
{
    double s = 0;
    for (uint32_t a = 0; a < t->k; a++)
        s += (theta[a] = gamma01(0.1));
    double c = 0;
    for (uint32_t a = 0; a < t->k; a++)
        theta[a] = (c += theta[a] / s);
    uint32_t n = L / 2 + (uint32_t)(unif() * L);
    for (uint32_t x = 0; x < n; x++) {
        uint32_t a = draw(theta, t->k);
        tok[x] = t->words[a][draw(t->cdf[a], t->len[a])];
    }
    qsort(tok, n, sizeof(uint32_t), cmp_u32);
    uint32_t m = 0;
    for (uint32_t x = 0; x < n; x++) {
        if (m && w[m - 1] == tok[x])
            cnt[m - 1]++;
        else
            w[m] = tok[x], cnt[m++] = 1;
    }
    return m;
}

typedef struct {
    uint32_t c;
    double v;
} cv;
static int cmp_cv(const void *a, const void *b)
{
    uint32_t x = ((const cv *)a)->c, y = ((const cv *)b)->c;
    return x < y ? -1 : x > y;
}

static double t_start;
static void progress(void *arg, const char *what, double done, double total)
{
    (void)arg;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    if (getenv("FIT_BENCH_PROGRESS"))
        fprintf(stderr, "%8.1fs %s %.0f/%.0f\n", ts.tv_sec + ts.tv_nsec * 1e-9 - t_start, what,
                done, total);
}

static double peak_rss_mb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6))
            kb = atof(line + 6);
    if (f)
        fclose(f);
    return kb / 1024;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: fit_bench N K dense|stream [ITERS [EIG_TOL [DOCS [LEN]]]]\n");
        return 2;
    }
    uint32_t n = atoi(argv[1]), k = atoi(argv[2]);
    int mode = !strcmp(argv[3], "dense") ? JSMF_MODE_DENSE : JSMF_MODE_STREAM;
    uint32_t iters = argc > 4 ? atoi(argv[4]) : 15;
    double eig_tol = argc > 5 ? atof(argv[5]) : 1e-7;
    uint32_t M = argc > 6 ? (uint32_t)atoi(argv[6]) : n / 2;
    uint32_t L = argc > 7 ? (uint32_t)atoi(argv[7]) : 40;
    topics t;
    make_topics(n, k, &t);
    uint32_t *tok = malloc(sizeof(uint32_t) * 2 * L), *w = malloc(sizeof(uint32_t) * 2 * L);
    double *cnt = malloc(sizeof(double) * 2 * L), *theta = malloc(sizeof(double) * k);
    /* two passes over the same documents: count entries per row, then fill */
    uint64_t *rowptr = calloc((size_t)n + 1, sizeof(uint64_t));
    cv *ent = NULL;
    uint64_t *fillp = NULL;
    for (int pass = 0; pass < 2; pass++) {
        rs = 88172645463325252ull;
        for (uint32_t d = 0; d < M; d++) {
            uint32_t m = make_doc(&t, L, tok, w, cnt, theta);
            double nn = 0;
            for (uint32_t x = 0; x < m; x++)
                nn += cnt[x];
            if (nn < 2)
                continue;
            double f = 1.0 / (nn * (nn - 1) * M);
            for (uint32_t x = 0; x < m; x++)
                for (uint32_t y = 0; y < m; y++) {
                    double v = cnt[x] * (cnt[y] - (x == y)) * f;
                    if (v == 0)
                        continue;
                    if (!pass)
                        rowptr[w[x] + 1]++;
                    else
                        ent[fillp[w[x]]++] = (cv){w[y], v};
                }
        }
        if (!pass) {
            for (uint32_t i = 0; i < n; i++)
                rowptr[i + 1] += rowptr[i];
            ent = malloc(sizeof(cv) * (rowptr[n] ? rowptr[n] : 1));
            fillp = malloc(sizeof(uint64_t) * n);
            memcpy(fillp, rowptr, sizeof(uint64_t) * n);
        }
    }
    /* sort each row, merge duplicates into the final CSR */
    uint64_t *rp = malloc(sizeof(uint64_t) * (n + 1)), nnz = 0;
    uint32_t *cols = malloc(sizeof(uint32_t) * (rowptr[n] ? rowptr[n] : 1));
    double *vals = malloc(sizeof(double) * (rowptr[n] ? rowptr[n] : 1));
    for (uint32_t i = 0; i < n; i++) {
        rp[i] = nnz;
        qsort(ent + rowptr[i], rowptr[i + 1] - rowptr[i], sizeof(cv), cmp_cv);
        for (uint64_t e = rowptr[i]; e < rowptr[i + 1]; e++) {
            if (nnz > rp[i] && cols[nnz - 1] == ent[e].c)
                vals[nnz - 1] += ent[e].v;
            else
                cols[nnz] = ent[e].c, vals[nnz++] = ent[e].v;
        }
    }
    rp[n] = nnz;
    free(ent), free(fillp), free(rowptr), free(tok), free(w), free(cnt), free(theta);
    for (uint32_t a = 0; a < k; a++)
        free(t.words[a]), free(t.cdf[a]);
    free(t.words), free(t.cdf), free(t.len);
    jsmf_csr csr = {n, rp, cols, vals};
    jsmf_source src;
    jsmf_csr_source(&csr, &src);
    double base = peak_rss_mb();
    FILE *cr = fopen("/proc/self/clear_refs", "w"); /* reset the peak-RSS mark */
    if (cr)
        fputs("5", cr), fclose(cr);
    jsmf_fit_opts o;
    jsmf_fit_opts_init(&o, k);
    o.mode = mode;
    o.rectify_iters = iters;
    o.eig_tol = eig_tol;
    o.eig_step_maxit = argc > 8 ? (uint32_t)atoi(argv[8]) : 0;
    o.progress = progress;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    t_start = ts.tv_sec + ts.tv_nsec * 1e-9;
    o.mem_bytes = 20ull << 30;
    jsmf_model *m = NULL;
    jsmf_fit_report *r = calloc(1, sizeof *r);
    struct rusage u0, u1;
    getrusage(RUSAGE_SELF, &u0);
    int rc = jsmf_fit(&src, NULL, &o, &m, r);
    getrusage(RUSAGE_SELF, &u1);
    double cpu = (u1.ru_utime.tv_sec - u0.ru_utime.tv_sec) + (u1.ru_stime.tv_sec - u0.ru_stime.tv_sec) +
                 1e-6 * ((u1.ru_utime.tv_usec - u0.ru_utime.tv_usec) +
                         (u1.ru_stime.tv_usec - u0.ru_stime.tv_usec));
    if (rc) {
        fprintf(stderr, "fit_bench: %s\n", jsmf_errmsg());
        return 1;
    }
    uint32_t passes = 0;
    for (uint32_t s = 0; s < r->n_trace; s++)
        passes += r->trace[s].eig_iters;
    /* N K mode nnz total load rectify anchors B A metrics peak_MB C_MB eig_passes clip cpu
     * anchors... */
    printf("%u\t%u\t%s\t%llu\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.1f\t%.1f\t%u\t%.3g\t%.2f",
           n, k, mode == JSMF_MODE_DENSE ? "dense" : "stream", (unsigned long long)nnz,
           r->t_total, r->t_load, r->t_rectify, r->t_anchors, r->t_recover_b, r->t_recover_a,
           r->t_metrics, peak_rss_mb(), base, passes, r->final_neg_frac, cpu);
    for (uint32_t a = 0; a < k; a++)
        printf("%c%u", a ? ',' : '\t', m->anchors[a]);
    printf("\n");
    if (getenv("FIT_BENCH_B")) { /* for dense/stream comparisons */
        FILE *f = fopen(getenv("FIT_BENCH_B"), "wb");
        fwrite(m->B, sizeof(double), (size_t)n * k, f);
        fclose(f);
    }
    jsmf_model_free(m);
    free(r), free(rp), free(cols), free(vals);
    return 0;
}
