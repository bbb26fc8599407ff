/* eval/tables/table_about.h — the one line that says what a table of results is of (kc-table, kc-report).
 *
 * The thesis tables are pasted away from the run that made them, so each says, in one plain line,
 * what it holds: report.md above the table, report.tex as its first (comment) line, the results
 * browser's index.html near its top.  Only what is known is named, in this order:
 *
 *   report:  VOC[ val split "<val_split>"][ of <voc_root>][ at setting <setting>][, refinement
 *            <refine> (<what>)][; DAVIS-2017[ split "<davis_split>"][ of <davis_root>]]; networks: <a>, <b> (baseline)
 *   sweep:   VOC[ selection split list <select_list>][ of <voc_root>], <n> settings; networks: <a>, <b>
 *
 * The DAVIS part appears only when has_davis (the table has DAVIS columns).  Networks are listed in
 * the order given (the table's rows, or the sweep's column groups), a baseline followed by
 * " (baseline)" or, when it is reported at another setting than the table's, " (baseline at <its
 * setting>)".  The strings are used as they are: the caller escapes the line for its format.
 *
 *     const char *nets[2] = {"dino", "color"};
 *     int base[2] = {0, 1};
 *     table_about a = {.setting = "t0.15-bin-mean-corners-n3", .val_split = "val",
 *                      .voc_root = "/data/VOC2012", .nets = nets, .baseline = base, .n_nets = 2};
 *     char *line = table_about_line(&a);
 *     // VOC val split "val" of /data/VOC2012 at setting t0.15-bin-mean-corners-n3; networks: dino, color (baseline)
 *     free(line);
 */
#ifndef KC_TABLE_ABOUT_H
#define KC_TABLE_ABOUT_H
#include "pipeline/opts.h"

typedef struct table_about {
    int sweep;                       /* 1: the sweep (select_list, n_settings); 0: the report */
    const char *setting;             /* the report's setting, NULL: not named */
    const char *refine;              /* NULL or "none": none; "crf", "bs" (kc-refine) */
    const char *val_split;           /* the report's VOC list name, NULL: not given */
    const char *voc_root;            /* NULL: not given */
    const char *select_list;         /* the sweep's selection split list, NULL: not given */
    int n_settings;                  /* the sweep's settings */
    int has_davis;                   /* the table has DAVIS columns */
    const char *davis_split;         /* NULL: not known */
    const char *davis_root;          /* NULL: not given */
    const char *const *nets;         /* (n_nets) in the table's order */
    const int *baseline;             /* (n_nets) or NULL: none is a baseline */
    const char *const *own_setting;  /* (n_nets) or NULL: a row's setting when it is not the table's */
    int n_nets;
    const char *saliency;            /* the saliency datasets, "ECSSD, DUT-OMRON"; NULL: none */
    int no_voc;                      /* 1: nothing of VOC (the line then starts with the saliency) */
} table_about;

/* The line (a new string, no newline). */
char *table_about_line(const table_about *a);
/* "MaskCut CRF" for crf, "TokenCut BS" for bs, NULL otherwise. */
const char *table_refine_label(const char *refine);

/* The options of kc-table and kc-report that say what their results are of, as both read them
 * (opts_option read functions, pipeline/opts.h): the value is stored at opt->target (a const
 * char *), or refused: --refine none|crf|bs ("--refine: none, crf or bs, not 'X'"), --davis-split
 * NAME, a part of a file name ("--davis-split: bad split name 'X'"). */
int table_read_refine(const opts_option *opt, const char *value);
int table_read_davis_split(const opts_option *opt, const char *value);
#endif
