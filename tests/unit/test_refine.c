/* test_refine.c — jsmf_refine on a planted LDA corpus: the objective of its first iterations
 * equals a dense reference written loop by loop from the formulas of jsmf_refine.h, never
 * decreases, the refined topics score better on held-out documents than the start, the result
 * repeats bit for bit at a thread count, and bad input is refused with nothing written. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "jsmf_eval.h"
#include "jsmf_refine.h"

enum { N = 24, K = 3, M = 240, HELD = 80, LEN = 24 };

static uint64_t rng_state = 88172645463325252ull;
static double uniform01(void)
{
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

static uint32_t draw(const double *p, uint32_t n, uint32_t stride)
{
    double u = uniform01(), c = 0;
    for (uint32_t i = 0; i < n; i++)
        if (u < (c += p[(uint64_t)i * stride]))
            return i;
    return n - 1;
}

/* Planted topics: topic t holds 0.9 of its mass on words 8t .. 8t+7, the rest spread. */
static void planted_topics(double *B)
{
    for (uint32_t w = 0; w < N; w++)
        for (uint32_t t = 0; t < K; t++)
            B[w * K + t] = (w / 8 == t ? 0.9 / 8 : 0.0) + 0.1 / N;
}

/* A document's theta: 0.8 on one topic. */
static void planted_theta(double *theta)
{
    uint32_t main_topic = (uint32_t)(uniform01() * K) % K;
    for (uint32_t t = 0; t < K; t++)
        theta[t] = t == main_topic ? 0.8 : 0.2 / (K - 1);
}

/* A document of LEN tokens drawn from theta, as dense counts. */
static void planted_doc(const double *B, const double *theta, uint32_t *h)
{
    memset(h, 0, N * sizeof *h);
    for (int i = 0; i < LEN; i++) {
        uint32_t t = draw(theta, K, 1);
        h[draw(B + t, N, K)]++;
    }
}

/* Dense documents to CSR (ascending ids). */
static void to_csr(const uint32_t *H, uint64_t *offs, uint32_t *ids, uint32_t *counts)
{
    offs[0] = 0;
    for (uint32_t d = 0, e = 0; d < M; d++) {
        for (uint32_t w = 0; w < N; w++)
            if (H[d * N + w])
                ids[e] = w, counts[e++] = H[d * N + w];
        offs[d + 1] = e;
    }
}

/* B and n_k from counts: B_wk = (n_wk + b) / (n_k + N b). */
static void topics_of(const double *n, double beta, double *B, double *nk)
{
    memset(nk, 0, K * sizeof *nk);
    for (uint32_t i = 0; i < N * K; i++)
        nk[i % K] += n[i];
    for (uint32_t i = 0; i < N * K; i++)
        B[i] = (n[i] + beta) / (nk[i % K] + N * beta);
}

/* psi(x) for x > 0, written apart from refine.c's: the recurrence up to 10, then the asymptotic
 * series to x^-10 (checked against lgamma's central difference in main). */
static double ref_digamma(double x)
{
    double r = 0;
    for (; x < 10; x += 1)
        r -= 1 / x;
    double f = 1 / (x * x);
    return r + log(x) - 1 / (2 * x) - f / 12 + f * f / 120 - f * f * f / 252 +
           f * f * f * f / 240 - f * f * f * f * f / 132;
}

/* The dense reference: iters iterations of jsmf_refine.h's EM, written from its formulas; with
 * batches > 1, after the first pass each batch's counts replace its previous ones in the totals
 * and the topics are remade from them after every batch; with overrelax > 1 (one batch) the
 * adaptive over-relaxation of the topic counts and thetas; with learn (1) Minka's step of the
 * pseudo-counts after every pass, into alpha (K). */
