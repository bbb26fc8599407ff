/* eval/saliency/sal_metrics.h — TokenCut's saliency metrics (IoU, accuracy, max F-beta), bit-exact.
 *
 * Reference: TokenCut, unsupervised_saliency_detection/metric.py, run with torch 1.13 on a CPU
 * whose ATen kernels dispatch to AVX2 (torch.__config__.show(): "CPU capability usage: AVX2").
 * Every step is computed in the precision torch computes it in: float32 where the tensors are
 * float32, double where Python adds floats.  tests/ref/saliency_metrics_ref.py checks it.
 *
 * Per image (gt: (h, w) uint8 L values of the ground-truth PNG, PIL convert('L');
 * pred: (h, w) double, soft or binary):
 *     g = gt > 0.5 (gt != 0),  p = pred > 0.5
 *     iou      = (float)|g & p| / (float)|g | p|          float32; 0/0 stays NaN
 *     accuracy = (float)|g == p| / (float)pixels          float32
 *     t_k      = k * (1.0 / 255), k = 0..254              np.arange(0, 1, 1/255), bit for bit
 *     m_k = pred > t_k (double),  TP_k = |(gt != 0) & m_k|,  area_k = |m_k|,  fg = |gt != 0|
 *     P_k = (float)TP_k / (float)area_k  (1 when area_k = 0)      float32
 *     R_k = (float)TP_k / (float)fg      (1 when fg = 0)          float32
 * One pass over the pixels: each pixel's number of thresholds passed (a binary search of the 255
 * t_k), a histogram of those counts, then cumulative counts from the top.
 *
 * Over n images, in dataset order:
 *     iou, accuracy = (double sum, sequential, of the float32 per-image values) / n
 *     F_ik  = ((1.3f * P_ik) * R_ik) / ((0.3f * P_ik) + R_ik)   float32, NaN -> 0
 *     Fbar_k = torch.sum(F, dim=0)[k] / (float)n                float32 (torch's F.mean(dim=0))
 *     max_fbeta = max_k Fbar_k; best_bin = the first k attaining it
 *
 * torch's float32 sum over dim 0 of a contiguous (rows, cols) tensor is not sequential
 * (aten/src/ATen/native/cpu/SumKernel.cpp, vectorized_outer_sum).  Columns are taken in blocks of
 * 4 AVX2 vectors (32 floats); each column of a full block is summed by multi_row_sum, a 4-level
 * cascade: rows are added to acc[0] in steps of 16 (level_step = 1 << max(4, ceil_log2(rows) / 4));
 * after each step acc[0] is carried into acc[1], and acc[1] into acc[2] when the row index is a
 * multiple of 16^2, acc[2] into acc[3] at multiples of 16^3; the last < 16 rows go into acc[0];
 * the result is ((acc[0] + acc[1]) + acc[2]) + acc[3].  The remaining columns (cols % 32 of them:
 * whole vectors, then single floats) are summed by row_sum: four interleaved cascades over the rows
 * 4i + l (l = 0..3, i < rows / 4), the last rows % 4 rows added to the first, then
 * ((s0 + s1) + s2) + s3.  Measured equal to torch bit for bit for rows 1..300 and up to 6000 at
 * 255 columns, with 1 and 2 threads (the threads' column ranges are cut at multiples of 32 floats,
 * the block size, so the split changes nothing here).  Under AVX512 dispatch
 * (ATEN_CPU_CAPABILITY=avx512: blocks of 64) torch gives other bits for columns 192..223 (measured);
 * that is not emulated: Debian's torch 1.13 dispatches to AVX2 even on AVX512 CPUs.
 *
 *     sal_image *im = kc_malloc(n * sizeof *im);
 *     for (int i = 0; i < n; i++)
 *         if (sal_image_score(gt[i], pred[i], (long)h[i] * w[i], &im[i]) < 0) return -1;
 *     sal_summary s;
 *     if (sal_summarise(im, n, &s) < 0) return -1;
 *     printf("IoU %.4f acc %.4f maxFb %.4f (t = %d/255)\n", s.iou, s.accuracy, s.max_fbeta, s.best_bin);
 */
#ifndef KC_SAL_METRICS_H
#define KC_SAL_METRICS_H
#include <stdint.h>

#define SAL_BINS 255

typedef struct sal_image {
    double iou, accuracy;      /* the float32 values, widened (iou NaN when both masks are empty) */
    float precision[SAL_BINS]; /* P_k, k = 0..254 */
    float recall[SAL_BINS];    /* R_k */
    long fg;                   /* |gt != 0| */
    long pred_fg;              /* |pred > 0.5| */
    long pixels;
} sal_image;

typedef struct sal_summary {
    int images;
    double iou, accuracy;  /* means as TokenCut prints them (NaN if any image's IoU is NaN) */
    double max_fbeta;      /* max_k Fbar_k, a float32 value */
    int best_bin;          /* the first k with Fbar_k = max_fbeta; threshold best_bin * (1.0 / 255) */
    float fbar[SAL_BINS];  /* Fbar_k */
} sal_summary;

/* The k-th threshold, k * (1.0 / 255): np.arange(0.0, 1.0, 1.0 / 255)[k]. */
double sal_threshold(int k);
/* One image.  gt: (n_pixels) uint8 L values; pred: (n_pixels) doubles.  Returns -1 (kc_error)
 * when n_pixels < 1. */
int sal_image_score(const uint8_t *gt, const double *pred, long n_pixels, sal_image *out);
/* The dataset's means and max F-beta over imgs[0..n) in order.  Returns -1 (kc_error) when n < 1. */
int sal_summarise(const sal_image *imgs, int n, sal_summary *out);
/* This image's F-beta at bin k (float32, NaN -> 0): its row of F, e.g. at the dataset's best_bin. */
float sal_image_fbeta(const sal_image *im, int k);
/* torch.sum(x, dim=0) of a contiguous float32 (rows, cols) tensor on the CPU (AVX2 kernels), bit
 * for bit.  x: (rows, cols) row-major; out: (cols).  rows >= 0. */
void sal_torch_colsum_f32(const float *x, long rows, long cols, float *out);
/* One column's sum by torch's multi_row_sum cascade (the full-block columns above).
 * x: n values, stride floats apart. */
float sal_torch_cascade_f32(const float *x, long n, long stride);
/* One column's sum by torch's row_sum (4 interleaved cascades; the columns after the full blocks). */
float sal_torch_rowsum_f32(const float *x, long n, long stride);
#endif
