/* pipeline/model/attn.c — fused attention for one head and a block of query rows (see attn.h). */
#include "pipeline/model/attn.h"

#include <immintrin.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "pipeline/model/fastmath.h"
#include "pipeline/model/gemm.h"
#include "pipeline/kc.h"

#if defined(__FAST_MATH__)
#error "pipeline/model/attn.c fixes its order of operations: build it without -ffast-math"
#endif

#define R KC_ATTN_ROWS /* query rows per block: 3 vectors of 16, or 6 of 8 */
#define HD 64          /* head_dim */
#define NT 8           /* tokens per score tile: 8 x 3 accumulators */
#define NR 6           /* query rows per P V tile: 6 x 4 accumulators */

/* Each kernel carries its target, so the file builds whatever -march the build uses (the clang
 * fuzz build has none); which one runs is decided at run time (check_once). */
#define T512 __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq")))
#define T256 __attribute__((target("avx2,fma")))
#define INLINE static inline __attribute__((always_inline))

static pthread_once_t g_check_once = PTHREAD_ONCE_INIT;
static int g_level;    /* 2: the AVX-512 kernel, 1: the AVX2 one (set with the check) */
static int g_check_ok;

static void attn_rows(int level, int rows, int T, float scale, const float *q, const float *k,
                      const float *v, int ld, float *out, int ldo, float *work);

static void check_once(void)
{
    double err = 0;
    g_level = kc_simd_level() >= 2 ? 2 : 1;
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return; /* products */
    g_check_ok = kc_attn_check_level(g_level, &err) == 0;
    if (!g_check_ok)
        kc_warn("fused attention (%s) is off by %.3g of max |v| against a plain loop on this CPU; "
                "attention runs on the products instead", g_level == 2 ? "AVX-512" : "AVX2", err);
}

int kc_attn_available(int head_dim)
{
    if (head_dim != HD) return 0;
    pthread_once(&g_check_once, check_once);
    return g_check_ok;
}

const char *kc_attn_describe(void)
{
    pthread_once(&g_check_once, check_once);
    return !g_check_ok ? "products (the fused kernel failed its check)" : g_level == 2 ? "fused avx512" : "fused avx2";
}

size_t kc_attn_work_floats(int T) { return 2 * (size_t)HD * R + (size_t)T * R + 16; }

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
#pragma GCC unroll 4
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

/* kc_expf (pipeline/model/fastmath.h) on 16 lanes, the same operations in the same order. */
T512 INLINE __m512 exp16(__m512 x)
{
    const __m512 lo = _mm512_set1_ps(-87.33654f), hi = _mm512_set1_ps(88.37f);
    const __m512 shifter = _mm512_set1_ps(12582912.0f);
    const __m512 xc = _mm512_min_ps(_mm512_max_ps(x, lo), hi);
    __m512 nf = _mm512_fmadd_ps(xc, _mm512_set1_ps(1.44269504088896341f), shifter);
    const __m512i n = _mm512_sub_epi32(_mm512_castps_si512(nf), _mm512_set1_epi32(0x4B400000));
    nf = _mm512_sub_ps(nf, shifter);
    __m512 r = _mm512_fmadd_ps(nf, _mm512_set1_ps(-0.693145752f), xc);
    r = _mm512_fmadd_ps(nf, _mm512_set1_ps(-1.42860677e-06f), r);
    __m512 p = _mm512_set1_ps(1.9899281082083029e-04f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3933654146320446e-03f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3332984761662707e-03f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1666464861392943e-02f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666666719008380e-01f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000000134832245e-01f));
    const __m512 e = _mm512_add_ps(_mm512_set1_ps(1.0f), _mm512_fmadd_ps(_mm512_mul_ps(r, r), p, r));
    const __m512 scale = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n, _mm512_set1_epi32(127)), 23));
    const __m512 y = _mm512_mul_ps(e, scale);
    return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, lo, _CMP_NLT_UQ), y); /* 0 where x < lo */
}

