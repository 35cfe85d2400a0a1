/* tokenize.c — the text tokenizer: maximal runs of ASCII letters (lowercased) and bytes >= 0x80
 * (UTF-8 words stay whole), everything else separates; one table lookup per byte. */
#include "jsmf_io.h"

/* Byte -> its lowercase token byte, or 0 for a separator (NUL included). */
static const unsigned char token_byte[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111,
    112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 0, 0, 0, 0, 0,
    0, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111,
    112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 0, 0, 0, 0, 0,
    128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 140, 141, 142, 143,
    144, 145, 146, 147, 148, 149, 150, 151, 152, 153, 154, 155, 156, 157, 158, 159,
    160, 161, 162, 163, 164, 165, 166, 167, 168, 169, 170, 171, 172, 173, 174, 175,
    176, 177, 178, 179, 180, 181, 182, 183, 184, 185, 186, 187, 188, 189, 190, 191,
    192, 193, 194, 195, 196, 197, 198, 199, 200, 201, 202, 203, 204, 205, 206, 207,
    208, 209, 210, 211, 212, 213, 214, 215, 216, 217, 218, 219, 220, 221, 222, 223,
    224, 225, 226, 227, 228, 229, 230, 231, 232, 233, 234, 235, 236, 237, 238, 239,
    240, 241, 242, 243, 244, 245, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255,
};

uint32_t jsmf_tokenize(const jsmf_tokenizer *t, const char *text, size_t len, char *out,
                       const char **tok, uint32_t *toklen)
{
    const unsigned char *p = (const unsigned char *)text, *end = p + len;
    unsigned char *o = (unsigned char *)out;
    size_t min_len = t->min_len ? t->min_len : 1;
    size_t max_len = t->max_len ? t->max_len : SIZE_MAX;
    uint32_t n = 0;
    while (p < end) {
        while (p < end && !token_byte[*p])
            p++;
        if (p == end)
            break;
        unsigned char *start = o, c;
        while (p < end && (c = token_byte[*p])) {
            *o++ = c;
            p++;
        }
        size_t l = (size_t)(o - start);
        if (l >= min_len && l <= max_len) {
            tok[n] = (const char *)start;
            toklen[n] = (uint32_t)l;
            n++;
        } else {
            o = start; /* dropped: reuse its bytes */
        }
    }
    return n;
}
