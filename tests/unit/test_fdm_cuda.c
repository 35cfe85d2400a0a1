/* test_fdm_cuda.c — the CUDA back end against the CPU back end on the same batch (loss and both
 * logit gradients, float vs double), a short CUDA training run whose loss decreases, a run
 * on TF32 tensor cores whose held-out loss stays within 0.01 nats of the FP32 run's, and pairs
 * drawn on the device through documents (with and without late words) against their exact C
 * (chi-square), then a CUDA run trained from those documents.
 * Skips (exit 77) when CUDA is not compiled in or no GPU answers. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "jsmf_fdm.h"
#include "fdm/fdm_internal.h"

static double rnd(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return ((*s >> 8) & 0xFFFF) / 65536.0;
}

static void compare(uint32_t n, uint32_t k, uint32_t cnt, unsigned seed)
{
    double *w = malloc(sizeof(double) * n * k), *a = malloc(sizeof(double) * k * k);
    double *g1 = malloc(sizeof(double) * n * k), *g2 = malloc(sizeof(double) * n * k);
    double *h1 = malloc(sizeof(double) * k * k), *h2 = malloc(sizeof(double) * k * k);
    uint32_t *u = malloc(4 * cnt), *v = malloc(4 * cnt);
    for (uint32_t e = 0; e < n * k; e++)
        w[e] = 2 * rnd(&seed) - 1;
    for (uint32_t e = 0; e < k * k; e++)
        a[e] = 2 * rnd(&seed) - 1;
    for (uint32_t i = 0; i < cnt; i++)
        u[i] = (uint32_t)(rnd(&seed) * n) % n, v[i] = (uint32_t)(rnd(&seed) * n) % n;
    double l1, l2;
    CHECK_OK(fdm_loss_grad_cpu(n, k, w, a, u, v, cnt, &l1, g1, h1));
    CHECK_OK(fdm_loss_grad_cuda(n, k, w, a, u, v, cnt, &l2, g2, h2));
    CHECK(fabs(l1 - l2) <= 1e-5 * fabs(l1));
    double gmax = 0, hmax = 0, gerr = 0, herr = 0;
    for (uint32_t e = 0; e < n * k; e++)
        gmax = fmax(gmax, fabs(g1[e])), gerr = fmax(gerr, fabs(g1[e] - g2[e]));
    for (uint32_t e = 0; e < k * k; e++)
        hmax = fmax(hmax, fabs(h1[e])), herr = fmax(herr, fabs(h1[e] - h2[e]));
    fprintf(stderr, "N=%u K=%u B=%u: loss %.7f vs %.7f; max |dmu| error %.2e of %.2e, "
            "|dalpha| %.2e of %.2e\n", n, k, cnt, l1, l2, gerr, gmax, herr, hmax);
    CHECK(gerr <= 1e-4 * gmax);
    CHECK(herr <= 1e-4 * hmax);
    free(w), free(a), free(g1), free(g2), free(h1), free(h2), free(u), free(v);
}

/* Documents: six over seven words, words 5 and 6 admitted after 2 and 3 documents. */
enum { DN = 7, DM = 6 };
static const uint64_t doffs[DM + 1] = {0, 3, 5, 8, 11, 13, 15};
static const uint32_t dids[] = {0, 2, 4, 1, 3, 0, 1, 5, 2, 5, 6, 3, 6, 4, 6};
static const uint32_t dcounts[] = {2, 1, 1, 3, 1, 1, 1, 2, 1, 1, 4, 2, 1, 2, 1};
static const uint64_t dadmit[DN] = {0, 0, 0, 0, 0, 2, 3};

