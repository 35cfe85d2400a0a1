/* test_ingest_dist.c — the MPI ingest's whole path on the one-process communicator: a plan that
 * cuts text and LDA-C files into many line-aligned pieces, the shard, the exchange in many
 * rounds, the commit; the store must equal one jsmf_ingest_files wrote (every exact sum, the
 * counters, word statistics and input records). Runs without mpirun, so the sanitizer build
 * covers this code too; tests/py/test_mpi_ingest.py runs it on 1-3 ranks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "jsmf_comm.h"
#include "jsmf_ingest.h"
#include "ingest/ingest_internal.h"
#include "io/vocab_build.h"
#include "store/flush.h"
#include "store/rows.h"

#define NW 60

static jsmf_vocab *make_vocab(void)
{
    jsmf_vocab *v = calloc(1, sizeof *v);
    v->n = NW;
    v->words = calloc(NW, sizeof *v->words);
    for (uint32_t i = 0; i < NW; i++) {
        char w[16];
        snprintf(w, sizeof w, "w%c%c", 'a' + i / 26, 'a' + i % 26);
        v->words[i] = strdup(w);
    }
    return v;
}

/* Text documents (some short, some empty, some with unknown words) and LDA-C documents. */
static void write_inputs(const char *text, const char *ldac)
{
    FILE *f = fopen(text, "w"), *g = fopen(ldac, "w");
    uint64_t x = 12345;
    for (int d = 0; d < 700; d++) {
        int len = (int)(x % 23);
        for (int t = 0; t < len; t++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            uint32_t id = (uint32_t)(x >> 33) % (NW + 5);
            if (id < NW)
                fprintf(f, "%sw%c%c", t ? " " : "", 'a' + id / 26, 'a' + id % 26);
            else
                fprintf(f, "%sunknown", t ? " " : "");
        }
        fputc('\n', f);
        int k = len / 3;
        fprintf(g, "%d", k);
        for (int t = 0; t < k; t++)
            fprintf(g, " %d:%d", (int)((x >> (8 + t)) % NW) , 1 + t % 3);
        fputc('\n', g);
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    }
    fclose(f), fclose(g);
}

typedef struct {
    jsmf_sum *sums; /* N x N */
} dense;

static int put(void *arg, uint32_t row, const uint32_t *cols, const jsmf_sum *sums, uint32_t n)
{
    dense *d = arg;
    for (uint32_t i = 0; i < n; i++)
        d->sums[(size_t)row * NW + cols[i]] += sums[i];
    return 0;
}

static void compare(jsmf_store *a, jsmf_store *b)
{
    dense da = {calloc(NW * NW, sizeof(jsmf_sum))}, db = {calloc(NW * NW, sizeof(jsmf_sum))};
    CHECK_OK(store_scan_sums(a, 0, NW, put, &da));
    CHECK_OK(store_scan_sums(b, 0, NW, put, &db));
    CHECK(!memcmp(da.sums, db.sums, NW * NW * sizeof(jsmf_sum)));
    jsmf_sum any = 0;
    for (int i = 0; i < NW * NW; i++)
        any |= da.sums[i];
    CHECK(any != 0);
    jsmf_store_stats sa, sb;
    CHECK_OK(jsmf_store_stats_get(a, &sa));
    CHECK_OK(jsmf_store_stats_get(b, &sb));
    CHECK(sa.docs == sb.docs && sa.docs_dropped == sb.docs_dropped && sa.tokens == sb.tokens);
    CHECK(sa.oov_tokens == sb.oov_tokens && sa.nnz == sb.nnz && sa.docs > 0);
    CHECK(sa.fingerprint == sb.fingerprint); /* counters, vocabulary and every input record */
    jsmf_vocab *va, *vb;
    CHECK_OK(jsmf_store_vocab_get(a, &va));
    CHECK_OK(jsmf_store_vocab_get(b, &vb));
    CHECK(!memcmp(va->df, vb->df, NW * 8) && !memcmp(va->tf, vb->tf, NW * 8));
    jsmf_store_input *ia, *ib;
    uint32_t na, nb;
    CHECK_OK(jsmf_store_inputs_get(a, &ia, &na));
    CHECK_OK(jsmf_store_inputs_get(b, &ib, &nb));
    CHECK(na == 2 && nb == 2);
    for (uint32_t i = 0; i < na && i < nb; i++)
        CHECK(!memcmp(&ia[i], &ib[i], sizeof ia[i]));
    free(ia), free(ib), free(da.sums), free(db.sums);
    jsmf_vocab_free(va), jsmf_vocab_free(vb);
}

static void same_vocab(const jsmf_vocab *a, const jsmf_vocab *b)
{
    CHECK(a && b && a->n == b->n && a->n > 10);
    if (a && b && a->n != b->n)
        fprintf(stderr, "vocabularies of %u and %u words\n", a->n, b->n);
    for (uint32_t i = 0; a && b && i < a->n && i < b->n; i++)
        if (strcmp(a->words[i], b->words[i]) || a->df[i] != b->df[i] || a->tf[i] != b->tf[i]) {
            CHECK(!"vocabularies differ");
            break;
        }
}

