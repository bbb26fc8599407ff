/* pipeline/model/gemm.h — the one place every hot float product of keycut goes through.
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
 *
 * Linear layers (kc_linear): C (M, N) = op(A (M, K) W^T + b), W stored (N, K) as in PyTorch, with
 *   op = KC_LINEAR_BIAS       C  = A W^T + b
 *        KC_LINEAR_GELU       C  = GELU_erf(A W^T + b)
 *        KC_LINEAR_RESIDUAL   C += A W^T + b            (the residual stream)
 * through oneDNN's matmul primitive: W is reordered ONCE (kc_linear_new) into the blocked layout
 * the primitive asks for (format "any"), and bias / GELU / the residual sum are its post-ops, so
 * no second pass over C.  Used only where that primitive runs oneDNN's own blocked kernels (brgemm,
 * "brg:avx512_core" and up): those accumulate each row of C in an order that does not depend on M
 * nor on the row's place in the call, so a product split over threads or chunks of rows gives the
 * same bytes as one call (checked at first use; tests/test_gemm.c too).  Elsewhere (KC_ISA=avx2,
 * generic, reference, a fallback, or a layer brgemm does not take, e.g. a C with row stride > N)
 * kc_linear_new returns NULL and the caller runs kc_gemm_nt + its own row loops.
 * The matmul is checked on the first kc_linear call like the products at start (bias, GELU,
 * residual against the double loop; rows split in two calls against one, bit for bit); a
 * disagreement leaves the linear layers on kc_gemm_nt with one warning line.  kc_gemm_describe
 * names the matmul once that check has run ("...; linear layers matmul brg:avx512_core").
 *
 *     kc_linear *L = kc_linear_new(M, D, fc1_w, D, fc1_b, KC_LINEAR_GELU, D, M);  // NULL: not here
 *     if (!L || kc_linear_run(L, rows, xn, hidden) < 0) { kc_gemm_nt(...); bias_gelu(...); }
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

enum { KC_LINEAR_BIAS = 0, KC_LINEAR_GELU = 1, KC_LINEAR_RESIDUAL = 2 };
typedef struct kc_linear kc_linear;
/* W (N, K) with row stride ldw, bias (N) (both copied); A rows have stride lda, C rows ldc.
 * NULL when the matmul path is not in use (see above) or out of memory. */
kc_linear *kc_linear_new(int N, int K, const float *W, int ldw, const float *bias, int op, int lda,
                         int ldc);
/* C (M rows) = op(A W^T + b); thread-safe (one call per thread at a time, any M >= 0).
 * 0 done, -1 not done (no primitive for this M): the caller computes it the other way. */
int kc_linear_run(kc_linear *L, int M, const float *A, float *C);
void kc_linear_free(kc_linear *L);
/* 1 when kc_linear_new gives layers (the matmul path is in use). */
int kc_linear_available(void);

/* The plain C loop (double accumulation): the reference the tests and the self-check use.
 * trans_b = 0: B is (K, N); 1: B is (N, K). */
void kc_gemm_naive(int trans_b, int M, int N, int K, float alpha, const float *A, int lda,
                   const float *B, int ldb, float beta, float *C, int ldc);
#endif
