/* docs.h — the document reader: one document at a time from a text, UCI, LDA-C or items input,
 * with the offset to resume after it (src/io/docs.c); ingest and eval read through it. The input
 * formats are one descriptor table (text, uci, ldac, items): the name a user gives, how
 * auto-detection knows it, what it needs, how it is read, and its rules, so that the reader, the
 * MPI planner and the CLI's --format choices all ask the same entry. What each format accepts
 * is formats/inputs.md. */
#ifndef JSMF_IO_DOCS_H
#define JSMF_IO_DOCS_H

#include "jsmf_io.h"

/** Readable bytes after every text token of a jsmf_doc, so a consumer may load a token in whole
 *  8-byte words (masking off what lies beyond its length). */
#define JSMF_TOKEN_PAD 32

/** One document. For text, tokens are (pointer, length) spans, already lowercased, in order of
 *  appearance (repeats included), each followed by at least JSMF_TOKEN_PAD readable bytes; for
 *  items the same, each an item id as it stands in the input.
 *  For UCI and LDA-C, ids/counts are the file's own word ids
 *  (0-based; UCI ids are converted from 1-based) with repeats summed per document, ids unique. */
typedef struct jsmf_doc {
    uint64_t index;         /**< 0-based document number within the input */
    uint64_t line;          /**< 1-based line where the document starts */
    uint64_t offset;        /**< decoded byte offset where it starts */
    uint64_t next_offset;   /**< decoded byte offset just after it: the resume point */
    uint64_t next_line;     /**< line number at next_offset */
    uint32_t ntokens;       /**< text, items: number of tokens */
    const char *const *tok; /**< text, items: token starts */
    const uint32_t *toklen; /**< text, items: token lengths */
    uint32_t nids;          /**< uci/ldac: number of distinct ids */
    const uint32_t *ids;    /**< uci/ldac: word ids, 0-based in the file's vocabulary */
    const uint32_t *counts; /**< uci/ldac: counts, each >= 1 */
    const char *text;       /**< text, items: the raw line (no LF, no trailing CR, no NUL),
                                 not NUL-terminated; NULL for other formats */
    size_t text_len;        /**< text, items: its length in bytes */
    uint64_t ndocs;         /**< documents it stands for: 1, or (jsmf_read_opts.empty_runs) a
                                 run of that many empty ones, numbered index .. index+ndocs-1 */
} jsmf_doc;

typedef struct jsmf_docs jsmf_docs;

/** Open `path` ("-" = stdin, refused if stdin is a terminal) for reading documents. Detects zstd
 *  by its magic number. Validates the UCI header and loads its vocabulary file. */
int docs_open(const char *path, const jsmf_read_opts *opts, jsmf_docs **out);

/** Next document: sets *got to 1 and fills *doc, or *got to 0 at the end of input; returns 0
 *  or a negative JSMF_E* code (message names file, line, byte offset). Empty lines are
 *  documents with no tokens. */
int docs_next(jsmf_docs *r, jsmf_doc *doc, int *got);

/** The format actually being read (after sniffing). */
jsmf_format docs_format(const jsmf_docs *r);

/** UCI (and LDA-C opened with a vocabulary): the words of the file's vocabulary (row i = id i);
 *  NULL otherwise. Owned by the reader. */
const jsmf_vocab *docs_vocab(const jsmf_docs *r);

/** The input's size in bytes on disk (0 when unknown, e.g. stdin) — for progress. */
uint64_t docs_size(const jsmf_docs *r);

/** Bytes of the input consumed so far as stored on disk (compressed bytes for zstd): with
 *  docs_size() this gives a progress fraction also for compressed input. */
uint64_t docs_disk_position(const jsmf_docs *r);

/** A name for messages: the path, or "<stdin>". */
const char *docs_name(const jsmf_docs *r);

/** Tell `progress` (NULL: nothing) how far `r` has read: what = docs_name, done =
 *  docs_disk_position and total = docs_size (0 unknown), both in "MB" (1e6 bytes). */
void docs_progress(const jsmf_docs *r, jsmf_step_progress_fn progress, void *arg);

void docs_close(jsmf_docs *r);

/** What a reader met that is not an error but may surprise (formats/inputs.md, "Warnings"). */
typedef struct jsmf_read_stats {
    uint64_t docs;            /**< documents returned */
    uint64_t empty_docs;      /**< of them, without a token (text) or a word (UCI, LDA-C); with
                                   raw_text, those of no bytes */
    uint64_t bad_utf8;        /**< text not raw, items: tokens dropped as invalid UTF-8 */
    uint64_t bad_utf8_line;   /**< line and decoded byte offset where the first of them starts */
    uint64_t bad_utf8_offset;
} jsmf_read_stats;

void docs_stats(const jsmf_docs *r, jsmf_read_stats *out);

/** Hand `warn` one message per surprise of an input read to its end, naming it (`name`) and
 *  where the first occurrence is: "NAME: empty input: no documents", "NAME: all N documents are
 *  empty ...", "NAME:LINE: invalid UTF-8 at byte B: N tokens ... dropped". */
void read_stats_warn(const char *name, const jsmf_read_stats *st, jsmf_warn_fn warn,
                          void *arg);


/** The same fingerprint of the input a reader is reading, computed from the bytes it read —
 *  the way to fingerprint stdin. Available once docs_next() has returned 0 (any time for a
 *  memory-mapped file); before that JSMF_EINVAL. Equals fingerprint_file() of the same bytes. */
int docs_fingerprint(jsmf_docs *r, uint64_t *hash, uint64_t *size);

/* ---- the input formats ---- */

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
    /* Documents are tokens (jsmf_doc.tok), matched to a vocabulary by their bytes, not ids. */
    unsigned tokens : 1;
    /* Never sniffed: read only when named (items: any line of text is a basket too). */
    unsigned named_only : 1;
    /* A counting pass's defaults (jsmf_format_vocab_defaults). */
    const char *stopwords;
    double max_df_frac;
} io_format;

/* The descriptor of `f` (JSMF_FORMAT_TEXT .. JSMF_FORMAT_ITEMS); NULL for JSMF_FORMAT_AUTO or
 * a value that is no format. */
const io_format *io_format_get(jsmf_format f);

/* Whether documents of format `f` come as tokens (text, items) rather than ids. */
int io_format_tokens(jsmf_format f);

#endif
