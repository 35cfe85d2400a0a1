/* vocab_build.h — the word counter behind a counting pass, for ingest's passes on several
 * processes (src/io/vocab_build.c). */
#ifndef JSMF_IO_VOCAB_BUILD_H
#define JSMF_IO_VOCAB_BUILD_H

#include "jsmf_io.h"

typedef struct jsmf_vocab_counter jsmf_vocab_counter;

int vocab_counter_new(const jsmf_vocab_opts *opts, jsmf_vocab_counter **out);

/** Count every document of `path` (any format; "-" = stdin). UCI words come from its
 *  vocabulary file; LDA-C words from `ro->uci_vocab` when given, else the decimal ids.
 *  Text is tokenised and counted on ro->threads threads when that is 3 or more (one word table
 *  each, merged by finish); the result does not depend on the thread count. `progress` (or
 *  NULL) is told how far the input is read (docs_progress: what = `path`, "<stdin>" for
 *  "-"; MB). Errors are those of docs_open/next; after an error the counter may hold part
 *  of the input. */
int vocab_counter_add(jsmf_vocab_counter *c, const char *path, const jsmf_read_opts *ro,
                           jsmf_step_progress_fn progress, void *arg);

/** Curate and return the vocabulary (words with df and tf, sorted by df descending, ties by
 *  word bytes ascending — deterministic); `stats` may be NULL. An empty result is not an error.
 *  Call once; then only vocab_counter_free. */
int vocab_counter_finish(jsmf_vocab_counter *c, jsmf_vocab **out, jsmf_vocab_stats *stats);

void vocab_counter_free(jsmf_vocab_counter *c);

/** The counts so far as bytes (words with their df and tf, and the documents and tokens read),
 *  for another process to add with vocab_counter_unpack: processes that each counted part of
 *  the inputs, added, give the counts of one pass over all of them. Caller frees *out. */
int vocab_counter_pack(jsmf_vocab_counter *c, unsigned char **out, uint64_t *len);
/** Add counts packed by vocab_counter_pack (a counter with the same options); packed
 *  counts cut short are JSMF_EFORMAT and add nothing. */
int vocab_counter_unpack(jsmf_vocab_counter *c, const unsigned char *buf, uint64_t len);

#endif
