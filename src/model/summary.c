/* summary.c — the text of a summary.json (formats/model.md) built in memory, as every writer of
 * a model builds it. */
#include <stdio.h>
#include <stdlib.h>

#include "jsmf_model.h"
#include "json.h"
#include "summary.h"

int model_summary_begin(jsmf_summary_buf *b)
{
    b->text = NULL, b->len = 0;
    FILE *f = open_memstream(&b->text, &b->len);
    if (!f)
        return jsmf_error(JSMF_ENOMEM, "out of memory for summary.json");
    json_init(&b->j, f, 1);
    json_begin_object(&b->j, NULL);
    return JSMF_OK;
}

char *model_summary_end(jsmf_summary_buf *b)
{
    json_end_object(&b->j); /* pretty: ends the line too */
    if (fclose(b->j.f)) {
        free(b->text);
        return NULL;
    }
    return b->text;
}
