/* pages.h — a walk of data.mdb as a file, page by page, checking LMDB's own structure before
 * LMDB maps any of it (jsmf info --check). The bottom layer beside env: it calls no store file. */
#ifndef JSMF_STORE_PAGES_H
#define JSMF_STORE_PAGES_H

#include <stddef.h>
#include <stdint.h>

/* A key bound of a damaged range: the keys of the part of a database that cannot be read lie
 * in [lo, hi); a bound of length 0 with `open` set is no bound. */
typedef struct page_bound {
    int open;
    size_t len;
    unsigned char key[512];
} page_bound;

/* Told of each piece of damage found: the database ("" for LMDB's list of databases, "free"
 * for its list of free pages), the keys it may hide and what is wrong, one line. */
typedef void (*page_damage_fn)(void *arg, const char *db, const page_bound *lo,
                               const page_bound *hi, const char *what);

typedef struct page_walk_result {
    uint64_t pages;        /* the pages of the last checkpoint (LMDB's last page + 1) */
    uint64_t page_size;
    uint64_t used, free;   /* pages in a database's tree, pages listed free */
    uint64_t damage;       /* pieces of damage reported */
    uint64_t dbs;          /* named databases walked */
} page_walk_result;

/* Walk every page of the LMDB file at `data_path` (LMDB's data format 1, LMDB 0.9): the meta
 * page LMDB would use, the tree of every database (page numbers in range, headers, node
 * offsets, keys in order and within their parent's bounds, overflow pages, the counts each
 * database records), the free list, and that every page is either in use or free. Reads with
 * pread, never through a map, so damage is named where LMDB would fault. Returns 0, or -1 with
 * errno when the file cannot be read; damage goes to `fn` and is counted in `out`. */
int store_pages_walk(const char *data_path, page_damage_fn fn, void *arg, page_walk_result *out);

#endif
