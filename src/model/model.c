/* model.c — the MODEL directory (formats/model.md): allocate, save atomically (temporary sibling
 * directory, fsync, MANIFEST, rename into place) and load with every file checked against the
 * MANIFEST and every shape and invariant validated. */
#define _GNU_SOURCE /* renameat2, mkdtemp */
#include "jsmf_model.h"
#include "core/durable.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/vocab.h"
#include "json.h"
#include "manifest.h"
#include "model.h"
#include "npy.h"
#include "summary.h"

/* Tolerance on the column sums of B and the total of A (formats/model.md). */
#define MODEL_SUM_TOL 1e-6

int jsmf_model_new(uint32_t n, uint32_t k, jsmf_model **out)
{
    if (n == 0 || k == 0)
        return jsmf_error(JSMF_EINVAL, "model needs at least one word and one topic (N=%u, K=%u)",
                          n, k);
    jsmf_model *m = calloc(1, sizeof *m);
    if (!m)
        return jsmf_error(JSMF_ENOMEM, "out of memory for a %u x %u model", n, k);
    m->n = n, m->k = k;
    m->B = calloc((size_t)n * k, sizeof *m->B);
    m->A = calloc((size_t)k * k, sizeof *m->A);
    if (!m->B || !m->A) {
        jsmf_model_free(m);
        return jsmf_error(JSMF_ENOMEM, "cannot allocate a model of %u words x %u topics", n, k);
    }
    *out = m;
    return JSMF_OK;
}

void jsmf_model_free(jsmf_model *m)
{
    while (m) {
        jsmf_model *sub = m->sub;
        jsmf_vocab_free(m->vocab);
        free(m->B);
        free(m->A);
        free(m->anchors);
        free(m->alpha);
        free(m->summary_json);
        free(m);
        m = sub;
    }
}

void jsmf_model_topic_sizes(const jsmf_model *m, double *pz)
{
    for (uint32_t a = 0; a < m->k; a++) {
        double s = 0;
        for (uint32_t b = 0; b < m->k; b++)
            s += m->A[(size_t)a * m->k + b];
        pz[a] = s;
    }
}

/* The `top` largest of v[w * stride] over w < n into ids, largest first (ties: lower id first,
 * so the order is reproducible), in a small sorted buffer: O(n top) worst case, O(n) typically. */
uint32_t model_top_of(const double *v, uint64_t stride, uint32_t n, uint32_t top, uint32_t *ids)
{
    if (top > n)
        top = n;
    uint32_t have = 0;
    for (uint32_t w = 0; w < n && top; w++) {
        double x = v[w * stride];
        if (have == top && x <= v[ids[have - 1] * stride])
            continue;
        uint32_t pos = have < top ? have++ : have - 1;
        while (pos > 0 && v[ids[pos - 1] * stride] < x) {
            ids[pos] = ids[pos - 1];
            pos--;
        }
        ids[pos] = w;
    }
    return have;
}

uint32_t jsmf_model_top_words(const jsmf_model *m, uint32_t topic, uint32_t top, uint32_t *ids)
{
    return model_top_of(m->B + topic, m->k, m->n, top, ids);
}

void jsmf_model_word_marginal(const jsmf_model *m, double *pw)
{
    double *pz = malloc(sizeof(double) * m->k);
    if (!pz) {
        for (uint32_t w = 0; w < m->n; w++)
            pw[w] = 0;
        return;
    }
    jsmf_model_topic_sizes(m, pz);
    for (uint32_t w = 0; w < m->n; w++) {
        double s = 0;
        for (uint32_t t = 0; t < m->k; t++)
            s += m->B[(size_t)w * m->k + t] * pz[t];
        pw[w] = s;
    }
    free(pz);
}

/* lambda log b + (1 - lambda) log(b / p(w)) = log b - (1 - lambda) log p(w); a word the topic
 * never produces ranks last. */
static double relevance(double b, double pw, double lambda)
{
    return b > 0 && pw > 0 ? log(b) - (1 - lambda) * log(pw) : -INFINITY;
}

void jsmf_model_relevance(const jsmf_model *m, double lambda, const double *pw, double *out)
{
    for (size_t e = 0; e < (size_t)m->n * m->k; e++)
        out[e] = relevance(m->B[e], pw[e / m->k], lambda);
}

