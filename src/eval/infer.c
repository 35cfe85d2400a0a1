/* infer.c — topic mixture theta_d of a document by the per-document convex fit of Fisher et al.
 * 2020 App. E: maximise sum_w n_w log sum_k theta_k B_wk over the simplex with the EM fixed point
 * theta_k <- theta_k g_k (accelerated by SQUAREM), stopped on the Frank-Wolfe duality gap. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsmf_eval.h"
#include "eval_util.h"
#include "core/error.h"

/* One EM step at theta on the document's rows of B gathered densely (rows x k): the
 * log-likelihood per token, the gradient per token g (sum_k theta_k g_k = 1, so the Frank-Wolfe
 * gap max_k g_k - 1 bounds the distance to the optimum) and the EM image theta_k g_k in next. */
typedef struct {
    const double *Bd, *frac;
    uint32_t rows, k;
    double *g;
} em_problem;

static double em_step(const em_problem *P, const double *theta, double *next, double *gap)
{
    uint32_t k = P->k;
    double *g = P->g, ll = 0;
    memset(g, 0, k * sizeof *g);
    for (uint32_t r = 0; r < P->rows; r++) {
        const double *b = P->Bd + (uint64_t)r * k;
        double p = 0;
        for (uint32_t t = 0; t < k; t++)
            p += theta[t] * b[t];
        if (!(p > 1e-300))
            continue;
        ll += P->frac[r] * log(p);
        double s = P->frac[r] / p;
        for (uint32_t t = 0; t < k; t++)
            g[t] += s * b[t];
    }
    double gmax = -INFINITY, sum = 0, z = 0;
    for (uint32_t t = 0; t < k; t++) {
        gmax = g[t] > gmax ? g[t] : gmax;
        sum += theta[t] * g[t];
    }
    *gap = gmax - sum; /* sum is 1 up to rounding and tokens of probability 0 */
    for (uint32_t t = 0; t < k; t++)
        z += next[t] = theta[t] * g[t];
    for (uint32_t t = 0; t < k; t++)
        next[t] /= z;
    return ll;
}

/* EM accelerated by SQUAREM (Varadhan & Roland 2008, scheme S3): from theta0 and two EM steps
 * theta1, theta2 extrapolate theta0 - 2a r + a^2 v (r = theta1 - theta0, v = theta2 - 2 theta1 +
 * theta0, a = -|r|/|v|), halving towards plain EM (a = -1 gives theta2) until every weight stays
 * positive; keep the extrapolation only if its likelihood is no worse than theta1's. */
static int em_solve(const em_problem *P, const jsmf_infer_opts *o, double *theta, double *buf,
                    double *gap_out)
{
    uint32_t k = P->k, it = 0;
    double *t1 = buf, *t2 = buf + k, *tx = buf + 2 * k, *t3 = buf + 3 * k;
    double gap = INFINITY;
    for (;;) {
        double ll1;
        em_step(P, theta, t1, &gap);
        if (gap <= o->tol || it++ >= o->max_iters)
            break;
        ll1 = em_step(P, t1, t2, &gap);
        if (gap <= o->tol || it++ >= o->max_iters) {
            memcpy(theta, t1, k * sizeof *theta);
            break;
        }
        double rr = 0, vv = 0;
        for (uint32_t t = 0; t < k; t++) {
            double r = t1[t] - theta[t], v = t2[t] - 2 * t1[t] + theta[t];
            rr += r * r, vv += v * v;
        }
        double a = vv > 0 ? -sqrt(rr / vv) : -1;
        if (a > -1)
            a = -1;
        for (int tries = 0;; tries++) {
            int positive = 1;
            double z = 0;
            for (uint32_t t = 0; t < k; t++) {
                double r = t1[t] - theta[t], v = t2[t] - 2 * t1[t] + theta[t];
                tx[t] = theta[t] - 2 * a * r + a * a * v;
                positive &= tx[t] > 0;
                z += tx[t];
            }
            if ((positive && z > 0) || a == -1) {
                for (uint32_t t = 0; t < k; t++)
                    tx[t] /= z;
                break;
            }
            a = tries > 30 ? -1 : (a - 1) / 2;
        }
        double gx, llx = em_step(P, tx, t3, &gx);
        it++;
        if (llx >= ll1 && isfinite(llx)) {
            if (gx <= o->tol) {
                memcpy(theta, tx, k * sizeof *theta);
                gap = gx;
                break;
            }
            memcpy(theta, t3, k * sizeof *theta); /* the stabilising EM step after the jump */
        } else {
            memcpy(theta, t2, k * sizeof *theta);
        }
        if (it >= o->max_iters) {
            em_step(P, theta, t1, &gap);
            break;
        }
    }
    if (gap_out)
        *gap_out = gap;
    return (int)it;
}

