/* eval_internal.h — what the files of src/eval share: the document
 * reader mapping inputs to a model's rows, the report's projection. */
#ifndef JSMF_EVAL_INTERNAL_H
#define JSMF_EVAL_INTERNAL_H

#include "jsmf_eval.h"

/** Reads the documents of one or more inputs in order and maps their words to a vocabulary.
 *  Text tokens are looked up by text; UCI ids through the file's own vocabulary file; LDA-C ids
 *  are taken to be rows of the model (ids >= N count as out-of-vocabulary). */
typedef struct jsmf_docreader jsmf_docreader;

int jsmf_docreader_open(const char *const *paths, uint32_t npaths, const jsmf_read_opts *opts,
                        const jsmf_vocab *vocab, jsmf_docreader **out);
/** Fill `b` with up to max_docs next documents; *ndocs gets the number read (0 at the end of
 *  all inputs, as b->ndocs). Returns 0 or a negative JSMF_E* code. */
int jsmf_docreader_next(jsmf_docreader *r, jsmf_docbatch *b, uint32_t max_docs,
                        uint32_t *ndocs);
/** Documents read so far and tokens outside the vocabulary (for progress and messages). */
uint64_t jsmf_docreader_docs(const jsmf_docreader *r);
uint64_t jsmf_docreader_oov(const jsmf_docreader *r);
/** Bytes of the inputs consumed as stored on disk (compressed bytes for zstd) and their total
 *  size; total is 0 when unknown (stdin among the inputs). */
void jsmf_docreader_bytes(const jsmf_docreader *r, double *done, double *total);
void jsmf_docreader_close(jsmf_docreader *r);

/** 2-D principal-component projection of the rows of B-breve (p(topic | word), rows of B
 *  weighted by topic size p(z) = A 1 and normalised): xy is N x 2. Anchors sit at the corners
 *  of the simplex these rows fill (Lee, Bindel & Mimno 2015 Fig. 1). */
int jsmf_report_projection(const jsmf_model *m, double *xy);

#endif
