/* prepass.c — the admission at the start of an ingest command (formats/store.md, "Growth"): one
 * counting pass over the command's new inputs (tokenized and mapped only, no pairs) decides with
 * the stored pending counts which words join before the command counts its pairs, so that a
 * word's pairs count from the command in which it qualifies. */
#include "jsmf_ingest.h"
#include "jsmf_io.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/grow.h"
#include "ingest_internal.h"
#include "io/docmap.h"
#include "io/docs.h"
#include "io/hash.h"
#include "pending.h"
#include "store/growth.h"

/* The pass's table of words takes this share of --mem (the ingest has not started: nothing
 * else of its size is held); a table that fills is counted again in 2, 4, ... parts by hash. */
#define AHEAD_SHARE 4
#define AHEAD_MIN_BYTES (1u << 20)

typedef struct ahead {
    jsmf_store *s;
    const jsmf_ingest_opts *o;
    jsmf_vocab *vocab;
    docmap dm;
    jsmf_store_params params;
    uint32_t min_len;
    jsmf_store_rule rule;
    jsmf_vocab *stop;
    jsmf_wordmap *stopmap;
    jsmf_store_input *recs;     /* the store's records */
    uint32_t nrecs;
    jsmf_store_input *marks;    /* the command's new inputs, as records without progress */
    uint32_t nmarks;
    const char **paths;         /* their paths, in the command's order */
    pending_table t;
    uint32_t stamp;
    uint64_t docs;              /* contributing documents (counted in the first part only) */
    jsmf_pending_word *kept;    /* words that may pass: df with the stored df >= min df */
    uint32_t nkept, capkept;
    /* a document's words */
    uint32_t *ids, *counts;
    size_t cap;
    docmap_oov oov;
    long exit_after;            /* test hook JSMF_TEST_EXIT_IN_PREPASS */
    uint64_t read;
} ahead;

static void ahead_free(ahead *a)
{
    docmap_free(&a->dm);
    jsmf_vocab_free(a->vocab);
    jsmf_vocab_free(a->stop);
    jsmf_wordmap_free(a->stopmap);
    free(a->recs), free(a->marks), free(a->paths);
    pending_free(&a->t);
    for (uint32_t i = 0; i < a->nkept; i++)
        free((char *)a->kept[i].word);
    free(a->kept);
    free(a->ids), free(a->counts);
    free(a->oov.word), free(a->oov.len), free(a->oov.count);
}

/* The inputs a command would start afresh, found as ingest_one's pick_record finds them: not
 * stdin, no partial record to resume, not complete unless forced; each with the occurrence its
 * record gets. */
static int find_new_inputs(ahead *a, const char *const *paths, uint32_t n)
{
    if (!(a->marks = calloc(n ? n : 1, sizeof *a->marks)) ||
        !(a->paths = calloc(n ? n : 1, sizeof *a->paths)))
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    unsigned char *claimed = calloc(a->nrecs ? a->nrecs : 1, 1); /* partial records resumed */
    if (!claimed)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    int rc = JSMF_OK;
    for (uint32_t i = 0; i < n && !rc; i++) {
        if (!strcmp(paths[i], "-"))
            continue; /* stdin cannot be read twice: its words join at the command's end */
        uint64_t fp, size;
        if ((rc = fingerprint_file(paths[i], &fp, &size)))
            break;
        uint32_t next_occ = 0;
        int complete = 0, resumed = 0;
        for (uint32_t r = 0; r < a->nrecs; r++) {
            const jsmf_store_input *x = &a->recs[r];
            if (x->fingerprint != fp)
                continue;
            if (x->occurrence >= next_occ)
                next_occ = x->occurrence + 1;
            if (x->state == JSMF_INPUT_PARTIAL && !claimed[r] && !resumed)
                claimed[r] = 1, resumed = 1;
            else if (x->state == JSMF_INPUT_COMPLETE || claimed[r])
                complete = 1; /* a claimed partial one completes before this input is read */
        }
        for (uint32_t k = 0; k < a->nmarks; k++)
            if (a->marks[k].fingerprint == fp) {
                complete = 1;
                if (a->marks[k].occurrence >= next_occ)
                    next_occ = a->marks[k].occurrence + 1;
            }
        if (resumed || (complete && !a->o->force))
            continue;
        jsmf_store_input *m = &a->marks[a->nmarks];
        memset(m, 0, sizeof *m);
        m->fingerprint = fp, m->occurrence = next_occ, m->size = size;
        m->state = JSMF_INPUT_PARTIAL, m->next_line = 1;
        snprintf(m->path, sizeof m->path, "%s", paths[i]);
        a->paths[a->nmarks++] = paths[i];
    }
    free(claimed);
    return rc;
}

