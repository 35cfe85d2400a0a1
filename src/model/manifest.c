/* manifest.c — a model directory's MANIFEST (formats/model.md, "Manifest"): the XXH3-64 and size
 * of every file, written last before the rename; readers check each file they decode against it. */
#define _GNU_SOURCE
#include "manifest.h"
#include "core/durable.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#define MANIFEST_HASH "xxh3-64"
/* "xxh3-64 " + 16 hex digits + " ": where a line's size starts. */
#define MANIFEST_SIZE_AT (sizeof MANIFEST_HASH + 17)
#define READ_CHUNK (1u << 20)

typedef struct manifest_entry {
    const char *path; /* into manifest.text */
    uint64_t size, hash;
} manifest_entry;

struct manifest {
    char *text; /* the file, its lines cut at their newlines */
    manifest_entry *e;
    size_t n;
};

/* ------------------------------------------------------------------------------------------
 * Reading a file whole
 * ---------------------------------------------------------------------------------------- */

/* PATH whole into *data (NUL-terminated) and *size; errno of a failed open in *open_err (0 when
 * it opened), so that callers tell an absent file from an unreadable one. */
static int read_whole(const char *path, char **data, size_t *size, int *open_err)
{
    *open_err = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        *open_err = errno;
        return jsmf_error(errno == ENOENT ? JSMF_ENOTFOUND : JSMF_EIO, "%s: cannot open: %s",
                          path, strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        return jsmf_error(JSMF_EIO, "%s: not a regular file", path);
    }
    size_t cap = (size_t)st.st_size, len = 0;
    char *buf = malloc(cap + 1);
    if (!buf) {
        close(fd);
        return jsmf_error(JSMF_ENOMEM, "%s: out of memory for %zu bytes", path, cap);
    }
    for (;;) {
        if (len == cap) { /* the file grew while we read it: read on */
            char *nb = cap > SIZE_MAX / 2 - 1 ? NULL : realloc(buf, cap * 2 + 4097);
            if (!nb) {
                free(buf), close(fd);
                return jsmf_error(JSMF_ENOMEM, "%s: out of memory", path);
            }
            buf = nb, cap = cap * 2 + 4096;
        }
        ssize_t got = read(fd, buf + len, cap - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int err = errno;
            free(buf), close(fd);
            return jsmf_error(JSMF_EIO, "%s: read error: %s", path, strerror(err));
        }
        if (got == 0)
            break;
        len += (size_t)got;
    }
    close(fd);
    buf[len] = 0;
    *data = buf, *size = len;
    return JSMF_OK;
}

/* ------------------------------------------------------------------------------------------
 * Writing
 * ---------------------------------------------------------------------------------------- */

typedef struct path_list {
    char **p;
    size_t n, cap;
} path_list;

static int list_push(path_list *l, const char *rel)
{
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 16;
        char **np = realloc(l->p, nc * sizeof *np);
        if (!np)
            return jsmf_error(JSMF_ENOMEM, "out of memory listing a model's files");
        l->p = np, l->cap = nc;
    }
    if (!(l->p[l->n] = strdup(rel)))
        return jsmf_error(JSMF_ENOMEM, "out of memory listing a model's files");
    l->n++;
    return JSMF_OK;
}

static void list_free(path_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->p[i]);
    free(l->p);
}

/* Every regular file under TOP/REL (REL "" for TOP itself) by its path relative to TOP; the
 * MANIFEST being written is not one of them. */
