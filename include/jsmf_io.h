/* jsmf_io.h — reading corpora: the four document formats (formats/inputs.md) in files,
 * zstd-compressed files or stdin, how text is cut into tokens, and the vocabulary pass that
 * counts words over inputs ('jsmf vocab'). Every stage that reads documents (ingest, infer,
 * eval) takes a jsmf_read_opts; the reader itself, one document at a time with the offset to
 * resume after it, is internal (src/io/docs.h).
 *
 * CAVEATS
 *  - Offsets are positions in the *decoded* byte stream (the text a user would see after
 *    `zstd -dc`), so a checkpoint is the same whether the file is compressed or not.
 *  - Resuming a compressed input decodes and discards the bytes before the offset (zstd frames
 *    cannot be entered in the middle); resuming stdin needs the same stream piped again.
 *  - Errors name the file (path, or "<stdin>"), the line and the byte offset.
 *  - A zstd *file* is decoded on a second thread (a ring of 4 x 4 MiB chunks) when the reader
 *    may use more than one (jsmf_read_opts.threads); stdin is always decoded inline.
 *  - Plain files are memory-mapped: a file truncated by another process while it is read makes
 *    the process fail with SIGBUS (as with any mmap reader); replace inputs, never truncate them.
 */
#ifndef JSMF_IO_H
#define JSMF_IO_H

#include "jsmf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum jsmf_format {
    JSMF_FORMAT_AUTO = 0, /**< sniff: UCI (3 lines of one integer), LDA-C ("N id:c ..."), else text */
    JSMF_FORMAT_TEXT = 1, /**< one document per line, tokenised by jsmf_tokenize() */
    JSMF_FORMAT_UCI = 2,  /**< docword file: D, W, NNZ lines, then "doc word count" (1-based) */
    JSMF_FORMAT_LDAC = 3, /**< one document per line: "N id:count id:count ..." (0-based ids) */
    JSMF_FORMAT_ITEMS = 4 /**< one basket per line: whitespace-separated item ids kept as they
                               are (case, digits, punctuation); never sniffed, only named */
} jsmf_format;

/** Longest item id (JSMF_FORMAT_ITEMS) in bytes: a longer one is JSMF_EFORMAT naming the file,
 *  line and byte, never cut (a cut id could merge with another). */
#define JSMF_ITEM_MAX_BYTES 256

/** Name of a format ("text", "uci", "ldac", "items", "auto"), a static string, NULL for a value
 *  that is none, so that a front end lists the formats from JSMF_FORMAT_TEXT on until NULL;
 *  jsmf_format_parse() is the inverse (also taking "lda-c"; returns -1 for an unknown name;
 *  never sets an error). */
JSMF_API const char *jsmf_format_name(jsmf_format f);
JSMF_API int jsmf_format_parse(const char *name);

/** What a counting pass over inputs of format `f` takes when not told otherwise
 *  (formats/vocab.md): the stopword list *stopwords ("en" for words, "none" for items, as
 *  jsmf_stopwords_load names them) and *max_df_frac (0.5 for words; 1, no cut, for items: an
 *  item in most baskets is a popular item, not a function word). Either pointer may be NULL. */
JSMF_API void jsmf_format_vocab_defaults(jsmf_format f, const char **stopwords,
                                         double *max_df_frac);

/** Tokeniser settings for text input. Tokens are maximal runs of ASCII letters (lowercased)
 *  and bytes >= 0x80 (so UTF-8 words stay whole); anything else separates. Runs shorter than
 *  min_len bytes are dropped. */
