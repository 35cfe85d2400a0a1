/* fit_metrics.c — the quality metrics of seeds 000 (Sec. 5.1) and 001 (Sec. 4) for any model
 * against any co-occurrence source: two scans of C, everything else from B and A. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include <cblas.h>

#include "core/threads.h"
#include "fit_internal.h"


/* p(z) = A 1 (pz, zeroed by the caller), p(z|x=i) by Bayes' rule from B (Bb, n x k). */
static void bayes(const jsmf_model *mdl, double *pz, double *Bb)
{
    uint32_t n = mdl->n, k = mdl->k;
    for (uint32_t a = 0; a < k; a++)
        for (uint32_t b = 0; b < k; b++)
            pz[a] += mdl->A[a * k + b];
    for (uint32_t i = 0; i < n; i++) {
        double s = 0;
        for (uint32_t a = 0; a < k; a++)
            s += (Bb[(size_t)i * k + a] = mdl->B[(size_t)i * k + a] * pz[a]);
        for (uint32_t a = 0; a < k; a++)
            Bb[(size_t)i * k + a] = s > 0 ? Bb[(size_t)i * k + a] / s : 0;
    }
}

/* The metrics that need only the model and the unigram p (row sums of C, any scale):
 * dominancy, specificity, sparsity, entropy, dissimilarity. */
int fit_metrics_local(const jsmf_model *mdl, const double *p, jsmf_metrics *out)
{
    uint32_t n = mdl->n, k = mdl->k;
    double *pz = calloc(k, sizeof(double)), *Bb = calloc((size_t)n * k, sizeof(double));
    int rc = JSMF_OK;
    if (!pz || !Bb) {
        free(pz), free(Bb);
        return jsmf_error(JSMF_ENOMEM, "metrics: out of memory");
    }
    bayes(mdl, pz, Bb);
    /* Dominancy: (1/K) sum_k p(z2=k | z1=k) */
    double dom = 0;
    for (uint32_t a = 0; a < k; a++)
        dom += pz[a] > 0 ? mdl->A[a * k + a] / pz[a] : 0;
    out->dominancy = dom / k;
    /* Specificity: (1/K) sum_k KL(B_k || p(x)), p(x) the unigram of C */
    double ptot = fit_sum_ordered(p, n), spec = 0, spars = 0;
    for (uint32_t a = 0; a < k; a++) {
        double kl = 0, l1 = 0, l2 = 0;
        for (uint32_t i = 0; i < n; i++) {
            double b = mdl->B[(size_t)i * k + a], px = ptot > 0 ? p[i] / ptot : 0;
            if (b > 0 && px > 0)
                kl += b * log(b / px);
            l1 += fabs(b), l2 += b * b;
        }
        spec += kl;
        /* Sparsity (Hoyer): (sqrt N - |b|_1/|b|_2) / (sqrt N - 1) */
        spars += l2 > 0 ? (sqrt((double)n) - l1 / sqrt(l2)) / (sqrt((double)n) - 1) : 0;
    }
    out->specificity = spec / k;
    out->sparsity = spars / k;
    /* Entropy: (1/N) sum_i H(z|x=i) / log2 K over words with mass */
    double ent = 0;
    uint32_t words = 0;
    for (uint32_t i = 0; i < n; i++) {
        double h = 0, s = 0;
        for (uint32_t a = 0; a < k; a++) {
            double y = Bb[(size_t)i * k + a];
            s += y;
            if (y > 0)
                h -= y * log2(y);
        }
        if (s > 0)
            ent += h / log2((double)k), words++;
    }
    out->entropy = words ? ent / words : NAN;
    /* Dissimilarity: words of a topic's top 20 in no other topic's top 20, averaged */
    uint32_t top = n < 20 ? n : 20;
    fit_ranked *rk = malloc(sizeof(fit_ranked) * n);
    uint32_t *tops = malloc(sizeof(uint32_t) * k * top), *cnt = calloc(n, sizeof(uint32_t));
    if (!rk || !tops || !cnt) {
        free(rk), free(tops), free(cnt);
        rc = jsmf_error(JSMF_ENOMEM, "metrics: out of memory");
        goto done;
    }
    for (uint32_t a = 0; a < k; a++) {
        for (uint32_t i = 0; i < n; i++)
            rk[i] = (fit_ranked){mdl->B[(size_t)i * k + a], i};
        qsort(rk, n, sizeof(fit_ranked), fit_ranked_desc);
        for (uint32_t t = 0; t < top; t++)
            cnt[tops[a * top + t] = rk[t].i]++;
    }
    double dis = 0;
    for (uint32_t a = 0; a < k; a++)
        for (uint32_t t = 0; t < top; t++)
            dis += cnt[tops[a * top + t]] == 1;
    out->dissimilarity = dis / k;
    free(rk), free(tops), free(cnt);
done:
    free(pz), free(Bb);
    return rc;
}

