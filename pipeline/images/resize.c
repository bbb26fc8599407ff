/* pipeline/images/resize.c — the preprocessing policies and the two resamplers they need, each a
 * bit-exact re-implementation of its reference.
 *
 * Pillow 9.4 Image.resize(size, LANCZOS) on RGB (libImaging/Resample.c): separable, horizontal
 * pass first (only the rows the vertical pass needs), then vertical.  Per output coordinate xx:
 *     scale = in / out;  fscale = max(scale, 1);  support = 3 * fscale
 *     center = (xx + 0.5) * scale
 *     xmin = max(0, (int)(center - support + 0.5)),  xmax = min(in, (int)(center + support + 0.5))
 *     k[x] = lanczos3((x + xmin - center + 0.5) / fscale),  normalised to sum 1 (in double),
 *     then fixed point: (int)(k * 2^22 +- 0.5)  (rounded away from zero)
 *     out = clip8((2^21 + sum src * k) >> 22)
 * When a dimension is unchanged its pass is skipped; same size returns a copy.
 *
 * OpenCV 4.6 cv2.resize(INTER_LINEAR) on uint8 (imgproc/src/resize.cpp): fx = (float)((dx + 0.5)
 * * in/out - 0.5), sx = floor(fx), fx -= sx; columns clamp (sx < 0 -> sx = 0, fx = 0; sx >= in - 1
 * -> sx = in - 1, fx = 0); rows keep their weights and clamp only the row index; coefficients
 * saturate_cast<short>((1 - fx) * 2048), (fx * 2048).
 * Horizontal: int sums S = a0 * s[sx] + a1 * s[sx + 3] (or 2048 * s at the clamped edges).
 * Vertical: OpenCV's 8-bit kernel (its SIMD code and the scalar specialisation of
 * VResizeLinear<uchar, ...> for the tail compute the same thing, which is NOT the exact
 * (S0 * b0 + S1 * b1 + 2^21) >> 22 of the generic template):
 *     ((((S0 >> 4) * b0) >> 16) + (((S1 >> 4) * b1) >> 16) + 2) >> 2
 * An exact 2x downscale in both axes is INTER_AREA in OpenCV ((a + b + c + d + 2) >> 2).
 */
#include "pipeline/images/resize.h"

#include <immintrin.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/kc.h"

static const float IMAGENET_MEAN[3] = {0.485f, 0.456f, 0.406f};
static const float IMAGENET_STD[3] = {0.229f, 0.224f, 0.225f};
static const float DAVIS_STD[3] = {0.228f, 0.224f, 0.225f};

int policy_parse(const char *name, kc_policy *p)
{
    if (!strcmp(name, "square480")) *p = POLICY_SQUARE480;
    else if (!strcmp(name, "short480")) *p = POLICY_SHORT480;
    else if (!strcmp(name, "native16")) *p = POLICY_NATIVE16;
    else if (!strcmp(name, "square224")) *p = POLICY_SQUARE224;
    else if (!strcmp(name, "square448")) *p = POLICY_SQUARE448;
    else if (!strcmp(name, "round")) *p = POLICY_ROUND;
    else return kc_fail("unknown resize policy '%s' (expected square480, short480, native16, square224, square448 or round)", name);
    return 0;
}

const char *policy_name(kc_policy p)
{
    switch (p) {
    case POLICY_SQUARE480: return "square480";
    case POLICY_SHORT480: return "short480";
    case POLICY_NATIVE16: return "native16";
    case POLICY_SQUARE224: return "square224";
    case POLICY_SQUARE448: return "square448";
    case POLICY_ROUND: return "round";
    }
    return "unknown";
}

/* p ceil(side / p): the side rounded up to a multiple of the patch. */
static int round_up(int side, int patch) { return (side + patch - 1) / patch * patch; }
/* p round(side / p) with Python 3's round (TokenCut's int(round(w / patch_size)) * patch_size): a
 * remainder of exactly half a patch goes to the even quotient.  side / p is a double there; its
 * exact halves are representable and no other quotient rounds across one, so integers give the
 * same answer. */
static int round_nearest(int side, int patch)
{
    int q = side / patch, r = side % patch;
    if (2 * r > patch || (2 * r == patch && (q & 1))) q++;
    return q * patch;
}