uint32_t jsmf_model_top_words_rank(const jsmf_model *m, uint32_t topic, uint32_t top,
                                   double lambda, const double *pw, uint32_t *ids)
{
    if (!(lambda < 1) || !pw)
        return jsmf_model_top_words(m, topic, top, ids);
    double *r = malloc(sizeof(double) * (m->n ? m->n : 1));
    if (!r)
        return jsmf_model_top_words(m, topic, top, ids);
    for (uint32_t w = 0; w < m->n; w++)
        r[w] = relevance(m->B[(size_t)w * m->k + topic], pw[w], lambda);
    uint32_t got = model_top_of(r, 1, m->n, top, ids);
    free(r);
    return got;
}

void model_summary_header(jsmf_json *j, const jsmf_model *m, const char *kind)
{
    json_string(j, "format", "jsmf-model");
    json_int(j, "version", JSMF_MODEL_VERSION);
    json_string(j, "kind", kind);
    json_uint(j, "k", m->k);
    json_uint(j, "n_words", m->n);
}

/* ------------------------------------------------------------------------------------------
 * Saving
 * ---------------------------------------------------------------------------------------- */

static int path_join(char *buf, size_t cap, const char *dir, const char *name)
{
    int n = snprintf(buf, cap, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= cap)
        return jsmf_error(JSMF_EINVAL, "%s/%s: path too long", dir, name);
    return JSMF_OK;
}

/* Close a file written with stdio; a failed write (ok = 0, errno set) or close is an error
 * naming the path: JSMF_ENOSPC for a full disk. */
static int close_written(FILE *f, const char *path, int ok)
{
    int err = ok ? 0 : errno;
    if (fclose(f) && ok)
        ok = 0, err = errno;
    if (!ok)
        return jsmf_error(durable_errcode(err), "%s: write error: %s", path,
                          strerror(err ? err : EIO));
    return JSMF_OK;
}

static FILE *create_file(const char *path, int *rc)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        *rc = jsmf_error(durable_errcode(errno), "%s: cannot create: %s", path,
                         strerror(errno));
    return f;
}

static int write_text_file(const char *path, const char *text)
{
    int rc = JSMF_OK;
    FILE *f = create_file(path, &rc);
    if (!f)
        return rc;
    size_t len = strlen(text);
    int ok = fwrite(text, 1, len, f) == len;
    if (ok && len && text[len - 1] != '\n')
        ok = fputc('\n', f) != EOF;
    return close_written(f, path, ok);
}

static int write_anchors(const char *path, const jsmf_model *m)
{
    int rc = JSMF_OK;
    FILE *f = create_file(path, &rc);
    if (!f)
        return rc;
    int ok = 1;
    for (uint32_t t = 0; t < m->k && ok; t++) {
        uint32_t w = m->anchors[t];
        ok = fprintf(f, "%" PRIu32 "\t%" PRIu32 "\t%s\n", t, w, m->vocab->words[w]) > 0;
    }
    return close_written(f, path, ok);
}

/* The summary written when the caller gave none, so every saved directory names its format. */
static char *default_summary(const jsmf_model *m, const char *kind)
{
    jsmf_summary_buf b;
    if (model_summary_begin(&b))
        return NULL;
    model_summary_header(&b.j, m, kind);
    return model_summary_end(&b);
}

/* The base word inside a generated label "t3:church" (the label itself otherwise). */
static const char *label_base(const char *label, int generated)
{
    const char *colon = generated && label[0] == 't' ? strchr(label, ':') : NULL;
    return colon ? colon + 1 : label;
}

/* Labels for the vocabulary of a level: its rows are the topics of the level below, named by
 * their index and, when the level below has anchors, the word its anchor stands for
 * ("t3:church", following anchors of anchors down to a word of the top vocabulary). */
static int level_vocab(const jsmf_model *below, const jsmf_vocab *below_vocab,
                       int below_generated, jsmf_vocab **out)
{
    jsmf_vocab *v = calloc(1, sizeof *v);
    if (!v)
        return jsmf_error(JSMF_ENOMEM, "out of memory for a level's vocabulary");
    v->words = calloc(below->k, sizeof *v->words);
    if (!v->words) {
        free(v);
        return jsmf_error(JSMF_ENOMEM, "out of memory for a level's vocabulary");
    }
    v->n = below->k;
    for (uint32_t t = 0; t < below->k; t++) {
        const char *aw = below->anchors ? label_base(below_vocab->words[below->anchors[t]],
                                                     below_generated)
                                        : NULL;
        size_t cap = 24 + (aw ? strlen(aw) : 0);
        if (!(v->words[t] = malloc(cap))) {
            jsmf_vocab_free(v);
            return jsmf_error(JSMF_ENOMEM, "out of memory for a level's vocabulary");
        }
        if (aw)
            snprintf(v->words[t], cap, "t%" PRIu32 ":%s", t, aw);
        else
            snprintf(v->words[t], cap, "t%" PRIu32, t);
    }
    *out = v;
    return JSMF_OK;
}