static int reserve(ahead *a, size_t n)
{
    if (n <= a->cap)
        return JSMF_OK;
    size_t c = grow_capacity(a->cap, n, 4096);
    if (grow_array(&a->ids, c, sizeof *a->ids) || grow_array(&a->counts, c, sizeof *a->counts) ||
        grow_array(&a->oov.word, c, sizeof *a->oov.word) ||
        grow_array(&a->oov.len, c, sizeof *a->oov.len) ||
        grow_array(&a->oov.count, c, sizeof *a->oov.count))
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    a->cap = c;
    return JSMF_OK;
}

/* One document: contributing as ingest would judge it before the admission (its words of the
 * vocabulary at least min doc len), then its words outside the vocabulary that fall in this
 * part; *full when the table has no room for them. */
static int count_doc(ahead *a, const jsmf_docs *d, const jsmf_doc *doc, uint32_t part,
                     uint32_t parts, int *full)
{
    int text = io_format_tokens(docs_format(d));
    uint32_t k = 0;
    uint64_t oov = 0, len = 0;
    int rc = reserve(a, text ? doc->ntokens : doc->nids);
    if (!rc)
        rc = docmap_doc_words(&a->dm, d, doc, a->ids, a->counts, &k, &oov, &a->oov);
    if (rc)
        return rc;
    for (uint32_t i = 0; i < k; i++)
        len += text ? 1 : a->counts[i];
    if (len < a->min_len)
        return JSMF_OK;
    a->docs += part == 0;
    if (++a->stamp == 0) { /* stamps wrapped: no slot may hold the new one */
        for (uint32_t i = 0; i < a->t.cap; i++)
            a->t.slots[i].stamp = 0;
        a->stamp = 1;
    }
    for (uint32_t i = 0; i < a->oov.n; i++) {
        const char *w = a->oov.word[i];
        uint32_t l = a->oov.len[i];
        if (l == 0 || l > STORE_PENDING_WORD_MAX ||
            (parts > 1 && pending_word_hash(w, l) % parts != part) ||
            (a->stopmap && jsmf_wordmap_find(a->stopmap, w, l) != UINT32_MAX))
            continue;
        if (!pending_fits(&a->t, 1, l)) {
            *full = 1;
            return JSMF_OK;
        }
        if ((rc = pending_add(&a->t, w, l, a->oov.count[i], a->stamp)))
            return rc;
    }
    return JSMF_OK;
}

/* Read one input to its end for one part of the words. */
static int count_input(ahead *a, uint32_t i, uint32_t part, uint32_t parts, int *full)
{
    jsmf_read_opts ro = JSMF_READ_OPTS_DEFAULT;
    ro.format = (jsmf_format)a->o->format;
    ro.tok.min_len = a->params.tok_min_len;
    ro.tok.max_len = a->params.tok_max_len;
    ro.uci_vocab = a->o->uci_vocab;
    ro.ldac_vocab_size = a->vocab->n;
    ro.empty_runs = 1;
    jsmf_docs *d;
    int rc = docs_open(a->paths[i], &ro, &d);
    if (rc)
        return rc;
    a->marks[i].format = (uint32_t)docs_format(d);
    if ((rc = docmap_input(&a->dm, d))) {
        docs_close(d);
        return rc;
    }
    jsmf_doc doc;
    int got;
    uint64_t n = 0;
    while (!*full && !(rc = docs_next(d, &doc, &got)) && got) {
        if (doc.ndocs <= 1 && (rc = count_doc(a, d, &doc, part, parts, full)))
            break;
        if (a->exit_after && ++a->read == (uint64_t)a->exit_after)
            _exit(96); /* test hook: killed in the pre-pass (nothing of it is written) */
        if ((++n & 1023) == 0) {
            docs_progress(d, a->o->progress, a->o->progress_arg);
            if ((rc = cancel_check()))
                break;
        }
    }
    docs_close(d);
    return rc;
}

/* The part's words whose df, with the stored df, reaches min df: the only ones that can pass. */
static int keep_candidates(ahead *a)
{
    const jsmf_pending_word *w;
    uint32_t n;
    int rc = pending_list(&a->t, &w, &n);
    uint64_t *sdf = rc || !n ? NULL : malloc((size_t)n * sizeof *sdf);
    if (!rc && n && !sdf)
        rc = jsmf_error(JSMF_ENOMEM, "out of memory");
    if (!rc && n)
        rc = store_pending_df(a->s, w, n, sdf);
    for (uint32_t i = 0; i < n && !rc; i++) {
        if (w[i].df + sdf[i] < a->rule.min_df)
            continue;
        if (a->nkept == a->capkept) {
            uint32_t c = a->capkept ? 2 * a->capkept : 256;
            jsmf_pending_word *k = realloc(a->kept, c * sizeof *k);
            if (!k) {
                rc = jsmf_error(JSMF_ENOMEM, "out of memory");
                break;
            }
            a->kept = k, a->capkept = c;
        }
        char *copy = malloc(w[i].len ? w[i].len : 1);
        if (!copy) {
            rc = jsmf_error(JSMF_ENOMEM, "out of memory");
            break;
        }
        memcpy(copy, w[i].word, w[i].len);
        a->kept[a->nkept++] = (jsmf_pending_word){copy, w[i].len, w[i].df, w[i].tf};
    }
    free(sdf);
    return rc;
}

