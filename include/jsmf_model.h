/* jsmf_model.h — the MODEL directory (formats/model.md), the one thing fit and fdm write and
 * topics, infer, eval and report read: vocab.txt, B.npy, A.npy, anchors.txt, alpha.npy,
 * summary.json, and one sub-directory per further level of a hierarchy (level1/, level2/ ...).
 *
 * CAVEATS
 *  - B is N x K (column k = p(word | topic k), columns sum to 1), A is K x K (entries sum to 1),
 *    both float64 row-major in memory and C-order in the .npy files.
 *  - Saving writes into a temporary sibling directory and renames it into place, so a reader
 *    never sees half a model; an existing MODEL is replaced only when `overwrite` is set.
 *  - summary.json is written from a JSON text the caller builds with jsmf_json (below).
 */
#ifndef JSMF_MODEL_H
#define JSMF_MODEL_H

#include <stdio.h>

#include "jsmf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct jsmf_model {
    uint32_t n;            /**< vocabulary size N */
    uint32_t k;            /**< number of topics K */
    jsmf_vocab *vocab;     /**< words in row order of B (owned) */
    double *B;             /**< N x K, row-major (owned) */
    double *A;             /**< K x K, row-major (owned) */
    int a_uniform;         /**< A.npy was absent (topics of another tool): A is 1/K^2 */
    uint32_t *anchors;     /**< K anchor word ids, or NULL (FDM models have none) */
    double *alpha;         /**< K Dirichlet parameters, or NULL when not recovered */
    char *summary_json;    /**< the summary.json text (owned), or NULL */
    struct jsmf_model *sub; /**< next hierarchy level (super-topics over this level's topics), or NULL */
} jsmf_model;

/** Version of the MODEL directory format written by this library (summary.json "version").
 *  Readers refuse a larger version with JSMF_EVERSION; additions that old readers can ignore
 *  (new keys, new files) do not change it. */
#define JSMF_MODEL_VERSION 1

/** Allocate a model with zeroed B (N x K) and A (K x K); vocab, anchors, alpha unset. */
int jsmf_model_new(uint32_t n, uint32_t k, jsmf_model **out);
void jsmf_model_free(jsmf_model *m);

/** Write `m` (and its sub-levels as level1/, level2/, ...) to directory `dir`.
 *  A sub-level with vocab NULL gets labels for the topics below it ("t3:anchorword" or "t3").
 *  summary_json NULL writes a minimal summary (format, version, kind, k, n_words).
 *  Errors: JSMF_EEXIST (dir exists and !overwrite, or exists and is not a model),
 *  JSMF_ENOSPC / JSMF_EIO (naming the file), JSMF_EINVAL (inconsistent model). On error the
 *  previous content of `dir`, if any, is untouched. */
int jsmf_model_save(const char *dir, const jsmf_model *m, int overwrite);

/** Before a long fit: JSMF_EEXIST ("DIR exists (use --force to replace it)") when something is
 *  at `dir` and not `overwrite`, so that the fit does not run only to be refused at the save. */
int jsmf_model_check_new(const char *dir, int overwrite);

/** Read a model directory, including its levels, validating shapes (B rows = vocabulary size,
 *  A K x K, anchors in range and matching their words), column sums of B and the total of A
 *  (within 1e-6). Errors name the file: JSMF_ENOTFOUND, JSMF_EFORMAT, JSMF_EVERSION. */
int jsmf_model_load(const char *dir, jsmf_model **out);

/** p(z) = A 1: the topic sizes, K values into `pz`. */
void jsmf_model_topic_sizes(const jsmf_model *m, double *pz);

/** The ids of the `top` most probable words of `topic` (by B column, decreasing; ties by lower
 *  id), into `ids` (room for `top`). Returns how many were written (min(top, N)). */
uint32_t jsmf_model_top_words(const jsmf_model *m, uint32_t topic, uint32_t top, uint32_t *ids);

/** p(w) = sum_z B_wz p(z): the model's own unigram, N values into `pw`. */
void jsmf_model_word_marginal(const jsmf_model *m, double *pw);

/** The `top` words of `topic` ranked by relevance (Sievert & Shirley 2014):
 *  lambda log p(w|z) + (1 - lambda) log(p(w|z) / p(w)), with pw from jsmf_model_word_marginal.
 *  lambda >= 1 (or pw NULL) ranks by p(w|z) alone, as jsmf_model_top_words. Smaller lambda
 *  favours words distinctive of the topic over words frequent everywhere. */
uint32_t jsmf_model_top_words_rank(const jsmf_model *m, uint32_t topic, uint32_t top,
                                   double lambda, const double *pw, uint32_t *ids);

/** The relevance of every word for every topic (N x K, as B), for ranking them. */
void jsmf_model_relevance(const jsmf_model *m, double lambda, const double *pw, double *out);

/** The display default of jsmf topics: relevance with this lambda (tools/bench/e2e measures it). */
#define JSMF_TOPWORDS_LAMBDA 0.7

