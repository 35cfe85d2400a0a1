/* files.h — internal to the store: naming one of its directory's files (the list is files.c's;
 * jsmf_store_files_exist / _remove are the calls for other folders). */
#ifndef JSMF_STORE_FILES_H
#define JSMF_STORE_FILES_H

#include <stddef.h>

/* The files, as indices of the list (JSMF_STORE_NFILES of them). */
enum { STORE_FILE_DATA, STORE_FILE_LOCK, STORE_FILE_WRITER_LOCK };

/* "DIR/NAME" of file `which` into buf; 0 when it does not fit in `cap` bytes, else 1. */
int store_file_path(char *buf, size_t cap, const char *dir, int which);

#endif
