/* stream.h — internal: a decoded byte stream read line by line (mmap for regular files, zstd
 * decoded in fixed-size chunks, plain pipes read in chunks), tracking decoded offsets and lines. */
#ifndef JSMF_IO_STREAM_H
#define JSMF_IO_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include <pthread.h>
#include <zstd.h>

#include "jsmf_io.h"
#include "hash.h"

#define IO_DEFAULT_MAX_LINE ((uint64_t)256 << 20)
#define IO_CHUNK ((size_t)1 << 20) /* decoded window to start with; grows only for long lines */
#define IO_NCHUNK 2                /* decoder thread: chunks decoded ahead of the parser */
#define IO_DECODE_CHUNK ((size_t)4 << 20) /* ... of this size: few hand-overs between threads */
#define IO_RELEASE ((size_t)4 << 20) /* mmap: unmap parsed pages in blocks of this size */
_Static_assert(IO_NCHUNK * IO_DECODE_CHUNK + IO_CHUNK + IO_RELEASE + ((size_t)8 << 20) <=
                   JSMF_IO_READER_BYTES, "jsmf_io.h: JSMF_IO_READER_BYTES is too small");

enum io_kind { IO_MMAP, IO_PLAIN, IO_ZSTD };

typedef struct io_stream {
    char *name;                /* path, or "<stdin>" — used in every message */
    int fd, own_fd;
    enum io_kind kind;
    uint64_t disk_size;        /* st_size of a regular file, else 0 */

    /* The decoded window: data[0..len) holds decoded bytes base..base+len; pos is the next
     * unread byte. For mmap the window is the whole file. */
    const unsigned char *data;
    size_t len, pos;
    uint64_t base;
    int eof;                   /* nothing follows data[len) */
    uint64_t line;             /* 1-based line number of the byte at pos */
    uint64_t max_line;         /* longest accepted line in bytes (without its LF) */
    int reject_nul;            /* a NUL byte in a line is "binary data" */

    size_t released;           /* mmap: data[0..released) has been given back (MADV_DONTNEED) */
    unsigned char *buf;        /* owned window for IO_PLAIN / IO_ZSTD */
    size_t cap;

    /* zstd: compressed input chunk and where it sits in the file */
    ZSTD_DCtx *dctx;
    unsigned char *zin;
    size_t zin_cap, zin_pos, zin_len;
    uint64_t zin_base;         /* compressed offset of zin[0] */
    size_t zret;               /* last ZSTD_decompressStream result: 0 = at a frame boundary */
    int in_eof;                /* the raw input is exhausted */
    uint64_t raw_read;         /* raw bytes read from fd so far (messages, fingerprint) */
    jsmf_hash rawhash;         /* of the raw bytes read so far (not for mmap: hashed at the end) */
    uint64_t decoded;          /* decoded bytes produced so far (messages) */
    uint64_t disk_pos;         /* compressed bytes consumed (progress; atomic) */

    /* zstd regular files with more than one thread allowed: a decoder thread fills a ring of
     * chunks; the fields above starting at dctx then belong to it. */
    int threaded, sync_init, stop, prod_done, prod_rc;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned char *chunk[IO_NCHUNK];
    size_t chunk_len[IO_NCHUNK], chunk_off;
    unsigned head, tail;       /* chunks taken / filled (mod IO_NCHUNK) */
    char prod_msg[1024];
} io_stream;

/* Open `path` ("-" = stdin; a terminal is refused). Detects zstd by its magic number
 * (0xFD2FB528, or a skippable frame 0x184D2A5?) and never by name. A zstd file is decoded on a
 * thread of its own when `threads` (0: omp_get_max_threads()) is above 1. */
int io_stream_open(const char *path, uint64_t max_line, int threads, io_stream **out);
void io_stream_close(io_stream *s);

/* Make at least `want` bytes available from pos (fewer only at end of input); returns the
 * number available, or a negative JSMF_E* code. */
long long io_stream_peek(io_stream *s, size_t want, const unsigned char **p);

/* Next line without its LF (a trailing CR is dropped). Returns 1 and sets *line, *len and *off
 * (decoded offset of the line start), 0 at end of input, or a negative JSMF_E* code (line
 * over max_line, NUL byte with reject_nul, read or decode error). */
int io_stream_line(io_stream *s, const unsigned char **line, size_t *len, uint64_t *off);

/* Skip forward to decoded offset `off` (>= current position); JSMF_EINVAL past the end. */
int io_stream_seek(io_stream *s, uint64_t off);

static inline uint64_t io_stream_offset(const io_stream *s) { return s->base + s->pos; }

/* Fingerprint of the input as stored (fingerprint_file's value) once it has been read to
 * its end; JSMF_EINVAL before. */
int io_stream_fingerprint(io_stream *s, uint64_t *hash, uint64_t *size);

/* Bytes of the file consumed so far as stored on disk (compressed bytes for zstd). */
uint64_t io_stream_disk_position(const io_stream *s);

#endif
