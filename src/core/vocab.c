/* vocab.c — the vocabulary file (formats/vocab.md): one word per line in row order, optionally
 * followed by its document and term frequency; '#' lines are comments. */
#include "jsmf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void jsmf_vocab_free(jsmf_vocab *v)
{
    if (!v)
        return;
    for (uint32_t i = 0; i < v->n; i++)
        free(v->words[i]);
    free(v->words);
    free(v->df);
    free(v->tf);
    free(v);
}

/* Returns 1 and the two rows if a word appears twice: the map finds a word's first row, so
 * any later row of the same word is a duplicate. */
static int find_duplicate(const jsmf_vocab *v, uint32_t *first, uint32_t *second)
{
    jsmf_wordmap *m;
    int rc = jsmf_wordmap_new(v, &m);
    if (rc)
        return rc;
    int found = 0;
    for (uint32_t i = 0; i < v->n && !found; i++) {
        uint32_t w = jsmf_wordmap_find(m, v->words[i], strlen(v->words[i]));
        if (w != i)
            *first = w, *second = i, found = 1;
    }
    jsmf_wordmap_free(m);
    return found;
}

static int vocab_push(jsmf_vocab *v, size_t *cap, const char *word, size_t len, uint64_t df,
                      uint64_t tf)
{
    if (v->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 1024;
        char **w = realloc(v->words, nc * sizeof *w);
        if (!w)
            return JSMF_ENOMEM;
        v->words = w;
        uint64_t *d = realloc(v->df, nc * sizeof *d);
        if (!d)
            return JSMF_ENOMEM;
        v->df = d;
        uint64_t *t = realloc(v->tf, nc * sizeof *t);
        if (!t)
            return JSMF_ENOMEM;
        v->tf = t;
        *cap = nc;
    }
    char *copy = malloc(len + 1);
    if (!copy)
        return JSMF_ENOMEM;
    memcpy(copy, word, len);
    copy[len] = 0;
    v->words[v->n] = copy;
    v->df[v->n] = df;
    v->tf[v->n] = tf;
    v->n++;
    return JSMF_OK;
}

/* Parse "word[\tdf\ttf]" (the word may not contain a tab). Returns 1 if counts were present. */
static int parse_line(char *line, size_t *wlen, uint64_t *df, uint64_t *tf, int *bad)
{
    char *tab = strchr(line, '\t');
    *bad = 0;
    if (!tab) {
        *wlen = strlen(line);
        return 0;
    }
    *wlen = (size_t)(tab - line);
    char *end;
    errno = 0;
    unsigned long long d = strtoull(tab + 1, &end, 10);
    if (end == tab + 1 || *end != '\t' || errno) {
        *bad = 1;
        return 0;
    }
    char *p = end + 1;
    unsigned long long t = strtoull(p, &end, 10);
    if (end == p || (*end && *end != '\t') || errno) {
        *bad = 1;
        return 0;
    }
    *df = d, *tf = t;
    return 1;
}

int jsmf_vocab_read(const char *path, jsmf_vocab **out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return jsmf_error(errno == ENOENT ? JSMF_ENOTFOUND : JSMF_EIO, "%s: cannot open: %s",
                          path, strerror(errno));
    jsmf_vocab *v = calloc(1, sizeof *v);
    if (!v) {
        fclose(f);
        return JSMF_ENOMEM;
    }
    char *line = NULL;
    size_t linecap = 0, cap = 0;
    ssize_t len;
    uint64_t lineno = 0;
    int rc = JSMF_OK, with_counts = -1;
    while ((len = getline(&line, &linecap, f)) >= 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = 0;
        if (line[0] == '#')
            continue;
        if ((size_t)len != strlen(line)) {
            rc = jsmf_error(JSMF_EFORMAT, "%s:%" PRIu64 ": NUL byte in word", path, lineno);
            break;
        }
        size_t wlen;
        uint64_t df = 0, tf = 0;
        int bad, counted = parse_line(line, &wlen, &df, &tf, &bad);
        if (bad) {
            rc = jsmf_error(JSMF_EFORMAT, "%s:%" PRIu64 ": expected word<TAB>df<TAB>tf", path,
                            lineno);
            break;
        }
        if (wlen == 0) {
            rc = jsmf_error(JSMF_EFORMAT, "%s:%" PRIu64 ": empty word", path, lineno);
            break;
        }
        if (line[wlen - 1] == '\r') { /* written back alone, it would read back without it */
            rc = jsmf_error(JSMF_EFORMAT, "%s:%" PRIu64 ": word ends in a CR", path, lineno);
            break;
        }
        if (with_counts < 0)
            with_counts = counted;
        if (v->n >= UINT32_MAX - 1) {
            rc = jsmf_error(JSMF_EFORMAT, "%s:%" PRIu64 ": too many words", path, lineno);
            break;
        }
        if ((rc = vocab_push(v, &cap, line, wlen, df, tf)))
            break;
    }
    if (!rc && ferror(f))
        rc = jsmf_error(JSMF_EIO, "%s: read error: %s", path, strerror(errno));
    free(line);
    fclose(f);
    if (!rc && v->n == 0)
        rc = jsmf_error(JSMF_EFORMAT, "%s: vocabulary is empty", path);
    uint32_t a = 0, b = 0;
    if (!rc) {
        int dup = find_duplicate(v, &a, &b);
        if (dup < 0)
            rc = dup;
        else if (dup)
            rc = jsmf_error(JSMF_EFORMAT, "%s: word '%s' appears twice (rows %u and %u)", path,
                            v->words[b], a + 1, b + 1);
    }
    if (rc) {
        jsmf_vocab_free(v);
        return rc;
    }
    if (with_counts != 1) {
        free(v->df), free(v->tf);
        v->df = v->tf = NULL;
    }
    *out = v;
    return JSMF_OK;
}

int jsmf_vocab_write(const char *path, const jsmf_vocab *v)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return jsmf_error(JSMF_EIO, "%s: cannot create: %s", path, strerror(errno));
    for (uint32_t i = 0; i < v->n; i++) {
        if (v->df && v->tf)
            fprintf(f, "%s\t%" PRIu64 "\t%" PRIu64 "\n", v->words[i], v->df[i], v->tf[i]);
        else
            fprintf(f, "%s\n", v->words[i]);
    }
    int bad = ferror(f);
    if (fclose(f) || bad)
        return jsmf_error(errno == ENOSPC ? JSMF_ENOSPC : JSMF_EIO, "%s: write error: %s", path,
                          strerror(errno));
    return JSMF_OK;
}