static void reference(const uint32_t *H, const double *Bstart, const jsmf_refine_opts *o,
                      int learn, double *B, double *obj, double *alpha)
{
    static double theta[M * K], ndk[K], nwk[N * K], nk[K], prev[N * K], prevk[K];
    static double batch[M][N * K]; /* each batch's counts at its last visit (batches <= M) */
    const uint32_t S = o->batches;
    double a[K], A = K * o->alpha, omega = 1, lik_prev = 0, lnow[K];
    for (uint32_t t = 0; t < K; t++) /* the prior's pseudo-counts of the last M-step */
        lnow[t] = o->prior ? o->prior_counts[t] : 0;
    for (uint32_t t = 0; t < K; t++)
        a[t] = o->alpha;
    for (uint32_t w = 0; w < N; w++)
        for (uint32_t t = 0; t < K; t++)
            B[w * K + t] = (1 - o->mix) * Bstart[w * K + t] + o->mix / N;
    for (uint32_t i = 0; i < M * K; i++)
        theta[i] = 1.0 / K;
    double tokens = 0;
    for (uint32_t i = 0; i < M * N; i++)
        tokens += H[i];
    for (uint32_t it = 0; it < o->iters; it++) {
        uint32_t steps = it == 0 ? o->theta_steps : 1;
        memset(nwk, 0, sizeof nwk);
        double L = 0, lik = 0, dg[K] = {0}, dgsum = 0;
        for (uint32_t i = 0; i < N * K; i++) /* the prior at the topics the pass starts from */
            L += o->beta * log(B[i]) + (o->prior && o->prior[i] > 0
                                            ? lnow[i % K] * o->prior[i] * log(B[i]) : 0);
        for (uint32_t d = 0; d < M; d++) {
            double *th = theta + d * K, before[K];
            for (uint32_t s = 0; s <= steps; s++) {
                int joint = s == steps;
                memset(ndk, 0, sizeof ndk);
                double nd = 0;
                if (joint)
                    for (uint32_t t = 0; t < K; t++)
                        L += a[t] * log(th[t]), before[t] = th[t];
                double z = A, nold[K];
                for (uint32_t w = 0; w < N; w++)
                    z += H[d * N + w];
                for (uint32_t t = 0; t < K; t++)
                    nold[t] = th[t] * z - a[t];
                for (uint32_t w = 0; w < N; w++) {
                    if (!H[d * N + w])
                        continue;
                    double p = 0, g[K], gs = 0;
                    for (uint32_t t = 0; t < K; t++)
                        p += th[t] * B[w * K + t];
                    nd += H[d * N + w];
                    if (joint)
                        lik += H[d * N + w] * log(p);
                    for (uint32_t t = 0; t < K; t++) {
                        /* EM: theta B / p; exclude: the counts without this word's share */
                        double own = H[d * N + w] * th[t] * B[w * K + t] / p;
                        g[t] = own / H[d * N + w];
                        if (joint && (o->method == JSMF_REFINE_CVB0))
                            g[t] = (fmax(nold[t] - own, 0) + a[t]) *
                                   (it == 0 ? B[w * K + t]
                                            : (fmax(prev[w * K + t] - own, 0) + o->beta) /
                                                  (prevk[t] + N * o->beta));
                        gs += g[t];
                    }
                    for (uint32_t t = 0; t < K; t++) {
                        double r = H[d * N + w] * (joint && (o->method == JSMF_REFINE_CVB0) ? g[t] / gs : g[t]);
                        ndk[t] += r;
                        if (joint)
                            nwk[w * K + t] += r;
                    }
                }
                for (uint32_t t = 0; t < K; t++)
                    th[t] = (ndk[t] + a[t]) / (nd + A);
                if (joint && omega != 1) { /* moved omega times as far, no count below 0 */
                    double sum = 0;
                    for (uint32_t t = 0; t < K; t++)
                        sum += th[t] = fmax(before[t] + omega * (th[t] - before[t]),
                                            a[t] / (nd + A));
                    for (uint32_t t = 0; t < K; t++)
                        th[t] /= sum;
                }
                if (joint && learn) { /* Minka's sums from the joint step's counts */
                    for (uint32_t t = 0; t < K; t++)
                        dg[t] += ref_digamma(ndk[t] + a[t]);
                    dgsum += ref_digamma(nd + A);
                }
            }
            uint32_t b = 0; /* d's batch: documents [b M / S, (b + 1) M / S) */
            while ((uint64_t)(b + 1) * M / S <= d)
                b++;
            if (S > 1 && d + 1 == (uint64_t)(b + 1) * M / S) { /* batch b done */
                if (it > 0) {
                    for (uint32_t i = 0; i < N * K; i++)
                        prev[i] = fmax(prev[i] + (nwk[i] - batch[b][i]), 0);
                    topics_of(prev, o->beta, B, prevk);
                }
                memcpy(batch[b], nwk, sizeof nwk);
                memset(nwk, 0, sizeof nwk);
            }
        }
        obj[it] = (L + lik) / tokens;
        lik /= tokens;
        if (S == 1 && o->overrelax > 1 && it >= 1) { /* grows while lik rises, else 1 */
            if (it >= 2)
                omega = lik < lik_prev ? 1 : fmin(omega * 1.2, o->overrelax);
            lik_prev = lik;
        }
        if (!(S > 1 && it > 0)) {
            if (S > 1) /* the first pass: the totals are the batches' counts */
                for (uint32_t b = 0; b < S; b++)
                    for (uint32_t i = 0; i < N * K; i++)
                        nwk[i] += batch[b][i];
            if (o->prior) { /* the prior's pseudo-counts, each topic's scaled by its share of
                               * counts on the prior's words */
                double on[K] = {0}, all[K] = {0};
                for (uint32_t w = 0; w < N; w++) {
                    int known = 0;
                    for (uint32_t t = 0; t < K; t++)
                        known |= o->prior[w * K + t] > 0;
                    for (uint32_t t = 0; t < K; t++)
                        all[t] += nwk[w * K + t], on[t] += known ? nwk[w * K + t] : 0;
                }
                for (uint32_t t = 0; t < K; t++)
                    lnow[t] = o->prior_counts[t] * (all[t] > 0 ? on[t] / all[t] : 1);
                for (uint32_t i = 0; i < N * K; i++)
                    nwk[i] += lnow[i % K] * o->prior[i];
            }
            if (it > 0 && omega != 1)
                for (uint32_t i = 0; i < N * K; i++)
                    nwk[i] = fmax(prev[i] + omega * (nwk[i] - prev[i]), 0);
            topics_of(nwk, o->beta, B, nk);
            memcpy(prev, nwk, sizeof nwk);
            memcpy(prevk, nk, sizeof nk);
        }
        if (learn) { /* a_k <- a_k (sum_d psi(n_dk + a_k) - M psi(a_k)) / (... psi(A)) */
            double was[K], Aw = A, den = dgsum - M * ref_digamma(A);
            A = 0;
            for (uint32_t t = 0; t < K; t++) {
                was[t] = a[t];
                double num = dg[t] - M * ref_digamma(a[t]);
                a[t] = fmax(num > 0 && den > 0 ? a[t] * num / den : a[t], 1e-6);
                A += a[t];
            }
            for (uint32_t d = 0; d < M; d++) { /* the thetas' counts under the new prior */
                double nd = 0;
                for (uint32_t w = 0; w < N; w++)
                    nd += H[d * N + w];
                for (uint32_t t = 0; t < K; t++)
                    theta[d * K + t] =
                        (fmax(theta[d * K + t] * (nd + Aw) - was[t], 0) + a[t]) / (nd + A);
            }
        }
    }
    for (uint32_t t = 0; alpha && t < K; t++)
        alpha[t] = a[t];
}

