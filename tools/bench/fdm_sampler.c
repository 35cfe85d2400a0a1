/* fdm_sampler.c — FDM's two pair samplers on one C (run through tools/bench/fdm_sampler): the
 * rows sampler over a store's C and the documents sampler over the same corpus's documents, read
 * from its UCI docword file (stdin, decompressed) and mapped to the store's word ids by string,
 * documents shorter than the store's --min-doc-len dropped as ingest drops them. Checks first
 * that the documents define the store's C (M, nnz and the total variation between the two), then
 * prints build time, bytes, mass dropped under --mem, and pairs/s of each (batches of 4096 on one
 * thread as training draws them, and one large draw on every thread). Not a test.
 *
 *   zstd -dc docword.NAME.txt.zst | fdm_sampler STORE vocab.NAME.txt [--min-doc-len 5]
 *       [--mem 64M] [--pairs 10000000] [--late 8] [--train K:STEPS] [--seeds S]
 *
 * --late G adds the documents sampler with late words: word i admitted after
 * floor(i G / N) M / (G + 1) documents (made up: it measures the mixture's cost; 0: none).
 * --train also trains FDM from each (K topics, STEPS steps; seeds 1..S) and scores every model
 * on one set of pairs drawn from the documents; --pairs 0 leaves out the throughput table. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsmf_fdm.h"
#include "jsmf_store.h"
#include "fdm/fdm_internal.h" /* the samplers (internal) */

static double now(void)
{
    return clock_seconds();
}

static void die(const char *what, int rc)
{
    fprintf(stderr, "fdm_sampler: %s: %s\n", what, rc ? jsmf_errmsg() : "failed");
    exit(1);
}

/* Documents read from UCI lines, in store ids. */
typedef struct docs {
    uint64_t m, nnz, cap;
    uint64_t *offs;
    uint32_t *ids, *counts;
    uint64_t cap_docs, dropped;
} docs;

typedef struct entry {
    uint32_t id, count;
} entry;

static int cmp_entry(const void *a, const void *b)
{
    uint32_t x = ((const entry *)a)->id, y = ((const entry *)b)->id;
    return x < y ? -1 : x > y;
}

static void push_doc(docs *d, entry *e, uint32_t k, uint32_t min_len)
{
    uint64_t tokens = 0;
    for (uint32_t i = 0; i < k; i++)
        tokens += e[i].count;
    if (tokens < min_len || tokens < 2) {
        d->dropped += k > 0;
        return;
    }
    qsort(e, k, sizeof *e, cmp_entry);
    if (d->nnz + k > d->cap) {
        d->cap = 2 * (d->nnz + k);
        d->ids = realloc(d->ids, d->cap * sizeof *d->ids);
        d->counts = realloc(d->counts, d->cap * sizeof *d->counts);
    }
    if (d->m + 2 > d->cap_docs) {
        d->cap_docs = 2 * (d->m + 2);
        d->offs = realloc(d->offs, d->cap_docs * sizeof *d->offs);
    }
    for (uint32_t i = 0; i < k; i++)
        d->ids[d->nnz + i] = e[i].id, d->counts[d->nnz + i] = e[i].count;
    d->nnz += k;
    d->offs[++d->m] = d->nnz;
}

/* UCI docword lines on stdin: "D\nW\nNNZ\n" then "doc word count", grouped by document. */
static void read_uci(FILE *f, const jsmf_vocab *uv, const jsmf_vocab *sv, uint32_t min_len,
                     docs *d)
{
    jsmf_wordmap *map;
    if (jsmf_wordmap_new(sv, &map))
        die("word map", 1);
    uint32_t *to_store = malloc(((size_t)uv->n + 1) * sizeof *to_store);
    for (uint32_t w = 0; w < uv->n; w++)
        to_store[w + 1] = jsmf_wordmap_find(map, uv->words[w], strlen(uv->words[w]));
    unsigned long long D, W, NNZ, doc, word, count, cur = 0;
    if (fscanf(f, "%llu %llu %llu", &D, &W, &NNZ) != 3 || W > uv->n)
        die("UCI header", 0);
    memset(d, 0, sizeof *d);
    d->cap_docs = 1024;
    d->offs = calloc(d->cap_docs, sizeof *d->offs);
    entry *e = NULL;
    uint32_t k = 0, cap = 0;
    while (fscanf(f, "%llu %llu %llu", &doc, &word, &count) == 3) {
        if (doc != cur) {
            push_doc(d, e, k, min_len);
            k = 0, cur = doc;
        }
        if (word < 1 || word > W)
            die("UCI word id", 0);
        uint32_t id = to_store[word];
        if (id == UINT32_MAX || !count)
            continue;
        if (k == cap)
            cap = cap ? 2 * cap : 256, e = realloc(e, cap * sizeof *e);
        e[k].id = id, e[k].count = (uint32_t)count, k++;
    }
    push_doc(d, e, k, min_len);
    free(e), free(to_store);
    jsmf_wordmap_free(map);
}

