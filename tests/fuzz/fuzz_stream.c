/* fuzz_stream.c — libFuzzer target: the byte stream under every reader (src/io/stream.c):
 * zstd detected by its magic number and decoded on the decoder thread, or a plain file, read
 * line by line. Lines hold no LF and follow each other, and the fingerprint of what was read
 * is that of the file. */
#include <omp.h>
#include <string.h>

#include "fuzz_util.h"
#include "io/stream.h"
#include "io/hash.h"

#define FUZZ_DECODED_MAX (1u << 20)

static fuzz_file input;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    omp_set_num_threads(2); /* a zstd file is decoded on a thread of its own */
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_file_set(&input, data, size);
    io_stream *s;
    uint64_t max_line = size && (data[size - 1] & 1) ? 64 : 0;
    if (io_stream_open(input.path, max_line, 0, &s)) /* 0: as before the parameter existed */
        return 0;
    const unsigned char *line;
    size_t len;
    uint64_t off, next = 0;
    int rc;
    while ((rc = io_stream_line(s, &line, &len, &off)) == 1) {
        FUZZ_CHECK(off == next && !memchr(line, '\n', len));
        FUZZ_CHECK(!max_line || len <= max_line);
        next = io_stream_offset(s);
        FUZZ_CHECK(next > off && next - off >= len);
        /* a few bytes of zstd RLE blocks decode to megabytes of empty lines: reading them all
         * is linear and right, but would make every such input a fuzzer timeout */
        if (next > FUZZ_DECODED_MAX)
            break;
    }
    if (rc == 0) {
        uint64_t h1, n1, h2, n2;
        FUZZ_CHECK(io_stream_fingerprint(s, &h1, &n1) == 0);
        FUZZ_CHECK(fingerprint_file(input.path, &h2, &n2) == 0);
        FUZZ_CHECK(h1 == h2 && n1 == n2 && n1 == size);
    }
    io_stream_close(s);
    return 0;
}