static int check_model_for_save(const jsmf_model *m, const jsmf_model *below, int level)
{
    if (!m->B || !m->A || m->k == 0 || m->n == 0)
        return jsmf_error(JSMF_EINVAL, "model level %d has no B or A", level);
    if (m->vocab && m->vocab->n != m->n)
        return jsmf_error(JSMF_EINVAL, "model level %d: vocabulary has %u words but B has %u rows",
                          level, m->vocab->n, m->n);
    if (!m->vocab && !below)
        return jsmf_error(JSMF_EINVAL, "model has no vocabulary");
    if (below && m->n != below->k)
        return jsmf_error(JSMF_EINVAL,
                          "hierarchy level %d has %u rows but the level below has %u topics",
                          level, m->n, below->k);
    if (m->anchors)
        for (uint32_t t = 0; t < m->k; t++)
            if (m->anchors[t] >= m->n)
                return jsmf_error(JSMF_EINVAL, "model level %d: anchor %u of topic %u >= N=%u",
                                  level, m->anchors[t], t, m->n);
    return JSMF_OK;
}

/* Write the files of one level (no sub-directories) into the existing directory `dir`, with
 * the vocabulary `vocab` (the model's own, or labels generated for a level). */
static int save_level(const char *dir, const jsmf_model *m, const jsmf_vocab *vocab, int level)
{
    char path[4096];
    int rc;
    jsmf_model view = *m;
    view.vocab = (jsmf_vocab *)vocab;
    if (!(rc = path_join(path, sizeof path, dir, "vocab.txt")) &&
        !(rc = jsmf_vocab_save(path, view.vocab)))
        rc = durable_sync_path(path);
    if (!rc && !(rc = path_join(path, sizeof path, dir, "B.npy")) &&
        !(rc = npy_write_f64(path, m->B, m->n, m->k)))
        rc = durable_sync_path(path);
    if (!rc && !(rc = path_join(path, sizeof path, dir, "A.npy")) &&
        !(rc = npy_write_f64(path, m->A, m->k, m->k)))
        rc = durable_sync_path(path);
    if (!rc && m->anchors && !(rc = path_join(path, sizeof path, dir, "anchors.txt")) &&
        !(rc = write_anchors(path, &view)))
        rc = durable_sync_path(path);
    if (!rc && m->alpha && !(rc = path_join(path, sizeof path, dir, "alpha.npy")) &&
        !(rc = npy_write_f64(path, m->alpha, m->k, 0)))
        rc = durable_sync_path(path);
    if (!rc) {
        char *own = NULL;
        const char *text = m->summary_json;
        if (!text && !(text = own = default_summary(m, level ? "level" : "unknown")))
            rc = jsmf_error(JSMF_ENOMEM, "%s: out of memory for summary.json", dir);
        if (!rc && !(rc = path_join(path, sizeof path, dir, "summary.json")) &&
            !(rc = write_text_file(path, text)))
            rc = durable_sync_path(path);
        free(own);
    }
    return rc;
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st, (void)ftw;
    return type == FTW_DP ? rmdir(path) : unlink(path);
}

