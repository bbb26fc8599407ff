/* stages/kc-plot.c — the thesis figures (eval/figures/figures.h) from score files, results and masks.
 *
 *   kc-plot sweep      --scores NET=DIR... [--baseline NET]... --out DIR [--chosen ID] [--prefix sweep]
 *   kc-plot curves     --voc NET=DIR... [--davis NET=DIR]... [--probe NET=DIR]... [--nets-ini FILE] [--published FILE]
 *                      [--setting ID] --out DIR [--name curves]
 *   kc-plot voc-grid   --voc ROOT --split SPLIT --setting ID --masks NET=FILE... [--ids A,B,..|--first N]
 *                      --out DIR [--name grid-voc]
 *   kc-plot davis-grid --davis ROOT --sequence SEQ --results NET=DIR... [--frames N] --out DIR
 *                      [--name grid-davis]
 *
 * sweep: DIR is a kc-score folder of the selection split (DIR/summary.csv); writes per network
 * PREFIX-<net>-{jaccard,corloc} and, over all networks, PREFIX-{jaccard,corloc} (the mean over the
 * networks).  The star is --chosen, else the report's setting: the rule of kc-table
 * (eval/tables/setting_choice.h: the best mean Jaccard over the networks that are not a --baseline, all
 * when every one is; ties: the first id in strcmp order); a line under the legend names it and the
 * networks that chose it (eval/figures/sweep_figures.h).
 * curves: --voc DIR is a network's kc-score folder at the report setting (one setting, or
 * --setting); --davis DIR its DAVIS results folder (global_results-val.csv, J&F-Mean).  A network
 * whose nets.ini section has `run` and `epoch` is a point of that run's curve; any other is a
 * baseline.  --published: an INI with one section per reference line (label, metric =
 * voc_jaccard|voc_corloc|davis_jf, value in percent, source).
 * voc-grid: rows = the ids (or the first N of the split, default 4), columns = the ground truth
 * (SegmentationObject) and each network's masks at --setting, drawn as kc-show draws them.
 * davis-grid: rows = N frames of the sequence evenly spaced (default 4), columns = the ground-truth
 * annotation and each network's propagated labels (DIR/<seq>/<frame>.png).
 * Every figure: DIR/NAME.{pdf,svg,png,csv,tex}; every file written atomically, byte-identical
 * across runs.  The work is eval/'s: sweep_figures, curve_figure, grid_figures.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/figures/curve_figure.h"
#include "eval/figures/figures.h"
#include "eval/figures/grid_figures.h"
#include "eval/figures/plot.h"
#include "eval/figures/sweep_figures.h"
#include "pipeline/kc.h"

static void usage(int status)
{
    fprintf(status ? stderr : stdout,
            "usage: kc-plot sweep      --scores NET=DIR... [--baseline NET]... --out DIR [--chosen ID] [--prefix sweep]\n"
            "       kc-plot curves     --voc NET=DIR... [--davis NET=DIR]... [--probe NET=DIR]... [--nets-ini FILE]\n"
            "                          [--published FILE]\n"
            "                          [--setting ID] --out DIR [--name curves]\n"
            "       kc-plot voc-grid   --voc ROOT --split SPLIT --setting ID --masks NET=FILE...\n"
            "                          [--ids A,B,... | --first N] --out DIR [--name grid-voc]\n"
            "       kc-plot davis-grid --davis ROOT --sequence SEQ --results NET=DIR... [--frames N] --out DIR\n"
            "                          [--name grid-davis]\n"
            "\n"
            "Draws the thesis figures with cairo: each as PDF, SVG, a PNG preview, a pgfplots .tex fragment\n"
            "and the CSV of its data (Okabe-Ito colours with markers and dash patterns: readable in grey\n"
            "and by colour-blind readers).  sweep: Jaccard and CorLoc of every decoder setting on the\n"
            "selection split (small multiples: rule x edges/split panels, tau on x, one line per N; the\n"
            "chosen, TokenCut's and MaskCut's settings marked), per network and the mean over them; the\n"
            "chosen setting is the report's (kc-table's rule: --baseline NET does not choose) and the figure\n"
            "names the networks that chose it.\n"
            "curves: VOC Jaccard, CorLoc and DAVIS J&F of each training run (configs/nets.ini `run`,\n"
            "`epoch`) against the epoch, other networks and published numbers as horizontal lines.\n"
            "voc-grid / davis-grid: pictures of what each network found, beside the ground truth.\n"
            "\n"
            "example:\n"
            "  kc-plot sweep --scores dino=work/scores/dino/select --scores selfpatch=work/scores/selfpatch/select \\\n"
            "                --out figures\n"
            "  kc-plot curves --voc run2-e05=work/scores/run2-e05/val-t0.15-bin-mean-corners-n3 \\\n"
            "                 --voc dino=work/scores/dino/val-t0.15-bin-mean-corners-n3 --published configs/published.ini \\\n"
            "                 --out figures\n");
    exit(status);
}

static void parse_named(const char *opt, const char *v, fig_input **list, int *n)
{
    const char *eq = strchr(v, '=');
    if (!eq || eq == v || !eq[1]) kc_die_msg("%s wants NET=PATH, got '%s'", opt, v);
    for (int i = 0; i < *n; i++)
        if (strlen((*list)[i].name) == (size_t)(eq - v) && !strncmp((*list)[i].name, v, (size_t)(eq - v)))
            kc_die_msg("%s: network '%.*s' given twice", opt, (int)(eq - v), v);
    *list = kc_realloc(*list, (size_t)(*n + 1) * sizeof **list);
    (*list)[*n].name = kc_strfmt("%.*s", (int)(eq - v), v);
    (*list)[*n].path = kc_strdup(eq + 1);
    size_t k = strlen((*list)[*n].path);
    while (k > 1 && (*list)[*n].path[k - 1] == '/') (*list)[*n].path[--k] = 0;
    (*n)++;
}

static void free_inputs(fig_input *l, int n)
{
    for (int i = 0; i < n; i++) {
        free(l[i].name);
        free(l[i].path);
    }
    free(l);
}

static int parse_count(const char *opt, const char *v)
{
    char *end;
    long x = strtol(v, &end, 10);
    if (end == v || *end || x <= 0 || x > 1000) kc_die_msg("%s needs a positive number, got '%s'", opt, v);
    return (int)x;
}

/* Each command: its options, then its module. */

