/* eval/figures/overlay.h — pictures of what the decoder found: masks over the original image.
 *
 * Grid to pixels (docs/design.md, "From the grid back to the image"): pixel (x, y) of a W x H image
 * takes grid cell ( ((2x + 1) gw) div (2W), ((2y + 1) gh) div (2H) ) under square480 / short480,
 * and ( x div p, y div p ) under native16 with patch p (grid_pixel_cell, pipeline/images/grid_map.h): a
 * grid of the policy covers its resized image exactly for any patch (490 x 490 for patch 14 under
 * square480), so this is the nearest cell of the resized image.  overlay_cache_labels refuses a
 * grid that is not the one the cache's policy and patch give the image (grid_check_policy).
 *
 * The picture: every label > 0 blended in its own colour (overlay_color) with opacity alpha, the
 * contour of every label (its pixels with a 4-neighbour of another label, thickened to about
 * min(W, H) / 240 pixels) drawn opaque in the same colour, and text lines in a built-in 5x7
 * bitmap font (digits, letters — lowercase drawn with the capital shapes — and . - _ / : ( ) = , +)
 * on a dark band at the top left.
 *
 *     uint8_t *lab = kc_malloc((size_t)im.w * im.h);
 *     overlay_grid_to_pixels(grid, gh, gw, POLICY_SQUARE480, 16, im.w, im.h, lab);
 *     overlay_draw_masks(&im, lab, 0.5f);
 *     const char *lines[] = {"t0.20-bin-mean-seed-n1", "2007_000063"};
 *     overlay_draw_text(&im, lines, 2);
 */
#ifndef KC_OVERLAY_H
#define KC_OVERLAY_H
#include <stdint.h>

#include "pipeline/cache/cache.h"
#include "pipeline/images/image.h"
#include "pipeline/images/resize.h"

/* labels: (H, W) out; grid: (gh, gw).  Errors: a native16 grid that does not cover the image
 * (gw < ceil(W / p) or gh < ceil(H / p)), non-positive sizes. */
int overlay_grid_to_pixels(const uint8_t *grid, int gh, int gw, kc_policy p, int patch, int W, int H,
                           uint8_t *labels);
/* The labels (H, W) of image id (W x H pixels) under one setting of a masks cache: kc-decode's
 * grid masks mapped to pixels as above (the cache's policy and patch attributes), an attention-mass
 * stack (cache_masks_are_stacks) as the union of its heads, kc-refine's pixel masks (attribute refine)
 * as they are; *labels is malloc'd.  Errors name the cache: the image not in its index or decoded
 * at another size, no policy, no such mask, a grid other than the one the policy and patch give
 * the image.  (kc-plot's grids, kc-report's layers.) */
int overlay_cache_labels(const cache_reader *r, const char *setting, const char *id, int W, int H, uint8_t **labels);
/* The colour of label l > 0 (a fixed table of 12 distinct colours, repeating). */
void overlay_color(int label, uint8_t rgb[3]);
/* Blends the labels into img (in place) and draws their contours.  labels: (h, w). */
void overlay_draw_masks(kc_image *img, const uint8_t *labels, float alpha);
/* Writes n lines of text at the top left, on a dark band; glyph size scales with the image. */
void overlay_draw_text(kc_image *img, const char *const *lines, int n);
/* One glyph's 7 rows (5 bits each, bit 4 = leftmost column); unknown characters give '?'. */
const uint8_t *overlay_glyph(char c);
#endif
