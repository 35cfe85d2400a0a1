/* files.c — ingesting input files into a store: fingerprints and checkpoint records (resume,
 * refuse, force), reading documents through jsmf_io, mapping words and file ids to the store's
 * vocabulary, and counting out-of-vocabulary tokens. */
#include "jsmf_ingest.h"
#include "jsmf_io.h"
#include "core/grow.h"
#include "io/docmap.h"
#include "core/tell.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "ingest_internal.h"
#include "io/docs.h"
#include "io/hash.h"
#include "io/tokenize.h"

/* ---- one run ----------------------------------------------------------------------------- */

typedef struct run {
    jsmf_store *s;
    const jsmf_ingest_opts *o;
    jsmf_ingest *g;
    jsmf_vocab *vocab;
    docmap dm;                /* words and file ids -> the store's rows */
    jsmf_store_params params;
    jsmf_store_input *recs;   /* the store's records, plus the ones started in this run */
    uint32_t nrecs;
    uint32_t *ids, *counts;
    size_t cap;
    docmap_oov oov;           /* a document's words outside the vocabulary (growth) */
    int grow;                 /* the store's rule grows: list them */
    const jsmf_store_input *marks; /* records this command's admission wrote: not resumed */
    uint32_t nmarks;
    unsigned vocab_checked;   /* formats (bit 1 << format) whose unmatchable words were told */
    uint64_t docs_read;       /* documents read in this run, counted or dropped */
    const char *last_read;    /* the input read last (for messages) */
} run;

/* Words of the store's vocabulary that the tokenizer (or the item reader) can never produce
 * stay rows of zeros for such input: say so once per format, with the first few and why
 * (formats/vocab.md). */
static void warn_unmatchable_words(run *r, jsmf_format fmt)
{
    if (!io_format_tokens(fmt) || (r->vocab_checked & 1u << fmt) || !r->o->warn)
        return;
    r->vocab_checked |= 1u << fmt;
    int items = fmt == JSMF_FORMAT_ITEMS;
    jsmf_tokenizer tok = {.min_len = r->params.tok_min_len, .max_len = r->params.tok_max_len};
    if (!tok.min_len && !tok.max_len) { /* as the reader takes them (docs_open) */
        jsmf_tokenizer def = JSMF_TOKENIZER_DEFAULT;
        tok = def;
    }
    char list[1200] = "";
    size_t used = 0;
    uint32_t bad = 0;
    for (uint32_t i = 0; i < r->vocab->n; i++) {
        const char *why = items ? item_problem(r->vocab->words[i])
                                : token_problem(&tok, r->vocab->words[i]);
        if (!why || bad++ >= 3)
            continue;
        int w = snprintf(list + used, sizeof list - used, "%sword %u '%.40s' %s",
                         used ? "; " : "", i + 1, r->vocab->words[i], why);
        if (w > 0 && (size_t)w < sizeof list - used)
            used += (size_t)w;
    }
    /* baskets read as text by mistake: the store's inputs say what it was fed */
    int fed_items = 0;
    for (uint32_t i = 0; i < r->nrecs && !items; i++)
        fed_items |= r->recs[i].format == JSMF_FORMAT_ITEMS;
    if (bad)
        tell_line(r->o->warn, r->o->warn_arg, "%u of the %u words of the vocabulary of %s can "
                  "never match %s (formats/vocab.md): %s%s%s", bad, r->vocab->n,
                  jsmf_store_path(r->s), items ? "item ids, which are split at blanks" :
                  "text input, which is lowercased and split at anything but letters", list,
                  bad > 3 ? "; ..." : "", fed_items ? "; the store was fed items before: "
                  "--format items?" : "");
}

/* After an input read to its end: what the reader met, and an input that added nothing. A
 * resumed input read from its last checkpoint may well have nothing left. */