/* The anchors' rows of C scaled to Cbar_S^T (n x k) in *Tout, and H = Cbar_S Cbar_S^T. */
static int anchor_rows(const jsmf_model *mdl, fit_csrc *src, double **Tout, double *H)
{
    uint32_t n = mdl->n, k = mdl->k;
    double *CS = calloc((size_t)k * n, sizeof(double)), *T = malloc(sizeof(double) * n * k);
    int rc = !CS || !T ? jsmf_error(JSMF_ENOMEM, "metrics: out of memory") : JSMF_OK;
    if (!rc)
        rc = fit_csrc_rows(src, mdl->anchors, k, CS);
    if (!rc && (rc = fit_csrc_need_rowsq(src)) == JSMF_OK) {
        const double *p = fit_csrc_rowsums(src);
        for (uint32_t a = 0; a < k; a++) {
            double ps = mdl->anchors[a] < n ? p[mdl->anchors[a]] : 0;
            for (uint32_t j = 0; j < n; j++)
                T[(size_t)j * k + a] = ps > 0 ? CS[(size_t)a * n + j] / ps : 0;
        }
        fit_gemm_tn(n, k, k, T, T, H);
    }
    free(CS);
    if (rc)
        free(T), T = NULL;
    *Tout = T;
    return rc;
}

/* Each row's <C_i, (B A B^T)_i> = (B A)_i . (C B)_i into cross and, with anchors, its recovery
 * error into rec: (B A) made a chunk at a time (fit_gemm_nn's chunks: the same bits), p(z|x=i)
 * by Bayes' rule row by row, so no further N x K array is held. */
static int row_terms(const jsmf_model *mdl, const double *Z, uint32_t w, const double *H,
                     const double *p, const double *q, double *cross, double *rec)
{
    uint32_t n = mdl->n, k = mdl->k, rows = n < FIT_CHUNK ? n : FIT_CHUNK;
    uint32_t nch = (n + FIT_CHUNK - 1) / FIT_CHUNK;
    int nt = call_threads();
    double *pz = calloc(k, sizeof(double));
    double *buf = malloc(sizeof(double) * (size_t)(nt > 0 ? nt : 1) * ((size_t)rows * k + k));
    if (!pz || !buf) {
        free(pz), free(buf);
        return jsmf_error(JSMF_ENOMEM, "metrics: out of memory");
    }
    for (uint32_t a = 0; a < k; a++)
        for (uint32_t b = 0; b < k; b++)
            pz[a] += mdl->A[a * k + b];
#pragma omp parallel for schedule(static) num_threads(nt)
    for (uint32_t c = 0; c < nch; c++) {
        uint32_t r0 = c * FIT_CHUNK, nb = n - r0 < FIT_CHUNK ? n - r0 : FIT_CHUNK;
        double *P = buf + (size_t)omp_get_thread_num() * ((size_t)rows * k + k), *y = P + (size_t)rows * k;
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nb, k, k, 1.0,
                    mdl->B + (size_t)r0 * k, k, mdl->A, k, 0.0, P, k);
        for (uint32_t r = 0; r < nb; r++) {
            uint32_t i = r0 + r;
            const double *z = Z + (size_t)i * w, *b = mdl->B + (size_t)i * k;
            cross[i] = cblas_ddot(k, P + (size_t)r * k, 1, z, 1);
            if (!mdl->anchors || !(p[i] > 0))
                continue;
            double sy = 0;
            for (uint32_t a = 0; a < k; a++)
                sy += (y[a] = b[a] * pz[a]);
            for (uint32_t a = 0; a < k; a++)
                y[a] = sy > 0 ? y[a] / sy : 0;
            /* |cbar_i - y^T Cbar_S|^2 = q_i/p_i^2 - 2 y^T (Cbar_S cbar_i) + y^T H y */
            double lin = cblas_ddot(k, y, 1, z + k, 1) / p[i], qd = 0;
            for (uint32_t a = 0; a < k; a++)
                qd += y[a] * cblas_ddot(k, H + (size_t)a * k, 1, y, 1);
            rec[i] = sqrt(fmax(q[i] / (p[i] * p[i]) - 2 * lin + qd, 0));
        }
    }
    free(pz), free(buf);
    return JSMF_OK;
}

