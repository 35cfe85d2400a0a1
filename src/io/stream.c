/* stream.c — byte streams for the parsers: regular files are memory-mapped, zstd input (found by
 * its magic number) is decoded in fixed-size chunks, pipes are read in chunks. Memory stays
 * bounded by the chunk size and the longest line, never by the size of the input. */
#include "io/stream.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>
#include <omp.h>
#include <stdio.h>

#include "jsmf.h"
#include "jsmf_io.h"
#include "core/zstd_sniff.h"
#include "hash.h"


static int read_error(io_stream *s)
{
    return jsmf_error(JSMF_EIO, "%s: read error at byte %" PRIu64 ": %s", s->name, s->raw_read,
                      strerror(errno));
}

/* read() until `n` bytes or end of file; returns bytes read or -1. */
static ssize_t read_full(int fd, unsigned char *p, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, p + got, n - got);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

/* One read(), retried on EINTR: a pipe hands over what it has without waiting for more. */
static ssize_t read_some(int fd, unsigned char *p, size_t n)
{
    for (;;) {
        ssize_t r = read(fd, p, n);
        if (r >= 0 || errno != EINTR)
            return r;
    }
}

static int start_decoder(io_stream *s);
static void stop_decoder(io_stream *s);

static int open_mmap(io_stream *s)
{
    static const unsigned char nothing[1];
    s->kind = IO_MMAP;
    s->eof = 1;
    s->data = nothing; /* an empty file cannot be mapped; never unmapped since len stays 0 */
    if (s->disk_size == 0)
        return JSMF_OK;
    if (s->disk_size > SIZE_MAX)
        return jsmf_error(JSMF_EINVAL, "%s: file too large to map", s->name);
    void *m = mmap(NULL, (size_t)s->disk_size, PROT_READ, MAP_SHARED, s->fd, 0);
    if (m == MAP_FAILED)
        return jsmf_error(JSMF_EIO, "%s: cannot map: %s", s->name, strerror(errno));
    madvise(m, (size_t)s->disk_size, MADV_SEQUENTIAL);
    s->data = m;
    s->len = (size_t)s->disk_size;
    return JSMF_OK;
}

/* Buffered stream: `head` holds the first bytes already read from fd (for sniffing magic). */
static int open_buffered(io_stream *s, const unsigned char *head, size_t nhead)
{
    s->cap = IO_CHUNK;
    s->buf = malloc(s->cap);
    if (!s->buf)
        return jsmf_error(JSMF_ENOMEM, "%s: out of memory for the read buffer", s->name);
    s->data = s->buf;
    if (zstd_sniff(head, nhead)) {
        s->kind = IO_ZSTD;
        s->dctx = ZSTD_createDCtx();
        s->zin_cap = ZSTD_DStreamInSize();
        if (s->zin_cap < nhead)
            s->zin_cap = nhead;
        s->zin = malloc(s->zin_cap);
        if (!s->dctx || !s->zin)
            return jsmf_error(JSMF_ENOMEM, "%s: out of memory for the zstd decoder", s->name);
        memcpy(s->zin, head, nhead);
        s->zin_len = nhead;
    } else {
        s->kind = IO_PLAIN;
        memcpy(s->buf, head, nhead);
        s->len = nhead;
    }
    return JSMF_OK;
}

