/* test_store_accum.c — the store and the accumulator fed documents directly: exact sums against a
 * naive reference, invariance to threads / memory budget / interruption, merge, map growth,
 * versions, the writer lock and a simulated full disk. */
#include <lmdb.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "jsmf_ingest.h"
#include "jsmf_store.h"
#include "../../src/ingest/accum.h"
#include "store/flush.h"
#include "store/store.h"

#define N 60
#define DOCS 400

static uint32_t doc_ids[DOCS][64], doc_cnt[DOCS][64], doc_len[DOCS];
static char tmpdir[256];
static int test_mode;         /* accumulator: 0 auto, 1 hash, 2 dense */
static double test_every;     /* checkpoint interval in seconds (0 = default) */

static uint64_t rng = 88172645463325252ULL;
static uint64_t next_rand(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

static void make_corpus(void)
{
    for (int d = 0; d < DOCS; d++) {
        doc_len[d] = (uint32_t)(next_rand() % 40); /* some below min_doc_len */
        for (uint32_t i = 0; i < doc_len[d]; i++) {
            /* skewed ids, repeats allowed */
            uint32_t a = (uint32_t)(next_rand() % N), b = (uint32_t)(next_rand() % N);
            doc_ids[d][i] = a < b ? a : b;
            doc_cnt[d][i] = 1 + (uint32_t)(next_rand() % 3);
        }
    }
}

static jsmf_vocab *make_vocab(void)
{
    jsmf_vocab *v = calloc(1, sizeof *v);
    v->n = N;
    v->words = calloc(N, sizeof *v->words);
    for (int i = 0; i < N; i++) {
        v->words[i] = malloc(16);
        snprintf(v->words[i], 16, "w%02d", i);
    }
    return v;
}

static char *store_path(const char *name)
{
    static char buf[8][512];
    static int k;
    char *p = buf[k++ % 8];
    snprintf(p, 512, "%s/%s", tmpdir, name);
    return p;
}

/* Ingest documents [from, to) as one input into store `name` (created when new). Stops after
 * `stop_after` documents without committing (0 = never) to imitate a kill. */
static int ingest_range(const char *name, int from, int to, int threads, uint64_t mem,
                        int stop_after)
{
    jsmf_store *s;
    int rc = jsmf_store_open(store_path(name), JSMF_STORE_CREATE, &s);
    if (rc)
        return rc;
    if (!store_has_vocab(s)) {
        jsmf_vocab *v = make_vocab();
        jsmf_store_params p = {.min_doc_len = 5, .tok_min_len = 3, .tok_max_len = 64, .hold = JSMF_HOLD_ROWS};
        rc = store_init(s, v, &p, NULL, NULL);
        jsmf_vocab_free(v);
        if (rc) {
            jsmf_store_close(s);
            return rc;
        }
    }
    /* find this input's record (fingerprint = from) to resume */
    jsmf_store_input *recs, rec = {0};
    uint32_t nrec;
    jsmf_store_inputs_get(s, &recs, &nrec);
    rec.fingerprint = (uint64_t)from + 1;
    snprintf(rec.path, sizeof rec.path, "docs-%d-%d", from, to);
    for (uint32_t i = 0; i < nrec; i++)
        if (recs[i].fingerprint == rec.fingerprint)
            rec = recs[i];
    free(recs);
    if (rec.state == JSMF_INPUT_COMPLETE) {
        jsmf_store_close(s);
        return JSMF_EEXIST;
    }
    jsmf_ingest_opts o = {.mem = mem, .threads = threads, .accumulator = test_mode,
                          .checkpoint_secs = test_every, .mem_below_need = 1 /* windows */};
    jsmf_ingest *g;
    if ((rc = jsmf_ingest_new(s, &o, &g))) {
        jsmf_store_close(s);
        return rc;
    }
    rc = jsmf_ingest_input(g, &rec);
    int done = 0;
    for (int d = from + (int)rec.next_doc; d < to && !rc; d++) {
        rc = jsmf_ingest_doc(g, doc_ids[d], doc_cnt[d], doc_len[d], (uint64_t)d % 3,
                             (uint64_t)d * 100, (uint64_t)d + 2, (uint64_t)(d - from + 1));
        if (stop_after && ++done == stop_after) {
            jsmf_ingest_free(g);
            jsmf_store_close(s);
            return 1;
        }
    }
    if (!rc)
        rc = jsmf_ingest_input_done(g);
    if (!rc)
        rc = jsmf_ingest_finish(g, NULL);
    else
        jsmf_ingest_free(g);
    jsmf_store_close(s);
    return rc;
}

/* The normalised C of a store as a dense matrix plus counters. */
typedef struct dense {
    double c[N][N];
    jsmf_store_stats st;
} dense;

static int fill_row(void *arg, uint32_t row, const uint32_t *cols, const double *vals, uint32_t n)
{
    dense *d = arg;
    for (uint32_t i = 0; i < n; i++)
        d->c[row][cols[i]] = vals[i];
    return 0;
}

static int count_row(void *arg, uint32_t row, const uint32_t *cols, const double *vals, uint32_t n)
{
    (void)row, (void)cols, (void)vals;
    *(uint64_t *)arg += n;
    return 0;
}

static int read_dense(const char *name, dense *d)
{
    memset(d, 0, sizeof *d);
    jsmf_store *s;
    int rc = jsmf_store_open(store_path(name), JSMF_STORE_RDONLY, &s);
    if (rc)
        return rc;
    jsmf_source src;
    if (!(rc = jsmf_store_source(s, &src)))
        rc = src.scan(src.ctx, fill_row, d);
    if (!rc)
        rc = jsmf_store_stats_get(s, &d->st);
    jsmf_store_close(s);
    return rc;
}

static int same(const dense *a, const dense *b)
{
    return !memcmp(a->c, b->c, sizeof a->c) && a->st.docs == b->st.docs &&
           a->st.tokens == b->st.tokens && a->st.nnz == b->st.nnz &&
           a->st.docs_dropped == b->st.docs_dropped && a->st.oov_tokens == b->st.oov_tokens &&
           a->st.tokens_dropped == b->st.tokens_dropped;
}

/* Naive reference: the same per-pair fixed-point rule, summed in a dense int128 matrix. */
static void reference(int from, int to, dense *d)
{
    static jsmf_sum S[N][N];
    memset(S, 0, sizeof S);
    memset(d, 0, sizeof *d);
    uint64_t M = 0;
    for (int m = from; m < to; m++) {
        uint64_t h[N] = {0}, n = 0;
        for (uint32_t i = 0; i < doc_len[m]; i++)
            h[doc_ids[m][i]] += doc_cnt[m][i], n += doc_cnt[m][i];
        if (n < 5)
            continue;
        M++;
        double inv = 1.0 / ((double)n * (double)(n - 1));
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++)
                if (h[i] && h[j])
                    S[i][j] += (jsmf_sum)((double)(h[i] * h[j] - (i == j ? h[i] : 0)) * inv * 0x1p90);
    }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            d->c[i][j] = S[i][j] ? (double)S[i][j] * 0x1p-90 / (double)M : 0.0;
    d->st.docs = M;
}

