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
#define NR 6           /* query rows per P V tile */

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

/* ---- the kernels: one text for both vector widths ----------------------------------------------
 * ATTN_KERNEL(B, TARGET, NT, PV) defines the kernel for vectors of B bits, W = B / 32 float lanes:
 * B = 512 (AVX-512) and B = 256 (AVX2 + FMA, the build's baseline).  In it __m##B stands for __m512
 * or __m256 and _mm##B##_fmadd_ps for _mm512_fmadd_ps or _mm256_fmadd_ps.  Every lane runs the
 * same operations in the same order at both widths; the tile sizes (NT tokens per score tile, PV
 * vectors of columns per P V tile: fewer at 256 bits, which has 16 registers, not 32) only decide
 * which lanes run together, so both kernels give the same bytes.
 *
 *   score_tile##B   a tile of S^T: nt tokens x 3 vectors of query rows, the column max with it
 *   score_tail##B   the last 1..NT-1 tokens, as tiles of 4, 2 and 1 tokens in token order
 *   exp##B          kc_expf (pipeline/model/fastmath.h) on W lanes
 *   exp_rows##B     p = exp(s - max) in place, and the column sums in row order
 *   pv_chunk##B     the product P V for NR query rows and PV vectors of columns
 *   attn_rows_##B   one block: q^T packed, the scores, then exp and P V chunk by chunk, then 1 / sum */

/* Tokens per chunk of the exp and P V passes: the chunk's p (TC x 48) and v (TC x 64) stay in L1
 * while all the row groups of the block use them. */
#define TC 64

/* y where x >= lo (or x is NaN), else 0: the last step of exp##B. */
T512 INLINE __m512 keep_not_below512(__m512 x, __m512 lo, __m512 y)
{
    return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, lo, _CMP_NLT_UQ), y);
}
T256 INLINE __m256 keep_not_below256(__m256 x, __m256 lo, __m256 y)
{
    return _mm256_and_ps(_mm256_cmp_ps(x, lo, _CMP_NLT_UQ), y);
}

/* qt (HD, R) = scale q^T, the columns from `rows` on zero; q: (rows, HD) with row stride ld.
 * qt is work rounded up to 64 bytes; returns it. */
static float *pack_queries(int rows, float scale, const float *q, int ld, float *work)
{
    float *qt = (float *)(((uintptr_t)work + 63) & ~(uintptr_t)63);
    for (int d = 0; d < HD; d++)
        for (int i = 0; i < R; i++) qt[d * R + i] = i < rows ? scale * q[(size_t)i * ld + d] : 0.0f;
    return qt;
}

/* The scores.  score_tile##B: st (nt, R) columns 0..3W-1 = tokens 0..nt-1 of k (row stride ld)
 * against qt (HD, R) columns 0..3W-1 (the caller offsets both to one group of 3W query rows);
 * mx (3 vectors) = max(mx, st), token by token.  score_tail##B: the same for 1 <= nt < NT. */
