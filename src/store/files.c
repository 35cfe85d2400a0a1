/* files.c — the files of a store's directory: the one list of their names, which of them exist,
 * and removing them; what cleans up a store elsewhere (a failed first ingest, MPI shards, a
 * failed merge) asks here instead of knowing LMDB's file names. */
#include "files.h"

#include "jsmf_store.h"

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

/* LMDB's data and lock files, and the lock that keeps one writer at a time (store.c). */
static const char *const store_files[JSMF_STORE_NFILES] = {
    [STORE_FILE_DATA] = "data.mdb", [STORE_FILE_LOCK] = "lock.mdb",
    [STORE_FILE_WRITER_LOCK] = "writer.lock"};

int store_file_path(char *buf, size_t cap, const char *dir, int which)
{
    int n = snprintf(buf, cap, "%s/%s", dir, store_files[which]);
    return n > 0 && (size_t)n < cap;
}

void store_files_exist(const char *path, unsigned char exists[JSMF_STORE_NFILES])
{
    char p[4096];
    struct stat st;
    for (int i = 0; i < JSMF_STORE_NFILES; i++)
        exists[i] = store_file_path(p, sizeof p, path, i) && lstat(p, &st) == 0;
}

void store_files_remove(const char *path, const unsigned char *keep, int dir)
{
    char p[4096];
    for (int i = 0; i < JSMF_STORE_NFILES; i++)
        if (!(keep && keep[i]) && store_file_path(p, sizeof p, path, i))
            unlink(p);
    if (dir)
        rmdir(path); /* fails, as it should, when anything else is in it */
}