static void warn_input(run *r, jsmf_docs *d, const jsmf_ingest_summary *before, int resumed)
{
    jsmf_read_stats st;
    docs_stats(d, &st);
    if (resumed && st.docs == 0)
        return;
    read_stats_warn(docs_name(d), &st, r->o->warn, r->o->warn_arg);
    jsmf_ingest_summary now;
    ingest_totals(r->g, &now);
    uint64_t tokens = now.tokens_dropped - before->tokens_dropped;
    uint64_t oov = now.oov_tokens - before->oov_tokens;
    if (st.docs > st.empty_docs && now.docs == before->docs)
        tell_line(r->o->warn, r->o->warn_arg, "%s: adds nothing to C: none of its %" PRIu64
                  " documents has %u or more words of the vocabulary (%" PRIu64 " of its %" PRIu64
                  " tokens are outside it)", docs_name(d), st.docs,
                  r->params.min_doc_len < 2 ? 2 : r->params.min_doc_len, oov, oov + tokens);
}

static int reserve(run *r, size_t n)
{
    if (n <= r->cap)
        return JSMF_OK;
    size_t c = grow_capacity(r->cap, n, 4096);
    if (grow_array(&r->ids, c, sizeof *r->ids) || grow_array(&r->counts, c, sizeof *r->counts) ||
        (r->grow && (grow_array(&r->oov.word, c, sizeof *r->oov.word) ||
                     grow_array(&r->oov.len, c, sizeof *r->oov.len) ||
                     grow_array(&r->oov.count, c, sizeof *r->oov.count))))
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    r->cap = c;
    return JSMF_OK;
}

/* Find the record to continue, or make a new one; JSMF_EEXIST for a complete input. */
static int pick_record(run *r, const char *path, uint64_t fp, uint64_t size, jsmf_store_input *rec,
                       int *resumed)
{
    uint32_t next_occ = 0;
    int complete = 0;
    *resumed = 0;
    for (uint32_t i = 0; i < r->nrecs; i++) {
        jsmf_store_input *x = &r->recs[i];
        if (x->fingerprint != fp)
            continue;
        if (x->occurrence >= next_occ)
            next_occ = x->occurrence + 1;
        if (x->state == JSMF_INPUT_PARTIAL && !*resumed) {
            *rec = *x;
            *resumed = 1;
        } else if (x->state == JSMF_INPUT_COMPLETE) {
            complete = 1;
        }
    }
    if (*resumed) {
        snprintf(rec->path, sizeof rec->path, "%s", path);
        return JSMF_OK;
    }
    /* stdin is fingerprinted only at its end (finish_stdin) */
    if (complete && fp != 0 && !r->o->force)
        return jsmf_error(JSMF_EEXIST, "%s: already ingested into %s (fingerprint %016" PRIx64
                          "); use --force to add it again", path, jsmf_store_path(r->s), fp);

    memset(rec, 0, sizeof *rec);
    rec->fingerprint = fp;
    rec->occurrence = next_occ;
    rec->size = size;
    rec->next_line = 1;
    snprintf(rec->path, sizeof rec->path, "%s", path);
    return JSMF_OK;
}

/* Keep the run's view of the records current: the record under key (fp, occ) becomes rec. */
static int remember_record(run *r, uint64_t fp, uint32_t occ, const jsmf_store_input *rec)
{
    for (uint32_t i = 0; i < r->nrecs; i++)
        if (r->recs[i].fingerprint == fp && r->recs[i].occurrence == occ) {
            r->recs[i] = *rec;
            return JSMF_OK;
        }
    jsmf_store_input *a = realloc(r->recs, (r->nrecs + 1) * sizeof *a);
    if (!a)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    r->recs = a;
    r->recs[r->nrecs++] = *rec;
    return JSMF_OK;
}

static int feed_doc(run *r, jsmf_docs *d, const jsmf_doc *doc)
{
    int text = io_format_tokens(docs_format(d)); /* tokens: text or items */
    uint32_t k = 0;
    uint64_t oov = 0;
    int rc = reserve(r, text ? doc->ntokens : doc->nids);
    if (!rc)
        rc = docmap_doc_words(&r->dm, d, doc, r->ids, r->counts, &k, &oov, r->grow ? &r->oov : NULL);
    if (rc)
        return rc;
    if (r->grow)
        jsmf_ingest_doc_words(r->g, (const char *const *)r->oov.word, r->oov.len, r->oov.count, r->oov.n);
    /* a text (or items) document's ids repeat with no counts: the ingest counts them */
    return jsmf_ingest_doc(r->g, r->ids, text ? NULL : r->counts, k, oov, doc->next_offset,
                           doc->next_line, doc->index + 1);
}