static int cmd_sweep(int argc, char **argv)
{
    fig_input *nets = NULL;
    int n_nets = 0;
    const char *out = NULL, *chosen = NULL, *prefix = "sweep";
    const char **baselines = NULL;
    int n_baselines = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) usage(0);
        if (i + 1 >= argc) kc_die_msg("%s needs a value (see --help)", a);
        const char *v = argv[++i];
        if (!strcmp(a, "--scores")) parse_named(a, v, &nets, &n_nets);
        else if (!strcmp(a, "--out")) out = v;
        else if (!strcmp(a, "--chosen")) chosen = v;
        else if (!strcmp(a, "--prefix")) prefix = v;
        else if (!strcmp(a, "--baseline")) {
            baselines = kc_realloc(baselines, (size_t)(n_baselines + 1) * sizeof *baselines);
            baselines[n_baselines++] = v;
        }
        else kc_die_msg("unknown option %s (see --help)", a);
    }
    if (!out || !n_nets) kc_die_msg("sweep needs --scores NET=DIR and --out DIR (see --help)");
    if (!*prefix || strpbrk(prefix, "/ \t")) kc_die_msg("--prefix: bad value '%s'", prefix);
    sweep_figures_opts o = {.out = out, .prefix = prefix, .chosen = chosen, .nets = nets, .n_nets = n_nets,
                            .baselines = baselines, .n_baselines = n_baselines};
    int rc = sweep_figures_run(&o);
    free(baselines);
    free_inputs(nets, n_nets);
    return rc;
}

static int cmd_curves(int argc, char **argv)
{
    fig_input *voc = NULL, *davis = NULL, *probe = NULL;
    int n_voc = 0, n_davis = 0, n_probe = 0;
    const char *out = NULL, *nets_ini = "configs/nets.ini", *published = NULL, *setting = NULL, *name = "curves";
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) usage(0);
        if (i + 1 >= argc) kc_die_msg("%s needs a value (see --help)", a);
        const char *v = argv[++i];
        if (!strcmp(a, "--voc")) parse_named(a, v, &voc, &n_voc);
        else if (!strcmp(a, "--davis")) parse_named(a, v, &davis, &n_davis);
        else if (!strcmp(a, "--probe")) parse_named(a, v, &probe, &n_probe);
        else if (!strcmp(a, "--out")) out = v;
        else if (!strcmp(a, "--nets-ini")) nets_ini = v;
        else if (!strcmp(a, "--published")) published = v;
        else if (!strcmp(a, "--setting")) setting = v;
        else if (!strcmp(a, "--name")) name = v;
        else kc_die_msg("unknown option %s (see --help)", a);
    }
    if (!out || !n_voc) kc_die_msg("curves needs --voc NET=DIR and --out DIR (see --help)");
    if (!*name || strpbrk(name, "/ \t")) kc_die_msg("--name: bad value '%s'", name);
    curve_figure_opts o = {.out = out, .name = name, .nets_ini = nets_ini, .published = published, .setting = setting,
                           .voc = voc, .davis = davis, .probe = probe, .n_voc = n_voc, .n_davis = n_davis,
                           .n_probe = n_probe};
    int rc = curve_figure_run(&o);
    free_inputs(voc, n_voc);
    free_inputs(davis, n_davis);
    free_inputs(probe, n_probe);
    return rc;
}

