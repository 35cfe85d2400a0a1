/* files.h — the files of a store's directory, one list (files.c): which exist and removing
 * them, for whoever cleans a store up (ingest's failed first run, MPI shards), and each one's
 * path for the store's own code. Not public: a library user opens and closes stores. */
#ifndef JSMF_STORE_FILES_H
#define JSMF_STORE_FILES_H

#include <stddef.h>

/** How many files a store's directory holds: data.mdb, lock.mdb and writer.lock, in that order
 *  (the indices of store_files_exist and store_files_remove). */
#define JSMF_STORE_NFILES 3

/* The files, as indices of the list. */
enum { STORE_FILE_DATA, STORE_FILE_LOCK, STORE_FILE_WRITER_LOCK };

/** Whether each of the store files exists in the directory `path` (lstat: a dangling link
 *  counts), into exists[0 .. JSMF_STORE_NFILES-1]. */
void store_files_exist(const char *path, unsigned char exists[JSMF_STORE_NFILES]);

/** Remove the store files in the directory `path`, but those that `keep` flags (NULL: all go);
 *  then, when `dir`, the directory itself if nothing else is in it. No store may be open on
 *  `path` but the caller's own (whose writer lock keeps other writers out). */
void store_files_remove(const char *path, const unsigned char *keep, int dir);

/* "DIR/NAME" of file `which` into buf; 0 when it does not fit in `cap` bytes, else 1. */
int store_file_path(char *buf, size_t cap, const char *dir, int which);

#endif
