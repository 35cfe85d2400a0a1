/* tokenize.h — the tokenizer's counts of invalid UTF-8 and its verdict on vocabulary words
 * that text (or the item reader) can never produce (src/io/tokenize.c). */
#ifndef JSMF_IO_TOKENIZE_H
#define JSMF_IO_TOKENIZE_H

#include "jsmf_io.h"

/** What tokenize_ex dropped that a user should hear about. */
typedef struct jsmf_token_stats {
    uint32_t bad_utf8;  /**< runs dropped that are not valid UTF-8, whatever their length */
    uint32_t first_bad; /**< byte of `text` where the first of them starts */
} jsmf_token_stats;

/** jsmf_tokenize, also counting the tokens dropped as invalid UTF-8 (`st` may be NULL). */
uint32_t tokenize_ex(const jsmf_tokenizer *t, const char *text, size_t len, char *out,
                          const char **tok, uint32_t *toklen, jsmf_token_stats *st);

/** Whether n bytes are well-formed UTF-8 (no overlong forms, no surrogates, nothing above
 *  U+10FFFF): what text tokens and item ids must be. */
int utf8_valid(const unsigned char *s, size_t n);

/** Why the tokenizer `t` can never produce `word` (so text input never matches that word of a
 *  vocabulary: "has an uppercase letter", "has a character that separates tokens", "is not
 *  valid UTF-8", "is shorter than 3 bytes", ...), or NULL when it can. */
const char *token_problem(const jsmf_tokenizer *t, const char *word);

/** Why the item reader (JSMF_FORMAT_ITEMS) can never produce `word` ("has a blank", "is
 *  longer than an item id can be", "is not valid UTF-8"), or NULL when it can. */
const char *item_problem(const char *word);

#endif