void policy_describe(kc_policy p, int patch, char *buf, size_t size)
{
    if (patch < 1) patch = 1;
    const char *in_std = "x/255, mean (0.485,0.456,0.406), std (0.229,0.224,0.225)";
    switch (p) {
    case POLICY_SQUARE480:
    case POLICY_SQUARE224:
    case POLICY_SQUARE448: {
        const int S = p == POLICY_SQUARE480 ? 480 : p == POLICY_SQUARE224 ? 224 : 448, R = round_up(S, patch);
        char side[64] = "";
        if (R != S) snprintf(side, sizeof side, " (%d rounded up to a multiple of patch %d)", S, patch);
        if (p == POLICY_SQUARE480) snprintf(buf, size, "square480: %dx%d%s Lanczos (Pillow 9.4), %s", R, R, side, in_std);
        else
            snprintf(buf, size, "%s: %dx%d%s bilinear with antialias (Pillow 9.4, torchvision Resize((%d, %d))), %s",
                     policy_name(p), R, R, side, R, R, in_std);
        return;
    }
    case POLICY_SHORT480: {
        /* patches dividing 32 divide 480 and every multiple of 64: the rounding changes nothing */
        char round[80] = "";
        if (32 % patch) snprintf(round, sizeof round, " each side then rounded up to a multiple of patch %d,", patch);
        snprintf(buf, size,
                 "short480: short side 480, long side floor(480*long/short/64)*64,%s bilinear (OpenCV 4.6), "
                 "x/255, mean (0.485,0.456,0.406), std (0.228,0.224,0.225)",
                 round);
        return;
    }
    case POLICY_NATIVE16:
        snprintf(buf, size, "native16: no resize, %s, zero padding after normalisation to a multiple of the patch size",
                 in_std);
        return;
    case POLICY_ROUND:
        snprintf(buf, size, "round: each side rounded to the nearest multiple of patch %d (halves to even), Lanczos "
                 "(Pillow 9.4), %s", patch, in_std);
        return;
    }
    snprintf(buf, size, "unknown");
}

void policy_size(kc_policy p, int patch, int w, int h, int *out_w, int *out_h)
{
    if (patch < 1) patch = 1;
    switch (p) {
    case POLICY_SQUARE480:
        *out_w = *out_h = round_up(480, patch);
        return;
    case POLICY_SQUARE224:
        *out_w = *out_h = round_up(224, patch);
        return;
    case POLICY_SQUARE448:
        *out_w = *out_h = round_up(448, patch);
        return;
    case POLICY_SHORT480: {
        /* DINO's DAVIS code: short side 480, long side floor(480 * long / short / 64) * 64,
         * computed as ints over a float (a square image becomes 480 x 448 there: w is the long
         * side on a tie); then each side rounded up to a multiple of the patch (a no-op for
         * patches dividing 32, so 16 and 8 keep DINO's sizes; 14 gives a short side of 490). */
        long long s = w < h ? w : h, l = w < h ? h : w;
        int lo = (int)(((480.0 * (double)l / (double)s) / 64.0)) * 64;
        if (w < h) {
            *out_w = 480;
            *out_h = lo;
        } else if (h < w) {
            *out_h = 480;
            *out_w = lo;
        } else {
            *out_h = 480;
            *out_w = 448;
        }
        *out_w = round_up(*out_w, patch);
        *out_h = round_up(*out_h, patch);
        return;
    }
    case POLICY_NATIVE16:
        *out_w = w;
        *out_h = h;
        return;
    case POLICY_ROUND:
        *out_w = round_nearest(w, patch);
        *out_h = round_nearest(h, patch);
        return;
    }
}

void policy_grid(kc_policy p, int patch, int w, int h, int *grid_h, int *grid_w)
{
    if (patch < 1) patch = 1;
    int ow, oh;
    policy_size(p, patch, w, h, &ow, &oh);
    *grid_h = (oh + patch - 1) / patch;
    *grid_w = (ow + patch - 1) / patch;
}

/* ---- Pillow Lanczos ------------------------------------------------------------------------- */

#define PIL_PRECISION_BITS (32 - 8 - 2)

static double sinc_filter(double x)
{
    if (x == 0.0) return 1.0;
    x = x * M_PI;
    return sin(x) / x;
}

static double lanczos_filter(double x)
{
    if (-3.0 <= x && x < 3.0) return sinc_filter(x) * sinc_filter(x / 3);
    return 0.0;
}

/* Pillow's BILINEAR: the triangle, support 1 (widened by the scale when reducing: antialiased). */
static double triangle_filter(double x)
{
    if (x < 0.0) x = -x;
    if (x < 1.0) return 1.0 - x;
    return 0.0;
}

