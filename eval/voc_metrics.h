/* eval/voc_metrics.h — VOC Jaccard and CorLoc of a patch-grid label map (docs/design.md, "Evaluation").
 *
 * Grid to image.  Pixel (x, y) of the original W x H image takes the label of grid cell
 *     square480, short480:  ( ((2x + 1) gw) div (2W),  ((2y + 1) gh) div (2H) )
 *     native16 (patch p):   ( x div p, y div p )      (padding cells hold no pixel)
 * The resizing policies give sides that are multiples of the patch (pipeline/images/resize.h), so
 * a grid of the policy covers its resized image R_w x R_h exactly, R = g p on each axis, and the
 * first rule is the pixel centre's nearest cell in the resized image for any patch:
 *     floor((x + 0.5) R / (W p)) = floor((2x + 1) g p / (2 W p)) = ((2x + 1) g) div (2W).
 * (Patch 14 under square480: 490 x 490, g = 35; a grid that is not the policy's, such as the 34 x 34
 * of a 480 image cropped to 476, is refused by voc_check_policy_grid.)
 *
 * Jaccard.  P = pixels whose cell has a label > 0, G = pixels with SegmentationObject in 1..254,
 * void = SegmentationObject 255 (counts nowhere).  J = |P n G| / |P u G| over non-void pixels,
 * J = 1 when the union is empty.  area = |P| / (W H), void pixels included.
 *
 * CorLoc.  The round-1 mask (cells labelled 1) has the cell bounding box [x0, x1] x [y0, y1]; in
 * pixels it is [x0 W / gw, (x1 + 1) W / gw] x [y0 H / gh, (y1 + 1) H / gh] (native16: times p,
 * clipped to the image).  A hit when IoU >= 0.5 with any GT box (xmin, ymin shifted by -1).
 * An empty round-1 mask is a miss.
 *
 * Fast path.  Everything that does not depend on the mask is computed once per image: per grid
 * cell the number of GT-foreground, non-void background and all pixels mapped to it.  Then
 *     |P n G| = sum over mask cells of fg,   |P u G| = |G| + sum over mask cells of bg,
 * so scoring one mask costs O(gh gw) instead of O(W H).  voc_score_naive is the per-pixel
 * reference used by the tests.
 *
 *     voc_cells c;
 *     if (voc_cells_init(&c, gt_object, h, w, boxes, n_boxes, POLICY_SQUARE480, 16, 30, 30) < 0) ...
 *     voc_score s;
 *     voc_score_mask(&c, labels, &s);          // labels: (30, 30) uint8
 *     voc_cells_free(&c);
 */
#ifndef KC_VOC_METRICS_H
#define KC_VOC_METRICS_H
#include <stdint.h>

#include "pipeline/box.h"
#include "pipeline/images/resize.h"

/* voc_box (pipeline/box.h): a ground-truth box as written in the XML (1-based VOC corners, not yet
 * shifted). */

typedef struct voc_score {
    double jaccard; /* in [0, 1] */
    int corloc;     /* 0 or 1 */
    double area;    /* predicted foreground fraction of the image */
} voc_score;

/* Mask-independent precomputation for one image. */
typedef struct voc_cells {
    kc_policy policy;
    int patch;            /* native16 only */
    int grid_h, grid_w;   /* the label map's shape */
    int h, w;             /* the original image */
    int32_t *fg;          /* (grid_h, grid_w): GT-foreground pixels mapped to the cell */
    int32_t *bg;          /* (grid_h, grid_w): non-void background pixels */
    int32_t *all;         /* (grid_h, grid_w): all pixels (void included) */
    int64_t total_fg;
    int n_boxes;
    voc_box *boxes;       /* shifted: xmin - 1, ymin - 1 */
} voc_cells;

/* Parses "square480" / "short480" / "native16"; the error names the value. */
int voc_policy_parse(const char *name, kc_policy *p);
const char *voc_policy_name(kc_policy p);

/* The grid a policy gives an image of w x h with the patch size (for provenance checks):
 * policy_grid of pipeline/images/resize.h (square480: ceil(480 / p) each; short480: DINO's size with
 * each side rounded up to a multiple of p, over p; native16: ceil(w / p), ceil(h / p)).  A patch
 * <= 0 is taken as 16. */
void voc_expected_grid(kc_policy p, int patch, int w, int h, int *grid_h, int *grid_w);

/* The grid mapping above along one axis: the cell of pixel x (0 <= x < n) on an axis of n pixels
 * and g cells; voc_axis_cells fills cell[x] for every x. */
static inline int voc_pixel_cell(kc_policy p, int patch, int x, int n, int g)
{
    return p == POLICY_NATIVE16 ? x / patch : (int)(((2LL * x + 1) * g) / (2LL * n));
}
void voc_axis_cells(kc_policy p, int patch, int n, int g, int32_t *cell);
/* For a reader of a cache: 0 when (grid_h, grid_w) is the grid policy p gives a w x h image with
 * the recorded patch (voc_expected_grid), or when no patch was recorded (patch <= 0); else -1 with
 * an error naming what, the grids and the resized size. */
int voc_check_policy_grid(const char *what, kc_policy p, int patch, int w, int h, int grid_h, int grid_w);

/* Checks that a (grid_h, grid_w) label map can be mapped back to a w x h image under policy p
 * (native16: the grid must be exactly ceil(size / patch)).  what names the input in the error. */
int voc_check_grid(const char *what, kc_policy p, int patch, int w, int h, int grid_h, int grid_w);

/* object: (h, w) SegmentationObject values.  boxes: n_boxes boxes as written in the XML. */
int voc_cells_init(voc_cells *c, const uint8_t *object, int h, int w, const voc_box *boxes, int n_boxes,
                   kc_policy p, int patch, int grid_h, int grid_w);
void voc_cells_free(voc_cells *c);

/* labels: (grid_h, grid_w) uint8, 0 = background, r = round r. */
void voc_score_mask(const voc_cells *c, const uint8_t *labels, voc_score *out);

/* The pixel box of the round-1 mask; returns 0 when the round-1 mask is empty. */
int voc_mask_box(kc_policy p, int patch, int w, int h, const uint8_t *labels, int grid_h, int grid_w,
                 double box[4]);
/* The area of voc_score without the ground truth: the fraction of the w x h image whose pixels map
 * to cells labelled > 0 (native16: whole cells, clipped to the image, counted at once). */
double voc_mask_area(kc_policy p, int patch, int w, int h, const uint8_t *labels, int grid_h, int grid_w);
/* IoU of two boxes (x1, y1, x2, y2); 0 when the union is empty. */
double voc_box_iou(const double a[4], const double b[4]);

/* Per-pixel reference (slow, for tests): same result as voc_cells_init + voc_score_mask. */
int voc_score_naive(const uint8_t *object, int h, int w, const voc_box *boxes, int n_boxes, kc_policy p,
                    int patch, const uint8_t *labels, int grid_h, int grid_w, voc_score *out);
#endif
