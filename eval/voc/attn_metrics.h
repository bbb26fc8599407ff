/* eval/voc/attn_metrics.h — DINO's Jaccard of per-head attention masks on VOC (docs/attention-baseline.md).
 *
 * Input: a (heads, grid_h, grid_w) uint8 stack (1 = in the head's mask; kc-decode --kind attn),
 * mapped back to the W x H image pixels as docs/design.md's grid mapping (pipeline/images/grid_map.h), and the
 * image's SegmentationObject map.  Objects are the values 1..254 present in the map; 255 is void
 * and counts nowhere (neither in an intersection nor in a union); 0 is background.
 *
 *   J(h, o)  = |M_h n O_o| / |M_h u O_o|   over non-void pixels (O_o is never empty, so no 0/0)
 *   best     = (1 / #objects) sum_o max_h J(h, o)       DINO's per-image number (dino issue 54);
 *              NaN for an image without objects (left out of the mean over images)
 *   fg(h)    = |M_h n F| / |M_h u F|, F = all objects together (voc_metrics' Jaccard); 1 when empty
 *   objmean(h) = (1 / #objects) sum_o J(h, o)          (NaN without objects)
 *
 * Fast path: per object and grid cell the number of its pixels mapped to the cell, and per cell the
 * non-void pixels, so one head costs O(objects x cells).  attn_score_naive is the per-pixel reference.
 *
 *     attn_cells c;
 *     attn_cells_init(&c, gt_object, h, w, POLICY_SQUARE480, 16, 30, 30);
 *     attn_score s;  double fg[6], om[6];
 *     attn_score_stack(&c, masks, 6, &s, fg, om);          // masks: (6, 30, 30)
 *     attn_cells_free(&c);
 */
#ifndef KC_ATTN_METRICS_H
#define KC_ATTN_METRICS_H
#include <stdint.h>

#include "eval/voc/voc_metrics.h"

typedef struct attn_cells {
    int grid_h, grid_w, h, w;
    int n_obj;
    uint8_t obj_id[254];  /* the object values present, ascending */
    int32_t *obj;         /* (n_obj, grid_h * grid_w): pixels of each object mapped to each cell */
    int64_t *obj_total;   /* (n_obj) */
    int32_t *nonvoid;     /* (grid_h * grid_w) */
    int32_t *fg;          /* (grid_h * grid_w): pixels of any object */
    int64_t fg_total;
} attn_cells;

typedef struct attn_score {
    double best;   /* mean over objects of the best head's Jaccard; NaN without objects */
    int n_objects;
} attn_score;

int attn_cells_init(attn_cells *c, const uint8_t *object, int h, int w, kc_policy p, int patch, int grid_h,
                    int grid_w);
void attn_cells_free(attn_cells *c);
/* masks: (heads, grid_h, grid_w); fg, objmean: (heads) or NULL. */
void attn_score_stack(const attn_cells *c, const uint8_t *masks, int heads, attn_score *out, double *fg,
                      double *objmean);
/* Per-pixel reference (tests): the same numbers from the object map directly. */
int attn_score_naive(const uint8_t *object, int h, int w, kc_policy p, int patch, const uint8_t *masks, int heads,
                     int grid_h, int grid_w, attn_score *out, double *fg, double *objmean);
#endif