/* The documents' C against the store's rows: total variation (half the l1 of the difference),
 * rows computed from the documents that hold each word (an inverted index). */
typedef struct compare_ctx {
    const docs *d;
    uint32_t n;
    uint64_t *woff;   /* N + 1 */
    uint32_t *wdoc;   /* the documents of each word */
    double *acc;
    uint32_t *touched;
    uint64_t nnz;
    double tv;
} compare_ctx;

static int compare_row(void *arg, uint32_t row, const uint32_t *cols, const double *vals,
                       uint32_t len)
{
    compare_ctx *c = arg;
    const docs *d = c->d;
    uint32_t nt = 0;
    for (uint64_t x = c->woff[row]; x < c->woff[row + 1]; x++) {
        uint32_t m = c->wdoc[x];
        uint64_t a = d->offs[m], b = d->offs[m + 1];
        double n = 0, h = 0;
        for (uint64_t e = a; e < b; e++) {
            n += d->counts[e];
            if (d->ids[e] == row)
                h = d->counts[e];
        }
        double w = h / (n * (n - 1) * (double)d->m);
        for (uint64_t e = a; e < b; e++) {
            uint32_t j = d->ids[e];
            double x2 = w * (d->counts[e] - (j == row));
            if (x2 > 0 && c->acc[j] == 0)
                c->touched[nt++] = j;
            c->acc[j] += x2;
        }
    }
    for (uint32_t e = 0; e < len; e++) {
        c->tv += fabs(vals[e] - c->acc[cols[e]]) / 2;
        c->acc[cols[e]] = 0;
    }
    for (uint32_t t = 0; t < nt; t++) { /* entries the store lacks */
        c->tv += c->acc[c->touched[t]] / 2;
        c->acc[c->touched[t]] = 0;
    }
    c->nnz += len;
    return 0;
}

static double compare(const docs *d, uint32_t n, const jsmf_source *src, uint64_t *nnz)
{
    compare_ctx c = {d, n, calloc((size_t)n + 2, 8), malloc(d->nnz * 4), calloc(n, 8),
                     malloc((size_t)n * 4), 0, 0};
    for (uint64_t e = 0; e < d->nnz; e++)
        c.woff[d->ids[e] + 2]++;
    for (uint32_t i = 0; i < n; i++)
        c.woff[i + 2] += c.woff[i + 1];
    for (uint64_t m = 0; m < d->m; m++)
        for (uint64_t e = d->offs[m]; e < d->offs[m + 1]; e++)
            c.wdoc[c.woff[d->ids[e] + 1]++] = (uint32_t)m;
    int rc = src->scan(src->ctx, compare_row, &c);
    if (rc)
        die("store scan", rc);
    free(c.woff), free(c.wdoc), free(c.acc), free(c.touched);
    *nnz = c.nnz;
    return c.tv;
}

/* Pairs/s: `pairs` in batches of 4096 (one thread: training's draw), then in one call on
 * every thread. */
static void throughput(const jsmf_fdm_sampler *s, uint64_t pairs, double *batch_rate,
                       double *bulk_rate)
{
    uint32_t *u = malloc(pairs * 4), *v = malloc(pairs * 4);
    double t0 = now();
    for (uint64_t i = 0; i < pairs; i += 4096)
        fdm_sampler_draw(s, 1, 1 + i / 4096, 0, pairs - i < 4096 ? (uint32_t)(pairs - i) : 4096,
                         u + i, v + i, 1);
    *batch_rate = pairs / (now() - t0);
    t0 = now();
    fdm_sampler_draw(s, 1, 1, 0, (uint32_t)pairs, u, v, omp_get_max_threads());
    *bulk_rate = pairs / (now() - t0);
    free(u), free(v);
}

/* The pair loss of a model (B, A) on pairs u, v: log B and log A are logits whose softmaxes
 * give B and A back. */