typedef struct pil_filter {
    double (*fn)(double);
    double support;
} pil_filter;
static const pil_filter PIL_LANCZOS = {lanczos_filter, 3.0}, PIL_BILINEAR = {triangle_filter, 1.0};

/* Fixed-point coefficients: (out_size, ksize) int32 and bounds (out_size, 2) = (xmin, count). */
static int pil_coeffs(int in_size, int out_size, pil_filter filter, int32_t **kk_out, int **bounds_out)
{
    double scale = (double)((float)in_size - 0.0f) / out_size, filterscale = scale;
    if (filterscale < 1.0) filterscale = 1.0;
    double support = filter.support * filterscale;
    int ksize = (int)ceil(support) * 2 + 1;
    double *k = kc_malloc(sizeof(double) * ksize);
    int32_t *kk = kc_calloc((size_t)out_size * ksize, sizeof(int32_t));
    int *bounds = kc_malloc(sizeof(int) * 2 * out_size);
    for (int xx = 0; xx < out_size; xx++) {
        double center = 0.0f + (xx + 0.5) * scale;
        double ww = 0.0, ss = 1.0 / filterscale;
        int xmin = (int)(center - support + 0.5);
        if (xmin < 0) xmin = 0;
        int xmax = (int)(center + support + 0.5);
        if (xmax > in_size) xmax = in_size;
        xmax -= xmin;
        for (int x = 0; x < xmax; x++) {
            double wv = filter.fn((x + xmin - center + 0.5) * ss);
            k[x] = wv;
            ww += wv;
        }
        for (int x = 0; x < xmax; x++) {
            if (ww != 0.0) k[x] /= ww;
            double v = k[x] * (1 << PIL_PRECISION_BITS);
            kk[(size_t)xx * ksize + x] = k[x] < 0 ? (int32_t)(-0.5 + v) : (int32_t)(0.5 + v);
        }
        bounds[2 * xx] = xmin;
        bounds[2 * xx + 1] = xmax;
    }
    free(k);
    *kk_out = kk;
    *bounds_out = bounds;
    return ksize;
}

static inline uint8_t pil_clip8(int32_t v)
{
    if (v >= (1 << PIL_PRECISION_BITS << 8)) return 255;
    if (v <= 0) return 0;
    return (uint8_t)(v >> PIL_PRECISION_BITS);
}

#define T256 __attribute__((target("avx2"))) /* (builds without -march too; run only with AVX2) */

static void lanczos_row_scalar(const uint8_t *row, int xx0, int dw, const int32_t *kh, int ksh, const int *bh, uint8_t *o);

T256 static inline __m128i pil_pixel(const uint8_t *p) /* R, G, B and the next byte, as int32 */
{
    int32_t v;
    memcpy(&v, p, 4);
    return _mm_cvtepu8_epi32(_mm_cvtsi32_si128(v));
}

/* One row of the horizontal pass: o (dw, 3) from row (sw, 3, readable ksh + 2 pixels further).
 * Two output pixels per 256-bit vector (R, G, B and an unused lane each); the integer sums are the
 * scalar ones (integer addition: any order gives the same bytes). */
T256 static void lanczos_row(const uint8_t *row, int dw, const int32_t *kh, int ksh, const int *bh, uint8_t *o)
{
    const __m256i half = _mm256_set1_epi32(1 << (PIL_PRECISION_BITS - 1));
    int xx = 0;
    for (; xx + 2 <= dw; xx += 2) {
        const int32_t *k0 = kh + (size_t)xx * ksh, *k1 = k0 + ksh;
        const uint8_t *p0 = row + (size_t)bh[2 * xx] * 3, *p1 = row + (size_t)bh[2 * xx + 2] * 3;
        const int n = bh[2 * xx + 1] > bh[2 * xx + 3] ? bh[2 * xx + 1] : bh[2 * xx + 3];
        __m256i acc = half;
        for (int x = 0; x < n; x++) { /* past its own count a filter's coefficients are 0 */
            const __m256i px = _mm256_set_m128i(pil_pixel(p1 + 3 * x), pil_pixel(p0 + 3 * x));
            const __m256i kx = _mm256_set_m128i(_mm_set1_epi32(k1[x]), _mm_set1_epi32(k0[x]));
            acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(px, kx));
        }
        int32_t sum[8];
        _mm256_storeu_si256((__m256i *)sum, acc);
        for (int c = 0; c < 3; c++) {
            o[3 * xx + c] = pil_clip8(sum[c]);
            o[3 * xx + 3 + c] = pil_clip8(sum[4 + c]);
        }
    }
    lanczos_row_scalar(row, xx, dw, kh, ksh, bh, o);
}

