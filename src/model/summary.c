/* summary.c — pieces of summary.json (formats/model.md) that every writer shares: the text built
 * in memory and the provenance of the input a model was fitted from. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "jsmf_model.h"
#include "jsmf_store.h"

int jsmf_model_summary_begin(jsmf_summary_buf *b)
{
    b->text = NULL, b->len = 0;
    FILE *f = open_memstream(&b->text, &b->len);
    if (!f)
        return jsmf_error(JSMF_ENOMEM, "out of memory for summary.json");
    jsmf_json_init(&b->j, f, 1);
    jsmf_json_begin_object(&b->j, NULL);
    return JSMF_OK;
}

char *jsmf_model_summary_end(jsmf_summary_buf *b)
{
    jsmf_json_end_object(&b->j); /* pretty: ends the line too */
    if (fclose(b->j.f)) {
        free(b->text);
        return NULL;
    }
    return b->text;
}

void jsmf_model_summary_input(jsmf_json *j, const char *path, const jsmf_source_input *in)
{
    if (in->kind != JSMF_SOURCE_STORE) {
        jsmf_json_begin_object(j, "input");
        jsmf_json_string(j, "path", path);
        jsmf_json_string(j, "kind", jsmf_source_kind_name(in->kind));
        jsmf_json_end_object(j);
        return;
    }
    char fp[32];
    snprintf(fp, sizeof fp, "%016" PRIx64, in->stats.fingerprint);
    jsmf_json_begin_object(j, "store");
    jsmf_json_string(j, "path", path);
    jsmf_json_string(j, "fingerprint", fp);
    jsmf_json_uint(j, "docs", in->stats.docs);
    jsmf_json_uint(j, "tokens", in->stats.tokens);
    jsmf_json_end_object(j);
}