/* |C|^2 - 2 <C, B A B^T> + tr(B^T B A B^T B A), from the rows' cross terms. */
static int approximation(const jsmf_model *mdl, const double *q, const double *cross,
                         double *out)
{
    uint32_t n = mdl->n, k = mdl->k;
    double c2 = fit_sum_ordered(q, n), cr = fit_sum_ordered(cross, n);
    double *G = calloc((size_t)k * k, sizeof(double)), *GA = calloc((size_t)k * k, sizeof(double));
    if (!G || !GA) {
        free(G), free(GA);
        return jsmf_error(JSMF_ENOMEM, "metrics: out of memory");
    }
    fit_gemm_tn(n, k, k, mdl->B, mdl->B, G);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, k, k, k, 1.0, G, k, mdl->A, k, 0.0,
                GA, k);
    double quad = 0;
    for (uint32_t a = 0; a < k; a++)
        for (uint32_t b = 0; b < k; b++)
            quad += GA[a * k + b] * GA[b * k + a];
    free(G), free(GA);
    *out = sqrt(fmax(c2 - 2 * cr + quad, 0));
    return JSMF_OK;
}

uint64_t fit_metrics_c_bytes(uint32_t n, uint32_t k, int anchors)
{
    uint64_t w = anchors ? 2 * (uint64_t)k : k, nk = (uint64_t)n * k;
    uint64_t first = anchors ? 2 * nk : 0;       /* the anchors' rows and Cbar_S^T */
    uint64_t then = (anchors ? nk : 0) + n * w;  /* Cbar_S^T copied into V */
    uint64_t product = 2 * (uint64_t)n * w;      /* V and Z = C V */
    uint64_t most = first > then ? first : then;
    most = most > product ? most : product;
    return 8 * (most + 3 * (uint64_t)n + (uint64_t)k * k);
}

/* Recovery and approximation need C again: the anchors' rows of C, and one product C [B T]
 * with T = Cbar_S^T, which gives every row's <C_i, (B A B^T)_i> = (B A)_i . (C B)_i and
 * Cbar_S Cbar_i^T = (C T)_i / p_i. Then the metrics that need only the unigram. At most two
 * N x 2K arrays are held at once (fit_metrics_c_bytes). */
