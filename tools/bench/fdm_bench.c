/* fdm_bench.c — FDM throughput and time to a held-out loss, CPU vs CUDA in one run (run through
 * tools/bench/fdm). The input is a synthetic C over N words accumulated from LDA-like documents
 * with the unbiased per-document estimator, held in memory as CSR.
 *
 * For each T: the CPU run defines the target held-out loss (halfway between its first and last
 * evaluation); each device reports pairs/s and the seconds until its held-out loss reached the
 * target (step of the first evaluation at or below it x seconds per step). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsmf_fdm.h"

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

typedef struct run_out {
    int ok;
    double pps, sec_per_step, first, last, secs;
    uint64_t steps;
    jsmf_fdm_result r;
    char device[96];
} run_out;

static void run(const jsmf_source *src, uint32_t k, int device, uint64_t steps, run_out *o)
{
    jsmf_fdm_params p;
    jsmf_fdm_params_default(&p);
    p.k = k, p.device = device, p.steps = steps, p.batch = 4096, p.lr = 0.01;
    p.eval_every = steps / 10 ? steps / 10 : 1, p.heldout = 10000, p.patience = 0, p.seed = 1;
    memset(o, 0, sizeof *o);
    if (jsmf_fdm_train(src, &p, &o->r)) {
        fprintf(stderr, "  %s: %s\n", device == JSMF_FDM_DEVICE_CPU ? "cpu" : "cuda", jsmf_errmsg());
        return;
    }
    o->ok = 1;
    o->pps = o->r.pairs_per_second;
    o->sec_per_step = o->r.seconds_train / o->r.steps;
    o->first = o->r.curve_heldout[0];
    o->last = o->r.curve_heldout[o->r.n_curve - 1];
    o->steps = o->r.steps;
    snprintf(o->device, sizeof o->device, "%s", o->r.device);
}

/* Seconds until the held-out loss first reached `target` (NAN if never). */
static double time_to(const run_out *o, double target)
{
    for (uint64_t i = 0; i < o->r.n_curve; i++)
        if (o->r.curve_heldout[i] <= target)
            return o->r.curve_step[i] * o->sec_per_step;
    return NAN;
}

int main(int argc, char **argv)
{
    uint32_t n = argc > 1 ? (uint32_t)atoi(argv[1]) : 10000;
    uint64_t steps_small = argc > 2 ? (uint64_t)atoll(argv[2]) : 200;
    uint64_t steps_big = argc > 3 ? (uint64_t)atoll(argv[3]) : 50;
    jsmf_csr csr;
    synth(n, 100, 20000, 30, &csr);
    jsmf_source src;
    jsmf_csr_source(&csr, &src);
    char gpu[128];
    int have_gpu = jsmf_fdm_cuda_probe(gpu, sizeof gpu) == 0;
    printf("synthetic C: N=%u, %llu non-zeros; batch 4096, lr 0.01; GPU: %s\n", n,
           (unsigned long long)src.nnz, have_gpu ? gpu : "no GPU");
    if (!have_gpu)
        printf("  (%s)\n", jsmf_errmsg());
    printf("%-5s %-6s %-22s %12s %10s %10s %10s %12s\n", "T", "steps", "device", "pairs/s",
           "s/step", "held0", "held_end", "s_to_target");
    uint32_t ts[2] = {100, 500};
    for (int i = 0; i < 2; i++) {
        uint64_t steps = ts[i] >= 500 ? steps_big : steps_small;
        run_out c, g;
        run(&src, ts[i], JSMF_FDM_DEVICE_CPU, steps, &c);
        if (!c.ok)
            continue;
        double target = c.first - 0.5 * (c.first - c.last);
        if (i == 0)
            printf("sampler: two-stage alias, %.1f MiB, built in %.3f s\n",
                   c.r.sampler.bytes / 1048576.0, c.r.sampler.build_seconds);
        printf("%-5u %-6llu %-22s %12.0f %10.4f %10.4f %10.4f %12.2f\n", ts[i],
               (unsigned long long)steps, c.device, c.pps, c.sec_per_step, c.first, c.last,
               time_to(&c, target));
        if (have_gpu) {
            run(&src, ts[i], JSMF_FDM_DEVICE_CUDA, steps, &g);
            if (g.ok) {
                printf("%-5u %-6llu %-22.22s %12.0f %10.4f %10.4f %10.4f %12.2f\n", ts[i],
                       (unsigned long long)steps, g.device, g.pps, g.sec_per_step, g.first, g.last,
                       time_to(&g, target));
                printf("      GPU/CPU: pairs/s x%.1f, time to held-out %.4f x%.1f faster\n",
                       g.pps / c.pps, target, time_to(&c, target) / time_to(&g, target));
                jsmf_fdm_result_free(&g.r);
            }
        } else {
            printf("      GPU/CPU: no GPU\n");
        }
        jsmf_fdm_result_free(&c.r);
    }
    free((void *)csr.rowptr), free((void *)csr.cols), free((void *)csr.vals);
    return 0;
}
