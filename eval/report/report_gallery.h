/* eval/report/report_gallery.h — the report's galleries (eval/report/report.h): kc-score's per-image CSVs, one
 * gallery page each, and one page per image across the galleries.
 *
 * A --scores NET=DIR gives a gallery for each DIR/<setting>.csv (not summary.csv, iou.csv or
 * *.heads.csv), in the order of the file names: a kc-score per-image CSV, its header starting with
 * id and holding setting and jaccard, every row of the setting its name says.  Its entries are
 * sorted worst Jaccard first (a missing Jaccard last, ties in the CSV's order); DIR/summary.csv is
 * kept for the provenance.  Its page is gallery-<net>-<setting>.html and its pictures are under
 * <net>/<setting>/ (html_safe_name of each).  Each image id of any gallery is one image_ref and one
 * page, images/<id>.html.
 *
 * Includes report_types.h (and, in the .c, report_pages.h, report_data.h and report_pictures.h);
 * index.html and the run build on it (eval/report/report_types.h).
 */
#ifndef KC_REPORT_GALLERY_H
#define KC_REPORT_GALLERY_H
#include "eval/report/report_types.h"
#include "pipeline/kc.h"

/* Adds the galleries of one --scores NET=DIR to R (and their images to R's image table). */
int gallery_load(report *R, const report_named *scores);
/* Each gallery's masks cache (the first of R->masks, opened as R->mr, of its network that has its
 * setting; -1 when none has), and each image's galleries (in_gallery, in_entry). */
void gallery_link(report *R);
void gallery_free(gallery *G);
/* The mean of the column col over the gallery's entries that have a number there (*n of them);
 * NaN when none has. */
double gallery_mean(const gallery *G, int col, int *n);
/* The page of gallery R->g[gi], into b. */
void gallery_page(kc_buf *b, const report *R, int gi);
/* The page of image R->img[i], into b. */
void report_image_page(kc_buf *b, const report *R, int i);
#endif