/* st rows 0..tc-1 (R columns) <- exp(st - mx); sum (3 vectors) += each row, in row order. */
T512 static void exp_rows(float *st, int tc, const __m512 *mx, __m512 *sum)
{
    __m512 s0 = sum[0], s1 = sum[1], s2 = sum[2];
    for (int t = 0; t < tc; t++, st += R) {
        const __m512 e0 = exp16(_mm512_sub_ps(_mm512_loadu_ps(st), mx[0]));
        const __m512 e1 = exp16(_mm512_sub_ps(_mm512_loadu_ps(st + 16), mx[1]));
        const __m512 e2 = exp16(_mm512_sub_ps(_mm512_loadu_ps(st + 32), mx[2]));
        _mm512_storeu_ps(st, e0);
        _mm512_storeu_ps(st + 16, e1);
        _mm512_storeu_ps(st + 32, e2);
        s0 = _mm512_add_ps(s0, e0);
        s1 = _mm512_add_ps(s1, e1);
        s2 = _mm512_add_ps(s2, e2);
    }
    sum[0] = s0, sum[1] = s1, sum[2] = s2;
}

/* acc (NR rows x 64, in memory between chunks) += p (tc, R) columns 0..NR-1 times v (tc, 64). */
T512 static void pv_chunk(int tc, const float *p, const float *v, int ld, float *acc_mem)
{
    __m512 acc[NR][4];
#pragma GCC unroll 6
    for (int r = 0; r < NR; r++)
#pragma GCC unroll 4
        for (int c = 0; c < 4; c++) acc[r][c] = _mm512_loadu_ps(acc_mem + r * HD + c * 16);
    for (int t = 0; t < tc; t++, p += R, v += ld) {
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
#pragma GCC unroll 6
    for (int r = 0; r < NR; r++)
#pragma GCC unroll 4
        for (int c = 0; c < 4; c++) _mm512_storeu_ps(acc_mem + r * HD + c * 16, acc[r][c]);
}

/* Tokens per chunk of the exp and P V passes: the chunk's p (TC x 48) and v (TC x 64) stay in L1
 * while all the row groups of the block use them. */
#define TC 64

T512 static void attn_rows_512(int rows, int T, float scale, const float *q, const float *k,
                               const float *v, int ld, float *out, int ldo, float *work)
{
    float *qt = (float *)(((uintptr_t)work + 63) & ~(uintptr_t)63); /* (HD, R) */
    float *acc = qt + HD * R;                                          /* (R, HD) */
    float *st = acc + R * HD;                                          /* (T, R) */
    for (int d = 0; d < HD; d++)
        for (int i = 0; i < R; i++) qt[d * R + i] = i < rows ? scale * q[(size_t)i * ld + d] : 0.0f;
    __m512 mx[3], sum[3];
    mx[0] = mx[1] = mx[2] = _mm512_set1_ps(-INFINITY);
    sum[0] = sum[1] = sum[2] = _mm512_setzero_ps();
    int t = 0;
    for (; t + NT <= T; t += NT) score_tile(NT, qt, k + (size_t)t * ld, ld, st + (size_t)t * R, mx);
    if (t < T) score_tail(T - t, qt, k + (size_t)t * ld, ld, st + (size_t)t * R, mx);
    const int groups = (rows + NR - 1) / NR;
    for (int i = 0; i < groups * NR * HD; i++) acc[i] = 0.0f;
    for (int t0 = 0; t0 < T; t0 += TC) {
        const int tc = T - t0 < TC ? T - t0 : TC;
        float *sc = st + (size_t)t0 * R;
        exp_rows(sc, tc, mx, sum);
        for (int g = 0; g < groups; g++) pv_chunk(tc, sc + g * NR, v + (size_t)t0 * ld, ld, acc + g * NR * HD);
    }
    float inv[R];
#pragma GCC unroll 4
    for (int c = 0; c < 3; c++) _mm512_storeu_ps(inv + c * 16, _mm512_div_ps(_mm512_set1_ps(1.0f), sum[c]));
    for (int i = 0; i < rows; i++) {
        const __m512 f = _mm512_set1_ps(inv[i]);
        float *o = out + (size_t)i * ldo;
#pragma GCC unroll 4
        for (int c = 0; c < 4; c++) _mm512_storeu_ps(o + c * 16, _mm512_mul_ps(_mm512_loadu_ps(acc + i * HD + c * 16), f));
    }
}

/* ---- AVX2 + FMA (the build's baseline): 8 lanes in 16 registers, the same operations in the same
 * order as the AVX-512 kernel above, so both give the same bytes.  Scores over half a block (24
 * query rows, 3 vectors) per tile of NT2 tokens; P V over 6 rows and 16 of the 64 columns. */
#define NT2 4

/* st (nt, R) columns 0..23 of the half at qt / st = tokens of k against qt (HD, R) columns 0..23;
 * mx (24) = max(mx, st). */
T256 INLINE void score_tile8(int nt, const float *qt, const float *k, int ld, float *st, float *mx)
{
    __m256 acc[NT2][3];
#pragma GCC unroll 4
    for (int j = 0; j < nt; j++) acc[j][0] = acc[j][1] = acc[j][2] = _mm256_setzero_ps();
    for (int d = 0; d < HD; d++) {
        const __m256 q0 = _mm256_loadu_ps(qt + d * R), q1 = _mm256_loadu_ps(qt + d * R + 8),
                     q2 = _mm256_loadu_ps(qt + d * R + 16);
#pragma GCC unroll 4
        for (int j = 0; j < nt; j++) {
            const __m256 kb = _mm256_broadcast_ss(k + (size_t)j * ld + d);
            acc[j][0] = _mm256_fmadd_ps(q0, kb, acc[j][0]);
            acc[j][1] = _mm256_fmadd_ps(q1, kb, acc[j][1]);
            acc[j][2] = _mm256_fmadd_ps(q2, kb, acc[j][2]);
        }
    }
#pragma GCC unroll 4
    for (int c = 0; c < 3; c++) {
        __m256 m = _mm256_loadu_ps(mx + c * 8);
#pragma GCC unroll 4
        for (int j = 0; j < nt; j++) {
            _mm256_storeu_ps(st + j * R + c * 8, acc[j][c]);
            m = _mm256_max_ps(m, acc[j][c]);
        }
        _mm256_storeu_ps(mx + c * 8, m);
    }
}

T256 static void score_tail8(int nt, const float *qt, const float *k, int ld, float *st, float *mx)
{
    switch (nt) {
    case 1: score_tile8(1, qt, k, ld, st, mx); break;
    case 2: score_tile8(2, qt, k, ld, st, mx); break;
    case 3: score_tile8(3, qt, k, ld, st, mx); break;
    default: break;
    }
}

/* kc_expf on 8 lanes (see exp16). */
T256 INLINE __m256 exp8(__m256 x)
{
    const __m256 lo = _mm256_set1_ps(-87.33654f), hi = _mm256_set1_ps(88.37f);
    const __m256 shifter = _mm256_set1_ps(12582912.0f);
    const __m256 xc = _mm256_min_ps(_mm256_max_ps(x, lo), hi);
    __m256 nf = _mm256_fmadd_ps(xc, _mm256_set1_ps(1.44269504088896341f), shifter);
    const __m256i n = _mm256_sub_epi32(_mm256_castps_si256(nf), _mm256_set1_epi32(0x4B400000));
    nf = _mm256_sub_ps(nf, shifter);
    __m256 r = _mm256_fmadd_ps(nf, _mm256_set1_ps(-0.693145752f), xc);
    r = _mm256_fmadd_ps(nf, _mm256_set1_ps(-1.42860677e-06f), r);
    __m256 p = _mm256_set1_ps(1.9899281082083029e-04f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3933654146320446e-03f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3332984761662707e-03f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1666464861392943e-02f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666666719008380e-01f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000000134832245e-01f));
    const __m256 e = _mm256_add_ps(_mm256_set1_ps(1.0f), _mm256_fmadd_ps(_mm256_mul_ps(r, r), p, r));
    const __m256 scale = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23));
    const __m256 y = _mm256_mul_ps(e, scale);
    return _mm256_and_ps(_mm256_cmp_ps(x, lo, _CMP_NLT_UQ), y); /* 0 where x < lo */
}

