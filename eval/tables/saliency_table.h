/* eval/tables/saliency_table.h — the unsupervised saliency table from kc-saliency's score folders
 * (kc-table --saliency), laid out as TokenCut's README table.
 *
 * Each score folder is one network on one dataset (eval/saliency/saliency.h): DIR/summary.csv
 *   setting,refine,dataset,images,max_fbeta,iou,accuracy,threshold
 * with exactly two rows, refine `none` (the decoder's mask) and `bs` (TokenCut's bilateral solver),
 * fractions (iou may be `nan`); the network's name is the first line of DIR/network, else the
 * folder's name (as eval/tables/thesis_tables.h names networks).
 *
 * Rows: per network, in the order its first folder is given, `<net>` (refine none) and `<net> + BS`
 * (bs); --baseline networks after them (eval/tables/table.h); then the published rows.  Columns:
 * per dataset, ECSSD, DUTS-TE, DUT-OMRON, then any other dataset name in first-seen order, the
 * group of maxFβ, IoU, Acc (CSV keys <dataset>_max_fbeta, _iou, _accuracy).  A network without a
 * folder of a dataset has empty cells there.  The CSV holds the fractions as read (full
 * precision), Markdown and LaTeX percentages with one decimal, the best of each column in bold.
 * A note line says what the table is of (table.h): the protocol, the setting, the datasets (with
 * their images), the networks.
 *
 * Published rows (published = an INI in configs/published.ini's format, eval/figures/curve_figure.h):
 * the sections whose metric is saliency_<ecssd|duts|dutomron>_<max_fbeta|iou|accuracy>[_bs], value
 * in percent, grouped by label into one row each (in first-seen order; a label's metrics all with
 * _bs or all without), filling the columns of the datasets in the table (ECSSD <-> ecssd, DUTS-TE
 * <-> duts, DUT-OMRON <-> dutomron); a label with no value in the table's datasets is left out.
 * Other metrics are skipped.
 *
 * Refused, with one line naming the file, before anything is written: a summary that is not
 * kc-saliency's (header, field count, numbers, fractions outside [0, 1], not exactly one none and
 * one bs row, the two rows of different settings or datasets), two folders of the same network
 * and dataset, folders of different settings, a --baseline naming no network, a malformed
 * saliency section of the published file.
 *
 *     char *dirs[2] = {"work/sal/dino/ECSSD", "work/sal/dino/DUTS-TE"};
 *     saliency_table_opts o = {.out = "tables", .name = "saliency", .dirs = dirs, .n_dirs = 2,
 *                              .published = "configs/published.ini", .ledger = "ledger.tsv"};
 *     if (saliency_table_run(&o) < 0) kc_die();
 */
#ifndef KC_SALIENCY_TABLE_H
#define KC_SALIENCY_TABLE_H

typedef struct saliency_table_opts {
    const char *out, *name;
    const char *published;   /* or NULL: no published rows */
    const char *ledger;      /* printed afterwards (eval/voc/ledger.h); NULL: not printed */
    char *const *dirs;       /* (n_dirs) kc-saliency score folders */
    int n_dirs;
    char *const *baselines;  /* (n_baselines) network names */
    int n_baselines;
} saliency_table_opts;

int saliency_table_run(const saliency_table_opts *o);
#endif
