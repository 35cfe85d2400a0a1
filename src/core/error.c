/* error.c — error codes, the thread-local detailed message, and the version string.
 * The library never prints: it records why a call failed here, with the code it was raised
 * with, and returns the code; a message is only ever shown for the code it was raised with. */
#include "jsmf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"

static _Thread_local char errbuf[1024];
/* The code errbuf was raised with: a handled failure leaves its message behind, and a later
 * failure that returned a different code must not be explained by it. */
static _Thread_local int errcode;
/* jsmf_cancel's request: per thread, since progress callbacks run on the calling thread and the
 * call that checks it is that thread's. */
static _Thread_local int cancel_asked;

const char *jsmf_strerror(int code)
{
    switch (code) {
    case JSMF_OK: return "success";
    case JSMF_EINVAL: return "invalid argument";
    case JSMF_ENOMEM: return "out of memory";
    case JSMF_EIO: return "input/output error";
    case JSMF_EFORMAT: return "malformed input";
    case JSMF_ESTORE: return "store error";
    case JSMF_EVERSION: return "unsupported format version";
    case JSMF_EEXIST: return "already exists";
    case JSMF_EBUSY: return "store is busy";
    case JSMF_ENOSPC: return "no space left on device";
    case JSMF_EMISMATCH: return "mismatch";
    case JSMF_ENOTSUP: return "not supported";
    case JSMF_ENUMERIC: return "numerical failure";
    case JSMF_ENOTFOUND: return "not found";
    case JSMF_EINTR: return "interrupted";
    default: return "unknown error";
    }
}

const char *jsmf_errmsg(void)
{
    return errbuf;
}

/* The recorded message when it was raised with `code`, else NULL. */
static const char *message_of(int code)
{
    return code && code == errcode && errbuf[0] ? errbuf : NULL;
}

const char *jsmf_errmsg_for(int code)
{
    const char *m = message_of(code);
    return m ? m : jsmf_strerror(code);
}

void jsmf_error_clear(void)
{
    errbuf[0] = 0;
    errcode = 0;
}

void jsmf_cancel(int on)
{
    cancel_asked = on != 0;
}

int cancel_check(void)
{
    if (!cancel_asked)
        return JSMF_OK;
    cancel_asked = 0;
    return jsmf_error(JSMF_EINTR, "interrupted: cancelled from a progress callback (jsmf_cancel)");
}

int jsmf_error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errbuf, sizeof errbuf, fmt, ap);
    va_end(ap);
    errcode = code;
    return code;
}

int error_context(int code, const char *fmt, ...)
{
    char prefix[512], old[sizeof errbuf];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    const char *own = message_of(code);
    snprintf(old, sizeof old, "%s", own ? own : jsmf_strerror(code));
    /* Truncation of an over-long message is acceptable; build it piecewise to say so. */
    size_t n = strlen(prefix);
    if (n > sizeof errbuf - 3)
        n = sizeof errbuf - 3;
    memcpy(errbuf, prefix, n);
    memcpy(errbuf + n, ": ", 3);
    const char *tail = old;
    size_t room = sizeof errbuf - n - 3, t = strlen(tail);
    if (t > room)
        t = room;
    memcpy(errbuf + n + 2, tail, t);
    errbuf[n + 2 + t] = 0;
    errcode = code;
    return code;
}

int error_capture(jsmf_error_slot *slot, int code)
{
    if (!code)
        return code;
    const char *m = jsmf_errmsg_for(code);
    /* Not an OpenMP critical: callers may be plain threads too. The winner of the code writes
     * the message; readers wait for the region's end (its barrier orders the write). */
    int none = 0;
    if (__atomic_compare_exchange_n(&slot->code, &none, code, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        snprintf(slot->msg, sizeof slot->msg, "%s", m);
    return code;
}

int error_pending(const jsmf_error_slot *slot)
{
    return __atomic_load_n(&slot->code, __ATOMIC_ACQUIRE) != 0;
}

int error_restore(const jsmf_error_slot *slot)
{
    int code = __atomic_load_n(&slot->code, __ATOMIC_ACQUIRE);
    if (!code)
        return JSMF_OK;
    snprintf(errbuf, sizeof errbuf, "%s", slot->msg);
    errcode = code;
    return code;
}

int jsmf_have_cuda(void)
{
#ifdef JSMF_WITH_CUDA
    return 1;
#else
    return 0;
#endif
}

const char *jsmf_version(void)
{
    return JSMF_VERSION_STRING " (openmp openblas lmdb zstd"
#ifdef JSMF_WITH_CUDA
           " cuda"
#endif
           ")";
}