static int collect_files(const char *top, const char *rel, path_list *out)
{
    char dirpath[4096];
    snprintf(dirpath, sizeof dirpath, "%s%s%s", top, *rel ? "/" : "", rel);
    DIR *d = opendir(dirpath);
    if (!d)
        return jsmf_error(JSMF_EIO, "%s: cannot list: %s", dirpath, strerror(errno));
    int rc = JSMF_OK;
    struct dirent *de;
    while (!rc && (de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (!*rel && !strcmp(de->d_name, MANIFEST_NAME))
            continue;
        char sub[4096], path[8192];
        snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", de->d_name);
        snprintf(path, sizeof path, "%s/%s", top, sub);
        struct stat st;
        if (lstat(path, &st))
            rc = jsmf_error(JSMF_EIO, "%s: %s", path, strerror(errno));
        else if (S_ISDIR(st.st_mode))
            rc = collect_files(top, sub, out);
        else if (S_ISREG(st.st_mode))
            rc = list_push(out, sub);
    }
    closedir(d);
    return rc;
}

static int by_path(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* XXH3-64 and size of PATH, read in chunks (a model's B may be larger than we want twice). */
static int hash_file(const char *path, uint64_t *hash, uint64_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return jsmf_error(JSMF_EIO, "%s: cannot open: %s", path, strerror(errno));
    XXH3_state_t *st = XXH3_createState();
    char *buf = malloc(READ_CHUNK);
    int rc = JSMF_OK;
    if (!st || !buf) {
        rc = jsmf_error(JSMF_ENOMEM, "%s: out of memory", path);
    } else {
        XXH3_64bits_reset(st);
        size_t got;
        *size = 0;
        while ((got = fread(buf, 1, READ_CHUNK, f)) > 0) {
            XXH3_64bits_update(st, buf, got);
            *size += got;
        }
        if (ferror(f))
            rc = jsmf_error(JSMF_EIO, "%s: read error: %s", path, strerror(errno));
        *hash = XXH3_64bits_digest(st);
    }
    XXH3_freeState(st);
    free(buf);
    fclose(f);
    return rc;
}

/* Append one line "xxh3-64 HEX SIZE PATH" to the growing text *buf. */
static int append_line(char **buf, size_t *len, size_t *cap, uint64_t hash, uint64_t size,
                       const char *path)
{
    size_t need = strlen(path) + 64;
    if (*len + need > *cap) {
        size_t nc = (*cap + need) * 2;
        char *nb = realloc(*buf, nc);
        if (!nb)
            return jsmf_error(JSMF_ENOMEM, "out of memory for a MANIFEST");
        *buf = nb, *cap = nc;
    }
    *len += (size_t)sprintf(*buf + *len, "%s %016" PRIx64 " %" PRIu64 " %s\n", MANIFEST_HASH,
                            hash, size, path);
    return JSMF_OK;
}

static int write_manifest_text(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return jsmf_error(durable_errcode(errno), "%s: cannot create: %s", path, strerror(errno));
    int ok = fwrite(text, 1, len, f) == len, err = ok ? 0 : errno;
    if (fclose(f) && ok)
        ok = 0, err = errno;
    if (!ok)
        return jsmf_error(durable_errcode(err), "%s: write error: %s", path,
                          strerror(err ? err : EIO));
    return durable_sync_path(path);
}

int manifest_write(const char *dir)
{
    path_list files = {0};
    int rc = collect_files(dir, "", &files);
    if (!rc)
        qsort(files.p, files.n, sizeof *files.p, by_path);
    char *text = NULL, path[8192];
    size_t len = 0, cap = 0;
    for (size_t i = 0; i < files.n && !rc; i++) {
        uint64_t hash = 0, size = 0;
        snprintf(path, sizeof path, "%s/%s", dir, files.p[i]);
        if (!(rc = hash_file(path, &hash, &size)))
            rc = append_line(&text, &len, &cap, hash, size, files.p[i]);
    }
    /* The last line checksums the lines above it: a damaged MANIFEST is found out too. */
    if (!rc)
        rc = append_line(&text, &len, &cap, XXH3_64bits(text ? text : "", len), len,
                         MANIFEST_NAME);
    if (!rc) {
        snprintf(path, sizeof path, "%s/%s", dir, MANIFEST_NAME);
        rc = write_manifest_text(path, text, len);
    }
    free(text);
    list_free(&files);
    return rc;
}

/* ------------------------------------------------------------------------------------------
 * Reading
 * ---------------------------------------------------------------------------------------- */

void manifest_free(manifest *mf)
{
    if (mf) {
        free(mf->text);
        free(mf->e);
        free(mf);
    }
}

/* Exactly 16 lowercase hex digits and a space. */
static int parse_hex16(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    for (int i = 0; i < 16; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0)
            return 0;
        v = v << 4 | (uint64_t)d;
    }
    *out = v;
    return s[16] == ' ';
}

/* Decimal digits and a space; returns what follows, NULL when malformed or too large. */
static const char *parse_size(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (UINT64_MAX - 9) / 10)
            return NULL;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    *out = v;
    return p > s && *p == ' ' ? p + 1 : NULL;
}

/* One line (its newline already cut) into `e`; 0 when it is not "xxh3-64 HEX SIZE PATH". */
static int parse_line(char *line, manifest_entry *e)
{
    const char *p;
    if (strncmp(line, MANIFEST_HASH " ", sizeof MANIFEST_HASH) ||
        !parse_hex16(line + sizeof MANIFEST_HASH, &e->hash) ||
        !(p = parse_size(line + MANIFEST_SIZE_AT, &e->size)) || !*p)
        return 0;
    e->path = p;
    return 1;
}

static int damaged(const char *dir, const char *why, size_t line)
{
    if (line)
        return jsmf_error(JSMF_EFORMAT, "%s/%s: damaged: line %zu %s", dir, MANIFEST_NAME, line,
                          why);
    return jsmf_error(JSMF_EFORMAT, "%s/%s: damaged: %s", dir, MANIFEST_NAME, why);
}

/* Cut the text into lines and parse them; the last must checksum the others. */
static int parse_manifest(const char *dir, manifest *mf, size_t size)
{
    char *text = mf->text;
    if (size == 0 || text[size - 1] != '\n')
        return damaged(dir, "it does not end with a complete line", 0);
    if (memchr(text, 0, size))
        return damaged(dir, "it holds a NUL byte", 0);
    size_t lines = 0;
    for (size_t i = 0; i < size; i++)
        lines += text[i] == '\n';
    if (!(mf->e = calloc(lines, sizeof *mf->e)))
        return jsmf_error(JSMF_ENOMEM, "%s/%s: out of memory", dir, MANIFEST_NAME);
    size_t last_at = size - 1; /* where the last line starts: what it checksums ends there */
    while (last_at > 0 && text[last_at - 1] != '\n')
        last_at--;
    uint64_t above = XXH3_64bits(text, last_at); /* before the lines are cut at their ends */
    char *line = text;
    for (size_t i = 0; i < lines; i++) {
        char *nl = strchr(line, '\n');
        *nl = 0;
        if (!parse_line(line, &mf->e[i]))
            return damaged(dir, "is not 'xxh3-64 HEX SIZE PATH'", i + 1);
        if (i + 1 < lines && i > 0 && strcmp(mf->e[i - 1].path, mf->e[i].path) >= 0)
            return damaged(dir, "is out of order (the paths are sorted)", i + 1);
        line = nl + 1;
    }
    const manifest_entry *self = &mf->e[lines - 1];
    if (strcmp(self->path, MANIFEST_NAME) || self->size != last_at || self->hash != above)
        return damaged(dir, "its last line does not checksum the lines above it", 0);
    mf->n = lines - 1;
    return JSMF_OK;
}

int manifest_load(const char *dir, manifest **out)
{
    char path[4096];
    *out = NULL;
    snprintf(path, sizeof path, "%s/%s", dir, MANIFEST_NAME);
    manifest *mf = calloc(1, sizeof *mf);
    if (!mf)
        return jsmf_error(JSMF_ENOMEM, "%s: out of memory", path);
    size_t size;
    int open_err, rc = read_whole(path, &mf->text, &size, &open_err);
    if (rc && open_err == ENOENT) {
        jsmf_error_clear();
        free(mf);
        return JSMF_OK; /* written by a jsmf before manifests: read unchecked */
    }
    if (!rc)
        rc = parse_manifest(dir, mf, size);
    if (rc) {
        manifest_free(mf);
        return rc;
    }
    *out = mf;
    return JSMF_OK;
}

static int by_entry_path(const void *key, const void *e)
{
    return strcmp(key, ((const manifest_entry *)e)->path);
}

static const manifest_entry *find_entry(const manifest *mf, const char *rel)
{
    return mf ? bsearch(rel, mf->e, mf->n, sizeof *mf->e, by_entry_path) : NULL;
}

int manifest_lists(const manifest *mf, const char *rel)
{
    return find_entry(mf, rel) != NULL;
}

void model_file_free(model_file *f)
{
    free(f->data);
    f->data = NULL, f->size = 0;
}

/* The file read matches its line: size first (a truncation says so), then the hash. */
static int check_entry(const char *top, const char *rel, const manifest_entry *e,
                       const model_file *f)
{
    if (f->size != e->size)
        return jsmf_error(JSMF_EFORMAT,
                          "%s/%s: damaged: its size does not match %s/%s (%zu bytes, listed "
                          "%" PRIu64 ")",
                          top, rel, top, MANIFEST_NAME, f->size, e->size);
    uint64_t h = XXH3_64bits(f->data, f->size);
    if (h != e->hash)
        return jsmf_error(JSMF_EFORMAT,
                          "%s/%s: damaged: its checksum does not match %s/%s (xxh3-64 %016" PRIx64
                          ", listed %016" PRIx64 ")",
                          top, rel, top, MANIFEST_NAME, h, e->hash);
    return JSMF_OK;
}

int model_file_read(const manifest *mf, const char *top, const char *rel, model_file *out)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", top, rel);
    out->data = NULL, out->size = 0;
    const manifest_entry *e = find_entry(mf, rel);
    int open_err, rc = read_whole(path, &out->data, &out->size, &open_err);
    if (rc && open_err == ENOENT && e)
        return jsmf_error(JSMF_EFORMAT, "%s: damaged: missing, but %s/%s lists it", path, top,
                          MANIFEST_NAME);
    if (rc)
        return rc;
    if (mf && !e)
        rc = jsmf_error(JSMF_EFORMAT, "%s: not in %s/%s (added after the model was written?)",
                        path, top, MANIFEST_NAME);
    else if (e)
        rc = check_entry(top, rel, e, out);
    if (rc)
        model_file_free(out);
    return rc;
}