int io_stream_open(const char *path, uint64_t max_line, int threads, io_stream **out)
{
    *out = NULL;
    io_stream *s = calloc(1, sizeof *s);
    if (!s)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    int is_stdin = !strcmp(path, "-");
    s->name = strdup(is_stdin ? "<stdin>" : path);
    s->max_line = max_line ? max_line : IO_DEFAULT_MAX_LINE;
    s->line = 1;
    s->zret = 0;
    hash_init(&s->rawhash);
    int rc = JSMF_OK;
    if (!s->name) {
        rc = jsmf_error(JSMF_ENOMEM, "out of memory");
        goto fail;
    }
    if (is_stdin) {
        s->fd = STDIN_FILENO;
        if (isatty(s->fd)) {
            rc = jsmf_error(JSMF_EINVAL, "<stdin>: refusing to read a terminal; pipe a corpus in "
                                         "or name a file");
            goto fail;
        }
    } else {
        s->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (s->fd < 0) {
            rc = jsmf_error(errno == ENOENT ? JSMF_ENOTFOUND : JSMF_EIO, "%s: cannot open: %s",
                            path, strerror(errno));
            goto fail;
        }
        s->own_fd = 1;
    }
    struct stat st;
    if (fstat(s->fd, &st) < 0) {
        rc = jsmf_error(JSMF_EIO, "%s: cannot stat: %s", s->name, strerror(errno));
        goto fail;
    }
    if (S_ISDIR(st.st_mode)) {
        rc = jsmf_error(JSMF_EINVAL, "%s: is a directory", s->name);
        goto fail;
    }
    unsigned char head[4];
    ssize_t nhead;
    /* stdin redirected from a file part-way through is read as a pipe, from where it stands */
    if (S_ISREG(st.st_mode) && (!is_stdin || lseek(s->fd, 0, SEEK_CUR) == 0)) {
        s->disk_size = (uint64_t)st.st_size;
        nhead = pread(s->fd, head, sizeof head, 0);
        if (nhead < 0) {
            rc = read_error(s);
            goto fail;
        }
        if (!zstd_sniff(head, (size_t)nhead)) {
            rc = open_mmap(s);
            if (rc)
                goto fail;
            *out = s;
            return JSMF_OK;
        }
    }
    nhead = read_full(s->fd, head, sizeof head);
    if (nhead < 0) {
        rc = read_error(s);
        goto fail;
    }
    s->raw_read = (uint64_t)nhead;
    hash_update(&s->rawhash, head, (size_t)nhead);
    if ((size_t)nhead < sizeof head)
        s->in_eof = 1;
    rc = open_buffered(s, head, (size_t)nhead);
    if (rc)
        goto fail;
    if (threads <= 0)
        threads = omp_get_max_threads();
    if (s->kind == IO_ZSTD && S_ISREG(st.st_mode) && threads > 1 &&
        (rc = start_decoder(s)))
        goto fail;
    if (s->kind == IO_PLAIN && s->in_eof)
        s->eof = 1;
    *out = s;
    return JSMF_OK;
fail:
    io_stream_close(s);
    return rc;
}

void io_stream_close(io_stream *s)
{
    if (!s)
        return;
    stop_decoder(s);
    if (s->kind == IO_MMAP && s->len)
        munmap((void *)s->data, s->len);
    if (s->own_fd)
        close(s->fd);
    free(s->buf);
    free(s->zin);
    ZSTD_freeDCtx(s->dctx);
    free(s->name);
    free(s);
}

uint64_t io_stream_disk_position(const io_stream *s)
{
    if (s->kind != IO_ZSTD)
        return s->base + s->pos;
    return __atomic_load_n(&s->disk_pos, __ATOMIC_RELAXED);
}

/* Decode zstd into dst[*len..cap), advancing *len. Runs on the decoder thread when there is one
 * (it then owns every z* field). Returns bytes produced (0 = end of input) or an error. */
