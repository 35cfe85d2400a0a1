/* out.h — output files written whole or not at all, and the report line every
 * *_write function prints (src/core/out.c). */
#ifndef JSMF_CORE_OUT_H
#define JSMF_CORE_OUT_H

#include <stdio.h>

#include "jsmf.h"

/* ---------------------------------------------------------------------------------------------
 * Output files (a vocabulary, a report, an export): written whole or not at all.
 * ------------------------------------------------------------------------------------------- */

typedef struct jsmf_out jsmf_out;

/** Open `path` for writing; "-" is standard output. A regular file, or a new name, is written
 *  to a temporary file beside it ("PATH.tmp-PID-N") that out_close renames over it, so a
 *  failed write leaves PATH as it was (a symlink keeps pointing at the file it names); a
 *  device, FIFO or other special file (/dev/null, /dev/stdout) is written in place and never
 *  replaced or removed. Errors name PATH, never the temporary, with the system's reason:
 *  JSMF_EIO, JSMF_ENOSPC, JSMF_EINVAL (a directory). */
int out_open(const char *path, jsmf_out **out);

/** The stream to write to. */
FILE *out_file(jsmf_out *o);

/** Finish and free `o`. `rc` is the caller's result of writing: when it and the stream are
 *  both good, the data is flushed, synced and renamed into place; otherwise the temporary is
 *  removed. A failed write on the stream replaces `rc` with "PATH: write error: <reason>"
 *  ("standard output" for "-", which is flushed but left open). Returns the final result. */
int out_close(jsmf_out *o, int rc);

/** One line of a report for people (the *_write functions of the other headers): "PREFIX: "
 *  (none when prefix is NULL), the formatted text, a newline. */
void report_line(FILE *f, const char *prefix, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