static double model_loss(const jsmf_fdm_result *r, const uint32_t *u, const uint32_t *v,
                         uint32_t cnt)
{
    size_t nk = (size_t)r->n * r->k, kk = (size_t)r->k * r->k;
    double *lb = malloc(nk * sizeof *lb), *la = malloc(kk * sizeof *la), loss = NAN;
    for (size_t e = 0; e < nk; e++)
        lb[e] = log(r->B[e]);
    for (size_t e = 0; e < kk; e++)
        la[e] = log(r->A[e]);
    if (fdm_loss_grad_cpu(r->n, r->k, lb, la, u, v, cnt, &loss, NULL, NULL))
        die("loss", 1);
    free(lb), free(la);
    return loss; /* the mean over the pairs */
}

/* FDM trained from C's rows and from the documents with the same options (a cold start from
 * words, one start, `steps` steps at a fixed rate), both scored on one set of pairs drawn
 * through the documents with another seed: the same C, so the same loss within noise. */
static void train_both(const jsmf_source *rows, const jsmf_source *with_docs, uint32_t k,
                       uint64_t steps, uint32_t seeds)
{
    jsmf_fdm_opts p;
    jsmf_fdm_opts_init(&p);
    p.k = k, p.steps = steps, p.patience = 0, p.starts = 1, p.eval_every = 100;
    p.checkpoint_seconds = 0;
    enum { SCORE = 200000 };
    static uint32_t u[SCORE], v[SCORE];
    jsmf_fdm_sampler *s;
    int rc = fdm_sampler_build(with_docs, 0, &s);
    if (rc)
        die("documents sampler", rc);
    fdm_sampler_draw_default(s, 99, 1, 0, SCORE, u, v);
    fdm_sampler_free(s);
    printf("\nFDM K=%u, %llu steps of %u pairs, lr %g, a cold start from words, %d threads; "
           "loss on %u pairs drawn from the documents with seed 99\n\n| sampler | seed | sampler "
           "build s | train s | pairs/s | own held-out loss | loss on the common pairs |\n"
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n", k, (unsigned long long)steps,
           p.batch, p.lr, omp_get_max_threads(), SCORE);
    const jsmf_source *srcs[2] = {rows, with_docs};
    for (int x = 0; x < 2; x++)
        for (uint32_t seed = 1; seed <= seeds; seed++) {
            jsmf_fdm_result r;
            p.seed = seed;
            if ((rc = jsmf_fdm_train(srcs[x], &p, &r)))
                die("fdm", rc);
            printf("| %s | %u | %.2f | %.1f | %.0f | %.4f | %.4f |\n", x ? "documents" : "rows",
                   seed, r.sampler.build_seconds, r.seconds_train, r.pairs_per_second,
                   r.best_heldout, model_loss(&r, u, v, SCORE));
            fflush(stdout);
            jsmf_fdm_result_free(&r);
        }
}

