/* stages/kc-report.c — the results browser: one static HTML folder per run (issue 24).
 *
 *   kc-report --out DIR [--table FILE.csv]... [--figures DIR] [--scores NET=DIR]... [--masks NET=FILE]...
 *             [--images DATASET] [--voc ROOT] [--davis NET=DIR]... [--davis-root ROOT] [--saliency NET=DIR]...
 *             [--setting ID] [--refine none|crf|bs] [--val-split NAME] [--davis-split NAME]
 *
 * Reads what the pipeline already wrote (kc-table's CSVs, kc-plot's figures, kc-score's per-image
 * CSVs, the masks caches, kc-propagate / kc-davis results) and writes DIR/: index.html, one gallery
 * page per network and setting, one page per image, davis.html, one saliency gallery per dataset of
 * the --saliency folders (kc-saliency's; eval/report/report_saliency.h), and the pictures they show, each
 * redrawn only when its inputs changed; files an earlier run wrote that this one does not (another
 * setting, fewer networks, no DAVIS) are removed, so that DIR holds what a run into an empty folder
 * would (eval/report/report_files.h).  Near the top, index.html says in one line what the results
 * are of (eval/tables/table_about.h, as kc-table's report.md): --setting and --refine, the VOC val split
 * (--val-split, else SPLIT of --images voc:ROOT:SPLIT) and root, the DAVIS split (--davis-split,
 * which also picks the results files) and --davis-root, the networks.  The folder's layout and the
 * rules are in eval/report/report.h;
 * this file reads the options and calls report_run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/report/report.h"
#include "eval/tables/table_about.h"
#include "pipeline/kc.h"
#include "pipeline/opts.h"

static const char usage[] =
    "usage: kc-report --out DIR [--table FILE.csv]... [--figures DIR] [--scores NET=DIR]...\n"
    "                 [--masks NET=FILE]... [--images DATASET] [--voc ROOT]\n"
    "                 [--davis NET=DIR]... [--davis-root ROOT] [--saliency NET=DIR]... [--title TEXT]\n"
    "                 [--setting ID] [--refine none|crf|bs] [--val-split NAME] [--davis-split NAME]\n"
    "\n"
    "Writes a static HTML results browser into DIR (DIR/index.html): the tables, the figures, one\n"
    "gallery per network and scored setting (every image with its Jaccard and CorLoc, worst first,\n"
    "each thumbnail the ground truth beside the mask), one page per image, DAVIS per sequence, and\n"
    "one saliency gallery per dataset of the --saliency folders (every network's masks and scores).\n"
    "Opens from the file system in any browser; no server, no network.  Pictures are redrawn only\n"
    "when their inputs changed.  At the end, the files an earlier run wrote into DIR (listed in\n"
    "DIR/.keycut-report-files) that this one did not are removed, and no others: DIR then holds\n"
    "what the same command writes into an empty folder.  A DIR of files of no kc-report run is refused.\n"
    "\n"
    "  --out DIR          the report folder (created; nothing is written outside it): new, empty\n"
    "                     or an earlier kc-report's\n"
    "  --table FILE.csv   a kc-table CSV (report.csv, sweep.csv); repeatable\n"
    "  --figures DIR      kc-plot's folder: its .svg and .png are copied and shown\n"
    "  --scores NET=DIR   a kc-score folder: a gallery for each <setting>.csv in it; repeatable\n"
    "  --masks NET=FILE   a masks cache of NET (thumbnails, full-size overlays, provenance); repeatable\n"
    "  --images DATASET   the photos: voc:ROOT:SPLIT, list:FILE, dir:DIR\n"
    "                     " DATASET_LIST_RULES
    "                     " DATASET_LIST_RULES2
    "  --voc ROOT         ground truth ROOT/SegmentationObject/<id>.png (default: ROOT of voc:ROOT:SPLIT)\n"
    "  --davis NET=DIR    kc-propagate / kc-davis results of NET; repeatable\n"
    "  --davis-root ROOT  DAVIS frames and annotations (for the DAVIS strips)\n"
    "  --saliency NET=DIR a kc-saliency folder of NET (summary.csv, <setting>.csv, dataset, png/ of\n"
    "                     kc-saliency --png): a gallery per dataset its summary.csv names (ECSSD,\n"
    "                     DUTS-TE, DUT-OMRON, then others), every network on it; repeatable\n"
    "  --setting ID       the report's setting, named on index.html (as kc-table --setting)\n"
    "  --refine none|crf|bs  the pixel refinement the VOC scores are of, named on index.html\n"
    "  --val-split NAME   the VOC val split named on index.html (default: SPLIT of voc:ROOT:SPLIT)\n"
    "  --davis-split NAME the DAVIS split: each --davis folder's global_results-NAME.* are read\n"
    "                     (default: val, else the only one) and the split is named on index.html\n"
    "  --title TEXT       the page title (default \"keycut report\")\n"
    "  --thumb-height N   thumbnail height in pixels (default 96)\n"
    "  --quality Q        JPEG quality of the photos (default 30: the masks are drawn sharp over them;\n"
    "                     DAVIS frames, their labels drawn in, at least 50)\n"
    "  --strip N          frames per DAVIS strip (default 8)\n"
    "  --layer-hashes FILE  (tests) the C reference of the layers report.js draws, as hashes, into FILE\n"
    "\n"
    "example:\n"
    "  kc-report --out report --table tables/report.csv --figures figures \\\n"
    "            --scores dino=work/scores/dino/val-t0.15-bin-mean-corners-n3 \\\n"
    "            --masks dino=work/cache/dino/voc12-val/masks-t0.15-bin-mean-corners-n3.h5 \\\n"
    "            --images voc:/data/VOCdevkit/VOC2012:val \\\n"
    "            --davis dino=work/results/dino/davis17-val --davis-root /data/DAVIS --davis-split val \\\n"
    "            --setting t0.15-bin-mean-corners-n3\n";

/* ---- options ------------------------------------------------------------------------------- */

