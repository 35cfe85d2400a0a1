/* json.c — the streaming JSON writer behind summary.json and every --json output, and a small
 * reader that looks up one value by dotted path (enough to read summary.json back). */
#include "jsmf_model.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define JSON_MAX_DEPTH ((int)(sizeof(((jsmf_json *)0)->need_comma) / sizeof(int)))

void json_init(jsmf_json *j, FILE *f, int pretty)
{
    memset(j, 0, sizeof *j);
    j->f = f;
    j->pretty = pretty;
}

static void json_escape(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        case '\b': fputs("\\b", f); break;
        case '\f': fputs("\\f", f); break;
        default:
            /* UTF-8 bytes (>= 0x80) pass through; other control characters are escaped, DEL too
             * so that a terminal showing the output is never driven by it. */
            if (*p < 0x20 || *p == 0x7f)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

static void json_newline(jsmf_json *j)
{
    if (!j->pretty)
        return;
    fputc('\n', j->f);
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->f);
}

/* Everything a value needs before it: the comma, the indentation and the key. */
static void json_prefix(jsmf_json *j, const char *key)
{
    /* Top-level values are separate documents (JSON lines: one object per line), never
     * comma-separated. */
    int d = j->depth < JSON_MAX_DEPTH ? j->depth : JSON_MAX_DEPTH - 1;
    if (d > 0 && j->need_comma[d])
        fputc(',', j->f);
    j->need_comma[d] = 1;
    if (j->depth > 0)
        json_newline(j);
    if (key) {
        json_escape(j->f, key);
        fputs(j->pretty ? ": " : ":", j->f);
    }
}

static void json_open(jsmf_json *j, const char *key, char bracket)
{
    json_prefix(j, key);
    fputc(bracket, j->f);
    j->depth++;
    if (j->depth < JSON_MAX_DEPTH)
        j->need_comma[j->depth] = 0;
}

static void json_close(jsmf_json *j, char bracket)
{
    int had_items = j->depth < JSON_MAX_DEPTH ? j->need_comma[j->depth] : 1;
    if (j->depth > 0)
        j->depth--;
    if (had_items)
        json_newline(j);
    fputc(bracket, j->f);
    if (j->depth == 0 && j->pretty)
        fputc('\n', j->f);
}

void json_begin_object(jsmf_json *j, const char *key) { json_open(j, key, '{'); }
void json_end_object(jsmf_json *j) { json_close(j, '}'); }
void json_begin_array(jsmf_json *j, const char *key) { json_open(j, key, '['); }
void json_end_array(jsmf_json *j) { json_close(j, ']'); }

void json_numbers(jsmf_json *j, const char *key, const double *x, uint64_t n)
{
    json_begin_array(j, key);
    for (uint64_t i = 0; i < n; i++)
        json_number(j, NULL, x[i]);
    json_end_array(j);
}

void json_uints(jsmf_json *j, const char *key, const uint64_t *x, uint64_t n)
{
    json_begin_array(j, key);
    for (uint64_t i = 0; i < n; i++)
        json_uint(j, NULL, x[i]);
    json_end_array(j);
}

void json_string(jsmf_json *j, const char *key, const char *value)
{
    json_prefix(j, key);
    if (value)
        json_escape(j->f, value);
    else
        fputs("null", j->f);
}

void json_number(jsmf_json *j, const char *key, double value)
{
    json_prefix(j, key);
    if (isfinite(value))
        fprintf(j->f, "%.17g", value);
    else
        fputs("null", j->f);
}

void json_int(jsmf_json *j, const char *key, int64_t value)
{
    json_prefix(j, key);
    fprintf(j->f, "%" PRId64, value);
}

void json_uint(jsmf_json *j, const char *key, uint64_t value)
{
    json_prefix(j, key);
    fprintf(j->f, "%" PRIu64, value);
}

void json_bool(jsmf_json *j, const char *key, int value)
{
    json_prefix(j, key);
    fputs(value ? "true" : "false", j->f);
}

void json_null(jsmf_json *j, const char *key)
{
    json_prefix(j, key);
    fputs("null", j->f);
}

void json_raw(jsmf_json *j, const char *key, const char *value)
{
    json_prefix(j, key);
    fputs(value, j->f);
}

/* ------------------------------------------------------------------------------------------
 * Reader: a recursive-descent skipper that validates as it goes and stops at the value a
 * dotted path names. Not a general JSON library — summary.json is small and well formed.
 * ---------------------------------------------------------------------------------------- */

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

/* Skip a string starting at its opening quote; returns the position after it or NULL. */
static const char *skip_string(const char *p)
{
    if (*p++ != '"')
        return NULL;
    while (*p && *p != '"') {
        if ((unsigned char)*p < 0x20)
            return NULL;
        if (*p == '\\') {
            p++;
            if (*p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!isxdigit((unsigned char)p[i]))
                        return NULL;
                p += 4;
            } else if (!strchr("\"\\/bfnrt", *p) || !*p) {
                return NULL;
            }
        }
        p++;
    }
    return *p == '"' ? p + 1 : NULL;
}

static const char *skip_value(const char *p, int depth);

static const char *skip_container(const char *p, int depth)
{
    char close = *p == '{' ? '}' : ']';
    int object = *p == '{';
    p = skip_ws(p + 1);
    if (*p == close)
        return p + 1;
    for (;;) {
        if (object) {
            p = skip_string(p);
            if (!p)
                return NULL;
            p = skip_ws(p);
            if (*p++ != ':')
                return NULL;
        }
        p = skip_value(skip_ws(p), depth + 1);
        if (!p)
            return NULL;
        p = skip_ws(p);
        if (*p == close)
            return p + 1;
        if (*p++ != ',')
            return NULL;
        p = skip_ws(p);
    }
}