/** How jsmf_model_topics_write prints. */
typedef enum jsmf_topics_format {
    JSMF_TOPICS_TEXT, /**< aligned for reading: topic, size, anchor, top words */
    JSMF_TOPICS_TSV,  /**< topic, size, alpha, anchor, top words separated by spaces */
    JSMF_TOPICS_JSON  /**< topics with word probabilities, the A matrix and alpha */
} jsmf_topics_format;

typedef struct jsmf_topics_opts {
    const char *name; /**< the model's name in the output (its path) */
    uint32_t top;     /**< words per topic (at most N are shown) */
    double lambda;    /**< ranking of the words (jsmf_model_top_words_rank); 1: by p(w|z) */
    uint32_t level;   /**< 0: the model itself; L: its L-th level below */
    int format;       /**< jsmf_topics_format */
    int matrix;       /**< text and TSV: the topic-topic matrix A instead (K rows of K) */
} jsmf_topics_opts;

/** Print the topics of `m` (its level o->level) on `f` (formats/outputs.md). JSMF_ENOTFOUND
 *  when the model has no such level, JSMF_ENOMEM. The caller checks f for write errors. */
int jsmf_model_topics_write(FILE *f, const jsmf_model *m, const jsmf_topics_opts *o);

/* .npy files (format version 1.0, little-endian float64 or uint32, C order). `cols` = 0 writes
 * a 1-D array of `rows` values. Writers check every write and the close: JSMF_ENOSPC / JSMF_EIO
 * with the path, and a failed write removes the partial file. */
int jsmf_npy_write_f64(const char *path, const double *data, uint32_t rows, uint32_t cols);
int jsmf_npy_write_u32(const char *path, const uint32_t *data, uint32_t rows, uint32_t cols);
/** Read a float64 .npy with 1 or 2 dimensions (1-D gives cols = 1). Caller frees *data.
 *  Accepts what numpy.save writes for '<f8' C-order arrays (format 1.0, 2.0, 3.0); Fortran order
 *  and other dtypes are JSMF_EFORMAT with a message naming the file. */
int jsmf_npy_read_f64(const char *path, double **data, uint32_t *rows, uint32_t *cols);

/* A small streaming JSON writer: enough for summary.json and --json outputs, with correct string
 * escaping and round-trippable numbers (%.17g; NaN/Inf written as null). */
typedef struct jsmf_json {
    FILE *f;
    int depth;
    int need_comma[32];
    int pretty;
} jsmf_json;

/** Start writing to `f`; pretty = 1 indents by two spaces and ends each top-level value with a
 *  newline, 0 writes compact JSON. Several top-level values may follow each other (JSON lines:
 *  write '\n' after each in compact mode); they are not comma-separated. */
void jsmf_json_init(jsmf_json *j, FILE *f, int pretty);
void jsmf_json_begin_object(jsmf_json *j, const char *key); /* key NULL inside arrays/top */
void jsmf_json_end_object(jsmf_json *j);
void jsmf_json_begin_array(jsmf_json *j, const char *key);
void jsmf_json_end_array(jsmf_json *j);
void jsmf_json_string(jsmf_json *j, const char *key, const char *value);
void jsmf_json_number(jsmf_json *j, const char *key, double value);
void jsmf_json_int(jsmf_json *j, const char *key, int64_t value);
void jsmf_json_uint(jsmf_json *j, const char *key, uint64_t value);
void jsmf_json_bool(jsmf_json *j, const char *key, int value);
void jsmf_json_null(jsmf_json *j, const char *key);
/** An array of `n` numbers (or unsigned integers) under `key`. */
void jsmf_json_numbers(jsmf_json *j, const char *key, const double *x, uint64_t n);
void jsmf_json_uints(jsmf_json *j, const char *key, const uint64_t *x, uint64_t n);

/** The keys every summary.json starts with (inside an open object): format "jsmf-model",
 *  version JSMF_MODEL_VERSION, kind ("anchor", "fdm", "truth", ...), k, n_words. */
void jsmf_model_summary_header(jsmf_json *j, const jsmf_model *m, const char *kind);

/** The text of `j`'s document written into memory: start with jsmf_model_summary_begin (an
 *  object is open), add keys, end with jsmf_model_summary_end, which closes the object and
 *  returns the text (caller frees; NULL when out of memory). */
typedef struct jsmf_summary_buf {
    jsmf_json j;
    char *text;
    size_t len;
} jsmf_summary_buf;
int jsmf_model_summary_begin(jsmf_summary_buf *b);
char *jsmf_model_summary_end(jsmf_summary_buf *b);

/* A minimal JSON reader for values in summary.json. `path` is dotted: "metrics.specificity",
 * array elements by index ("levels.0.k"); keys containing '.' cannot be addressed. */
/** 1 if `text` is one well-formed JSON value (surrounding whitespace allowed), else 0. */
int jsmf_json_valid(const char *text);
/** The number at `path` (null reads as NaN). JSMF_ENOTFOUND if absent, JSMF_EFORMAT if the
 *  value is not a number. Sets no error message (absence is often expected). */
int jsmf_json_get_number(const char *text, const char *path, double *out);
/** The string at `path`, unescaped, newly allocated (caller frees). Errors as above. */
int jsmf_json_get_string(const char *text, const char *path, char **out);

#ifdef __cplusplus
}
#endif
#endif /* JSMF_MODEL_H */
