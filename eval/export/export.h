/* eval/export/export.h — a masks cache as files other tools read: palette PNG masks at each image's
 * original size, and a COCO JSON of the same masks as compressed RLE (kc-export).
 *
 * The pixels.  Image id's labels are exactly those kc-score scores and kc-show draws
 * (overlay_cache_labels, eval/figures/overlay.h): a patch-grid mask of kc-decode mapped to the W x H
 * image by grid_pixel_cell (pipeline/images/grid_map.h), a refined pixel mask of kc-refine as it is,
 * an attention-mass stack as the union of its heads.  0 is background, label k = 1..N the object of
 * decoder round k.
 *
 * PNG: OUT/png/<id>.png, 8-bit palette mode with the VOC / DAVIS palette (image_davis_palette), one
 * index per pixel = the label (a DAVIS id seq/frame is OUT/png/seq/frame.png).
 *
 * COCO (OUT/coco.json):
 *   images       {id, file_name, width, height}; ids 1..n over the cache's images sorted by id
 *                (strcmp); file_name: the image's path relative to the dataset's root (dir:DIR: the
 *                file's name), else its base name
 *   annotations  one per label k present in an image (a label without a pixel gives none), ids
 *                1..m in image order then label order: {id, image_id, category_id 1, iscrowd 0,
 *                segmentation {size [h, w], counts "<string>"}, area, bbox [x, y, w, h], score}
 *   categories   [{"id": 1, "name": "object"}]
 * segmentation is pycocotools' compressed RLE: the mask read column by column (Fortran order:
 * pixel (x, y) is element x h + y), cut into runs that alternate 0s and 1s starting with a run of
 * 0s (of length 0 when pixel (0, 0) is set); the counts c_i are written as a string: for i > 2,
 * c_i - c_{i-2} instead of c_i, then each value in 5-bit groups, low first, each group + 48 as a
 * character with 0x20 set when another group follows, the last group's 0x10 bit being the sign.
 * area is the number of pixels; bbox the mask's extent as pycocotools' toBbox gives it from the RLE
 * (xmin, ymin, xmax - xmin + 1, ymax - ymin + 1).
 * score (--score): the decoder's record of round k, eigengap (the default: larger = a clearer cut,
 * ranking as COCO's score does), lambda2 (the normalized cut's value, written as it is: smaller is
 * better), or none; no score is written for masks without the record or a NaN (round not run).
 *
 * All or nothing: the cache, the setting, every image (found in the dataset, at the size the masks
 * were made from) are checked before anything is written; then every file is written under a
 * temporary name and renamed in place at the end (kc_outputs_begin / kc_outputs_commit), so a
 * failure (kc_die in main) leaves the output folder as it was.
 *
 *     export_request q = {.masks = "masks.h5", .setting = "t0.15-bin-mean-corners-n3",
 *                         .images = "dir:photos", .out = "export", .score = EXPORT_SCORE_EIGENGAP};
 *     if (export_masks(&q) < 0) kc_die();
 */
#ifndef KC_EXPORT_H
#define KC_EXPORT_H
#include <stddef.h>
#include <stdint.h>

typedef enum export_score { EXPORT_SCORE_EIGENGAP, EXPORT_SCORE_LAMBDA2, EXPORT_SCORE_NONE } export_score;

typedef struct export_request {
    const char *masks;   /* a masks cache (kc-decode --out, kc-refine --out) */
    const char *setting; /* a setting id under /masks */
    const char *images;  /* the dataset of the cache's images (dataset.h spec) */
    const char *out;     /* the folder of png/ and coco.json */
    export_score score;
} export_request;

/* "eigengap", "lambda2" or "none"; 0, or -1 with the message set. */
int export_score_parse(const char *name, export_score *score);

/* The compressed RLE of the pixels equal to label in labels (h, w) row-major: run lengths in
 * column-major order, starting with a run of 0s.  counts: room for h w + 1 values; returns how many. */
size_t export_rle_counts(const uint8_t *labels, int h, int w, int label, uint32_t *counts);
/* The counts as pycocotools' string (above); malloc'd, NUL-terminated. */
char *export_rle_string(const uint32_t *counts, size_t n);
/* bbox [x, y, w, h] of the RLE as pycocotools' toBbox computes it (all 0 for an empty mask), and
 * the area (the sum of the runs of 1s). */
void export_rle_bbox(const uint32_t *counts, size_t n, int h, int bbox[4]);
uint64_t export_rle_area(const uint32_t *counts, size_t n);

/* Writes OUT/png/<id>.png for every image of the cache and OUT/coco.json (above).  Prints one
 * progress line.  0, or -1 with the message set naming the file (after the writing began, the
 * temporary files stay registered for kc_die's cleanup). */
int export_masks(const export_request *q);
#endif
