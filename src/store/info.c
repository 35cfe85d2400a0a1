/* info.c — what a store holds (jsmf info): sizes, counters, drift (out-of-vocabulary mass) and
 * each input with its checkpoint, as aligned text or one JSON object. */
#include <inttypes.h>
#include <stdio.h>

#include "jsmf_model.h"
#include "jsmf_store.h"
#include "core/out.h"
#include "model/json.h"

static double oov_fraction(uint64_t oov, uint64_t tokens, uint64_t dropped)
{
    uint64_t all = oov + tokens + dropped;
    return all ? (double)oov / (double)all : 0.0;
}

/* jsmf_format's names (jsmf_io.h); the store records the number and does not read inputs */
static const char *fmt_name(uint32_t f)
{
    static const char *const names[] = {"unknown", "text", "uci", "ldac", "items"};
    return names[f < sizeof names / sizeof *names ? f : 0];
}

static void write_json(FILE *f, const char *path, const jsmf_store_stats *st,
                       const jsmf_store_growth *g, const jsmf_store_input *in, uint32_t n)
{
    char fp[32];
    jsmf_json j;
    json_init(&j, f, 1);
    json_begin_object(&j, NULL);
    json_string(&j, "store", path);
    json_uint(&j, "format_version", st->format_version);
    snprintf(fp, sizeof fp, "%016" PRIx64, st->fingerprint);
    json_string(&j, "fingerprint", fp);
    json_uint(&j, "bytes", st->bytes);
    json_uint(&j, "n_words", st->n_words);
    json_uint(&j, "docs", st->docs);
    json_uint(&j, "nnz", st->nnz);
    json_bool(&j, "nnz_exact", st->nnz_exact);
    json_uint(&j, "runs", st->runs);
    json_string(&j, "hold", jsmf_store_hold_name(st->hold));
    json_uint(&j, "doc_nnz", st->doc_nnz);
    json_uint(&j, "doc_bytes", st->doc_bytes);
    json_uint(&j, "tokens", st->tokens);
    json_uint(&j, "oov_tokens", st->oov_tokens);
    json_number(&j, "oov_fraction", oov_fraction(st->oov_tokens, st->tokens,
                                                      st->tokens_dropped));
    json_uint(&j, "docs_dropped", st->docs_dropped);
    json_uint(&j, "tokens_dropped", st->tokens_dropped);
    json_uint(&j, "min_doc_len", st->min_doc_len);
    if (g) {
        char rule[256];
        jsmf_store_rule_format(&g->rule, rule, sizeof rule);
        json_string(&j, "rule", rule);
        json_uint(&j, "pending_words", g->pending);
        snprintf(fp, sizeof fp, "%016" PRIx64, g->pending_digest);
        json_string(&j, "pending_digest", fp);
        json_uint(&j, "grow_docs", g->grow_docs);
        json_uint(&j, "first_words", g->first_words);
        json_uint(&j, "admitted_late", g->admitted_late);
    }
    json_begin_array(&j, "inputs");
    for (uint32_t i = 0; i < n; i++) {
        json_begin_object(&j, NULL);
        json_string(&j, "path", in[i].path);
        snprintf(fp, sizeof fp, "%016" PRIx64, in[i].fingerprint);
        json_string(&j, "fingerprint", fp);
        json_uint(&j, "occurrence", in[i].occurrence);
        json_string(&j, "state", in[i].state == JSMF_INPUT_COMPLETE ? "complete" : "partial");
        json_string(&j, "format", fmt_name(in[i].format));
        const char *key[] = {"size", "next_offset", "next_line", "next_doc", "docs",
                             "docs_dropped", "tokens", "oov_tokens"};
        uint64_t val[] = {in[i].size, in[i].next_offset, in[i].next_line, in[i].next_doc,
                          in[i].docs, in[i].docs_dropped, in[i].tokens, in[i].oov_tokens};
        for (int k = 0; k < 8; k++)
            json_uint(&j, key[k], val[k]);
        json_end_object(&j);
    }
    json_end_array(&j);
    json_end_object(&j);
}

