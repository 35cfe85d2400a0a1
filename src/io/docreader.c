/* docreader.c — documents of one or more inputs (any format jsmf_io.h reads) in batches of
 * sparse count vectors over a vocabulary's rows: the common front end of infer, eval and refine. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "docreader.h"
#include "core/grow.h"
#include "io/docmap.h"
#include "io/docs.h"

struct docreader {
    const char *const *paths;
    uint32_t npaths, cur;        /* inputs, and the one being read */
    jsmf_read_opts opts;
    const jsmf_vocab *vocab;
    docmap dm;                   /* words and file ids -> the model's rows */
    jsmf_docs *docs;             /* open reader of paths[cur], or NULL */
    uint32_t *rows, *rcounts;    /* the document being mapped, in reading order */
    uint64_t rcap;
    uint32_t *count;             /* N counters of the document being mapped (zero between docs) */
    uint32_t *touched;           /* rows with a non-zero counter, N at most */
    uint32_t ntouched;
    uint64_t ndocs, oov;
    uint64_t bytes_total;        /* on-disk size of all inputs (0 when one is stdin) */
    uint64_t bytes_done;         /* on-disk size of the inputs finished */
};

int docreader_open(const char *const *paths, uint32_t npaths, const jsmf_read_opts *opts,
                        const jsmf_vocab *vocab, docreader **out)
{
    docreader *r = calloc(1, sizeof *r);
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
    /* bare LDA-C ids (no vocabulary file) are rows: one beyond the model is an error
     * (formats/inputs.md), named by the reader with its byte, as ingest names it */
    if (!r->opts.uci_vocab && (!r->opts.ldac_vocab_size || r->opts.ldac_vocab_size > vocab->n))
        r->opts.ldac_vocab_size = vocab->n;
    int rc = r->count && r->touched ? docmap_init(&r->dm, vocab)
                                    : jsmf_error(JSMF_ENOMEM, "document reader: out of memory");
    if (rc) {
        docreader_close(r);
        return rc;
    }
    *out = r;
    return 0;
}

static int open_next_input(docreader *r)
{
    int rc = docs_open(r->paths[r->cur], &r->opts, &r->docs);
    if (rc)
        return rc;
    return docmap_input(&r->dm, r->docs); /* UCI, or LDA-C given its vocabulary file */
}

static void count_row(docreader *r, uint32_t row, uint32_t c)
{
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
static int append_doc(docreader *r, const jsmf_doc *doc, jsmf_docbatch *b)
{
    uint64_t doc_oov = 0;
    uint64_t need = io_format_tokens(docs_format(r->docs)) ? doc->ntokens : doc->nids;
    if (need > r->rcap) {
        uint64_t cap = grow_capacity(r->rcap, need, 1024);
        if (grow_array(&r->rows, cap, sizeof *r->rows) ||
            grow_array(&r->rcounts, cap, sizeof *r->rcounts))
            return jsmf_error(JSMF_ENOMEM, "document reader: out of memory");
        r->rcap = cap;
    }
    uint32_t n;
    int rc = docmap_doc(&r->dm, r->docs, doc, r->rows, r->rcounts, &n, &doc_oov);
    if (rc)
        return rc;
    r->ntouched = 0;
    for (uint32_t i = 0; i < n; i++)
        count_row(r, r->rows[i], r->rcounts[i]);
    qsort(r->touched, r->ntouched, sizeof *r->touched, cmp_u32);
    uint64_t at = b->start[b->ndocs];
    rc = batch_reserve(b, b->ndocs + 1, at + r->ntouched);
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

int docreader_next(docreader *r, jsmf_docbatch *b, uint32_t max_docs, uint32_t *ndocs)
{
    *ndocs = 0;
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
        int got;
        if ((rc = docs_next(r->docs, &doc, &got)))
            return rc;
        if (!got) {
            r->bytes_done += docs_size(r->docs);
            jsmf_read_stats st;
            docs_stats(r->docs, &st);
            read_stats_warn(docs_name(r->docs), &st, r->opts.warn, r->opts.warn_arg);
            docs_close(r->docs);
            r->docs = NULL;
            r->cur++;
            continue;
        }
        if ((rc = append_doc(r, &doc, b)))
            return rc;
    }
    *ndocs = b->ndocs;
    return JSMF_OK;
}

uint64_t docreader_docs(const docreader *r) { return r->ndocs; }
uint64_t docreader_oov(const docreader *r) { return r->oov; }

void docreader_bytes(const docreader *r, double *done, double *total)
{
    *total = (double)r->bytes_total;
    *done = (double)r->bytes_done + (r->docs ? (double)docs_disk_position(r->docs) : 0.0);
}

void docreader_close(docreader *r)
{
    if (!r)
        return;
    if (r->docs)
        docs_close(r->docs);
    docmap_free(&r->dm);
    free(r->rows);
    free(r->rcounts);
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