/* exp_rows on 8 lanes: sum (R) += each row of exp(st - mx), in row order. */
T256 static void exp_rows8(float *st, int tc, const float *mx, float *sum)
{
    __m256 s[R / 8];
    for (int c = 0; c < R / 8; c++) s[c] = _mm256_loadu_ps(sum + c * 8);
    for (int t = 0; t < tc; t++, st += R)
        for (int c = 0; c < R / 8; c++) {
            const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(st + c * 8), _mm256_loadu_ps(mx + c * 8)));
            _mm256_storeu_ps(st + c * 8, e);
            s[c] = _mm256_add_ps(s[c], e);
        }
    for (int c = 0; c < R / 8; c++) _mm256_storeu_ps(sum + c * 8, s[c]);
}

/* acc (NR rows, columns 0..15 of stride HD) += p (tc, R) columns 0..NR-1 times v (tc, 16). */
T256 static void pv_chunk8(int tc, const float *p, const float *v, int ld, float *acc_mem)
{
    __m256 acc[NR][2];
#pragma GCC unroll 6
    for (int r = 0; r < NR; r++)
#pragma GCC unroll 4
        for (int c = 0; c < 2; c++) acc[r][c] = _mm256_loadu_ps(acc_mem + r * HD + c * 8);
    for (int t = 0; t < tc; t++, p += R, v += ld) {
        const __m256 v0 = _mm256_loadu_ps(v), v1 = _mm256_loadu_ps(v + 8);
#pragma GCC unroll 6
        for (int r = 0; r < NR; r++) {
            const __m256 pb = _mm256_broadcast_ss(p + r);
            acc[r][0] = _mm256_fmadd_ps(v0, pb, acc[r][0]);
            acc[r][1] = _mm256_fmadd_ps(v1, pb, acc[r][1]);
        }
    }
#pragma GCC unroll 6
    for (int r = 0; r < NR; r++)
#pragma GCC unroll 4
        for (int c = 0; c < 2; c++) _mm256_storeu_ps(acc_mem + r * HD + c * 8, acc[r][c]);
}

