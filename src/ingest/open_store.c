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
        rc = vocab_count_dist(c, inputs, n, &ro, &vo, 0, out, st);
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
    int rc = o->counted ? vocab_copy(o->counted, 1, out)
                        : count_vocabulary(NULL, inputs, n, o, out, st);
    if (!rc && (*out)->n == 0) {
        jsmf_vocab_free(*out);
        *out = NULL;
        rc = jsmf_error(JSMF_EFORMAT, "the inputs give an empty vocabulary (%" PRIu64
                        " documents counted); give --vocab", st->docs_counted);
    }
    return rc;
}

/* ---- the growth rule (formats/store.md, "Growth") ----------------------------------------- */

/* The rule lines of a vocabulary file written by jsmf vocab (formats/vocab.md): "# jsmf-rule:"
 * into *r (*found 1), "# jsmf-stopwords:" words into *stop. A file without them: *found 0. */
static int read_vocab_rule(const char *path, jsmf_store_rule *r, jsmf_vocab **stop, int *found)
{
    *found = 0, *stop = NULL;
    FILE *f = fopen(path, "r");
    if (!f)
        return JSMF_OK; /* jsmf_vocab_load says why */
    char line[4096], where[1100];
    int rc = JSMF_OK;
    jsmf_vocab *sw = NULL;
    for (uint64_t no = 1; !rc && fgets(line, sizeof line, f); no++) {
        if (line[0] != '#')
            continue;
        line[strcspn(line, "\r\n")] = 0;
        snprintf(where, sizeof where, "%s:%" PRIu64, path, no);
        if (!strncmp(line, "# jsmf-rule:", 12)) {
            memset(r, 0, sizeof *r);
            rc = jsmf_store_rule_parse(line + 12, where, r);
            *found = !rc;
        } else if (!strncmp(line, "# jsmf-stopwords:", 17)) {
            if (!sw && !(sw = calloc(1, sizeof *sw)))
                rc = jsmf_error(JSMF_ENOMEM, "out of memory");
            for (char *save = NULL, *w = rc ? NULL : strtok_r(line + 17, " ", &save); w;
                 w = strtok_r(NULL, " ", &save)) {
                char **nw = realloc(sw->words, (sw->n + 1) * sizeof *nw);
                if (!nw || !(nw[sw->n] = strdup(w))) {
                    if (nw)
                        sw->words = nw;
                    rc = jsmf_error(JSMF_ENOMEM, "out of memory");
                    break;
                }
                sw->words = nw, sw->n++;
            }
        }
    }
    fclose(f);
    if (!rc && *found && !strcmp(r->stopwords, "list") && !sw)
        rc = jsmf_error(JSMF_EFORMAT, "%s: its rule names stopwords=list but no "
                        "'# jsmf-stopwords:' line lists them", path);
    if (rc)
        jsmf_vocab_free(sw);
    else
        *stop = sw;
    return rc;
}

/* The rule this command leaves in the store: the one given (o->rule) applied to the store's
 * (`have`), or to a new store's vocabulary file's, or none. *set 1 when it must be written;
 * *stop the list of a rule with stopwords=list when the store must record one. Nothing is
 * written here, so that a bad rule changes nothing. */
static int resolve_rule(jsmf_store *s, const char *path, const jsmf_ingest_store_opts *o,
                        int is_new, jsmf_store_rule *want, jsmf_vocab **stop, int *set)
{
    jsmf_store_rule have = {0}, file = {0};
    int rc = s ? jsmf_store_rule_get(s, &have) : JSMF_OK, found = 0;
    *set = 0, *stop = NULL;
    if (!rc && is_new && o->vocab && (rc = read_vocab_rule(o->vocab, &file, stop, &found)))
        return rc;
    if (!rc && is_new && !o->vocab) /* the counting pass curates by jsmf vocab's defaults */
        found = !(rc = jsmf_store_rule_parse("min-df=5", path, &file));
    *want = found ? file : have;
    *set = found;
    if (!rc && o->rule) {
        int unfreeze = strstr(o->rule, "grow") != NULL, freeze = strstr(o->rule, "frozen") != NULL;
        if (have.state == JSMF_RULE_FROZEN && !unfreeze && !freeze)
            rc = jsmf_error(JSMF_EINVAL, "%s: the store is frozen (ingest --freeze): its vocabulary "
                            "does not grow; give --unfreeze with the rule options to let it grow "
                            "again", path);
        else if (!(rc = jsmf_store_rule_parse(o->rule, "--min-df/--max-df-frac/--max-words", want)))
            *set = 1;
    }
    if (!rc && *set && want->state == JSMF_RULE_GROW && !strcmp(want->stopwords, "list") &&
        !*stop) {
        if (s)
            rc = jsmf_store_rule_stopwords_get(s, stop);
        if (!rc && !*stop)
            rc = jsmf_error(JSMF_EINVAL, "%s: a rule with stopwords=list needs its list (a "
                            "vocabulary file from jsmf vocab carries it)", path);
    }
    if (rc) {
        jsmf_vocab_free(*stop);
        *stop = NULL;
    }
    return rc;
}

