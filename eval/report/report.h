/* eval/report/report.h — the results browser (kc-report, issue 24): one static HTML folder per run.
 *
 * report_run reads what the pipeline already wrote (kc-table's CSVs, kc-plot's figures, kc-score's
 * per-image CSVs, the masks caches, kc-propagate / kc-davis results) and writes R->out/:
 *
 *   index.html                  one line of what the results are of (the setting and refinement, the
 *                               VOC val split and root, the DAVIS split and root, the networks:
 *                               eval/tables/table_about.h), the tables (sortable), the galleries, the
 *                               figures, provenance
 *   gallery-<net>-<setting>.html  every image of a per-image score CSV, worst Jaccard first; sort,
 *                               filter and pages in report.js; thumbnails drawn as they come into view
 *   images/<id>.html            one image: its ground truth and every gallery's mask, full size,
 *                               with Jaccard, CorLoc, lambda2, eigengap, knife edge, degenerate
 *   saliency-<dataset>.html     one per dataset of the --saliency folders (kc-saliency's; ECSSD,
 *                               DUTS-TE, DUT-OMRON, then others): its summary per network with and
 *                               without the solver, every image with the ground truth and each
 *                               network's decoder and solver masks as layers, each image's IoU and
 *                               F-beta (eval/report/report_saliency.h); photos under
 *                               photo/saliency-<dataset>/, layers under data/saliency-<dataset>/
 *   davis.html                  per network and sequence J and F, a strip of frames with the
 *                               propagated labels, and the frames where J drops most
 *   report.js, report.css       the page's script and style (eval/report/report_assets.h)
 *   photo/                      each photo once, full size and thumbnail (<id>.jpg, <id>.t.jpg, JPEG
 *                               at --quality, 30 by default: the masks are drawn sharp over it)
 *   data/gt/<k>.js              the masks as label data (eval/report/report_data.h), 100 images a file,
 *   data/gallery-<net>-<setting>/<k>.js  loaded by <script src> when a picture needs them: the
 *                               ground truth's in the image table's order, each gallery's in its
 *                               order; report.js draws the layers from them into canvases over the
 *                               photo, full size and thumbnail (the thumbnail: the ground truth
 *                               beside the mask), exactly as kc-show draws them (eval/figures/overlay.h)
 *   davis/                      DAVIS frames with the propagated labels (JPEG)
 *   figures/                    copies of the figures' .svg and .png
 *   .keycut-report-files        the files of the last successful run (eval/report/report_files.h)
 *
 * Pictures and data files are written once: one is rewritten only when it is missing or older
 * than one of its inputs (photo, ground truth, masks cache, score CSV, results PNG, this program),
 * when a data file's entries are not in the order the request gives (eval/report/report_data.h),
 * or when the picture options change (OUT/.pictures, the options' text, which names each saliency
 * gallery's dataset spec too).  Pages are rewritten each
 * run, all renamed together at the end (kc_outputs_begin).  Incremental equals clean: at the end
 * of a successful run OUT holds exactly what the same command writes into an empty folder, since
 * every file an earlier run wrote (listed in OUT/.keycut-report-files) that this run neither wrote
 * nor found up to date is removed, and no other file; a folder that holds files of no kc-report
 * run is refused (eval/report/report_files.h).  Nothing is written outside OUT (but the file of the test
 * option --layer-hashes); OUT/.keycut.lock keeps one writer.  Every user string (ids, names,
 * paths, commands) is HTML-escaped (eval/report/html.h), in a data file JavaScript-escaped, and file
 * names come from html_safe_name.
 *
 * The modules: this one (the run: inputs, order, clean-up), eval/report/report_types.h (the state
 * they share, and the order in which they include one another), eval/report/report_files.h (which
 * files of OUT are the report's: this run's record, the removal of earlier runs'),
 * eval/report/report_gallery.h (the score CSVs as galleries, their pages and the image pages),
 * eval/report/report_pictures.h (photos and figures: drawn or copied only when stale),
 * eval/report/report_data.h (the masks as label data, and the C reference of the layers report.js
 * draws), eval/report/report_davis.h (the DAVIS results and page), eval/report/report_saliency.h (the
 * saliency galleries), eval/report/report_pages.h (what
 * every page shares), eval/report/report_index.h (index.html).  This header is the run's alone: it
 * includes report_types.h and is included by stages/kc-report.c, by none of the modules.
 *
 *     report R;
 *     memset(&R, 0, sizeof R);
 *     R.out = "report"; R.title = "keycut report"; R.thumb_h = 96; R.quality = 30; R.strip = 8;
 *     ... R.tables / R.scores / R.masks / R.davis, R.figures, R.images_spec ...
 *     if (report_run(&R) < 0) kc_die();
 */
#ifndef KC_REPORT_H
#define KC_REPORT_H
#include "eval/report/report_types.h"

/* Writes the report R describes (its options, eval/report/report_types.h, the rest zero).  Every
 * input is read before anything is written.  -1 with a message on failure, and the caller is to
 * kc_die(): that removes the run's temporary files and lock, so that the pages stay as they were.
 * On success it frees what it allocated; R's option lists stay the caller's. */
int report_run(report *R);
#endif