static int cmd_voc_grid(int argc, char **argv)
{
    fig_input *masks = NULL;
    int n_masks = 0, first = 4;
    const char *root = NULL, *split = NULL, *setting = NULL, *ids_opt = NULL, *out = NULL, *name = "grid-voc";
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) usage(0);
        if (i + 1 >= argc) kc_die_msg("%s needs a value (see --help)", a);
        const char *v = argv[++i];
        if (!strcmp(a, "--masks")) parse_named(a, v, &masks, &n_masks);
        else if (!strcmp(a, "--voc")) root = v;
        else if (!strcmp(a, "--split")) split = v;
        else if (!strcmp(a, "--setting")) setting = v;
        else if (!strcmp(a, "--ids")) ids_opt = v;
        else if (!strcmp(a, "--first")) first = parse_count(a, v);
        else if (!strcmp(a, "--out")) out = v;
        else if (!strcmp(a, "--name")) name = v;
        else kc_die_msg("unknown option %s (see --help)", a);
    }
    if (!root || !split || !setting || !n_masks || !out)
        kc_die_msg("voc-grid needs --voc, --split, --setting, --masks NET=FILE and --out (see --help)");
    if (!*name || strpbrk(name, "/ \t")) kc_die_msg("--name: bad value '%s'", name);
    voc_grid_opts o = {.root = root, .split = split, .setting = setting, .out = out, .name = name, .ids = ids_opt,
                       .first = first, .masks = masks, .n_masks = n_masks};
    int rc = voc_grid_run(&o);
    free_inputs(masks, n_masks);
    return rc;
}

static int cmd_davis_grid(int argc, char **argv)
{
    fig_input *res = NULL;
    int n_res = 0, n_frames = 4;
    const char *root = NULL, *seq = NULL, *out = NULL, *name = "grid-davis";
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) usage(0);
        if (i + 1 >= argc) kc_die_msg("%s needs a value (see --help)", a);
        const char *v = argv[++i];
        if (!strcmp(a, "--results")) parse_named(a, v, &res, &n_res);
        else if (!strcmp(a, "--davis")) root = v;
        else if (!strcmp(a, "--sequence")) seq = v;
        else if (!strcmp(a, "--frames")) n_frames = parse_count(a, v);
        else if (!strcmp(a, "--out")) out = v;
        else if (!strcmp(a, "--name")) name = v;
        else kc_die_msg("unknown option %s (see --help)", a);
    }
    if (!root || !seq || !n_res || !out)
        kc_die_msg("davis-grid needs --davis, --sequence, --results NET=DIR and --out (see --help)");
    if (!*name || strpbrk(name, "/ \t")) kc_die_msg("--name: bad value '%s'", name);
    davis_grid_opts o = {.root = root, .sequence = seq, .out = out, .name = name, .frames = n_frames, .results = res,
                         .n_results = n_res};
    int rc = davis_grid_run(&o);
    free_inputs(res, n_res);
    return rc;
}

int main(int argc, char **argv)
{
    kc_set_prog("kc-plot");
    kc_set_cmdline(argc, argv);
    if (argc < 2) usage(1);
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h")) usage(0);
    double t0 = kc_now();
    int rc;
    if (!strcmp(cmd, "sweep")) rc = cmd_sweep(argc - 2, argv + 2);
    else if (!strcmp(cmd, "curves")) rc = cmd_curves(argc - 2, argv + 2);
    else if (!strcmp(cmd, "voc-grid")) rc = cmd_voc_grid(argc - 2, argv + 2);
    else if (!strcmp(cmd, "davis-grid")) rc = cmd_davis_grid(argc - 2, argv + 2);
    else kc_die_msg("unknown figure '%s': sweep, curves, voc-grid or davis-grid (see --help)", cmd);
    if (rc < 0) kc_die();
    plot_release();
    kc_info("done in %.2f s", kc_now() - t0);
    return rc;
}
