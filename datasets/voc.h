/* datasets/voc.h — PASCAL VOC ground truth: segmentation PNGs and annotation boxes.
 *
 * Layout under ROOT (a VOCdevkit/VOC20xx folder):
 *   JPEGImages/<id>.jpg           the photo (only its size is read here)
 *   SegmentationObject/<id>.png   palette PNG, stored indices: 0 background, 1..254 objects, 255 void
 *   SegmentationClass/<id>.png    palette PNG, stored indices: class 0..20, 255 void (on request)
 *   Annotations/<id>.xml          <object><name/><bndbox><xmin/>...</bndbox></object>, read with
 *                                 libxml2; corners are real numbers, every object is kept
 * The PNGs must have the JPEG's size (and the XML's <size> when it gives one).  A missing file,
 * an id with no files at all, or a size mismatch is an error naming the file.
 *
 *     voc_gt gt;
 *     if (voc_gt_load("/data/VOC2012", "2007_000063", 0, &gt) < 0) return -1;
 *     // gt.object: (gt.h, gt.w) uint8;  gt.boxes[i]: corners as written (not shifted)
 *     voc_gt_free(&gt);
 */
#ifndef KC_VOC_H
#define KC_VOC_H
#include <stdint.h>

#include "pipeline/box.h"

enum {
    VOC_GT_CLASS = 1,   /* also read SegmentationClass */
    VOC_GT_NO_JPEG = 2, /* do not require JPEGImages/<id>.jpg (size checks against the PNG only) */
};

typedef struct voc_gt {
    int w, h;
    uint8_t *object; /* (h, w) SegmentationObject indices */
    uint8_t *cls;    /* (h, w) SegmentationClass indices, NULL unless VOC_GT_CLASS */
    int n_boxes;
    voc_box *boxes;  /* (n_boxes) as written in the XML */
    char **names;    /* (n_boxes) object class names */
} voc_gt;

/* Loads the ground truth of one id (thread-safe once voc_init() has run). */
int voc_gt_load(const char *root, const char *id, int flags, voc_gt *gt);
void voc_gt_free(voc_gt *gt);

/* Parses one annotation file.  *width / *height: the XML's <size> (0 when absent). */
int voc_read_annotation(const char *path, voc_box **boxes, char ***names, int *n_boxes, int *width,
                        int *height);

/* The same, plus hard[i] = 1 when object i is marked <difficult>1 or <truncated>1 (LOST's and
 * TokenCut's --no_hard drops those); *hard is malloc'ed (NULL when there are no boxes). */
int voc_read_annotation_hard(const char *path, voc_box **boxes, char ***names, uint8_t **hard, int *n_boxes,
                             int *width, int *height);

/* Call once from the main thread before loading in parallel (initialises libxml2). */
void voc_init(void);
#endif
