/* stages/kc-table.c — the thesis tables from the score folders of many networks.
 *
 *   kc-table SCORE_DIRS... --out DIR [--name NAME] [--setting ID] [--davis NET=DIR]... [--ledger FILE]
 *            [--only sweep|report] [--baseline NET]... [--refine none|crf|bs]
 *            [--voc ROOT] [--val-split NAME] [--davis-root ROOT] [--davis-split NAME] [--select-list FILE]
 *   kc-table --saliency SCORE_DIRS... --out DIR [--name NAME] [--published FILE] [--baseline NET]... [--ledger FILE]
 *
 * --saliency: each SCORE_DIR is kc-saliency's folder of one network on one dataset; writes
 * DIR/NAME.{csv,md,tex} (NAME default "saliency"), TokenCut's README table: rows <net> and
 * <net> + BS per network in the order given, per dataset (ECSSD, DUTS-TE, DUT-OMRON, then others)
 * maxFβ, IoU and Acc, and the saliency_* sections of --published FILE (configs/published.ini) as
 * published rows.  The work is eval/tables/saliency_table.h's.  The rest of this comment is the
 * VOC / DAVIS tables'.
 *
 * Each SCORE_DIR is one network's kc-score output; the network's name is the first line of
 * SCORE_DIR/network when present, else the folder's name.  From every SCORE_DIR/summary.csv:
 *   DIR/NAME-sweep.{csv,md,tex}  one row per setting, per network a Jaccard and a CorLoc column,
 *                                the best of each column in bold, and when the per-setting CSVs
 *                                have kc-score's knife_edge column, a `Knife edge` column: the share
 *                                of images whose mask rests on rounding (docs/ties.md)
 *   DIR/NAME.{csv,md,tex}        one row per network: VOC Jaccard and CorLoc at the chosen setting,
 *                                plus DAVIS J&F, J-Mean and F-Mean when a global_results-*.csv is found
 *                                for the network (in --davis NET=DIR, else in its SCORE_DIR; that of
 *                                --davis-split, else val when there are several), the numbers read at
 *                                full precision from the global_results-*.json beside it (an error
 *                                when it is missing)
 *   DIR/NAME-macros.tex          \newcommand{\kc<Name><Net><Metric>}{value} for single numbers,
 *                                \kc<Name>Setting and \kc<Name>Settings, per network the sweep's best
 *                                (\kc<Name><Net>BestJaccard, ...BestCorLoc, ...BestJaccardSetting);
 *                                letters only, see eval/tables/table.h
 * An attention baseline's folder (kc-score of attn-mass masks: one attn-mass<m> setting, an empty
 * corloc) is reported at its own setting with a blank CorLoc (docs/attention-baseline.md).
 * --only sweep / --only report writes just that table, as DIR/NAME.{csv,md,tex}.
 * --baseline NET marks network NET as a baseline (random weights, the colour extractor, ...): its
 * report row is listed after the networks and labelled (eval/tables/table.h), it is left out of the mean
 * that chooses the setting (unless every network is a baseline), and a baseline scored at one
 * setting only (DINO's attention masks) is reported at that setting whatever the chosen one.
 * --refine crf|bs names the pixel refinement the report's VOC scores were computed after (kc-refine:
 * MaskCut's dense CRF, TokenCut's bilateral solver) in their column titles and the macro
 * \kc<Name>Refine.
 * What a table is of is one line above the Markdown table and the first (comment) line of the LaTeX
 * one (eval/tables/table_about.h; the CSVs hold the table alone): the report names its setting, --refine,
 * the VOC val split --val-split NAME and root --voc ROOT, with DAVIS columns the split of their
 * results files and the DAVIS root --davis-root ROOT, and the networks in row order; the sweep the
 * selection split list --select-list FILE, --voc ROOT and the networks.  The macros \kc<Name>ValSplit,
 * ...VocRoot, ...DavisSplit, ...DavisRoot and ...SelectList hold them too.  These options only name
 * things (nothing is read from them) but --davis-split NAME, which also picks each network's
 * global_results-NAME.{csv,json}.
 * NAME defaults to "report".  The chosen setting is --setting, else the rule of eval/tables/setting_choice.h
 * (the only setting when there is one, else the best mean Jaccard over the networks that are not
 * baselines; printed), which kc-plot sweep's star follows too.  Tables show percentages with one
 * decimal; CSVs hold fractions at full precision.  The work is eval/tables/thesis_tables.h's.  Every
 * file is written atomically and is
 * byte-identical across runs.  Finally it prints, from the ledger (--ledger, default
 * ./ledger.tsv), how many times each split's labels were opened.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/tables/saliency_table.h"
#include "eval/tables/table_about.h"
#include "eval/tables/thesis_tables.h"
#include "pipeline/kc.h"
#include "pipeline/opts.h"

static const char usage[] =
    "usage: kc-table SCORE_DIRS... --out DIR [--name NAME] [--setting ID] [--davis NET=DIR]... [--probe NET=DIR]...\n"
    "                [--ledger FILE] [--only sweep|report] [--baseline NET]... [--refine none|crf|bs]\n"
    "                [--voc ROOT] [--val-split NAME] [--davis-root ROOT] [--davis-split NAME] [--select-list FILE]\n"
    "       kc-table SCORE_DIRS... --print-best [--baseline NET]...\n"
    "       kc-table --saliency SCORE_DIRS... --out DIR [--name NAME] [--published FILE] [--baseline NET]...\n"
    "                [--ledger FILE]\n"
    "\n"
    "Builds the sweep table (one row per setting, one column pair per network, best in bold)\n"
    "and the report table (one row per network at the chosen setting, with DAVIS J&F when\n"
    "found) as CSV, Markdown and LaTeX booktabs, plus NAME-macros.tex; prints how often each\n"
    "split's labels were opened according to the ledger (default ./ledger.tsv).\n"
    "--print-best prints the setting with the best mean Jaccard over the networks (the\n"
    "selection rule) and writes nothing.\n"
    "--refine crf|bs: the VOC scores are of kc-refine's pixel masks; the column titles say which.\n"
    "--probe NET=DIR: the report gains the column \"Probe mIoU\" (kc-probe eval's DIR/summary.csv).\n"
    "--saliency: the score folders are kc-saliency's (one network on one dataset each); writes\n"
    "DIR/NAME.{csv,md,tex} (NAME default saliency) as TokenCut's README table: per network the rows\n"
    "<net> and <net> + BS (bilateral solver), per dataset (ECSSD, DUTS-TE, DUT-OMRON, others) maxFβ,\n"
    "IoU and Acc; --published FILE adds its saliency_* sections (configs/published.ini) as rows.\n"
    "--baseline NET: network NET is a baseline: listed after the networks under a rule and\n"
    "labelled, left out of the setting choice; one with a single setting is reported at it.\n"
    "DAVIS columns are read at full precision from global_results-<split>.json beside the CSV.\n"
    "What the tables are of is one line above each Markdown table and the first comment line of\n"
    "each LaTeX one (never in the CSVs), and macros: the report's setting and refinement, and\n"
    "  --voc ROOT          the VOC root (named; also in the sweep's line)\n"
    "  --val-split NAME    the VOC list the report's scores are of (named)\n"
    "  --davis-root ROOT   the DAVIS-2017 root (named when there are DAVIS columns)\n"
    "  --davis-split NAME  the DAVIS split: reads global_results-NAME.{csv,json} (default: val,\n"
    "                      else the only one) and is named\n"
    "  --select-list FILE  the selection split list of the sweep (named in its line)\n"
    "and the networks in row order.\n"
    "\n"
    "example:\n"
    "  kc-table out/dino/scores out/selfpatch/scores --out tables --name val \\\n"
    "           --setting t0.15-bin-mean-corners-n3 --davis dino=out/dino/davis \\\n"
    "           --voc /data/VOC2012 --val-split val --davis-root /data/DAVIS --davis-split val\n";

/* The values of a repeatable option (--davis, --probe, --baseline); room for all of argv. */
typedef struct value_list {
    char **items;
    int n;
} value_list;

