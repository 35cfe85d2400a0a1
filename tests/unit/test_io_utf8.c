/* test_io_utf8.c — the tokenizer keeps well-formed UTF-8 runs whole and drops the others
 * (overlong forms, surrogates, code points above U+10FFFF, stray or missing continuation
 * bytes), counting them and naming where the first starts; token_problem says why a
 * vocabulary word can never come out of the tokenizer. */
#include <string.h>

#include "check.h"
#include "jsmf_io.h"
#include "io/tokenize.h"

/* 1 when `s` comes out as one token, 0 when it is dropped as invalid UTF-8. */
static int kept(const char *s)
{
    jsmf_tokenizer t = {.min_len = 1};
    char out[64];
    const char *tok[64];
    uint32_t len[64];
    jsmf_token_stats st;
    uint32_t n = tokenize_ex(&t, s, strlen(s), out, tok, len, &st);
    CHECK(n + st.bad_utf8 == 1);
    return n == 1 && len[0] == strlen(s) && !memcmp(tok[0], s, len[0]);
}

int main(void)
{
    CHECK(kept("caf\xC3\xA9"));                  /* é */
    CHECK(kept("\xE2\x82\xAC"));                 /* € */
    CHECK(kept("\xED\x9F\xBF"));                 /* U+D7FF, just below the surrogates */
    CHECK(kept("\xEF\xBF\xBD"));                 /* U+FFFD */
    CHECK(kept("\xF0\x9F\x98\x80"));             /* an emoji */
    CHECK(kept("\xF4\x8F\xBF\xBF"));             /* U+10FFFF */
    CHECK(!kept("caf\xE9"));                     /* Latin-1 é */
    CHECK(!kept("\xC0\xAF"));                    /* overlong '/' */
    CHECK(!kept("\xC1\xBF"));
    CHECK(!kept("\xE0\x9F\xBF"));                /* overlong 3-byte */
    CHECK(!kept("\xF0\x8F\xBF\xBF"));            /* overlong 4-byte */
    CHECK(!kept("\xED\xA0\x80"));                /* a surrogate */
    CHECK(!kept("\xF4\x90\x80\x80"));            /* above U+10FFFF */
    CHECK(!kept("\xF5\x80\x80\x80"));
    CHECK(!kept("ab\x80" "cd"));                 /* a stray continuation byte */
    CHECK(!kept("ab\xC3"));                      /* cut short at the end of the run */
    CHECK(!kept("\xE2\x82" "x"));                /* cut short by an ASCII letter */

    /* counts and the position of the first: "ok caf\xE9 fine \xFF\xFE\xFD go" */
    jsmf_tokenizer t = JSMF_TOKENIZER_DEFAULT;
    const char *s = "ok caf\xE9 fine \xFF\xFE\xFD go";
    char out[64];
    const char *tok[64];
    uint32_t len[64];
    jsmf_token_stats st;
    uint32_t n = tokenize_ex(&t, s, strlen(s), out, tok, len, &st);
    CHECK(n == 1 && len[0] == 4 && !memcmp(tok[0], "fine", 4));
    CHECK(st.bad_utf8 == 2 && st.first_bad == 3);
    CHECK(jsmf_tokenize(&t, s, strlen(s), out, tok, len) == 1);

    /* invalid runs shorter than a word, or longer, count too (an ASCII one does not) */
    const char *shorts = "kabazu \xFF\xFE dumofe \xC3\x28 zumeka ok";
    n = tokenize_ex(&t, shorts, strlen(shorts), out, tok, len, &st);
    CHECK(n == 3 && st.bad_utf8 == 2 && st.first_bad == 7);
    jsmf_tokenizer narrow = {.min_len = 3, .max_len = 8};
    const char *longs = "word abcdefghij\xE9 abcdefghijkl";
    n = tokenize_ex(&narrow, longs, strlen(longs), out, tok, len, &st);
    CHECK(n == 1 && st.bad_utf8 == 1 && st.first_bad == 5);

    CHECK(token_problem(&t, "apple") == NULL);
    CHECK(token_problem(&t, "caf\xC3\xA9") == NULL);
    CHECK(token_problem(&t, "Apple") && strstr(token_problem(&t, "Apple"), "uppercase"));
    CHECK(token_problem(&t, "co-op") && strstr(token_problem(&t, "co-op"), "splits"));
    CHECK(token_problem(&t, "covid19") != NULL);
    CHECK(token_problem(&t, "caf\xE9") && strstr(token_problem(&t, "caf\xE9"), "UTF-8"));
    CHECK(token_problem(&t, "ox") && strstr(token_problem(&t, "ox"), "shorter"));
    char longw[80];
    memset(longw, 'a', 65), longw[65] = 0;
    CHECK(token_problem(&t, longw) && strstr(token_problem(&t, longw), "longer"));
    CHECK_DONE();
}