/* The device's pairs from the documents sampler against C built pair by pair. */
static void device_documents(int late)
{
    jsmf_doc_csr d = {DN, DM, doffs, dids, dcounts, late ? dadmit : NULL};
    jsmf_doc_source ds;
    CHECK_OK(jsmf_doc_csr_source(&d, 0, &ds));
    double c[DN * DN] = {0}, total = 0;
    for (int m = 0; m < DM; m++) {
        double len = 0;
        for (uint64_t e = doffs[m]; e < doffs[m + 1]; e++)
            len += dcounts[e];
        for (uint64_t e = doffs[m]; e < doffs[m + 1]; e++)
            for (uint64_t f = doffs[m]; f < doffs[m + 1]; f++) {
                uint32_t i = dids[e], j = dids[f];
                uint64_t a = late ? (dadmit[i] > dadmit[j] ? dadmit[i] : dadmit[j]) : 0;
                double x = ((double)dcounts[e] * dcounts[f] - (e == f ? dcounts[e] : 0)) /
                           (len * (len - 1) * (double)(DM - a));
                c[i * DN + j] += x, total += x;
            }
    }
    jsmf_source src;
    memset(&src, 0, sizeof src);
    src.n = DN, src.docs = &ds;
    jsmf_fdm_sampler *smp = NULL;
    CHECK_OK(fdm_sampler_build(&src, 0, &smp));
    uint32_t draws = 2000000, *u = malloc(4 * draws), *v = malloc(4 * draws);
    double cnt[DN * DN] = {0}, x2 = 0;
    int dof = -1;
    uint64_t outside = 0;
    CHECK_OK(fdm_sample_cuda(smp, 3, 1, draws, u, v));
    for (uint32_t i = 0; i < draws; i++)
        cnt[u[i] < DN && v[i] < DN ? u[i] * DN + v[i] : 0]++;
    for (int e = 0; e < DN * DN; e++) {
        double x = c[e] / total * draws;
        if (x > 0)
            x2 += (cnt[e] - x) * (cnt[e] - x) / x, dof++;
        else
            outside += (uint64_t)cnt[e];
    }
    fprintf(stderr, "device draws from documents (%s late words): chi2 = %.1f with %d dof, %llu "
            "outside the support\n", late ? "with" : "no", x2, dof, (unsigned long long)outside);
    CHECK(x2 < dof + 6 * sqrt(2.0 * dof) && outside == 0);
    free(u), free(v);

    /* a CUDA run from the documents: the held-out loss decreases */
    jsmf_fdm_opts p;
    jsmf_fdm_result r;
    jsmf_fdm_opts_init(&p);
    p.k = 3, p.device = JSMF_FDM_DEVICE_CUDA, p.steps = 300, p.batch = 1024, p.eval_every = 50;
    p.heldout = 5000, p.patience = 0, p.init_kind = JSMF_FDM_INIT_GAUSSIAN, p.starts = 1;
    CHECK_OK(jsmf_fdm_train(&src, &p, &r));
    if (r.n_curve > 1) {
        fprintf(stderr, "CUDA run from documents: held-out %.4f -> %.4f, sampling on the %s\n",
                r.curve_heldout[0], r.curve_heldout[r.n_curve - 1],
                r.host_sampling ? "host" : "device");
        CHECK(r.curve_heldout[r.n_curve - 1] < r.curve_heldout[0]);
        CHECK(!r.host_sampling && r.sampler.documents == DM);
    }
    jsmf_fdm_result_free(&r);
    fdm_sampler_free(smp);
    jsmf_doc_csr_source_free(&ds);
}

int main(void)
{
    char name[128];
    if (!jsmf_have_cuda()) {
        printf("CUDA back end not compiled in\n");
        return 77;
    }
    if (fdm_cuda_probe(name, sizeof name)) {
        printf("no GPU: %s\n", jsmf_errmsg());
        return 77;
    }
    fprintf(stderr, "GPU: %s\n", name);
    compare(50, 4, 64, 3u);
    compare(3000, 100, 4096, 5u);
    compare(2000, 257, 1000, 9u); /* K not a multiple of the 32-wide tiles */

    /* a short CUDA run on a random sparse C: held-out loss decreases */
    uint32_t n = 300;
    uint64_t *rowptr = malloc(8 * (n + 1));
    uint32_t *cols = malloc(4 * n * 20);
    double *vals = malloc(8 * n * 20);
    unsigned s = 1u;
    uint64_t z = 0;
    for (uint32_t i = 0; i < n; i++) {
        rowptr[i] = z;
        for (uint32_t j = i % 15; j < n; j += 15)
            cols[z] = j, vals[z] = 1.0 + rnd(&s) * (i % 7 == j % 7 ? 20 : 1), z++;
    }
    rowptr[n] = z;
    double tot = 0;
    for (uint64_t e = 0; e < z; e++)
        tot += vals[e];
    for (uint64_t e = 0; e < z; e++)
        vals[e] /= tot;
    jsmf_csr m = {n, rowptr, cols, vals};
    jsmf_source src;
    jsmf_csr_source(&m, &src);
    jsmf_fdm_opts p;
    jsmf_fdm_result r;
    jsmf_fdm_opts_init(&p);
    p.k = 7, p.device = JSMF_FDM_DEVICE_CUDA, p.steps = 300, p.lr = 0.02, p.batch = 1024;
    p.eval_every = 50, p.heldout = 5000, p.patience = 0, p.init_kind = JSMF_FDM_INIT_GAUSSIAN;
    CHECK_OK(jsmf_fdm_train(&src, &p, &r));
    if (r.n_curve > 1) {
        fprintf(stderr, "CUDA run: held-out %.4f -> %.4f, %.0f pairs/s on %s\n",
                r.curve_heldout[0], r.curve_heldout[r.n_curve - 1], r.pairs_per_second, r.device);
        CHECK(r.curve_heldout[r.n_curve - 1] < r.curve_heldout[0] - 0.01);
        CHECK(!strncmp(r.device, "cuda", 4));
    }
    jsmf_fdm_result_free(&r);

    /* TF32 tensor cores for the pair products: the held-out loss follows the FP32 run's */
    double held[2] = {NAN, NAN};
    for (int prec = JSMF_FDM_FP32; prec <= JSMF_FDM_TF32; prec++) {
        p.k = 64, p.steps = 200, p.precision = prec;
        CHECK_OK(jsmf_fdm_train(&src, &p, &r));
        if (r.n_curve > 1)
            held[prec] = r.curve_heldout[r.n_curve - 1];
        jsmf_fdm_result_free(&r);
    }
    fprintf(stderr, "K=64 after 200 steps: held-out FP32 %.5f, TF32 %.5f\n", held[0], held[1]);
    CHECK(fabs(held[0] - held[1]) < 1e-2);
    free(rowptr), free(cols), free(vals);
    device_documents(0);
    device_documents(1);
    CHECK_DONE();
}