static long long zstd_decode(io_stream *s, unsigned char *dst, size_t cap, size_t *len)
{
    ZSTD_outBuffer out = {dst, cap, *len};
    size_t start = *len;
    while (out.pos < out.size) {
        if (s->zin_pos == s->zin_len && !s->in_eof) {
            if (out.pos > start)
                break; /* hand over what is decoded rather than wait on a slow pipe */
            ssize_t r = read_some(s->fd, s->zin, s->zin_cap);
            if (r < 0)
                return read_error(s);
            s->zin_base += s->zin_len;
            s->zin_len = (size_t)r;
            s->zin_pos = 0;
            s->raw_read += (uint64_t)r;
            hash_update(&s->rawhash, s->zin, (size_t)r);
            if (r == 0)
                s->in_eof = 1;
        }
        size_t before = out.pos, in_before = s->zin_pos;
        ZSTD_inBuffer in = {s->zin, s->zin_len, s->zin_pos};
        size_t ret = ZSTD_decompressStream(s->dctx, &out, &in);
        s->zin_pos = in.pos;
        uint64_t decoded = s->decoded + (out.pos - start);
        if (ZSTD_isError(ret))
            return jsmf_error(JSMF_EFORMAT,
                              "%s: corrupt zstd data near compressed byte %" PRIu64
                              " (decoded byte %" PRIu64 "): %s",
                              s->name, s->zin_base + s->zin_pos, decoded, ZSTD_getErrorName(ret));
        if (out.pos != before || s->zin_pos != in_before)
            s->zret = ret; /* an idle call after a frame's end would report the next header */
        if (s->in_eof && s->zin_pos == s->zin_len && out.pos == before) {
            if (s->zret != 0)
                return jsmf_error(JSMF_EFORMAT,
                                  "%s: truncated zstd frame: input ends at compressed byte %" PRIu64
                                  " (decoded byte %" PRIu64 ") inside a frame",
                                  s->name, s->zin_base + s->zin_len, decoded);
            break;
        }
    }
    s->decoded += out.pos - start;
    *len = out.pos;
    __atomic_store_n(&s->disk_pos, s->zin_base + s->zin_pos, __ATOMIC_RELAXED);
    return (long long)(out.pos - start);
}

/* ---- the decoder thread: zstd decoding overlaps parsing, through a ring of IO_NCHUNK chunks
 * (memory stays bounded). Errors travel in order, after the chunks decoded before them. ---- */

static void *decoder_main(void *arg)
{
    io_stream *s = arg;
    for (;;) {
        pthread_mutex_lock(&s->mu);
        while (s->tail - s->head == IO_NCHUNK && !s->stop)
            pthread_cond_wait(&s->cv, &s->mu);
        int stop = s->stop;
        unsigned slot = s->tail % IO_NCHUNK;
        pthread_mutex_unlock(&s->mu);
        if (stop)
            break;
        size_t len = 0;
        long long got;
        do /* a partial chunk is fine, an empty one only at the end */
            got = zstd_decode(s, s->chunk[slot], IO_DECODE_CHUNK, &len);
        while (got > 0 && len < IO_DECODE_CHUNK / 2);
        pthread_mutex_lock(&s->mu);
        if (got < 0) {
            s->prod_rc = (int)got;
            snprintf(s->prod_msg, sizeof s->prod_msg, "%s", jsmf_errmsg_for((int)got));
        }
        if (len > 0) {
            s->chunk_len[slot] = len;
            s->tail++;
        }
        if (got <= 0)
            s->prod_done = 1;
        pthread_cond_broadcast(&s->cv);
        int done = s->prod_done;
        pthread_mutex_unlock(&s->mu);
        if (done)
            break;
    }
    return NULL;
}

static int start_decoder(io_stream *s)
{
    for (int i = 0; i < IO_NCHUNK; i++) {
        s->chunk[i] = malloc(IO_DECODE_CHUNK);
        if (!s->chunk[i])
            return jsmf_error(JSMF_ENOMEM, "%s: out of memory for the decoder", s->name);
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->sync_init = 1;
    if (pthread_create(&s->thread, NULL, decoder_main, s) != 0)
        return JSMF_OK; /* no thread: decode inline */
    s->threaded = 1;
    return JSMF_OK;
}

static void stop_decoder(io_stream *s)
{
    if (s->threaded) {
        pthread_mutex_lock(&s->mu);
        s->stop = 1;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->thread, NULL);
    }
    if (s->sync_init) {
        pthread_mutex_destroy(&s->mu);
        pthread_cond_destroy(&s->cv);
    }
    for (int i = 0; i < IO_NCHUNK; i++)
        free(s->chunk[i]);
}

