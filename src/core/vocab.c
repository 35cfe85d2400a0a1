/* vocab.c — the vocabulary file (formats/vocab.md): one word per line in row order, optionally
 * followed by its document and term frequency; '#' lines are comments, and a word that starts
 * with '#' or a backslash is written with a backslash before it. */
#include "jsmf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out.h"
#include "vocab.h"

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

static int vocab_oom(const jsmf_vocab *v)
{
    return jsmf_error(JSMF_ENOMEM, "out of memory for a vocabulary of %u words", v->n + 1);
}

static int vocab_push(jsmf_vocab *v, size_t *cap, const char *word, size_t len, uint64_t df,
                      uint64_t tf)
{
    if (v->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 1024;
        char **w = realloc(v->words, nc * sizeof *w);
        if (!w)
            return vocab_oom(v);
        v->words = w;
        uint64_t *d = realloc(v->df, nc * sizeof *d);
        if (!d)
            return vocab_oom(v);
        v->df = d;
        uint64_t *t = realloc(v->tf, nc * sizeof *t);
        if (!t)
            return vocab_oom(v);
        v->tf = t;
        *cap = nc;
    }
    char *copy = malloc(len + 1);
    if (!copy)
        return vocab_oom(v);
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

/* A line's word without the backslash a writer puts before a leading '#' or backslash ("\#tag"
 * is the word "#tag"); a backslash before anything else is part of the word, as in files written
 * before the escape. */
static char *unescape_word(char *line)
{
    return line[0] == '\\' && (line[1] == '#' || line[1] == '\\') ? line + 1 : line;
}

/* Why `word` cannot be a line of a vocabulary file, or NULL: it would read back as another
 * word or none. */
static const char *unwritable(const char *word)
{
    size_t len = strlen(word);
    if (len == 0)
        return "it is empty";
    if (strchr(word, '\t'))
        return "it holds a TAB, the column separator";
    if (strchr(word, '\n'))
        return "it holds a line feed";
    if (word[len - 1] == '\r')
        return "it ends in a CR, which a reader drops";
    return NULL;
}

int jsmf_vocab_load(const char *path, jsmf_vocab **out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return jsmf_error(errno == ENOENT ? JSMF_ENOTFOUND : JSMF_EIO, "%s: cannot open: %s",
                          path, strerror(errno));
    int rc = vocab_read_stream(f, path, out);
    fclose(f);
    return rc;
}

int vocab_read_stream(FILE *f, const char *path, jsmf_vocab **out)
{
    jsmf_vocab *v = calloc(1, sizeof *v);
    if (!v)
        return jsmf_error(JSMF_ENOMEM, "%s: out of memory", path);
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
        char *word = unescape_word(line);
        size_t wlen;
        uint64_t df = 0, tf = 0;
        int bad, counted = parse_line(word, &wlen, &df, &tf, &bad);
        if (bad) {
            rc = jsmf_error(JSMF_EFORMAT, "%s:%" PRIu64 ": expected word<TAB>df<TAB>tf", path,
                            lineno);
            break;
        }
        if (wlen == 0) {
            rc = jsmf_error(JSMF_EFORMAT, "%s:%" PRIu64 ": empty word", path, lineno);
            break;
        }
        if (word[wlen - 1] == '\r') { /* written back alone, it would read back without it */
            rc = jsmf_error(JSMF_EFORMAT, "%s:%" PRIu64 ": word ends in a CR", path, lineno);
            break;
        }
        if (with_counts < 0)
            with_counts = counted;
        if (v->n >= UINT32_MAX - 1) {
            rc = jsmf_error(JSMF_EFORMAT, "%s:%" PRIu64 ": too many words", path, lineno);
            break;
        }
        if ((rc = vocab_push(v, &cap, word, wlen, df, tf)))
            break;
    }
    if (!rc && ferror(f))
        rc = jsmf_error(JSMF_EIO, "%s: read error: %s", path, strerror(errno));
    free(line);
    if (!rc && v->n == 0) /* also a stopword list: the words of the file, whatever its use */
        rc = jsmf_error(JSMF_EFORMAT, "%s: no words: %s", path,
                        lineno ? "the file holds only comments" : "the file is empty");
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

int jsmf_vocab_save(const char *path, const jsmf_vocab *v)
{
    return vocab_save_commented(path, v, NULL);
}

int vocab_save_commented(const char *path, const jsmf_vocab *v, const char *comments)
{
    for (uint32_t i = 0; i < v->n; i++) { /* checked first: nothing written, not even to stdout */
        const char *why = unwritable(v->words[i]);
        if (why)
            return jsmf_error(JSMF_EINVAL, "%s: word %" PRIu32 " '%.40s' cannot be written to a "
                              "vocabulary file: %s", path, i + 1, v->words[i], why);
    }
    jsmf_out *o;
    int rc = out_open(path, &o);
    if (rc)
        return rc;
    FILE *f = out_file(o);
    if (comments)
        fputs(comments, f);
    for (uint32_t i = 0; i < v->n; i++) {
        /* a leading '#' would read as a comment, a leading backslash as this escape */
        const char *esc = v->words[i][0] == '#' || v->words[i][0] == '\\' ? "\\" : "";
        if (v->df && v->tf)
            fprintf(f, "%s%s\t%" PRIu64 "\t%" PRIu64 "\n", esc, v->words[i], v->df[i],
                    v->tf[i]);
        else
            fprintf(f, "%s%s\n", esc, v->words[i]);
    }
    return out_close(o, JSMF_OK);
}

int vocab_compare(const jsmf_vocab *a, const char *a_name, const jsmf_vocab *b,
                       const char *b_name)
{
    uint32_t n = a->n < b->n ? a->n : b->n;
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(a->words[i], b->words[i]))
            return jsmf_error(JSMF_EMISMATCH, "%s and %s differ at word %" PRIu32
                              ": '%s' in %s, '%s' in %s", a_name, b_name, i + 1, a->words[i],
                              a_name, b->words[i], b_name);
    if (a->n != b->n)
        return jsmf_error(JSMF_EMISMATCH, "%s has %" PRIu32 " words but %s has %" PRIu32, a_name,
                          a->n, b_name, b->n);
    return JSMF_OK;
}