T256 static void attn_rows_avx2(int rows, int T, float scale, const float *q, const float *k,
                           const float *v, int ld, float *out, int ldo, float *work)
{
    float *qt = (float *)(((uintptr_t)work + 63) & ~(uintptr_t)63); /* (HD, R) */
    float *acc = qt + HD * R;                                          /* (R, HD) */
    float *st = acc + R * HD;                                          /* (T, R) */
    for (int d = 0; d < HD; d++)
        for (int i = 0; i < R; i++) qt[d * R + i] = i < rows ? scale * q[(size_t)i * ld + d] : 0.0f;
    float mx[R], sum[R], inv[R];
    for (int i = 0; i < R; i++) mx[i] = -INFINITY, sum[i] = 0.0f;
    for (int half = 0; half < 2; half++) {
        const int c0 = half * (R / 2);
        int t = 0;
        for (; t + NT2 <= T; t += NT2)
            score_tile8(NT2, qt + c0, k + (size_t)t * ld, ld, st + (size_t)t * R + c0, mx + c0);
        if (t < T) score_tail8(T - t, qt + c0, k + (size_t)t * ld, ld, st + (size_t)t * R + c0, mx + c0);
    }
    const int groups = (rows + NR - 1) / NR;
    for (int i = 0; i < groups * NR * HD; i++) acc[i] = 0.0f;
    for (int t0 = 0; t0 < T; t0 += TC) {
        const int tc = T - t0 < TC ? T - t0 : TC;
        float *sc = st + (size_t)t0 * R;
        exp_rows8(sc, tc, mx, sum);
        for (int c = 0; c < HD; c += 16)
            for (int g = 0; g < groups; g++)
                pv_chunk8(tc, sc + g * NR, v + (size_t)t0 * ld + c, ld, acc + g * NR * HD + c);
    }
    for (int c = 0; c < R; c += 8) _mm256_storeu_ps(inv + c, _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_loadu_ps(sum + c)));
    for (int i = 0; i < rows; i++) {
        const __m256 f = _mm256_set1_ps(inv[i]);
        float *o = out + (size_t)i * ldo;
        for (int c = 0; c < HD; c += 8) _mm256_storeu_ps(o + c, _mm256_mul_ps(_mm256_loadu_ps(acc + i * HD + c), f));
    }
}

