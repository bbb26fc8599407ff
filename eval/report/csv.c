/* eval/report/csv.c — a CSV file as rows of text fields.  See csv.h. */
#include "eval/report/csv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/kc.h"

void csv_free(csv_file *c)
{
    for (int i = 0; i < c->n_cols; i++) free(c->head[i]);
    free(c->head);
    for (int r = 0; r < c->n_rows; r++) {
        for (int i = 0; i < c->n_cols; i++) free(c->rows[r][i]);
        free(c->rows[r]);
    }
    free(c->rows);
    free(c->path);
    memset(c, 0, sizeof *c);
}

/* line cut at its commas in place; *out: the fields (a new array of pointers into line) */
static int split_fields(char *line, char ***out)
{
    int n = 1;
    for (char *p = line; *p; p++) n += *p == ',';
    char **f = kc_malloc(sizeof(char *) * (size_t)n);
    int k = 0;
    for (char *p = line;; p++)
        if (*p == ',' || !*p) {
            int end = !*p;
            *p = 0;
            f[k++] = line;
            line = p + 1;
            if (end) break;
        }
    *out = f;
    return n;
}

int csv_read(const char *path, csv_file *c)
{
    memset(c, 0, sizeof *c);
    uint8_t *data;
    size_t size;
    KC_TRY(kc_read_text(path, &data, &size));
    c->path = kc_strdup(path);
    char *save = NULL, *line = strtok_r((char *)data, "\n", &save);
    int lineno = 0;
    for (; line; line = strtok_r(NULL, "\n", &save)) {
        lineno++;
        size_t len = strlen(line);
        if (len && line[len - 1] == '\r') line[--len] = 0;
        if (!len) continue;
        char **f;
        int n = split_fields(line, &f);
        if (!c->head) {
            c->n_cols = n;
            c->head = kc_malloc(sizeof(char *) * (size_t)n);
            for (int i = 0; i < n; i++) c->head[i] = kc_strdup(f[i]);
            free(f);
            continue;
        }
        if (n < c->n_cols) {
            free(f);
            free(data);
            int rc = kc_fail("%s: line %d has %d fields, its header %d", path, lineno, n, c->n_cols);
            csv_free(c);
            return rc;
        }
        char **row = kc_malloc(sizeof(char *) * (size_t)c->n_cols);
        int extra = n - c->n_cols;
        kc_buf first = {0};
        for (int i = 0; i <= extra; i++) kc_buf_printf(&first, "%s%s", i ? "," : "", f[i]);
        row[0] = first.s;
        for (int i = 1; i < c->n_cols; i++) row[i] = kc_strdup(f[i + extra]);
        free(f);
        c->rows = kc_realloc(c->rows, sizeof(char **) * (size_t)(c->n_rows + 1));
        c->rows[c->n_rows++] = row;
    }
    free(data);
    if (!c->head) {
        csv_free(c);
        return kc_fail("%s: empty file (no header)", path);
    }
    return 0;
}

int csv_col(const csv_file *c, const char *name)
{
    for (int i = 0; i < c->n_cols; i++)
        if (!strcmp(c->head[i], name)) return i;
    return -1;
}

double csv_num(const char *s)
{
    if (!s || !*s) return NAN;
    char *end;
    double v = strtod(s, &end);
    return *end || !isfinite(v) ? NAN : v;
}
