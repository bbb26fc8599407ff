/* pipeline/model/fastmath.h — branch-free float exp, erf and GELU that the compiler vectorises.
 *
 * The ViT spends most of its non-GEMM time in softmax (exp) and GELU (erf).  libm's expf / erff
 * are scalar calls; these inline versions are plain arithmetic with no branches, so a loop over
 * them (with `#pragma omp simd`) becomes AVX2 code.  Accuracy (tests/test_vit.c checks it against
 * double-precision libm over a dense range):
 *
 *   kc_expf(x):  x = n ln2 + r, |r| <= ln2/2 (Cody-Waite, two-part ln2);
 *                exp(r) = 1 + r + r^2 P5(r) (least-squares fit on Chebyshev nodes, 2e-10);
 *                result = exp(r) * 2^n built from the exponent bits.  Relative error < 2e-7 on
 *                [-87.3, 88.3]; 0 below -87.33 (no denormals), clamped at 88.37.
 *   kc_erff(x):  |x| < 1:  x P8(x^2)  (fit to erf(x)/x, 1e-12 before rounding);
 *                |x| >= 1: sign(x) (1 - erfc(|x|)), erfc(z) = t exp(-z^2 + Q9(t - 1/2)),
 *                t = 1 / (1 + z/2) (the classic Chebyshev form, our own least-squares fit on
 *                z in [1/2, 10], 4e-9 before rounding).  Relative error < 3e-7.
 *   kc_gelu(x):  x Phi(x) with Phi(x) = (1 + erf(x / sqrt 2)) / 2, computed for x < -sqrt(1/2) as
 *                erfc(|x| / sqrt 2) / 2 so that the negative tail keeps its relative accuracy
 *                (PyTorch's exact GELU, not the tanh approximation).
 *
 *     #pragma omp simd
 *     for (int i = 0; i < n; i++) y[i] = kc_expf(x[i]);
 */
#ifndef KC_FASTMATH_H
#define KC_FASTMATH_H
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline __attribute__((always_inline)) float kc__bits_to_float(int32_t i)
{
    float f;
    memcpy(&f, &i, sizeof f);
    return f;
}

static inline __attribute__((always_inline)) int32_t kc__float_to_bits(float f)
{
    int32_t i;
    memcpy(&i, &f, sizeof i);
    return i;
}

/* c ? a : b without control flow (GCC with -ftrapping-math does not if-convert float ternaries
 * once it has sunk their operands into branches, and the loop then stays scalar). */
static inline __attribute__((always_inline)) float kc__select(int c, float a, float b)
{
    int32_t m = -(int32_t)c;
    return kc__bits_to_float((kc__float_to_bits(a) & m) | (kc__float_to_bits(b) & ~m));
}

static inline __attribute__((always_inline)) float kc_expf(float x)
{
    const float lo = -87.33654f, hi = 88.37f;
    float xc = kc__select(x < lo, lo, x);
    xc = kc__select(xc > hi, hi, xc);
    /* n = round(x / ln2) with the 1.5 * 2^23 trick (round to nearest even in the FPU) */
    const float shifter = 12582912.0f;
    float nf = fmaf(xc, 1.44269504088896341f, shifter);
    int32_t n = kc__float_to_bits(nf) - 0x4B400000; /* the integer sits in the low mantissa bits */
    nf -= shifter;
    float r = fmaf(nf, -0.693145752f, xc);           /* ln2 high part: exact product */
    r = fmaf(nf, -1.42860677e-06f, r);              /* ln2 low part */
    float p = 1.9899281082083029e-04f;
    p = fmaf(p, r, 1.3933654146320446e-03f);
    p = fmaf(p, r, 8.3332984761662707e-03f);
    p = fmaf(p, r, 4.1666464861392943e-02f);
    p = fmaf(p, r, 1.6666666719008380e-01f);
    p = fmaf(p, r, 5.0000000134832245e-01f);
    float e = 1.0f + fmaf(r * r, p, r);
    float scale = kc__bits_to_float((n + 127) << 23);
    float y = e * scale;
    return kc__select(x < lo, 0.0f, y);
}

/* erfc(z) for z >= 1/2 (z is clamped to [1/2, 10]). */
static inline __attribute__((always_inline)) float kc__erfc_tail(float z)
{
    float zc = kc__select(z < 0.5f, 0.5f, z);
    zc = kc__select(zc > 10.0f, 10.0f, zc);
    float t = 1.0f / (1.0f + 0.5f * zc);
    float u = t - 0.5f;
    float q = 0.26333201902409942f;
    q = fmaf(q, u, -0.050295829287625826f);
    q = fmaf(q, u, -0.29286584136317062f);
    q = fmaf(q, u, 0.11332664790107415f);
    q = fmaf(q, u, 0.28209662726152168f);
    q = fmaf(q, u, -0.15798189973417723f);
    q = fmaf(q, u, -0.37515981141239291f);
    q = fmaf(q, u, 0.1893733887162265f);
    q = fmaf(q, u, 1.345286423978078f);
    q = fmaf(q, u, -0.67179408426067544f);
    return t * kc_expf(q - zc * zc);
}

/* erf(x) / x for |x| < 1, as a polynomial in s = x^2. */
static inline __attribute__((always_inline)) float kc__erf_small(float s)
{
    float p = 1.0595150031941513e-06f;
    p = fmaf(p, s, -1.3911650652440344e-05f);
    p = fmaf(p, s, 1.1956938507225382e-04f);
    p = fmaf(p, s, -8.5426698437909463e-04f);
    p = fmaf(p, s, 5.2237849713613121e-03f);
    p = fmaf(p, s, -2.6866133615540338e-02f);
    p = fmaf(p, s, 1.1283791313353260e-01f);
    p = fmaf(p, s, -3.7612638889859756e-01f);
    p = fmaf(p, s, 1.1283791670946939f);
    return p;
}

static inline __attribute__((always_inline)) float kc_erff(float x)
{
    float a = fabsf(x);
    float small = x * kc__erf_small(x * x);
    float big = 1.0f - kc__erfc_tail(a);
    big = copysignf(big, x);
    return kc__select(a < 1.0f, small, big);
}

/* Exact GELU: x * (1 + erf(x / sqrt 2)) / 2. */
static inline __attribute__((always_inline)) float kc_gelu(float x)
{
    float z = x * 0.70710678118654752f;
    float a = fabsf(z);
    float phi_small = 0.5f + 0.5f * z * kc__erf_small(z * z);
    float tail = 0.5f * kc__erfc_tail(a);
    /* below zero the tail takes over at |z| = 1/2, before 1/2 + z erf(z)/2 cancels */
    float phi_big = kc__select(z < 0.0f, tail, 1.0f - tail);
    float limit = kc__select(z < 0.0f, 0.5f, 1.0f);
    int use_small = a < limit;
    return x * kc__select(use_small, phi_small, phi_big);
}

/* Array forms (in place). */
void kc_vexpf(float *x, size_t n);
void kc_vgelu(float *x, size_t n);
#endif