static void test_fixed_conversion(void)
{
    int bad = 0;
    for (int i = 0; i < 200000; i++) {
        double x = ldexp((double)(next_rand() >> 11), (int)(next_rand() % 130) - 60);
        if (accum_fixed(x) != (jsmf_sum)x)
            bad++;
    }
    CHECK(bad == 0);
    CHECK(accum_fixed(0.0) == 0 && accum_fixed(0x1p90) == (jsmf_sum)1 << 90);
}

static void test_exact_and_invariant(void)
{
    dense *ref = malloc(sizeof *ref), *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    reference(0, DOCS, ref);
    CHECK_OK(ingest_range("one", 0, DOCS, 1, 1 << 30, 0));
    CHECK_OK(read_dense("one", a));
    CHECK(a->st.docs == ref->st.docs);
    CHECK(!memcmp(a->c, ref->c, sizeof a->c));
    double total = 0;
    int asym = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            total += a->c[i][j], asym += a->c[i][j] != a->c[j][i];
    CHECK(asym == 0);
    CHECK_NEAR(total, 1.0, 1e-12);
    /* three threads and a tiny budget: hash tables, many checkpoints, same bits */
    test_mode = 1;
    CHECK_OK(ingest_range("tiny", 0, DOCS, 3, 1, 0));
    CHECK_OK(read_dense("tiny", b));
    CHECK(same(a, b));
    /* interrupted twice, then resumed */
    CHECK(ingest_range("killed", 0, DOCS, 2, 1, 150) == 1);
    CHECK(ingest_range("killed", 0, DOCS, 2, 1, 100) == 1);
    CHECK_OK(ingest_range("killed", 0, DOCS, 2, 1, 0));
    CHECK_OK(read_dense("killed", b));
    CHECK(same(a, b) && b->st.nnz_exact);
    /* checkpoints before an ingest's last leave an upper bound of nnz; the source counts */
    test_every = 1e-9;
    CHECK(ingest_range("partial", 0, DOCS, 2, 1, 61) == 1);
    test_every = 0;
    {
        jsmf_store *ks;
        jsmf_store_stats kst;
        jsmf_source ksrc;
        uint64_t counted = 0;
        CHECK_OK(jsmf_store_open(store_path("partial"), JSMF_STORE_RDONLY, &ks));
        CHECK_OK(jsmf_store_stats_get(ks, &kst));
        CHECK(!kst.nnz_exact && kst.runs > 1);
        CHECK_OK(jsmf_store_source(ks, &ksrc));
        CHECK_OK(ksrc.scan(ksrc.ctx, count_row, &counted));
        CHECK(ksrc.nnz == counted && counted > 0 && counted < kst.nnz);
        jsmf_store_close(ks);
    }
    /* the dense accumulator checkpointing after every document, interrupted */
    test_mode = 2, test_every = 1e-9;
    CHECK(ingest_range("dense", 0, DOCS, 2, 1, 123) == 1);
    CHECK_OK(ingest_range("dense", 0, DOCS, 3, 1, 0));
    CHECK_OK(read_dense("dense", b));
    CHECK(same(a, b));
    /* threads that do not divide N own unequal numbers of dense rows */
    CHECK_OK(ingest_range("dense7", 0, DOCS, 7, 1, 0));
    CHECK_OK(read_dense("dense7", b));
    CHECK(same(a, b));
    test_mode = 1, test_every = 0;
    /* a complete input is recognised */
    CHECK(ingest_range("killed", 0, DOCS, 2, 1, 0) == JSMF_EEXIST);
    /* two inputs appended, and the merge of two halves */
    CHECK_OK(ingest_range("append", 0, 170, 2, 1 << 20, 0));
    /* a reader's source keeps its snapshot while a writer commits */
    jsmf_store *rd;
    jsmf_source src;
    dense *s1 = calloc(1, sizeof *s1), *s2 = calloc(1, sizeof *s2);
    CHECK_OK(jsmf_store_open(store_path("append"), JSMF_STORE_RDONLY, &rd));
    CHECK_OK(jsmf_store_source(rd, &src));
    CHECK_OK(src.scan(src.ctx, fill_row, s1));
    CHECK_OK(ingest_range("append", 170, DOCS, 1, 1 << 20, 0));
    CHECK_OK(src.scan(src.ctx, fill_row, s2));
    CHECK(!memcmp(s1->c, s2->c, sizeof s1->c));
    jsmf_store_source_release(rd);
    memset(s2, 0, sizeof *s2);
    CHECK_OK(jsmf_store_source(rd, &src));
    CHECK_OK(src.scan(src.ctx, fill_row, s2));
    CHECK(memcmp(s1->c, s2->c, sizeof s1->c) != 0);
    jsmf_store_close(rd);
    free(s1), free(s2);
    CHECK_OK(read_dense("append", b));
    CHECK(same(a, b));
    CHECK_OK(ingest_range("half1", 0, 170, 2, 1 << 20, 0));
    CHECK_OK(ingest_range("half2", 170, DOCS, 1, 1 << 20, 0));
    const char *parts[2] = {store_path("half1"), store_path("half2")};
    CHECK_OK(jsmf_store_merge(store_path("merged"), parts, 2));
    CHECK_OK(read_dense("merged", b));
    CHECK(same(a, b));
    CHECK(jsmf_store_merge(store_path("merged"), parts, 2) == JSMF_EEXIST);
    /* merged input records: both inputs complete */
    jsmf_store *s;
    CHECK_OK(jsmf_store_open(store_path("merged"), JSMF_STORE_RDONLY, &s));
    jsmf_store_input *in;
    uint32_t nin = 0;
    CHECK_OK(jsmf_store_inputs_get(s, &in, &nin));
    CHECK(nin == 2 && in[0].state == JSMF_INPUT_COMPLETE && in[1].state == JSMF_INPUT_COMPLETE);
    free(in);
    jsmf_store_close(s);
    free(ref), free(a), free(b);
}

