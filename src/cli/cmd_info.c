/* cmd_info.c — 'jsmf info STORE [--json]': what a store holds — sizes, counters, drift
 * (out-of-vocabulary mass), and each input with its checkpoint (JSON through jsmf_json). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jsmf_model.h"
#include "jsmf_store.h"

static double oov_fraction(uint64_t oov, uint64_t tokens, uint64_t dropped)
{
    uint64_t all = oov + tokens + dropped;
    return all ? (double)oov / (double)all : 0.0;
}

static const char *fmt_name(uint32_t f)
{
    static const char *const names[] = {"unknown", "text", "uci", "ldac"};
    return names[f <= 3 ? f : 0];
}

static void print_json(const char *path, const jsmf_store_stats *st, const jsmf_store_input *in,
                       uint32_t n)
{
    char fp[32];
    jsmf_json j;
    jsmf_json_init(&j, stdout, 1);
    jsmf_json_begin_object(&j, NULL);
    jsmf_json_string(&j, "store", path);
    jsmf_json_uint(&j, "format_version", st->format_version);
    snprintf(fp, sizeof fp, "%016" PRIx64, st->fingerprint);
    jsmf_json_string(&j, "fingerprint", fp);
    jsmf_json_uint(&j, "bytes", st->bytes);
    jsmf_json_uint(&j, "n_words", st->n_words);
    jsmf_json_uint(&j, "docs", st->docs);
    jsmf_json_uint(&j, "nnz", st->nnz);
    jsmf_json_bool(&j, "nnz_exact", st->nnz_exact);
    jsmf_json_uint(&j, "runs", st->runs);
    jsmf_json_uint(&j, "tokens", st->tokens);
    jsmf_json_uint(&j, "oov_tokens", st->oov_tokens);
    jsmf_json_number(&j, "oov_fraction", oov_fraction(st->oov_tokens, st->tokens,
                                                      st->tokens_dropped));
    jsmf_json_uint(&j, "docs_dropped", st->docs_dropped);
    jsmf_json_uint(&j, "tokens_dropped", st->tokens_dropped);
    jsmf_json_uint(&j, "min_doc_len", st->min_doc_len);
    jsmf_json_begin_array(&j, "inputs");
    for (uint32_t i = 0; i < n; i++) {
        jsmf_json_begin_object(&j, NULL);
        jsmf_json_string(&j, "path", in[i].path);
        snprintf(fp, sizeof fp, "%016" PRIx64, in[i].fingerprint);
        jsmf_json_string(&j, "fingerprint", fp);
        jsmf_json_uint(&j, "occurrence", in[i].occurrence);
        jsmf_json_string(&j, "state", in[i].state == JSMF_INPUT_COMPLETE ? "complete" : "partial");
        jsmf_json_string(&j, "format", fmt_name(in[i].format));
        const char *key[] = {"size", "next_offset", "next_line", "next_doc", "docs",
                             "docs_dropped", "tokens", "oov_tokens"};
        uint64_t val[] = {in[i].size, in[i].next_offset, in[i].next_line, in[i].next_doc,
                          in[i].docs, in[i].docs_dropped, in[i].tokens, in[i].oov_tokens};
        for (int k = 0; k < 8; k++)
            jsmf_json_uint(&j, key[k], val[k]);
        jsmf_json_end_object(&j);
    }
    jsmf_json_end_array(&j);
    jsmf_json_end_object(&j);
}

static void print_text(const char *path, const jsmf_store_stats *st, const jsmf_store_input *in,
                       uint32_t n)
{
    printf("store           %s\n", path);
    printf("format version  %u\n", st->format_version);
    printf("fingerprint     %016" PRIx64 "\n", st->fingerprint);
    printf("size            %.1f MiB (C in %u run%s)\n", st->bytes / 1048576.0, st->runs,
           st->runs == 1 ? "" : "s");
    printf("words (N)       %u\n", st->n_words);
    printf("documents (M)   %" PRIu64 "\n", st->docs);
    printf("non-zeros of C  %s%" PRIu64 " (%.3g%% of N^2)%s\n", st->nnz_exact ? "" : "<= ", st->nnz,
           st->n_words ? 100.0 * (double)st->nnz / ((double)st->n_words * st->n_words) : 0.0,
           st->nnz_exact ? "" : ": an upper bound until an ingest completes");
    printf("tokens          %" PRIu64 " (%.1f per document)\n", st->tokens,
           st->docs ? (double)st->tokens / (double)st->docs : 0.0);
    printf("OOV tokens      %" PRIu64 " (%.2f%% of all tokens)\n", st->oov_tokens,
           100.0 * oov_fraction(st->oov_tokens, st->tokens, st->tokens_dropped));
    printf("dropped docs    %" PRIu64 " (%" PRIu64 " tokens; shorter than %u)\n", st->docs_dropped,
           st->tokens_dropped, st->min_doc_len < 2 ? 2 : st->min_doc_len);
    printf("inputs          %u\n", n);
    for (uint32_t i = 0; i < n; i++) {
        if (in[i].state == JSMF_INPUT_COMPLETE)
            printf("  complete  %s [%s] %" PRIu64 " docs, %" PRIu64 " tokens", in[i].path,
                   fmt_name(in[i].format), in[i].docs, in[i].tokens);
        else
            printf("  partial   %s [%s] resumes at byte %" PRIu64 " (line %" PRIu64 ", document %"
                   PRIu64 ")", in[i].path, fmt_name(in[i].format), in[i].next_offset,
                   in[i].next_line, in[i].next_doc);
        if (in[i].occurrence)
            printf(" (ingest #%u of this content)", in[i].occurrence + 1);
        printf("  fingerprint %016" PRIx64 "\n", in[i].fingerprint);
    }
}

/* --check: one timed read of C, reported on stderr. */
static int check_c(jsmf_store *s)
{
    jsmf_store_check_result r;
    double t0 = cli_now();
    int rc = jsmf_store_check(s, &r);
    double t = cli_now() - t0;
    if (!rc)
        cli_info("%s: C read and checked: %" PRIu64 " entries summing to %.6f, %.2f GB of "
                 "store in %.2f s (%.2f GB/s)", jsmf_store_path(s), r.entries, r.sum,
                 r.bytes / 1e9, t, t > 0 ? r.bytes / 1e9 / t : 0.0);
    return rc;
}

