/* threads.h — the thread count of one library call (jsmf_fit, jsmf_eval_*), for the loops
 * deep inside it that no parameter reaches, and BLAS held to one thread during the call. */
#ifndef JSMF_THREADS_H
#define JSMF_THREADS_H

/* The thread count of the call running on this thread (omp_get_max_threads() outside one). */
int call_threads(void);

/* What call_threads_begin changed, for call_threads_end to put back. */
typedef struct call_threads_saved {
    int call, omp, blas;
} call_threads_saved;

/* Start a call on `nt` threads (0: the OpenMP default), with BLAS on one thread; the caller's
 * OpenMP and OpenBLAS settings are as they were after call_threads_end(saved). Calls nest. */
call_threads_saved call_threads_begin(int nt);
void call_threads_end(call_threads_saved saved);

#endif
