/* test_core_error.c — an error raised inside an OpenMP parallel region keeps its message on the
 * calling thread through error_capture / error_restore; the first capture wins. */
#include <omp.h>
#include <string.h>

#include "check.h"
#include "core/error.h"

/* A worker's library call that fails with a detailed message. */
static int parse_item(int i)
{
    if (i == 37)
        return jsmf_error(JSMF_EFORMAT, "items.txt:%d: byte offset %d: not a number", i + 1,
                          i * 10);
    return JSMF_OK;
}

int main(void)
{
    omp_set_num_threads(4);

    /* the plain thread-local buffer: a worker's message is not seen by the caller */
    jsmf_error(JSMF_EINVAL, "main thread message");
    int seen_elsewhere = 0;
    #pragma omp parallel
    {
        if (omp_get_thread_num() != 0 && strcmp(jsmf_errmsg(), "main thread message") != 0)
            #pragma omp atomic write
            seen_elsewhere = 1;
    }
    CHECK(omp_get_max_threads() < 2 || seen_elsewhere);

    /* a failure on some worker reaches the caller with its full message */
    for (int rep = 0; rep < 20; rep++) {
        jsmf_error(JSMF_OK, "%s", "");
        jsmf_error_slot err = {0};
        #pragma omp parallel for schedule(dynamic, 1)
        for (int i = 0; i < 200; i++) {
            if (error_pending(&err))
                continue;
            int rc = parse_item(i);
            if (rc)
                error_capture(&err, rc);
        }
        int rc = error_restore(&err);
        CHECK(rc == JSMF_EFORMAT);
        CHECK(strcmp(jsmf_errmsg(), "items.txt:38: byte offset 370: not a number") == 0);
    }

    /* several failures: exactly one message, whole, from one of them */
    jsmf_error_slot err = {0};
    #pragma omp parallel for schedule(static, 1)
    for (int i = 0; i < 64; i++)
        error_capture(&err, jsmf_error(i % 2 ? JSMF_EIO : JSMF_ENOMEM, "failure %d", i));
    int rc = error_restore(&err);
    CHECK(rc == JSMF_EIO || rc == JSMF_ENOMEM);
    int which = -1;
    CHECK(sscanf(jsmf_errmsg(), "failure %d", &which) == 1 && which >= 0 && which < 64);
    CHECK((which % 2 ? JSMF_EIO : JSMF_ENOMEM) == rc);

    /* no failure: restore says so and leaves the caller's message alone */
    jsmf_error(JSMF_EINVAL, "untouched");
    jsmf_error_slot none = {0};
    #pragma omp parallel for
    for (int i = 0; i < 8; i++)
        error_capture(&none, parse_item(i));
    CHECK(error_restore(&none) == JSMF_OK);
    CHECK(strcmp(jsmf_errmsg(), "untouched") == 0);

    /* a worker without a message: the code's generic text */
    jsmf_error_slot bare = {0};
    #pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 1) {
            jsmf_error(JSMF_OK, "%s", "");
            error_capture(&bare, JSMF_ENUMERIC);
        }
    }
    CHECK(error_restore(&bare) == JSMF_ENUMERIC);
    CHECK(strcmp(jsmf_errmsg(), jsmf_strerror(JSMF_ENUMERIC)) == 0);
    CHECK_DONE();
}
