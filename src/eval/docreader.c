/* docreader.c — documents of one or more inputs (any format jsmf_io.h reads) in batches of
 * sparse count vectors over a model's rows: the common front end of infer and eval. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jsmf_eval.h"
#include "eval_internal.h"
#include "io/docs.h"

struct jsmf_docreader {
    const char *const *paths;
    uint32_t npaths, cur;        /* inputs, and the one being read */
    jsmf_read_opts opts;
    const jsmf_vocab *vocab;
    jsmf_wordmap *map;
    jsmf_docs *docs;             /* open reader of paths[cur], or NULL */
    uint32_t *uci_to_row;        /* UCI: the file's word id -> model row (UINT32_MAX = OOV) */
    uint32_t uci_n;
    uint32_t *count;             /* N counters of the document being mapped (zero between docs) */
    uint32_t *touched;           /* rows with a non-zero counter, N at most */
    uint32_t ntouched;
    uint64_t ndocs, oov;
    uint64_t bytes_total;        /* on-disk size of all inputs (0 when one is stdin) */
    uint64_t bytes_done;         /* on-disk size of the inputs finished */
};

int jsmf_docreader_open(const char *const *paths, uint32_t npaths, const jsmf_read_opts *opts,
                        const jsmf_vocab *vocab, jsmf_docreader **out)
{
    jsmf_docreader *r = calloc(1, sizeof *r);
    if (!r)
        return jsmf_error(JSMF_ENOMEM, "document reader: out of memory");
    r->paths = paths;
    r->npaths = npaths;
    if (opts) {
        r->opts = *opts;
    } else {
        jsmf_tokenizer tok = JSMF_TOKENIZER_DEFAULT;
        r->opts.tok = tok;
    }
    r->vocab = vocab;
    for (uint32_t i = 0; i < npaths; i++) {
        struct stat st;
        if (strcmp(paths[i], "-") && !stat(paths[i], &st)) {
            r->bytes_total += (uint64_t)st.st_size;
        } else {
            r->bytes_total = 0;
            break;
        }
    }
    r->count = calloc(vocab->n ? vocab->n : 1, sizeof *r->count);
    r->touched = malloc((vocab->n ? vocab->n : 1) * sizeof *r->touched);
    int rc = r->count && r->touched ? jsmf_wordmap_new(vocab, &r->map)
                                    : jsmf_error(JSMF_ENOMEM, "document reader: out of memory");
    if (rc) {
        jsmf_docreader_close(r);
        return rc;
    }
    *out = r;
    return 0;
}

/* UCI files (and LDA-C files opened with a vocabulary) number words by their own vocabulary
 * file: translate once per input. */
static int map_uci_vocab(jsmf_docreader *r)
{
    free(r->uci_to_row);
    r->uci_to_row = NULL;
    r->uci_n = 0;
    const jsmf_vocab *fv = jsmf_docs_vocab(r->docs);
    if (!fv)
        return 0;
    r->uci_to_row = malloc((fv->n ? fv->n : 1) * sizeof *r->uci_to_row);
    if (!r->uci_to_row)
        return jsmf_error(JSMF_ENOMEM, "document reader: out of memory");
    r->uci_n = fv->n;
    for (uint32_t i = 0; i < fv->n; i++)
        r->uci_to_row[i] = jsmf_wordmap_find(r->map, fv->words[i], strlen(fv->words[i]));
    return 0;
}

static int open_next_input(jsmf_docreader *r)
{
    int rc = jsmf_docs_open(r->paths[r->cur], &r->opts, &r->docs);
    if (rc)
        return rc;
    return map_uci_vocab(r); /* UCI, or LDA-C given its vocabulary file: ids via words */
}

