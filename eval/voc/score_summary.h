/* eval/voc/score_summary.h — one network's kc-score folder as the tables and figures read it.
 *
 * DIR/summary.csv has the header `setting,images,jaccard,corloc` and one row per setting: the
 * number of images scored, the mean Jaccard and the CorLoc, fractions in [0, 1] (an attention
 * baseline's corloc is empty: NaN).  Each setting's DIR/<setting>.csv has one row per image; when
 * its 9th field (knife_edge, docs/ties.md) is filled on every row, the share of images whose mask
 * rests on rounding is known for that setting.
 *
 *     score_summary s;
 *     if (score_summary_read("work/scores/dino/select", NULL, NULL, &s) < 0) return -1;
 *     int k = score_summary_find(&s, "t0.15-bin-mean-corners-n3");   // -1: not scored
 *     score_summary_free(&s);
 *
 * Two reading habits, kept as the two programs had them: a table (net == NULL) takes an empty
 * corloc as NaN; a figure (net = the network's name, hint = how to make the file) says which
 * network has no scores yet when the file is missing, and wants every corloc (it draws them).
 */
#ifndef KC_SCORE_SUMMARY_H
#define KC_SCORE_SUMMARY_H

typedef struct score_summary {
    int n;
    char **settings;        /* (n) in file order */
    int *images;            /* (n); 0 when read for a figure */
    double *jaccard;        /* (n) */
    double *corloc;         /* (n), NaN: none (attention masks) */
    double *knife;          /* (n) after score_summary_read_knife, NaN: unknown; else NULL */
    int has_knife;          /* some setting's knife-edge share is known */
} score_summary;

int score_summary_read(const char *dir, const char *net, const char *hint, score_summary *s);
/* Fills s->knife from DIR/<setting>.csv (absent files or columns: NaN). */
void score_summary_read_knife(const char *dir, score_summary *s);
/* The index of setting id in s, or -1. */
int score_summary_find(const score_summary *s, const char *id);
void score_summary_free(score_summary *s);

/* The settings of any of the n summaries, each once, sorted by strcmp: *all (n_all) points into
 * the summaries' strings (free only the array). */
/* Splits a line of a plain CSV file (kc-score's, kc-davis's: no quoting) at commas into at most
 * max fields, in place; trailing CR / LF go from the last field.  Returns the count. */
int score_csv_split(char *line, char **f, int max);

void score_settings_union(const score_summary *const *s, int n, char ***all, int *n_all);
#endif