static void write_text(FILE *f, const char *path, const jsmf_store_stats *st,
                       const jsmf_store_growth *g, const jsmf_store_input *in, uint32_t n)
{
    fprintf(f, "store           %s\n", path);
    fprintf(f, "format version  %u\n", st->format_version);
    fprintf(f, "fingerprint     %016" PRIx64 "\n", st->fingerprint);
    if (st->hold & JSMF_HOLD_ROWS)
        fprintf(f, "size            %.1f MiB (C in %u run%s)\n", st->bytes / 1048576.0, st->runs,
                st->runs == 1 ? "" : "s");
    else
        fprintf(f, "size            %.1f MiB\n", st->bytes / 1048576.0);
    fprintf(f, "C held as       %s\n", st->hold == JSMF_HOLD_ROWS ? "rows"
                                   : st->hold == JSMF_HOLD_DOCS ? "documents (rows computed on demand)"
                                                                : "rows and documents");
    if (st->hold & JSMF_HOLD_DOCS)
        fprintf(f, "documents       nnz(H) %" PRIu64 ", %.1f MiB encoded (%.2f bytes an entry)\n",
                st->doc_nnz, st->doc_bytes / 1048576.0,
                st->doc_nnz ? (double)st->doc_bytes / (double)st->doc_nnz : 0.0);
    fprintf(f, "words (N)       %u\n", st->n_words);
    fprintf(f, "documents (M)   %" PRIu64 "\n", st->docs);
    fprintf(f, "non-zeros of C  %s%" PRIu64 " (%.3g%% of N^2)%s\n", st->nnz_exact ? "" : "<= ", st->nnz,
           st->n_words ? 100.0 * (double)st->nnz / ((double)st->n_words * st->n_words) : 0.0,
           st->nnz_exact                   ? ""
           : (st->hold & JSMF_HOLD_ROWS) ? ": an upper bound until an ingest completes"
                                          : ": a bound from the documents; info --check counts");
    fprintf(f, "tokens          %" PRIu64 " (%.1f per document)\n", st->tokens,
           st->docs ? (double)st->tokens / (double)st->docs : 0.0);
    fprintf(f, "OOV tokens      %" PRIu64 " (%.2f%% of all tokens)\n", st->oov_tokens,
           100.0 * oov_fraction(st->oov_tokens, st->tokens, st->tokens_dropped));
    fprintf(f, "dropped docs    %" PRIu64 " (%" PRIu64 " tokens; shorter than %u)\n", st->docs_dropped,
           st->tokens_dropped, st->min_doc_len < 2 ? 2 : st->min_doc_len);
    if (g) {
        char rule[256];
        jsmf_store_rule_format(&g->rule, rule, sizeof rule);
        fprintf(f, "growth rule     %s%s\n", rule, g->rule.state == JSMF_RULE_NONE
                ? " (the vocabulary stays as it is; ingest --min-df ... sets a rule)" : "");
        fprintf(f, "words admitted  %u first, %u since (pending: %" PRIu64 " words counted over "
                "%" PRIu64 " documents)\n", g->first_words, g->admitted_late, g->pending,
                g->grow_docs);
    }
    fprintf(f, "inputs          %u\n", n);
    for (uint32_t i = 0; i < n; i++) {
        if (in[i].state == JSMF_INPUT_COMPLETE)
            fprintf(f, "  complete  %s [%s] %" PRIu64 " docs, %" PRIu64 " tokens", in[i].path,
                   fmt_name(in[i].format), in[i].docs, in[i].tokens);
        else
            fprintf(f, "  partial   %s [%s] resumes at byte %" PRIu64 " (line %" PRIu64 ", document %"
                   PRIu64 ")", in[i].path, fmt_name(in[i].format), in[i].next_offset,
                   in[i].next_line, in[i].next_doc);
        if (in[i].occurrence)
            fprintf(f, " (ingest #%u of this content)", in[i].occurrence + 1);
        fprintf(f, "  fingerprint %016" PRIx64 "\n", in[i].fingerprint);
    }
}

void jsmf_store_info_write_growth(FILE *f, const char *path, const jsmf_store_stats *st,
                                  const jsmf_store_growth *g, const jsmf_store_input *in,
                                  uint32_t n, int json)
{
    if (json)
        write_json(f, path, st, g, in, n);
    else
        write_text(f, path, st, g, in, n);
}

void jsmf_store_info_write(FILE *f, const char *path, const jsmf_store_stats *st,
                           const jsmf_store_input *in, uint32_t n, int json)
{
    jsmf_store_info_write_growth(f, path, st, NULL, in, n, json);
}
