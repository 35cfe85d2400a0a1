/* test_threads_per_call.c — thread counts are options of a call, not process-wide state: a
 * counting pass (jsmf_read_opts.threads: inline or threaded zstd decoding, serial or parallel
 * counting), topic mixtures and document metrics (jsmf_infer_opts.threads) give the same result
 * on 1, 2 and 3 threads and leave the caller's OpenMP default as it was. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zstd.h>

#include "check.h"
#include "jsmf_eval.h"

enum { N = 50, K = 4, DOCS = 200 };

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t draw(uint32_t n)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng >> 33) % n;
}

/* 2000 text documents, zstd-compressed: the reader may decode on a thread of its own. */
static void write_corpus(const char *path)
{
    size_t cap = 1 << 20, len = 0;
    char *text = malloc(cap);
    for (int d = 0; d < 2000; d++) {
        int words = 3 + (int)draw(12);
        for (int t = 0; t < words; t++) {
            uint32_t w = draw(60);
            len += (size_t)snprintf(text + len, cap - len, "%sq%c%c", t ? " " : "",
                                    'a' + w / 26, 'a' + w % 26);
        }
        text[len++] = '\n';
    }
    size_t bound = ZSTD_compressBound(len);
    void *z = malloc(bound);
    size_t zlen = ZSTD_compress(z, bound, text, len, 3);
    FILE *f = fopen(path, "wb");
    fwrite(z, 1, zlen, f);
    fclose(f);
    free(z), free(text);
}

static int same_vocab(const jsmf_vocab *a, const jsmf_vocab *b)
{
    if (a->n != b->n)
        return 0;
    for (uint32_t i = 0; i < a->n; i++)
        if (strcmp(a->words[i], b->words[i]) || a->df[i] != b->df[i] || a->tf[i] != b->tf[i])
            return 0;
    return 1;
}

static void test_counting(const char *path)
{
    int before = omp_get_max_threads();
    const char *in[] = {path};
    jsmf_vocab_opts vo = JSMF_VOCAB_OPTS_DEFAULT;
    vo.min_df = 1, vo.min_doc_len = 1;
    jsmf_vocab *v[3] = {NULL, NULL, NULL};
    jsmf_vocab_stats st;
    for (int t = 0; t < 3; t++) {
        jsmf_read_opts ro = JSMF_READ_OPTS_DEFAULT;
        ro.threads = t + 1; /* 1: inline decoding; 2: a decoder thread; 3: parallel counting */
        CHECK_OK(jsmf_vocab_count(in, 1, &ro, &vo, NULL, NULL, &v[t], &st));
        CHECK(omp_get_max_threads() == before);
    }
    CHECK(v[0] && v[0]->n == 60);
    CHECK(v[0] && v[1] && same_vocab(v[0], v[1]));
    CHECK(v[0] && v[2] && same_vocab(v[0], v[2]));
    for (int t = 0; t < 3; t++)
        jsmf_vocab_free(v[t]);
}

static jsmf_model *make_model(void)
{
    jsmf_model *m = NULL;
    if (jsmf_model_new(N, K, &m))
        return NULL;
    for (int t = 0; t < K; t++) {
        double s = 0;
        for (int w = 0; w < N; w++)
            s += m->B[w * K + t] = 1 + draw(100) + (w % K == t ? 400 : 0);
        for (int w = 0; w < N; w++)
            m->B[w * K + t] /= s;
    }
    for (int i = 0; i < K * K; i++)
        m->A[i] = 1.0 / (K * K);
    return m;
}

/* Documents of 5-24 distinct words with counts 1-3. */
static void make_batch(jsmf_docbatch *b)
{
    memset(b, 0, sizeof *b);
    b->ndocs = DOCS;
    b->start = calloc(DOCS + 1, sizeof *b->start);
    b->ids = calloc(DOCS * N, sizeof *b->ids);
    b->counts = calloc(DOCS * N, sizeof *b->counts);
    b->oov = calloc(DOCS, sizeof *b->oov);
    uint64_t at = 0;
    for (int d = 0; d < DOCS; d++) {
        b->start[d] = at;
        uint32_t first = draw(N - 25), n = 5 + draw(20);
        for (uint32_t i = 0; i < n; i++, at++)
            b->ids[at] = first + i, b->counts[at] = 1 + draw(3);
    }
    b->start[DOCS] = at;
}

static void test_infer_and_metrics(void)
{
    int before = omp_get_max_threads();
    jsmf_model *m = make_model();
    CHECK(m != NULL);
    if (!m)
        return;
    jsmf_docbatch b;
    make_batch(&b);
    double *theta[2] = {malloc(DOCS * K * sizeof(double)), malloc(DOCS * K * sizeof(double))};
    jsmf_docmetrics_result r[2];
    jsmf_docmetrics *acc[2] = {NULL, NULL};
    for (int t = 0; t < 2; t++) {
        jsmf_infer_opts io = JSMF_INFER_OPTS_DEFAULT;
        io.threads = t + 1;
        CHECK_OK(jsmf_theta_fit_batch(m, &b, &io, theta[t]));
        CHECK(omp_get_max_threads() == before);
        CHECK_OK(jsmf_docmetrics_new(m, 5, 0.01, &io, &acc[t]));
        CHECK_OK(jsmf_docmetrics_add(acc[t], &b));
        CHECK_OK(jsmf_docmetrics_result_get(acc[t], &r[t]));
        CHECK(omp_get_max_threads() == before);
    }
    CHECK(!memcmp(theta[0], theta[1], DOCS * K * sizeof(double)));
    CHECK(r[0].heldout_tokens > 0 && r[0].coherence_docs == DOCS);
    CHECK(r[0].heldout_ll == r[1].heldout_ll && r[0].coherence == r[1].coherence);
    CHECK(r[0].heldout_tokens == r[1].heldout_tokens);
    for (int t = 0; t < 2; t++)
        free(theta[t]), jsmf_docmetrics_free(acc[t]);
    free(b.start), free(b.ids), free(b.counts), free(b.oov);
    jsmf_model_free(m);
}

int main(void)
{
    char path[] = "/tmp/jsmf-test-threads-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        perror("mkstemp");
        return 1;
    }
    close(fd);
    write_corpus(path);
    omp_set_num_threads(3); /* the caller's default, which no call may change */
    test_counting(path);
    test_infer_and_metrics();
    CHECK(omp_get_max_threads() == 3);
    unlink(path);
    CHECK_DONE();
}
