/* eval/voc/voc_metrics.h — VOC Jaccard and CorLoc of a patch-grid label map (docs/design.md, "Evaluation").
 *
 * The grid-to-pixel mapping is pipeline/images/grid_map.h's.
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
#include "pipeline/images/grid_map.h"
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