/* Stdin is fingerprinted at its end: its record, keyed (0, occurrence) while it was read, is
 * completed under its content's key. Content the store already holds completely is refused as
 * for a file when none of it was stored yet (dropped from the buffer: nothing is added); when a
 * checkpoint already stored part of it, it cannot be taken back and is completed as a repeat.
 * `stored`: the record may be in the store (resumed, or checkpointed while it was read). */
static int finish_stdin(run *r, jsmf_store_input *rec, uint64_t fp, uint64_t size, int stored,
                        jsmf_ingest_summary *sum)
{
    uint64_t old_fp = rec->fingerprint;
    uint32_t old_occ = rec->occurrence, occ = 0;
    const jsmf_store_input *same = NULL;
    for (uint32_t i = 0; i < r->nrecs && fp; i++) {
        const jsmf_store_input *x = &r->recs[i];
        if (x->fingerprint != fp)
            continue;
        if (x->occurrence >= occ)
            occ = x->occurrence + 1;
        if (x->state == JSMF_INPUT_COMPLETE && !same)
            same = x;
    }
    int rc;
    if (same && !r->o->force) {
        if (!stored) {
            if ((rc = ingest_input_discard(r->g)))
                return rc;
            return jsmf_error(JSMF_EEXIST, "%s: already ingested into %s (fingerprint %016" PRIx64
                              ", from %s); use --force to add it again", rec->path,
                              jsmf_store_path(r->s), fp,
                              strcmp(same->path, "-") ? same->path : "stdin");
        }
        sum->inputs_repeated++;
    }
    rec->state = JSMF_INPUT_COMPLETE;
    if (!fp) {
        if ((rc = jsmf_ingest_input_done(r->g)))
            return rc;
    } else {
        if ((rc = ingest_input_done_as(r->g, fp, occ, size, stored)))
            return rc;
        rec->fingerprint = fp, rec->occurrence = occ, rec->size = size;
    }
    return remember_record(r, old_fp, old_occ, rec);
}

/* Ingest one input: a whole file or stdin, or (piece != NULL) the documents of a piece of a
 * file, recorded under the piece's key. */
static int ingest_one(run *r, const char *path, const jsmf_ingest_piece *piece,
                      jsmf_ingest_summary *sum)
{
    uint64_t fp = 0, size = 0;
    int rc, resumed, is_stdin = !piece && !strcmp(path, "-");
    if (piece)
        fp = piece->key;
    else if (!is_stdin && (rc = fingerprint_file(path, &fp, &size)))
        return rc;
    jsmf_store_input rec;
    if ((rc = pick_record(r, path, fp, size, &rec, &resumed)))
        return rc;
    for (uint32_t i = 0; resumed && i < r->nmarks; i++) /* started by this command's admission */
        if (r->marks[i].fingerprint == rec.fingerprint && r->marks[i].occurrence == rec.occurrence)
            resumed = 0;
    if (piece && !resumed) /* a piece starts where the file's previous piece ended */
        rec.next_offset = piece->start_offset, rec.next_line = piece->start_line,
        rec.next_doc = piece->start_doc;
    jsmf_read_opts ro = JSMF_READ_OPTS_DEFAULT;
    ro.format = (jsmf_format)r->o->format;
    ro.tok.min_len = r->params.tok_min_len;
    ro.tok.max_len = r->params.tok_max_len;
    ro.uci_vocab = r->o->uci_vocab;
    ro.start_offset = rec.next_offset;
    ro.start_line = rec.next_line;
    ro.start_doc = rec.next_doc;
    ro.ldac_vocab_size = r->vocab->n;
    ro.end_offset = piece ? piece->end_offset : 0;
    ro.empty_runs = 1;
    jsmf_docs *d;
    if ((rc = docs_open(path, &ro, &d)))
        return rc;
    rec.format = (uint32_t)docs_format(d);
    warn_unmatchable_words(r, (jsmf_format)rec.format);
    jsmf_ingest_summary before;
    ingest_totals(r->g, &before);
    /* stdin may prove a duplicate at its end: then it is dropped, which needs a buffer that
     * holds nothing of the inputs before it */
    int check_dup = is_stdin && !resumed && !r->o->force;
    if ((rc = docmap_input(&r->dm, d)) || (check_dup && (rc = jsmf_ingest_checkpoint(r->g))) ||
        (rc = jsmf_ingest_input(r->g, &rec))) {
        docs_close(d);
        return rc;
    }
    uint64_t checkpoints = ingest_checkpoints(r->g);
    jsmf_doc doc;
    uint64_t ndocs = 0;
    int got;
    while (!(rc = docs_next(d, &doc, &got)) && got) {
        if (doc.ndocs > 1)
            rc = ingest_empty_docs(r->g, doc.ndocs, doc.next_offset, doc.next_line,
                                        doc.index + doc.ndocs);
        else
            rc = feed_doc(r, d, &doc);
        if (rc)
            break;
        ndocs += doc.ndocs - 1;
        if ((++ndocs & 1023) == 0) {
            docs_progress(d, r->o->progress, r->o->progress_arg);
            /* cancelled (jsmf_cancel): keep what was read, so the same call resumes here */
            if ((rc = cancel_check())) {
                int crc = jsmf_ingest_checkpoint(r->g);
                rc = crc ? crc : jsmf_error(JSMF_EINTR, "%s: interrupted after document %llu "
                                            "(checkpointed: the same ingest resumes there)",
                                            path, (unsigned long long)(doc.index + doc.ndocs));
                break;
            }
        }
    }
    r->docs_read += ndocs;
    r->last_read = path;
    if (rc == 0)
        warn_input(r, d, &before, resumed);
    if (rc == 0 && is_stdin)
        rc = docs_fingerprint(d, &fp, &size);
    docs_close(d);
    if (rc)
        return rc;
    sum->inputs_resumed += resumed;
    if (is_stdin)
        return finish_stdin(r, &rec, fp, size,
                            resumed || ingest_checkpoints(r->g) != checkpoints, sum);
    rec.state = JSMF_INPUT_COMPLETE;
    if ((rc = remember_record(r, rec.fingerprint, rec.occurrence, &rec)))
        return rc;
    return jsmf_ingest_input_done(r->g);
}

