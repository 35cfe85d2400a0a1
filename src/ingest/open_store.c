/* open_store.c — the store an ingest writes: opened, or created on first use with its
 * vocabulary (given, or from one counting pass over the inputs); and what the ingest did, as
 * lines for people. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "jsmf_comm.h"
#include "jsmf_ingest.h"
#include "core/out.h"
#include "core/vocab.h"
#include "ingest_internal.h"
#include "mpi/comm.h"
#include "store/store.h"

/* The counting pass's progress, named as a step of the ingest rather than by the input read. */
static void vocabulary_progress(void *arg, const char *input, double done, double total,
                                const char *unit)
{
    const jsmf_ingest_store_opts *o = arg;
    (void)input;
    o->progress(o->progress_arg, "vocabulary", done, total, unit);
}

/* The counting pass of a new store: jsmf vocab's defaults for the format (items: no stopwords,
 * no max-df cut), on one process or the ranks of c. */
static int count_vocabulary(struct jsmf_comm *c, const char *const *inputs, uint32_t n,
                            const jsmf_ingest_store_opts *o, jsmf_vocab **out,
                            jsmf_vocab_stats *st)
{
    jsmf_vocab_opts vo = JSMF_VOCAB_OPTS_DEFAULT;
    jsmf_vocab *stop = NULL;
    const char *stopwords;
    jsmf_format_vocab_defaults(o->format, &stopwords, &vo.max_df_frac);
    int rc = jsmf_stopwords_load(stopwords, &stop);
    vo.stopwords = stop;
    vo.min_doc_len = o->min_doc_len;
    jsmf_read_opts ro = JSMF_READ_OPTS_DEFAULT;
    ro.format = o->format;
    ro.uci_vocab = o->uci_vocab;
    ro.threads = o->threads;
    if (!rc && c)
        rc = jsmf_vocab_count_dist(c, inputs, n, &ro, &vo, 0, out, st);
    else if (!rc)
        rc = jsmf_vocab_count(inputs, n, &ro, &vo, o->progress ? vocabulary_progress : NULL,
                              (void *)o, out, st);
    jsmf_vocab_free(stop);
    return rc;
}

/* A new store's vocabulary: o->vocab, counted already, or one counting pass. */
static int new_vocabulary(const char *const *inputs, uint32_t n, const jsmf_ingest_store_opts *o,
                          jsmf_vocab **out, jsmf_vocab_stats *st)
{
    if (o->vocab)
        return jsmf_vocab_load(o->vocab, out);
    int rc = o->counted ? jsmf_vocab_copy(o->counted, 1, out)
                        : count_vocabulary(NULL, inputs, n, o, out, st);
    if (!rc && (*out)->n == 0) {
        jsmf_vocab_free(*out);
        *out = NULL;
        rc = jsmf_error(JSMF_EFORMAT, "the inputs give an empty vocabulary (%" PRIu64
                        " documents counted); give --vocab", st->docs_counted);
    }
    return rc;
}

/* An existing store: the vocabulary and min_doc_len given must be what it was created with. */
static int check_existing(jsmf_store *s, const char *path, const jsmf_ingest_store_opts *o)
{
    jsmf_store_params p;
    jsmf_store_params_get(s, &p);
    if (o->min_doc_len_given && p.min_doc_len != o->min_doc_len)
        return jsmf_error(JSMF_EMISMATCH, "%s: --min-doc-len %u differs from the store's %u "
                          "(fixed at creation)", path, o->min_doc_len, p.min_doc_len);
    if (!o->vocab)
        return JSMF_OK;
    jsmf_vocab *want = NULL, *have = NULL;
    int rc = jsmf_vocab_load(o->vocab, &want);
    if (!rc && !(rc = jsmf_store_vocab_get(s, &have)))
        rc = jsmf_vocab_compare(want, o->vocab, have, path);
    jsmf_vocab_free(want);
    jsmf_vocab_free(have);
    return rc;
}

static int create_store(const char *path, const char *const *inputs, uint32_t n,
                        const jsmf_ingest_store_opts *o, jsmf_store **out, uint64_t **df,
                        jsmf_vocab_stats *counted)
{
    if (!o->vocab)
        for (uint32_t i = 0; i < n; i++)
            if (!strcmp(inputs[i], "-"))
                return jsmf_error(JSMF_EINVAL, "%s: a new store needs --vocab when reading stdin "
                                  "(stdin cannot be read twice for the counting pass)", path);
    jsmf_vocab *v;
    int rc = new_vocabulary(inputs, n, o, &v, counted);
    if (rc)
        return rc;
    jsmf_tokenizer tok = JSMF_TOKENIZER_DEFAULT;
    jsmf_store_params p = {o->min_doc_len, tok.min_len, tok.max_len};
    if (!o->mem_below_need)
        rc = jsmf_ingest_mem_check(v->n, o->mem); /* refused before the store exists */
    if (!rc)
        rc = jsmf_store_create(path, v, &p, out);
    if (!rc && v->df && (*df = malloc((size_t)v->n * sizeof **df)))
        memcpy(*df, v->df, (size_t)v->n * sizeof **df); /* without it, ingest plans less well */
    jsmf_vocab_free(v);
    return rc;
}

