/* pipeline/images/resize.h — the preprocessing policies of docs/design.md.  (Owner: images module.)
 *
 * | policy     | geometry                                   | resampling            | std               |
 * | square480  | 480x480                                    | Pillow 9.4 Lanczos    | (.229,.224,.225)  |
 * | short480   | short side 480, long floor(480*L/S/64)*64  | OpenCV 4.6 bilinear   | (.228,.224,.225)  |
 * | native16   | none; zero padding to a multiple of patch  | none                  | (.229,.224,.225)  |
 * | square224  | 224x224 (the linear probe, kc-probe)       | Pillow 9.4 bilinear   | (.229,.224,.225)  |
 * | square448  | 448x448 (Leopart's probe protocol)         | Pillow 9.4 bilinear   | (.229,.224,.225)  |
 * (square224/448: torchvision's Resize((S, S)) of a PIL image, i.e. Pillow's BILINEAR with its
 * antialias: the triangle filter widened by the scale when reducing.)
 * mean (0.485, 0.456, 0.406) always; padding is zero after normalisation.
 *
 *     float *chw; int H, W;
 *     policy_prepare(&im, POLICY_SQUARE480, 16, &chw, &H, &W);   // chw: (3, H, W), H % 16 == 0
 */
#ifndef KC_RESIZE_H
#define KC_RESIZE_H
#include <stdint.h>

#include "pipeline/images/image.h"

typedef enum kc_policy {
    POLICY_SQUARE480 = 0,
    POLICY_SHORT480 = 1,
    POLICY_NATIVE16 = 2,
    POLICY_SQUARE224 = 3,
    POLICY_SQUARE448 = 4
} kc_policy;

int policy_parse(const char *name, kc_policy *p); /* error names the bad value */
const char *policy_name(kc_policy p);
/* Output size in pixels (before padding) for an input of w x h. */
void policy_size(kc_policy p, int w, int h, int *out_w, int *out_h);
/* Resize + normalise (+ pad for native16) into a new (3, H, W) float buffer; H, W multiples of
 * patch.  The grid is (H / patch, W / patch).  Errors: image smaller than one patch (native16). */
int policy_prepare(const kc_image *img, kc_policy p, int patch, float **chw, int *H, int *W);
/* A text for provenance: "square480: 480x480 Lanczos (Pillow 9.4), mean ..., std ..." */
const char *policy_describe(kc_policy p);

/* Pillow 9.4 Image.resize(LANCZOS) of an RGB uint8 image (antialiased, support 3 * scale). */
void resize_lanczos_pillow(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh);
/* Pillow 9.4 Image.resize(BILINEAR) of an RGB uint8 image (antialiased, support 1 * scale). */
void resize_bilinear_pillow(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh);
/* OpenCV 4.6 cv2.resize(INTER_LINEAR) of an RGB uint8 image (fixed-point, as OpenCV). */
void resize_bilinear_cv(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh);
#endif
