/* pipeline/images/resize.h — the preprocessing policies of docs/design.md.  (Owner: images module.)
 *
 * | policy     | geometry for patch p (every side a multiple of p)   | resampling          | std              |
 * | square480  | R x R, R = p ceil(480 / p)                          | Pillow 9.4 Lanczos  | (.229,.224,.225) |
 * | short480   | DINO's DAVIS size (short side 480, long side        | OpenCV 4.6 bilinear | (.228,.224,.225) |
 * |            | floor(480 L / S / 64) 64; a square image 480 high,  |                     |                  |
 * |            | 448 wide), then each side rounded up: p ceil(side/p)|                     |                  |
 * | native16   | none; zero padding bottom/right to p ceil(side / p) | none                | (.229,.224,.225) |
 * | square224  | R x R, R = p ceil(224 / p) (the linear probe)       | Pillow 9.4 bilinear | (.229,.224,.225) |
 * | square448  | R x R, R = p ceil(448 / p) (Leopart's probe)        | Pillow 9.4 bilinear | (.229,.224,.225) |
 * | round      | each side p round(side / p), Python's round (a half | Pillow 9.4 Lanczos  | (.229,.224,.225) |
 * |            | goes to the even multiple): TokenCut's saliency     |                     |                  |
 * |            | code (utils.resize_pil); 500 x 375 -> 496 x 368     |                     |                  |
 *
 * What that gives (W x H image; grid = size / p, native16 ceil(W / p) x ceil(H / p)):
 * | policy     | p = 16                      | p = 14                       | p = 8                        |
 * | square480  | 480 x 480, grid 30 x 30     | 490 x 490, grid 35 x 35      | 480 x 480, grid 60 x 60      |
 * | short480   | 854 x 480 -> 832 x 480,     | 854 x 480 -> 840 x 490,      | 854 x 480 -> 832 x 480,      |
 * |            | grid 52 x 30; square        | grid 60 x 35; square         | grid 104 x 60; square        |
 * |            | 448 x 480, grid 28 x 30     | 448 x 490, grid 32 x 35      | 448 x 480, grid 56 x 60      |
 * | native16   | 500 x 375: padded 512 x 384,| padded 504 x 378, grid 36x27 | padded 504 x 376, grid 63x47 |
 * |            | grid 32 x 24                |                              |                              |
 * | square224  | 224 x 224, grid 14 x 14     | 224 x 224, grid 16 x 16      | 224 x 224, grid 28 x 28      |
 * | square448  | 448 x 448, grid 28 x 28     | 448 x 448, grid 32 x 32      | 448 x 448, grid 56 x 56      |
 * For p = 16 and p = 8 (divisors of 32, hence of 480, 448, 224 and of every multiple of 64) the
 * rounding changes nothing: the sizes are those of the references (MaskCut, DINO's DAVIS code,
 * Leopart) byte for byte.  For p = 14 the 480 policies resize straight to the rounded size (Lanczos
 * to 490 x 490), not 480 padded to 490: the same 35 x 35 grid as DINOv2's CenterPadding and
 * LOST / TokenCut / FOUND's bottom-right padding of a 480 image, but every cell a full p x p of
 * image (no token of padding), so the grid covers the resized image exactly and maps back to the
 * original pixels by the same rule for every p (eval/voc/voc_metrics.h).  The padding those codes do
 * is native16's.
 * (square224/448: torchvision's Resize((S, S)) of a PIL image, i.e. Pillow's BILINEAR with its
 * antialias: the triangle filter widened by the scale when reducing.)
 * round: the grid does not cover the image exactly (368 / 16 = 23 rows for 375 pixels), and its masks
 * come back to the image as TokenCut's F.interpolate(mode='nearest') does (grid_map.h).  An image
 * side below half a patch rounds to 0 and is an error.
 * mean (0.485, 0.456, 0.406) always; padding is zero after normalisation.
 *
 *     float *chw; int H, W;
 *     policy_prepare(&im, POLICY_SQUARE480, 14, &chw, &H, &W);   // chw: (3, 490, 490), a 35x35 grid
 */
#ifndef KC_RESIZE_H
#define KC_RESIZE_H
#include <stddef.h>
#include <stdint.h>

#include "pipeline/images/image.h"

typedef enum kc_policy {
    POLICY_SQUARE480 = 0,
    POLICY_SHORT480 = 1,
    POLICY_NATIVE16 = 2,
    POLICY_SQUARE224 = 3,
    POLICY_SQUARE448 = 4,
    POLICY_ROUND = 5
} kc_policy;

int policy_parse(const char *name, kc_policy *p); /* error names the bad value */
const char *policy_name(kc_policy p);
/* The resized size in pixels for an input of w x h and the patch (the table above; native16: w x h,
 * before its padding).  A patch below 1 is taken as 1 (no rounding). */
void policy_size(kc_policy p, int patch, int w, int h, int *out_w, int *out_h);
/* The patch grid: ceil(size / patch) of policy_size on each axis (native16: its padded size). */
void policy_grid(kc_policy p, int patch, int w, int h, int *grid_h, int *grid_w);
/* Resize + normalise (+ pad for native16) into a new (3, H, W) float buffer; H, W multiples of
 * patch.  The grid is (H / patch, W / patch) = policy_grid.  Errors: patch < 1, image smaller than
 * one patch (native16). */
int policy_prepare(const kc_image *img, kc_policy p, int patch, float **chw, int *H, int *W);
/* A text for provenance into buf: "square480: 480x480 Lanczos (Pillow 9.4), mean ..., std ...",
 * with the sizes for the patch (for p = 16 the same text as before patches other than 16 were
 * rounded for). */
void policy_describe(kc_policy p, int patch, char *buf, size_t size);

/* Pillow Image.resize((dw, dh), NEAREST) of an 8-bit map (a label map). */
void resize_nearest_pillow(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh);
/* Pillow 9.4 Image.resize(LANCZOS) of an RGB uint8 image (antialiased, support 3 * scale). */
void resize_lanczos_pillow(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh);
/* Pillow 9.4 Image.resize(BILINEAR) of an RGB uint8 image (antialiased, support 1 * scale). */
void resize_bilinear_pillow(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh);
/* OpenCV 4.6 cv2.resize(INTER_LINEAR) of an RGB uint8 image (fixed-point, as OpenCV). */
void resize_bilinear_cv(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh);
#endif
