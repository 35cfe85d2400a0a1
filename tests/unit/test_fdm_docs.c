/* test_fdm_docs.c — FDM's pairs drawn through the documents (sampler_docs.c): the empirical pair
 * distribution against the exact C of a small document set built pair by pair (chi-square, with
 * and without late words), rows of C, determinism across chunks and thread counts, the
 * fingerprint, the memory budget, bad documents; no mass dropped where the rows sampler thins;
 * training from documents equals training from C's rows in quality on a planted corpus; and a
 * run from documents resumes from its checkpoint, which a run from rows refuses. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "jsmf_fdm.h"
#include "fdm/fdm_internal.h"

enum { N = 9, M = 8 };

/* Eight documents over nine words; words 5-6 admitted after 2 documents, 7 after 4, 8 after 6.
 * Document 5 is one word three times (only its self pairs); 6 spans four admission points. */
static const uint64_t offs[M + 1] = {0, 3, 5, 8, 12, 15, 16, 21, 23};
static const uint32_t ids[] = {0, 1, 3, 1, 2, 0, 4, 5, 2, 3, 5, 6, 0, 6, 7, 7,
                               1, 3, 5, 7, 8, 5, 8};
static const uint32_t counts[] = {2, 1, 1, 3, 1, 1, 1, 2, 1, 1, 1, 3, 1, 1, 2, 3,
                                  1, 2, 1, 1, 2, 1, 1};
static const uint64_t admit[N] = {0, 0, 0, 0, 0, 2, 2, 4, 6};

/* The normalised C of documents `d`, pair by pair as include/jsmf.h defines it. */
static void dense_c(const jsmf_doc_csr *d, double *c)
{
    uint32_t n = d->n;
    memset(c, 0, sizeof(double) * n * n);
    double total = 0;
    for (uint64_t m = 0; m < d->n_docs; m++) {
        double len = 0;
        for (uint64_t e = d->offs[m]; e < d->offs[m + 1]; e++)
            len += d->counts[e];
        for (uint64_t e = d->offs[m]; e < d->offs[m + 1]; e++)
            for (uint64_t f = d->offs[m]; f < d->offs[m + 1]; f++) {
                uint32_t i = d->ids[e], j = d->ids[f];
                double x = (double)d->counts[e] * d->counts[f] - (e == f ? d->counts[e] : 0);
                uint64_t a = 0;
                if (d->admit)
                    a = d->admit[i] > d->admit[j] ? d->admit[i] : d->admit[j];
                x /= len * (len - 1) * (double)(d->n_docs - a);
                c[(size_t)i * n + j] += x;
                total += x;
            }
    }
    for (size_t e = 0; e < (size_t)n * n; e++)
        c[e] /= total;
}

/* Pearson's statistic of `draws` pairs against c over its support (degrees of freedom in *dof);
 * pairs outside the support in *outside; total variation distance in *tv. */
static double chi2(const jsmf_fdm_sampler *smp, const double *c, uint32_t n, uint32_t draws,
                   uint64_t seed, int *dof, uint64_t *outside, double *tv)
{
    uint32_t *u = malloc(draws * sizeof *u), *v = malloc(draws * sizeof *v);
    double *cnt = calloc((size_t)n * n, sizeof *cnt);
    fdm_sampler_draw_default(smp, seed, 1, 0, draws, u, v);
    for (uint32_t i = 0; i < draws; i++)
        cnt[(size_t)u[i] * n + v[i]]++;
    double x2 = 0;
    *dof = -1, *outside = 0, *tv = 0;
    for (size_t e = 0; e < (size_t)n * n; e++) {
        *tv += fabs(cnt[e] / draws - c[e]) / 2;
        if (c[e] > 0) {
            double x = c[e] * draws;
            x2 += (cnt[e] - x) * (cnt[e] - x) / x;
            (*dof)++;
        } else {
            *outside += (uint64_t)cnt[e];
        }
    }
    free(u), free(v), free(cnt);
    return x2;
}

