/* eval/report/report_saliency.h — the report's saliency galleries (eval/report/report.h): kc-saliency's
 * scores (eval/saliency/saliency.h) of one or more networks on ECSSD, DUTS-TE, DUT-OMRON (or a
 * folder of img/ + gt/), one gallery page per dataset.
 *
 * A --saliency NET=DIR is a kc-saliency folder: DIR/summary.csv (two lines, refine none and bs, of
 * one setting and dataset), DIR/<setting>.csv (per image, none then bs: iou, fbeta, ...),
 * DIR/dataset (the spec saliency:ROOT, opened with dataset_open: the photos and ground truths),
 * DIR/png/<id>.png (8-bit palette at the image's size: bit 0 the decoder's mask, bit 1 the
 * solver's output > 0.5) and, when there, DIR/network.  The folders are grouped by the dataset
 * their summary.csv names; the galleries are ordered ECSSD, DUTS-TE, DUT-OMRON, then the others by
 * name, and each lists its networks in the order given.  Every input is checked before anything is
 * written: a folder without summary.csv, dataset or png/, a dataset root that is gone, an image of
 * a CSV that is not in the dataset, a PNG missing or of another size than its photo, a ground
 * truth of another size: one line naming the file.
 *
 * A gallery (the page saliency-<dataset>.html): the dataset's summary per network, with and without
 * the solver (max F-beta, mean IoU, accuracy, the threshold of the max F-beta), then every image of
 * any network's CSV (worst solver IoU of the first network first, a missing one last, ties in the
 * CSV's order) as thumbnails: the ground truth (any nonzero value of PIL's convert('L'),
 * saliency_luma), then per network the decoder's mask and the solver's, each image's IoU and
 * F-beta (decoder / solver) below; sort by any of them, filter by id or by the sort key's value,
 * pages, as the VOC gallery (report.js).  Pictures: photo/saliency-<dataset>/<id>.jpg and .t.jpg;
 * the layers are label data (eval/report/report_data.h's report_layer_set, the VOC galleries'
 * machinery): data/saliency-<dataset>/gt/<k>.js and data/saliency-<dataset>/<net>-none/ and
 * <net>-bs/ (html_safe_name of each name), each chunk rewritten only when stale (its photos,
 * ground truths or PNGs, the dataset's CSVs, this program, the picture options).
 *
 * Includes report_types.h (and, in the .c, report_pages.h, report_data.h, report_files.h and
 * report_pictures.h); index.html and the run build on it (eval/report/report_types.h).
 *
 *     KC_TRY(report_saliency_load(R));         // every --saliency folder read and checked
 *     KC_TRY(report_saliency_draw(R));         // photos and data files (when stale)
 *     report_saliency_page(&b, R, s);          // the page of gallery R->sg[s]
 *     report_saliency_free(R);
 */
#ifndef KC_REPORT_SALIENCY_H
#define KC_REPORT_SALIENCY_H
#include "eval/report/report_types.h"
#include "pipeline/kc.h"

/* Reads every R->saliency folder into R->sal, and the galleries R->sg. */
int report_saliency_load(report *R);
/* The galleries' photos and data files, each only when stale. */
int report_saliency_draw(report *R);
/* Test option (--layer-hashes): the saliency layers' lines (report_layer_set_hashes) into b. */
int report_saliency_hashes(report *R, kc_buf *b);
/* The page of saliency gallery R->sg[s], into b. */
void report_saliency_page(kc_buf *b, const report *R, int s);
/* index.html's saliency section: each dataset's networks and summaries, linked to the galleries. */
void report_saliency_index(kc_buf *b, const report *R);
/* The provenance of run R->sal[k]: its files, the dataset spec, the network file. */
void report_saliency_prov(kc_buf *b, const report *R, int k);
void report_saliency_free(report *R);
#endif
