/* fuzz_ldac.c — libFuzzer target: the LDA-C reader ("N id:count ..." per line), checked and
 * resumed by fuzz_docs.h. The first byte picks the id bound: none, a vocabulary of four words,
 * or a bound of 1..63. */
#include "fuzz_docs.h"

static fuzz_file input, vocab;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    static const char words[] = "alpha\nbeta\ngamma\ndelta\n";
    fuzz_file_set(&vocab, words, sizeof words - 1);
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
    o.format = JSMF_FORMAT_LDAC;
    if (knob & 0x40)
        o.uci_vocab = vocab.path;
    else
        o.ldac_vocab_size = knob & 0x3f;
    fuzz_docs_run(input.path, &o, size, knob);
    return 0;
}