static int read_repeated(const opts_option *opt, const char *v)
{
    value_list *list = opt->target;
    list->items[list->n++] = (char *)v;
    return 0;
}

/* --davis NET=DIR, --probe NET=DIR (an empty DIR passes here, as ever) */
static int read_net_dir(const opts_option *opt, const char *v)
{
    if (!strchr(v, '=') || v[0] == '=') return kc_fail("%s wants NET=DIR, got '%s'", opt->name, v);
    return read_repeated(opt, v);
}

static int read_only(const opts_option *opt, const char *v)
{
    if (strcmp(v, "sweep") && strcmp(v, "report")) return kc_fail("--only: 'sweep' or 'report', not '%s'", v);
    *(const char **)opt->target = v;
    return 0;
}

int main(int argc, char **argv)
{
    kc_set_prog("kc-table");
    kc_set_cmdline(argc, argv);
    const char *out = NULL, *name = NULL, *published = NULL, *setting = NULL, *ledger = "ledger.tsv", *only = NULL, *refine = "none";
    const char *voc_root = NULL, *val_split = NULL, *davis_root = NULL, *davis_split = NULL, *select_list = NULL;
    char **dirs = kc_calloc((size_t)argc, sizeof *dirs);
    value_list davis = {kc_calloc((size_t)argc, sizeof(char *)), 0};
    value_list probe = {kc_calloc((size_t)argc, sizeof(char *)), 0};
    value_list baselines = {kc_calloc((size_t)argc, sizeof(char *)), 0};
    int n_dirs = 0, print_best = 0, saliency = 0;
    const opts_option options[] = {
        {"--print-best", .flag = &print_best}, {"--saliency", .flag = &saliency}, {"--published", .value = &published}, {"--out", .value = &out}, {"--name", .value = &name},
        {"--setting", .value = &setting}, {"--ledger", .value = &ledger}, {"--voc", .value = &voc_root},
        {"--val-split", .value = &val_split}, {"--davis-root", .value = &davis_root},
        {"--select-list", .value = &select_list},
        {"--davis-split", .read = table_read_davis_split, .target = &davis_split},
        {"--refine", .read = table_read_refine, .target = &refine}, {"--only", .read = read_only, .target = &only},
        {"--baseline", .read = read_repeated, .target = &baselines},
        {"--davis", .read = read_net_dir, .target = &davis}, {"--probe", .read = read_net_dir, .target = &probe}, {0}};
    const opts_cli cli = {.usage = usage, .options = options, .syntax = OPTS_PAIRS_ARGS,
                          .args = (const char **)dirs, .n_args = &n_dirs, .max_args = OPTS_ANY};
    int rc = opts_parse(&cli, argc, argv);
    if (rc < 0) kc_die();
    if (rc != OPTS_OK) exit(opts_usage(&cli, rc));
    if (!name) name = saliency ? "saliency" : "report";
    if (saliency) {
        const char *vocish = print_best ? "--print-best" : setting ? "--setting" : only ? "--only" : davis.n ? "--davis"
                             : probe.n ? "--probe" : strcmp(refine, "none") ? "--refine" : voc_root ? "--voc"
                             : val_split ? "--val-split" : davis_root ? "--davis-root" : davis_split ? "--davis-split"
                             : select_list ? "--select-list" : NULL;
        if (vocish) kc_die_msg("--saliency does not take %s (see --help)", vocish);
        if (!out || n_dirs == 0) kc_die_msg("need score folders and --out DIR (see --help)");
        if (!*name || strpbrk(name, "/ \t")) kc_die_msg("--name: bad value '%s'", name);
        saliency_table_opts so = {.out = out, .name = name, .published = published, .ledger = ledger, .dirs = dirs,
                                  .n_dirs = n_dirs, .baselines = baselines.items, .n_baselines = baselines.n};
        if (saliency_table_run(&so) < 0) kc_die();
        free(dirs);
        free(davis.items);
        free(probe.items);
        free(baselines.items);
        return 0;
    }
    if (published) kc_die_msg("--published is for --saliency tables");
    if (print_best) {
        if (setting) kc_die_msg("--print-best chooses the setting: do not pass --setting");
        only = "report";
        if (!out) out = ".";
    }
    if (!out || n_dirs == 0) kc_die_msg("need score folders and --out DIR (see --help)");
    if (!*name || strpbrk(name, "/ \t")) kc_die_msg("--name: bad value '%s'", name);
    thesis_tables_opts o = {.out = out, .name = name, .setting = setting, .ledger = ledger, .only = only,
                            .refine = refine, .voc_root = voc_root, .val_split = val_split,
                            .davis_root = davis_root, .davis_split = davis_split, .select_list = select_list,
                            .print_best = print_best, .dirs = dirs, .n_dirs = n_dirs,
                            .davis = davis.items, .n_davis = davis.n, .probe = probe.items, .n_probe = probe.n,
                            .baselines = baselines.items, .n_baselines = baselines.n};
    if (thesis_tables_run(&o) < 0) kc_die();
    free(dirs);
    free(davis.items);
    free(probe.items);
    free(baselines.items);
    return 0;
}
