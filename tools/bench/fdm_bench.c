/* fdm_bench.c — FDM throughput: pairs/s, ms a step and the effective GFLOP/s of the pair
 * products (6 T^2 flops a pair: [X; Y] alpha and X^T diag(w) Y) for each T, batch size and
 * device, in one run (run through tools/bench/fdm). The input is a store, or a synthetic C over
 * N words accumulated from LDA-like documents with the unbiased per-document estimator.
 *
 *   fdm_bench [--store STORE | --n N] [--ts 50,100,500] [--batches 4096,16384]
 *             [--steps S] [--devices cpu,cuda]
 *
 * Steps run with a fixed rate, no schedule and no checkpoints; the first step of each run is
 * not timed apart (the sampler build is, and is printed). Not a test. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsmf_fdm.h"
#include "jsmf_store.h"
#include "fdm/fdm_internal.h" /* the sampler and the gradient kernels (internal) */

static uint64_t rng_state = 88172645463325252ull;
static double urand(void)
{
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return (rng_state >> 11) * (1.0 / 9007199254740992.0);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Documents of `len` tokens, each from 1-3 of `kt` topics; a topic is a Zipf-like distribution
 * over its own block of words plus a little global mass. */
static void synth(uint32_t n, uint32_t kt, uint32_t docs, uint32_t len, jsmf_csr *out)
{
    uint64_t *keys = malloc(sizeof(uint64_t) * docs * len * (len - 1));
    uint32_t *tok = malloc(sizeof(uint32_t) * len);
    uint64_t nk = 0;
    uint32_t block = n / kt;
    for (uint32_t d = 0; d < docs; d++) {
        uint32_t topics[3], nt = 1 + (uint32_t)(urand() * 3);
        for (uint32_t i = 0; i < nt; i++)
            topics[i] = (uint32_t)(urand() * kt);
        for (uint32_t i = 0; i < len; i++) {
            uint32_t t = topics[(uint32_t)(urand() * nt)];
            uint32_t r = (uint32_t)(block * pow(urand(), 3.0)); /* favour a block's first words */
            tok[i] = urand() < 0.05 ? (uint32_t)(urand() * n) : t * block + r;
        }
        for (uint32_t i = 0; i < len; i++)
            for (uint32_t j = 0; j < len; j++)
                if (i != j)
                    keys[nk++] = (uint64_t)tok[i] << 32 | tok[j];
    }
    qsort(keys, nk, sizeof *keys, cmp_u64);
    uint64_t *rowptr = calloc(n + 1, sizeof *rowptr);
    uint32_t *cols = malloc(sizeof(uint32_t) * nk);
    double *vals = malloc(sizeof(double) * nk);
    uint64_t z = 0;
    double w = 1.0 / ((double)docs * len * (len - 1));
    for (uint64_t i = 0; i < nk; i++) {
        uint32_t u = (uint32_t)(keys[i] >> 32), v = (uint32_t)keys[i];
        if (i && keys[i] == keys[i - 1]) {
            vals[z - 1] += w;
            continue;
        }
        cols[z] = v, vals[z] = w, z++;
        rowptr[u + 1] = z;
    }
    for (uint32_t u = 0; u < n; u++) /* rows without entries end where the previous one did */
        if (rowptr[u + 1] < rowptr[u])
            rowptr[u + 1] = rowptr[u];
    free(keys), free(tok);
    out->n = n, out->rowptr = rowptr, out->cols = cols, out->vals = vals;
}

typedef struct bench_opts {
    const char *store;
    uint32_t n;
    char ts[256], batches[256], devices[64];
    uint64_t steps;
} bench_opts;

static int parse(int argc, char **argv, bench_opts *o)
{
    memset(o, 0, sizeof *o);
    o->n = 10000, o->steps = 0;
    snprintf(o->ts, sizeof o->ts, "100,500");
    snprintf(o->batches, sizeof o->batches, "4096");
    snprintf(o->devices, sizeof o->devices, "cpu,cuda");
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (!strcmp(a, "--store"))
            o->store = v;
        else if (!strcmp(a, "--n"))
            o->n = (uint32_t)atoi(v);
        else if (!strcmp(a, "--ts"))
            snprintf(o->ts, sizeof o->ts, "%s", v);
        else if (!strcmp(a, "--batches"))
            snprintf(o->batches, sizeof o->batches, "%s", v);
        else if (!strcmp(a, "--devices"))
            snprintf(o->devices, sizeof o->devices, "%s", v);
        else if (!strcmp(a, "--steps"))
            o->steps = (uint64_t)atoll(v);
        else
            return fprintf(stderr, "fdm_bench: unknown option %s\n", a), 2;
    }
    if (argc % 2 == 0)
        return fprintf(stderr, "fdm_bench: %s needs a value\n", argv[argc - 1]), 2;
    return 0;
}

