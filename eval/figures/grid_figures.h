/* eval/figures/grid_figures.h — the picture grids: what each network found beside the ground truth
 * (kc-plot voc-grid, davis-grid).
 *
 * VOC: rows = the ids (or the first n of the split), columns = the ground truth
 * (SegmentationObject, 255 drawn as background) and each network's masks at `setting` from its
 * masks cache (eval/figures/overlay.h: overlay_cache_labels), blended over the photo as kc-show does.
 * DAVIS: rows = n frames of the sequence evenly spaced (frame round(i (N - 1) / (n - 1))), columns =
 * the annotation and each network's propagated labels (PATH/<seq>/<frame>.png).  Writes
 * OUT/NAME.{pdf,svg,png,tex,csv} (eval/figures/figures.h, fig_grid_write); the CSV says what each cell shows.
 *
 *     fig_input masks[1] = {{"dino", "work/cache/dino/voc12-val/masks-t0.15-bin-mean-corners-n3.h5"}};
 *     voc_grid_opts o = {.root = voc, .split = "val", .setting = "t0.15-bin-mean-corners-n3",
 *                        .masks = masks, .n_masks = 1, .first = 4, .out = "figures", .name = "grid-voc"};
 *     if (voc_grid_run(&o) < 0) kc_die();
 */
#ifndef KC_GRID_FIGURES_H
#define KC_GRID_FIGURES_H
#include "eval/figures/figures.h"

typedef struct voc_grid_opts {
    const char *root, *split, *setting, *out, *name;
    const char *ids;       /* "id,id,..." or NULL: the first `first` ids of the split */
    int first;
    const fig_input *masks; /* (n_masks) NET=masks cache */
    int n_masks;
} voc_grid_opts;
int voc_grid_run(const voc_grid_opts *o);

typedef struct davis_grid_opts {
    const char *root, *sequence, *out, *name;
    int frames;
    const fig_input *results; /* (n_results) NET=results folder */
    int n_results;
} davis_grid_opts;
int davis_grid_run(const davis_grid_opts *o);
#endif
