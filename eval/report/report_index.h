/* eval/report/report_index.h — the report's index.html (eval/report/report.h): one line of what the
 * results are of (the setting and refinement, the VOC val split and root, the DAVIS split and root,
 * the networks: eval/tables/table_about.h), when and by what command, the tables (sortable), the
 * galleries with their means, the saliency galleries with their summaries, the figures, and the
 * provenance of every gallery, DAVIS result and saliency folder.
 *
 * Includes report_types.h, report_davis.h (the results it names) and report_pictures.h (the
 * figures copied); in the .c report_pages.h, report_gallery.h and report_saliency.h.  Only the run (report.c) includes
 * it (eval/report/report_types.h).
 *
 *     report_index(&b, R, tables, &figs, dn);
 *     KC_TRY(report_page_write(R, "index.html", &b));
 */
#ifndef KC_REPORT_INDEX_H
#define KC_REPORT_INDEX_H
#include "eval/report/report_davis.h"
#include "eval/report/report_pictures.h"
#include "eval/report/report_types.h"
#include "pipeline/kc.h"

/* index.html: what the results are of (one line: setting, splits, roots, networks), when, by what
 * command; the tables (tables[t] read from R->tables[t]), the galleries,
 * the figures, the provenance of every gallery and DAVIS result (dn: R->n_davis of them). */
void report_index(kc_buf *b, const report *R, const csv_file *tables, const report_figures *figs,
                  const report_davis *dn);
#endif