/* Output pixels xx0..dw-1 of one row of the horizontal pass, one at a time (no AVX2 needed). */
static void lanczos_row_scalar(const uint8_t *row, int xx0, int dw, const int32_t *kh, int ksh, const int *bh, uint8_t *o)
{
    for (int xx = xx0; xx < dw; xx++) {
        const int32_t *k = kh + (size_t)xx * ksh;
        const uint8_t *p = row + (size_t)bh[2 * xx] * 3;
        int32_t s0 = 1 << (PIL_PRECISION_BITS - 1), s1 = s0, s2 = s0;
        for (int x = 0; x < bh[2 * xx + 1]; x++) {
            s0 += p[3 * x] * k[x];
            s1 += p[3 * x + 1] * k[x];
            s2 += p[3 * x + 2] * k[x];
        }
        o[3 * xx] = pil_clip8(s0);
        o[3 * xx + 1] = pil_clip8(s1);
        o[3 * xx + 2] = pil_clip8(s2);
    }
}

/* Pillow's ImagingResample: the horizontal pass, then the vertical one over the rows it needs;
 * the same integer sums for any filter. */
static void resize_pillow(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh, pil_filter filter)
{
    if (sw == dw && sh == dh) {
        memcpy(dst, src, (size_t)sw * sh * 3);
        return;
    }
    int32_t *kh = NULL, *kv = NULL;
    int *bh = NULL, *bv = NULL;
    int ksh = pil_coeffs(sw, dw, filter, &kh, &bh);
    int ksv = pil_coeffs(sh, dh, filter, &kv, &bv);
    /* Horizontal pass over the source rows the vertical pass reads. */
    int y_first = bv[0], y_last = bv[2 * dh - 2] + bv[2 * dh - 1];
    const uint8_t *mid = src; /* (mid_h, dw, 3) or the source itself */
    int mid_h = sh;
    uint8_t *tmp = NULL;
    if (sw != dw) {
        mid_h = y_last - y_first;
        tmp = kc_malloc((size_t)mid_h * dw * 3);
        /* a source row with room after it: a pixel is read as 4 bytes, and the shorter filter of a
         * pair of outputs reads up to ksh pixels past its own end (with coefficient 0) */
        uint8_t *row = kc_calloc((size_t)(sw + ksh + 2) * 3, 1);
        const int avx2 = __builtin_cpu_supports("avx2");
        for (int y = 0; y < mid_h; y++) {
            memcpy(row, src + (size_t)(y + y_first) * sw * 3, (size_t)sw * 3);
            if (avx2) lanczos_row(row, dw, kh, ksh, bh, tmp + (size_t)y * dw * 3);
            else lanczos_row_scalar(row, 0, dw, kh, ksh, bh, tmp + (size_t)y * dw * 3);
        }
        free(row);
        mid = tmp;
        for (int yy = 0; yy < dh; yy++) bv[2 * yy] -= y_first;
    }
    if (sh != dh) {
        int32_t *acc = kc_malloc(sizeof(int32_t) * (size_t)dw * 3);
        for (int yy = 0; yy < dh; yy++) { /* the same integer sums, taken a source row at a time */
            const int32_t *k = kv + (size_t)yy * ksv;
            int ymin = bv[2 * yy], n = bv[2 * yy + 1];
            uint8_t *o = dst + (size_t)yy * dw * 3;
            for (int xx = 0; xx < dw * 3; xx++) acc[xx] = 1 << (PIL_PRECISION_BITS - 1);
            for (int y = 0; y < n; y++) {
                const uint8_t *r = mid + (size_t)(y + ymin) * dw * 3;
                const int32_t ky = k[y];
#pragma omp simd
                for (int xx = 0; xx < dw * 3; xx++) acc[xx] += r[xx] * ky;
            }
            for (int xx = 0; xx < dw * 3; xx++) o[xx] = pil_clip8(acc[xx]);
        }
        free(acc);
    } else {
        memcpy(dst, mid, (size_t)dh * dw * 3);
    }
    free(tmp);
    free(kh);
    free(kv);
    free(bh);
    free(bv);
}