static void row(const char *name, const jsmf_fdm_sampler_info *in, double brate, double rate)
{
    printf("| %s | %.3f | %.1f | %llu | %.4f | %.2fM | %.2fM |\n", name, in->build_seconds,
           in->bytes / 1048576.0, (unsigned long long)in->kept, in->dropped_mass, brate / 1e6,
           rate / 1e6);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: zstd -dc DOCWORD | fdm_sampler STORE UCI_VOCAB [--min-doc-len N]"
                        " [--mem SIZE] [--pairs P] [--late G] [--train K:STEPS] [--seeds S]\n");
        return 2;
    }
    uint32_t min_len = 5, train_k = 0, seeds = 1, late = 8;
    uint64_t train_steps = 0;
    uint64_t mem = 64ull << 20, pairs = 10000000;
    for (int a = 3; a + 1 < argc; a += 2) {
        if (!strcmp(argv[a], "--min-doc-len"))
            min_len = (uint32_t)atoi(argv[a + 1]);
        else if (!strcmp(argv[a], "--mem") && jsmf_mem_parse("--mem", argv[a + 1], 1, &mem))
            die("--mem", 1);
        else if (!strcmp(argv[a], "--pairs"))
            pairs = strtoull(argv[a + 1], NULL, 10);
        else if (!strcmp(argv[a], "--late"))
            late = (uint32_t)atoi(argv[a + 1]);
        else if (!strcmp(argv[a], "--seeds"))
            seeds = (uint32_t)atoi(argv[a + 1]);
        else if (!strcmp(argv[a], "--train") &&
                 sscanf(argv[a + 1], "%u:%llu", &train_k, (unsigned long long *)&train_steps) != 2)
            die("--train K:STEPS", 0);
    }
    jsmf_source_input in;
    int rc = jsmf_source_open(argv[1], JSMF_SOURCE_NEED_VOCAB, &in);
    if (rc)
        die(argv[1], rc);
    jsmf_vocab *uv;
    if ((rc = jsmf_vocab_load(argv[2], &uv)))
        die(argv[2], rc);
    double t0 = now();
    docs d;
    read_uci(stdin, uv, in.vocab, min_len, &d);
    double t_read = now() - t0;
    jsmf_doc_csr dc = {in.src.n, d.m, d.offs, d.ids, d.counts, NULL};
    jsmf_doc_source ds;
    if ((rc = jsmf_doc_csr_source(&dc, 0, &ds)))
        die("documents", rc);
    uint64_t nnz_c;
    t0 = now();
    double tv = compare(&d, in.src.n, &in.src, &nnz_c);
    printf("store %s: N %u, M %llu, nnz(C) %llu; documents from UCI: M %llu (%llu dropped as "
           "shorter than %u), nnz(H) %llu, %llu tokens, read in %.2f s\n", argv[1], in.src.n,
           (unsigned long long)in.stats.docs, (unsigned long long)in.src.nnz,
           (unsigned long long)d.m, (unsigned long long)d.dropped, min_len,
           (unsigned long long)d.nnz, (unsigned long long)ds.tokens, t_read);
    printf("C from the documents vs the store's rows: total variation %.3g, nnz %llu vs %llu "
           "(%.1f s)\n\n", tv, (unsigned long long)nnz_c, (unsigned long long)in.src.nnz,
           now() - t0);

    if (pairs)
        printf("%d threads; pairs/s over %llu pairs: in batches of 4096 on one thread, and in "
               "one call on all threads\n\n| sampler | build s | MiB | entries kept | mass "
               "dropped | pairs/s (4096, 1 thread) | pairs/s (bulk) |\n| --- | ---: | ---: | "
               "---: | ---: | ---: | ---: |\n", omp_get_max_threads(), (unsigned long long)pairs);
    jsmf_source rows = in.src, with_docs = in.src;
    rows.docs = NULL, with_docs.docs = &ds;
    uint64_t budgets[2] = {0, mem};
    for (int b = 0; b < 2 && pairs; b++) { /* --pairs 0: no throughput table */
        jsmf_fdm_sampler *s;
        jsmf_fdm_sampler_info info;
        double br, r;
        char name[64];
        if ((rc = fdm_sampler_build(&rows, budgets[b], &s)))
            die("rows sampler", rc);
        fdm_sampler_info_get(s, &info);
        throughput(s, pairs, &br, &r);
        if (b)
            snprintf(name, sizeof name, "rows, --mem %lluM", (unsigned long long)(mem >> 20));
        else
            snprintf(name, sizeof name, "rows, --mem none");
        row(name, &info, br, r);
        fdm_sampler_free(s);
        if ((rc = fdm_sampler_build(&with_docs, budgets[b], &s)))
            die("documents sampler", rc);
        fdm_sampler_info_get(s, &info);
        throughput(s, pairs, &br, &r);
        if (b)
            snprintf(name, sizeof name, "documents, --mem %lluM", (unsigned long long)(mem >> 20));
        else
            snprintf(name, sizeof name, "documents, --mem none");
        row(name, &info, br, r);
        fdm_sampler_free(s);
    }
    if (pairs && late) { /* the mixture's cost: admission points in `late` steps by id */
        uint64_t *adm = malloc((size_t)dc.n * sizeof *adm);
        for (uint32_t i = 0; i < dc.n; i++)
            adm[i] = (uint64_t)((double)i * late / dc.n) * (d.m / (late + 1));
        jsmf_doc_csr dl = dc;
        jsmf_doc_source dsl;
        dl.admit = adm;
        if ((rc = jsmf_doc_csr_source(&dl, 0, &dsl)))
            die("documents with late words", rc);
        jsmf_source late_src = in.src;
        late_src.docs = &dsl;
        jsmf_fdm_sampler *s;
        jsmf_fdm_sampler_info info;
        double br, r;
        char name[64];
        if ((rc = fdm_sampler_build(&late_src, 0, &s)))
            die("documents sampler", rc);
        fdm_sampler_info_get(s, &info);
        throughput(s, pairs, &br, &r);
        snprintf(name, sizeof name, "documents, %u admission steps", late);
        row(name, &info, br, r);
        fdm_sampler_free(s);
        jsmf_doc_csr_source_free(&dsl);
        free(adm);
    }
    if (train_k)
        train_both(&rows, &with_docs, train_k, train_steps, seeds);
    jsmf_doc_csr_source_free(&ds);
    free(d.offs), free(d.ids), free(d.counts);
    jsmf_vocab_free(uv);
    jsmf_source_close(&in);
    return 0;
}
