/* durable.h — internal: writing a file whole or not at all, for the writers that are not a
 * jsmf_out (checkpoints, plans, a model's directory): the errno of a failed write as a jsmf code
 * (a full disk and a full quota are both JSMF_ENOSPC), fsync, and publishing a temporary by
 * rename. */
#ifndef JSMF_CORE_DURABLE_H
#define JSMF_CORE_DURABLE_H

#include <stdio.h>

/* A write-side errno as a jsmf code: ENOSPC and EDQUOT are JSMF_ENOSPC, the rest JSMF_EIO. */
int durable_errcode(int err);

/* fsync the file or directory `path`; a file system that cannot sync a directory is no error. */
int durable_sync_path(const char *path);

/* fsync the directory holding `path`, so that a rename into it survives a crash; best effort
 * (the data itself was synced before). */
void durable_sync_parent(const char *path);

/* Publish `tmp`, written through `f`, as `path`: flush, fsync, close and rename, then sync the
 * directory. `err` is the errno of a write that already failed (0: none). On any failure `tmp`
 * is removed and the error names `what` and `path` ("writing WHAT PATH: reason"). */
int durable_publish(FILE *f, int err, const char *tmp, const char *path, const char *what);

#endif