/* Remove a directory tree we created (temporary or replaced model). */
static void remove_tree(const char *dir)
{
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The extra arrays of the top directory (a fit's factors), each NAME as given. */
static int save_extra(const char *dir, const model_array *extra, uint32_t nextra)
{
    char path[4096];
    int rc = JSMF_OK;
    for (uint32_t e = 0; e < nextra && !rc; e++)
        if (!(rc = path_join(path, sizeof path, dir, extra[e].name)) &&
            !(rc = npy_write_f64(path, extra[e].data, extra[e].rows, extra[e].cols)))
            rc = durable_sync_path(path);
    return rc;
}

static int save_tree(const char *tmp, const jsmf_model *m, const model_array *extra,
                     uint32_t nextra)
{
    int rc = check_model_for_save(m, NULL, 0);
    if (!rc)
        rc = save_level(tmp, m, m->vocab, 0);
    if (!rc)
        rc = save_extra(tmp, extra, nextra);
    const jsmf_model *below = m;
    const jsmf_vocab *below_vocab = m->vocab;
    jsmf_vocab *labels = NULL; /* generated vocabulary of the level last written, if any */
    int level = 1;
    for (const jsmf_model *s = m->sub; s && !rc; s = s->sub, level++) {
        char sub[4096], name[32];
        jsmf_vocab *mine = NULL;
        if ((rc = check_model_for_save(s, below, level)))
            break;
        if (!s->vocab && (rc = level_vocab(below, below_vocab, labels != NULL, &mine)))
            break;
        snprintf(name, sizeof name, "level%d", level);
        if (!(rc = path_join(sub, sizeof sub, tmp, name)) && mkdir(sub, 0777))
            rc = jsmf_error(durable_errcode(errno), "%s: cannot create: %s", sub,
                            strerror(errno));
        if (!rc)
            rc = save_level(sub, s, mine ? mine : s->vocab, level);
        if (!rc) /* a level is a model of its own, read alone too: it is checked alone too */
            rc = manifest_write(sub);
        if (!rc)
            rc = durable_sync_path(sub);
        jsmf_vocab_free(labels);
        labels = mine;
        below = s;
        below_vocab = mine ? mine : s->vocab;
    }
    jsmf_vocab_free(labels);
    if (!rc) /* last: it lists every file above, the levels' included */
        rc = manifest_write(tmp);
    if (!rc)
        rc = durable_sync_path(tmp);
    return rc;
}

/* An existing target may be replaced only if it looks like a model (or is empty): overwrite
 * must never delete a directory of unrelated files because of a typo. */
static int replaceable(const char *dir)
{
    char path[4096];
    if (path_join(path, sizeof path, dir, "B.npy"))
        return 0;
    if (access(path, F_OK) == 0)
        return 1;
    return rmdir(dir) == 0 || errno == ENOENT; /* succeeds only when it was empty */
}

/* Publish `tmp` as `dir`, replacing an existing model atomically when allowed. */
static int publish(const char *tmp, const char *dir, int overwrite)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        if (rename(tmp, dir))
            return jsmf_error(errno == EEXIST || errno == ENOTEMPTY ? JSMF_EEXIST
                                                                    : durable_errcode(errno),
                              "%s: cannot rename %s into place: %s", dir, tmp, strerror(errno));
        return JSMF_OK;
    }
    if (!overwrite)
        return jsmf_error(JSMF_EEXIST, "%s: already exists (use --force to replace it)", dir);
    if (!S_ISDIR(st.st_mode))
        return jsmf_error(JSMF_EEXIST, "%s: exists and is not a model directory", dir);
    if (!replaceable(dir))
        return jsmf_error(JSMF_EEXIST,
                          "%s: exists and does not look like a model (no B.npy); not replacing it",
                          dir);
    if (stat(dir, &st) != 0) /* it was an empty directory and is gone now */
        return rename(tmp, dir) ? jsmf_error(durable_errcode(errno), "%s: rename: %s", dir,
                                             strerror(errno))
                                : JSMF_OK;
    /* Swap old and new in one step; afterwards `tmp` holds the old model. */
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, dir, RENAME_EXCHANGE) == 0) {
        remove_tree(tmp);
        return JSMF_OK;
    }
    if (errno != EINVAL && errno != ENOSYS)
        return jsmf_error(durable_errcode(errno), "%s: cannot swap in %s: %s", dir, tmp,
                          strerror(errno));
    /* No RENAME_EXCHANGE on this file system: old aside, new in, old removed. A reader may
     * find no model for an instant, but never half of one. */
    size_t len = strlen(dir) + 16;
    char *old = malloc(len);
    if (!old)
        return jsmf_error(JSMF_ENOMEM, "%s: out of memory", dir);
    snprintf(old, len, "%s.old-XXXXXX", dir);
    int rc = JSMF_OK;
    if (!mkdtemp(old) || rename(dir, old)) {
        rc = jsmf_error(durable_errcode(errno), "%s: cannot move the old model aside: %s",
                        dir, strerror(errno));
    } else if (rename(tmp, dir)) {
        rc = jsmf_error(durable_errcode(errno), "%s: rename: %s", dir, strerror(errno));
        rename(old, dir);
    } else {
        remove_tree(old);
    }
    free(old);
    return rc;
}