static void attn_rows(int level, int rows, int T, float scale, const float *q, const float *k,
                      const float *v, int ld, float *out, int ldo, float *work)
{
    if (level >= 2) attn_rows_512(rows, T, scale, q, k, v, ld, out, ldo, work);
    else attn_rows_avx2(rows, T, scale, q, k, v, ld, out, ldo, work);
}

/* The safety net (pipeline/model/gemm.h's, for this kernel): 37 tokens, 13 query rows, tails of the
 * tiles, against softmax and products in double. */
int kc_attn_check_level(int level, double *err)
{
    enum { CT = 37, CR = 13, LD = 3 * HD + 5 };
    float *qkv = malloc(sizeof(float) * CT * LD), *out = malloc(sizeof(float) * CR * HD);
    float *work = malloc(sizeof(float) * kc_attn_work_floats(CT));
    if (!qkv || !out || !work) {
        free(qkv), free(out), free(work);
        *err = INFINITY;
        return -1;
    }
    uint32_t x = 12345;
    for (int i = 0; i < CT * LD; i++) {
        x = x * 1664525u + 1013904223u;
        qkv[i] = (float)((int)(x >> 8) % 2001 - 1000) / 250.0f; /* in [-4, 4] */
    }
    const float *q = qkv, *k = qkv + HD, *v = qkv + 2 * HD;
    attn_rows(level, CR, CT, 0.125f, q, k, v, LD, out, HD, work);
    double worst = 0, vmax = 0, s[CT];
    for (int t = 0; t < CT; t++)
        for (int d = 0; d < HD; d++) vmax = fmax(vmax, fabs(v[t * LD + d]));
    for (int i = 0; i < CR; i++) {
        double mx = -INFINITY, sum = 0;
        for (int t = 0; t < CT; t++) {
            double dot = 0;
            for (int d = 0; d < HD; d++) dot += (double)q[i * LD + d] * k[t * LD + d];
            s[t] = 0.125 * dot;
            mx = fmax(mx, s[t]);
        }
        for (int t = 0; t < CT; t++) sum += s[t] = exp(s[t] - mx);
        for (int d = 0; d < HD; d++) {
            double o = 0;
            for (int t = 0; t < CT; t++) o += s[t] * v[t * LD + d];
            const double diff = fabs(o / sum - out[i * HD + d]);
            worst = diff > worst || diff != diff ? diff : worst; /* (NaN counts as a failure) */
        }
    }
    free(qkv), free(out), free(work);
    *err = worst / vmax;
    return *err <= 1e-4 ? 0 : -1;
}

void kc_attn_rows_level(int level, int rows, int T, float scale, const float *q, const float *k,
                        const float *v, int ld, float *out, int ldo, float *work)
{
    if (rows < 1 || T < 1) return;
    attn_rows(level, rows, T, scale, q, k, v, ld, out, ldo, work);
}

void kc_attn_rows(int rows, int T, float scale, const float *q, const float *k, const float *v,
                  int ld, float *out, int ldo, float *work)
{
    pthread_once(&g_check_once, check_once);
    kc_attn_rows_level(g_level, rows, T, scale, q, k, v, ld, out, ldo, work);
}