#define ATTN_SCORES(B, TARGET, NT)                                                                                  \
    TARGET INLINE void score_tile##B(int nt, const float *qt, const float *k, int ld, float *st, __m##B *mx)        \
    {                                                                                                               \
        __m##B acc[NT][3];                                                                                          \
        _Pragma("GCC unroll 8")                                                                                     \
        for (int j = 0; j < nt; j++) acc[j][0] = acc[j][1] = acc[j][2] = _mm##B##_setzero_ps();                     \
        for (int d = 0; d < HD; d++) {                                                                              \
            const __m##B q0 = _mm##B##_loadu_ps(qt + d * R), q1 = _mm##B##_loadu_ps(qt + d * R + B / 32),           \
                         q2 = _mm##B##_loadu_ps(qt + d * R + 2 * (B / 32));                                         \
            _Pragma("GCC unroll 8")                                                                                 \
            for (int j = 0; j < nt; j++) {                                                                          \
                const __m##B kb = _mm##B##_set1_ps(k[(size_t)j * ld + d]);                                          \
                acc[j][0] = _mm##B##_fmadd_ps(q0, kb, acc[j][0]);                                                   \
                acc[j][1] = _mm##B##_fmadd_ps(q1, kb, acc[j][1]);                                                   \
                acc[j][2] = _mm##B##_fmadd_ps(q2, kb, acc[j][2]);                                                   \
            }                                                                                                       \
        }                                                                                                           \
        _Pragma("GCC unroll 8")                                                                                     \
        for (int j = 0; j < nt; j++)                                                                                \
            _Pragma("GCC unroll 4")                                                                                 \
            for (int c = 0; c < 3; c++) {                                                                           \
                _mm##B##_storeu_ps(st + j * R + c * (B / 32), acc[j][c]);                                           \
                mx[c] = _mm##B##_max_ps(mx[c], acc[j][c]);                                                          \
            }                                                                                                       \
    }                                                                                                               \
    _Static_assert(NT == 4 || NT == 8, "score_tail" #B ": tails as tiles of 4, 2 and 1 tokens");                    \
    TARGET static void score_tail##B(int nt, const float *qt, const float *k, int ld, float *st, __m##B *mx)        \
    {                                                                                                               \
        if (NT > 4 && (nt & 4)) score_tile##B(4, qt, k, ld, st, mx), k += (size_t)4 * ld, st += 4 * R;              \
        if (nt & 2) score_tile##B(2, qt, k, ld, st, mx), k += (size_t)2 * ld, st += 2 * R;                          \
        if (nt & 1) score_tile##B(1, qt, k, ld, st, mx);                                                            \
    }

/* The softmax's numerator.  exp##B: kc_expf on W lanes, the same operations in the same order.
 * exp_rows##B: st rows 0..tc-1 (R columns) <- exp(st - mx); sum (R / W vectors) += each row, in
 * row order. */
#define ATTN_EXP(B, TARGET)                                                                                         \
    TARGET INLINE __m##B exp##B(__m##B x)                                                                           \
    {                                                                                                               \
        const __m##B lo = _mm##B##_set1_ps(-87.33654f), hi = _mm##B##_set1_ps(88.37f);                              \
        const __m##B shifter = _mm##B##_set1_ps(12582912.0f);                                                       \
        const __m##B xc = _mm##B##_min_ps(_mm##B##_max_ps(x, lo), hi);                                              \
        __m##B nf = _mm##B##_fmadd_ps(xc, _mm##B##_set1_ps(1.44269504088896341f), shifter);                         \
        const __m##B##i n = _mm##B##_sub_epi32(_mm##B##_castps_si##B(nf), _mm##B##_set1_epi32(0x4B400000));         \
        nf = _mm##B##_sub_ps(nf, shifter);                                                                          \
        __m##B r = _mm##B##_fmadd_ps(nf, _mm##B##_set1_ps(-0.693145752f), xc);                                      \
        r = _mm##B##_fmadd_ps(nf, _mm##B##_set1_ps(-1.42860677e-06f), r);                                           \
        __m##B p = _mm##B##_set1_ps(1.9899281082083029e-04f);                                                       \
        p = _mm##B##_fmadd_ps(p, r, _mm##B##_set1_ps(1.3933654146320446e-03f));                                     \
        p = _mm##B##_fmadd_ps(p, r, _mm##B##_set1_ps(8.3332984761662707e-03f));                                     \
        p = _mm##B##_fmadd_ps(p, r, _mm##B##_set1_ps(4.1666464861392943e-02f));                                     \
        p = _mm##B##_fmadd_ps(p, r, _mm##B##_set1_ps(1.6666666719008380e-01f));                                     \
        p = _mm##B##_fmadd_ps(p, r, _mm##B##_set1_ps(5.0000000134832245e-01f));                                     \
        const __m##B e = _mm##B##_add_ps(_mm##B##_set1_ps(1.0f), _mm##B##_fmadd_ps(_mm##B##_mul_ps(r, r), p, r));   \
        const __m##B scale =                                                                                        \
            _mm##B##_castsi##B##_ps(_mm##B##_slli_epi32(_mm##B##_add_epi32(n, _mm##B##_set1_epi32(127)), 23));      \
        return keep_not_below##B(x, lo, _mm##B##_mul_ps(e, scale)); /* 0 where x < lo */                            \
    }                                                                                                               \
    TARGET static void exp_rows##B(float *st, int tc, const __m##B *mx, __m##B *sum)                                \
    {                                                                                                               \
        __m##B s[R / (B / 32)];                                                                                     \
        _Pragma("GCC unroll 8")                                                                                     \
        for (int c = 0; c < R / (B / 32); c++) s[c] = sum[c];                                                       \
        for (int t = 0; t < tc; t++, st += R)                                                                       \
            _Pragma("GCC unroll 8")                                                                                 \
            for (int c = 0; c < R / (B / 32); c++) {                                                                \
                const __m##B e = exp##B(_mm##B##_sub_ps(_mm##B##_loadu_ps(st + c * (B / 32)), mx[c]));              \
                _mm##B##_storeu_ps(st + c * (B / 32), e);                                                           \
                s[c] = _mm##B##_add_ps(s[c], e);                                                                    \
            }                                                                                                       \
        _Pragma("GCC unroll 8")                                                                                     \
        for (int c = 0; c < R / (B / 32); c++) sum[c] = s[c];                                                       \
    }

/* The product P V.  acc (NR rows of stride HD, columns 0..PV W-1; in memory between chunks) +=
 * p (tc, R) columns 0..NR-1 times v (tc, PV W) with row stride ld, one FMA chain over t. */
#define ATTN_PV(B, TARGET, PV)                                                                                      \
    TARGET static void pv_chunk##B(int tc, const float *p, const float *v, int ld, float *acc_mem)                  \
    {                                                                                                               \
        __m##B acc[NR][PV];                                                                                         \
        _Pragma("GCC unroll 6")                                                                                     \
        for (int r = 0; r < NR; r++)                                                                                \
            _Pragma("GCC unroll 4")                                                                                 \
            for (int c = 0; c < PV; c++) acc[r][c] = _mm##B##_loadu_ps(acc_mem + r * HD + c * (B / 32));            \
        for (int t = 0; t < tc; t++, p += R, v += ld) {                                                             \
            __m##B vt[PV];                                                                                          \
            _Pragma("GCC unroll 4")                                                                                 \
            for (int c = 0; c < PV; c++) vt[c] = _mm##B##_loadu_ps(v + c * (B / 32));                               \
            _Pragma("GCC unroll 6")                                                                                 \
            for (int r = 0; r < NR; r++) {                                                                          \
                const __m##B pb = _mm##B##_set1_ps(p[r]);                                                           \
                _Pragma("GCC unroll 4")                                                                             \
                for (int c = 0; c < PV; c++) acc[r][c] = _mm##B##_fmadd_ps(vt[c], pb, acc[r][c]);                   \
            }                                                                                                       \
        }                                                                                                           \
        _Pragma("GCC unroll 6")                                                                                     \
        for (int r = 0; r < NR; r++)                                                                                \
            _Pragma("GCC unroll 4")                                                                                 \
            for (int c = 0; c < PV; c++) _mm##B##_storeu_ps(acc_mem + r * HD + c * (B / 32), acc[r][c]);            \
    }

/* One block: out (rows, HD) with row stride ldo = softmax(scale q k^T) v (see attn.h).  work:
 * qt (HD, R), acc (R, HD), st (T, R). */
#define ATTN_ROWS(B, TARGET, NT, PV)                                                                                \
    TARGET static void attn_rows_##B(int rows, int T, float scale, const float *q, const float *k,                  \
                                     const float *v, int ld, float *out, int ldo, float *work)                      \
    {                                                                                                               \
        float *qt = pack_queries(rows, scale, q, ld, work); /* (HD, R) */                                           \
        float *acc = qt + HD * R;                            /* (R, HD) */                                          \
        float *st = acc + R * HD;                            /* (T, R) */                                           \
        __m##B mx[R / (B / 32)], sum[R / (B / 32)];                                                                 \
        for (int c = 0; c < R / (B / 32); c++) mx[c] = _mm##B##_set1_ps(-INFINITY), sum[c] = _mm##B##_setzero_ps(); \
        for (int c0 = 0; c0 < R; c0 += 3 * (B / 32)) { /* groups of 3W query rows */                                \
            float *qg = qt + c0, *sg = st + c0;                                                                     \
            __m##B *mg = mx + c0 / (B / 32);                                                                        \
            int t = 0;                                                                                              \
            for (; t + NT <= T; t += NT) score_tile##B(NT, qg, k + (size_t)t * ld, ld, sg + (size_t)t * R, mg);     \
            if (t < T) score_tail##B(T - t, qg, k + (size_t)t * ld, ld, sg + (size_t)t * R, mg);                    \
        }                                                                                                           \
        const int groups = (rows + NR - 1) / NR;                                                                    \
        for (int i = 0; i < groups * NR * HD; i++) acc[i] = 0.0f;                                                   \
        for (int t0 = 0; t0 < T; t0 += TC) {                                                                        \
            const int tc = T - t0 < TC ? T - t0 : TC;                                                               \
            float *sc = st + (size_t)t0 * R;                                                                        \
            exp_rows##B(sc, tc, mx, sum);                                                                           \
            for (int c = 0; c < HD; c += PV * (B / 32))                                                             \
                for (int g = 0; g < groups; g++)                                                                    \
                    pv_chunk##B(tc, sc + g * NR, v + (size_t)t0 * ld + c, ld, acc + g * NR * HD + c);               \
        }                                                                                                           \
        float inv[R];                                                                                               \
        _Pragma("GCC unroll 8")                                                                                     \
        for (int c = 0; c < R / (B / 32); c++)                                                                      \
            _mm##B##_storeu_ps(inv + c * (B / 32), _mm##B##_div_ps(_mm##B##_set1_ps(1.0f), sum[c]));                \
        for (int i = 0; i < rows; i++) {                                                                            \
            const __m##B f = _mm##B##_set1_ps(inv[i]);                                                              \
            float *o = out + (size_t)i * ldo;                                                                       \
            _Pragma("GCC unroll 8")                                                                                 \
            for (int c = 0; c < HD; c += B / 32)                                                                    \
                _mm##B##_storeu_ps(o + c, _mm##B##_mul_ps(_mm##B##_loadu_ps(acc + i * HD + c), f));                 \
        }                                                                                                           \
    }

#define ATTN_KERNEL(B, TARGET, NT, PV)                                                                              \
    ATTN_SCORES(B, TARGET, NT)                                                                                      \
    ATTN_EXP(B, TARGET)                                                                                             \
    ATTN_PV(B, TARGET, PV)                                                                                          \
    ATTN_ROWS(B, TARGET, NT, PV)

/* AVX-512: score tiles of 8 tokens x 48 query rows (24 accumulators), P V tiles of 6 rows x all
 * 64 columns (24 accumulators). */
ATTN_KERNEL(512, T512, 8, 4)
/* AVX2: score tiles of 4 tokens x 24 query rows (12 accumulators; the block in two groups), P V
 * tiles of 6 rows x 16 columns (12 accumulators; the columns in four slices). */
ATTN_KERNEL(256, T256, 4, 2)

static void attn_rows(int level, int rows, int T, float scale, const float *q, const float *k,
                      const float *v, int ld, float *out, int ldo, float *work)
{
    if (level >= 2) attn_rows_512(rows, T, scale, q, k, v, ld, out, ldo, work);
    else attn_rows_256(rows, T, scale, q, k, v, ld, out, ldo, work);
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