static void test_map_growth(void)
{
    dense *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    setenv("JSMF_STORE_MAPSIZE", "65536", 1);
    setenv("JSMF_STORE_TXN_BYTES", "65536", 1); /* parts of 32 KiB: the map fills in the
                                                   spill thread's transactions too */
    test_mode = 1;
    CHECK_OK(ingest_range("smallmap", 0, DOCS, 2, 1, 0));
    unsetenv("JSMF_STORE_MAPSIZE");
    unsetenv("JSMF_STORE_TXN_BYTES");
    CHECK_OK(read_dense("one", a));
    CHECK_OK(read_dense("smallmap", b));
    CHECK(same(a, b));
    free(a), free(b);
}

static void test_lock_version_enospc(void)
{
    jsmf_store *w1, *w2, *r;
    CHECK_OK(jsmf_store_open(store_path("one"), JSMF_STORE_WRITE, &w1));
    CHECK(jsmf_store_open(store_path("one"), JSMF_STORE_WRITE, &w2) == JSMF_EBUSY);
    CHECK(strstr(jsmf_errmsg(), "one") != NULL);
    CHECK_OK(jsmf_store_open(store_path("one"), JSMF_STORE_RDONLY, &r)); /* readers still fine */
    jsmf_store_close(r);
    jsmf_store_close(w1);
    CHECK(jsmf_store_open(store_path("nowhere"), JSMF_STORE_RDONLY, &r) == JSMF_ENOTFOUND);

    /* simulated full disk on the 3rd commit: the store stays at the 2nd checkpoint */
    dense *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    setenv("JSMF_TEST_ENOSPC_AT_COMMIT", "3", 1);
    test_every = 1e-9; /* a checkpoint per document */
    CHECK(ingest_range("full", 0, DOCS, 1, 1, 0) == JSMF_ENOSPC);
    test_every = 0;
    unsetenv("JSMF_TEST_ENOSPC_AT_COMMIT");
    CHECK_OK(read_dense("full", a));
    CHECK(a->st.docs > 0 && a->st.docs < 300);
    CHECK_OK(ingest_range("full", 0, DOCS, 1, 1, 0)); /* resumes */
    CHECK_OK(read_dense("full", b));
    CHECK_OK(read_dense("one", a));
    CHECK(same(a, b));
    free(a), free(b);

    /* a store of a newer format version is refused */
    MDB_env *env;
    MDB_txn *t;
    MDB_dbi dbi;
    uint64_t ver = 99;
    mdb_env_create(&env);
    mdb_env_set_maxdbs(env, 8);
    CHECK(mdb_env_open(env, store_path("full"), 0, 0644) == 0);
    CHECK(mdb_txn_begin(env, NULL, 0, &t) == 0);
    CHECK(mdb_dbi_open(t, "meta", 0, &dbi) == 0);
    MDB_val k = {7, "version"}, v = {8, &ver};
    CHECK(mdb_put(t, dbi, &k, &v, 0) == 0);
    CHECK(mdb_txn_commit(t) == 0);
    mdb_env_close(env);
    CHECK(jsmf_store_open(store_path("full"), JSMF_STORE_RDONLY, &r) == JSMF_EVERSION);
    CHECK(strstr(jsmf_errmsg(), "version 99") != NULL);
}

