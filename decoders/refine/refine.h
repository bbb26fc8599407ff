/* decoders/refine/refine.h — pixel-level refinement of patch masks: MaskCut's and TokenCut's protocols.
 *
 * crf (MaskCut, maskcut.py + crf.py), per round's binary mask:
 *   1. the patch mask repeated to the policy's image (each cell to its patch x patch pixels of the
 *      resized image, policy_size: 480x480 under square480 with patch 16, 490x490 with patch 14;
 *      crf.py's bilinear resize to the same size changes nothing);
 *   2. logits (1 - m, m), softmax, unary -log(max(p, clip)) in float32 (pydensecrf's
 *      unary_from_softmax, clip 1e-5); the dense CRF of decoders/refine/crf.h on that RGB image;
 *   3. argmax of Q (an exact tie is background); holes filled (background regions not
 *      4-connected to the border become foreground, scipy's binary_fill_holes);
 *   4. IoU with the unrefined mask of step 1 below min_iou (0.5): the mask becomes empty;
 *   5. back to the original size when the policy resized: Pillow 9.4's default resize (BICUBIC)
 *      of the 0/255 mask, foreground where the value exceeds half the resized maximum.
 * bs (TokenCut, bilateral_solver.py), per round:
 *   1. the patch mask repeated to the original image (nearest: docs/design.md's grid-to-image rule);
 *   2. the solver of decoders/refine/bilateral.h on the original image; foreground where its output
 *      > threshold (0.5); holes filled;
 *   3. optionally TokenCut's component step (scipy.ndimage.label, 4-connected; the region of the
 *      second-largest pixel count with the background counted as region 0, stable order on ties;
 *      all foreground when no region exists).  Off by default: it can return the background.
 * Rounds: every round's mask is refined alone; label r goes to the refined pixels of round r not
 * already labelled by an earlier round (the decoder's rule).
 *
 *     refine_opts o = REFINE_DEFAULTS;  o.method = REFINE_CRF;
 *     refine_image(&o, &img, policy, patch, labels, grid_h, grid_w, n_rounds, out, &info);
 */
#ifndef KC_REFINE_H
#define KC_REFINE_H
#include <stddef.h>
#include <stdint.h>

#include "decoders/refine/bilateral.h"
#include "decoders/refine/crf.h"
#include "pipeline/images/image.h"
#include "pipeline/images/resize.h"

typedef enum refine_method { REFINE_NONE = 0, REFINE_CRF = 1, REFINE_BS = 2 } refine_method;

typedef struct refine_opts {
    refine_method method;
    crf_params crf;
    double crf_clip;    /* unary clip of unary_from_softmax */
    double crf_min_iou; /* MaskCut's filter */
    bs_params bs;
    double bs_threshold;
    int bs_components;  /* 1: TokenCut's second-largest-region step */
} refine_opts;
#define REFINE_DEFAULTS ((refine_opts){REFINE_NONE, CRF_MASKCUT, 1e-5, 0.5, BS_TOKENCUT_RUNS, 0.5, 0})

/* The solver's constants as rows of a pipeline/opts.h option table (kc-refine, kc-saliency): READ
 * stores a number at .target as .number says; BS is a bs_params. */
#define REFINE_BS_OPTIONS(READ, BS)                                                                   \
    {"--bs-sigma-spatial", .read = READ, .target = &(BS).sigma_spatial, .number = OPTS_DOUBLE},       \
    {"--bs-sigma-luma", .read = READ, .target = &(BS).sigma_luma, .number = OPTS_DOUBLE},             \
    {"--bs-sigma-chroma", .read = READ, .target = &(BS).sigma_chroma, .number = OPTS_DOUBLE},         \
    {"--bs-lambda", .read = READ, .target = &(BS).lambda, .number = OPTS_DOUBLE},                     \
    {"--bs-confidence", .read = READ, .target = &(BS).confidence, .number = OPTS_DOUBLE},             \
    {"--bs-bistoch-iters", .read = READ, .target = &(BS).bistoch_iters},                              \
    {"--bs-cg-tol", .read = READ, .target = &(BS).cg_tol, .number = OPTS_DOUBLE},                     \
    {"--bs-cg-maxiter", .read = READ, .target = &(BS).cg_maxiter},                                    \
    {"--bs-diag-min", .read = READ, .target = &(BS).diag_min, .number = OPTS_DOUBLE}

int refine_method_parse(const char *s, refine_method *m);
const char *refine_method_name(refine_method m);
/* Checks every constant's range; the message names the option. */
int refine_check(const refine_opts *o);

/* scipy.ndimage.binary_fill_holes with its default (4-connected) structure, in place. */
void refine_fill_holes(uint8_t *mask, int w, int h);
/* TokenCut's component step (above), in place. */
void refine_tokencut_components(uint8_t *mask, int w, int h);
/* Pillow 9.4 Image.resize((dw, dh)) of a mode-L image (BICUBIC, a = -0.5, 22-bit fixed point). */
void refine_resize_bicubic_l(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh);
/* IoU of two binary masks of n pixels; NaN when both are empty. */
double refine_iou(const uint8_t *a, const uint8_t *b, size_t n);

/* One round, MaskCut: mask (h, w) 0/1 at the CRF image's size (rgb (h, w, 3)); out (h, w) 0/1 at
 * that size after steps 2-4; q (h*w, 2) the marginals when not NULL; *iou the filter's IoU. */
int refine_crf_mask(const refine_opts *o, const uint8_t *rgb, int w, int h, const uint8_t *mask, uint8_t *out,
                    float *q, double *iou);
/* Step 5: (w, h) 0/1 -> (W, H) 0/1. */
void refine_crf_to_original(const uint8_t *mask, int w, int h, uint8_t *out, int W, int H);

/* Per-image record of what refinement did, per round (up to 16 rounds). */
typedef struct refine_info {
    int rounds;
    float iou[16];   /* crf: IoU with the unrefined mask (NaN when both empty); bs: NaN */
    int dropped[16]; /* crf: emptied by the IoU filter */
    int cg_iters[16];
    int vertices;
} refine_info;

/* The whole protocol for one image: labels (grid_h, grid_w) from kc-decode with rounds 1..n_rounds;
 * img: the original image; out (img->h, img->w) labels.  patch: the features' patch size. */
int refine_image(const refine_opts *o, const kc_image *img, kc_policy policy, int patch, const uint8_t *labels,
                 int grid_h, int grid_w, int n_rounds, uint8_t *out, refine_info *info);
#endif
