/* fit_metrics.c — the quality metrics of seeds 000 (Sec. 5.1) and 001 (Sec. 4) for any model
 * against any co-occurrence source: two scans of C, everything else from B and A. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fit_internal.h"

typedef struct {
    uint32_t n, k;
    double *p, *q;       /* row sums and row sums of squares of C */
    int32_t *anchor_of;  /* word -> anchor index or -1 */
    double *CS;          /* k x n anchor rows (raw) */
    /* second scan */
    const double *T;     /* Cbar_S^T, n x k */
    const double *H;     /* T^T T */
    const double *Bb;    /* p(z|x), n x k */
    const double *P;     /* B A, n x k */
    const double *B;
    double *rec, *cross; /* per row */
    double *tmp;
} met_ctx;

static int scan1(void *arg, uint32_t row, const uint32_t *cols, const double *vals, uint32_t nv)
{
    met_ctx *m = arg;
    if (row >= m->n)
        return jsmf_error(JSMF_EFORMAT, "metrics: source row %u outside N=%u", row, m->n);
    double a = 0, b = 0;
    for (uint32_t e = 0; e < nv; e++)
        a += vals[e], b += vals[e] * vals[e];
    m->p[row] = a, m->q[row] = b;
    if (m->anchor_of && m->anchor_of[row] >= 0) {
        double *dst = m->CS + (size_t)m->anchor_of[row] * m->n;
        for (uint32_t e = 0; e < nv; e++)
            if (cols[e] < m->n)
                dst[cols[e]] = vals[e];
    }
    return 0;
}

static int scan2(void *arg, uint32_t row, const uint32_t *cols, const double *vals, uint32_t nv)
{
    met_ctx *m = arg;
    uint32_t k = m->k;
    const double *Pi = m->P + (size_t)row * k;
    double cross = 0;
    double *t = m->tmp;
    memset(t, 0, sizeof(double) * k);
    for (uint32_t e = 0; e < nv; e++) {
        uint32_t j = cols[e];
        if (j >= m->n)
            continue;
        const double *Bj = m->B + (size_t)j * k;
        double s = 0;
        for (uint32_t a = 0; a < k; a++)
            s += Pi[a] * Bj[a];
        cross += vals[e] * s;
        if (m->T)
            for (uint32_t a = 0; a < k; a++)
                t[a] += vals[e] * m->T[(size_t)j * k + a];
    }
    m->cross[row] = cross;
    if (m->T && m->p[row] > 0) {
        /* |cbar_i - y^T Cbar_S|^2 = q_i/p_i^2 - 2 y^T (Cbar_S cbar_i) + y^T H y */
        const double *y = m->Bb + (size_t)row * k;
        double pi = m->p[row], lin = 0, qd = 0;
        for (uint32_t a = 0; a < k; a++) {
            lin += y[a] * t[a] / pi;
            double h = 0;
            for (uint32_t b = 0; b < k; b++)
                h += m->H[a * k + b] * y[b];
            qd += y[a] * h;
        }
        m->rec[row] = sqrt(fmax(m->q[row] / (pi * pi) - 2 * lin + qd, 0));
    }
    return 0;
}