/* The NET=PATH inputs of one option (--scores, --masks, --davis, --saliency), in the order given. */
typedef struct named_list {
    report_named **items;
    int *n;
} named_list;

static int read_named(const opts_option *opt, const char *v)
{
    const named_list *list = opt->target;
    char *name, *path;
    if (opts_split_pair(v, &name, &path) < 0) return kc_fail("%s needs NET=PATH, got '%s'", opt->name, v);
    *list->items = kc_realloc(*list->items, sizeof **list->items * (size_t)(*list->n + 1));
    (*list->items)[(*list->n)++] = (report_named){name, path};
    return 0;
}

/* --table FILE.csv: named by its base name */
static int read_table(const opts_option *opt, const char *v)
{
    report *R = opt->target;
    R->tables = kc_realloc(R->tables, sizeof *R->tables * (size_t)(R->n_tables + 1));
    const char *base = strrchr(v, '/') ? strrchr(v, '/') + 1 : v;
    R->tables[R->n_tables].name = kc_strdup(base);
    R->tables[R->n_tables++].path = kc_strdup(v);
    return 0;
}

static void free_named(report_named *list, int n)
{
    for (int k = 0; k < n; k++) {
        free(list[k].name);
        free(list[k].path);
    }
    free(list);
}

static int read_int(const opts_option *opt, const char *v)
{
    char *end;
    long x = strtol(v, &end, 10);
    if (end == v || *end || x < opt->lo || x > opt->hi)
        return kc_fail("%s needs a number in %d..%d, got '%s'", opt->name, (int)opt->lo, (int)opt->hi, v);
    *(int *)opt->target = (int)x;
    return 0;
}

int main(int argc, char **argv)
{
    kc_set_prog("kc-report");
    kc_set_cmdline(argc, argv);
    report R;
    memset(&R, 0, sizeof R);
    R.title = "keycut report";
    R.thumb_h = 96;
    R.quality = 30;
    R.strip = 8;
    named_list scores = {&R.scores, &R.n_scores}, masks = {&R.masks, &R.n_masks}, davis = {&R.davis, &R.n_davis},
               saliency = {&R.saliency, &R.n_saliency};
    const opts_option options[] = {
        {"--out", .value = &R.out}, {"--title", .value = &R.title}, {"--table", .read = read_table, .target = &R},
        {"--figures", .value = &R.figures}, {"--scores", .read = read_named, .target = &scores},
        {"--masks", .read = read_named, .target = &masks}, {"--davis", .read = read_named, .target = &davis},
        {"--saliency", .read = read_named, .target = &saliency},
        {"--images", .value = &R.images_spec}, {"--voc", .value = &R.voc_root},
        {"--davis-root", .value = &R.davis_root}, {"--setting", .value = &R.setting},
        {"--val-split", .value = &R.val_split}, {"--refine", .read = table_read_refine, .target = &R.refine},
        {"--davis-split", .read = table_read_davis_split, .target = &R.davis_split},
        {"--thumb-height", .read = read_int, .target = &R.thumb_h, .lo = 16, .hi = 1024},
        {"--quality", .read = read_int, .target = &R.quality, .lo = 1, .hi = 100},
        {"--strip", .read = read_int, .target = &R.strip, .lo = 1, .hi = 100},
        {"--layer-hashes", .value = &R.layer_hashes}, {0}};
    const opts_cli cli = {.usage = usage, .options = options, .syntax = OPTS_PAIRS_ARGS};
    int rc = opts_parse(&cli, argc, argv);
    if (rc < 0) kc_die();
    if (rc != OPTS_OK) exit(opts_usage(&cli, rc));
    if (!R.out) kc_die_msg("--out is required (see --help)");
    if (!R.n_tables && !R.n_scores && !R.n_davis && !R.n_saliency && !R.figures)
        kc_die_msg("nothing to report: give --table, --scores, --davis, --saliency or --figures (see --help)");
    if (report_run(&R) < 0) kc_die();
    free_named(R.tables, R.n_tables);
    free_named(R.scores, R.n_scores);
    free_named(R.masks, R.n_masks);
    free_named(R.davis, R.n_davis);
    free_named(R.saliency, R.n_saliency);
    return 0;
}