/* The dense block's width planned from df: the widest without df, a wide block when the
 * frequent words have the lowest ids, none when no prefix of ids holds most pairs. */
static void test_dense_plan(void)
{
    enum { W = 20000 };
    const uint64_t bytes = (uint64_t)256 << 20;
    uint64_t *df = malloc(W * sizeof *df);
    accum *a;
    CHECK_OK(accum_new(W, 2, bytes, ACCUM_AUTO, NULL, &a));
    uint32_t widest = accum_dense_width(a);
    CHECK(widest >= 256 && (uint64_t)widest * widest * 8 <= bytes / 2);
    accum_free(a);
    struct { int zipf, reversed, want_wide; } cases[] = {{1, 0, 1}, {1, 1, 0}, {0, 0, 0}};
    for (int c = 0; c < 3; c++) {
        for (uint32_t i = 0; i < W; i++)
            df[i] = cases[c].zipf ? 1000000 / ((cases[c].reversed ? W - i : i + 1)) : 50;
        CHECK_OK(accum_new(W, 2, bytes, ACCUM_AUTO, df, &a));
        uint32_t F = accum_dense_width(a);
        CHECK(cases[c].want_wide ? F > widest / 2 && F <= widest : F == 0);
        accum_free(a);
    }
    free(df);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/jsmf-test-store-XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    setenv("JSMF_STORE_NOSYNC", "1", 1); /* kill-safe; fsync would dominate the run time */
    make_corpus();
    test_fixed_conversion();
    test_dense_plan();
    test_exact_and_invariant();
    test_map_growth();
    test_lock_version_enospc();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (!check_failures && system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    CHECK_DONE();
}
