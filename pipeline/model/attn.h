/* pipeline/model/attn.h — one head's self-attention for a block of query rows, fused in one pass
 * through cache (head_dim 64: every ViT-S and ViT-B of DINO, SelfPatch, MoCo-v3, iBOT), in an
 * AVX-512 kernel and an AVX2 one (the build's baseline) that give the same bytes.
 *
 *   O_i = sum_t p_it v_t / sum_t p_it,   p_it = exp(s_it - max_t s_it),   s_it = scale q_i . k_t
 *   q: (rows, 64), k and v: (T, 64), all with row stride ld (the qkv rows of vit.c);
 *   out: (rows, 64) with row stride ldo.
 *
 * Layout.  The scores are computed transposed, S^T (T, KC_ATTN_ROWS), from q^T (64, KC_ATTN_ROWS)
 * (packed per call, scaled) and k read in place: one vector holds 16 query rows of one token, so
 * k is read as broadcasts straight from qkv (no transpose of k, no pack per head), the column max
 * comes with the tile, and the softmax runs down the columns.  P V then broadcasts p from S^T and
 * reads v rows in place.  The score block (T x 48 floats: 173 kB at 480x480) stays in L2 between
 * the three passes; nothing the size of (T, T) is ever written.
 *
 * Order of operations (fixed, so a row's result never depends on the other rows of its block, on
 * the block size or on the thread): s_it = sum over d = 0..63 in order of (scale q_id) k_td, one
 * FMA chain; max over t in order; p = kc_expf(s - max) (pipeline/model/fastmath.h); the sum of p over t
 * in order; the product P V as one FMA chain over t in order; then the product times 1 / sum.
 * tests/test_attn.c checks this against a double-precision loop, and split blocks bit for bit.
 *
 *     if (kc_attn_available(head_dim)) {
 *         float *work = kc_malloc(kc_attn_work_floats(T) * sizeof(float));     // per thread
 *         kc_attn_rows(rows, T, 0.125f, qkv + q0 * ld + h * 64, qkv + D + h * 64,
 *                      qkv + 2 * D + h * 64, ld, att + q0 * D + h * 64, D, work);
 *     }
 */
#ifndef KC_ATTN_H
#define KC_ATTN_H
#include <stddef.h>

/* Query rows per call (at most). */
#define KC_ATTN_ROWS 48

/* 1 when the fused kernel runs here: head_dim == 64 and the kernel of this CPU's level (AVX-512
 * where it has it and KC_ISA allows it, see pipeline/model/gemm.h kc_simd_level; else AVX2) passed
 * kc_attn_check_level (run once, thread-safe; a failure prints one warning line); else the caller
 * uses its products. */
int kc_attn_available(int head_dim);
/* "fused avx512", "fused avx2" or "products (...)": what kc_attn_available chose (provenance). */
const char *kc_attn_describe(void);
/* The start-up check of the kernel of level 2 (AVX-512: only where the CPU has it) or 1 (AVX2): a
 * small case against softmax and products in double; 0 when within 1e-4 of max |v| (*err: the
 * error found). */
int kc_attn_check_level(int level, double *err);
/* Floats of scratch kc_attn_rows needs for T tokens (one buffer per thread). */
size_t kc_attn_work_floats(int T);
/* out (rows, 64) = softmax(scale q k^T) v for 1 <= rows <= KC_ATTN_ROWS, T >= 1 (see above). */
void kc_attn_rows(int rows, int T, float scale, const float *q, const float *k, const float *v,
                  int ld, float *out, int ldo, float *work);
/* The same with the kernel of the given level (tests: both kernels on one machine). */
void kc_attn_rows_level(int level, int rows, int T, float scale, const float *q, const float *k,
                        const float *v, int ld, float *out, int ldo, float *work);

#endif
