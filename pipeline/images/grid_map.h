/* pipeline/images/grid_map.h — how a patch-grid label map covers the original image's pixels
 * (docs/design.md, "Evaluation"): the mapping every reader of a mask uses (scoring, refinement,
 * overlays).  It sits with the resizing policies (resize.h), whose sizes it inverts.
 *
 * Grid to image.  Pixel (x, y) of the original W x H image takes the label of grid cell
 *     square480, short480:  ( ((2x + 1) gw) div (2W),  ((2y + 1) gh) div (2H) )
 *     native16 (patch p):   ( x div p, y div p )      (padding cells hold no pixel)
 *     round:                 ( c(x, W, gw), c(y, H, gh) ), TokenCut's saliency code: torch's
 *                            F.interpolate(mode='nearest') from the grid to the image,
 *                            c(x, n, g) = min(floorf(x * s), g - 1) with s = (float)g / n in float32
 *                            (x itself when n == g, x >> 1 when n == 2g; torch 1.13's nearest_idx)
 * The resizing policies give sides that are multiples of the patch (pipeline/images/resize.h), so
 * a grid of the policy covers its resized image R_w x R_h exactly, R = g p on each axis, and the
 * first rule is the pixel centre's nearest cell in the resized image for any patch:
 *     floor((x + 0.5) R / (W p)) = floor((2x + 1) g p / (2 W p)) = ((2x + 1) g) div (2W).
 * (Patch 14 under square480: 490 x 490, g = 35; a grid that is not the policy's, such as the 34 x 34
 * of a 480 image cropped to 476, is refused by grid_check_policy.)  Under round the grid covers the
 * rounded size, not the image (a 375-pixel side has 23 cells of 16), and the reference maps it back
 * with a float scale, which the third rule follows bit for bit.
 */
#ifndef KC_GRID_MAP_H
#define KC_GRID_MAP_H
#include <math.h>
#include <stdint.h>

#include "pipeline/images/resize.h"

/* The grid a policy gives an image of w x h with the patch size (for provenance checks):
 * policy_grid of pipeline/images/resize.h (square480: ceil(480 / p) each; short480: DINO's size with
 * each side rounded up to a multiple of p, over p; native16: ceil(w / p), ceil(h / p)).  A patch
 * <= 0 is taken as 16. */
void grid_expected(kc_policy p, int patch, int w, int h, int *grid_h, int *grid_w);

/* The grid mapping above along one axis: the cell of pixel x (0 <= x < n) on an axis of n pixels
 * and g cells; grid_axis_cells fills cell[x] for every x. */
static inline int grid_torch_nearest(int x, int n, int g)
{
    if (n == g) return x;
    if (n == 2 * g) return x >> 1;
    const float scale = (float)g / (float)n;
    const int c = (int)floorf((float)x * scale);
    return c < g - 1 ? c : g - 1;
}
static inline int grid_pixel_cell(kc_policy p, int patch, int x, int n, int g)
{
    if (p == POLICY_ROUND) return grid_torch_nearest(x, n, g);
    return p == POLICY_NATIVE16 ? x / patch : (int)(((2LL * x + 1) * g) / (2LL * n));
}
void grid_axis_cells(kc_policy p, int patch, int n, int g, int32_t *cell);
/* For a reader of a cache: 0 when (grid_h, grid_w) is the grid policy p gives a w x h image with
 * the recorded patch (grid_expected), or when no patch was recorded (patch <= 0); else -1 with
 * an error naming what, the grids and the resized size. */
int grid_check_policy(const char *what, kc_policy p, int patch, int w, int h, int grid_h, int grid_w);

/* Checks that a (grid_h, grid_w) label map can be mapped back to a w x h image under policy p
 * (native16: the grid must be exactly ceil(size / patch); round: exactly round(size / patch)).  what
 * names the input in the error. */
int grid_check(const char *what, kc_policy p, int patch, int w, int h, int grid_h, int grid_w);
#endif
