/* eval/report/report_pages.h — what the report's pages share (eval/report/report.h): the page frame,
 * its writing, values, tables and provenance; index.html is eval/report/report_index.h.
 *
 * A page is built in a kc_buf: report_page_begin (the head, the navigation, the title as <h1>;
 * root is the page's way back to the report folder, "" or "../"), the content, report_page_end;
 * report_page_write writes it as OUT/rel (atomically; deferred to the commit between
 * kc_outputs_begin and kc_outputs_commit) and empties the buffer.  Values are shown as the
 * Markdown tables show them (report_value: fractions in percent with one decimal) with the exact
 * text in the cell's data-v, for report.js's sorting.
 *
 * Includes report_types.h (and, in the .c, report_files.h for report_out_path): the galleries,
 * the DAVIS page and index.html build on it, never it on them (eval/report/report_types.h).
 */
#ifndef KC_REPORT_PAGES_H
#define KC_REPORT_PAGES_H
#include "eval/report/report_types.h"
#include "pipeline/kc.h"

void report_page_begin(kc_buf *b, const char *root, const char *title, const report *R);
void report_page_end(kc_buf *b);
int report_page_write(report *R, const char *rel, kc_buf *b);
/* v as a number in percent with one decimal; escaped as it is when it is not a number. */
void report_value(kc_buf *b, const char *v);
/* v as a number of 4 significant digits (its exact text is in a data- attribute); escaped as it is
 * when it is not a number, "-" when empty. */
void report_short(kc_buf *b, const char *v);
/* A CSV as a sortable table; a first column that names a gallery's network links to its page. */
void report_table(kc_buf *b, const report *R, const csv_file *c);
/* A cache's provenance: the main root attributes, then all of them in a <details>. */
void report_cache_prov(kc_buf *b, const cache_reader *r);
/* A gallery's inputs (network, setting, scores, summary.csv, masks) and its masks cache's provenance. */
void report_gallery_prov(kc_buf *b, const report *R, const gallery *G);
#endif