int cmd_info(int argc, char **argv)
{
    int json = 0, check = 0;
    const cli_option options[] = {
        {CLI_OPT("--json", 0, NULL, CLI_FLAG, &json, "one JSON object on stdout instead of text")},
        {CLI_OPT("--check", 0, NULL, CLI_FLAG, &check,
                 "also read all of C once: every chunk decodes, rows and columns in order, as "
                 "many entries as counted; prints the read rate (GB/s)")},
        {0},
    };
    const cli_spec spec = {
        "usage: jsmf info STORE [--json] [--check] [--quiet]\n\n"
        "Describe a store: vocabulary size N, documents M, non-zeros of C, tokens, the\n"
        "out-of-vocabulary fraction, dropped documents, store size and format version,\n"
        "and every input with its state (complete, or partial with its resume offset).\n\n",
        options, NULL};
    int npos, rc = cli_parse(&spec, argc, argv, &npos);
    if (rc)
        return rc < 0 ? cli_finish_stdout() : rc;
    if (npos == 0)
        return cli_usage_error("missing STORE");
    if (npos > 1)
        return cli_usage_error("one STORE only");
    const char *path = argv[1];
    jsmf_store *s;
    jsmf_store_stats st;
    jsmf_store_input *in = NULL;
    uint32_t n = 0;
    rc = jsmf_store_open(path, JSMF_STORE_RDONLY, &s);
    if (rc)
        return cli_fail(rc);
    if (!(rc = jsmf_store_stats_get(s, &st)))
        rc = jsmf_store_inputs(s, &in, &n);
    if (!rc && check)
        rc = check_c(s);
    jsmf_store_close(s);
    if (rc) {
        free(in);
        return cli_fail(rc);
    }
    if (json)
        print_json(path, &st, in, n);
    else
        print_text(path, &st, in, n);
    free(in);
    return cli_finish_stdout();
}
