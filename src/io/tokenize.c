/* tokenize.c — the text tokenizer: maximal runs of ASCII letters (lowercased) and bytes >= 0x80
 * (UTF-8 words stay whole), everything else separates; one table lookup per byte. A run that
 * is not valid UTF-8 is dropped (it could never be a word of a vocabulary file). */
#include "jsmf_io.h"

#include <string.h>

#include "tokenize.h"

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

/* Whether n bytes are well-formed UTF-8 (Unicode Table 3-7: no overlong forms, no
 * surrogates, nothing above U+10FFFF). */
int utf8_valid(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t k;
        unsigned lo = 0x80, hi = 0xBF; /* the range of the second byte */
        if (c >= 0xC2 && c <= 0xDF)
            k = 1;
        else if (c >= 0xE0 && c <= 0xEF)
            k = 2, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        else if (c >= 0xF0 && c <= 0xF4)
            k = 3, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        else
            return 0;
        if (n - i <= k || s[i + 1] < lo || s[i + 1] > hi)
            return 0;
        for (size_t j = 2; j <= k; j++)
            if ((s[i + j] & 0xC0) != 0x80)
                return 0;
        i += k + 1;
    }
    return 1;
}

uint32_t tokenize_ex(const jsmf_tokenizer *t, const char *text, size_t len, char *out,
                          const char **tok, uint32_t *toklen, jsmf_token_stats *st)
{
    const unsigned char *p = (const unsigned char *)text, *end = p + len;
    unsigned char *o = (unsigned char *)out;
    size_t min_len = t->min_len ? t->min_len : 1;
    size_t max_len = t->max_len ? t->max_len : SIZE_MAX;
    uint32_t n = 0;
    if (st)
        st->bad_utf8 = 0, st->first_bad = 0;
    while (p < end) {
        while (p < end && !token_byte[*p])
            p++;
        if (p == end)
            break;
        const unsigned char *from = p;
        unsigned char *start = o, c, high = 0;
        while (p < end && (c = token_byte[*p])) {
            *o++ = c;
            high |= c;
            p++;
        }
        size_t l = (size_t)(o - start);
        if (l >= min_len && l <= max_len && (!(high & 0x80) || utf8_valid(start, l))) {
            tok[n] = (const char *)start;
            toklen[n] = (uint32_t)l;
            n++;
        } else {
            /* counted whatever its length: a short or long run is as sure a sign of a text in
             * another encoding as one of a word's length (kabazu \xff\xfe dumofe) */
            if (st && (high & 0x80) && !utf8_valid(start, l) && !st->bad_utf8++)
                st->first_bad = (uint32_t)(from - (const unsigned char *)text);
            o = start; /* dropped: reuse its bytes */
        }
    }
    return n;
}

uint32_t jsmf_tokenize(const jsmf_tokenizer *t, const char *text, size_t len, char *out,
                       const char **tok, uint32_t *toklen)
{
    return tokenize_ex(t, text, len, out, tok, toklen, NULL);
}

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

const char *item_problem(const char *word)
{
    const unsigned char *w = (const unsigned char *)word;
    size_t len = strlen(word);
    for (size_t i = 0; i < len; i++)
        if (w[i] == ' ' || w[i] == '\t' || w[i] == '\r' || w[i] == '\v' || w[i] == '\f')
            return "has a blank (item ids are split at blanks)";
    if (len > JSMF_ITEM_MAX_BYTES)
        return "is longer than an item id can be (" STRINGIFY(JSMF_ITEM_MAX_BYTES) " bytes)";
    if (!utf8_valid(w, len))
        return "is not valid UTF-8";
    return NULL;
}

const char *token_problem(const jsmf_tokenizer *t, const char *word)
{
    const unsigned char *w = (const unsigned char *)word;
    size_t len = strlen(word);
    size_t min_len = t->min_len ? t->min_len : 1;
    size_t max_len = t->max_len ? t->max_len : SIZE_MAX;
    for (size_t i = 0; i < len; i++)
        if (w[i] >= 'A' && w[i] <= 'Z')
            return "has an uppercase letter (text is lowercased)";
    for (size_t i = 0; i < len; i++)
        if (!token_byte[w[i]])
            return "has a character that splits tokens (a token is letters a-z and bytes >= 0x80)";
    if (!utf8_valid(w, len))
        return "is not valid UTF-8";
    if (len < min_len)
        return "is shorter than the shortest token (--min-word-len)";
    if (len > max_len)
        return "is longer than the longest token (--max-word-len)";
    return NULL;
}
