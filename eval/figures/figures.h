/* eval/figures/figures.h — the thesis figures: the sweep, the checkpoint curves, the picture grid.
 *
 * Every figure is written as DIR/BASE.pdf, .svg, .png (eval/figures/plot.h: cairo, deterministic bytes,
 * Okabe-Ito colours plus markers and dash patterns), DIR/BASE.csv (its data) and DIR/BASE.tex (a
 * pgfplots fragment that reads the CSV, to \input in a thesis; the grid's fragment includes the
 * PDF).  Fragments need \usepackage{pgfplots} with \usepgfplotslibrary{groupplots} (and graphicx
 * for the grid); they find their CSV under \kcfigdir, defined as `figures` unless the document
 * defines it first.
 *
 * The sweep (fig_sweep_write).  The 144 settings t<tau>-<edges>-<split>-<rule>-n<N> as small
 * multiples: one panel per (rule, edges x split) — rows seed / corners / minority, columns
 * binary-mean, binary-zero, weighted-mean, weighted-zero — with tau on the x axis and one line per
 * N; one y range for all panels.  Marked: the chosen setting (black star; a line under the legend
 * names it and the networks that chose it), TokenCut's published setting t0.20-bin-mean-seed-n1
 * (ring) and MaskCut's t0.15-bin-mean-corners-n3 (square ring).
 * CSV: a row per tau, `tau` then 36 columns <edges>_<split>_<rule>_n<N> (fractions as in the score
 * files, %.9g; nan = not scored).
 *
 * The checkpoint curves (fig_curves_write).  One panel per metric (VOC Jaccard, VOC CorLoc, DAVIS
 * J&F when any network has it, the linear probe's mIoU when any has it), the epoch on the x axis;
 * the networks of one run are one curve; networks without a run are labelled horizontal lines
 * (baselines); published numbers are dotted grey lines.  CSV:
 * `network,run,epoch,voc_jaccard,voc_corloc,davis_jf` (and `,probe_miou` when any network has a
 * probe score), the runs first (in order of first appearance, each by epoch), then the baselines
 * (run and epoch empty); fractions, nan = missing.
 *
 * The picture grid (fig_grid_write).  Rows x columns of RGB pictures (overlays), column titles
 * above, row titles at the left; the page is 460 pt wide and as tall as the rows need.
 */
#ifndef KC_FIGURES_H
#define KC_FIGURES_H
#include "pipeline/images/image.h"

/* One network's input to a figure (NET=PATH on kc-plot's command line). */
typedef struct fig_input {
    char *name, *path;
} fig_input;

/* The sweep axes beside tau (the order of the CSV columns and of the panels). */
#define FIG_EDGES 2
#define FIG_SPLITS 2
#define FIG_RULES 3
#define FIG_NS 3
#define FIG_MAX_TAU 16
extern const char *const fig_edges_id[FIG_EDGES], *const fig_splits_id[FIG_SPLITS], *const fig_rules_id[FIG_RULES];

/* Parses a grid setting id; 0 and the parts when it is one, -1 (no message) otherwise.
 * tau_text receives the tau as written ("0.15"). */
int fig_parse_setting(const char *id, char tau_text[16], int *edges, int *split, int *rule, int *n);

typedef struct fig_sweep {
    const char *title;      /* "dino", "mean of 3 networks" */
    const char *metric;     /* axis label: "Jaccard", "CorLoc" */
    int n_tau;
    char tau[FIG_MAX_TAU][16]; /* as written in the ids, sorted by value */
    double *v;                 /* (n_tau, FIG_EDGES, FIG_SPLITS, FIG_RULES, FIG_NS) fractions, NaN = missing */
    const char *chosen;        /* setting id to mark, or NULL */
    const char *chosen_by;     /* the networks that chose it ("dino, selfpatch", said under the
                                  legend), or NULL: given by hand */
} fig_sweep;
/* Index of one cell of v. */
int fig_sweep_at(int tau, int edges, int split, int rule, int n);
int fig_sweep_write(const char *dir, const char *base, const fig_sweep *f);

enum { FIG_VOC_JACCARD, FIG_VOC_CORLOC, FIG_DAVIS_JF, FIG_PROBE_MIOU, FIG_N_METRICS };
extern const char *const fig_metric_key[FIG_N_METRICS], *const fig_metric_label[FIG_N_METRICS];

typedef struct fig_point {
    const char *network;
    const char *run; /* NULL: a baseline */
    double epoch;
    double v[FIG_N_METRICS]; /* fractions, NaN = missing */
} fig_point;
typedef struct fig_reference {
    const char *label;
    int metric;
    double value; /* percent, as published */
} fig_reference;
typedef struct fig_curves {
    int n;
    fig_point *points; /* any order: fig_curves_write orders the CSV as above */
    int n_refs;
    fig_reference *refs;
    const char *subtitle; /* e.g. "VOC val at t0.15-bin-mean-corners-n3", or NULL */
} fig_curves;
int fig_curves_write(const char *dir, const char *base, const fig_curves *f);

typedef struct fig_grid {
    int n_rows, n_cols;
    const char *const *row_titles; /* (n_rows) */
    const char *const *col_titles; /* (n_cols) */
    const kc_image *cells;         /* (n_rows, n_cols); w == 0 leaves a cell empty */
    const char *csv;               /* the CSV to write beside it (the stage says what is in each cell) */
    const char *caption;           /* a comment for the .tex fragment */
} fig_grid;
int fig_grid_write(const char *dir, const char *base, const fig_grid *g);
#endif