int fit_metrics_c(const jsmf_model *mdl, fit_csrc *src, jsmf_metrics *out)
{
    uint32_t n = mdl->n, k = mdl->k, w = mdl->anchors ? 2 * k : k;
    double *T = NULL, *V = NULL, *Z = NULL, *H = calloc((size_t)k * k, sizeof(double));
    double *rec = calloc(n, sizeof(double)), *cross = calloc(n, sizeof(double));
    int rc = !H || !rec || !cross ? jsmf_error(JSMF_ENOMEM, "metrics: out of memory") : JSMF_OK;
    if (!rc)
        rc = mdl->anchors ? anchor_rows(mdl, src, &T, H) : fit_csrc_need_rowsq(src);
    if (rc == JSMF_ENOTSUP) {
        /* C through documents too large for the budget to gather its rows: the two metrics
         * that need them are not computed, the others need only the row sums */
        jsmf_error_clear();
        out->recovery = out->approximation = NAN;
        rc = fit_metrics_local(mdl, fit_csrc_rowsums(src), out);
        goto out;
    }
    if (!rc && !(V = malloc(sizeof(double) * n * w)))
        rc = jsmf_error(JSMF_ENOMEM, "metrics: out of memory");
    if (rc)
        goto out;
    for (uint32_t i = 0; i < n; i++) {
        memcpy(V + (size_t)i * w, mdl->B + (size_t)i * k, sizeof(double) * k);
        if (T)
            memcpy(V + (size_t)i * w + k, T + (size_t)i * k, sizeof(double) * k);
    }
    free(T), T = NULL;
    if (!(Z = malloc(sizeof(double) * n * w))) {
        rc = jsmf_error(JSMF_ENOMEM, "metrics: out of memory");
        goto out;
    }
    if ((rc = fit_csrc_apply(src, V, w, Z)))
        goto out;
    free(V), V = NULL;
    const double *p = fit_csrc_rowsums(src), *q = fit_csrc_rowsq(src);
    if ((rc = row_terms(mdl, Z, w, H, p, q, cross, rec)) ||
        (rc = approximation(mdl, q, cross, &out->approximation)))
        goto out;
    out->recovery = mdl->anchors ? fit_sum_ordered(rec, n) / n : NAN;
    free(Z), Z = NULL;
    rc = fit_metrics_local(mdl, p, out);
out:
    free(T), free(V), free(Z), free(H), free(rec), free(cross);
    return rc;
}

int jsmf_model_metrics_within(const jsmf_model *mdl, const jsmf_source *C, uint64_t mem,
                             uint64_t *plan, jsmf_metrics *out)
{
    if (C->n != mdl->n)
        return jsmf_error(JSMF_EMISMATCH, "metrics: model has %u words, C has %u", mdl->n, C->n);
    /* the model as loaded (B, A, alpha, the vocabulary's strings at ~16 bytes a word) and the
     * metrics' arrays: what C's source may not take */
    uint64_t nk = (uint64_t)mdl->n * mdl->k, kk = (uint64_t)mdl->k * mdl->k;
    uint64_t need = 8 * (nk + kk + mdl->k) + 16 * (uint64_t)mdl->n +
                    fit_metrics_c_bytes(mdl->n, mdl->k, mdl->anchors != NULL);
    uint64_t rest = mem > need ? mem - need : 0;
    int docs = 0;
    double held = mem ? fit_source_held(C, rest, JSMF_PRODUCTS_AUTO, &docs) : 0;
    /* through the documents, recovery and approximation gather C's rows from them in memory */
    uint64_t least = need + (docs && !(held > 0) ? 2 * fit_docs_bytes(C->docs) : 0);
    if (mem && least > mem) {
        double mib = (double)least / 1048576;
        return jsmf_error(JSMF_ENOMEM, "metrics against C: need %.0f MiB at the least (N=%u "
                          "words, K=%u: the model, the product of C with N x %u doubles%s), "
                          "more than --mem %.0fM: give --mem %.0fM or more", mib, mdl->n,
                          mdl->k, mdl->anchors ? 2 * mdl->k : mdl->k,
                          least > need ? ", the documents held twice over" : "",
                          (double)mem / 1048576, mib + 1);
    }
    if (plan) { /* and through the documents, the product's vectors and sums (fit_docs.c) */
        uint64_t w = mdl->anchors ? 2 * (uint64_t)mdl->k : mdl->k;
        uint64_t vectors = docs ? C->docs->n_docs * w * sizeof(double) : 0;
        vectors = vectors < rest / 16 ? vectors : rest / 16;
        *plan = need + (uint64_t)held + vectors + (docs ? fit_docs_chunk_bytes(rest) : 0);
    }
    /* C in memory within half of what is left (else two streamed passes) */
    fit_csrc *src = NULL;
    int rc = fit_csrc_open(C, mem ? rest : 2ull << 30, call_threads(), 0, JSMF_PRODUCTS_AUTO,
                           NULL, NULL, NULL, &src);
    if (!rc)
        rc = fit_metrics_c(mdl, src, out);
    fit_csrc_close(src);
    return rc;
}

int jsmf_model_metrics(const jsmf_model *mdl, const jsmf_source *C, jsmf_metrics *out)
{
    return jsmf_model_metrics_within(mdl, C, 0, NULL, out); /* C in memory up to 1 GiB */
}