/* A run that resumed nothing must add documents to C: else nothing usable came of its inputs,
 * and it fails before the final checkpoint, leaving the store as it was. */
static int check_something_added(run *r, uint32_t nread)
{
    jsmf_ingest_summary t;
    ingest_totals(r->g, &t);
    if (t.docs > 0 || nread == 0 || !r->last_read)
        return JSMF_OK;
    const char *what = nread == 1 ? r->last_read : "the inputs";
    if (!strcmp(what, "-"))
        what = "<stdin>";
    if (r->docs_read == 0)
        return jsmf_error(JSMF_EFORMAT, "%s: nothing to ingest: %s empty (no documents)", what,
                          nread == 1 ? "the input is" : "all are");
    if (t.oov_tokens + t.tokens_dropped == 0)
        return jsmf_error(JSMF_EFORMAT, "%s: nothing to ingest: all %" PRIu64 " documents are empty "
                          "(blank lines, or no token)", what, r->docs_read);
    return jsmf_error(JSMF_EFORMAT, "%s: nothing to ingest: none of the %" PRIu64 " documents has "
                      "%u or more words of the vocabulary (%" PRIu64 " of %" PRIu64 " tokens are "
                      "outside it)", what, r->docs_read,
                      r->params.min_doc_len < 2 ? 2 : r->params.min_doc_len, t.oov_tokens,
                      t.oov_tokens + t.tokens_dropped);
}

/* Admit the pending words that pass the store's rule (jsmf_store_admit), without its
 * stopwords. */
int jsmf_ingest_admit(jsmf_store *s, uint32_t *admitted)
{
    jsmf_store_rule rule;
    jsmf_vocab *stop = NULL;
    int rc = jsmf_store_rule_get(s, &rule);
    if (!rc)
        rc = ingest_rule_stopwords(s, &rule, &stop);
    if (!rc)
        rc = jsmf_store_admit(s, stop, admitted);
    jsmf_vocab_free(stop);
    return rc;
}

/* The inputs of one command: paths (whole inputs) or pieces. Pieces are parts of a job that
 * another process completes, so a piece already complete is simply done, and a process whose
 * pieces add nothing is no failure of its own (the job checks the total). */
