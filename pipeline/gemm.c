/* pipeline/gemm.c — see gemm.h.  oneDNN's dnnl_sgemm behind one selection made once per process,
 * checked against a plain C loop; OpenBLAS and a plain C loop as fallbacks. */
#include "pipeline/gemm.h"

#include <cblas.h>
#include <math.h>
#include <oneapi/dnnl/dnnl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PATH_DNNL, PATH_OPENBLAS, PATH_PLAIN };

static int g_path = PATH_DNNL;
static int g_simd = 1;
static char g_describe[192];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

void kc_gemm_naive(int trans_b, int M, int N, int K, float alpha, const float *A, int lda,
                   const float *B, int ldb, float beta, float *C, int ldc)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double acc = 0;
            for (int k = 0; k < K; k++)
                acc += (double)A[(size_t)i * lda + k] *
                       (trans_b ? B[(size_t)j * ldb + k] : B[(size_t)k * ldb + j]);
            float *c = &C[(size_t)i * ldc + j];
            *c = (float)(alpha * acc + (beta == 0.0f ? 0.0 : (double)beta * *c));
        }
}

/* The last-resort path: float loops the compiler vectorises (dot products for NT, row updates for
 * NN).  Slow (a few GFLOP/s) but independent of every library. */
static void plain_gemm(int trans_b, int M, int N, int K, float alpha, const float *A, int lda,
                       const float *B, int ldb, float beta, float *C, int ldc)
{
    for (int i = 0; i < M; i++) {
        float *c = C + (size_t)i * ldc;
        const float *a = A + (size_t)i * lda;
        if (trans_b) {
            for (int j = 0; j < N; j++) {
                const float *b = B + (size_t)j * ldb;
                float acc = 0;
#pragma omp simd reduction(+ : acc)
                for (int k = 0; k < K; k++) acc += a[k] * b[k];
                c[j] = alpha * acc + (beta == 0.0f ? 0.0f : beta * c[j]);
            }
        } else {
            if (beta == 0.0f) memset(c, 0, (size_t)N * sizeof *c);
            else if (beta != 1.0f)
                for (int j = 0; j < N; j++) c[j] *= beta;
            for (int k = 0; k < K; k++) {
                const float *b = B + (size_t)k * ldb;
                float s = alpha * a[k];
#pragma omp simd
                for (int j = 0; j < N; j++) c[j] += s * b[j];
            }
        }
    }
}

