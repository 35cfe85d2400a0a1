/* docs.h — internal: the input formats as one descriptor table (text, uci, ldac): the name a
 * user gives, how auto-detection knows it, what it needs, how it is read, and its rules, so that
 * the reader, the MPI planner and the CLI's --format choices all ask the same entry. What each
 * format accepts is formats/inputs.md. */
#ifndef JSMF_IO_DOCS_H
#define JSMF_IO_DOCS_H

#include "jsmf_io.h"

typedef struct io_format {
    jsmf_format id;
    const char *name;  /* --format's value, the store's input record, `jsmf info` */
    const char *title; /* how messages name it: "UCI input cannot be read in pieces" */
    const char *alias; /* another name --format takes ("lda-c"), or NULL */
    /* Auto-detection: whether the first `nl` complete lines [ls[i], le[i]) (16 at most, from
     * the first 64 KiB) are of this format. Tried in table order; NULL: the fallback (text,
     * what is neither). */
    int (*sniff)(const unsigned char *const *ls, const unsigned char *const *le, int nl);
    /* What the format reads once the stream is open, before any document (a header, its
     * vocabulary file, the id bound); NULL: nothing. */
    int (*open)(jsmf_docs *r, const char *path, const jsmf_read_opts *o);
    /* The next document: 1, 0 at the end, or a negative JSMF_E* code. */
    int (*next)(jsmf_docs *r, jsmf_doc *d);
    /* One document a line: a file can be read in byte ranges cut at line starts (the pieces of
     * an MPI ingest, jsmf_read_opts.end_offset); a compressed file still cannot. */
    unsigned line_per_doc : 1;
} io_format;

/* The descriptor of `f` (JSMF_FORMAT_TEXT .. JSMF_FORMAT_LDAC); NULL for JSMF_FORMAT_AUTO or
 * a value that is no format. */
const io_format *io_format_get(jsmf_format f);

#endif
