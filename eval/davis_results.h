/* eval/davis_results.h — reading kc-davis's global results (DIR/global_results-<split>.csv).
 *
 * The file is the DAVIS 2017 toolkit's: a header line (J&F-Mean,J-Mean,J-Recall,J-Decay,F-Mean,
 * F-Recall,F-Decay) and one line of values, fractions.  davis_results_find picks a folder's file
 * (global_results-val.csv, else the only global_results-*.csv); davis_results_read takes J&F-Mean,
 * J-Mean and F-Mean from it; davis_results_read_jf takes J&F-Mean, which must be in [0, 1], from
 * DIR/global_results-val.csv and names the network when the file is missing (the figures).
 *
 *     int failed;
 *     char *path = davis_results_find("work/results/dino/davis17-val", 1, &failed);
 *     double jf, j, f;
 *     if (!path || davis_results_read(path, &jf, &j, &f) < 0) return -1;
 */
#ifndef KC_DAVIS_RESULTS_H
#define KC_DAVIS_RESULTS_H

/* The results file in dir (malloc'd), or NULL: then *failed is -1 with a message when the folder
 * cannot be opened, has several files and none for val, or (required) has none; else 0. */
char *davis_results_find(const char *dir, int required, int *failed);
int davis_results_read(const char *path, double *jf, double *j, double *f);
int davis_results_read_jf(const char *net, const char *dir, double *jf);
#endif
