/* docrows.h — C's rows computed from the documents of a store that holds no rows (formats/store.md
 * "Documents"), as exact sums in row order, for the row reader (src/store/docrows.c). */
#ifndef JSMF_STORE_DOCROWS_H
#define JSMF_STORE_DOCROWS_H

#include "env.h"
#include "flush.h"

typedef struct docrows docrows;

/* Rows of the documents seen by transaction t (which must outlive it); their budget is
 * JSMF_STORE_DOCS_MEM, else half of jsmf_mem_default(). */
int docrows_open(jsmf_store *s, MDB_txn *t, docrows **out);
void docrows_free(docrows *r);
/* The next row handed out is the first non-empty one >= row. */
int docrows_seek(docrows *r, uint32_t row);
/* The next non-empty row: 1 and the row (arrays valid until the next call), 0 at the end. */
int docrows_next(docrows *r, uint32_t *row, const uint32_t **cols, const jsmf_sum **vals,
                 uint32_t *n);

#endif
