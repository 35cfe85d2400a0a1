/* clock.h — internal: the one monotonic clock of the library and the program, in seconds, for
 * durations (timings, rates, time limits); never a date. */
#ifndef JSMF_CORE_CLOCK_H
#define JSMF_CORE_CLOCK_H

#include <time.h>

/* Seconds on CLOCK_MONOTONIC: only differences mean anything. */
static inline double clock_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