void resize_lanczos_pillow(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh)
{
    resize_pillow(src, sw, sh, dst, dw, dh, PIL_LANCZOS);
}

void resize_bilinear_pillow(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh)
{
    resize_pillow(src, sw, sh, dst, dw, dh, PIL_BILINEAR);
}

/* ---- OpenCV bilinear ------------------------------------------------------------------------ */

#define CV_COEF_BITS 11
#define CV_COEF_SCALE (1 << CV_COEF_BITS)

static inline short cv_sat_short(float v)
{
    int r = (int)lrintf(v); /* cvRound: round half to even */
    return (short)(r < -32768 ? -32768 : r > 32767 ? 32767 : r);
}

/* Per output coordinate: source index (clamped) and two fixed-point weights. */
static void cv_coeffs(int in_size, int out_size, int clamp, int *ofs, short *alpha)
{
    double scale = 1.0 / ((double)out_size / in_size);
    for (int d = 0; d < out_size; d++) {
        float f = (float)((d + 0.5) * scale - 0.5);
        int s = (int)floorf(f);
        f -= (float)s;
        if (clamp && s < 0) {
            f = 0.f;
            s = 0;
        }
        if (clamp && s >= in_size - 1) {
            f = 0.f;
            s = in_size - 1;
        }
        ofs[d] = s;
        alpha[2 * d] = cv_sat_short((1.f - f) * CV_COEF_SCALE);
        alpha[2 * d + 1] = cv_sat_short(f * CV_COEF_SCALE);
    }
}

static void cv_area2x(const uint8_t *src, int sw, uint8_t *dst, int dw, int dh)
{
    for (int y = 0; y < dh; y++) {
        const uint8_t *r0 = src + (size_t)(2 * y) * sw * 3, *r1 = r0 + (size_t)sw * 3;
        uint8_t *o = dst + (size_t)y * dw * 3;
        for (int x = 0; x < dw; x++)
            for (int c = 0; c < 3; c++)
                o[3 * x + c] = (uint8_t)((r0[6 * x + c] + r0[6 * x + 3 + c] + r1[6 * x + c] + r1[6 * x + 3 + c] + 2) >> 2);
    }
}