/* A chi-square of dof degrees of freedom: mean dof, sd sqrt(2 dof); 6 sd is a safe bound. */
static int chi2_ok(double x2, int dof)
{
    return x2 < dof + 6 * sqrt(2.0 * dof);
}

/* A documents source with no checks of its own (bad documents reach the sampler). */
static int raw_scan(void *ctx, jsmf_doc_fn fn, void *arg)
{
    const jsmf_doc_csr *d = ctx;
    jsmf_doc_block b = {0, (uint32_t)d->n_docs, d->offs, d->ids, d->counts};
    return fn(arg, &b);
}

static jsmf_source docs_source(jsmf_doc_source *ds)
{
    jsmf_source s;
    memset(&s, 0, sizeof s);
    s.n = ds->n;
    s.docs = ds;
    return s;
}

static void exact_distribution(int late)
{
    jsmf_doc_csr d = {N, M, offs, ids, counts, late ? admit : NULL};
    jsmf_doc_source ds;
    CHECK_OK(jsmf_doc_csr_source(&d, 3, &ds));
    jsmf_source src = docs_source(&ds);
    double c[N * N], c_flat[N * N];
    dense_c(&d, c);
    jsmf_fdm_sampler *smp = NULL;
    CHECK_OK(fdm_sampler_build(&src, 0, &smp));
    if (!smp)
        return;
    jsmf_fdm_sampler_info info;
    fdm_sampler_info_get(smp, &info);
    uint64_t nnz = offs[M];
    CHECK(info.documents == M && info.nnz == nnz && info.kept == nnz && !info.thinned);
    CHECK(info.dropped_mass == 0);
    CHECK_NEAR(info.total_mass, 1.0, 1e-12);
    CHECK(info.bytes == fdm_doc_sampler_bytes(M, nnz, N, late));
    CHECK(info.bytes == 8 * (M + 1) + 8 * nnz + (late ? 8 * M + 8 * N : 0));

    /* each document's mixture sums to its mass */
    jsmf_fdm_sampler_tables t;
    fdm_sampler_tables_get(smp, &t);
    CHECK(t.documents && t.doc.docs == M);
    for (uint32_t m = 0; late && m < M; m++) {
        uint32_t early;
        double mix = fdm_doc_mix(&t.doc, offs[m], offs[m + 1] - offs[m], HUGE_VAL, &early);
        double mass = jsmf_doc_mass(ids + offs[m], counts + offs[m],
                                    (uint32_t)(offs[m + 1] - offs[m]), admit, M);
        CHECK_NEAR(mix, mass, 1e-14);
    }

    int dof;
    uint64_t outside;
    double tv;
    double x2 = chi2(smp, c, N, 2000000, 42, &dof, &outside, &tv);
    fprintf(stderr, "%s: chi2 = %.1f with %d dof, TV %.5f, %llu draws outside the support\n",
            late ? "late words" : "no late words", x2, dof, tv, (unsigned long long)outside);
    CHECK(chi2_ok(x2, dof));
    CHECK(outside == 0);
    CHECK(tv < 0.005);
    if (late) { /* the bound can fail: the same draws against C without the late factor */
        jsmf_doc_csr flat = d;
        flat.admit = NULL;
        dense_c(&flat, c_flat);
        double x2f = chi2(smp, c_flat, N, 2000000, 42, &dof, &outside, &tv);
        fprintf(stderr, "  against C without the late factor: chi2 = %.1f, TV %.4f\n", x2f, tv);
        CHECK(!chi2_ok(x2f, dof));
    }

    /* p(v | u) of every row, exactly */
    double row[N];
    for (uint32_t i = 0; i < N; i++) {
        double sum = 0, err = 0;
        for (uint32_t j = 0; j < N; j++)
            sum += c[i * N + j];
        fdm_sampler_row_dist(smp, i, row);
        for (uint32_t j = 0; j < N; j++)
            err = fmax(err, fabs(row[j] - c[i * N + j] / sum));
        CHECK(err < 1e-12);
    }

    /* several rows at once (one pass over the documents), a row repeated */
    uint32_t pick[4] = {7, 0, 7, 5};
    double cols4[N * 4], err4 = 0;
    CHECK_OK(fdm_sampler_rows_dist(smp, pick, 4, cols4));
    for (uint32_t q = 0; q < 4; q++) {
        double sum = 0;
        for (uint32_t j = 0; j < N; j++)
            sum += c[pick[q] * N + j];
        for (uint32_t j = 0; j < N; j++)
            err4 = fmax(err4, fabs(cols4[j * 4 + q] - c[pick[q] * N + j] / sum));
    }
    CHECK(err4 < 1e-12);

    /* a pure function of (seed, stream, index): in chunks, on 1 or 2 threads */
    enum { D = 10000 };
    static uint32_t u1[D], v1[D], u2[D], v2[D];
    fdm_sampler_draw(smp, 7, 3, 500, D, u1, v1, 1);
    fdm_sampler_draw(smp, 7, 3, 500, D, u2, v2, 2);
    CHECK(!memcmp(u1, u2, sizeof u1) && !memcmp(v1, v2, sizeof v1));
    fdm_sampler_draw_default(smp, 7, 3, 500 + 1234, 100, u2, v2);
    CHECK(!memcmp(u1 + 1234, u2, 100 * 4) && !memcmp(v1 + 1234, v2, 100 * 4));
    fdm_sampler_draw_default(smp, 8, 3, 500, 100, u2, v2);
    CHECK(memcmp(u1, u2, 100 * 4) || memcmp(v1, v2, 100 * 4));

    /* the fingerprint: the documents, not their blocks; one count changed changes it */
    jsmf_doc_source ds2;
    jsmf_fdm_sampler *smp2 = NULL;
    jsmf_fdm_sampler_info info2;
    CHECK_OK(jsmf_doc_csr_source(&d, 0, &ds2));
    src = docs_source(&ds2);
    CHECK_OK(fdm_sampler_build(&src, 0, &smp2));
    fdm_sampler_info_get(smp2, &info2);
    CHECK(info2.fingerprint == info.fingerprint);
    fdm_sampler_free(smp2);
    jsmf_doc_csr_source_free(&ds2);
    uint32_t counts2[sizeof counts / sizeof *counts];
    memcpy(counts2, counts, sizeof counts);
    counts2[3]++;
    jsmf_doc_csr d2 = d;
    d2.counts = counts2;
    CHECK_OK(jsmf_doc_csr_source(&d2, 0, &ds2));
    src = docs_source(&ds2);
    CHECK_OK(fdm_sampler_build(&src, 0, &smp2));
    fdm_sampler_info_get(smp2, &info2);
    CHECK(info2.fingerprint != info.fingerprint);
    fdm_sampler_free(smp2);
    jsmf_doc_csr_source_free(&ds2);

    /* the budget: documents that do not fit are an error saying which --mem would do */
    src = docs_source(&ds);
    uint64_t need = info.bytes + (late ? 24 * M : 0);
    CHECK(fdm_sampler_build(&src, need - 1, &smp2) == JSMF_ENOMEM);
    CHECK(strstr(jsmf_errmsg(), "--mem") != NULL);
    fprintf(stderr, "  budget %llu bytes: %s\n", (unsigned long long)need - 1, jsmf_errmsg());
    CHECK_OK(fdm_sampler_build(&src, need, &smp2));
    fdm_sampler_free(smp2);

    fdm_sampler_free(smp);
    jsmf_doc_csr_source_free(&ds);
}

