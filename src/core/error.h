/* error.h — carrying an error out of an OpenMP parallel region, and adding context to a
 * message: the library's side of jsmf_error (src/core/error.c). */
#ifndef JSMF_CORE_ERROR_H
#define JSMF_CORE_ERROR_H

#include "jsmf.h"

/** A worker thread's error carried to the thread that returns it: the message buffer is
 *  per thread, so an error raised inside an OpenMP parallel region would otherwise reach the
 *  caller as the code's generic text only. Zero-initialise one per parallel region
 *  (`jsmf_error_slot err = {0};`); a worker whose call failed does
 *  `error_capture(&err, rc)`, and after the region the calling thread does
 *  `return error_restore(&err);` (or checks `err.code`). The first capture wins. */
typedef struct jsmf_error_slot {
    int code;        /**< 0 while no worker failed (read it after the region) */
    char msg[1024];  /**< the first failing worker's message */
} jsmf_error_slot;

/** Thread-safe: record `code` with the calling thread's message for it (jsmf_errmsg_for(code):
 *  the code's generic text when none was raised with it) unless the slot already holds an error. Returns
 *  `code`. A zero `code` records nothing. */
int error_capture(jsmf_error_slot *slot, int code);

/** For workers: non-zero once some worker captured an error (lets the others stop early). */
int error_pending(const jsmf_error_slot *slot);

/** On the calling thread, after the parallel region: raise the captured error again (its
 *  message becomes this thread's jsmf_errmsg()) and return its code; 0 when none. */
int error_restore(const jsmf_error_slot *slot);

/** Prefix the current thread's message with more context ("while merging X: <old message>"),
 *  returning `code` unchanged; the old message is jsmf_errmsg_for(code). */
int error_context(int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/** JSMF_EINTR with its message when jsmf_cancel(1) was asked on this thread (the request is
 *  consumed), else 0: checked right after a progress callback, where a long call can stop
 *  with its state consistent (an ingest after its checkpoint, a fit between steps). */
int cancel_check(void);

#endif