typedef struct jsmf_tokenizer {
    uint32_t min_len;    /**< default 3 (the shared corpora's convention); 0 acts as 1 */
    uint32_t max_len;    /**< longer runs are dropped; default 64; 0 = no limit. A reader given
                              {0, 0} uses the defaults. */
    uint64_t reserved[4]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_tokenizer;

#define JSMF_TOKENIZER_DEFAULT {.min_len = 3, .max_len = 64}

/** The most memory one open reader holds (decode-ahead chunks, the line window, a zstd window
 *  of up to 8 MiB, mapped pages not yet released): what budgets such as ingest --mem count
 *  for reading. A zstd frame with a larger window adds the difference. */
#define JSMF_IO_READER_BYTES ((uint64_t)24 << 20)

/** Most tokens jsmf_tokenize() can produce from `len` bytes with minimum length `min_len`. */
#define JSMF_TOKENS_MAX(len, min_len) ((len) / ((min_len) > 1 ? (min_len) + 1 : 2) + 1)

/** Tokenise `len` bytes of `text`: the lowercased token bytes are written one after another to
 *  `out` (room for `len` bytes), and token i is (tok[i], toklen[i]) pointing into `out` (room for
 *  JSMF_TOKENS_MAX(len, t->min_len) entries). Returns the number of tokens. Never fails. A run
 *  that is not well-formed UTF-8 is dropped like one of the wrong length (formats/inputs.md). */
JSMF_API uint32_t jsmf_tokenize(const jsmf_tokenizer *t, const char *text, size_t len,
                                char *out, const char **tok, uint32_t *toklen);

/** A warning for the user, one line without the program's name (e.g. "FILE:LINE: ..."); the
 *  library never prints, it hands warnings to such a callback. */
typedef void (*jsmf_warn_fn)(void *arg, const char *msg);

/** How inputs are read (fill with jsmf_read_opts_init). */
typedef struct jsmf_read_opts {
    jsmf_format format;       /**< JSMF_FORMAT_AUTO to sniff from the content */
    jsmf_tokenizer tok;       /**< text only (item ids: 1 to JSMF_ITEM_MAX_BYTES bytes) */
    const char *uci_vocab;    /**< UCI: vocabulary file; NULL = "vocab.X.txt" beside "docword.X.txt[.zst]".
                                   LDA-C: optional vocabulary (ids checked against its size) */
    uint64_t start_offset;    /**< resume: decoded byte offset of the first document to return */
    uint64_t start_doc;       /**< resume: index of that document (for numbering and messages) */
    uint64_t start_line;      /**< resume: 1-based line number at start_offset (for messages; 0 = 1) */
    uint64_t max_line;        /**< longest line accepted, in bytes; 0 = 256 MiB, at most 4 GiB - 1.
                                   Longer: JSMF_EFORMAT */
    uint32_t ldac_vocab_size; /**< LDA-C: ids must be below this; 0 = unchecked (or the size of
                                   uci_vocab when that is given for LDA-C input) */
    int raw_text;             /**< text: do not tokenise (ntokens = 0); the caller tokenises
                                   each document's text itself, e.g. in parallel with jsmf_tokenize();
                                   items are always split by the reader */
    void (*warn)(void *arg, const char *msg); /**< readers of several inputs (infer, eval,
                                   refine) hand it what each input read
                                   to its end gave cause to say (bad UTF-8, long lines, ...); NULL:
                                   silent */
    void *warn_arg;
    uint64_t end_offset;      /**< text, LDA-C, items: the input ends before the first document
                                   starting at or after this decoded offset (a piece of a file
                                   read by one of several processes); 0 = the end of input */
    int empty_runs;           /**< UCI: a run of docIDs without lines may come as one document
                                   of ndocs > 1 empty documents, so that a header's D of 10^12
                                   reads at once; 0: one per document */
    int threads;              /**< threads this call may use (0: omp_get_max_threads()): a zstd
                                   file is decoded on a thread of its own when above 1, and a
                                   counting pass counts text on this many when 3 or more. Read,
                                   never set: the caller's OpenMP default stays as it was */
    uint64_t reserved[8]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_read_opts;

/** Defaults: AUTO format, default tokenizer, no resume, default limits, all cores. */
#define JSMF_READ_OPTS_DEFAULT {.format = JSMF_FORMAT_AUTO, .tok = JSMF_TOKENIZER_DEFAULT}
/** Fill `o` with those defaults (the static initialiser JSMF_READ_OPTS_DEFAULT is the same). */
JSMF_API void jsmf_read_opts_init(jsmf_read_opts *o);

/* ---------------------------------------------------------------------------------------------
 * Vocabulary pass: one streaming pass over inputs counting, per word, its document frequency
 * (df: counted documents containing it) and term frequency (tf), then curation. Memory is
 * proportional to the number of distinct words, never to the corpus.
 *
 * A document is counted when it has at least min_doc_len tokens after stopword removal. The
 * df filters depend on the final counts, so they cannot shorten documents within the same pass;
 * ingest applies its own min_doc_len against the final vocabulary.
 * ------------------------------------------------------------------------------------------- */

typedef struct jsmf_vocab_opts {
    const jsmf_vocab *stopwords; /**< never counted (ASCII-lowercased on load); NULL = none */
    uint64_t min_df;             /**< keep words with df >= min_df (default 5) */
    double max_df_frac;          /**< drop words with df > max_df_frac * counted docs (default 0.5;
                                      >= 1 keeps all) */
    uint32_t max_words;          /**< then keep the max_words highest df (ties: by word); 0 = all */
    uint32_t min_doc_len;        /**< documents with fewer non-stopword tokens are skipped (default 5) */
    jsmf_warn_fn warn;           /**< told, after each input, what its reading gave cause to say
                                      and when none of its documents was counted; NULL: silent */
    void *warn_arg;
    uint64_t reserved[8]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_vocab_opts;

#define JSMF_VOCAB_OPTS_DEFAULT {.min_df = 5, .max_df_frac = 0.5, .min_doc_len = 5}
/** Fill `o` with the defaults above (the same as JSMF_VOCAB_OPTS_DEFAULT). */
JSMF_API void jsmf_vocab_opts_init(jsmf_vocab_opts *o);

typedef struct jsmf_vocab_stats {
    uint64_t docs_read;          /**< documents read from all inputs */
    uint64_t docs_counted;       /**< M: documents long enough to be counted */
    uint64_t docs_short;         /**< documents below min_doc_len after stopword removal */
    uint64_t tokens_read;        /**< tokens (text) or summed counts (UCI, LDA-C) read */
    uint64_t tokens_counted;     /**< non-stopword tokens of counted documents */
    uint64_t words_seen;         /**< distinct non-stopwords in counted documents */
    uint64_t dropped_min_df, dropped_max_df, dropped_max_words;
    uint64_t words_kept;         /**< size of the curated vocabulary */
    uint64_t reserved[16]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_vocab_stats;

/** One counting pass over the `n` inputs (paths, "-" = stdin) and the curated vocabulary (jsmf
 *  vocab, and a new store's) into *out: words with df and tf, sorted by df descending, ties by
 *  word bytes ascending (free with jsmf_vocab_free; an empty vocabulary is no error). UCI words
 *  come from its vocabulary file, LDA-C words from ro->uci_vocab when given, else the decimal
 *  ids. The result does not depend on ro->threads. `progress` (or NULL) is told how far each
 *  input is read (what = the input's path; MB). *st (may be NULL) gets what was counted.
 *  Errors: those of reading the inputs (JSMF_ENOTFOUND, JSMF_EFORMAT naming file and line,
 *  JSMF_EIO). */
JSMF_API int jsmf_vocab_count(const char *const *inputs, uint32_t n, const jsmf_read_opts *ro,
                              const jsmf_vocab_opts *vo, jsmf_step_progress_fn progress,
                              void *arg, jsmf_vocab **out, jsmf_vocab_stats *st);

/** jsmf vocab: one counting pass (jsmf_vocab_count) and its vocabulary written to `output`
 *  ("-": standard output; jsmf_vocab_save, whole or not at all). A pass that keeps no word is
 *  JSMF_EFORMAT ("no words kept: ...; OUTPUT not written", naming the counts and the --min-df
 *  and --max-df-frac that dropped them) and writes nothing: an existing `output` stays as it
 *  was. `vo` NULL: JSMF_VOCAB_OPTS_DEFAULT. *st gets what was counted, also on that error.
 *  `progress` (or NULL): as in jsmf_vocab_count (what = the input's path; MB). Errors also
 *  those of jsmf_vocab_count and jsmf_vocab_save. */
JSMF_API int jsmf_vocab_build(const char *const *inputs, uint32_t n, const jsmf_read_opts *ro,
                              const jsmf_vocab_opts *vo, const char *output,
                              jsmf_step_progress_fn progress, void *arg, jsmf_vocab_stats *st);

/** What a counting pass did (jsmf vocab), for people: documents and tokens read and counted,
 *  the words dropped by each rule and kept, in lines of at most 80 columns for typical
 *  values, each "PREFIX: ..." (prefix NULL: none). */
JSMF_API void jsmf_vocab_stats_write(FILE *f, const char *prefix, const jsmf_vocab_stats *st);

/** The stopwords `spec` names into *out (free with jsmf_vocab_free): "en" (the English list
 *  compiled in, ~340 words), "none" (*out NULL) or a vocabulary file (formats/vocab.md; errors
 *  those of jsmf_vocab_load). */
JSMF_API int jsmf_stopwords_load(const char *spec, jsmf_vocab **out);

/* ---------------------------------------------------------------------------------------------
 * Documents in batches, over a vocabulary's rows (a model's: infer, eval, refine).
 * ------------------------------------------------------------------------------------------- */

/** A batch of documents as sparse count vectors over model rows (ids unique and increasing
 *  within a document). Document d has ids/counts [start[d], start[d+1]). A caller may fill one
 *  with arrays of its own (cap_* 0); jsmf_docbatch_free frees them with free(). */
typedef struct jsmf_docbatch {
    uint32_t ndocs;        /**< documents in this batch */
    uint64_t first_index;  /**< running index (over all inputs) of the batch's first document */
    uint64_t *start;       /**< ndocs + 1 offsets into ids/counts */
    uint32_t *ids;         /**< model rows */
    uint32_t *counts;      /**< in-vocabulary counts, >= 1 */
    uint64_t *oov;         /**< per document: tokens not in the model's vocabulary */
    uint64_t cap_docs, cap_ids; /* allocated sizes (internal) */
} jsmf_docbatch;

/** Free the arrays of `b` and zero it (the struct itself is the caller's). */
JSMF_API void jsmf_docbatch_free(jsmf_docbatch *b);

#ifdef __cplusplus
}
#endif
#endif /* JSMF_IO_H */