static void bad_documents(void)
{
    uint32_t bad[sizeof ids / sizeof *ids];
    jsmf_doc_csr d = {N, M, offs, bad, counts, NULL};
    jsmf_doc_source ds = {N, M, offs[M], 0, NULL, 1.0, &d, raw_scan, 0};
    jsmf_source src = docs_source(&ds);
    jsmf_fdm_sampler *smp = NULL;
    memcpy(bad, ids, sizeof ids);
    bad[4] = N;
    CHECK(fdm_sampler_build(&src, 0, &smp) == JSMF_EFORMAT && !smp);
    CHECK(strstr(jsmf_errmsg(), "document 1") && strstr(jsmf_errmsg(), "out of range"));
    memcpy(bad, ids, sizeof ids);
    bad[9] = 1; /* document 3: 2, 1, ... */
    CHECK(fdm_sampler_build(&src, 0, &smp) == JSMF_EFORMAT && !smp);
    CHECK(strstr(jsmf_errmsg(), "document 3") && strstr(jsmf_errmsg(), "ascend"));
    memcpy(bad, ids, sizeof ids);
    ds.nnz = offs[M] - 1; /* fewer entries announced than scanned */
    CHECK(fdm_sampler_build(&src, 0, &smp) == JSMF_EFORMAT && !smp);
    ds.nnz = offs[M], ds.n = N - 1;
    CHECK(fdm_sampler_build(&src, 0, &smp) == JSMF_EINVAL && !smp);
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double urand(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (rng >> 11) * (1.0 / 9007199254740992.0);
}

/* Documents held as CSR arrays (allocated). */
typedef struct docs {
    uint32_t n;
    uint64_t m, nnz;
    uint64_t *offs;
    uint32_t *ids, *counts;
} docs;

/* One document from its tokens: distinct ids ascending with their counts. */
static void add_doc(docs *d, uint32_t *tok, uint32_t len)
{
    for (uint32_t i = 1; i < len; i++) /* insertion sort: documents are short */
        for (uint32_t j = i; j > 0 && tok[j - 1] > tok[j]; j--) {
            uint32_t x = tok[j];
            tok[j] = tok[j - 1], tok[j - 1] = x;
        }
    for (uint32_t i = 0; i < len; i++) {
        if (i && tok[i] == tok[i - 1]) {
            d->counts[d->nnz - 1]++;
            continue;
        }
        d->ids[d->nnz] = tok[i], d->counts[d->nnz] = 1, d->nnz++;
    }
    d->offs[++d->m] = d->nnz;
}

static void docs_alloc(docs *d, uint32_t n, uint64_t m, uint64_t max_nnz)
{
    d->n = n, d->m = 0, d->nnz = 0;
    d->offs = calloc(m + 1, sizeof *d->offs);
    d->ids = malloc(max_nnz * sizeof *d->ids);
    d->counts = malloc(max_nnz * sizeof *d->counts);
}

static void docs_free(docs *d)
{
    free(d->offs), free(d->ids), free(d->counts);
}

/* C's rows (CSR, allocated) from its dense form. */
static void rows_of(const double *c, uint32_t n, jsmf_csr *m)
{
    uint64_t *rowptr = malloc((n + 1) * sizeof *rowptr), z = 0;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++)
            z += c[(size_t)i * n + j] > 0;
    uint32_t *cols = malloc(z * sizeof *cols);
    double *vals = malloc(z * sizeof *vals);
    z = 0;
    for (uint32_t i = 0; i < n; i++) {
        rowptr[i] = z;
        for (uint32_t j = 0; j < n; j++)
            if (c[(size_t)i * n + j] > 0)
                cols[z] = j, vals[z] = c[(size_t)i * n + j], z++;
    }
    rowptr[n] = z;
    m->n = n, m->rowptr = rowptr, m->cols = cols, m->vals = vals;
}

