/* pipeline/box.h — an axis-aligned ground-truth box, the one type datasets/ (which reads boxes)
 * and eval/ (which scores against them) both need; it lives here so dependencies run one way
 * (docs/design.md, "Folder layout").
 *
 * Corners are real numbers as the annotation wrote them: for VOC the 1-based XML corners (eval
 * shifts xmin and ymin by -1), for COCO the corners computed from xywh (see datasets/coco.h).
 *
 *     kc_box b = {10, 20, 110, 220};     // xmin, ymin, xmax, ymax
 */
#ifndef KC_BOX_H
#define KC_BOX_H

typedef struct kc_box {
    double xmin, ymin, xmax, ymax;
} kc_box;

/* The name the rest of the code has always used. */
typedef kc_box voc_box;
#endif