static void count_row(jsmf_docreader *r, uint32_t row, uint32_t c, uint64_t *doc_oov)
{
    if (row == UINT32_MAX || row >= r->vocab->n) {
        *doc_oov += c;
        return;
    }
    if (!r->count[row])
        r->touched[r->ntouched++] = row;
    r->count[row] += c;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int batch_reserve(jsmf_docbatch *b, uint64_t docs, uint64_t ids)
{
    if (docs + 1 > b->cap_docs) {
        uint64_t cap = (docs + 1) * 2;
        uint64_t *st = realloc(b->start, cap * sizeof *st), *oov = NULL;
        if (st)
            b->start = st, oov = realloc(b->oov, cap * sizeof *oov);
        if (!st || !oov)
            return jsmf_error(JSMF_ENOMEM, "document batch: out of memory");
        b->oov = oov;
        b->cap_docs = cap;
    }
    if (ids > b->cap_ids) {
        uint64_t cap = ids * 2 + 1024;
        uint32_t *id = realloc(b->ids, cap * sizeof *id), *cn = NULL;
        if (id)
            b->ids = id, cn = realloc(b->counts, cap * sizeof *cn);
        if (!id || !cn)
            return jsmf_error(JSMF_ENOMEM, "document batch: out of memory");
        b->counts = cn;
        b->cap_ids = cap;
    }
    return 0;
}

/* Map one document to rows and append it to the batch (ids sorted, counters reset). */
static int append_doc(jsmf_docreader *r, const jsmf_doc *doc, jsmf_docbatch *b)
{
    uint64_t doc_oov = 0;
    r->ntouched = 0;
    if (jsmf_docs_format(r->docs) == JSMF_FORMAT_TEXT) {
        for (uint32_t i = 0; i < doc->ntokens; i++)
            count_row(r, jsmf_wordmap_find(r->map, doc->tok[i], doc->toklen[i]), 1, &doc_oov);
    } else {
        int uci = r->uci_to_row != NULL;
        for (uint32_t i = 0; i < doc->nids; i++) {
            uint32_t id = doc->ids[i];
            uint32_t row = uci ? (id < r->uci_n ? r->uci_to_row[id] : UINT32_MAX) : id;
            count_row(r, row, doc->counts[i], &doc_oov);
        }
    }
    qsort(r->touched, r->ntouched, sizeof *r->touched, cmp_u32);
    uint64_t at = b->start[b->ndocs];
    int rc = batch_reserve(b, b->ndocs + 1, at + r->ntouched);
    for (uint32_t i = 0; i < r->ntouched; i++) {
        uint32_t row = r->touched[i];
        if (!rc) {
            b->ids[at + i] = row;
            b->counts[at + i] = r->count[row];
        }
        r->count[row] = 0;
    }
    if (rc)
        return rc;
    b->oov[b->ndocs] = doc_oov;
    b->start[++b->ndocs] = at + r->ntouched;
    r->oov += doc_oov;
    r->ndocs++;
    return 0;
}

int jsmf_docreader_next(jsmf_docreader *r, jsmf_docbatch *b, uint32_t max_docs)
{
    b->ndocs = 0;
    b->first_index = r->ndocs;
    int rc = batch_reserve(b, max_docs ? max_docs : 1, 0);
    if (rc)
        return rc;
    b->start[0] = 0;
    while (b->ndocs < max_docs && r->cur < r->npaths) {
        if (!r->docs && (rc = open_next_input(r)))
            return rc;
        jsmf_doc doc;
        rc = jsmf_docs_next(r->docs, &doc);
        if (rc < 0)
            return rc;
        if (rc == 0) {
            r->bytes_done += jsmf_docs_size(r->docs);
            jsmf_read_stats st;
            jsmf_docs_stats(r->docs, &st);
            jsmf_read_stats_warn(jsmf_docs_name(r->docs), &st, r->opts.warn, r->opts.warn_arg);
            jsmf_docs_close(r->docs);
            r->docs = NULL;
            r->cur++;
            continue;
        }
        if ((rc = append_doc(r, &doc, b)))
            return rc;
    }
    return (int)b->ndocs;
}

uint64_t jsmf_docreader_docs(const jsmf_docreader *r) { return r->ndocs; }
uint64_t jsmf_docreader_oov(const jsmf_docreader *r) { return r->oov; }

void jsmf_docreader_bytes(const jsmf_docreader *r, double *done, double *total)
{
    *total = (double)r->bytes_total;
    *done = (double)r->bytes_done + (r->docs ? (double)jsmf_docs_disk_position(r->docs) : 0.0);
}

void jsmf_docreader_close(jsmf_docreader *r)
{
    if (!r)
        return;
    if (r->docs)
        jsmf_docs_close(r->docs);
    jsmf_wordmap_free(r->map);
    free(r->uci_to_row);
    free(r->count);
    free(r->touched);
    free(r);
}

void jsmf_docbatch_free(jsmf_docbatch *b)
{
    if (!b)
        return;
    free(b->start);
    free(b->ids);
    free(b->counts);
    free(b->oov);
    memset(b, 0, sizeof *b);
}