static const char *skip_value(const char *p, int depth)
{
    if (depth > 256)
        return NULL;
    p = skip_ws(p);
    if (*p == '{' || *p == '[')
        return skip_container(p, depth);
    if (*p == '"')
        return skip_string(p);
    if (!strncmp(p, "true", 4))
        return p + 4;
    if (!strncmp(p, "false", 5))
        return p + 5;
    if (!strncmp(p, "null", 4))
        return p + 4;
    if (*p == '-' || isdigit((unsigned char)*p)) {
        char *end;
        strtod(p, &end);
        return end > p ? end : NULL;
    }
    return NULL;
}

/* Does the JSON string at p (at its quote, no escapes expected in keys we look up) equal the
 * n bytes of key? */
static int key_equals(const char *p, const char *key, size_t n)
{
    return p[0] == '"' && !strncmp(p + 1, key, n) && p[1 + n] == '"';
}

/* Past one value of an object or array and the comma after it; NULL if it is malformed. */
static const char *skip_member(const char *p)
{
    p = skip_value(p, 0);
    if (!p)
        return NULL;
    p = skip_ws(p);
    return *p == ',' ? skip_ws(p + 1) : p;
}

/* Position of the value at dotted `path` inside `text`, or NULL. Array elements are addressed
 * by their index as a path component ("levels.0.k"). */
static const char *json_find(const char *text, const char *path)
{
    const char *p = skip_ws(text);
    while (*path) {
        const char *dot = strchr(path, '.');
        size_t n = dot ? (size_t)(dot - path) : strlen(path);
        const char *found = NULL;
        if (*p == '{') {
            p = skip_ws(p + 1);
            while (*p == '"') {
                int match = key_equals(p, path, n);
                p = skip_string(p);
                if (!p)
                    return NULL;
                p = skip_ws(p);
                if (*p++ != ':')
                    return NULL;
                p = skip_ws(p);
                if (match) {
                    found = p;
                    break;
                }
                if (!(p = skip_member(p)))
                    return NULL;
            }
        } else if (*p == '[') {
            char *end;
            unsigned long idx = strtoul(path, &end, 10);
            if (end != path + n || n == 0)
                return NULL;
            p = skip_ws(p + 1);
            for (unsigned long i = 0; *p && *p != ']'; i++) {
                if (i == idx) {
                    found = p;
                    break;
                }
                if (!(p = skip_member(p)))
                    return NULL;
            }
        }
        if (!found)
            return NULL;
        p = found;
        path += n + (dot ? 1 : 0);
    }
    return p;
}

int json_valid(const char *text)
{
    const char *p = skip_value(text, 0);
    return p && *skip_ws(p) == 0;
}

int json_get_number(const char *text, const char *path, double *out)
{
    const char *p = json_find(text, path);
    if (!p)
        return jsmf_error(JSMF_ENOTFOUND, "JSON: no value at %s", path);
    if (!strncmp(p, "null", 4)) {
        *out = NAN;
        return JSMF_OK;
    }
    if (*p != '-' && !isdigit((unsigned char)*p))
        return jsmf_error(JSMF_EFORMAT, "JSON: the value at %s is not a number", path);
    char *end;
    *out = strtod(p, &end);
    if (end == p)
        return jsmf_error(JSMF_EFORMAT, "JSON: the value at %s is not a number", path);
    return JSMF_OK;
}

/* Decode the JSON string at p (its opening quote) into a fresh UTF-8 string. */
static int json_decode_string(const char *p, char **out)
{
    const char *end = skip_string(p);
    if (!end)
        return jsmf_error(JSMF_EFORMAT, "JSON: unterminated string");
    char *s = malloc((size_t)(end - p)), *o = s;
    if (!s)
        return jsmf_error(JSMF_ENOMEM, "out of memory decoding a JSON string");
    for (p++; p < end - 1; p++) {
        if (*p != '\\') {
            *o++ = *p;
            continue;
        }
        p++;
        switch (*p) {
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'u': {
            unsigned cp = (unsigned)strtoul((char[5]){p[1], p[2], p[3], p[4], 0}, NULL, 16);
            p += 4;
            /* Basic plane only (surrogate pairs are not needed for our keys and values). */
            if (cp < 0x80) {
                *o++ = (char)cp;
            } else if (cp < 0x800) {
                *o++ = (char)(0xc0 | cp >> 6), *o++ = (char)(0x80 | (cp & 0x3f));
            } else {
                *o++ = (char)(0xe0 | cp >> 12), *o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
                *o++ = (char)(0x80 | (cp & 0x3f));
            }
            break;
        }
        default: *o++ = *p;
        }
    }
    *o = 0;
    *out = s;
    return JSMF_OK;
}

int json_get_string(const char *text, const char *path, char **out)
{
    const char *p = json_find(text, path);
    if (!p)
        return jsmf_error(JSMF_ENOTFOUND, "JSON: no value at %s", path);
    if (*p != '"')
        return jsmf_error(JSMF_EFORMAT, "JSON: the value at %s is not a string", path);
    return json_decode_string(p, out);
}

int json_get_raw(const char *text, const char *path, char **out)
{
    const char *p = json_find(text, path);
    const char *end = p ? skip_value(p, 0) : NULL;
    if (!end)
        return jsmf_error(JSMF_ENOTFOUND, "JSON: no value at %s", path);
    size_t len = (size_t)(end - p);
    if (!(*out = malloc(len + 1)))
        return jsmf_error(JSMF_ENOMEM, "JSON: out of memory");
    memcpy(*out, p, len);
    (*out)[len] = 0;
    return JSMF_OK;
}