/* Messages of the files written inside the temporary directory name the model the user asked
 * for: "MODEL/B.npy: write error: ...", not "MODEL.tmp-x1Y2z3/B.npy". */
static int name_model_in_message(int rc, const char *tmp, const char *dir)
{
    const char *msg = jsmf_errmsg_for(rc);
    size_t n = strlen(tmp);
    if (!msg || strncmp(msg, tmp, n))
        return rc;
    char *rest = strdup(msg + n);
    if (!rest)
        return rc;
    rc = jsmf_error(rc, "%s%s", dir, rest);
    free(rest);
    return rc;
}

static mode_t current_umask(void)
{
    mode_t u = umask(0);
    umask(u);
    return u;
}

int jsmf_model_save(const char *dir_in, const jsmf_model *m, int overwrite)
{
    return model_save_with(dir_in, m, overwrite, NULL, 0);
}

int model_save_with(const char *dir_in, const jsmf_model *m, int overwrite,
                    const model_array *extra, uint32_t nextra)
{
    if (!dir_in || !*dir_in || !m)
        return jsmf_error(JSMF_EINVAL, "model save: no directory or model");
    size_t len = strlen(dir_in);
    char *dir = strdup(dir_in);
    if (!dir)
        return jsmf_error(JSMF_ENOMEM, "%s: out of memory", dir_in);
    while (len > 1 && dir[len - 1] == '/')
        dir[--len] = 0;
    struct stat st;
    if (!overwrite && stat(dir, &st) == 0) {
        free(dir);
        return jsmf_error(JSMF_EEXIST, "%s: already exists (use --force to replace it)", dir_in);
    }
    char *tmp = malloc(len + 16);
    if (!tmp) {
        free(dir);
        return jsmf_error(JSMF_ENOMEM, "%s: out of memory", dir_in);
    }
    snprintf(tmp, len + 16, "%s.tmp-XXXXXX", dir);
    int rc;
    if (!mkdtemp(tmp)) {
        rc = jsmf_error(durable_errcode(errno), "%s: cannot create: %s", dir,
                        strerror(errno));
    } else {
        chmod(tmp, 0777 & ~current_umask()); /* mkdtemp made it 0700 */
        rc = save_tree(tmp, m, extra, nextra);
        if (rc)
            rc = name_model_in_message(rc, tmp, dir);
        if (!rc)
            rc = publish(tmp, dir, overwrite);
        if (rc)
            remove_tree(tmp);
    }
    if (!rc) {
        /* Make the rename itself durable. */
        char *parent_buf = strdup(dir);
        if (parent_buf) {
            durable_sync_path(dirname(parent_buf));
            free(parent_buf);
        }
    }
    free(tmp);
    free(dir);
    return rc;
}

/* ------------------------------------------------------------------------------------------
 * Loading
 * ---------------------------------------------------------------------------------------- */