void resize_bilinear_cv(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh)
{
    if (sw == dw && sh == dh) {
        memcpy(dst, src, (size_t)sw * sh * 3);
        return;
    }
    if (sw == 2 * dw && sh == 2 * dh) {
        cv_area2x(src, sw, dst, dw, dh);
        return;
    }
    int *xofs = kc_malloc(sizeof(int) * dw), *yofs = kc_malloc(sizeof(int) * dh);
    short *alpha = kc_malloc(sizeof(short) * 2 * dw), *beta = kc_malloc(sizeof(short) * 2 * dh);
    cv_coeffs(sw, dw, 1, xofs, alpha); /* columns clamped with their weights */
    cv_coeffs(sh, dh, 0, yofs, beta);  /* rows: weights kept, row indices clamped below */
    int width = dw * 3;
    int32_t *rows = kc_malloc(sizeof(int32_t) * 2 * width); /* two horizontally resized rows */
    int32_t *hrow[2] = {rows, rows + width};
    int have[2] = {-1, -1};
    for (int dy = 0; dy < dh; dy++) {
        /* The two source rows the vertical pass mixes, each clamped to the image (OpenCV keeps
         * the unclamped weights, whose sum may differ from 2048 by one). */
        int sy0 = yofs[dy], sy1 = sy0 + 1;
        sy0 = sy0 < 0 ? 0 : sy0 > sh - 1 ? sh - 1 : sy0;
        sy1 = sy1 < 0 ? 0 : sy1 > sh - 1 ? sh - 1 : sy1;
        int need[2] = {sy0, sy1};
        for (int k = 0; k < 2; k++) {
            if (have[k] == need[k]) continue;
            if (k == 0 && have[1] == need[0]) {
                int32_t *t = hrow[0];
                hrow[0] = hrow[1];
                hrow[1] = t;
                have[0] = have[1];
                have[1] = -1;
                continue;
            }
            const uint8_t *s = src + (size_t)need[k] * sw * 3;
            int32_t *d = hrow[k];
            for (int dx = 0; dx < dw; dx++) {
                int sx = xofs[dx] * 3, sx1 = xofs[dx] + 1 < sw ? sx + 3 : sx;
                int a0 = alpha[2 * dx], a1 = alpha[2 * dx + 1];
                for (int c = 0; c < 3; c++) d[3 * dx + c] = s[sx + c] * a0 + s[sx1 + c] * a1;
            }
            have[k] = need[k];
        }
        const int32_t *S0 = hrow[0], *S1 = hrow[1];
        int b0 = beta[2 * dy], b1 = beta[2 * dy + 1];
        uint8_t *o = dst + (size_t)dy * width;
        /* OpenCV's 8-bit vertical kernel (SIMD and its scalar specialisation alike). */
        for (int x = 0; x < width; x++) {
            int v = ((((S0[x] >> 4) * b0) >> 16) + (((S1[x] >> 4) * b1) >> 16) + 2) >> 2;
            o[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    }
    free(rows);
    free(xofs);
    free(yofs);
    free(alpha);
    free(beta);
}

/* ---- policies ------------------------------------------------------------------------------- */

int policy_prepare(const kc_image *img, kc_policy p, int patch, float **chw, int *H, int *W)
{
    *chw = NULL;
    if (patch <= 0) return kc_fail("invalid patch size %d", patch);
    int w, h;
    policy_size(p, patch, img->w, img->h, &w, &h);
    if (p == POLICY_NATIVE16 && (img->w < patch || img->h < patch))
        return kc_fail("image of %dx%d is smaller than one %dx%d patch (policy native16)", img->w, img->h,
                       patch, patch);
    if (w < patch || h < patch) return kc_fail("image of %dx%d too small for policy %s", img->w, img->h, policy_name(p));
    const uint8_t *px = img->rgb;
    uint8_t *resized = NULL;
    if (p != POLICY_NATIVE16) {
        resized = kc_malloc((size_t)w * h * 3);
        if (p == POLICY_SQUARE480 || p == POLICY_ROUND) resize_lanczos_pillow(img->rgb, img->w, img->h, resized, w, h);
        else if (p == POLICY_SHORT480) resize_bilinear_cv(img->rgb, img->w, img->h, resized, w, h);
        else resize_bilinear_pillow(img->rgb, img->w, img->h, resized, w, h);
        px = resized;
    }
    const float *std = p == POLICY_SHORT480 ? DAVIS_STD : IMAGENET_STD;
    /* native16 pads bottom/right; the resized policies are already multiples of the patch */
    const int Hp = round_up(h, patch), Wp = round_up(w, patch), ch = h, cw = w;
    float *out = kc_calloc((size_t)3 * Hp * Wp, sizeof(float));
    /* ((v / 255 - mean) / std in float, as torchvision): 256 values per channel, computed once */
    float lut[3][256];
    for (int c = 0; c < 3; c++)
        for (int v = 0; v < 256; v++) lut[c][v] = ((float)v / 255.0f - IMAGENET_MEAN[c]) / std[c];
    for (int y = 0; y < ch; y++) {
        const uint8_t *row = px + (size_t)y * w * 3;
        float *o0 = out + (size_t)y * Wp, *o1 = o0 + (size_t)Hp * Wp, *o2 = o1 + (size_t)Hp * Wp;
        for (int x = 0; x < cw; x++) {
            o0[x] = lut[0][row[3 * x]];
            o1[x] = lut[1][row[3 * x + 1]];
            o2[x] = lut[2][row[3 * x + 2]];
        }
    }
    free(resized);
    *chw = out;
    *H = Hp;
    *W = Wp;
    return 0;
}

void resize_nearest_pillow(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh)
{
    /* Pillow's ImagingScaleAffine: the source coordinate is accumulated, not recomputed. */
    double ax = (double)sw / dw, ay = (double)sh / dh;
    int *xin = kc_malloc(sizeof *xin * (size_t)dw);
    double xo = ax * 0.5;
    for (int x = 0; x < dw; x++) {
        int xi = xo < 0 ? -1 : (int)xo;
        xin[x] = xi < 0 ? 0 : xi >= sw ? sw - 1 : xi;
        xo += ax;
    }
    double yo = ay * 0.5;
    for (int y = 0; y < dh; y++) {
        int yi = yo < 0 ? -1 : (int)yo;
        yi = yi < 0 ? 0 : yi >= sh ? sh - 1 : yi;
        const uint8_t *s = src + (size_t)yi * sw;
        uint8_t *d = dst + (size_t)y * dw;
        for (int x = 0; x < dw; x++) d[x] = s[xin[x]];
        yo += ay;
    }
    free(xin);
}
