/* eval/figures/sweep_figures.h — the sweep figures of several networks from their kc-score folders
 * (kc-plot sweep).
 *
 * Each input is a network's kc-score folder of the selection split (PATH/summary.csv,
 * eval/voc/score_summary.h).  Written (eval/figures/figures.h, fig_sweep_write): per network
 * OUT/PREFIX-<net>-{jaccard,corloc}, and over all networks OUT/PREFIX-{jaccard,corloc}, the mean
 * over the networks (a setting not scored for all of them is missing).  Settings off the
 * t<tau>-<edges>-<split>-<rule>-n<N> grid are counted and not drawn.  The star marks `chosen`, else
 * the setting eval/tables/setting_choice.h chooses (the report's), and the figure names the networks
 * that chose it.
 *
 *     fig_input nets[2] = {{"dino", "work/scores/dino/select"}, {"color", "work/scores/color/select"}};
 *     const char *baselines[1] = {"color"};
 *     sweep_figures_opts o = {.out = "figures", .prefix = "sweep", .nets = nets, .n_nets = 2,
 *                             .baselines = baselines, .n_baselines = 1};
 *     if (sweep_figures_run(&o) < 0) kc_die();
 */
#ifndef KC_SWEEP_FIGURES_H
#define KC_SWEEP_FIGURES_H
#include "eval/figures/figures.h"

typedef struct sweep_figures_opts {
    const char *out, *prefix;
    const char *chosen;            /* NULL: the rule's */
    const fig_input *nets;         /* (n_nets) */
    int n_nets;
    const char *const *baselines;  /* (n_baselines) networks that do not choose */
    int n_baselines;
} sweep_figures_opts;

int sweep_figures_run(const sweep_figures_opts *o);
#endif
