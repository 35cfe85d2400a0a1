/* test_core_errmsg.c — every failure provoked here comes back with a message raised with its
 * own code, and a failure the caller handled never explains a later, different one. */
#include <string.h>

#include "check.h"
#include "jsmf_model.h"
#include "jsmf_store.h"
#include "core/error.h"
#include "model/json.h"
#include "model/npy.h"

/* A detailed message raised with `code` (not the generic text, not another code's message). */
static int explained(int rc, int code, const char *needle)
{
    const char *m = jsmf_errmsg_for(rc);
    int ok = rc == code && m[0] && strcmp(m, jsmf_strerror(rc)) != 0 && strstr(m, needle);
    if (!ok)
        fprintf(stderr, "  rc %d (want %d), message \"%s\" (want \"%s\")\n", rc, code, m, needle);
    return ok;
}

static void every_failure_has_its_message(void)
{
    double x;
    char *s = NULL;
    jsmf_vocab *v = NULL;
    jsmf_model *m = NULL;
    jsmf_store *st = NULL;
    double *d = NULL;
    uint32_t r, c;
    uint64_t mem;
    jsmf_error_clear();
    CHECK(explained(json_get_number("{\"a\": 1}", "b", &x), JSMF_ENOTFOUND, "b"));
    jsmf_error_clear();
    CHECK(explained(json_get_number("{\"a\": \"x\"}", "a", &x), JSMF_EFORMAT, "a"));
    jsmf_error_clear();
    CHECK(explained(json_get_number("{\"a\": -}", "a", &x), JSMF_EFORMAT, "a"));
    jsmf_error_clear();
    CHECK(explained(json_get_string("{\"a\": 1}", "zz", &s), JSMF_ENOTFOUND, "zz"));
    jsmf_error_clear();
    CHECK(explained(json_get_string("{\"a\": 1}", "a", &s), JSMF_EFORMAT, "a"));
    jsmf_error_clear();
    CHECK(explained(jsmf_vocab_load("/nonexistent/vocab.txt", &v), JSMF_ENOTFOUND, "vocab.txt"));
    jsmf_error_clear();
    CHECK(explained(jsmf_model_load("/nonexistent/model", &m), JSMF_ENOTFOUND, "model"));
    jsmf_error_clear();
    CHECK(explained(jsmf_model_new(0, 3, &m), JSMF_EINVAL, "topic"));
    jsmf_error_clear();
    CHECK(explained(npy_read_f64("/nonexistent/B.npy", &d, &r, &c), JSMF_ENOTFOUND, "B.npy"));
    jsmf_error_clear();
    CHECK(explained(jsmf_store_open("/nonexistent/store", 0, &st), JSMF_ENOTFOUND, "store"));
    jsmf_error_clear();
    CHECK(explained(jsmf_mem_parse("--mem", "lots", 0, &mem), JSMF_EINVAL, "--mem"));
    free(s);
}

int main(void)
{
    /* A handled failure (the caller goes on: an optional file is absent) ... */
    jsmf_vocab *v = NULL;
    int rc = jsmf_vocab_load("/nonexistent/optional-vocab.txt", &v);
    CHECK(rc == JSMF_ENOTFOUND);
    /* ... then a different error: its own message, never the one left behind. */
    char *s = NULL;
    rc = json_get_string("{\"topics\": 12}", "topics", &s);
    CHECK(rc == JSMF_EFORMAT);
    CHECK(strstr(jsmf_errmsg(), "topics") != NULL);
    CHECK(strstr(jsmf_errmsg(), "optional-vocab") == NULL);
    CHECK(strstr(jsmf_errmsg_for(rc), "topics") != NULL);

    /* A message is only shown for the code it was raised with. */
    jsmf_error(JSMF_EIO, "disk.bin: read error");
    CHECK(strcmp(jsmf_errmsg_for(JSMF_EIO), "disk.bin: read error") == 0);
    CHECK(strcmp(jsmf_errmsg_for(JSMF_EFORMAT), jsmf_strerror(JSMF_EFORMAT)) == 0);
    /* ... and context on another code does not borrow it. */
    error_context(JSMF_ENUMERIC, "while solving");
    CHECK(strcmp(jsmf_errmsg_for(JSMF_ENUMERIC), "while solving: numerical failure") == 0);

    /* Cleared after handling: nothing left to show. */
    jsmf_error(JSMF_ENOTSUP, "no CUDA device; using the CPU");
    jsmf_error_clear();
    CHECK(jsmf_errmsg()[0] == 0);
    CHECK(strcmp(jsmf_errmsg_for(JSMF_ENOTSUP), jsmf_strerror(JSMF_ENOTSUP)) == 0);

    every_failure_has_its_message();
    CHECK_DONE();
}
