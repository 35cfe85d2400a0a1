/* model.h — what fit and fdm need of a model directory besides saving it: the check before
 * a long run, a checked extra array and summary.json's first keys (src/model/model.c). */
#ifndef JSMF_MODEL_MODEL_H
#define JSMF_MODEL_MODEL_H

#include "jsmf_model.h"
#include "json.h"

/** Before a long fit: JSMF_EEXIST ("DIR exists (use --force to replace it)") when something is
 *  at `dir` and not `overwrite`, so that the fit does not run only to be refused at the save. */
int model_check_new(const char *dir, int overwrite);

/** A float64 array a writer adds to the top directory of a model (jsmf fit's factors). */
typedef struct model_array {
    const char *name; /**< file name, e.g. "c_factor.npy" */
    const double *data;
    uint32_t rows, cols;
} model_array;

/** jsmf_model_save with `nextra` arrays more in the top directory, written like the others
 *  before the directory is published. */
int model_save_with(const char *dir, const jsmf_model *m, int overwrite,
                    const model_array *extra, uint32_t nextra);

/** The float64 array NAME of model directory `dir` (c_factor.npy), checked against the
 *  directory's MANIFEST as jsmf_model_load checks its files. JSMF_ENOTFOUND when the model has
 *  none; the errors of npy_read_f64 and of a damaged file (JSMF_EFORMAT). Caller frees *data. */
int model_read_array(const char *dir, const char *name, double **data, uint32_t *rows,
                     uint32_t *cols);

/** The keys every summary.json starts with (inside an open object): format "jsmf-model",
 *  version JSMF_MODEL_VERSION, kind ("anchor", "fdm", "truth", ...), k, n_words. */
void model_summary_header(jsmf_json *j, const jsmf_model *m, const char *kind);

/** The `top` largest of v[w * stride] over w < n into ids, largest first (ties: lower w first);
 *  returns how many (min(top, n)). jsmf_model_top_words, relevance ranking and diff use it. */
uint32_t model_top_of(const double *v, uint64_t stride, uint32_t n, uint32_t top, uint32_t *ids);

#endif