static void csr_free(jsmf_csr *m)
{
    free((void *)m->rowptr), free((void *)m->cols), free((void *)m->vals);
}

/* Where the rows sampler must thin, the documents sampler holds all of C. */
static void no_mass_dropped(void)
{
    enum { NW = 300, MD = 200, LEN = 40 };
    docs d;
    uint32_t tok[LEN];
    docs_alloc(&d, NW, MD, (uint64_t)MD * LEN);
    for (uint32_t m = 0; m < MD; m++) {
        for (uint32_t i = 0; i < LEN; i++)
            tok[i] = (uint32_t)(urand() * NW);
        add_doc(&d, tok, LEN);
    }
    jsmf_doc_csr dc = {NW, MD, d.offs, d.ids, d.counts, NULL};
    jsmf_doc_source ds;
    CHECK_OK(jsmf_doc_csr_source(&dc, 0, &ds));
    double *c = malloc(sizeof(double) * NW * NW);
    dense_c(&dc, c);
    jsmf_csr rows;
    rows_of(c, NW, &rows);
    jsmf_source by_rows, by_docs = docs_source(&ds);
    jsmf_csr_source(&rows, &by_rows);
    uint64_t budget = 4 * fdm_doc_sampler_bytes(MD, d.nnz, NW, 0);
    jsmf_fdm_sampler *sr = NULL, *sd = NULL;
    jsmf_fdm_sampler_info ir, id;
    CHECK_OK(fdm_sampler_build(&by_rows, budget, &sr));
    CHECK_OK(fdm_sampler_build(&by_docs, budget, &sd));
    if (sr && sd) {
        fdm_sampler_info_get(sr, &ir);
        fdm_sampler_info_get(sd, &id);
        fprintf(stderr, "budget %llu bytes: rows (nnz(C) %llu) keep %llu, drop %.4f of C's mass; "
                "documents (nnz(H) %llu) %llu bytes, drop %.4f\n", (unsigned long long)budget,
                (unsigned long long)ir.nnz, (unsigned long long)ir.kept, ir.dropped_mass,
                (unsigned long long)id.nnz, (unsigned long long)id.bytes, id.dropped_mass);
        CHECK(ir.thinned && ir.dropped_mass > 0.1);
        CHECK(!id.thinned && id.dropped_mass == 0 && id.bytes <= budget);
        int dof;
        uint64_t outside;
        double tv;
        double x2 = chi2(sd, c, NW, 4000000, 5, &dof, &outside, &tv);
        fprintf(stderr, "  documents: chi2 = %.0f with %d dof, TV %.4f\n", x2, dof, tv);
        CHECK(chi2_ok(x2, dof) && outside == 0);
    }
    fdm_sampler_free(sr), fdm_sampler_free(sd);
    jsmf_doc_csr_source_free(&ds);
    csr_free(&rows);
    free(c);
    docs_free(&d);
}

