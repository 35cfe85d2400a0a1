/* fuzz_text.c — libFuzzer target: the document reader with format sniffing (text, and UCI or
 * LDA-C when the input looks like one) over a plain or zstd-compressed file, checked and resumed
 * by fuzz_docs.h. The last input byte picks the tokenizer and the longest line accepted. */
#include <omp.h>

#include "fuzz_docs.h"

static fuzz_file input, vocab;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    omp_set_num_threads(1); /* zstd decoded inline: fuzz_stream.c covers the decoder thread */
    static const char words[] = "alpha\nbeta\ngamma\ndelta\n";
    fuzz_file_set(&vocab, words, sizeof words - 1); /* for input sniffed as UCI (W = 4) */
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_file_set(&input, data, size);
    unsigned knob = size ? data[size - 1] : 0;
    jsmf_read_opts o = JSMF_READ_OPTS_DEFAULT;
    o.tok.min_len = knob & 3;          /* 0..3; with max_len 0 a zero min_len means defaults */
    o.tok.max_len = (knob >> 2) & 7;   /* 0 = no limit */
    o.max_line = knob & 0x80 ? 64 : 0; /* short lines hit the line limit */
    o.uci_vocab = vocab.path;
    int zstd = size >= 4 && data[0] == 0x28 && data[1] == 0xB5 && data[2] == 0x2F && data[3] == 0xFD;
    fuzz_docs_run(input.path, &o, zstd ? 0 : size, knob);
    return 0;
}
