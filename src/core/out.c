/* out.c — files written for the user (vocabulary, report, export): whole or not at all, and
 * every failure named by the path the user gave, with the system's reason; a whole file read;
 * a line of a report. */
#define _GNU_SOURCE /* realpath, fopencookie */
#include "jsmf.h"
#include "core/durable.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "out.h"

enum { OUT_STDOUT, OUT_DIRECT, OUT_REPLACE };

struct jsmf_out {
    FILE *f;
    int how;
    int fd;       /* OUT_DIRECT, OUT_REPLACE: the file under f */
    int err;      /* the errno of the first write that failed */
    char *path;   /* as the user gave it: every message names this */
    char *target; /* OUT_REPLACE: the file renamed over (a symlink's target, else path) */
    char *tmp;    /* OUT_REPLACE: the temporary beside it */
};

static void out_free(jsmf_out *o)
{
    free(o->path);
    free(o->target);
    free(o->tmp);
    free(o);
}

/* stdio does not keep the reason a write failed (a large fwrite bypasses its buffer, so a
 * later flush may even succeed), so writes go through this and the first errno is kept. */
static ssize_t cookie_write(void *cookie, const char *buf, size_t len)
{
    jsmf_out *o = cookie;
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(o->fd, buf + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (!o->err)
                o->err = w < 0 ? errno : EIO;
            errno = o->err;
            return 0; /* stdio's "error" for a cookie */
        }
        done += (size_t)w;
    }
    return (ssize_t)done;
}

static int cookie_close(void *cookie)
{
    jsmf_out *o = cookie;
    int rc = close(o->fd);
    if (rc && !o->err)
        o->err = errno;
    o->fd = -1;
    return rc;
}

/* A stream over `fd` that remembers why a write failed; the stream owns fd. */
static int stream_on(jsmf_out *o, int fd)
{
    cookie_io_functions_t io = {.write = cookie_write, .close = cookie_close};
    o->fd = fd;
    if (!(o->f = fopencookie(o, "w", io))) {
        int err = errno;
        close(fd);
        o->fd = -1;
        return -err;
    }
    setvbuf(o->f, NULL, _IOFBF, (size_t)1 << 16);
    return 0;
}

/* A temporary "TARGET.tmp-PID-N" beside the target, created exclusively (mode 0666 less the
 * umask, or the mode of the file it will replace). */
static int open_temporary(jsmf_out *o, const struct stat *old)
{
    size_t len = strlen(o->target) + 48;
    if (!(o->tmp = malloc(len)))
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    for (int n = 0;; n++) {
        snprintf(o->tmp, len, "%s.tmp-%ld-%d", o->target, (long)getpid(), n);
        int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno == EEXIST && n < 100)
            continue;
        if (fd < 0)
            return -errno;
        if (old)
            (void)fchmod(fd, old->st_mode & 07777);
        int rc = stream_on(o, fd);
        if (rc)
            unlink(o->tmp);
        return rc;
    }
}

int out_open(const char *path, jsmf_out **out)
{
    *out = NULL;
    jsmf_out *o = calloc(1, sizeof *o);
    if (!o || !(o->path = strdup(path))) {
        free(o);
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    }
    if (!strcmp(path, "-")) {
        o->how = OUT_STDOUT, o->f = stdout;
        *out = o;
        return JSMF_OK;
    }
    struct stat st, lst;
    int exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) {
        out_free(o);
        return jsmf_error(JSMF_EINVAL, "%s: is a directory", path);
    }
    if (exists && !S_ISREG(st.st_mode)) {
        /* a device or a pipe (/dev/null, /dev/stdout, a FIFO) is written in place, never
         * replaced or removed */
        o->how = OUT_DIRECT;
        int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
        int err = fd < 0 ? errno : -stream_on(o, fd);
        if (err) {
            out_free(o);
            return jsmf_error(durable_errcode(err), "%s: cannot open for writing: %s", path,
                              strerror(err));
        }
        *out = o;
        return JSMF_OK;
    }
    /* a symlink to a file: replace the file it points to, keep the link */
    int link = lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode);
    o->how = OUT_REPLACE;
    o->target = link && exists ? realpath(path, NULL) : strdup(path);
    if (!o->target) {
        out_free(o);
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    }
    int err = -open_temporary(o, exists ? &st : NULL);
    if (err && exists && access(path, W_OK) == 0 && (err == EACCES || err == EPERM)) {
        /* a writable file in a directory we may not create in: overwrite it where it is */
        o->how = OUT_DIRECT;
        int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
        err = fd < 0 ? errno : -stream_on(o, fd);
    }
    if (err) {
        out_free(o);
        return jsmf_error(durable_errcode(err), "%s: cannot create: %s", path, strerror(err));
    }
    *out = o;
    return JSMF_OK;
}

FILE *out_file(jsmf_out *o) { return o->f; }

int out_close(jsmf_out *o, int rc)
{
    if (!o)
        return rc;
    /* the reason is the first failed write's (kept by cookie_write); for stdout, stdio keeps
     * what it could not write, so the flush fails again and leaves it in errno */
    int err = 0;
    errno = 0;
    if (fflush(o->f) != 0 || ferror(o->f))
        err = o->err ? o->err : errno ? errno : EIO;
    if (o->how == OUT_REPLACE && !err && !rc && fsync(o->fd) != 0)
        err = errno;
    if (o->how != OUT_STDOUT && fclose(o->f) != 0 && !err)
        err = o->err ? o->err : errno ? errno : EIO;
    if (err) /* the caller's own message, if any, could only say that writing failed */
        rc = jsmf_error(durable_errcode(err), "%s: write error: %s",
                        o->how == OUT_STDOUT ? "standard output" : o->path, strerror(err));
    if (o->how == OUT_REPLACE) {
        if (!rc && rename(o->tmp, o->target) != 0) {
            err = errno;
            rc = jsmf_error(durable_errcode(err), "%s: cannot rename the new file into place: %s",
                            o->path, strerror(err));
        }
        if (rc)
            unlink(o->tmp);
    }
    out_free(o);
    return rc;
}

void report_line(FILE *f, const char *prefix, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (prefix)
        fprintf(f, "%s: ", prefix);
    vfprintf(f, fmt, ap);
    fputc('\n', f);
    va_end(ap);
}

int jsmf_file_load(const char *path, char **text)
{
    *text = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return jsmf_error(errno == ENOENT ? JSMF_ENOTFOUND : JSMF_EIO, "%s: cannot open: %s", path,
                          strerror(errno));
    char *buf = NULL;
    size_t len = 0, cap = 0, got = 1;
    while (got) {
        if (len + 4096 + 1 > cap) {
            char *nb = realloc(buf, cap = cap ? cap * 2 : 65536);
            if (!nb) {
                free(buf);
                fclose(f);
                return jsmf_error(JSMF_ENOMEM, "%s: out of memory", path);
            }
            buf = nb;
        }
        got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return jsmf_error(JSMF_EIO, "%s: read error: %s", path, strerror(errno));
    }
    buf[len] = 0;
    *text = buf;
    return JSMF_OK;
}
