/* files.c — the files of a store's directory: the one list of their names, which of them exist,
 * and removing them; what cleans up a store elsewhere (a failed first ingest, MPI shards, a
 * failed merge) asks here instead of knowing LMDB's file names. */
#include "jsmf_store.h"

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const store_files[JSMF_STORE_NFILES] = {"data.mdb", "lock.mdb", "writer.lock"};

/* "PATH/NAME" into buf; 0 when it does not fit (no such file can then be named). */
static int file_path(char *buf, size_t cap, const char *path, int i)
{
    int n = snprintf(buf, cap, "%s/%s", path, store_files[i]);
    return n > 0 && (size_t)n < cap;
}

void jsmf_store_files_exist(const char *path, unsigned char exists[JSMF_STORE_NFILES])
{
    char p[4096];
    struct stat st;
    for (int i = 0; i < JSMF_STORE_NFILES; i++)
        exists[i] = file_path(p, sizeof p, path, i) && lstat(p, &st) == 0;
}

void jsmf_store_files_remove(const char *path, const unsigned char *keep, int dir)
{
    char p[4096];
    for (int i = 0; i < JSMF_STORE_NFILES; i++)
        if (!(keep && keep[i]) && file_path(p, sizeof p, path, i))
            unlink(p);
    if (dir)
        rmdir(path); /* fails, as it should, when anything else is in it */
}
