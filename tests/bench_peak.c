/* tests/bench_peak.c — the machine's measured float FMA peak: independent vfmadd231ps chains
 * (12 accumulators, enough to cover the FMA latency times the number of FMA pipes), zmm (AVX-512,
 * when the CPU has it) and ymm (AVX2), on 1 thread and on every OpenMP thread at once.  Not a test:
 * no assertions.  The rates are the ceiling the forward's "fraction of peak" is measured against.
 *
 *     build/tests/bench_peak [--ms 300]
 * prints  "peak zmm 1 thread: 176.0 GFLOP/s" ... and a last line "peak best N threads: X GFLOP/s".
 */
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/kc.h"

#define CHAINS 12
#define STEPS 4096

/* 2 * 16 * CHAINS * STEPS flops per call */
__attribute__((target("avx512f"), noinline)) static float chains_zmm(float seed)
{
    __m512 acc[CHAINS];
    const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
    for (int c = 0; c < CHAINS; c++) acc[c] = _mm512_set1_ps(seed + (float)c);
    for (int s = 0; s < STEPS; s++) {
#pragma GCC unroll 12
        for (int c = 0; c < CHAINS; c++) acc[c] = _mm512_fmadd_ps(acc[c], a, b);
    }
    __m512 t = acc[0];
    for (int c = 1; c < CHAINS; c++) t = _mm512_add_ps(t, acc[c]);
    return _mm512_reduce_add_ps(t);
}

/* 2 * 8 * CHAINS * STEPS flops per call */
__attribute__((target("avx2,fma"), noinline)) static float chains_ymm(float seed)
{
    __m256 acc[CHAINS];
    const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
    for (int c = 0; c < CHAINS; c++) acc[c] = _mm256_set1_ps(seed + (float)c);
    for (int s = 0; s < STEPS; s++) {
#pragma GCC unroll 12
        for (int c = 0; c < CHAINS; c++) acc[c] = _mm256_fmadd_ps(acc[c], a, b);
    }
    __m256 t = acc[0];
    for (int c = 1; c < CHAINS; c++) t = _mm256_add_ps(t, acc[c]);
    float out[8];
    _mm256_storeu_ps(out, t);
    return out[0] + out[1] + out[2] + out[3] + out[4] + out[5] + out[6] + out[7];
}

/* Best rate over repeated timed windows of about `ms` milliseconds in total. */
static double rate(int zmm, int threads, double ms)
{
    const double flops_per_call = 2.0 * (zmm ? 16 : 8) * CHAINS * STEPS;
    double best = 0;
    volatile float sink = 0;
    const int windows = 10;
    for (int w = 0; w < windows; w++) {
        double window = ms / 1e3 / windows, elapsed = 0;
        long calls = 0;
#pragma omp parallel num_threads(threads) reduction(+ : calls)
        {
            float local = 0;
#pragma omp barrier
            double t0 = kc_now();
            long n = 0;
            while (kc_now() - t0 < window) {
                for (int r = 0; r < 16; r++) local += zmm ? chains_zmm(local) : chains_ymm(local);
                n += 16;
            }
            calls += n;
#pragma omp master
            elapsed = kc_now() - t0;
            sink += local;
        }
        /* every thread ran about `window` seconds; all of them count */
        double r = flops_per_call * (double)calls / (elapsed > window ? elapsed : window);
        if (r > best) best = r;
    }
    (void)sink;
    return best / 1e9;
}

int main(int argc, char **argv)
{
    double ms = 300;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--ms") && i + 1 < argc) ms = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--ms 300]\n", argv[0]);
            return 2;
        }
    }
    __builtin_cpu_init();
    const int has512 = __builtin_cpu_supports("avx512f") != 0;
    const int nt = omp_get_max_threads();
    double best1 = 0, bestn = 0;
    for (int zmm = has512; zmm >= 0; zmm--) {
        double r1 = rate(zmm, 1, ms), rn = nt > 1 ? rate(zmm, nt, ms) : r1;
        printf("peak %s 1 thread: %.1f GFLOP/s\n", zmm ? "zmm" : "ymm", r1);
        if (nt > 1) printf("peak %s %d threads: %.1f GFLOP/s\n", zmm ? "zmm" : "ymm", nt, rn);
        if (r1 > best1) best1 = r1;
        if (rn > bestn) bestn = rn;
    }
    if (!has512) printf("peak zmm: no AVX-512 on this CPU\n");
    printf("peak best 1 thread: %.1f GFLOP/s\n", best1);
    printf("peak best %d threads: %.1f GFLOP/s\n", nt, bestn);
    return 0;
}
