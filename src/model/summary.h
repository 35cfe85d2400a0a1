/* summary.h — summary.json texts built in memory (src/model/summary.c). */
#ifndef JSMF_MODEL_SUMMARY_H
#define JSMF_MODEL_SUMMARY_H

#include "json.h"

/** The text of `j`'s document written into memory: start with model_summary_begin (an
 *  object is open), add keys, end with model_summary_end, which closes the object and
 *  returns the text (caller frees; NULL when out of memory). */
typedef struct jsmf_summary_buf {
    jsmf_json j;
    char *text;
    size_t len;
} jsmf_summary_buf;
int model_summary_begin(jsmf_summary_buf *b);
char *model_summary_end(jsmf_summary_buf *b);

#endif