/* Write the rule resolve_rule settled on. */
static int apply_rule(jsmf_store *s, const jsmf_store_rule *want, const jsmf_vocab *stop, int set)
{
    return set ? jsmf_store_rule_set(s, want, stop) : JSMF_OK;
}

/* An existing store: the vocabulary and min_doc_len given must be what it was created with. */
static int check_existing(jsmf_store *s, const char *path, const jsmf_ingest_store_opts *o)
{
    jsmf_store_params p;
    jsmf_store_params_get(s, &p);
    if (o->min_doc_len_given && p.min_doc_len != o->min_doc_len)
        return jsmf_error(JSMF_EMISMATCH, "%s: --min-doc-len %u differs from the store's %u "
                          "(fixed at creation)", path, o->min_doc_len, p.min_doc_len);
    if (o->hold && p.hold != o->hold)
        return jsmf_error(JSMF_EMISMATCH, "%s: --hold %s differs from the store's %s (fixed at "
                          "creation; jsmf merge writes a store that holds rows)", path,
                          jsmf_store_hold_name(o->hold), jsmf_store_hold_name(p.hold));
    if (!o->vocab)
        return JSMF_OK;
    jsmf_vocab *want = NULL, *have = NULL;
    jsmf_store_growth g;
    int rc = jsmf_vocab_load(o->vocab, &want);
    if (!rc && !(rc = jsmf_store_vocab_get(s, &have)) && !(rc = jsmf_store_growth_get(s, &g))) {
        uint32_t n = have->n;
        if (want->n == g.first_words && have->n > want->n)
            have->n = want->n; /* the store grew past its first vocabulary: that is the file */
        rc = vocab_compare(want, o->vocab, have, path);
        have->n = n;
    }
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
    jsmf_store_rule want;
    jsmf_vocab *stop = NULL, *v;
    int set;
    int rc = resolve_rule(NULL, path, o, 1, &want, &stop, &set);
    if (!rc)
        rc = new_vocabulary(inputs, n, o, &v, counted);
    if (rc) {
        jsmf_vocab_free(stop);
        return rc;
    }
    jsmf_tokenizer tok = JSMF_TOKENIZER_DEFAULT;
    jsmf_store_params p = {.min_doc_len = o->min_doc_len, .tok_min_len = tok.min_len,
                           .tok_max_len = tok.max_len, .hold = o->hold};
    if (!o->mem_below_need)
        rc = ingest_mem_check(v->n, o->mem); /* refused before the store exists */
    if (!rc) /* the rule in the vocabulary's transaction: a kill leaves both or neither */
        rc = store_create_ruled(path, v, &p, set ? &want : NULL, stop, out);
    jsmf_vocab_free(stop);
    if (!rc && v->df && (*df = malloc((size_t)v->n * sizeof **df)))
        memcpy(*df, v->df, (size_t)v->n * sizeof **df); /* without it, ingest plans less well */
    jsmf_vocab_free(v);
    return rc;
}