int jsmf_ingest_open_store(const char *path, const char *const *inputs, uint32_t n,
                           const jsmf_ingest_store_opts *o, jsmf_store **out, uint64_t **df,
                           jsmf_vocab_stats *counted)
{
    *df = NULL;
    memset(counted, 0, sizeof *counted);
    int rc = jsmf_store_open(path, JSMF_STORE_WRITE, out);
    if (!rc && jsmf_store_has_vocab(*out)) {
        if ((rc = check_existing(*out, path, o))) {
            jsmf_store_close(*out);
            *out = NULL;
        }
        return rc;
    }
    if (!rc)
        jsmf_store_close(*out), *out = NULL;
    else if (rc != JSMF_ENOTFOUND)
        return rc;
    return create_store(path, inputs, n, o, out, df, counted);
}

/* 1 when the store at path must be created (none there, or never initialised). */
static int store_missing(const char *path)
{
    jsmf_store *s;
    int rc = jsmf_store_open(path, 0, &s);
    if (rc == JSMF_ENOTFOUND)
        jsmf_error_clear(); /* handled: the store is created */
    if (rc)
        return rc == JSMF_ENOTFOUND; /* other errors: jsmf_ingest_open_store reports them */
    int missing = !jsmf_store_has_vocab(s);
    jsmf_store_close(s);
    return missing;
}

int jsmf_ingest_open_store_dist(struct jsmf_comm *c, const char *path, const char *const *inputs,
                                uint32_t n, const jsmf_ingest_store_opts *o, jsmf_store **out,
                                uint64_t **df, jsmf_vocab_stats *counted)
{
    *out = NULL, *df = NULL;
    memset(counted, 0, sizeof *counted);
    int64_t count = jsmf_comm_rank(c) == 0 && !o->vocab && store_missing(path);
    for (uint32_t i = 0; i < n && count; i++)
        if (!strcmp(inputs[i], "-"))
            count = 0; /* jsmf_ingest_open_store says why a new store needs --vocab */
    int rc = jsmf_comm_bcast(c, &count, sizeof count, 0);
    jsmf_vocab *v = NULL;
    jsmf_vocab_stats st = {0};
    if (!rc && count)
        rc = count_vocabulary(c, inputs, n, o, &v, &st);
    if (!(rc = jsmf_comm_agree(c, rc)) && jsmf_comm_rank(c) == 0) {
        jsmf_ingest_store_opts with = *o;
        with.counted = v;
        rc = jsmf_ingest_open_store(path, inputs, n, &with, out, df, counted);
        if (count)
            *counted = st;
    }
    jsmf_vocab_free(v);
    return jsmf_comm_agree(c, rc);
}

void jsmf_ingest_summary_write(FILE *f, const char *p, const char *store, uint64_t mem,
                               const jsmf_ingest_summary *r)
{
    if (mem < r->mem_needed) {
        jsmf_report_line(f, p, "--mem %.0f MiB is below what reading, the store's writes and "
                         "the", mem / 1048576.0);
        jsmf_report_line(f, p, "per-word arrays need with a minimal accumulator (%.0f MiB): the "
                         "ingest used", r->mem_needed / 1048576.0);
        jsmf_report_line(f, p, "about that");
    }
    if (r->oversize_docs) {
        jsmf_report_line(f, p, "%" PRIu64 " document%s had more word pairs than --mem holds:",
                         r->oversize_docs, r->oversize_docs == 1 ? "" : "s");
        jsmf_report_line(f, p, "each was checkpointed alone");
    }
    if (r->inputs_skipped) {
        jsmf_report_line(f, p, "%u input%s already in %s skipped", r->inputs_skipped,
                         r->inputs_skipped == 1 ? "" : "s", store);
        jsmf_report_line(f, p, "(--force ingests them again)");
    }
    uint64_t all = r->tokens + r->tokens_dropped + r->oov_tokens;
    double t = r->seconds > 0 ? r->seconds : 1e-9;
    const char *s = r->flushes == 1 ? "" : "s";
    jsmf_report_line(f, p, "%s: %u input%s (%u resumed)", store, r->inputs_done,
                     r->inputs_done == 1 ? "" : "s", r->inputs_resumed);
    jsmf_report_line(f, p, "%" PRIu64 " documents (+%" PRIu64 " dropped), %" PRIu64 " tokens, "
                     "OOV %.2f%%", r->docs, r->docs_dropped, r->tokens,
                     all ? 100.0 * (double)r->oov_tokens / (double)all : 0.0);
    if (r->doc_buffer)
        jsmf_report_line(f, p, "%" PRIu64 " checkpoint%s (C's rows from the documents kept)",
                         r->flushes, s);
    else
        jsmf_report_line(f, p, "%" PRIu64 " checkpoint%s (dense block %u words)", r->flushes, s,
                         r->dense_width);
    jsmf_report_line(f, p, "%" PRIu64 " pair updates in %.2f s (%.0f docs/s, %.3g pairs/s)",
                     r->pairs, r->seconds, (double)(r->docs + r->docs_dropped) / t,
                     (double)r->pairs / t);
    jsmf_report_line(f, p, "waiting for adds %.3f s, checkpoints %.3f s", r->seconds_adding,
                     r->seconds_checkpoints);
}