static int word_cmp(const void *x, const void *y)
{
    const jsmf_pending_word *a = x, *b = y;
    int c = memcmp(a->word, b->word, a->len < b->len ? a->len : b->len);
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

/* The pass: every new input read once for each part of the words (one part unless the table
 * fills, then 2, 4, ...: the counts are exact whatever --mem). */
static int count_all(ahead *a)
{
    uint64_t mem = a->o->mem ? a->o->mem : jsmf_mem_default();
    uint64_t limit = mem / AHEAD_SHARE < AHEAD_MIN_BYTES ? AHEAD_MIN_BYTES : mem / AHEAD_SHARE;
    const char *hook = getenv("JSMF_TEST_PREPASS_BYTES"); /* tests: a table that fills */
    if (hook && atoll(hook) > 0)
        limit = (uint64_t)atoll(hook);
    for (uint32_t parts = 1;; parts *= 2) {
        int full = 0, rc = JSMF_OK;
        a->docs = 0;
        for (uint32_t part = 0; part < parts && !full && !rc; part++) {
            pending_free(&a->t);
            if ((rc = pending_init(&a->t, limit)))
                return rc;
            for (uint32_t i = 0; i < a->nmarks && !full && !rc; i++)
                rc = count_input(a, i, part, parts, &full);
            if (!rc && !full)
                rc = keep_candidates(a);
        }
        if (rc || !full)
            return rc;
        for (uint32_t i = 0; i < a->nkept; i++) /* start again in twice the parts */
            free((char *)a->kept[i].word);
        a->nkept = 0;
        if (parts >= (1u << 20))
            return jsmf_error(JSMF_ENOMEM, "--mem %" PRIu64 " holds too few of the words outside "
                              "the vocabulary to count them", mem);
    }
}

static int ahead_open(ahead *a)
{
    int rc = jsmf_store_vocab_get(a->s, &a->vocab);
    if (!rc)
        rc = jsmf_store_params_get(a->s, &a->params);
    if (!rc)
        rc = docmap_init(&a->dm, a->vocab);
    if (!rc)
        rc = jsmf_store_inputs_get(a->s, &a->recs, &a->nrecs);
    if (!rc)
        rc = ingest_rule_stopwords(a->s, &a->rule, &a->stop);
    if (!rc && a->stop && a->stop->n)
        rc = jsmf_wordmap_new(a->stop, &a->stopmap);
    a->min_len = a->params.min_doc_len < 2 ? 2 : a->params.min_doc_len;
    const char *hook = getenv("JSMF_TEST_EXIT_IN_PREPASS");
    a->exit_after = hook ? atol(hook) : 0;
    return rc;
}

int ingest_admit_ahead(jsmf_store *s, const char *const *paths, uint32_t n,
                            const jsmf_ingest_opts *o, jsmf_ingest_ahead *out)
{
    memset(out, 0, sizeof *out);
    jsmf_ingest_opts defaults = {0};
    ahead a = {.s = s, .o = o ? o : &defaults};
    int rc = jsmf_store_rule_get(s, &a.rule);
    if (rc || a.rule.state != JSMF_RULE_GROW)
        return rc;
    if (!(rc = ahead_open(&a)))
        rc = find_new_inputs(&a, paths, n);
    if (!rc && a.nmarks)
        rc = count_all(&a);
    /* inputs of which no document counts (before the admission) would add nothing: no mark,
     * and the command fails or goes on as without a pre-pass */
    if (!rc && a.nmarks && a.docs) {
        if (a.nkept > 1)
            qsort(a.kept, a.nkept, sizeof *a.kept, word_cmp);
        store_ahead x = {a.kept, a.nkept, a.docs, a.marks, a.nmarks};
        rc = store_admit_ahead(s, a.stop, &x, &out->admitted);
        if (!rc) {
            out->marks = a.marks, out->n_marks = a.nmarks, a.marks = NULL;
            out->docs = a.docs;
        }
    }
    ahead_free(&a);
    return rc;
}