int ingest_open_store(const char *path, const char *const *inputs, uint32_t n,
                           const jsmf_ingest_store_opts *o, jsmf_store **out, uint64_t **df,
                           jsmf_vocab_stats *counted)
{
    *df = NULL;
    memset(counted, 0, sizeof *counted);
    int rc = jsmf_store_open(path, JSMF_STORE_WRITE, out);
    if (!rc && store_has_vocab(*out)) {
        jsmf_store_rule want;
        jsmf_vocab *stop = NULL;
        int set;
        if (!(rc = check_existing(*out, path, o)) &&
            !(rc = resolve_rule(*out, path, o, 0, &want, &stop, &set)))
            rc = apply_rule(*out, &want, stop, set);
        jsmf_vocab_free(stop);
        if (rc) {
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
        return rc == JSMF_ENOTFOUND; /* other errors: ingest_open_store reports them */
    int missing = !store_has_vocab(s);
    jsmf_store_close(s);
    return missing;
}

int ingest_open_store_dist(struct jsmf_comm *c, const char *path, const char *const *inputs,
                                uint32_t n, const jsmf_ingest_store_opts *o, jsmf_store **out,
                                uint64_t **df, jsmf_vocab_stats *counted)
{
    *out = NULL, *df = NULL;
    memset(counted, 0, sizeof *counted);
    int64_t count = jsmf_comm_rank(c) == 0 && !o->vocab && store_missing(path);
    for (uint32_t i = 0; i < n && count; i++)
        if (!strcmp(inputs[i], "-"))
            count = 0; /* ingest_open_store says why a new store needs --vocab */
    int rc = comm_bcast(c, &count, sizeof count, 0);
    jsmf_vocab *v = NULL;
    jsmf_vocab_stats st = {0};
    if (!rc && count)
        rc = count_vocabulary(c, inputs, n, o, &v, &st);
    if (!(rc = comm_agree(c, rc)) && jsmf_comm_rank(c) == 0) {
        jsmf_ingest_store_opts with = *o;
        with.counted = v;
        if (!with.hold) /* a job of ranks ingests rows only (formats/store.md "Documents") */
            with.hold = JSMF_HOLD_ROWS;
        rc = ingest_open_store(path, inputs, n, &with, out, df, counted);
        if (count)
            *counted = st;
    }
    jsmf_vocab_free(v);
    return comm_agree(c, rc);
}

void ingest_summary_write(FILE *f, const char *p, const char *store, uint64_t mem,
                               const jsmf_ingest_summary *r)
{
    if (mem < r->mem_needed) {
        report_line(f, p, "--mem %.0f MiB is below what reading, the store's writes and "
                         "the", mem / 1048576.0);
        report_line(f, p, "per-word arrays need with a minimal accumulator (%.0f MiB): the "
                         "ingest used", r->mem_needed / 1048576.0);
        report_line(f, p, "about that");
    }
    if (r->oversize_docs) {
        report_line(f, p, "%" PRIu64 " document%s had more word pairs than --mem holds:",
                         r->oversize_docs, r->oversize_docs == 1 ? "" : "s");
        report_line(f, p, "each was checkpointed alone");
    }
    if (r->inputs_skipped) {
        report_line(f, p, "%u input%s already in %s skipped", r->inputs_skipped,
                         r->inputs_skipped == 1 ? "" : "s", store);
        report_line(f, p, "(--force ingests them again)");
    }
    uint64_t all = r->tokens + r->tokens_dropped + r->oov_tokens;
    double t = r->seconds > 0 ? r->seconds : 1e-9;
    const char *s = r->flushes == 1 ? "" : "s";
    report_line(f, p, "%s: %u input%s (%u resumed)", store, r->inputs_done,
                     r->inputs_done == 1 ? "" : "s", r->inputs_resumed);
    report_line(f, p, "%" PRIu64 " documents (+%" PRIu64 " dropped), %" PRIu64 " tokens, "
                     "OOV %.2f%%", r->docs, r->docs_dropped, r->tokens,
                     all ? 100.0 * (double)r->oov_tokens / (double)all : 0.0);
    if (r->doc_buffer == 2) {
        report_line(f, p, "%" PRIu64 " checkpoint%s (the store holds documents: no rows "
                         "summed)", r->flushes, s);
        report_line(f, p, "%" PRIu64 " documents in %.2f s (%.0f docs/s)", r->docs,
                         r->seconds, (double)(r->docs + r->docs_dropped) / t);
    } else {
        if (r->doc_buffer)
            report_line(f, p, "%" PRIu64 " checkpoint%s (C's rows from the documents kept)",
                             r->flushes, s);
        else
            report_line(f, p, "%" PRIu64 " checkpoint%s (dense block %u words)", r->flushes,
                             s, r->dense_width);
        report_line(f, p, "%" PRIu64 " pair updates in %.2f s (%.0f docs/s, %.3g pairs/s)",
                         r->pairs, r->seconds, (double)(r->docs + r->docs_dropped) / t,
                         (double)r->pairs / t);
    }
    report_line(f, p, "waiting for adds %.3f s, checkpoints %.3f s", r->seconds_adding,
                     r->seconds_checkpoints);
}
