/* test_store_docs.c — the documents view of a store that holds its documents, on a store that
 * grew between two nights: the documents read back are the ones ingested (ids as they were when
 * counted), M, nnz(H), tokens and admission points as the store says, T as jsmf_doc_mass adds
 * it, and C from them by a small dense reference equals the rows view (computed from the
 * documents, in one pass and in row ranges) and a store of the same inputs that holds rows. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "jsmf_ingest.h"
#include "jsmf_store.h"

#define N0 40     /* the first vocabulary: w00 .. w39 */
#define NX 20     /* words met later: x00 .. x19 */
#define DOCS 300
#define NIGHT1 150
#define MAXLEN 48

static uint32_t doc_w[DOCS][MAXLEN], doc_len[DOCS]; /* word numbers 0 .. N0 + NX - 1 */
static char tmpdir[256];

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static uint64_t next_rand(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

static void word_name(uint32_t w, char *buf)
{
    snprintf(buf, 8, w < N0 ? "w%02u" : "x%02u", w < N0 ? w : w - N0);
}

static void make_corpus(void)
{
    for (int d = 0; d < DOCS; d++) {
        doc_len[d] = (uint32_t)(next_rand() % 30);
        for (uint32_t i = 0; i < doc_len[d]; i++) {
            uint32_t a = (uint32_t)(next_rand() % (N0 + NX)), b = (uint32_t)(next_rand() % (N0 + NX));
            doc_w[d][i] = a < b ? a : b;
        }
    }
}

/* What a store should hold: per contributing document, ids ascending and counts. */
static uint64_t exp_m, exp_nnz, exp_tokens, exp_off[DOCS + 1];
static uint32_t exp_ids[DOCS * MAXLEN], exp_cnt[DOCS * MAXLEN];

/* Ingest documents [from, to) as one input, word numbers mapped through the store's vocabulary
 * (words it lacks are out of vocabulary, handed over as words so the store counts them). */
static int ingest_night(jsmf_store *s, int from, int to)
{
    jsmf_vocab *v;
    jsmf_wordmap *map;
    int rc = jsmf_store_vocab_get(s, &v);
    if (rc || (rc = jsmf_wordmap_new(v, &map)))
        return rc;
    jsmf_ingest_opts o = {.threads = 2, .mem_below_need = 1};
    jsmf_ingest *g;
    if ((rc = jsmf_ingest_new(s, &o, &g)))
        return rc;
    jsmf_store_input rec = {.fingerprint = (uint64_t)from + 1};
    snprintf(rec.path, sizeof rec.path, "night-%d", from);
    rc = jsmf_ingest_input(g, &rec);
    for (int d = from; d < to && !rc; d++) {
        uint32_t ids[MAXLEN], n = 0, oov = 0, lens[MAXLEN], cnts[MAXLEN];
        char names[MAXLEN][8];
        const char *words[MAXLEN];
        for (uint32_t i = 0; i < doc_len[d]; i++) {
            char w[8];
            word_name(doc_w[d][i], w);
            uint32_t id = jsmf_wordmap_find(map, w, strlen(w));
            if (id != UINT32_MAX) {
                ids[n++] = id;
            } else {
                uint32_t k = 0;
                while (k < oov && strcmp(names[k], w))
                    k++;
                if (k == oov) {
                    strcpy(names[oov], w);
                    words[oov] = names[oov], lens[oov] = (uint32_t)strlen(w), cnts[oov++] = 0;
                }
                cnts[k]++;
            }
        }
        uint64_t toks_oov = 0;
        for (uint32_t k = 0; k < oov; k++)
            toks_oov += cnts[k];
        jsmf_ingest_doc_words(g, words, lens, cnts, oov);
        rc = jsmf_ingest_doc(g, ids, NULL, n, toks_oov, (uint64_t)d * 10, (uint64_t)d + 2,
                             (uint64_t)(d - from + 1));
    }
    if (!rc)
        rc = jsmf_ingest_input_done(g);
    rc = rc ? (jsmf_ingest_free(g), rc) : jsmf_ingest_finish(g, NULL);
    jsmf_wordmap_free(map);
    jsmf_vocab_free(v);
    return rc;
}

/* A store of the corpus grown over two nights, holding `hold`; *added: words admitted. */
static int make_store(const char *name, uint32_t hold, uint32_t *added)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    jsmf_vocab *v = calloc(1, sizeof *v);
    v->n = N0, v->words = calloc(N0, sizeof *v->words);
    for (uint32_t i = 0; i < N0; i++)
        v->words[i] = malloc(8), word_name(i, v->words[i]);
    jsmf_store_params p = {.min_doc_len = 5, .tok_min_len = 3, .tok_max_len = 64, .hold = hold};
    jsmf_store *s;
    int rc = jsmf_store_create(path, v, &p, &s);
    jsmf_vocab_free(v);
    if (rc)
        return rc;
    jsmf_store_rule r = {.state = JSMF_RULE_GROW, .min_df = 3, .max_df_frac = 2.0, .stopwords = "none"};
    rc = jsmf_store_rule_set(s, &r, NULL);
    if (!rc)
        rc = ingest_night(s, 0, NIGHT1);
    if (!rc)
        rc = jsmf_store_admit(s, NULL, added);
    if (!rc)
        rc = ingest_night(s, NIGHT1, DOCS);
    jsmf_store_close(s);
    return rc;
}