/* anchors.txt, already read (and checked) into memory, through `f`. */
static int read_anchors(FILE *f, const char *path, jsmf_model *m)
{
    m->anchors = malloc(m->k * sizeof *m->anchors);
    if (!m->anchors)
        return jsmf_error(JSMF_ENOMEM, "%s: out of memory for %u anchors", path, m->k);
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    uint32_t lineno = 0, count = 0;
    int rc = JSMF_OK;
    while (!rc && (len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = 0;
        if (line[0] == '#' || len == 0)
            continue;
        char *end, *word;
        errno = 0;
        unsigned long t = strtoul(line, &end, 10);
        unsigned long w = (*end == '\t') ? strtoul(end + 1, &word, 10) : 0;
        if (end == line || *end != '\t' || errno || (*word != '\t' && *word != 0)) {
            rc = jsmf_error(JSMF_EFORMAT, "%s:%u: expected topic<TAB>word_id<TAB>word", path,
                            lineno);
        } else if (t != count) {
            rc = jsmf_error(JSMF_EFORMAT, "%s:%u: topic %lu out of order (expected %u)", path,
                            lineno, t, count);
        } else if (count >= m->k) {
            rc = jsmf_error(JSMF_EFORMAT, "%s:%u: more anchors than the %u topics", path, lineno,
                            m->k);
        } else if (w >= m->n) {
            rc = jsmf_error(JSMF_EFORMAT, "%s:%u: word id %lu out of range (N=%u)", path, lineno,
                            w, m->n);
        } else if (*word == '\t' && strcmp(word + 1, m->vocab->words[w])) {
            rc = jsmf_error(JSMF_EFORMAT, "%s:%u: word '%s' is not word %lu of vocab.txt ('%s')",
                            path, lineno, word + 1, w, m->vocab->words[w]);
        } else {
            m->anchors[count++] = (uint32_t)w;
        }
    }
    if (!rc && ferror(f))
        rc = jsmf_error(JSMF_EIO, "%s: read error: %s", path, strerror(errno));
    if (!rc && count != m->k)
        rc = jsmf_error(JSMF_EFORMAT, "%s: %u anchors for %u topics", path, count, m->k);
    free(line);
    return rc;
}

/* A of a model that has none: every pair of topics alike. Readers that need only B (held-out
 * likelihood, coherence, l1 to a truth) score such a model as any other. */
static int uniform_a(jsmf_model *m)
{
    size_t kk = (size_t)m->k * m->k;
    if (!(m->A = malloc(kk * sizeof *m->A)))
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    for (size_t i = 0; i < kk; i++)
        m->A[i] = 1.0 / (double)kk;
    m->a_uniform = 1;
    return JSMF_OK;
}

int model_check_new(const char *dir, int overwrite)
{
    struct stat st;
    if (!overwrite && stat(dir, &st) == 0)
        return jsmf_error(JSMF_EEXIST, "%s exists (use --force to replace it)", dir);
    return JSMF_OK;
}

/* summary.json's text (taken over: it becomes m->summary_json) checked for format and version. */
static int read_summary(char *buf, const char *path, jsmf_model *m)
{
    int rc = JSMF_OK;
    double version;
    char *format = NULL;
    if (!json_valid(buf))
        rc = jsmf_error(JSMF_EFORMAT, "%s: not valid JSON", path);
    else if (json_get_string(buf, "format", &format) == 0 && strcmp(format, "jsmf-model"))
        rc = jsmf_error(JSMF_EFORMAT, "%s: format is '%s', not 'jsmf-model'", path, format);
    else if (json_get_number(buf, "version", &version) == 0 && version > JSMF_MODEL_VERSION)
        rc = jsmf_error(JSMF_EVERSION,
                        "%s: model format version %g is newer than this jsmf reads (%d)", path,
                        version, JSMF_MODEL_VERSION);
    free(format);
    if (rc)
        free(buf);
    else
        m->summary_json = buf;
    return rc;
}

static int check_matrices(const char *dir, const jsmf_model *m)
{
    /* One pass in memory order (B is row-major), summing all columns at once. */
    double *colsum = calloc(m->k, sizeof *colsum);
    if (!colsum)
        return jsmf_error(JSMF_ENOMEM, "%s: out of memory checking A", dir);
    for (uint32_t w = 0; w < m->n; w++) {
        const double *row = m->B + (size_t)w * m->k;
        for (uint32_t t = 0; t < m->k; t++) {
            if (!isfinite(row[t]) || row[t] < -1e-12) {
                free(colsum);
                return jsmf_error(JSMF_EFORMAT,
                                  "%s/B.npy: entry (%u, %u) = %g is not a probability", dir, w, t,
                                  row[t]);
            }
            colsum[t] += row[t];
        }
    }
    for (uint32_t t = 0; t < m->k; t++) {
        if (fabs(colsum[t] - 1) > MODEL_SUM_TOL) {
            double s = colsum[t];
            free(colsum);
            return jsmf_error(JSMF_EFORMAT,
                              "%s/B.npy: column %u sums to %.9g, not 1 (tolerance %g)", dir, t, s,
                              MODEL_SUM_TOL);
        }
    }
    free(colsum);
    double s = 0;
    for (size_t i = 0; i < (size_t)m->k * m->k; i++) {
        if (!isfinite(m->A[i]))
            return jsmf_error(JSMF_EFORMAT, "%s/A.npy: entry %zu is not finite", dir, i);
        s += m->A[i];
    }
    if (fabs(s - 1) > MODEL_SUM_TOL)
        return jsmf_error(JSMF_EFORMAT, "%s/A.npy: entries sum to %.9g, not 1 (tolerance %g)", dir,
                          s, MODEL_SUM_TOL);
    if (m->alpha)
        for (uint32_t t = 0; t < m->k; t++)
            if (!isfinite(m->alpha[t]) || m->alpha[t] < 0)
                return jsmf_error(JSMF_EFORMAT, "%s/alpha.npy: entry %u = %g is not >= 0", dir, t,
                                  m->alpha[t]);
    return JSMF_OK;
}

/* Where the files of one level are: the directory given to jsmf_model_load (`top`, whose
 * MANIFEST `mf` covers the whole tree, NULL when it has none) and the level's sub-directory
 * ("" for the top, "level1", ...). */
typedef struct level_reader {
    const manifest *mf;
    const char *top;
    const char *sub;
} level_reader;

/* The level's file NAME whole into `f`, checked against the MANIFEST, and its path for messages
 * into `path`. JSMF_ENOTFOUND for an optional file that is not there. */
static int read_level_file(const level_reader *r, const char *name, model_file *f, char *path,
                           size_t cap)
{
    char rel[512];
    snprintf(rel, sizeof rel, "%s%s%s", r->sub, *r->sub ? "/" : "", name);
    int rc = path_join(path, cap, r->top, rel);
    return rc ? rc : model_file_read(r->mf, r->top, rel, f);
}

/* An optional file that is absent: no error (the message of the attempt is dropped). */
static int absent(int rc)
{
    if (rc == JSMF_ENOTFOUND)
        jsmf_error_clear();
    return rc == JSMF_ENOTFOUND;
}

/* A text file in memory through a stream, for the parsers that read lines (vocab, anchors). */
static int parse_stream(model_file *f, const char *path, jsmf_model *m,
                        int (*parse)(FILE *, const char *, jsmf_model *))
{
    FILE *s = fmemopen(f->data, f->size, "rb");
    if (!s)
        return jsmf_error(JSMF_ENOMEM, "%s: out of memory", path);
    int rc = parse(s, path, m);
    fclose(s);
    return rc;
}

static int parse_vocab(FILE *s, const char *path, jsmf_model *m)
{
    return vocab_read_stream(s, path, &m->vocab);
}

/* vocab.txt and B.npy, both required; B's rows are the words. */
static int load_words_and_topics(const level_reader *r, jsmf_model *m)
{
    char path[4096];
    model_file f;
    uint32_t rows, cols;
    int rc = read_level_file(r, "vocab.txt", &f, path, sizeof path);
    if (!rc) {
        rc = parse_stream(&f, path, m, parse_vocab);
        model_file_free(&f);
    }
    if (!rc && !(rc = read_level_file(r, "B.npy", &f, path, sizeof path)) &&
        !(rc = npy_decode_f64(f.data, f.size, path, &m->B, &rows, &cols))) {
        m->n = rows, m->k = cols;
        if (rows != m->vocab->n)
            rc = jsmf_error(JSMF_EFORMAT, "%s: %u rows but vocab.txt has %u words", path, rows,
                            m->vocab->n);
        else if (cols == 0)
            rc = jsmf_error(JSMF_EFORMAT, "%s: no topics (0 columns)", path);
    }
    return rc;
}

/* A.npy: required with a summary.json; without both, topics from another tool (uniform A). */
static int load_a(const level_reader *r, int has_summary, jsmf_model *m)
{
    char path[4096];
    model_file f;
    uint32_t rows, cols;
    int rc = read_level_file(r, "A.npy", &f, path, sizeof path);
    if (rc == JSMF_ENOTFOUND && !has_summary && absent(rc))
        return uniform_a(m); /* B.npy + vocab.txt: topics from another tool */
    if (!rc && !(rc = npy_decode_f64(f.data, f.size, path, &m->A, &rows, &cols)) &&
        (rows != m->k || cols != m->k))
        rc = jsmf_error(JSMF_EFORMAT, "%s: shape %u x %u, expected %u x %u (K from B.npy)", path,
                        rows, cols, m->k, m->k);
    return rc;
}

/* anchors.txt and alpha.npy, both optional. */
static int load_anchors_alpha(const level_reader *r, jsmf_model *m)
{
    char path[4096];
    model_file f;
    uint32_t rows, cols;
    int rc = read_level_file(r, "anchors.txt", &f, path, sizeof path);
    if (absent(rc)) {
        rc = JSMF_OK; /* FDM models have none */
    } else if (!rc) {
        rc = parse_stream(&f, path, m, read_anchors);
        model_file_free(&f);
    }
    if (rc)
        return rc;
    rc = read_level_file(r, "alpha.npy", &f, path, sizeof path);
    if (absent(rc))
        return JSMF_OK; /* recovered only by some fits */
    if (!rc && !(rc = npy_decode_f64(f.data, f.size, path, &m->alpha, &rows, &cols)) &&
        (rows != m->k || cols != 1))
        rc = jsmf_error(JSMF_EFORMAT, "%s: shape %u x %u, expected %u values", path, rows, cols,
                        m->k);
    return rc;
}

/* Load one level (no sub-directories), each file checked against the MANIFEST before it is
 * decoded. summary.json is read first: whether A.npy may be absent depends on it. */
static int load_level(const level_reader *r, jsmf_model **out)
{
    char path[4096], dir[4096];
    jsmf_model *m = calloc(1, sizeof *m);
    if (!m)
        return jsmf_error(JSMF_ENOMEM, "%s: out of memory", r->top);
    snprintf(dir, sizeof dir, "%s%s%s", r->top, *r->sub ? "/" : "", r->sub);
    model_file summary;
    int rc = read_level_file(r, "summary.json", &summary, path, sizeof path);
    int has_summary = rc == JSMF_OK;
    if (absent(rc))
        rc = JSMF_OK; /* summary.json is optional */
    if (!rc)
        rc = load_words_and_topics(r, m);
    if (!rc)
        rc = load_a(r, has_summary, m);
    if (!rc)
        rc = load_anchors_alpha(r, m);
    if (!rc && has_summary) {
        rc = read_summary(summary.data, path, m);
        summary.data = NULL;
    }
    if (has_summary)
        model_file_free(&summary);
    if (!rc)
        rc = check_matrices(dir, m);
    if (rc) {
        jsmf_model_free(m);
        return rc;
    }
    *out = m;
    return JSMF_OK;
}

/* Whether the hierarchy has level LEVEL: its directory is there, or the MANIFEST lists it (then
 * a missing directory is a damage load_level reports). */
static int has_level(const level_reader *r, const char *sub)
{
    char path[4096], rel[512];
    struct stat st;
    snprintf(rel, sizeof rel, "%s/B.npy", sub);
    return (!path_join(path, sizeof path, r->top, sub) && stat(path, &st) == 0) ||
           manifest_lists(r->mf, rel);
}

int jsmf_model_has_manifest(const char *dir)
{
    char path[4096];
    struct stat st;
    return !path_join(path, sizeof path, dir, MANIFEST_NAME) && lstat(path, &st) == 0;
}

int model_read_array(const char *dir, const char *name, double **data, uint32_t *rows,
                     uint32_t *cols)
{
    manifest *mf = NULL;
    int rc = manifest_load(dir, &mf);
    level_reader r = {mf, dir, ""};
    char path[4096];
    model_file f;
    if (!rc && !(rc = read_level_file(&r, name, &f, path, sizeof path)))
        rc = npy_decode_f64(f.data, f.size, path, data, rows, cols);
    manifest_free(mf);
    return rc;
}

int jsmf_model_load(const char *dir, jsmf_model **out)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return jsmf_error(errno == ENOENT ? JSMF_ENOTFOUND : JSMF_EIO, "%s: no such model: %s",
                          dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return jsmf_error(JSMF_EFORMAT, "%s: a model is a directory, this is not one", dir);
    manifest *mf = NULL;
    int rc = manifest_load(dir, &mf);
    level_reader r = {mf, dir, ""};
    jsmf_model *top = NULL;
    if (!rc)
        rc = load_level(&r, &top);
    jsmf_model *below = top;
    for (int level = 1; !rc; level++) {
        char sub[32];
        snprintf(sub, sizeof sub, "level%d", level);
        r.sub = sub;
        if (!has_level(&r, sub))
            break;
        jsmf_model *s = NULL;
        if ((rc = load_level(&r, &s)))
            break;
        if (s->n != below->k) {
            jsmf_model_free(s);
            rc = jsmf_error(JSMF_EFORMAT,
                            "%s/%s/B.npy: %u rows, but the level below has %u topics", dir, sub,
                            s->n, below->k);
            break;
        }
        below->sub = s;
        below = s;
    }
    manifest_free(mf);
    if (rc) {
        jsmf_model_free(top);
        return rc;
    }
    *out = top;
    return JSMF_OK;
}