/* Take decoded bytes from the ring into buf[len..cap). */
static long long take_chunk(io_stream *s)
{
    pthread_mutex_lock(&s->mu);
    while (s->head == s->tail && !s->prod_done)
        pthread_cond_wait(&s->cv, &s->mu);
    if (s->head == s->tail) {
        int rc = s->prod_rc;
        pthread_mutex_unlock(&s->mu);
        return rc ? jsmf_error(rc, "%s", s->prod_msg) : 0;
    }
    unsigned slot = s->head % IO_NCHUNK;
    size_t avail = s->chunk_len[slot] - s->chunk_off;
    pthread_mutex_unlock(&s->mu);
    size_t n = avail < s->cap - s->len ? avail : s->cap - s->len;
    memcpy(s->buf + s->len, s->chunk[slot] + s->chunk_off, n);
    s->len += n;
    s->chunk_off += n;
    if (n == avail) {
        pthread_mutex_lock(&s->mu);
        s->head++;
        s->chunk_off = 0;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
    }
    return (long long)n;
}

int io_stream_fingerprint(io_stream *s, uint64_t *hash, uint64_t *size)
{
    if (s->kind == IO_MMAP) {
        jsmf_hash h;
        hash_init(&h);
        for (size_t at = 0; at < s->len; at += IO_RELEASE) { /* keep the resident size flat */
            size_t n = s->len - at < IO_RELEASE ? s->len - at : IO_RELEASE;
            hash_update(&h, s->data + at, n);
            if (at + n <= s->released || at + n < s->pos)
                madvise((void *)(s->data + at), n, MADV_DONTNEED);
        }
        *hash = hash_final(&h);
        *size = s->len;
        return JSMF_OK;
    }
    int done;
    if (s->threaded) {
        pthread_mutex_lock(&s->mu);
        done = s->prod_done && !s->prod_rc;
        pthread_mutex_unlock(&s->mu); /* the decoder has stopped touching rawhash */
    } else {
        done = s->in_eof;
    }
    if (!done)
        return jsmf_error(JSMF_EINVAL, "%s: fingerprint asked for before the end of the input",
                          s->name);
    *hash = hash_final(&s->rawhash);
    *size = s->raw_read;
    return JSMF_OK;
}

static long long fill_zstd(io_stream *s)
{
    if (s->threaded)
        return take_chunk(s);
    return zstd_decode(s, s->buf, s->cap, &s->len);
}

static long long fill_plain(io_stream *s)
{
    if (s->in_eof)
        return 0;
    ssize_t r = read_some(s->fd, s->buf + s->len, s->cap - s->len);
    if (r < 0)
        return read_error(s);
    s->raw_read += (uint64_t)r;
    hash_update(&s->rawhash, s->buf + s->len, (size_t)r);
    s->len += (size_t)r;
    if (r == 0)
        s->in_eof = 1;
    return r;
}

/* Drop consumed bytes, grow the window if it is full, and decode/read more. Returns bytes added
 * (0 at the end of input: s->eof is then set) or an error. */
static long long refill(io_stream *s)
{
    if (s->eof)
        return 0;
    if (s->pos > 0) {
        memmove(s->buf, s->buf + s->pos, s->len - s->pos);
        s->base += s->pos;
        s->len -= s->pos;
        s->pos = 0;
    }
    if (s->len == s->cap) {
        size_t limit = (size_t)(s->max_line + 2 > SIZE_MAX / 2 ? SIZE_MAX / 2 : s->max_line + 2);
        size_t nc = s->cap * 2 < limit ? s->cap * 2 : limit;
        if (nc <= s->cap)
            nc = s->cap + 4096; /* callers stop at max_line; this is a safety margin */
        unsigned char *nb = realloc(s->buf, nc);
        if (!nb)
            return jsmf_error(JSMF_ENOMEM, "%s: out of memory growing the line buffer to %zu bytes",
                              s->name, nc);
        s->buf = nb;
        s->data = nb;
        s->cap = nc;
    }
    long long got = s->kind == IO_ZSTD ? fill_zstd(s) : fill_plain(s);
    if (got == 0)
        s->eof = 1;
    return got;
}

