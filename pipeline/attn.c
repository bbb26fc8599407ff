/* pipeline/attn.c — fused attention for one head and a block of query rows (see attn.h). */
#include "pipeline/attn.h"

#include <immintrin.h>
#include <stdint.h>

#include "pipeline/fastmath.h"
#include "pipeline/gemm.h"

#if defined(__FAST_MATH__)
#error "pipeline/attn.c fixes its order of operations: build it without -ffast-math"
#endif

#define R KC_ATTN_ROWS /* query rows per block: 3 vectors of 16 */
#define HD 64          /* head_dim */
#define NT 8           /* tokens per score tile: 8 x 3 accumulators */
#define NR 6           /* query rows per P V tile: 6 x 4 accumulators */

#define T512 __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,prefer-vector-width=512")))
#define INLINE static inline __attribute__((always_inline))

int kc_attn_available(int head_dim) { return head_dim == HD && kc_simd_level() >= 2; }

size_t kc_attn_work_floats(int T) { return (size_t)HD * R + (size_t)T * R + 3 * R + 16; }

/* st (nt, R) = tokens t..t+nt-1 of k against the packed queries qt (HD, R); mx = max(mx, st). */
T512 INLINE void score_tile(int nt, const float *qt, const float *k, int ld, float *st, __m512 *mx)
{
    __m512 acc[NT][3];
#pragma GCC unroll 8
    for (int j = 0; j < nt; j++) acc[j][0] = acc[j][1] = acc[j][2] = _mm512_setzero_ps();
    for (int d = 0; d < HD; d++) {
        const __m512 q0 = _mm512_loadu_ps(qt + d * R), q1 = _mm512_loadu_ps(qt + d * R + 16),
                     q2 = _mm512_loadu_ps(qt + d * R + 32);
#pragma GCC unroll 8
        for (int j = 0; j < nt; j++) {
            const __m512 kb = _mm512_set1_ps(k[(size_t)j * ld + d]);
            acc[j][0] = _mm512_fmadd_ps(q0, kb, acc[j][0]);
            acc[j][1] = _mm512_fmadd_ps(q1, kb, acc[j][1]);
            acc[j][2] = _mm512_fmadd_ps(q2, kb, acc[j][2]);
        }
    }
#pragma GCC unroll 8
    for (int j = 0; j < nt; j++)
        for (int c = 0; c < 3; c++) {
            _mm512_storeu_ps(st + j * R + c * 16, acc[j][c]);
            mx[c] = _mm512_max_ps(mx[c], acc[j][c]);
        }
}

/* Score tiles of 1..NT-1 tokens, each with its own unrolled body. */
T512 static void score_tail(int nt, const float *qt, const float *k, int ld, float *st, __m512 *mx)
{
    switch (nt) {
    case 1: score_tile(1, qt, k, ld, st, mx); break;
    case 2: score_tile(2, qt, k, ld, st, mx); break;
    case 3: score_tile(3, qt, k, ld, st, mx); break;
    case 4: score_tile(4, qt, k, ld, st, mx); break;
    case 5: score_tile(5, qt, k, ld, st, mx); break;
    case 6: score_tile(6, qt, k, ld, st, mx); break;
    case 7: score_tile(7, qt, k, ld, st, mx); break;
    default: break;
    }
}

/* st (T, R) <- exp(st - mx) column by column; sum (R) = the column sums, in token order. */
T512 static void exp_columns(float *st, int T, const float *mx, float *sum)
{
    for (int i = 0; i < R; i++) sum[i] = 0;
    for (int t = 0; t < T; t++) {
        float *row = st + (size_t)t * R;
#pragma omp simd
        for (int i = 0; i < R; i++) {
            const float e = kc_expf(row[i] - mx[i]);
            row[i] = e;
            sum[i] += e;
        }
    }
}

/* out rows i0..i0+n-1 (n <= NR) = (sum_t p_ti v_t) * inv[i]: p from st (T, R) columns i0.. */
T512 static void pv_tile(int n, int T, const float *st, int i0, const float *v, int ld,
                         const float *inv, float *out, int ldo)
{
    __m512 acc[NR][4];
#pragma GCC unroll 6
    for (int r = 0; r < NR; r++) acc[r][0] = acc[r][1] = acc[r][2] = acc[r][3] = _mm512_setzero_ps();
    const float *p = st + i0;
    for (int t = 0; t < T; t++, p += R, v += ld) {
        const __m512 v0 = _mm512_loadu_ps(v), v1 = _mm512_loadu_ps(v + 16),
                     v2 = _mm512_loadu_ps(v + 32), v3 = _mm512_loadu_ps(v + 48);
#pragma GCC unroll 6
        for (int r = 0; r < NR; r++) {
            const __m512 pb = _mm512_set1_ps(p[r]);
            acc[r][0] = _mm512_fmadd_ps(v0, pb, acc[r][0]);
            acc[r][1] = _mm512_fmadd_ps(v1, pb, acc[r][1]);
            acc[r][2] = _mm512_fmadd_ps(v2, pb, acc[r][2]);
            acc[r][3] = _mm512_fmadd_ps(v3, pb, acc[r][3]);
        }
    }
    for (int r = 0; r < n; r++) {
        const __m512 f = _mm512_set1_ps(inv[i0 + r]);
        float *o = out + (size_t)(i0 + r) * ldo;
        for (int c = 0; c < 4; c++) _mm512_storeu_ps(o + c * 16, _mm512_mul_ps(acc[r][c], f));
    }
}

T512 static void attn_rows_512(int rows, int T, float scale, const float *q, const float *k,
                               const float *v, int ld, float *out, int ldo, float *work)
{
    float *qt = (float *)(((uintptr_t)work + 63) & ~(uintptr_t)63); /* (HD, R) */
    float *st = qt + HD * R;                                           /* (T, R) */
    float *mxs = st + (size_t)T * R, *sum = mxs + R, *inv = sum + R;   /* (R) each */
    for (int d = 0; d < HD; d++)
        for (int i = 0; i < R; i++) qt[d * R + i] = i < rows ? scale * q[(size_t)i * ld + d] : 0.0f;
    __m512 mx[3];
    mx[0] = mx[1] = mx[2] = _mm512_set1_ps(-INFINITY);
    int t = 0;
    for (; t + NT <= T; t += NT) score_tile(NT, qt, k + (size_t)t * ld, ld, st + (size_t)t * R, mx);
    if (t < T) score_tail(T - t, qt, k + (size_t)t * ld, ld, st + (size_t)t * R, mx);
    for (int c = 0; c < 3; c++) _mm512_storeu_ps(mxs + c * 16, mx[c]);
    exp_columns(st, T, mxs, sum);
    for (int i = 0; i < R; i++) inv[i] = 1.0f / sum[i];
    for (int i0 = 0; i0 < rows; i0 += NR)
        pv_tile(rows - i0 < NR ? rows - i0 : NR, T, st, i0, v, ld, inv, out, ldo);
}

void kc_attn_rows(int rows, int T, float scale, const float *q, const float *k, const float *v,
                  int ld, float *out, int ldo, float *work)
{
    if (rows < 1 || T < 1) return;
    attn_rows_512(rows, T, scale, q, k, v, ld, out, ldo, work);
}
