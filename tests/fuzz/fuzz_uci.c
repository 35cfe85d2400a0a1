/* fuzz_uci.c — libFuzzer target: the UCI bag-of-words reader ("D, W, NNZ, then docID wordID
 * count" lines), checked and resumed by fuzz_docs.h. The input is the docword file; a part
 * before a NUL byte, when there is one, is its vocabulary file (else four words). */
#include <string.h>

#include "fuzz_docs.h"

static fuzz_file input, vocab;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char words[] = "alpha\nbeta\ngamma\ndelta\n";
    const uint8_t *nul = memchr(data, 0, size);
    if (nul) {
        fuzz_file_set(&vocab, data, (size_t)(nul - data));
        size -= (size_t)(nul + 1 - data), data = nul + 1;
    } else {
        fuzz_file_set(&vocab, words, sizeof words - 1);
    }
    fuzz_file_set(&input, data, size);
    jsmf_read_opts o = JSMF_READ_OPTS_DEFAULT;
    o.format = JSMF_FORMAT_UCI;
    o.uci_vocab = vocab.path;
    fuzz_docs_run(input.path, &o, size, size);
    return 0;
}
