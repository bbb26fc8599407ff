/* eval/davis/davis_results.h — reading kc-davis's global results (DIR/global_results-<split>.csv).
 *
 * The file is the DAVIS 2017 toolkit's: a header line (J&F-Mean,J-Mean,J-Recall,J-Decay,F-Mean,
 * F-Recall,F-Decay) and one line of values, fractions, to 3 decimals.  Beside it kc-davis writes
 * global_results-<split>.json, whose "global" object holds the same numbers at full precision.
 * davis_results_find picks a folder's file (global_results-<split>.csv when a split is given, else
 * global_results-val.csv, else the only global_results-*.csv) and davis_results_split names its
 * split; davis_results_read takes J&F-Mean, J-Mean and F-Mean from the CSV, davis_results_read_full
 * from the JSON beside it (the tables: data at full precision), after checking that the two agree
 * to the CSV's 3 decimals (files of one run); davis_results_read_jf takes J&F-Mean, which must be in
 * [0, 1], from DIR/global_results-val.csv and names the network when the file is missing (the figures).
 *
 *     int failed;
 *     char *path = davis_results_find("work/results/dino/davis17-val", NULL, 1, &failed);
 *     double jf, j, f;
 *     if (!path || davis_results_read_full(path, &jf, &j, &f) < 0) return -1;
 */
#ifndef KC_DAVIS_RESULTS_H
#define KC_DAVIS_RESULTS_H

/* The results file in dir (malloc'd), or NULL: then *failed is -1 with a message when the folder
 * cannot be opened, has several files and none for val (split NULL), has files of other splits but
 * none of split, or (required) has none; else 0. */
char *davis_results_find(const char *dir, const char *split, int required, int *failed);
/* The split a results file is of: "val" for DIR/global_results-val.csv (a new string). */
char *davis_results_split(const char *path);
int davis_results_read(const char *path, double *jf, double *j, double *f);
/* The same three numbers at full precision from the JSON beside the CSV path; -1 with one message
 * naming the JSON when it is missing or unreadable, or when it and the CSV disagree. */
int davis_results_read_full(const char *path, double *jf, double *j, double *f);
int davis_results_read_jf(const char *net, const char *dir, double *jf);
#endif