static void run(int path, int trans_b, int M, int N, int K, float alpha, const float *A, int lda,
                const float *B, int ldb, float beta, float *C, int ldc)
{
    if (M <= 0 || N <= 0) return;
    if (K <= 0) { /* C = beta C, as BLAS does */
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                float *c = &C[(size_t)i * ldc + j];
                *c = beta == 0.0f ? 0.0f : beta * *c;
            }
        return;
    }
    switch (path) {
    case PATH_DNNL:
        if (dnnl_sgemm('N', trans_b ? 'T' : 'N', M, N, K, alpha, A, lda, B, ldb, beta, C, ldc) ==
            dnnl_success)
            return;
        /* argument errors cannot happen with valid shapes; compute it anyway */
        plain_gemm(trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    case PATH_OPENBLAS:
        cblas_sgemm(CblasRowMajor, CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, M, N, K,
                    alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    default:
        plain_gemm(trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    }
}

/* A few small products, odd shapes and strides, against the double loop.  1 = agrees. */
static int self_check(int path)
{
    static const int cases[][5] = {
        /* trans_b, M, N, K, pad */
        {1, 37, 29, 67, 3}, {0, 13, 70, 33, 5}, {1, 64, 96, 128, 0}, {0, 96, 64, 130, 1}, {1, 1, 7, 5, 2},
    };
    int ok = 1;
    uint32_t seed = 12345u;
    for (size_t c = 0; c < sizeof cases / sizeof *cases && ok; c++) {
        const int tb = cases[c][0], M = cases[c][1], N = cases[c][2], K = cases[c][3], pad = cases[c][4];
        const int lda = K + pad, ldb = (tb ? K : N) + pad, ldc = N + pad, brows = tb ? N : K;
        float *A = malloc((size_t)M * lda * sizeof *A), *B = malloc((size_t)brows * ldb * sizeof *B);
        float *C = malloc((size_t)M * ldc * sizeof *C), *R = malloc((size_t)M * ldc * sizeof *R);
        if (!A || !B || !C || !R) {
            free(A), free(B), free(C), free(R);
            return 1; /* no memory for a check: nothing learned */
        }
#define RND() ((float)((seed = seed * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f)
        for (int i = 0; i < M * lda; i++) A[i] = RND();
        for (int i = 0; i < brows * ldb; i++) B[i] = RND();
        for (int i = 0; i < M * ldc; i++) C[i] = R[i] = RND();
#undef RND
        float alpha = c % 2 ? 1.0f : 0.7f, beta = c == 1 ? 0.0f : c == 2 ? 1.0f : 0.3f;
        run(path, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        kc_gemm_naive(tb, M, N, K, alpha, A, lda, B, ldb, beta, R, ldc);
        double mx = 0, worst = 0;
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double r = R[(size_t)i * ldc + j], d = fabs(C[(size_t)i * ldc + j] - r);
                if (fabs(r) > mx) mx = fabs(r);
                if (!(d <= worst)) worst = d; /* NaN counts as the worst */
            }
        for (int i = 0; i < M && ok; i++) /* padding untouched */
            for (int j = N; j < ldc; j++)
                if (C[(size_t)i * ldc + j] != R[(size_t)i * ldc + j]) ok = 0;
        if (!(worst <= 1e-4 * (mx > 0 ? mx : 1))) ok = 0;
        free(A), free(B), free(C), free(R);
    }
    return ok;
}

static const char *isa_name(dnnl_cpu_isa_t isa)
{
    switch ((int)isa) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    case dnnl_cpu_isa_all: return "all";
    default: return "other";
    }
}

static void select_path(void)
{
    const char *want = getenv("KC_ISA");
    int forced = -1; /* -1 default, else a dnnl_cpu_isa_t or -2 for the reference loop */
    if (want && *want) {
        if (!strcmp(want, "avx512")) forced = dnnl_cpu_isa_avx512_core;
        else if (!strcmp(want, "avx2")) forced = dnnl_cpu_isa_avx2;
        else if (!strcmp(want, "generic")) forced = dnnl_cpu_isa_sse41;
        else if (!strcmp(want, "reference")) forced = -2;
        else
            fprintf(stderr, "keycut: warning: KC_ISA=%s is not one of avx512, avx2, generic, "
                            "reference; using the best path of this CPU\n", want);
    }
    __builtin_cpu_init();
    int cpu512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                 __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    g_simd = cpu512 && (forced == -1 || forced == dnnl_cpu_isa_avx512_core) ? 2 : 1;
    if (forced == -2) {
        g_path = PATH_PLAIN;
        snprintf(g_describe, sizeof g_describe, "plain C loop (KC_ISA=reference)");
        return;
    }
    if (forced >= 0) dnnl_set_max_cpu_isa((dnnl_cpu_isa_t)forced);
    const dnnl_version_t *v = dnnl_version();
    if (self_check(PATH_DNNL)) {
        g_path = PATH_DNNL;
        snprintf(g_describe, sizeof g_describe, "oneDNN %d.%d.%d %s", v->major, v->minor, v->patch,
                 isa_name(dnnl_get_effective_cpu_isa()));
        return;
    }
    fprintf(stderr, "keycut: warning: oneDNN %d.%d.%d (%s) failed the small-product check; "
                    "falling back to OpenBLAS\n", v->major, v->minor, v->patch,
            isa_name(dnnl_get_effective_cpu_isa()));
    if (self_check(PATH_OPENBLAS)) {
        g_path = PATH_OPENBLAS;
        snprintf(g_describe, sizeof g_describe, "OpenBLAS %s (fallback: oneDNN failed its check)",
                 openblas_get_corename());
        return;
    }
    fprintf(stderr, "keycut: warning: OpenBLAS (%s) failed the small-product check; falling back "
                    "to the plain C loop (slow)\n", openblas_get_corename());
    g_path = PATH_PLAIN;
    snprintf(g_describe, sizeof g_describe, "plain C loop (fallback: oneDNN and OpenBLAS failed their checks)");
}

int kc_gemm_init(void)
{
    pthread_once(&g_once, select_path);
    return 0;
}

const char *kc_gemm_describe(void)
{
    kc_gemm_init();
    return g_describe;
}

int kc_simd_level(void)
{
    kc_gemm_init();
    return g_simd;
}

void kc_gemm_nt(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                float beta, float *C, int ldc)
{
    kc_gemm_init();
    run(g_path, 1, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void kc_gemm_nn(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                float beta, float *C, int ldc)
{
    kc_gemm_init();
    run(g_path, 0, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}
