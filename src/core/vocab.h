/* vocab.h — what the folders do with vocabularies besides loading and saving them:
 * compare, copy, generated labels (src/core/vocab.c). */
#ifndef JSMF_CORE_VOCAB_H
#define JSMF_CORE_VOCAB_H

#include <stdio.h>

#include "jsmf.h"

/** 0 when `a` and `b` hold the same words in the same order. Otherwise JSMF_EMISMATCH with a
 *  message naming both (by `a_name`, `b_name`) and the first differing word (1-based, the line
 *  of vocab.txt), or their sizes when one is a prefix of the other. Counts are not compared. */
int vocab_compare(const jsmf_vocab *a, const char *a_name, const jsmf_vocab *b,
                       const char *b_name);

/** jsmf_vocab_save with `comments` (NULL: none) written first: whole lines, each starting
 *  with '#' and ending in LF (formats/vocab.md: the rule lines of jsmf vocab). */
int vocab_save_commented(const char *path, const jsmf_vocab *v, const char *comments);

/** jsmf_vocab_load of an open stream (a model's vocab.txt already read and checked), `path`
 *  naming it in messages; `f` is left open. */
int vocab_read_stream(FILE *f, const char *path, jsmf_vocab **out);

/** A copy of `v` (its df/tf too when `with_counts` and present). Caller frees. */
int vocab_copy(const jsmf_vocab *v, int with_counts, jsmf_vocab **out);

/** A vocabulary of `n` generated labels "<prefix>0", "<prefix>1", ... (rows of a matrix whose
 *  words are unknown, or the topics of a level below). Caller frees. */
int vocab_labels(uint32_t n, const char *prefix, jsmf_vocab **out);

#endif
