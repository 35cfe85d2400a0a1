/* tell.h — a formatted line handed to a caller's callback (a warning, a note): how the library
 * speaks to a front end without printing. */
#ifndef JSMF_TELL_H
#define JSMF_TELL_H

/* Format FMT and hand the line, whole at any length, to FN(ARG, line); nothing when FN is NULL
 * or memory runs short (a message is never worth failing the call for). */
void tell_line(void (*fn)(void *arg, const char *line), void *arg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