int jsmf_theta_fit(const double *B, uint32_t k, const uint32_t *ids, const double *counts,
                   uint32_t nids, const jsmf_infer_opts *opts, double *theta, double *gap,
                   uint32_t *iters)
{
    if (iters)
        *iters = 0;
    jsmf_infer_opts o = JSMF_INFER_OPTS_DEFAULT;
    if (opts)
        o = *opts;
    for (uint32_t t = 0; t < k; t++)
        theta[t] = 1.0 / k;
    if (gap)
        *gap = 0;
    double total = 0;
    for (uint32_t i = 0; i < nids; i++)
        total += counts[i];
    if (nids == 0 || !(total > 0))
        return 0;
    double *Bd = malloc(((uint64_t)nids * k + nids + 5 * (uint64_t)k) * sizeof *Bd);
    if (!Bd)
        return jsmf_error(JSMF_ENOMEM, "infer: out of memory for a document of %u words", nids);
    double *frac = Bd + (uint64_t)nids * k, *g = frac + nids, *buf = g + k;
    uint32_t rows = 0;
    for (uint32_t i = 0; i < nids; i++) {
        const double *b = B + (uint64_t)ids[i] * k;
        double rs = 0;
        for (uint32_t t = 0; t < k; t++)
            rs += b[t];
        if (!(rs > 0)) /* a word no topic can produce says nothing about theta */
            continue;
        memcpy(Bd + (uint64_t)rows * k, b, k * sizeof *b);
        frac[rows++] = counts[i] / total;
    }
    em_problem P = {Bd, frac, rows, k, g};
    int it = rows ? em_solve(&P, &o, theta, buf, gap) : 0;
    free(Bd);
    if (it < 0)
        return it;
    if (iters)
        *iters = (uint32_t)it;
    return JSMF_OK;
}

int jsmf_theta_fit_batch(const jsmf_model *m, const jsmf_docbatch *b, const jsmf_infer_opts *opts,
                         double *theta)
{
    jsmf_error_slot err = {0}; /* a worker's message, carried to this thread */
    #pragma omp parallel num_threads(eval_threads(opts ? opts->threads : 0))
    {
        double *cnt = NULL;
        uint64_t cap = 0;
        #pragma omp for schedule(dynamic, 4)
        for (uint32_t d = 0; d < b->ndocs; d++) {
            if (error_pending(&err))
                continue;
            uint64_t s = b->start[d], n = b->start[d + 1] - s;
            if (n > cap) {
                free(cnt);
                cap = n * 2;
                cnt = malloc(cap * sizeof *cnt);
            }
            int r = cnt || n == 0 ? 0 : jsmf_error(JSMF_ENOMEM, "infer: out of memory");
            for (uint64_t i = 0; !r && i < n; i++)
                cnt[i] = b->counts[s + i];
            if (!r)
                r = jsmf_theta_fit(m->B, m->k, b->ids + s, cnt, (uint32_t)n, opts,
                                   theta + (uint64_t)d * m->k, NULL, NULL);
            if (r < 0)
                error_capture(&err, r);
        }
        free(cnt);
    }
    return error_restore(&err);
}

void jsmf_infer_opts_init(jsmf_infer_opts *o)
{
    *o = (jsmf_infer_opts)JSMF_INFER_OPTS_DEFAULT;
}
