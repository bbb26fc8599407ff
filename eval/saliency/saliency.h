/* eval/saliency/saliency.h — unsupervised saliency detection as TokenCut scores it
 * (unsupervised_saliency_detection/get_saliency.py), on ECSSD, DUTS-TE and DUT-OMRON
 * (datasets/dataset.h, saliency:ROOT).  Owns the run of kc-saliency; may include eval/voc (the
 * ledger and the summary's commit), decoders/refine (the solver), datasets and pipeline.
 *
 * The protocol, per image of the dataset (in its order: file names sorted as bytes):
 *   1. keys of the last block at policy `round` (each side rounded to the nearest multiple of the
 *      patch, Lanczos; kc-extract --dataset saliency:ROOT) and kc-decode's setting
 *      t0.20-bin-mean-seed-n1 (tau 0.2, binary graph with eps 1e-5 edges, x > mean(x), the seed
 *      argmax |x| and its 4-connected component): TokenCut's ncut() with detect_box's component;
 *   2. the grid mask brought to the ORIGINAL image size as torch's F.interpolate(mode='nearest')
 *      does (pipeline/images/grid_map.h, policy round) -> the decoder's mask, 0.0 / 1.0;
 *   3. TokenCut's bilateral solver (decoders/refine/bilateral.h) on the original image with that
 *      mask as target, confidence 0.999, sigmas spatial / luma / chroma 16 / 16 / 8, lambda 256
 *      -> its SOFT output.  get_saliency.py scores the soft output itself: its binary_solver
 *      (output > 0.5, holes filled, the second-largest region) and the sign flip applied to it when
 *      its IoU with the decoder's mask is below 0.5 feed only its pictures, never metric.metrics().
 *      We keep that: the "bs" row is the soft output.
 *   4. the ground truth <stem>.png read as PIL's convert('L') (Pillow's L = (19595 R + 38470 G +
 *      7471 B + 0x8000) >> 16 of the RGB decode); any nonzero value is foreground;
 *   5. the metrics of eval/saliency/sal_metrics.h for both masks: IoU and accuracy at 0.5 per image,
 *      their means over images, and max F-beta (beta^2 = 0.3) over 255 thresholds.
 *
 * Outputs in OUT (the VOC scores' style, eval/voc/score.h):
 *   OUT/<setting>.csv       id,setting,refine,iou,accuracy,fbeta,gt_pixels,mask_pixels,pixels
 *                           one line per image and mask: refine "none" (the decoder's mask) then
 *                           "bs" (the solver's output); fbeta: the image's F-beta at the dataset's
 *                           best threshold; mask_pixels: pixels above 0.5; numbers %.9g, a NaN IoU
 *                           (empty mask and empty ground truth: TokenCut's 0/0) written nan
 *   OUT/summary.csv         setting,refine,dataset,images,max_fbeta,iou,accuracy,threshold: two
 *                           lines (none, bs); dataset: ECSSD, DUTS-TE, DUT-OMRON or the folder's
 *                           name (img/ + gt/); threshold: the one of the max F-beta
 *   OUT/network             the network's name, when known
 *   OUT/dataset             the dataset's spec (saliency:ROOT), one line
 *   and a ledger line (split = the dataset spec, split_sha256 = the sha256 of its ids, one a line).
 *   With png_dir: <png_dir>/<id>.png per image, 8-bit palette, value 1 where the decoder's mask
 *   is, + 2 where the solver's output exceeds 0.5 (the results browser's galleries); the folder is
 *   written as png_dir.partial and replaces png_dir after the commit, so png_dir must be new or
 *   hold only .png files (an earlier run's): anything else is refused before the run.
 *   With soft_dir: <soft_dir>/<id>.npy, the solver's output as float64 (h, w) (NumPy's .npy).
 *
 *     saliency_opts o = SALIENCY_DEFAULTS;
 *     o.masks = "masks.h5"; o.dataset = "saliency:/data/ECSSD"; o.out = "scores";
 *     if (saliency_run(&o) < 0) kc_die();
 */
#ifndef KC_SALIENCY_H
#define KC_SALIENCY_H
#include "decoders/refine/bilateral.h"

typedef struct saliency_opts {
    const char *masks, *dataset, *out;
    const char *setting;           /* NULL: the cache's only setting, else t0.20-bin-mean-seed-n1 */
    const char *network, *ledger;  /* ledger: default ledger.tsv */
    const char *png_dir, *soft_dir; /* optional outputs, NULL: none */
    bs_params bs;
    double t0;
} saliency_opts;
#define SALIENCY_DEFAULT_SETTING "t0.20-bin-mean-seed-n1"
#define SALIENCY_DEFAULTS ((saliency_opts){.ledger = "ledger.tsv", .bs = BS_TOKENCUT_RUNS})

int saliency_run(const saliency_opts *o);

/* PIL's convert('L') of an RGB image: (h, w) values of (19595 R + 38470 G + 7471 B + 0x8000) >> 16. */
void saliency_luma(const uint8_t *rgb, long n_pixels, uint8_t *luma);
/* Writes a NumPy .npy file of float64 (h, w), little-endian, atomically. */
int saliency_write_npy(const char *path, const double *v, int h, int w);
#endif