/* Steps for T x batch: about 2e10 flops of pair products on the CPU (at least 20), so a
 * configuration takes seconds, not minutes. */
static uint64_t steps_for(uint32_t t, uint32_t batch, int device, uint64_t fixed)
{
    if (fixed)
        return fixed;
    double per = 6.0 * t * t * batch;
    uint64_t s = (uint64_t)(2e10 / per) * (device == JSMF_FDM_DEVICE_CUDA ? 20 : 1);
    return s < 20 ? 20 : s > 5000 ? 5000 : s;
}

static void run(const jsmf_source *src, uint32_t t, uint32_t batch, int device, uint64_t steps)
{
    jsmf_fdm_opts p;
    jsmf_fdm_opts_init(&p);
    p.k = t, p.device = device, p.steps = steps, p.batch = batch, p.lr = 0.01;
    p.eval_every = steps, p.heldout = 1000, p.patience = 0, p.seed = 1, p.starts = 1;
    jsmf_fdm_result r;
    const char *dev = device == JSMF_FDM_DEVICE_CPU ? "cpu" : "cuda";
    if (jsmf_fdm_train(src, &p, &r)) {
        printf("| %u | %u | %s | failed: %s | | | |\n", t, batch, dev, jsmf_errmsg());
        return;
    }
    double pps = r.pairs_per_second, ms = 1e3 * batch / pps;
    printf("| %u | %u | %s | %.0f | %.3f | %.1f | %llu |\n", t, batch, r.device, pps, ms,
           6.0 * t * t * pps / 1e9, (unsigned long long)r.steps);
    fflush(stdout);
    jsmf_fdm_result_free(&r);
}

int main(int argc, char **argv)
{
    bench_opts o;
    if (parse(argc, argv, &o))
        return 2;
    jsmf_csr csr = {0};
    jsmf_source src;
    jsmf_store *store = NULL;
    if (o.store) {
        if (jsmf_store_open(o.store, JSMF_STORE_RDONLY, &store) || jsmf_store_source(store, &src)) {
            fprintf(stderr, "fdm_bench: %s\n", jsmf_errmsg());
            return 1;
        }
        printf("store %s: N=%u, %llu non-zeros\n", o.store, src.n, (unsigned long long)src.nnz);
    } else {
        synth(o.n, 100, 20000, 30, &csr);
        jsmf_csr_source(&csr, &src);
        printf("synthetic C: N=%u, %llu non-zeros\n", o.n, (unsigned long long)src.nnz);
    }
    char gpu[128];
    int have_gpu = fdm_cuda_probe(gpu, sizeof gpu) == 0;
    printf("GPU: %s\n\n", have_gpu ? gpu : jsmf_errmsg());
    printf("| T | batch | device | pairs/s | ms/step | GFLOP/s (pair products) | steps |\n");
    printf("| ---: | ---: | --- | ---: | ---: | ---: | ---: |\n");
    for (char *ts = o.ts; ts && *ts;) {
        char *tcomma = strchr(ts, ',');
        if (tcomma)
            *tcomma = 0;
        uint32_t t = (uint32_t)atoi(ts);
        char batches[256];
        snprintf(batches, sizeof batches, "%s", o.batches);
        for (char *b = batches; b && *b;) {
            char *comma = strchr(b, ',');
            if (comma)
                *comma = 0;
            uint32_t batch = (uint32_t)atoi(b);
            if (strstr(o.devices, "cpu"))
                run(&src, t, batch, JSMF_FDM_DEVICE_CPU,
                    steps_for(t, batch, JSMF_FDM_DEVICE_CPU, o.steps));
            if (strstr(o.devices, "cuda") && have_gpu)
                run(&src, t, batch, JSMF_FDM_DEVICE_CUDA,
                    steps_for(t, batch, JSMF_FDM_DEVICE_CUDA, o.steps));
            b = comma ? comma + 1 : NULL;
        }
        ts = tcomma ? tcomma + 1 : NULL;
    }
    if (store)
        jsmf_store_close(store);
    free((void *)csr.rowptr), free((void *)csr.cols), free((void *)csr.vals);
    return 0;
}