/* Document completion on held-out documents: theta fitted on one half, the other scored. */
static double heldout(const double *B, const uint32_t *fitH, const uint32_t *evalH)
{
    double ll = 0, n = 0;
    for (uint32_t d = 0; d < HELD; d++) {
        uint32_t ids[N];
        double cnt[N], theta[K];
        uint32_t k = 0;
        for (uint32_t w = 0; w < N; w++)
            if (fitH[d * N + w])
                ids[k] = w, cnt[k++] = fitH[d * N + w];
        CHECK_OK(jsmf_theta_fit(B, K, ids, cnt, k, NULL, theta, NULL, NULL));
        for (uint32_t w = 0; w < N; w++) {
            double p = 0;
            for (uint32_t t = 0; t < K; t++)
                p += theta[t] * B[w * K + t];
            ll += evalH[d * N + w] * log(p), n += evalH[d * N + w];
        }
    }
    return ll / n;
}

static jsmf_model *start_model(const double *truth)
{
    /* the planted topics blurred: each topic half its own, half the next one's */
    jsmf_model *m;
    CHECK_OK(jsmf_model_new(N, K, &m));
    for (uint32_t w = 0; w < N; w++)
        for (uint32_t t = 0; t < K; t++)
            m->B[w * K + t] = 0.5 * truth[w * K + t] + 0.5 * truth[w * K + (t + 1) % K];
    for (uint32_t i = 0; i < K * K; i++)
        m->A[i] = 1.0 / (K * K);
    return m;
}

