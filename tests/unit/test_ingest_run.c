/* test_ingest_run.c — jsmf_ingest_run, all of `jsmf ingest` in one call: a new store made by a
 * counting pass (told before the ingest starts), a rerun refused with the store kept, first
 * ingests that fail leaving the directory as it was (absent, or an empty directory of the
 * caller's), also after the counting pass; jsmf_vocab_build's refusal of an empty vocabulary;
 * the progress both passes report (what, MB); and the lines of the report writers. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "jsmf_ingest.h"
#include "ingest/ingest_internal.h"

static char dir[] = "/tmp/jsmf-test-ingest-run-XXXXXX";

static const char *at(const char *name)
{
    static char paths[8][512];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, 512, "%s/%s", dir, name);
    return p;
}

/* `docs` documents of 10 words out of 40 (no stopword): each in well under half of them. */
static void write_corpus(const char *path, uint64_t seed, int docs)
{
    FILE *f = fopen(path, "w");
    for (int d = 0; d < docs; d++) {
        for (int t = 0; t < 10; t++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            uint32_t w = (uint32_t)(seed >> 33) % 40;
            fprintf(f, "%sz%c%c", t ? " " : "", 'a' + w / 26, 'a' + w % 26);
        }
        fputc('\n', f);
    }
    fclose(f);
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static int entries(const char *path)
{
    DIR *d = opendir(path);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return d ? n : -1;
}

typedef struct {
    int calls;
    uint64_t words_kept;
    const char *remove; /* an input to remove when told: the ingest that follows must fail */
} counted_log;

static void on_counted(void *arg, const jsmf_vocab_stats *st)
{
    counted_log *l = arg;
    l->calls++;
    l->words_kept = st->words_kept;
    if (l->remove)
        unlink(l->remove);
}

static jsmf_ingest_run_opts run_opts(counted_log *log)
{
    jsmf_ingest_run_opts o = {0};
    o.ingest.mem = 64u << 20;
    o.min_doc_len = 5;
    o.counted = on_counted;
    o.counted_arg = log;
    return o;
}

static void test_new_store_and_rerun(void)
{
    const char *in[] = {at("a.txt")};
    counted_log log = {0};
    jsmf_ingest_run_opts o = run_opts(&log);
    jsmf_ingest_run_summary r;
    CHECK_OK(jsmf_ingest_run(at("s"), in, 1, &o, NULL, &r));
    CHECK(log.calls == 1 && log.words_kept == 40 && r.vocab.words_kept == 40);
    CHECK(r.ranks == 1 && r.ingest.inputs_done == 1 && r.ingest.docs == 300);
    jsmf_store *s;
    jsmf_store_stats st;
    CHECK_OK(jsmf_store_open(at("s"), 0, &s));
    CHECK_OK(jsmf_store_stats_get(s, &st));
    CHECK(st.docs == 300 && st.n_inputs == 1);
    jsmf_store_close(s);

    /* again: refused (already ingested), no counting pass, and the store stays */
    CHECK(jsmf_ingest_run(at("s"), in, 1, &o, NULL, &r) == JSMF_EEXIST);
    CHECK(log.calls == 1 && r.vocab.words_kept == 0);
    CHECK(exists(at("s/data.mdb")));
}

/* A first ingest that fails leaves the directory as it was before. */
static void test_failed_first_ingest(void)
{
    counted_log log = {0};
    jsmf_ingest_run_opts o = run_opts(&log);
    jsmf_ingest_run_summary r;
    jsmf_vocab_stats vs;
    const char *in[] = {at("a.txt")}, *empty[] = {at("empty.txt")};
    CHECK_OK(jsmf_vocab_build(in, 1, NULL, NULL, at("v.txt"), NULL, NULL, &vs));
    CHECK(vs.words_kept == 40);
    o.vocab = at("v.txt");
    /* no directory before: none after */
    CHECK(jsmf_ingest_run(at("f"), empty, 1, &o, NULL, &r) == JSMF_EFORMAT);
    CHECK(!exists(at("f")));
    /* an empty directory of the caller's: kept, and still empty */
    CHECK(mkdir(at("d"), 0755) == 0);
    CHECK(jsmf_ingest_run(at("d"), empty, 1, &o, NULL, &r) == JSMF_EFORMAT);
    CHECK(exists(at("d")) && entries(at("d")) == 0);
    CHECK(log.calls == 0); /* a vocabulary file: no counting pass */

    /* after the counting pass made the store: an input gone before the ingest reads it */
    write_corpus(at("b.txt"), 7, 300);
    const char *two[] = {at("a.txt"), at("b.txt")};
    o.vocab = NULL;
    log.remove = at("b.txt");
    CHECK(jsmf_ingest_run(at("g"), two, 2, &o, NULL, &r) != JSMF_OK);
    CHECK(log.calls == 1 && r.vocab.words_kept == 40);
    CHECK(!exists(at("g")));
}

/* No word kept: an error naming the counts, and the output left as it was. */
static void test_vocab_build_empty(void)
{
    FILE *f = fopen(at("old.txt"), "w");
    fputs("old\n", f);
    fclose(f);
    const char *empty[] = {at("empty.txt")};
    jsmf_vocab_stats vs;
    CHECK(jsmf_vocab_build(empty, 1, NULL, NULL, at("old.txt"), NULL, NULL, &vs) ==
          JSMF_EFORMAT);
    char want[600];
    snprintf(want, sizeof want, "no words kept: 0 documents read, 0 counted, 0 distinct words, "
             "0 below --min-df 5, 0 above --max-df-frac 0.5; %s not written", at("old.txt"));
    CHECK(!strcmp(jsmf_errmsg(), want));
    char *text = NULL;
    CHECK_OK(jsmf_file_load(at("old.txt"), &text));
    CHECK(text && !strcmp(text, "old\n"));
    free(text);
}

/* What a progress callback was told: calls by `what`, each one's last done and total. */
typedef struct {
    const char *input; /* the `what` expected of the input's own pass */
    int vocabulary, input_calls, other, after_input;
    double vocabulary_done, vocabulary_total, input_done, input_total;
} progress_log;

static void on_progress(void *arg, const char *what, double done, double total, const char *unit)
{
    progress_log *l = arg;
    CHECK(!strcmp(unit, "MB"));
    if (!strcmp(what, "vocabulary")) {
        l->vocabulary++;
        l->after_input += l->input_calls > 0;
        l->vocabulary_done = done, l->vocabulary_total = total;
    } else if (!strcmp(what, l->input)) {
        l->input_calls++;
        l->input_done = done, l->input_total = total;
    } else {
        l->other++;
    }
}

/* One progress callback serves both passes of a new store: the counting pass named
 * "vocabulary", the ingest by the input's path, both in MB (1e6 bytes) of the input read; a
 * counting pass of its own (jsmf_vocab_build) names the input, stdin as "<stdin>". */
static void test_progress(void)
{
    const char *in[] = {at("big.txt")};
    write_corpus(in[0], 3, 1500); /* the ingest tells every 1024 documents */
    struct stat st;
    CHECK(stat(in[0], &st) == 0);
    double mb = (double)st.st_size / 1e6;
    counted_log log = {0};
    jsmf_ingest_run_opts o = run_opts(&log);
    progress_log pl = {.input = in[0]};
    o.ingest.progress = on_progress;
    o.ingest.progress_arg = &pl;
    jsmf_ingest_run_summary r;
    CHECK_OK(jsmf_ingest_run(at("sp"), in, 1, &o, NULL, &r));
    CHECK(pl.vocabulary >= 1 && pl.after_input == 0 && pl.other == 0);
    CHECK(pl.vocabulary_done == mb && pl.vocabulary_total == mb);
    CHECK(pl.input_calls >= 1 && pl.input_total == mb);
    CHECK(pl.input_done > 0 && pl.input_done <= mb);

    progress_log vl = {.input = in[0]};
    jsmf_vocab_stats vs;
    CHECK_OK(jsmf_vocab_build(in, 1, NULL, NULL, at("vp.txt"), on_progress, &vl, &vs));
    CHECK(vl.vocabulary == 0 && vl.other == 0 && vl.input_calls >= 1);
    CHECK(vl.input_done == mb && vl.input_total == mb);

    int saved = dup(STDIN_FILENO), fd = open(in[0], O_RDONLY);
    CHECK(saved >= 0 && fd >= 0 && dup2(fd, STDIN_FILENO) == STDIN_FILENO);
    close(fd);
    const char *dash[] = {"-"};
    progress_log sl = {.input = "<stdin>"};
    CHECK_OK(jsmf_vocab_build(dash, 1, NULL, NULL, at("vs.txt"), on_progress, &sl, &vs));
    CHECK(dup2(saved, STDIN_FILENO) == STDIN_FILENO);
    close(saved);
    CHECK(sl.other == 0 && sl.input_calls >= 1 && sl.input_done == mb);
}

/* What writing `r` (ranks and dist as they are) gives, or the summary alone (`alone`). */
static char *written(const jsmf_ingest_run_summary *r, int alone)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (alone)
        ingest_summary_write(f, "p", "S", 1u << 30, &r->ingest);
    else
        jsmf_ingest_run_write(f, "p", "S", 1u << 30, r);
    fclose(f);
    return buf;
}

