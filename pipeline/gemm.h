/* pipeline/gemm.h — the one place every hot float product of keycut goes through.
 *
 *   kc_gemm_nt:  C (M, N) = alpha A (M, K) B^T + beta C,  B stored (N, K)    row-major
 *   kc_gemm_nn:  C (M, N) = alpha A (M, K) B   + beta C,  B stored (K, N)    row-major
 *   (lda, ldb, ldc: row strides in floats; beta = 0 never reads C.)
 *
 * Backend: oneDNN's dnnl_sgemm, which picks its JIT kernels from the CPU's feature bits (CPUID),
 * never from a model table or an environment variable, so the products run at the machine's
 * rate on any x86-64 CPU.  oneDNN uses the same OpenMP runtime (GOMP) as keycut: called from
 * inside an OpenMP parallel region it runs single-threaded on the calling thread (vit.c gives each
 * thread its own rows); called outside one it uses omp_get_max_threads() threads.
 *
 * Paths (KC_ISA forces one, for tests and benchmarks; unset = the best the CPU has):
 *   KC_ISA=avx512    oneDNN limited to avx512_core      (dnnl_set_max_cpu_isa)
 *   KC_ISA=avx2      oneDNN limited to avx2
 *   KC_ISA=generic   oneDNN limited to sse41 (its lowest JIT level; 128-bit vectors)
 *   KC_ISA=reference the plain C loop below (tests only; slow)
 * The same level also selects the row-wise kernels of vit.c (kc_simd_level): AVX-512 code only
 * when the CPU has it and KC_ISA allows it, else the build's baseline (x86-64-v3, AVX2).
 *
 * Safety net: at first use (kc_gemm_init, thread-safe, idempotent) the chosen backend computes a
 * few small products (odd shapes, strides, alpha/beta, both layouts) that are compared with a plain
 * C loop in double; on a disagreement beyond 1e-4 of the largest |value| keycut prints one warning
 * line and falls back to the next path: oneDNN -> OpenBLAS (as loaded) -> the plain C loop.
 * (oneDNN's ISA cannot be lowered once it has run, hence OpenBLAS as the next step.)
 *
 *     kc_gemm_init();                         // optional: the first product does it
 *     fprintf(stderr, "%s\n", kc_gemm_describe());   // "oneDNN 2.6.3 avx512_core"
 *     kc_gemm_nt(T, 3 * D, D, 1.0f, xn, D, w_qkv, D, 0.0f, qkv, 3 * D);
 */
#ifndef KC_GEMM_H
#define KC_GEMM_H

/* Selects and checks the path once; returns 0 (a fallback always exists). */
int kc_gemm_init(void);
/* "oneDNN 2.6.3 avx512_core", "OpenBLAS 0.3.21 Haswell (fallback: ...)", "plain C loop". */
const char *kc_gemm_describe(void);
/* Row-wise kernel level: 2 = AVX-512 (F, BW, DQ, VL), 1 = AVX2 + FMA (the build's baseline). */
int kc_simd_level(void);

void kc_gemm_nt(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                float beta, float *C, int ldc);
void kc_gemm_nn(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                float beta, float *C, int ldc);

/* The plain C loop (double accumulation): the reference the tests and the self-check use.
 * trans_b = 0: B is (K, N); 1: B is (N, K). */
void kc_gemm_naive(int trans_b, int M, int N, int K, float alpha, const float *A, int lda,
                   const float *B, int ldb, float beta, float *C, int ldc);
#endif
