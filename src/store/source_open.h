/* source_open.h — names and provenance of the input a fit or fdm opened
 * (src/store/source_open.c). */
#ifndef JSMF_STORE_SOURCE_OPEN_H
#define JSMF_STORE_SOURCE_OPEN_H

#include "jsmf_store.h"
#include "model/json.h"

/** "store", "npy" or "mtx". */
const char *source_kind_name(jsmf_source_kind kind);

struct jsmf_json; /* jsmf_model.h */

/** The provenance of a model fitted from `in` (opened from `path`), into summary.json
 *  (formats/model.md) inside an open object: for a store the object "store" (path,
 *  fingerprint, docs, tokens), for a matrix file "input" (path, kind "npy" or "mtx"). */
void source_summary(struct jsmf_json *j, const char *path, const jsmf_source_input *in);

#endif
