/* fuzz_vocab.c — libFuzzer target: the vocabulary file reader (formats/vocab.md). What it
 * accepts has no empty, duplicate, TAB- or NUL-holding word, and writing it back (a leading '#'
 * or backslash escaped) and reading that gives the same words and counts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "jsmf.h"

static fuzz_file input;
static char copy_path[64]; /* a real file: jsmf_vocab_save replaces its target by rename */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_file_set(&input, data, size);
    jsmf_vocab *v;
    if (jsmf_vocab_load(input.path, &v))
        return 0;
    FUZZ_CHECK(v->n >= 1 && (!v->df) == (!v->tf));
    for (uint32_t i = 0; i < v->n; i++)
        FUZZ_CHECK(v->words[i][0] && !strchr(v->words[i], '\t') && !strchr(v->words[i], '\n'));
    if (!copy_path[0]) {
        char dir[] = "/tmp/jsmf-fuzz-vocab-XXXXXX";
        FUZZ_CHECK(mkdtemp(dir) != NULL);
        snprintf(copy_path, sizeof copy_path, "%s/v.txt", dir);
    }
    FUZZ_CHECK(jsmf_vocab_save(copy_path, v) == 0);
    jsmf_vocab *w;
    FUZZ_CHECK(jsmf_vocab_load(copy_path, &w) == 0);
    FUZZ_CHECK(w->n == v->n && (!w->df) == (!v->df));
    for (uint32_t i = 0; i < v->n; i++) {
        FUZZ_CHECK(!strcmp(w->words[i], v->words[i]));
        FUZZ_CHECK(!v->df || (w->df[i] == v->df[i] && w->tf[i] == v->tf[i]));
    }
    jsmf_vocab_free(w);
    jsmf_vocab_free(v);
    return 0;
}
