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
    uint32_t *anchors;     /**< K anchor word ids, or NULL (FDM models have none) */
    double *alpha;         /**< K Dirichlet parameters, or NULL when not recovered */
    char *summary_json;    /**< the summary.json text (owned), or NULL */
    struct jsmf_model *sub; /**< next hierarchy level (super-topics over this level's topics), or NULL */
} jsmf_model;

/** Allocate a model with zeroed B (N x K) and A (K x K); vocab, anchors, alpha unset. */
int jsmf_model_new(uint32_t n, uint32_t k, jsmf_model **out);
void jsmf_model_free(jsmf_model *m);

/** Write `m` (and its sub-levels as level1/, level2/, ...) to directory `dir`. */
int jsmf_model_save(const char *dir, const jsmf_model *m, int overwrite);

/** Read a model directory, including its levels. Errors name the file. */
int jsmf_model_load(const char *dir, jsmf_model **out);

/* .npy files (format version 1.0, little-endian float64 or uint32, C order). */
int jsmf_npy_write_f64(const char *path, const double *data, uint32_t rows, uint32_t cols);
int jsmf_npy_write_u32(const char *path, const uint32_t *data, uint32_t rows, uint32_t cols);
/** Read a float64 .npy with 1 or 2 dimensions (1-D gives cols = 1). Caller frees *data. */
int jsmf_npy_read_f64(const char *path, double **data, uint32_t *rows, uint32_t *cols);

/* A small streaming JSON writer: enough for summary.json and --json outputs, with correct string
 * escaping and round-trippable numbers (%.17g; NaN/Inf written as null). */
typedef struct jsmf_json {
    FILE *f;
    int depth;
    int need_comma[32];
    int pretty;
} jsmf_json;

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

#ifdef __cplusplus
}
#endif
#endif /* JSMF_MODEL_H */
