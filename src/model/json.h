/* json.h — a small streaming JSON writer and a reader of values in summary.json
 * (src/model/json.c). */
#ifndef JSMF_MODEL_JSON_H
#define JSMF_MODEL_JSON_H

#include <stdint.h>
#include <stdio.h>

#include "jsmf.h"

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
void json_init(jsmf_json *j, FILE *f, int pretty);
void json_begin_object(jsmf_json *j, const char *key); /* key NULL inside arrays/top */
void json_end_object(jsmf_json *j);
void json_begin_array(jsmf_json *j, const char *key);
void json_end_array(jsmf_json *j);
void json_string(jsmf_json *j, const char *key, const char *value);
void json_number(jsmf_json *j, const char *key, double value);
void json_int(jsmf_json *j, const char *key, int64_t value);
void json_uint(jsmf_json *j, const char *key, uint64_t value);
void json_bool(jsmf_json *j, const char *key, int value);
void json_null(jsmf_json *j, const char *key);
/* `value`: JSON text already well formed (a value json_get_raw read), written as it is. */
void json_raw(jsmf_json *j, const char *key, const char *value);
/** An array of `n` numbers (or unsigned integers) under `key`. */
void json_numbers(jsmf_json *j, const char *key, const double *x, uint64_t n);
void json_uints(jsmf_json *j, const char *key, const uint64_t *x, uint64_t n);

/* A minimal JSON reader for values in summary.json. `path` is dotted: "metrics.specificity",
 * array elements by index ("levels.0.k"); keys containing '.' cannot be addressed. */
/** 1 if `text` is one well-formed JSON value (surrounding whitespace allowed), else 0. */
int json_valid(const char *text);
/** The number at `path` (null reads as NaN). JSMF_ENOTFOUND if absent, JSMF_EFORMAT if the
 *  value is not a number. Sets no error message (absence is often expected). */
int json_get_number(const char *text, const char *path, double *out);
/** The string at `path`, unescaped, newly allocated (caller frees). Errors as above. */
int json_get_string(const char *text, const char *path, char **out);
/** The JSON text of the value at `path` as it stands (an object, an array, ...), newly
 *  allocated (caller frees). JSMF_ENOTFOUND (with a message) if absent, JSMF_ENOMEM. */
int json_get_raw(const char *text, const char *path, char **out);

#endif