long long io_stream_peek(io_stream *s, size_t want, const unsigned char **p)
{
    while (s->len - s->pos < want && !s->eof) {
        long long r = refill(s);
        if (r < 0)
            return r;
    }
    *p = s->data + s->pos;
    return (long long)(s->len - s->pos);
}

int io_stream_seek(io_stream *s, uint64_t off)
{
    uint64_t cur = io_stream_offset(s);
    if (off < cur)
        return jsmf_error(JSMF_EINVAL, "%s: cannot seek back to byte %" PRIu64, s->name, off);
    for (;;) {
        if (off <= s->base + s->len) {
            s->pos = (size_t)(off - s->base);
            return JSMF_OK;
        }
        if (s->eof)
            return jsmf_error(JSMF_EINVAL,
                              "%s: resume offset %" PRIu64 " is past the end of the input (%" PRIu64
                              " bytes)", s->name, off, s->base + s->len);
        s->pos = s->len; /* discard everything decoded so far */
        long long r = refill(s);
        if (r < 0)
            return (int)r;
    }
}

/* Drop the page mappings of what has been parsed (whole IO_RELEASE blocks before the current
 * line). Mapped pages count in the resident size until the kernel reclaims them; dropping them
 * keeps RSS flat over a file of any size. The pages stay in the page cache, and touching the
 * range again simply maps them back. */
static void release_behind(io_stream *s)
{
    size_t upto = s->pos / IO_RELEASE * IO_RELEASE;
    if (upto > s->released) {
        madvise((void *)(s->data + s->released), upto - s->released, MADV_DONTNEED);
        s->released = upto;
    }
}

static int line_too_long(io_stream *s)
{
    return jsmf_error(JSMF_EFORMAT,
                      "%s:%" PRIu64 ": line starting at byte %" PRIu64
                      " is longer than the limit of %" PRIu64 " bytes",
                      s->name, s->line, io_stream_offset(s), s->max_line);
}

int io_stream_line(io_stream *s, const unsigned char **line, size_t *len, uint64_t *off)
{
    size_t scanned = s->pos; /* bytes before this index hold no LF */
    const unsigned char *nl;
    for (;;) {
        nl = memchr(s->data + scanned, '\n', s->len - scanned);
        if (nl)
            break;
        if (s->len - s->pos > s->max_line)
            return line_too_long(s);
        if (s->eof)
            break;
        size_t done = s->len - s->pos;
        long long r = refill(s);
        if (r < 0)
            return (int)r;
        scanned = s->pos + done;
    }
    const unsigned char *start = s->data + s->pos;
    size_t n = nl ? (size_t)(nl - start) : s->len - s->pos;
    if (!nl && n == 0)
        return 0;
    if (n > s->max_line)
        return line_too_long(s);
    if (s->reject_nul) {
        const unsigned char *z = memchr(start, 0, n);
        if (z)
            return jsmf_error(JSMF_EFORMAT, "%s:%" PRIu64 ": binary data (NUL byte) at byte %" PRIu64,
                              s->name, s->line, io_stream_offset(s) + (uint64_t)(z - start));
    }
    *off = io_stream_offset(s);
    *line = start;
    if (s->kind == IO_MMAP && s->pos - s->released >= IO_RELEASE)
        release_behind(s);
    s->pos += n + (nl != NULL);
    s->line++;
    if (n > 0 && start[n - 1] == '\r')
        n--;
    *len = n;
    return 1;
}
