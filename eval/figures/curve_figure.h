/* eval/figures/curve_figure.h — the checkpoint curves from score folders, DAVIS results, probe scores,
 * configs/nets.ini and published numbers (kc-plot curves).
 *
 * voc: each network's kc-score folder at the report setting (its only setting, or `setting`);
 * davis: its DAVIS results folder (global_results-val.csv, J&F-Mean); probe: its kc-probe eval
 * folder (summary.csv, mIoU).  A network whose nets.ini section has `run` and `epoch` is a point
 * of that run's curve; any other is a baseline line.  published: an INI with one section per
 * reference line (label, metric = voc_jaccard|voc_corloc|davis_jf|probe_miou, value in percent,
 * source); sections whose metric starts with saliency_ (the saliency table's published rows,
 * eval/tables/saliency_table.h) are skipped, not drawn.  Writes OUT/NAME.{pdf,svg,png,tex,csv} (eval/figures/figures.h, fig_curves_write).
 *
 *     fig_input voc[1] = {{"dino", "work/scores/dino/val-t0.15-bin-mean-corners-n3"}};
 *     curve_figure_opts o = {.out = "figures", .name = "curves", .nets_ini = "configs/nets.ini",
 *                            .voc = voc, .n_voc = 1};
 *     if (curve_figure_run(&o) < 0) kc_die();
 */
#ifndef KC_CURVE_FIGURE_H
#define KC_CURVE_FIGURE_H
#include "eval/figures/figures.h"

typedef struct curve_figure_opts {
    const char *out, *name, *nets_ini;
    const char *published; /* or NULL */
    const char *setting;   /* or NULL: each network's only setting (the same for all) */
    const fig_input *voc, *davis, *probe;
    int n_voc, n_davis, n_probe;
} curve_figure_opts;

int curve_figure_run(const curve_figure_opts *o);
#endif
