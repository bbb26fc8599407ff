/* eval/report/report_davis.h — the report's DAVIS results (eval/report/report.h): davis.html and the DAVIS
 * provenance on index.html.
 *
 * One --davis NET=DIR is a kc-propagate / kc-davis results folder (its split: --davis-split, else
 * val, else the only one there): DIR/global_results-<split>.csv
 * (shown as it is), DIR/per-sequence_results-<split>.csv (J and F per object, averaged per
 * sequence), DIR/global_results-<split>.json when present (per_frame J of every object: the three
 * frames of each sequence where the mean J falls most from the frame before, the frame before the
 * first taken as J = 1) and DIR/propagate.json when present (its features cache, for the
 * provenance).  With --davis-root, each sequence gets a strip of R->strip frames with the
 * propagated labels (davis/<net>/<seq>/<frame>.jpg, thumbnail height) and its falls, half size
 * with the annotation on the left (davis/<net>/<seq>/drop-<frame>.jpg).
 *
 * Includes report_types.h (and, in the .c, report_pages.h, report_pictures.h and report_files.h);
 * index.html and the run build on it (eval/report/report_types.h).
 */
#ifndef KC_REPORT_DAVIS_H
#define KC_REPORT_DAVIS_H
#include "eval/report/report_types.h"
#include "pipeline/kc.h"

typedef struct report_davis_seq {
    char *name;
    int n_obj;
    double j_mean, f_mean;   /* mean over the sequence's objects (per-sequence CSV) */
    int n_frames;
    char **frames;           /* per_frame frames (the first, given, frame excluded) */
    double *j;               /* (n_frames) mean J over the objects */
    int drops[3], n_drops;   /* frames (indices) with the largest fall of J from the frame before */
} report_davis_seq;

typedef struct report_davis {
    const report_named *in;
    char *split;
    csv_file global, per_seq;
    int n_seq;
    report_davis_seq *seq;
    char *features;          /* kc-propagate's propagate.json */
    char *prop_text;
} report_davis;

/* Reads the results folder in->path: its global_results-<split>.* (split NULL: val, else the only
 * split there; eval/davis/davis_results.h). */
int report_davis_load(const report_named *in, const char *split, report_davis *d);
void report_davis_free(report_davis *d);
/* davis.html for the R->n_davis results dn, into b; draws the frames it shows (when stale). */
int report_davis_page(report *R, const report_davis *dn, kc_buf *b);
/* The results' provenance on index.html (its files, and its features cache's root attributes). */
void report_davis_prov(kc_buf *b, const report_davis *d);
#endif
