/* eval/tables/thesis_tables.h — the thesis tables from the kc-score folders of many networks (kc-table).
 *
 * Each score folder is one network's: its name is the first line of DIR/network when present,
 * else the folder's name; its scores are DIR/summary.csv (eval/voc/score_summary.h).  Written, each
 * as CSV (full precision), Markdown and LaTeX (percentages, one decimal; eval/tables/table.h):
 *   OUT/NAME-sweep.*   one row per setting, per network a Jaccard and a CorLoc column (best in
 *                      bold), and a `Knife edge` column where kc-score's knife_edge is known;
 *   OUT/NAME.*         one row per network at the chosen setting (eval/tables/setting_choice.h; or
 *                      --setting): VOC Jaccard and CorLoc, DAVIS J&F, J-Mean and F-Mean when a
 *                      results file is found (eval/davis/davis_results.h), the probe's mIoU when given;
 *   OUT/NAME-macros.tex  \newcommand{\kc<Name><Net><Metric>}{value} for single numbers, and
 *                      \kc<Name>Setting, ...Refine, ...ValSplit, ...VocRoot, ...DavisSplit,
 *                      ...DavisRoot, ...SelectList for what was given (and is in the tables).
 * Each Markdown table has one plain line above it, each LaTeX table the same as its first comment
 * line, saying what it is of (eval/tables/table_about.h): the report its setting (and refinement), the VOC
 * val split and root, the DAVIS split and root when it has DAVIS columns, the networks in row order;
 * the sweep the selection split list, the VOC root and the networks.  The CSVs hold the table alone.
 * The DAVIS numbers are kc-davis's JSON's, at full precision (eval/davis/davis_results.h); davis_split
 * picks the results files global_results-<davis_split>.* (else val, else the only one) and the
 * split named is that of the files read, which must be one for all networks.
 * only = "sweep" / "report" writes that table alone, as OUT/NAME.*.  Baselines (--baseline, a
 * network scored at one attn-mass<m> setting) are listed after the networks and do not choose the
 * setting; one with a single setting is reported at it.  print_best prints the chosen setting and
 * writes nothing.  Afterwards it prints, from the ledger, how often each split's labels were opened.
 *
 *     thesis_tables_opts o = {.out = "tables", .name = "report", .dirs = dirs, .n_dirs = 2,
 *                             .ledger = "ledger.tsv", .refine = "none"};
 *     if (thesis_tables_run(&o) < 0) kc_die();
 */
#ifndef KC_THESIS_TABLES_H
#define KC_THESIS_TABLES_H

typedef struct thesis_tables_opts {
    const char *out, *name;
    const char *setting;   /* NULL: chosen by the rule */
    const char *ledger;
    const char *only;      /* NULL, "sweep" or "report" */
    const char *refine;    /* "none", "crf" or "bs": named in the VOC column titles */
    const char *voc_root, *val_split; /* named in the report's line, NULL: not given */
    const char *davis_root, *davis_split; /* named when there are DAVIS columns; the split picks the files */
    const char *select_list; /* the sweep's selection split list, named in its line; NULL: not given */
    int print_best;
    char *const *dirs;     /* (n_dirs) score folders */
    int n_dirs;
    char *const *davis;    /* (n_davis) NET=DIR */
    int n_davis;
    char *const *probe;    /* (n_probe) NET=DIR of kc-probe eval */
    int n_probe;
    char *const *baselines; /* (n_baselines) network names */
    int n_baselines;
} thesis_tables_opts;

int thesis_tables_run(const thesis_tables_opts *o);
#endif
