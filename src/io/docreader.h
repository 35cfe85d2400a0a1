/* docreader.h — documents of one or more inputs in batches of count vectors over a vocabulary's
 * rows: the front end of infer, eval and refine (io/docreader.c). */
#ifndef JSMF_IO_DOCREADER_H
#define JSMF_IO_DOCREADER_H

#include "jsmf_io.h"

/** Reads the documents of one or more inputs in order and maps their words to a vocabulary.
 *  Text tokens are looked up by text; UCI ids through the file's own vocabulary file; LDA-C ids
 *  are taken to be rows of the model (ids >= N count as out-of-vocabulary). */
typedef struct docreader docreader;

int docreader_open(const char *const *paths, uint32_t npaths, const jsmf_read_opts *opts,
                        const jsmf_vocab *vocab, docreader **out);
/** Fill `b` with up to max_docs next documents; *ndocs gets the number read (0 at the end of
 *  all inputs, as b->ndocs). Returns 0 or a negative JSMF_E* code. */
int docreader_next(docreader *r, jsmf_docbatch *b, uint32_t max_docs,
                        uint32_t *ndocs);
/** Documents read so far and tokens outside the vocabulary (for progress and messages). */
uint64_t docreader_docs(const docreader *r);
uint64_t docreader_oov(const docreader *r);
/** Bytes of the inputs consumed as stored on disk (compressed bytes for zstd) and their total
 *  size; total is 0 when unknown (stdin among the inputs). */
void docreader_bytes(const docreader *r, double *done, double *total);
void docreader_close(docreader *r);

#endif
