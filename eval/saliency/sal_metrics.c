/* eval/saliency/sal_metrics.c — TokenCut's saliency metrics; the formulas are in sal_metrics.h.
 *
 * Float32 steps are written one operation per statement; keycut builds with -std=c11, under which
 * GCC does not contract a * b + c into an FMA (torch's CPU kernels do not either: each tensor op
 * is its own pass).
 */
#include "eval/saliency/sal_metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/kc.h"

double sal_threshold(int k)
{
    /* numpy's arange fills start + i * delta, delta = (start + step) - start: here k * (1.0 / 255) */
    return (double)k * (1.0 / 255);
}

/* How many thresholds v passes: the first k with !(v > t_k) (t increasing; NaN passes none). */
static int passes(const double *t, double v)
{
    int lo = 0, hi = SAL_BINS; /* answer in [lo, hi] */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (v > t[mid]) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

int sal_image_score(const uint8_t *gt, const double *pred, long n_pixels, sal_image *out)
{
    if (n_pixels < 1) return kc_fail("saliency: an image of %ld pixels", n_pixels);
    double t[SAL_BINS];
    for (int k = 0; k < SAL_BINS; k++) t[k] = sal_threshold(k);
    /* hist[c]: pixels passing exactly c thresholds; hist_fg: those of them in the foreground */
    long hist[SAL_BINS + 1] = {0}, hist_fg[SAL_BINS + 1] = {0};
    long inter = 0, uni = 0, equal = 0, fg = 0, pred_fg = 0;
    for (long i = 0; i < n_pixels; i++) {
        int g = gt[i] != 0, p = pred[i] > 0.5;
        int c = passes(t, pred[i]);
        hist[c]++;
        hist_fg[c] += g;
        fg += g;
        pred_fg += p;
        inter += g & p;
        uni += g | p;
        equal += g == p;
    }
    out->fg = fg;
    out->pred_fg = pred_fg;
    out->pixels = n_pixels;
    out->iou = uni ? (double)((float)inter / (float)uni) : (double)NAN;
    out->accuracy = (double)((float)equal / (float)n_pixels);
    /* area_k = pixels passing more than k thresholds, TP_k the same in the foreground */
    long area = 0, tp = 0;
    for (int k = SAL_BINS - 1; k >= 0; k--) {
        area += hist[k + 1];
        tp += hist_fg[k + 1];
        out->precision[k] = area ? (float)tp / (float)area : 1.0f;
        out->recall[k] = fg ? (float)tp / (float)fg : 1.0f;
    }
    return 0;
}

float sal_image_fbeta(const sal_image *im, int k)
{
    float p = im->precision[k], r = im->recall[k];
    float num = 1.3f * p;
    num = num * r;
    float den = 0.3f * p;
    den = den + r;
    if (den == 0) return 0; /* 0 / 0 (p = r = 0): TokenCut's NaN -> 0 */
    float f = num / den;
    return f != f ? 0.0f : f;
}

/* ceil(log2(x)), 1 for x <= 2 (c10::utils::CeilLog2) */
static long ceil_log2(long x)
{
    if (x <= 2) return 1;
    return 64 - __builtin_clzll((unsigned long long)(x - 1));
}

float sal_torch_cascade_f32(const float *x, long n, long stride)
{
    enum { LEVELS = 4 };
    long power = ceil_log2(n) / LEVELS;
    if (power < 4) power = 4;
    const long step = 1L << power, mask = step - 1;
    float acc[LEVELS] = {0};
    long i = 0;
    while (i + step <= n) {
        for (long j = 0; j < step; j++, i++) acc[0] += x[i * stride];
        for (int l = 1; l < LEVELS; l++) {
            acc[l] += acc[l - 1];
            acc[l - 1] = 0;
            if (i & (mask << (l * power))) break;
        }
    }
    for (; i < n; i++) acc[0] += x[i * stride];
    for (int l = 1; l < LEVELS; l++) acc[0] += acc[l];
    return acc[0];
}

float sal_torch_rowsum_f32(const float *x, long n, long stride)
{
    enum { ILP = 4 };
    const long m = n / ILP;
    float part[ILP];
    for (int l = 0; l < ILP; l++) part[l] = sal_torch_cascade_f32(x + l * stride, m, ILP * stride);
    for (long i = m * ILP; i < n; i++) part[0] += x[i * stride];
    for (int l = 1; l < ILP; l++) part[0] += part[l];
    return part[0];
}

void sal_torch_colsum_f32(const float *x, long rows, long cols, float *out)
{
    /* cols >= 8 (one AVX2 vector): vectorized_outer_sum, blocks of 4 vectors of 8 by multi_row_sum;
     * fewer: scalar_outer_sum, blocks of 4 columns.  The rest by row_sum.  The kernel adds its sum
     * to the zero-filled output. */
    const long block = cols >= 8 ? 32 : 4;
    const long direct = cols / block * block;
    for (long j = 0; j < cols; j++) {
        float s = j < direct ? sal_torch_cascade_f32(x + j, rows, cols) : sal_torch_rowsum_f32(x + j, rows, cols);
        out[j] = 0.0f + s;
    }
}

int sal_summarise(const sal_image *imgs, int n, sal_summary *out)
{
    if (n < 1) return kc_fail("saliency: no images to summarise");
    memset(out, 0, sizeof *out);
    out->images = n;
    double iou = 0, acc = 0;
    for (int i = 0; i < n; i++) {
        iou += imgs[i].iou;
        acc += imgs[i].accuracy;
    }
    out->iou = iou / n;
    out->accuracy = acc / n;
    float *f = kc_malloc((size_t)n * SAL_BINS * sizeof *f); /* F: (n, SAL_BINS) */
    for (int i = 0; i < n; i++)
        for (int k = 0; k < SAL_BINS; k++) f[(size_t)i * SAL_BINS + k] = sal_image_fbeta(&imgs[i], k);
    float sum[SAL_BINS];
    sal_torch_colsum_f32(f, n, SAL_BINS, sum);
    free(f);
    const float count = (float)n;
    out->best_bin = 0;
    for (int k = 0; k < SAL_BINS; k++) {
        out->fbar[k] = sum[k] / count;
        if (out->fbar[k] > out->fbar[out->best_bin]) out->best_bin = k;
    }
    out->max_fbeta = out->fbar[out->best_bin];
    return 0;
}