/* The expected documents, with the ids the docs store gave its words (read back by name). */
static void expected_docs(jsmf_store *s)
{
    jsmf_vocab *v;
    jsmf_wordmap *map;
    CHECK_OK(jsmf_store_vocab_get(s, &v));
    CHECK_OK(jsmf_wordmap_new(v, &map));
    exp_m = exp_nnz = exp_tokens = 0;
    for (int d = 0; d < DOCS; d++) {
        uint32_t cnt[N0 + NX] = {0}, len = 0; /* by store id */
        /* a word counts only when the store knew it then: night 1 knows the first N0 only */
        for (uint32_t i = 0; i < doc_len[d]; i++) {
            char w[8];
            word_name(doc_w[d][i], w);
            uint32_t id = jsmf_wordmap_find(map, w, strlen(w));
            if (id != UINT32_MAX && (d >= NIGHT1 || id < N0))
                cnt[id]++, len++;
        }
        if (len < 5)
            continue;
        for (uint32_t id = 0; id < v->n; id++)
            if (cnt[id])
                exp_ids[exp_nnz] = id, exp_cnt[exp_nnz++] = cnt[id];
        exp_off[++exp_m] = exp_nnz, exp_tokens += len;
    }
    jsmf_wordmap_free(map);
    jsmf_vocab_free(v);
}

typedef struct doc_check {
    uint64_t next, nnz;
    int bad;
} doc_check;

static int check_block(void *arg, const jsmf_doc_block *b)
{
    doc_check *c = arg;
    if (b->first != c->next)
        c->bad++;
    for (uint32_t d = 0; d < b->n_docs; d++, c->next++) {
        uint64_t k = b->offs[d + 1] - b->offs[d];
        if (c->next >= exp_m || k != exp_off[c->next + 1] - exp_off[c->next] ||
            memcmp(b->ids + b->offs[d], exp_ids + exp_off[c->next], k * 4) ||
            memcmp(b->counts + b->offs[d], exp_cnt + exp_off[c->next], k * 4))
            c->bad++;
        c->nnz += k;
    }
    return 0;
}

typedef struct dense {
    uint32_t n;
    double *c;
    uint64_t rows;
} dense;

static int to_dense(void *arg, uint32_t row, const uint32_t *cols, const double *vals, uint32_t n)
{
    dense *d = arg;
    for (uint32_t i = 0; i < n; i++)
        d->c[(size_t)row * d->n + cols[i]] = vals[i];
    d->rows++;
    return 0;
}

