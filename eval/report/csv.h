/* eval/report/csv.h — a CSV file as rows of text fields, for the pages that show keycut's own CSVs
 * (kc-table's tables, kc-score's per-image scores, kc-davis's results).
 *
 * No quoting: keycut's CSVs write none.  Lines end in LF or CRLF; empty lines are skipped; the
 * first line is the header.  A row with more fields than the header has its extra leading fields
 * joined back into the first column (an image id with commas in it); a row with fewer is an error
 * naming the file and line.  A file with a NUL byte, or without a header, is refused.
 *
 *     csv_file c;
 *     if (csv_read("tables/report.csv", &c) < 0) kc_die();
 *     int j = csv_col(&c, "jaccard");              // -1: no such column
 *     double v = csv_num(c.rows[0][j]);            // NaN: empty or not a number
 *     csv_free(&c);
 */
#ifndef KC_CSV_H
#define KC_CSV_H

typedef struct csv_file {
    char *path;
    int n_cols, n_rows;
    char **head;   /* (n_cols) */
    char ***rows;  /* (n_rows, n_cols) */
} csv_file;

int csv_read(const char *path, csv_file *c);
void csv_free(csv_file *c);
/* The index of the column called name, -1 when there is none. */
int csv_col(const csv_file *c, const char *name);
/* A field as a finite number; NaN for an empty, non-numeric or infinite field. */
double csv_num(const char *s);
#endif
