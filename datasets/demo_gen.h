/* datasets/demo_gen.h — the demo's synthetic data, with exact ground truth.
 *
 * ROOT/voc:   a VOC-layout set of scenes (JPEGImages/<id>.jpg, SegmentationObject and
 *             SegmentationClass palette PNGs with a 255 void band around every object as VOC has,
 *             Annotations/<id>.xml boxes in VOC's 1-based pixel corners, ImageSets/Segmentation/
 *             train.txt and val.txt).  Each scene: 1-3 saturated objects (ellipses, boxes,
 *             triangles) over a smooth, muted, textured background.
 * ROOT/davis: a DAVIS-2017-layout set of short videos (JPEGImages/480p/<seq>/NNNNN.jpg,
 *             Annotations/480p/<seq>/NNNNN.png with object ids 1..K, ImageSets/2017/val.txt), in
 *             which 1-2 objects move over a drifting background.
 * Deterministic for a given seed (the same bytes on every machine: libjpeg's integer DCT).
 *
 *     demo_generate("demo/data", 2026, 16, 16, 2, 12);
 */
#ifndef KC_DEMO_GEN_H
#define KC_DEMO_GEN_H
int demo_generate(const char *root, unsigned seed, int n_train, int n_val, int n_videos, int n_frames);
#endif