static int ingest_inputs(jsmf_store *s, const char *const *paths, const jsmf_ingest_piece *pieces,
                         uint32_t n, const jsmf_ingest_opts *o, jsmf_ingest_summary *sum)
{
    jsmf_ingest_summary local = {0};
    jsmf_ingest_opts defaults = {0};
    run r = {.s = s, .o = o ? o : &defaults};
    /* the admission at the start: words that qualify with this command's new inputs join
     * before their pairs are counted (pieces are an MPI job's, whose rank 0 admitted first) */
    jsmf_ingest_ahead ahead = {0};
    int rc = pieces ? JSMF_OK : ingest_admit_ahead(s, paths, n, r.o, &ahead);
    r.marks = ahead.marks, r.nmarks = ahead.n_marks;
    if (!rc)
        rc = jsmf_store_vocab_get(s, &r.vocab);
    if (!rc)
        rc = jsmf_store_params_get(s, &r.params);
    if (!rc)
        rc = docmap_init(&r.dm, r.vocab);
    if (!rc)
        rc = jsmf_store_inputs_get(s, &r.recs, &r.nrecs);
    jsmf_store_rule rule;
    if (!rc && !(rc = jsmf_store_rule_get(s, &rule)))
        r.grow = rule.state == JSMF_RULE_GROW;
    if (!rc)
        rc = jsmf_ingest_new(s, r.o, &r.g);
    /* complete inputs are skipped, so that rerunning an interrupted command over several
     * inputs resumes it; only when nothing is left to do is that an error */
    char first_skip[1024] = "";
    for (uint32_t i = 0; i < n && !rc; i++) {
        const jsmf_ingest_piece *piece = pieces ? &pieces[i] : NULL;
        rc = ingest_one(&r, piece ? piece->path : paths[i], piece, &local);
        if (rc == JSMF_EEXIST) {
            if (!local.inputs_skipped++)
                snprintf(first_skip, sizeof first_skip, "%s", jsmf_errmsg_for(rc));
            jsmf_error_clear(); /* handled: a complete input is skipped */
            rc = 0;
        }
    }
    int all_skipped = !rc && n && local.inputs_skipped == n && !pieces;
    if (!rc && !all_skipped && r.g && !local.inputs_resumed && !pieces)
        rc = check_something_added(&r, n - local.inputs_skipped);
    if (r.g) {
        uint32_t resumed = local.inputs_resumed, skipped = local.inputs_skipped;
        uint32_t repeated = local.inputs_repeated;
        if (rc || all_skipped)
            jsmf_ingest_free(r.g); /* the store stays at its last checkpoint */
        else
            rc = jsmf_ingest_finish(r.g, &local);
        local.inputs_resumed = resumed, local.inputs_skipped = skipped;
        local.inputs_repeated = repeated;
    }
    /* words are admitted once the command's inputs are all complete: a point fixed by the
     * inputs, never by a checkpoint. A rerun that finds them all complete admits too: after a
     * kill between the last checkpoint and the admission, the same counts admit the same
     * words; after a complete run, nothing. */
    uint32_t admitted = 0;
    if (!rc && r.grow && !pieces)
        rc = jsmf_ingest_admit(s, &admitted);
    if (!rc && all_skipped && !admitted)
        rc = jsmf_error(JSMF_EEXIST, "%s%s", first_skip,
                        n > 1 ? " (and so are all the other inputs)" : "");
    if (sum)
        *sum = local;
    docmap_free(&r.dm);
    free(r.oov.word), free(r.oov.len), free(r.oov.count);
    jsmf_vocab_free(r.vocab);
    free(r.recs), free(r.ids), free(r.counts);
    free(ahead.marks);
    return rc;
}

int jsmf_ingest_files(jsmf_store *s, const char *const *paths, uint32_t n,
                      const jsmf_ingest_opts *o, jsmf_ingest_summary *sum)
{
    return ingest_inputs(s, paths, NULL, n, o, sum);
}

int ingest_pieces(jsmf_store *s, const jsmf_ingest_piece *pieces, uint32_t n,
                       const jsmf_ingest_opts *o, jsmf_ingest_summary *sum)
{
    return ingest_inputs(s, NULL, pieces, n, o, sum);
}