static uint64_t *copy_counts(const uint64_t *x, uint32_t n, int *failed)
{
    if (!x)
        return NULL;
    uint64_t *c = malloc((n ? n : 1) * sizeof *c);
    if (c)
        memcpy(c, x, (size_t)n * sizeof *c);
    else
        *failed = 1;
    return c;
}

/* Words made or copied, into a vocabulary of n words whose words array the caller allocated. */
static int vocab_fill(jsmf_vocab *c, const jsmf_vocab *src, const char *prefix)
{
    for (uint32_t i = 0; i < c->n; i++) {
        char buf[48];
        if (!src)
            snprintf(buf, sizeof buf, "%s%" PRIu32, prefix, i);
        if (!(c->words[i] = strdup(src ? src->words[i] : buf)))
            return jsmf_error(JSMF_ENOMEM, "out of memory copying a vocabulary");
    }
    return JSMF_OK;
}

static int vocab_make(const jsmf_vocab *src, uint32_t n, const char *prefix, int with_counts,
                      jsmf_vocab **out)
{
    *out = NULL;
    jsmf_vocab *c = calloc(1, sizeof *c);
    if (!c || !(c->words = calloc(n ? n : 1, sizeof *c->words))) {
        free(c);
        return jsmf_error(JSMF_ENOMEM, "out of memory copying a vocabulary");
    }
    c->n = n;
    int rc = vocab_fill(c, src, prefix), failed = 0;
    if (!rc && src && with_counts) {
        c->df = copy_counts(src->df, n, &failed);
        c->tf = copy_counts(src->tf, n, &failed);
        if (failed)
            rc = jsmf_error(JSMF_ENOMEM, "out of memory copying a vocabulary");
    }
    if (rc) {
        jsmf_vocab_free(c);
        return rc;
    }
    *out = c;
    return JSMF_OK;
}

int vocab_copy(const jsmf_vocab *v, int with_counts, jsmf_vocab **out)
{
    return vocab_make(v, v->n, NULL, with_counts, out);
}

int vocab_labels(uint32_t n, const char *prefix, jsmf_vocab **out)
{
    return vocab_make(NULL, n, prefix, 0, out);
}
