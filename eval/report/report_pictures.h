/* eval/report/report_pictures.h — the report's pictures and copied files (eval/report/report.h): each drawn or
 * copied only when it is stale, that is missing, older than one of its inputs or than this
 * program, or every one when the picture options changed (R->force).
 *
 * A VOC image's pictures (report_draw_image): the photo once, full size and at thumbnail height
 * (photo/<id>.jpg, photo/<id>.t.jpg, JPEG at R->quality); its masks are label data that report.js
 * draws over it (eval/report/report_data.h).  Figures (report_copy_figures): each .png of kc-plot's
 * folder, and its .svg when there is one, copied into figures/.  The DAVIS frames
 * (eval/report/report_davis.c) use the helpers.
 * R->drawn and R->kept count the pictures drawn and found up to date.
 *
 * Includes report_types.h (and, in the .c, report_files.h); the data files, the galleries, the
 * DAVIS page and index.html build on it (eval/report/report_types.h).
 */
#ifndef KC_REPORT_PICTURES_H
#define KC_REPORT_PICTURES_H
#include <stdint.h>

#include "eval/report/report_types.h"
#include "pipeline/images/image.h"

/* A file's modification time in seconds, -1 when it cannot be read (or path is NULL). */
double report_mtime(const char *path);
/* 1 when out must be (re)drawn: missing, or older than one of inputs (NULL ones skipped), this
 * program or the options. */
int report_stale(const report *R, const char *out, const char *const *inputs, int n);
/* Writes im as the JPEG OUT/rel (its folder made) at quality and counts it drawn. */
int report_write_jpeg(report *R, const char *rel, const kc_image *im, int quality);
/* The quality of a picture with labels drawn into it (a DAVIS frame): R->quality, at least 50,
 * since its contours are not a layer of their own. */
int report_frame_quality(const report *R);
/* The picture of im at thumbnail height (never enlarged). */
int report_thumb(const report *R, const kc_image *im, kc_image *out);
/* a and b side by side (the taller's height), a 2-pixel white gap between them. */
void report_side_by_side(const kc_image *a, const kc_image *b, kc_image *out);
/* A copy of im with labels (may be NULL) drawn over it as kc-show draws them. */
void report_with_labels(const kc_image *im, const uint8_t *labels, kc_image *out);
/* The label PNG path (palette indices; 255, void, read as 0), which must be W x H as the kind
 * ("photo", "frame") of_path is. */
int report_read_labels(const char *path, int W, int H, const char *kind, const char *of_path, uint8_t **labels);

/* The ground truth of image id, R->voc_root/SegmentationObject/<id>.png (a new string), NULL
 * when there is no --voc or no such file. */
char *report_gt_path(const report *R, const char *id);
/* The photo file photo as rel.jpg and, at thumbnail height, rel.t.jpg (rel: a path under OUT
 * without extension), each redrawn only when stale. */
int report_draw_photo(report *R, const char *photo, const char *rel);
/* The photo of image R->img[i] (above); nothing when it has no photo. */
int report_draw_image(report *R, int i);

/* The figures of R->figures: the base names (html_safe_name) of its .png files, in the order of
 * their names, svg[i] set when an .svg was copied beside one. */
typedef struct report_figures {
    int n;
    char **base;
    int *svg;
} report_figures;
int report_copy_figures(report *R, report_figures *f);
void report_figures_free(report_figures *f);
#endif
