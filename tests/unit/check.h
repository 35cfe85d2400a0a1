/* check.h — the unit tests' one assertion macro: on failure print file:line and the failing
 * expression, count it, and carry on so one run shows every failure. */
#ifndef JSMF_CHECK_H
#define JSMF_CHECK_H
#include <stdio.h>
#include <stdlib.h>
#include "jsmf.h"

static int check_failures, check_total;

#define CHECK(expr)                                                                            \
    do {                                                                                       \
        check_total++;                                                                         \
        if (!(expr)) {                                                                         \
            check_failures++;                                                                  \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #expr);           \
        }                                                                                      \
    } while (0)

/* A library call that must succeed: on failure also print the library's message. */
#define CHECK_OK(call)                                                                         \
    do {                                                                                       \
        check_total++;                                                                         \
        int check_rc_ = (call);                                                                \
        if (check_rc_ != 0) {                                                                  \
            check_failures++;                                                                  \
            fprintf(stderr, "%s:%d: %s returned %d (%s): %s\n", __FILE__, __LINE__, #call,     \
                    check_rc_, jsmf_strerror(check_rc_), jsmf_errmsg());                       \
        }                                                                                      \
    } while (0)

#define CHECK_NEAR(a, b, tol) CHECK(fabs((double)(a) - (double)(b)) <= (tol))

/* End of main(): summary line, exit status. */
#define CHECK_DONE()                                                                           \
    do {                                                                                       \
        fprintf(stderr, "%s: %d checks, %d failed\n", __FILE__, check_total, check_failures);  \
        return check_failures ? 1 : 0;                                                         \
    } while (0)
#endif