typedef struct {
    double v;
    uint32_t i;
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->v != y->v)
        return x->v < y->v ? 1 : -1;
    return x->i < y->i ? -1 : x->i > y->i;
}

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
    ranked *rk = malloc(sizeof(ranked) * n);
    uint32_t *tops = malloc(sizeof(uint32_t) * k * top), *cnt = calloc(n, sizeof(uint32_t));
    if (!rk || !tops || !cnt) {
        free(rk), free(tops), free(cnt);
        rc = jsmf_error(JSMF_ENOMEM, "metrics: out of memory");
        goto done;
    }
    for (uint32_t a = 0; a < k; a++) {
        for (uint32_t i = 0; i < n; i++)
            rk[i] = (ranked){mdl->B[(size_t)i * k + a], i};
        qsort(rk, n, sizeof(ranked), cmp_ranked);
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

int jsmf_model_metrics(const jsmf_model *mdl, const jsmf_source *C, jsmf_metrics *out)
{
    uint32_t n = mdl->n, k = mdl->k;
    if (C->n != n)
        return jsmf_error(JSMF_EMISMATCH, "metrics: model has %u words, C has %u", n, C->n);
    met_ctx m = {0};
    m.n = n, m.k = k;
    m.p = calloc(n, sizeof(double));
    m.q = calloc(n, sizeof(double));
    double *pz = calloc(k, sizeof(double)), *Bb = calloc((size_t)n * k, sizeof(double));
    double *P = calloc((size_t)n * k, sizeof(double)), *T = NULL, *H = NULL;
    m.rec = calloc(n, sizeof(double));
    m.cross = calloc(n, sizeof(double));
    m.tmp = calloc(k, sizeof(double));
    int rc = JSMF_OK;
    if (!m.p || !m.q || !pz || !Bb || !P || !m.rec || !m.cross || !m.tmp) {
        rc = jsmf_error(JSMF_ENOMEM, "metrics: out of memory");
        goto out;
    }
    if (mdl->anchors) {
        m.anchor_of = malloc(sizeof(int32_t) * n);
        m.CS = calloc((size_t)k * n, sizeof(double));
        if (!m.anchor_of || !m.CS) {
            rc = jsmf_error(JSMF_ENOMEM, "metrics: out of memory");
            goto out;
        }
        for (uint32_t i = 0; i < n; i++)
            m.anchor_of[i] = -1;
        for (uint32_t a = 0; a < k; a++)
            if (mdl->anchors[a] < n)
                m.anchor_of[mdl->anchors[a]] = (int32_t)a;
    }
    if ((rc = C->scan(C->ctx, scan1, &m)))
        goto out;
    bayes(mdl, pz, Bb);
    fit_gemm_nn(n, k, k, mdl->B, mdl->A, P);
    if (mdl->anchors) {
        T = calloc((size_t)n * k, sizeof(double));
        H = calloc((size_t)k * k, sizeof(double));
        if (!T || !H) {
            rc = jsmf_error(JSMF_ENOMEM, "metrics: out of memory");
            goto out;
        }
        for (uint32_t a = 0; a < k; a++) {
            double ps = mdl->anchors[a] < n ? m.p[mdl->anchors[a]] : 0;
            for (uint32_t j = 0; j < n; j++)
                T[(size_t)j * k + a] = ps > 0 ? m.CS[(size_t)a * n + j] / ps : 0;
        }
        fit_gemm_tn(n, k, k, T, T, H);
    }
    m.T = T, m.H = H, m.Bb = Bb, m.P = P, m.B = mdl->B;
    if ((rc = C->scan(C->ctx, scan2, &m)))
        goto out;
    /* Approximation: |C|^2 - 2 <C, B A B^T> + tr(B^T B A B^T B A) */
    double c2 = fit_sum_ordered(m.q, n), cross = fit_sum_ordered(m.cross, n);
    double *G = calloc((size_t)k * k, sizeof(double)), *GA = calloc((size_t)k * k, sizeof(double));
    fit_gemm_tn(n, k, k, mdl->B, mdl->B, G);
    for (uint32_t a = 0; a < k; a++)
        for (uint32_t b = 0; b < k; b++)
            for (uint32_t e = 0; e < k; e++)
                GA[a * k + b] += G[a * k + e] * mdl->A[e * k + b];
    double quad = 0;
    for (uint32_t a = 0; a < k; a++)
        for (uint32_t b = 0; b < k; b++)
            quad += GA[a * k + b] * GA[b * k + a];
    free(G), free(GA);
    out->approximation = sqrt(fmax(c2 - 2 * cross + quad, 0));
    out->recovery = mdl->anchors ? fit_sum_ordered(m.rec, n) / n : NAN;
    rc = fit_metrics_local(mdl, m.p, out);
out:
    free(m.p), free(m.q), free(pz), free(Bb), free(P), free(T), free(H), free(m.rec);
    free(m.cross), free(m.tmp), free(m.anchor_of), free(m.CS);
    return rc;
}