static void read_rows(jsmf_store *s, dense *d)
{
    jsmf_source src;
    CHECK_OK(jsmf_store_source(s, &src));
    d->n = src.n;
    d->c = calloc((size_t)src.n * src.n, sizeof *d->c);
    d->rows = 0;
    CHECK_OK(src.scan(src.ctx, to_dense, d));
    jsmf_store_source_release(s);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/jsmf-test-docs-%d", (int)getpid());
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s", tmpdir, tmpdir);
    if (system(cmd))
        return 1;
    setenv("JSMF_STORE_NOSYNC", "1", 1);
    make_corpus();
    uint32_t added_d = 0, added_r = 0;
    CHECK_OK(make_store("docs", JSMF_HOLD_DOCS, &added_d));
    CHECK_OK(make_store("rows", JSMF_HOLD_ROWS, &added_r));
    CHECK(added_d > 0 && added_d == added_r);

    char path[512];
    jsmf_store *s, *r;
    snprintf(path, sizeof path, "%s/docs", tmpdir);
    CHECK_OK(jsmf_store_open(path, JSMF_STORE_RDONLY, &s));
    snprintf(path, sizeof path, "%s/rows", tmpdir);
    CHECK_OK(jsmf_store_open(path, JSMF_STORE_RDONLY, &r));
    if (check_failures)
        CHECK_DONE();
    expected_docs(s);
    jsmf_store_stats st;
    CHECK_OK(jsmf_store_stats_get(s, &st));
    CHECK(st.hold == JSMF_HOLD_DOCS && st.docs == exp_m && st.doc_nnz == exp_nnz);
    CHECK(st.format_version == JSMF_STORE_FORMAT_VERSION && st.n_words == N0 + added_d);
    uint64_t *adm;
    CHECK_OK(jsmf_store_admissions_get(s, &adm));

    /* the documents view: the documents ingested, counts and admission points */
    jsmf_source src;
    CHECK_OK(jsmf_store_source(s, &src));
    const jsmf_doc_source *dv = src.docs;
    CHECK(dv != NULL);
    double total = 0;
    if (dv) {
        CHECK(dv->n == st.n_words && dv->n_docs == exp_m && dv->nnz == exp_nnz &&
              dv->tokens == exp_tokens);
        CHECK(dv->admit != NULL);
        for (uint32_t i = 0; dv->admit && i < dv->n; i++)
            CHECK(dv->admit[i] == adm[i]);
        doc_check c = {0, 0, 0};
        CHECK_OK(dv->scan(dv->ctx, check_block, &c));
        CHECK(c.bad == 0 && c.next == exp_m && c.nnz == exp_nnz);
        /* T: jsmf_doc_mass over the documents, as an in-memory view of them adds it */
        jsmf_doc_csr csr = {st.n_words, exp_m, exp_off, exp_ids, exp_cnt, adm};
        jsmf_doc_source mem;
        CHECK_OK(jsmf_doc_csr_source(&csr, 0, &mem));
        CHECK(mem.total == dv->total && mem.total > 0);
        total = dv->total;
        jsmf_doc_csr_source_free(&mem);
    }
    jsmf_store_source_release(s);

    /* a dense reference from the documents: C_ij = sum_m (h_i h_j - [i = j] h_i) / (n (n - 1))
     * / (M - max(a_i, a_j)) / T */
    uint32_t n = st.n_words;
    double *ref = calloc((size_t)n * n, sizeof *ref), sum = 0;
    for (uint64_t m = 0; m < exp_m; m++) {
        double len = 0;
        for (uint64_t x = exp_off[m]; x < exp_off[m + 1]; x++)
            len += exp_cnt[x];
        for (uint64_t x = exp_off[m]; x < exp_off[m + 1]; x++)
            for (uint64_t y = exp_off[m]; y < exp_off[m + 1]; y++) {
                uint32_t i = exp_ids[x], j = exp_ids[y];
                double h = (double)exp_cnt[x] * exp_cnt[y] - (i == j ? exp_cnt[x] : 0);
                uint64_t a = adm[i] > adm[j] ? adm[i] : adm[j];
                ref[(size_t)i * n + j] += h / (len * (len - 1)) / (double)(exp_m - a);
            }
    }
    for (size_t x = 0; x < (size_t)n * n; x++)
        sum += ref[x];
    CHECK(fabs(sum - total) <= 1e-12 * sum);
    dense dd, dr, dp;
    read_rows(s, &dd);
    read_rows(r, &dr);
    setenv("JSMF_STORE_DOCS_MEM", "20000", 1); /* rows in ranges, several passes */
    read_rows(s, &dp);
    unsetenv("JSMF_STORE_DOCS_MEM");
    double worst = 0;
    for (size_t x = 0; x < (size_t)n * n; x++) {
        double d = fabs(dd.c[x] - ref[x] / sum);
        worst = d > worst ? d : worst;
    }
    CHECK(worst <= 1e-14);
    CHECK(!memcmp(dd.c, dr.c, (size_t)n * n * sizeof *dd.c)); /* bit for bit: the same sums */
    CHECK(!memcmp(dd.c, dp.c, (size_t)n * n * sizeof *dd.c));
    CHECK(dd.rows == dr.rows && dd.rows == dp.rows && dd.rows > 0);
    jsmf_store_check_result ck;
    CHECK_OK(jsmf_store_check(s, &ck));
    CHECK(ck.docs == exp_m && ck.doc_entries == exp_nnz);
    free(dd.c), free(dr.c), free(dp.c), free(ref), free(adm);
    jsmf_store_close(s);
    jsmf_store_close(r);
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd))
        return 1;
    CHECK_DONE();
}
