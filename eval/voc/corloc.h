/* eval/voc/corloc.h — CorLoc by the LOST / TokenCut protocol (docs/corloc.md), boxes only.
 *
 * The predicted box is the round-1 mask's cell box times the patch, its max corner clipped to the
 * unpadded image (voc_mask_box under native16): [x0 p, y0 p, min((x1+1) p, W), min((y1+1) p, H)],
 * integers.  Ground-truth boxes: VOC corners with xmin - 1, ymin - 1 (no other shift), COCO
 * corners rounded from xywh (datasets/coco.h).  IoU as their bbox_iou (eps = 1e-7, no +1):
 *     inter = max(0, min(x2) - max(x1)) * max(0, min(y2) - max(y1))
 *     union = w1 (h1 + eps) + w2 (h2 + eps) - inter + eps,   IoU = inter / union
 * with PyTorch's type promotion reproduced: the prediction is an int64 tensor, so h1 + eps and
 * w1 h1 are float32; when every ground-truth corner of the image is an integer (an int64 tensor)
 * the rest is float32 too, in that order; otherwise (float64 ground truth, only possible with
 * non-integer VOC corners, which their int() refuses) the rest is double.  A hit when
 * IoU >= 0.5 with any ground-truth box; an empty round-1 mask or an image without boxes is a miss.
 *
 *     int hit = corloc_hit(pred, gt, n_gt);    // pred: x1, y1, x2, y2 (integers as doubles)
 */
#ifndef KC_CORLOC_H
#define KC_CORLOC_H
#include "pipeline/box.h"

/* IoU of pred and one ground-truth box (corners already shifted), as their bbox_iou computes it
 * for an image with that one box. */
double corloc_iou(const double pred[4], const kc_box *gt);
/* 1 when corloc_iou >= 0.5 for any of the n boxes. */
int corloc_hit(const double pred[4], const kc_box *gt, int n);
#endif