/* -sum C_uv log M_uv of a model (B N x K, A K x K): the exact pair loss FDM minimises. */
static double exact_loss(const double *c, uint32_t n, const double *B, const double *A, uint32_t k)
{
    double loss = 0, *BA = calloc((size_t)n * k, sizeof *BA);
    for (uint32_t u = 0; u < n; u++)
        for (uint32_t i = 0; i < k; i++)
            for (uint32_t j = 0; j < k; j++)
                BA[u * k + j] += B[u * k + i] * A[i * k + j];
    for (uint32_t u = 0; u < n; u++)
        for (uint32_t v = 0; v < n; v++) {
            double x = c[(size_t)u * n + v], mm = 0;
            if (x <= 0)
                continue;
            for (uint32_t j = 0; j < k; j++)
                mm += BA[u * k + j] * B[v * k + j];
            loss -= x * log(mm);
        }
    free(BA);
    return loss;
}

/* A planted corpus: K topics, each on its block of words (plus a little of every word), each
 * document of one topic mostly. Training from its documents and from its C's rows reaches the
 * same loss (both near C's own entropy, the floor); a documents run resumes exactly from its
 * checkpoint, and a rows run refuses that checkpoint (another input). */
static void training(void)
{
    enum { NW = 60, K = 3, MD = 3000, LEN = 20 };
    docs d;
    uint32_t tok[LEN];
    docs_alloc(&d, NW, MD, (uint64_t)MD * LEN);
    for (uint32_t m = 0; m < MD; m++) {
        uint32_t main_t = (uint32_t)(urand() * K), other = (uint32_t)(urand() * K);
        for (uint32_t i = 0; i < LEN; i++) {
            uint32_t t = urand() < 0.8 ? main_t : other;
            double r = urand();
            tok[i] = r < 0.1 ? (uint32_t)(urand() * NW)
                             : t * (NW / K) + (uint32_t)((NW / K) * pow(urand(), 2.0));
        }
        add_doc(&d, tok, LEN);
    }
    jsmf_doc_csr dc = {NW, MD, d.offs, d.ids, d.counts, NULL};
    jsmf_doc_source ds;
    CHECK_OK(jsmf_doc_csr_source(&dc, 0, &ds));
    double *c = malloc(sizeof(double) * NW * NW), entropy = 0;
    dense_c(&dc, c);
    for (uint32_t e = 0; e < NW * NW; e++)
        if (c[e] > 0)
            entropy -= c[e] * log(c[e]);
    jsmf_csr rows;
    rows_of(c, NW, &rows);
    jsmf_source by_rows, by_docs = docs_source(&ds);
    jsmf_csr_source(&rows, &by_rows);

    jsmf_fdm_opts p;
    jsmf_fdm_opts_init(&p);
    p.k = K, p.steps = 1500, p.batch = 512, p.lr = 0.03, p.patience = 0, p.eval_every = 100;
    p.heldout = 5000, p.starts = 1, p.threads = 1, p.checkpoint_seconds = 0;
    p.device = JSMF_FDM_DEVICE_CPU; /* exact resume is the CPU's promise (formats/fdm.md) */
    double loss[3] = {NAN, NAN, NAN};
    jsmf_fdm_result r[3];
    memset(r, 0, sizeof r);
    const jsmf_source *srcs[3] = {&by_docs, &by_rows, &by_rows};
    for (int x = 0; x < 3; x++) {
        p.seed = x == 2 ? 2 : 1;
        CHECK_OK(jsmf_fdm_train(srcs[x], &p, &r[x]));
        if (r[x].B)
            loss[x] = exact_loss(c, NW, r[x].B, r[x].A, K);
    }
    fprintf(stderr, "planted N=%u K=%u: exact pair loss from documents %.5f, from rows %.5f "
            "(seed 2: %.5f); C's entropy %.5f; uniform %.5f\n", NW, K, loss[0], loss[1],
            loss[2], entropy, 2 * log(NW));
    CHECK(r[0].sampler.documents == MD && r[1].sampler.documents == 0);
    CHECK(fabs(loss[0] - loss[1]) < 0.01);
    CHECK(loss[0] < entropy + 0.02 && loss[1] < entropy + 0.02);

    /* stopped after step 700 with a checkpoint, resumed: the uninterrupted run exactly */
    char dir[] = "/tmp/jsmf_fdm_docs_XXXXXX", ckpt[64];
    if (mkdtemp(dir)) {
        snprintf(ckpt, sizeof ckpt, "%s/run.ckpt", dir);
        jsmf_fdm_result q;
        p.seed = 1, p.checkpoint = ckpt, p.checkpoint_every = 500;
        setenv("JSMF_TEST_FDM_STOP_AFTER", "700", 1);
        CHECK(jsmf_fdm_train(&by_docs, &p, &q) == JSMF_EINTR);
        unsetenv("JSMF_TEST_FDM_STOP_AFTER");
        CHECK(jsmf_fdm_train(&by_rows, &p, &q) == JSMF_EMISMATCH);
        CHECK(strstr(jsmf_errmsg(), "another input") != NULL);
        CHECK_OK(jsmf_fdm_train(&by_docs, &p, &q));
        CHECK(q.resumed_from == 700);
        CHECK(q.B && r[0].B && !memcmp(q.B, r[0].B, sizeof(double) * NW * K));
        jsmf_fdm_result_free(&q);
        unlink(ckpt);
        rmdir(dir);
    }
    for (int x = 0; x < 3; x++)
        jsmf_fdm_result_free(&r[x]);
    jsmf_doc_csr_source_free(&ds);
    csr_free(&rows);
    free(c);
    docs_free(&d);
}

int main(void)
{
    exact_distribution(0);
    exact_distribution(1);
    bad_documents();
    no_mass_dropped();
    training();
    CHECK_DONE();
}
