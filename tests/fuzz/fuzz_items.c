/* fuzz_items.c — libFuzzer target: the item reader (--format items: one basket of ids between
 * blanks per line), checked and resumed by fuzz_docs.h: every id kept byte for byte from its
 * line, at most JSMF_ITEM_MAX_BYTES, UTF-8, without a blank. The first byte picks the longest
 * line accepted. */
#include <omp.h>

#include "fuzz_docs.h"

static fuzz_file input;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    omp_set_num_threads(1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    unsigned knob = data[0];
    data++, size--;
    fuzz_file_set(&input, data, size);
    jsmf_read_opts o = JSMF_READ_OPTS_DEFAULT;
    o.format = JSMF_FORMAT_ITEMS;
    o.max_line = knob & 0x80 ? 64 : 0; /* short lines hit the line limit */
    o.raw_text = knob & 1;             /* text's alone: items are split all the same */
    int zstd = size >= 4 && data[0] == 0x28 && data[1] == 0xB5 && data[2] == 0x2F && data[3] == 0xFD;
    fuzz_docs_run(input.path, &o, zstd ? 0 : size, knob);
    return 0;
}
