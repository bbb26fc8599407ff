/* eval/tables/table.h — the thesis tables as CSV, Markdown and a LaTeX booktabs fragment.
 *
 * A table is a first column of row names and n_cols numeric columns (NaN = missing).  CSV holds
 * the raw values at full precision (the shortest text that reads back as the same double, at most
 * 17 digits; missing = empty field) under machine keys: it is data, not print.  Markdown and LaTeX
 * hold the values times `scale` with `decimals` decimals (percentages: scale 100, 1 decimal) under
 * display labels, missing = "–" / "--", and the best (largest raw) value of each column marked with
 * bold_best set in bold (**x** / \textbf{x}; ties all bold).  Output is deterministic.
 *
 *     kc_table t = {0};
 *     table_init(&t, "network", "Network", 2, n_rows);
 *     table_col(&t, 0, "voc_jaccard", "VOC Jaccard", 1);
 *     table_row(&t, 0, "dino");  t.vals[0 * t.n_cols + 0] = 0.459;
 *     char *md = table_markdown(&t);  ...  free(md);  table_free(&t);
 *
 * Baseline rows (baseline[r] = 1: random weights, the colour extractor, DINO's attention masks) are
 * reference points, not contenders: every format lists them after the other rows (each group in
 * its given order); the CSV gains a last column `kind` (`network` or `baseline`) when a table has
 * any; Markdown appends " (baseline)" to their names; LaTeX puts them under a \midrule and an
 * italic "Baselines" line (no extra rule when every row is a baseline).  Bold marks the best of
 * the other rows only (of all rows when a column has values only in baseline rows).
 *
 * Published rows (published[r] = 1: numbers printed in a paper, e.g. TokenCut's README table) are
 * reference points too, listed last (after the baselines): the CSV's `kind` is `published`;
 * Markdown appends " (published)" unless the name already ends with "(published)"; LaTeX puts them
 * under a \midrule and an italic "Published" line.  Bold skips them as it skips baselines (a
 * column with values only in reference rows: the best of all rows).
 *
 * latex_labels (optional, (n_cols)): a column's LaTeX label as raw LaTeX (not escaped; NULL entry:
 * the escaped display label), for labels with mathematics such as max$F_\beta$.
 *
 * A note (table_note: what the table is of, e.g. the setting, splits and networks) is one plain line:
 * Markdown has it above the table (then an empty line), LaTeX as a comment line at the top (so that
 * \input still works); the CSV stays the table alone.  Line breaks in it become spaces.
 *
 * Macro names for \newcommand must be letters only: table_macro_word maps a text to a CamelCase
 * word, digits to English words (2 -> Two), '-' to Dash, '.' to Dot, '_' to Underscore, anything
 * else to X.
 */
#ifndef KC_TABLE_H
#define KC_TABLE_H
#include <stddef.h>

#include "pipeline/kc.h"

typedef struct kc_table {
    int n_rows, n_cols;
    char *corner_key, *corner_label; /* the first column's CSV key and display label */
    char **col_keys, **col_labels;   /* (n_cols) */
    int *bold_best;                  /* (n_cols) */
    char **row_names;                /* (n_rows) */
    double *vals;                    /* (n_rows, n_cols), NaN = missing */
    double scale;                    /* display scale, default 100 */
    int decimals;                    /* display decimals, default 1 */
    char **groups;                   /* optional (n_cols): a group header above the labels (LaTeX and
                                        Markdown join "group label"); NULL = none */
    int *baseline;                   /* (n_rows): 1 = a baseline row (see above); 0 after table_init */
    int *published;                  /* (n_rows): 1 = a published row (see above); 0 after table_init */
    char **latex_labels;             /* optional (n_cols): raw LaTeX column labels; NULL = escaped labels */
    char *note;                      /* optional: one line about the table (see above); NULL = none */
} kc_table;

/* A growing string. */

void table_init(kc_table *t, const char *corner_key, const char *corner_label, int n_cols, int n_rows);
void table_col(kc_table *t, int c, const char *key, const char *label, int bold_best);
void table_row(kc_table *t, int r, const char *name);
/* Sets the note (a copy; control characters become spaces). */
void table_note(kc_table *t, const char *note);
void table_free(kc_table *t);

char *table_csv(const kc_table *t);
char *table_markdown(const kc_table *t);
char *table_latex(const kc_table *t);
/* Writes DIR/BASE.csv, .md and .tex atomically. */
int table_write(const char *dir, const char *base, const kc_table *t);

/* Appends the macro word of text to b (see above). */
void table_macro_word(kc_buf *b, const char *text);
/* LaTeX-escapes text into b (& % $ # _ { } ~ ^ \). */
void table_latex_escape(kc_buf *b, const char *text);
#endif