/* A new store's counting pass: in pieces on the one-process communicator, and as counts packed
 * by one counter and added into another, it gives the vocabulary of one pass. */
static void test_counting(const char *text, const char *more)
{
    const char *both[] = {text, more};
    jsmf_vocab_opts vo = JSMF_VOCAB_OPTS_DEFAULT;
    vo.min_df = 1;
    jsmf_read_opts ro = JSMF_READ_OPTS_DEFAULT;
    jsmf_vocab *one = NULL, *dist = NULL, *added = NULL;
    jsmf_vocab_stats s1, s2, s3;
    CHECK_OK(jsmf_vocab_count(both, 2, &ro, &vo, NULL, NULL, &one, &s1));
    CHECK_OK(vocab_count_dist(jsmf_comm_self(), both, 2, &ro, &vo, 200, &dist, &s2));
    same_vocab(one, dist);
    CHECK(s1.docs_counted == s2.docs_counted && s1.tokens_read == s2.tokens_read);
    jsmf_vocab_counter *a, *b;
    unsigned char *buf;
    uint64_t len;
    CHECK_OK(vocab_counter_new(&vo, &a));
    CHECK_OK(vocab_counter_new(&vo, &b));
    CHECK_OK(vocab_counter_add(a, text, &ro, NULL, NULL));
    CHECK_OK(vocab_counter_add(b, more, &ro, NULL, NULL));
    CHECK_OK(vocab_counter_pack(b, &buf, &len));
    CHECK_OK(vocab_counter_unpack(a, buf, len));
    CHECK(vocab_counter_unpack(a, buf, len - 3) == JSMF_EFORMAT); /* cut: refused */
    CHECK_OK(vocab_counter_finish(a, &added, &s3));
    same_vocab(one, added);
    CHECK(s1.docs_counted == s3.docs_counted && s1.docs_read == s3.docs_read);
    free(buf);
    vocab_counter_free(a), vocab_counter_free(b);
    jsmf_vocab_free(one), jsmf_vocab_free(dist), jsmf_vocab_free(added);
}

int main(void)
{
    char dir[] = "/tmp/jsmf-test-dist-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    char text[256], ldac[256], one[256], job[256], shards[256];
    snprintf(text, sizeof text, "%s/a.txt", dir);
    snprintf(ldac, sizeof ldac, "%s/b.ldac", dir);
    snprintf(one, sizeof one, "%s/one", dir);
    snprintf(job, sizeof job, "%s/job", dir);
    snprintf(shards, sizeof shards, "%s/job/mpi-ingest", dir);
    write_inputs(text, ldac);
    char more[256];
    snprintf(more, sizeof more, "%s/more.txt", dir);
    FILE *m = fopen(more, "w");
    for (int i = 0; i < 300; i++)
        fprintf(m, "wab wac wzz%d w%c%c extra words here\n", i % 7, 'a' + i % 3, 'a' + i % 26);
    fclose(m);
    test_counting(text, more);
    jsmf_vocab *v = make_vocab();
    jsmf_store_params p = {.min_doc_len = 3, .tok_min_len = 3, .tok_max_len = 64, .hold = JSMF_HOLD_ROWS};
    const char *inputs[] = {text, ldac};
    jsmf_ingest_opts o = {.mem = 64u << 20, .mem_below_need = 1};
    jsmf_store *a, *b;
    CHECK_OK(jsmf_store_create(one, v, &p, &a));
    jsmf_ingest_summary sa;
    CHECK_OK(jsmf_ingest_files(a, inputs, 2, &o, &sa));

    CHECK_OK(jsmf_store_create(job, v, &p, &b));
    /* tiny pieces and rounds: dozens of each */
    jsmf_ingest_opts od = o;
    od.mem = 4096; /* rounds of 512 bytes of entries */
    jsmf_ingest_dist_opts d = {.piece_bytes = 300};
    jsmf_ingest_dist_summary sb;
    CHECK_OK(ingest_dist(jsmf_comm_self(), b, job, inputs, 2, &od, &d, &sb));
    CHECK(sb.pieces > 20 && sb.rounds > 5);
    CHECK(sb.ingest.docs == sa.docs && sb.ingest.inputs_done == 2);
    compare(a, b);
    struct stat st;
    CHECK(stat(shards, &st) != 0); /* the shards are gone after the commit */
    /* the same inputs again: all complete, refused, the store unchanged */
    CHECK(ingest_dist(jsmf_comm_self(), b, job, inputs, 2, &od, &d, &sb) == JSMF_EEXIST);
    compare(a, b);
    /* stdin cannot be split across ranks */
    const char *dash[] = {"-"};
    CHECK(ingest_dist(jsmf_comm_self(), b, job, dash, 1, &od, &d, &sb) == JSMF_EINVAL);
    CHECK(strstr(jsmf_errmsg(), "stdin") != NULL);
    jsmf_store_close(a), jsmf_store_close(b);
    jsmf_vocab_free(v);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(getenv("KEEP") || system(cmd) == 0);
    CHECK_DONE();
}