static int same(const double *a, const double *b, uint64_t n)
{
    return !memcmp(a, b, n * sizeof *a);
}

int main(void)
{
    static double truth[N * K], theta[K], Bref[N * K], obj_ref[8];
    static uint32_t H[M * N], fitH[HELD * N], evalH[HELD * N], ids[M * N], counts[M * N];
    static uint64_t offs[M + 1];
    planted_topics(truth);
    for (uint32_t d = 0; d < M; d++) {
        planted_theta(theta);
        planted_doc(truth, theta, H + d * N);
    }
    for (uint32_t d = 0; d < HELD; d++) {
        planted_theta(theta);
        planted_doc(truth, theta, fitH + d * N);
        planted_doc(truth, theta, evalH + d * N);
    }
    to_csr(H, offs, ids, counts);
    jsmf_doc_csr csr = {N, M, offs, ids, counts, NULL};
    jsmf_doc_source docs;
    CHECK_OK(jsmf_doc_csr_source(&csr, 50, &docs)); /* blocks of 50: 5 scans' callbacks */
    jsmf_model *start = start_model(truth);

    /* three iterations of either mode against the dense reference: objective and topics */
    jsmf_refine_opts o;
    jsmf_model *m = NULL;
    jsmf_refine_result r;
    for (int exclude = 0; exclude < 2; exclude++) {
        jsmf_refine_opts_init(&o);
        o.iters = 3, o.theta_steps = 4, o.threads = 2, o.method = exclude ? JSMF_REFINE_CVB0 : JSMF_REFINE_EM;
        CHECK_OK(jsmf_refine(start, &docs, &o, &m, &r));
        reference(H, start->B, &o, 0, Bref, obj_ref, NULL);
        CHECK(r.iters == 3 && r.docs == M && r.tokens == (uint64_t)M * LEN);
        for (uint32_t it = 0; it < 3; it++)
            CHECK_NEAR(r.objective[it], obj_ref[it], 1e-12);
        double err = 0;
        for (uint32_t i = 0; m && i < N * K; i++)
            err = fmax(err, fabs(m->B[i] - Bref[i]));
        CHECK(m && err < 1e-12);
        jsmf_refine_result_free(&r);
        jsmf_model_free(m);
        m = NULL;
    }

    /* several batches (7: they cut the scan's blocks of 50 in odd places), either mode, five
     * iterations against the reference */
    for (int exclude = 0; exclude < 2; exclude++) {
        jsmf_refine_opts_init(&o);
        o.iters = 5, o.theta_steps = 4, o.threads = 2, o.method = exclude ? JSMF_REFINE_CVB0 : JSMF_REFINE_EM, o.batches = 7;
        CHECK_OK(jsmf_refine(start, &docs, &o, &m, &r));
        reference(H, start->B, &o, 0, Bref, obj_ref, NULL);
        CHECK(r.iters == 5);
        for (uint32_t it = 0; it < 5; it++)
            CHECK_NEAR(r.objective[it], obj_ref[it], 1e-12);
        double err = 0;
        for (uint32_t i = 0; m && i < N * K; i++)
            err = fmax(err, fabs(m->B[i] - Bref[i]));
        CHECK(m && err < 1e-12);
        /* and not the one-batch run: the batches change the topics */
        jsmf_model *one_batch = NULL;
        o.batches = 1;
        CHECK_OK(jsmf_refine(start, &docs, &o, &one_batch, NULL));
        err = 0;
        for (uint32_t i = 0; m && one_batch && i < N * K; i++)
            err = fmax(err, fabs(m->B[i] - one_batch->B[i]));
        CHECK(err > 1e-6);
        CHECK(m && strstr(m->summary_json, "\"batches\": 7"));
        jsmf_model_free(one_batch);
        jsmf_refine_result_free(&r);
        jsmf_model_free(m);
        m = NULL;
    }

    /* a prior centred on given topics (the night from yesterday's model), either mode, with
     * over-relaxation and one batch or several, against the reference; the topics move toward
     * the prior's, and further the larger its pseudo-counts */
    for (int exclude = 0; exclude < 2; exclude++)
        for (uint32_t S = 1; S <= 7; S += 6) {
            static double P[N * K];
            double lam[K], moved[3];
            /* the prior lacks the last 3 words (words admitted since yesterday): each topic's
             * pseudo-counts scale by its share on the others */
            double col[K] = {0};
            for (uint32_t i = 0; i < N * K; i++)
                P[i] = i / K < N - 3 ? truth[i] : 0, col[i % K] += P[i];
            for (uint32_t i = 0; i < N * K; i++)
                P[i] /= col[i % K];
            for (uint32_t t = 0; t < K; t++)
                lam[t] = 200.0 * (1 + t);
            jsmf_refine_opts_init(&o);
            o.iters = 5, o.theta_steps = 4, o.threads = 2, o.batches = S;
            o.method = exclude ? JSMF_REFINE_CVB0 : JSMF_REFINE_EM;
            for (int strength = 0; strength < 3; strength++) {
                double scaled[K];
                for (uint32_t t = 0; t < K; t++)
                    scaled[t] = lam[t] * strength * strength;
                o.prior = strength ? P : NULL, o.prior_counts = strength ? scaled : NULL;
                CHECK_OK(jsmf_refine(start, &docs, &o, &m, &r));
                reference(H, start->B, &o, 0, Bref, obj_ref, NULL);
                for (uint32_t it = 0; it < 5; it++)
                    CHECK_NEAR(r.objective[it], obj_ref[it], 1e-10);
                double err = 0, far = 0;
                for (uint32_t i = 0; m && i < N * K; i++)
                    err = fmax(err, fabs(m->B[i] - Bref[i])), far += fabs(m->B[i] - P[i]);
                CHECK(m && err < 1e-10);
                CHECK(!strength == !strstr(m->summary_json, "\"prior_tokens\""));
                moved[strength] = far / K;
                jsmf_refine_result_free(&r);
                jsmf_model_free(m);
                m = NULL;
            }
            fprintf(stderr, "prior, exclude %d, %u batches: mean l1 to its topics %.3f, %.3f, "
                    "%.3f\n", exclude, S, moved[0], moved[1], moved[2]);
            CHECK(moved[2] < moved[1] && moved[1] < moved[0]);
        }
    jsmf_refine_opts_init(&o);
    {
        double bad[K] = {0};
        bad[1] = -1;
        o.prior = truth, o.prior_counts = bad;
        CHECK(jsmf_refine(start, &docs, &o, &m, NULL) == JSMF_EINVAL);
        o.prior_counts = NULL;
        CHECK(jsmf_refine(start, &docs, &o, &m, NULL) == JSMF_EINVAL);
    }

    /* the reference's digamma against lgamma's central difference */
    for (double x = 0.003; x < 500; x *= 2.9) {
        double h = 1e-4 * x, fd = (lgamma(x + h) - lgamma(x - h)) / (2 * h);
        CHECK_NEAR(ref_digamma(x), fd, 1e-6 * fmax(1, fabs(fd)));
    }

    /* over-relaxation and a learned alpha, either mode, eight passes against the reference:
     * objective, topics and the learned pseudo-counts; then each undone changes the topics */
    for (int exclude = 0; exclude < 2; exclude++) {
        double aref[K];
        jsmf_refine_opts_init(&o);
        o.iters = 8, o.theta_steps = 4, o.threads = 2, o.method = exclude ? JSMF_REFINE_CVB0 : JSMF_REFINE_EM;
        o.learn_alpha = JSMF_REFINE_ALPHA_LEARN;
        CHECK(o.overrelax == 5); /* the default */
        CHECK_OK(jsmf_refine(start, &docs, &o, &m, &r));
        reference(H, start->B, &o, 1, Bref, obj_ref, aref);
        for (uint32_t it = 0; it < 8; it++)
            CHECK_NEAR(r.objective[it], obj_ref[it], 1e-10);
        double err = 0, amin = INFINITY, amax = 0;
        for (uint32_t i = 0; m && i < N * K; i++)
            err = fmax(err, fabs(m->B[i] - Bref[i]));
        CHECK(m && err < 1e-10 && m->alpha);
        for (uint32_t t = 0; m && m->alpha && t < K; t++) {
            CHECK_NEAR(m->alpha[t], aref[t], 1e-10);
            amin = fmin(amin, m->alpha[t]), amax = fmax(amax, m->alpha[t]);
        }
        fprintf(stderr, "exclude %d: learned alpha in [%g, %g]\n", exclude, amin, amax);
        CHECK(amax - amin > 1e-3 && fabs(amin - o.alpha) > 1e-3); /* learned, asymmetric */
        CHECK(m && strstr(m->summary_json, "\"alpha_learned\": true") &&
              strstr(m->summary_json, "\"overrelax\": 5"));
        jsmf_model *plain = NULL, *fixed = NULL;
        o.overrelax = 1;
        CHECK_OK(jsmf_refine(start, &docs, &o, &plain, NULL));
        o.overrelax = 5, o.learn_alpha = JSMF_REFINE_ALPHA_FIXED;
        CHECK_OK(jsmf_refine(start, &docs, &o, &fixed, NULL));
        double dp = 0, df = 0;
        for (uint32_t i = 0; m && plain && fixed && i < N * K; i++)
            dp = fmax(dp, fabs(m->B[i] - plain->B[i])), df = fmax(df, fabs(m->B[i] - fixed->B[i]));
        CHECK(dp > 1e-6 && df > 1e-6 && fixed && !fixed->alpha);
        jsmf_model_free(plain);
        jsmf_model_free(fixed);
        jsmf_refine_result_free(&r);
        jsmf_model_free(m);
        m = NULL;
    }

    /* learn_alpha auto: learned on documents of at least JSMF_REFINE_ALPHA_AUTO_LEN tokens on
     * average (these have 24: the defaults below write no alpha), not below */
    {
        enum { LONG_M = 12 };
        static uint32_t HL[LONG_M * N], idl[LONG_M * N], cl[LONG_M * N];
        static uint64_t offl[LONG_M + 1];
        for (uint32_t len = JSMF_REFINE_ALPHA_AUTO_LEN - 1; len <= JSMF_REFINE_ALPHA_AUTO_LEN;
             len++) {
            memset(HL, 0, sizeof HL);
            for (uint32_t d = 0; d < LONG_M; d++) {
                planted_theta(theta);
                for (uint32_t i = 0; i < len; i++) {
                    uint32_t t = draw(theta, K, 1);
                    HL[d * N + draw(truth + t, N, K)]++;
                }
            }
            uint32_t e = 0;
            for (uint32_t d = 0; d < LONG_M; d++) {
                offl[d] = e;
                for (uint32_t w = 0; w < N; w++)
                    if (HL[d * N + w])
                        idl[e] = w, cl[e++] = HL[d * N + w];
            }
            offl[LONG_M] = e;
            jsmf_doc_csr lc = {N, LONG_M, offl, idl, cl, NULL};
            jsmf_doc_source ls;
            CHECK_OK(jsmf_doc_csr_source(&lc, 0, &ls));
            jsmf_refine_opts_init(&o);
            o.iters = 4, o.threads = 2;
            CHECK_OK(jsmf_refine(start, &ls, &o, &m, NULL));
            CHECK(m && !m->alpha == (len < JSMF_REFINE_ALPHA_AUTO_LEN));
            jsmf_model_free(m);
            m = NULL;
            jsmf_doc_csr_source_free(&ls);
        }
    }

    /* the stopping rule: stops at the first pass after two rises below tol, never before */
    jsmf_refine_opts_init(&o);
    o.threads = 2, o.method = JSMF_REFINE_EM, o.iters = 500, o.tol = 1e-4;
    CHECK_OK(jsmf_refine(start, &docs, &o, &m, &r));
    CHECK(r.iters >= 3 && r.iters < 500);
    for (uint32_t it = 2; it < r.iters; it++) {
        int small = r.objective[it] - r.objective[it - 1] < o.tol &&
                    r.objective[it - 1] - r.objective[it - 2] < o.tol;
        CHECK(small == (it == r.iters - 1));
    }
    fprintf(stderr, "tol %g: stopped after %u iterations\n", o.tol, r.iters);
    {   /* min_iters: the rule waits for it, then stops at once */
        uint32_t free_stop = r.iters;
        jsmf_refine_result r2;
        jsmf_model *m2 = NULL;
        o.min_iters = free_stop + 5;
        CHECK_OK(jsmf_refine(start, &docs, &o, &m2, &r2));
        CHECK(r2.iters == free_stop + 5);
        jsmf_refine_result_free(&r2);
        jsmf_model_free(m2);
        o.min_iters = 0;
    }
    jsmf_refine_result_free(&r);
    jsmf_model_free(m);
    m = NULL;
    /* with a learned prior the objective's prior term falls as a grows: the rule watches the
     * log-likelihood, which still rises, and does not stop at the third pass */
    jsmf_refine_opts_init(&o);
    o.threads = 2, o.iters = 500, o.tol = 1e-4, o.learn_alpha = JSMF_REFINE_ALPHA_LEARN;
    CHECK_OK(jsmf_refine(start, &docs, &o, &m, &r));
    CHECK(r.objective[2] < r.objective[1]); /* the objective alone would stop here */
    CHECK(r.iters > 3 && r.iters < 500);
    fprintf(stderr, "tol %g, alpha learned: stopped after %u iterations\n", o.tol, r.iters);
    jsmf_refine_result_free(&r);
    jsmf_model_free(m);
    m = NULL;

    /* EM without over-relaxation: the objective never decreases */
    jsmf_refine_opts_init(&o);
    o.threads = 2, o.method = JSMF_REFINE_EM, o.overrelax = 1;
    CHECK_OK(jsmf_refine(start, &docs, &o, &m, &r));
    for (uint32_t it = 1; it < r.iters; it++)
        CHECK(r.objective[it] >= r.objective[it - 1] - 1e-12);
    CHECK(r.objective[r.iters - 1] > r.objective[0] + 0.05);
    jsmf_refine_result_free(&r);
    jsmf_model_free(m);

    /* the defaults (exclude mode): the objective rises here, held-out likelihood improves,
     * the model is a valid one (columns of B and the entries of A sum to 1) */
    jsmf_refine_opts_init(&o);
    o.threads = 2;
    CHECK_OK(jsmf_refine(start, &docs, &o, &m, &r));
    /* iters AUTO: the budget's passes, all of them (few documents: the most) */
    CHECK(o.iters == JSMF_REFINE_ITERS_AUTO);
    CHECK(r.iters == JSMF_REFINE_AUTO_MAX && r.iters == jsmf_refine_auto_iters(docs.nnz, K));
    CHECK(r.objective[r.iters - 1] > r.objective[0] + 0.05);
    for (uint32_t it = 1; it < r.iters; it++)
        fprintf(stderr, "%s%.6f", it == 1 ? "objective: " : " ", r.objective[it]);
    fprintf(stderr, "\n");
    /* CVB0 with plain updates: its fixed point is not the MAP point: the objective rises at
     * every one of the first iterations here, then drifts down by 1e-3 of its rise as the pass
     * settles (not so for EM); over-relaxed, it gets higher in as many passes */
    {
        jsmf_refine_opts p = o;
        jsmf_refine_result rp;
        jsmf_model *mp = NULL;
        p.overrelax = 1;
        CHECK_OK(jsmf_refine(start, &docs, &p, &mp, &rp));
        for (uint32_t it = 1; it < 15 && it < rp.iters; it++)
            CHECK(rp.objective[it] >= rp.objective[it - 1] - 1e-12);
        for (uint32_t it = 15; it < rp.iters; it++)
            CHECK(rp.objective[it] > rp.objective[0] + 0.9 * (rp.objective[14] - rp.objective[0]));
        /* the first pass within 0.005 of plain CVB0's best: over-relaxed, sooner */
        double top = -INFINITY;
        uint32_t at = 0, at_plain = 0;
        for (uint32_t it = 0; it < rp.iters; it++)
            top = fmax(top, rp.objective[it]);
        while (at < r.iters && r.objective[at] < top - 0.005)
            at++;
        while (at_plain < rp.iters && rp.objective[at_plain] < top - 0.005)
            at_plain++;
        fprintf(stderr, "within 0.005 of plain CVB0's best objective: pass %u over-relaxed, "
                "%u plain\n", at + 1, at_plain + 1);
        CHECK(at < at_plain);
        jsmf_refine_result_free(&rp);
        jsmf_model_free(mp);
    }
    double before = heldout(start->B, fitH, evalH), after = heldout(m->B, fitH, evalH),
           best = heldout(truth, fitH, evalH);
    fprintf(stderr, "held-out LL/token: start %.4f, refined %.4f, planted %.4f\n", before,
            after, best);
    CHECK(after > before + 0.05);
    CHECK(after > best - 0.05);
    double a_sum = 0;
    for (uint32_t t = 0; t < K; t++) {
        double s = 0;
        for (uint32_t w = 0; w < N; w++)
            s += m->B[w * K + t];
        CHECK_NEAR(s, 1, 1e-12);
    }
    for (uint32_t i = 0; i < K * K; i++)
        a_sum += m->A[i];
    CHECK_NEAR(a_sum, 1, 1e-12);
    CHECK(m->anchors == NULL && m->alpha == NULL && m->summary_json &&
          strstr(m->summary_json, "\"kind\": \"refined\"") &&
          strstr(m->summary_json, "\"objective_per_token\""));

    /* the same thread count gives the same bits; another count the same up to rounding */
    jsmf_model *again = NULL, *one = NULL;
    CHECK_OK(jsmf_refine(start, &docs, &o, &again, NULL));
    CHECK(again && same(m->B, again->B, N * K) && same(m->A, again->A, K * K));
    o.threads = 1;
    CHECK_OK(jsmf_refine(start, &docs, &o, &one, NULL));
    double err = 0;
    for (uint32_t i = 0; one && i < N * K; i++)
        err = fmax(err, fabs(m->B[i] - one->B[i]));
    CHECK(err < 1e-10);
    jsmf_model_free(again);
    jsmf_model_free(one);

    /* the budget: the most passes up to JSMF_REFINE_AUTO_WORK entries x topics, then as many
     * fewer as keep the product, never fewer than the least */
    const uint64_t w = (uint64_t)JSMF_REFINE_AUTO_WORK;
    CHECK(jsmf_refine_auto_iters(w / 50, 50) == JSMF_REFINE_AUTO_MAX);
    CHECK(jsmf_refine_auto_iters(2 * w / 50, 50) == JSMF_REFINE_AUTO_MAX / 2);
    CHECK(jsmf_refine_auto_iters(5 * w / 50, 50) == JSMF_REFINE_AUTO_MAX / 5);
    CHECK(jsmf_refine_auto_iters(20000000, 100) == JSMF_REFINE_AUTO_MIN); /* planted N=100k */
    CHECK(jsmf_refine_auto_iters(UINT64_MAX, 1000) == JSMF_REFINE_AUTO_MIN);

    /* bad input: refused, *out untouched */
    jsmf_model *none = NULL;
    jsmf_refine_opts bad = o;
    bad.alpha = 0;
    CHECK(jsmf_refine(start, &docs, &bad, &none, NULL) == JSMF_EINVAL && !none);
    bad = o, bad.beta = -1;
    CHECK(jsmf_refine(start, &docs, &bad, &none, NULL) == JSMF_EINVAL && !none);
    bad = o, bad.mix = 1;
    CHECK(jsmf_refine(start, &docs, &bad, &none, NULL) == JSMF_EINVAL && !none);
    bad = o, bad.batches = 0;
    CHECK(jsmf_refine(start, &docs, &bad, &none, NULL) == JSMF_EINVAL && !none);
    bad = o, bad.batches = M + 1;
    CHECK(jsmf_refine(start, &docs, &bad, &none, NULL) == JSMF_EINVAL && !none);
    bad = o, bad.tol = -1;
    CHECK(jsmf_refine(start, &docs, &bad, &none, NULL) == JSMF_EINVAL && !none);
    bad = o, bad.tol = NAN;
    CHECK(jsmf_refine(start, &docs, &bad, &none, NULL) == JSMF_EINVAL && !none);
    bad = o, bad.overrelax = 0.5;
    CHECK(jsmf_refine(start, &docs, &bad, &none, NULL) == JSMF_EINVAL && !none);
    bad = o, bad.overrelax = NAN;
    CHECK(jsmf_refine(start, &docs, &bad, &none, NULL) == JSMF_EINVAL && !none);
    bad = o, bad.learn_alpha = 3;
    CHECK(jsmf_refine(start, &docs, &bad, &none, NULL) == JSMF_EINVAL && !none);
    CHECK(jsmf_refine(start, NULL, &o, &none, NULL) == JSMF_EINVAL && !none);
    jsmf_doc_source wrong = docs;
    wrong.n = N + 1; /* documents over another vocabulary */
    CHECK(jsmf_refine(start, &wrong, &o, &none, NULL) == JSMF_EINVAL && !none);
    CHECK(strstr(jsmf_errmsg(), "words") != NULL);

    jsmf_refine_result_free(&r);
    jsmf_model_free(m);
    jsmf_model_free(start);
    jsmf_doc_csr_source_free(&docs);
    CHECK_DONE();
}
