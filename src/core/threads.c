/* threads.c — the thread count of one library call, kept per calling thread, so that two calls
 * on two threads each run on their own count and leave the process's settings as they were. */
#include <omp.h>

#include <cblas.h>

#include "threads.h"

static _Thread_local int this_call; /* 0: no call on this thread */

int call_threads(void)
{
    return this_call > 0 ? this_call : omp_get_max_threads();
}

/* Parallelism comes only from our own loops over fixed word blocks; BLAS and LAPACK run on one
 * thread each, since their threaded kernels may sum in a thread-dependent order. OpenBLAS has
 * no per-call thread count, only a process-wide one: it is set here and restored by
 * call_threads_end. Its OpenMP build also calls omp_set_num_threads with every count it is
 * given, which changes this thread's OpenMP default: that is restored last, after OpenBLAS's. */
call_threads_saved call_threads_begin(int nt)
{
    call_threads_saved s = {this_call, omp_get_max_threads(), openblas_get_num_threads()};
    this_call = nt > 0 ? nt : s.omp;
    openblas_set_num_threads(1);
    return s;
}

void call_threads_end(call_threads_saved s)
{
    openblas_set_num_threads(s.blas);
    omp_set_num_threads(s.omp);
    this_call = s.call;
}
