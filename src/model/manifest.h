/* manifest.h — a model directory's MANIFEST (src/model/manifest.c, formats/model.md "Manifest"):
 * the size and XXH3-64 of every file, written last; readers check each file against it. */
#ifndef JSMF_MODEL_MANIFEST_H
#define JSMF_MODEL_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "jsmf.h"

#define MANIFEST_NAME "MANIFEST"

/** The parsed MANIFEST of one model directory (free with manifest_free). */
typedef struct manifest manifest;

/** Write DIR/MANIFEST over every file under `dir` (sub-directories included, the MANIFEST of a
 *  sub-directory too), each read back and hashed, then fsync it. Errors name the file:
 *  JSMF_EIO, JSMF_ENOSPC, JSMF_ENOMEM. */
int manifest_write(const char *dir);

/** DIR/MANIFEST into *out, its last line's checksum of the lines above checked; *out NULL (and
 *  JSMF_OK) when the directory has none (a model of an earlier jsmf). JSMF_EFORMAT "DIR/MANIFEST:
 *  damaged: ..." when it does not parse or its checksum does not match, JSMF_EIO, JSMF_ENOMEM. */
int manifest_load(const char *dir, manifest **out);

void manifest_free(manifest *mf);

/** A file of a model directory read whole: `data` (malloc'ed, `size` bytes and a NUL after
 *  them, so text can be parsed in place), checked against the MANIFEST when there is one. */
typedef struct model_file {
    char *data;
    size_t size;
} model_file;

/** Read TOP/REL into `out` and, with `mf` (TOP's manifest; NULL: none, unchecked), check its
 *  size and hash against the line for REL. JSMF_ENOTFOUND when the file is absent and `mf` does
 *  not list it (an optional file); JSMF_EFORMAT "TOP/REL: damaged: ..." on a mismatch, when `mf`
 *  lists it and it is missing, or when it is there and `mf` does not list it; JSMF_EIO,
 *  JSMF_ENOMEM. */
int model_file_read(const manifest *mf, const char *top, const char *rel, model_file *out);

/** 1 when `mf` lists REL. */
int manifest_lists(const manifest *mf, const char *rel);

void model_file_free(model_file *f);

#endif