/* The writers' lines, for a made-up run. */
static void test_writers(void)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    jsmf_vocab_stats vs = {.docs_counted = 7, .words_seen = 5, .words_kept = 3};
    jsmf_ingest_vocab_write(f, "p", &vs);
    vs.words_kept = 0;
    jsmf_ingest_vocab_write(f, "p", &vs); /* no pass: no line */
    fclose(f);
    CHECK(!strcmp(buf, "p: vocabulary: 3 words kept of 5 seen in 7 documents\n"));
    free(buf);

    jsmf_ingest_run_summary r = {.ranks = 1};
    r.ingest.docs = 11, r.ingest.inputs_done = 1;
    r.dist.restarted = 1; /* not a job: not told */
    char *one = written(&r, 0), *summary = written(&r, 1);
    CHECK(!strcmp(one, summary)); /* one process: the ingest's summary alone */
    r.ranks = 2;
    r.dist.pieces = 3, r.dist.rounds = 4, r.dist.seconds_ingest = 1, r.dist.seconds_exchange = 2;
    r.dist.seconds_commit = 0.25, r.dist.comm.bytes_sent = 5000000, r.dist.comm.seconds = 0.5;
    char *job = written(&r, 0), want[4096];
    snprintf(want, sizeof want, "p: shards of an earlier job with other inputs or ranks were "
             "dropped\n%sp: 2 ranks, 3 pieces: ingest 1.00 s, exchange 2.00 s in 4 rounds,\n"
             "p:   rank 0 sent 5.0 MB, 0.50 s in MPI; commit 0.25 s\n", summary);
    CHECK(!strcmp(job, want));
    free(one), free(summary), free(job);
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    write_corpus(at("a.txt"), 1, 300);
    fclose(fopen(at("empty.txt"), "w"));
    test_new_store_and_rerun();
    test_failed_first_ingest();
    test_vocab_build_empty();
    test_progress();
    test_writers();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    CHECK_DONE();
}
