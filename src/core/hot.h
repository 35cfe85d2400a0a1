/* hot.h — JSMF_HOT: a hot loop compiled twice, for AVX2 and for the baseline x86-64, the copy
 * picked once by the CPU at load time (GCC/clang target_clones; -DJSMF_NO_CLONES turns it off). */
#ifndef JSMF_CORE_HOT_H
#define JSMF_CORE_HOT_H

/* Wider vectors keep more loads in flight and do twice the arithmetic a cycle. Without FMA an
 * element is the same multiply then add in both copies, so a loop without a reduction gives the
 * same bits whichever runs; a reduction (omp simd) adds 4 lanes instead of 2, so its result
 * agrees to rounding across CPUs and bit for bit on one. */
#if defined(__x86_64__) && defined(__ELF__) && !defined(JSMF_NO_CLONES) && \
    (defined(__clang__) ? __clang_major__ >= 14 : defined(__GNUC__) && __GNUC__ >= 6)
#define JSMF_HOT __attribute__((target_clones("avx2", "default")))
#else
#define JSMF_HOT
#endif

#endif
