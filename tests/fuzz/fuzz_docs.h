/* fuzz_docs.h — the document-reader check the text, UCI, LDA-C and items targets share: read
 * every document of the input, check what the reader promises of each (formats/inputs.md,
 * jsmf_io.h), then resume at one of the document boundaries it reported and check that the
 * documents from there are the same ones. */
#ifndef JSMF_FUZZ_DOCS_H
#define JSMF_FUZZ_DOCS_H

#include <string.h>

#include "fuzz_util.h"
#include "jsmf_io.h"
#include "io/docs.h"
#include "io/tokenize.h"

#define FUZZ_MAX_DOCS 4096 /* a header may promise 10^18 empty documents: read this many */

typedef struct fuzz_doc_sig {
    uint64_t line, offset, next_offset, next_line, digest;
} fuzz_doc_sig;

static fuzz_doc_sig fuzz_sig[FUZZ_MAX_DOCS];

/* Check one document and return its digest. */
static uint64_t fuzz_doc_check(const jsmf_docs *r, const jsmf_doc *d, uint64_t want_index,
                               uint64_t size)
{
    FUZZ_CHECK(d->index == want_index);
    FUZZ_CHECK(d->offset <= d->next_offset);
    FUZZ_CHECK(d->line >= 1 && d->line <= d->next_line);
    uint64_t h = fuzz_hash(0xcbf29ce484222325ULL, &d->line, sizeof d->line);
    h = fuzz_hash(h, &d->offset, sizeof d->offset);
    int items = docs_format(r) == JSMF_FORMAT_ITEMS;
    if (io_format_tokens(docs_format(r))) {
        FUZZ_CHECK(d->text && !memchr(d->text, '\n', d->text_len));
        FUZZ_CHECK(d->text_len <= d->next_offset - d->offset);
        if (size) /* a plain file: the decoded bytes are the file's bytes */
            FUZZ_CHECK(d->next_offset <= size);
        h = fuzz_hash(h, d->text, d->text_len);
        for (uint32_t i = 0; i < d->ntokens; i++) {
            FUZZ_CHECK(d->toklen[i] >= 1);
            /* the token and the pad the reader promises after it are readable (ASan sees it) */
            uint64_t x = fuzz_hash(0, d->tok[i], (size_t)d->toklen[i] + JSMF_TOKEN_PAD);
            (void)x;
            for (uint32_t j = 0; j < d->toklen[i] && !items; j++) {
                unsigned char c = (unsigned char)d->tok[i][j];
                FUZZ_CHECK(c >= 0x80 || (c >= 'a' && c <= 'z'));
            }
            if (items) { /* an id: as it stands between blanks, and one a vocabulary can hold */
                FUZZ_CHECK(d->toklen[i] <= JSMF_ITEM_MAX_BYTES);
                FUZZ_CHECK(!memchr(d->tok[i], 0, d->toklen[i]));
                FUZZ_CHECK((const char *)d->tok[i] != NULL &&
                           utf8_valid((const unsigned char *)d->tok[i], d->toklen[i]));
                for (uint32_t j = 0; j < d->toklen[i]; j++)
                    FUZZ_CHECK(!strchr(" \t\r\v\f\n", d->tok[i][j]) || !d->tok[i][j]);
                FUZZ_CHECK(memmem(d->text, d->text_len, d->tok[i], d->toklen[i]) != NULL);
            }
            h = fuzz_hash(h, d->tok[i], d->toklen[i]);
        }
    } else {
        const jsmf_vocab *v = docs_vocab(r);
        for (uint32_t i = 0; i < d->nids; i++) {
            FUZZ_CHECK(d->counts[i] >= 1);
            FUZZ_CHECK(i == 0 || d->ids[i] > d->ids[i - 1]);
            FUZZ_CHECK(!v || d->ids[i] < v->n);
        }
        h = fuzz_hash(h, d->ids, (size_t)d->nids * 4);
        h = fuzz_hash(h, d->counts, (size_t)d->nids * 4);
    }
    return h;
}

/* Read from `o`'s resume point; return the documents read, and in *rc how it ended. */
static uint64_t fuzz_docs_read(const char *path, const jsmf_read_opts *o, uint64_t size,
                               int record, uint64_t first, uint64_t until, int *rc)
{
    jsmf_docs *r;
    if ((*rc = docs_open(path, o, &r)))
        return 0;
    uint64_t k = first;
    jsmf_doc d;
    int got;
    while (k < until && !(*rc = docs_next(r, &d, &got)) && got) {
        uint64_t h = fuzz_doc_check(r, &d, k, size);
        fuzz_doc_sig s = {d.line, d.offset, d.next_offset, d.next_line, h};
        if (record)
            fuzz_sig[k] = s;
        else /* a resumed reader gives the documents the first one gave */
            FUZZ_CHECK(!memcmp(&fuzz_sig[k], &s, sizeof s));
        k++;
    }
    docs_close(r);
    return k - first;
}

/* The whole check for one input file of `size` bytes (0: compressed, sizes differ). */
static void fuzz_docs_run(const char *path, const jsmf_read_opts *o, uint64_t size, uint64_t pick)
{
    int rc;
    uint64_t n = fuzz_docs_read(path, o, size, 1, 0, FUZZ_MAX_DOCS, &rc);
    if (n == 0)
        return;
    /* resume after document k as ingest does: its next offset, line and the next index */
    uint64_t k = pick % n;
    jsmf_read_opts ro = *o;
    ro.start_offset = fuzz_sig[k].next_offset;
    ro.start_line = fuzz_sig[k].next_line;
    ro.start_doc = k + 1;
    int rc2;
    uint64_t m = fuzz_docs_read(path, &ro, size, 0, k + 1, n, &rc2);
    FUZZ_CHECK(m == n - (k + 1));
}

#endif
