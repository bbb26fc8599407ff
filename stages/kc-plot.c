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
 * voc_jaccard|voc_corloc|davis_jf|probe_miou, value in percent, source); its saliency_* sections
 * (kc-table --saliency's published rows) are skipped.
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
#include "pipeline/opts.h"

static const char usage[] =
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
    "                 --out figures\n";

/* ---- options ------------------------------------------------------------------------------- */

/* The NET=PATH inputs of one option (--scores, --voc, --masks, ...), in the order given. */
typedef struct fig_list {
    fig_input *items;
    int n;
} fig_list;

static int read_named(const opts_option *opt, const char *v)
{
    fig_list *list = opt->target;
    char *name, *path;
    if (opts_split_pair(v, &name, &path) < 0) return kc_fail("%s wants NET=PATH, got '%s'", opt->name, v);
    for (int i = 0; i < list->n; i++)
        if (!strcmp(list->items[i].name, name)) {
            kc_fail("%s: network '%s' given twice", opt->name, name);
            free(name);
            free(path);
            return -1;
        }
    size_t k = strlen(path);
    while (k > 1 && path[k - 1] == '/') path[--k] = 0;
    list->items = kc_realloc(list->items, (size_t)(list->n + 1) * sizeof *list->items);
    list->items[list->n++] = (fig_input){name, path};
    return 0;
}

static void free_inputs(fig_list *list)
{
    for (int i = 0; i < list->n; i++) {
        free(list->items[i].name);
        free(list->items[i].path);
    }
    free(list->items);
}

/* --baseline NET, repeatable */
typedef struct name_list {
    const char **items;
    int n;
} name_list;

static int read_baseline(const opts_option *opt, const char *v)
{
    name_list *list = opt->target;
    list->items = kc_realloc(list->items, (size_t)(list->n + 1) * sizeof *list->items);
    list->items[list->n++] = v;
    return 0;
}

static int read_count(const opts_option *opt, const char *v)
{
    char *end;
    long x = strtol(v, &end, 10);
    if (end == v || *end || x <= 0 || x > 1000) return kc_fail("%s needs a positive number, got '%s'", opt->name, v);
    *(int *)opt->target = (int)x;
    return 0;
}

/* A command's options (argv[0] the command's name); --help and -h print the usage and exit 0. */
static void parse_options(const opts_option *options, int argc, char **argv)
{
    const opts_cli cli = {.usage = usage, .options = options};
    int rc = opts_parse(&cli, argc, argv);
    if (rc < 0) kc_die();
    if (rc != OPTS_OK) exit(opts_usage(&cli, rc));
}

/* Each command: its options, then its module. */

static int cmd_sweep(int argc, char **argv)
{
    fig_list nets = {NULL, 0};
    name_list baselines = {NULL, 0};
    const char *out = NULL, *chosen = NULL, *prefix = "sweep";
    const opts_option options[] = {
        {"--scores", .read = read_named, .target = &nets}, {"--out", .value = &out}, {"--chosen", .value = &chosen},
        {"--prefix", .value = &prefix}, {"--baseline", .read = read_baseline, .target = &baselines}, {0}};
    parse_options(options, argc, argv);
    if (!out || !nets.n) kc_die_msg("sweep needs --scores NET=DIR and --out DIR (see --help)");
    if (!*prefix || strpbrk(prefix, "/ \t")) kc_die_msg("--prefix: bad value '%s'", prefix);
    sweep_figures_opts o = {.out = out, .prefix = prefix, .chosen = chosen, .nets = nets.items, .n_nets = nets.n,
                            .baselines = baselines.items, .n_baselines = baselines.n};
    int rc = sweep_figures_run(&o);
    free(baselines.items);
    free_inputs(&nets);
    return rc;
}

static int cmd_curves(int argc, char **argv)
{
    fig_list voc = {NULL, 0}, davis = {NULL, 0}, probe = {NULL, 0};
    const char *out = NULL, *nets_ini = "configs/nets.ini", *published = NULL, *setting = NULL, *name = "curves";
    const opts_option options[] = {
        {"--voc", .read = read_named, .target = &voc}, {"--davis", .read = read_named, .target = &davis},
        {"--probe", .read = read_named, .target = &probe}, {"--out", .value = &out}, {"--nets-ini", .value = &nets_ini},
        {"--published", .value = &published}, {"--setting", .value = &setting}, {"--name", .value = &name}, {0}};
    parse_options(options, argc, argv);
    if (!out || !voc.n) kc_die_msg("curves needs --voc NET=DIR and --out DIR (see --help)");
    if (!*name || strpbrk(name, "/ \t")) kc_die_msg("--name: bad value '%s'", name);
    curve_figure_opts o = {.out = out, .name = name, .nets_ini = nets_ini, .published = published, .setting = setting,
                           .voc = voc.items, .davis = davis.items, .probe = probe.items, .n_voc = voc.n,
                           .n_davis = davis.n, .n_probe = probe.n};
    int rc = curve_figure_run(&o);
    free_inputs(&voc);
    free_inputs(&davis);
    free_inputs(&probe);
    return rc;
}

static int cmd_voc_grid(int argc, char **argv)
{
    fig_list masks = {NULL, 0};
    int first = 4;
    const char *root = NULL, *split = NULL, *setting = NULL, *ids_opt = NULL, *out = NULL, *name = "grid-voc";
    const opts_option options[] = {
        {"--masks", .read = read_named, .target = &masks}, {"--voc", .value = &root}, {"--split", .value = &split},
        {"--setting", .value = &setting}, {"--ids", .value = &ids_opt},
        {"--first", .read = read_count, .target = &first}, {"--out", .value = &out}, {"--name", .value = &name}, {0}};
    parse_options(options, argc, argv);
    if (!root || !split || !setting || !masks.n || !out)
        kc_die_msg("voc-grid needs --voc, --split, --setting, --masks NET=FILE and --out (see --help)");
    if (!*name || strpbrk(name, "/ \t")) kc_die_msg("--name: bad value '%s'", name);
    voc_grid_opts o = {.root = root, .split = split, .setting = setting, .out = out, .name = name, .ids = ids_opt,
                       .first = first, .masks = masks.items, .n_masks = masks.n};
    int rc = voc_grid_run(&o);
    free_inputs(&masks);
    return rc;
}

static int cmd_davis_grid(int argc, char **argv)
{
    fig_list res = {NULL, 0};
    int n_frames = 4;
    const char *root = NULL, *seq = NULL, *out = NULL, *name = "grid-davis";
    const opts_option options[] = {
        {"--results", .read = read_named, .target = &res}, {"--davis", .value = &root}, {"--sequence", .value = &seq},
        {"--frames", .read = read_count, .target = &n_frames}, {"--out", .value = &out}, {"--name", .value = &name},
        {0}};
    parse_options(options, argc, argv);
    if (!root || !seq || !res.n || !out)
        kc_die_msg("davis-grid needs --davis, --sequence, --results NET=DIR and --out (see --help)");
    if (!*name || strpbrk(name, "/ \t")) kc_die_msg("--name: bad value '%s'", name);
    davis_grid_opts o = {.root = root, .sequence = seq, .out = out, .name = name, .frames = n_frames,
                         .results = res.items, .n_results = res.n};
    int rc = davis_grid_run(&o);
    free_inputs(&res);
    return rc;
}

int main(int argc, char **argv)
{
    kc_set_prog("kc-plot");
    kc_set_cmdline(argc, argv);
    const opts_cli cli = {.usage = usage};
    if (argc < 2) {
        opts_usage(&cli, OPTS_USAGE);
        return 1; /* (1, not 2, as ever) */
    }
    const char *cmd = argv[1];
    if (opts_is_help(cmd)) return opts_usage(&cli, OPTS_HELP);
    double t0 = kc_now();
    int rc;
    if (!strcmp(cmd, "sweep")) rc = cmd_sweep(argc - 1, argv + 1);
    else if (!strcmp(cmd, "curves")) rc = cmd_curves(argc - 1, argv + 1);
    else if (!strcmp(cmd, "voc-grid")) rc = cmd_voc_grid(argc - 1, argv + 1);
    else if (!strcmp(cmd, "davis-grid")) rc = cmd_davis_grid(argc - 1, argv + 1);
    else kc_die_msg("unknown figure '%s': sweep, curves, voc-grid or davis-grid (see --help)", cmd);
    if (rc < 0) kc_die();
    plot_release();
    kc_info("done in %.2f s", kc_now() - t0);
    return rc;
}
