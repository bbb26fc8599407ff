/* eval/tables/table.c — CSV, Markdown and LaTeX (booktabs) table writers.  See table.h. */
#include "eval/tables/table.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/kc.h"

void table_init(kc_table *t, const char *corner_key, const char *corner_label, int n_cols, int n_rows)
{
    memset(t, 0, sizeof *t);
    t->n_cols = n_cols;
    t->n_rows = n_rows;
    t->corner_key = kc_strdup(corner_key);
    t->corner_label = kc_strdup(corner_label);
    t->col_keys = kc_calloc((size_t)n_cols + 1, sizeof(char *));
    t->col_labels = kc_calloc((size_t)n_cols + 1, sizeof(char *));
    t->bold_best = kc_calloc((size_t)n_cols + 1, sizeof(int));
    t->row_names = kc_calloc((size_t)n_rows + 1, sizeof(char *));
    t->baseline = kc_calloc((size_t)n_rows + 1, sizeof(int));
    t->published = kc_calloc((size_t)n_rows + 1, sizeof(int));
    t->vals = kc_malloc(((size_t)n_rows * n_cols + 1) * sizeof(double));
    for (size_t i = 0; i < (size_t)n_rows * n_cols; i++) t->vals[i] = NAN;
    t->scale = 100;
    t->decimals = 1;
}

void table_col(kc_table *t, int c, const char *key, const char *label, int bold_best)
{
    free(t->col_keys[c]);
    free(t->col_labels[c]);
    t->col_keys[c] = kc_strdup(key);
    t->col_labels[c] = kc_strdup(label);
    t->bold_best[c] = bold_best;
}

void table_row(kc_table *t, int r, const char *name)
{
    free(t->row_names[r]);
    t->row_names[r] = kc_strdup(name);
}

void table_note(kc_table *t, const char *note)
{
    free(t->note);
    t->note = kc_strdup(note);
    for (char *p = t->note; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = ' ';
}

void table_free(kc_table *t)
{
    for (int c = 0; c < t->n_cols; c++) {
        free(t->col_keys[c]);
        free(t->col_labels[c]);
        if (t->groups) free(t->groups[c]);
        if (t->latex_labels) free(t->latex_labels[c]);
    }
    for (int r = 0; r < t->n_rows; r++) free(t->row_names[r]);
    free(t->groups);
    free(t->latex_labels);
    free(t->published);
    free(t->col_keys);
    free(t->col_labels);
    free(t->bold_best);
    free(t->row_names);
    free(t->baseline);
    free(t->vals);
    free(t->corner_key);
    free(t->corner_label);
    free(t->note);
    memset(t, 0, sizeof *t);
}

/* CSV field: quoted when it holds a comma, quote or newline. */
static void csv_field(kc_buf *b, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        kc_buf_printf(b, "%s", s);
        return;
    }
    kc_buf_printf(b, "\"");
    for (; *s; s++) kc_buf_printf(b, *s == '"' ? "\"\"" : "%c", *s);
    kc_buf_printf(b, "\"");
}

/* A row's kind: 0 a contender, 1 a baseline, 2 a published row (the order of the output). */
static int row_kind(const kc_table *t, int r)
{
    return t->published[r] ? 2 : t->baseline[r] ? 1 : 0;
}

/* Row r of the output order: the other rows first, then the baselines, then the published rows,
 * each in their given order. */
static int row_at(const kc_table *t, int k)
{
    for (int pass = 0; pass < 3; pass++)
        for (int r = 0; r < t->n_rows; r++)
            if (row_kind(t, r) == pass && k-- == 0) return r;
    return k; /* not reached */
}

/* The rows of kind `kind`. */
static int n_kind(const kc_table *t, int kind)
{
    int n = 0;
    for (int r = 0; r < t->n_rows; r++) n += row_kind(t, r) == kind;
    return n;
}

/* The shortest %.*g text that reads back as v exactly (at most 17 digits: every double), so that
 * the CSV is data, not print: a value read from a 9-digit score file comes out as it was read. */
static void csv_number(kc_buf *b, double v)
{
    char text[32];
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(text, sizeof text, "%.*g", digits, v);
        if (strtod(text, NULL) == v) break;
    }
    kc_buf_printf(b, ",%s", text);
}

char *table_csv(const kc_table *t)
{
    kc_buf b = {0};
    int nb = t->n_rows - n_kind(t, 0); /* reference rows: a `kind` column */
    csv_field(&b, t->corner_key);
    for (int c = 0; c < t->n_cols; c++) {
        kc_buf_printf(&b, ",");
        csv_field(&b, t->col_keys[c]);
    }
    kc_buf_printf(&b, nb ? ",kind\n" : "\n");
    for (int k = 0; k < t->n_rows; k++) {
        int r = row_at(t, k);
        csv_field(&b, t->row_names[r]);
        for (int c = 0; c < t->n_cols; c++) {
            double v = t->vals[(size_t)r * t->n_cols + c];
            if (isnan(v)) kc_buf_printf(&b, ",");
            else csv_number(&b, v);
        }
        if (nb) kc_buf_printf(&b, row_kind(t, r) == 2 ? ",published" : row_kind(t, r) ? ",baseline" : ",network");
        kc_buf_printf(&b, "\n");
    }
    return b.s;
}

/* Largest raw value of column c over the contenders (neither baseline nor published), else over
 * all rows (NaN when the column is empty). */
static double col_best(const kc_table *t, int c)
{
    double best = NAN;
    for (int pass = 0; pass < 2 && isnan(best); pass++)
        for (int r = 0; r < t->n_rows; r++) {
            double v = t->vals[(size_t)r * t->n_cols + c];
            if ((pass || !row_kind(t, r)) && !isnan(v) && (isnan(best) || v > best)) best = v;
        }
    return best;
}

/* Bold for row r in column c: the column's best, and r is a contender unless no contender has a value. */
static int is_bold(const kc_table *t, int r, int c, double best)
{
    if (!t->bold_best[c] || t->vals[(size_t)r * t->n_cols + c] != best) return 0;
    if (!row_kind(t, r)) return 1;
    for (int q = 0; q < t->n_rows; q++)
        if (!row_kind(t, q) && !isnan(t->vals[(size_t)q * t->n_cols + c])) return 0;
    return 1;
}

static void md_text(kc_buf *b, const char *s)
{
    for (; *s; s++) kc_buf_printf(b, *s == '|' ? "\\|" : "%c", *s);
}

static const char *col_label(const kc_table *t, int c, char *buf, size_t n)
{
    if (t->groups && t->groups[c] && *t->groups[c]) snprintf(buf, n, "%s %s", t->groups[c], t->col_labels[c]);
    else snprintf(buf, n, "%s", t->col_labels[c]);
    return buf;
}

char *table_markdown(const kc_table *t)
{
    kc_buf b = {0};
    char lab[512];
    if (t->note) kc_buf_printf(&b, "%s\n\n", t->note);
    kc_buf_printf(&b, "| ");
    md_text(&b, t->corner_label);
    for (int c = 0; c < t->n_cols; c++) {
        kc_buf_printf(&b, " | ");
        md_text(&b, col_label(t, c, lab, sizeof lab));
    }
    kc_buf_printf(&b, " |\n|---");
    for (int c = 0; c < t->n_cols; c++) kc_buf_printf(&b, "|---:");
    kc_buf_printf(&b, "|\n");
    for (int k = 0; k < t->n_rows; k++) {
        int r = row_at(t, k);
        kc_buf_printf(&b, "| ");
        md_text(&b, t->row_names[r]);
        if (row_kind(t, r) == 1) kc_buf_printf(&b, " (baseline)");
        size_t len = strlen(t->row_names[r]);
        if (row_kind(t, r) == 2 && (len < 11 || strcmp(t->row_names[r] + len - 11, "(published)")))
            kc_buf_printf(&b, " (published)");
        for (int c = 0; c < t->n_cols; c++) {
            double v = t->vals[(size_t)r * t->n_cols + c];
            if (isnan(v)) kc_buf_printf(&b, " | –");
            else if (is_bold(t, r, c, col_best(t, c)))
                kc_buf_printf(&b, " | **%.*f**", t->decimals, v * t->scale);
            else kc_buf_printf(&b, " | %.*f", t->decimals, v * t->scale);
        }
        kc_buf_printf(&b, " |\n");
    }
    return b.s;
}

void table_latex_escape(kc_buf *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': case '%': case '$': case '#': case '_': case '{': case '}':
            kc_buf_printf(b, "\\%c", *s);
            break;
        case '~': kc_buf_printf(b, "\\textasciitilde{}"); break;
        case '^': kc_buf_printf(b, "\\textasciicircum{}"); break;
        case '\\': kc_buf_printf(b, "\\textbackslash{}"); break;
        default: kc_buf_printf(b, "%c", *s);
        }
    }
}

char *table_latex(const kc_table *t)
{
    kc_buf b = {0};
    if (t->note) kc_buf_printf(&b, "%% %s\n", t->note);
    kc_buf_printf(&b, "%% generated by keycut kc-table; \\usepackage{booktabs}\n\\begin{tabular}{l");
    for (int c = 0; c < t->n_cols; c++) kc_buf_printf(&b, "r");
    kc_buf_printf(&b, "}\n\\toprule\n");
    if (t->groups) {
        /* one \multicolumn per run of equal group names, with \cmidrule below */
        kc_buf cm = {0};
        kc_buf_printf(&b, " ");
        for (int c = 0; c < t->n_cols;) {
            int e = c + 1;
            while (e < t->n_cols && !strcmp(t->groups[e] ? t->groups[e] : "", t->groups[c] ? t->groups[c] : "")) e++;
            kc_buf_printf(&b, " & \\multicolumn{%d}{c}{", e - c);
            table_latex_escape(&b, t->groups[c] ? t->groups[c] : "");
            kc_buf_printf(&b, "}");
            kc_buf_printf(&cm, "\\cmidrule(lr){%d-%d}", c + 2, e + 1);
            c = e;
        }
        kc_buf_printf(&b, " \\\\\n%s\n", cm.s ? cm.s : "");
        free(cm.s);
    }
    table_latex_escape(&b, t->corner_label);
    for (int c = 0; c < t->n_cols; c++) {
        kc_buf_printf(&b, " & ");
        if (t->latex_labels && t->latex_labels[c]) kc_buf_printf(&b, "%s", t->latex_labels[c]);
        else table_latex_escape(&b, t->col_labels[c]);
    }
    kc_buf_printf(&b, " \\\\\n\\midrule\n");
    static const char *const heading[3] = {NULL, "Baselines", "Published"};
    for (int k = 0; k < t->n_rows; k++) {
        int r = row_at(t, k), kind = row_kind(t, r);
        if (kind && (k == 0 || row_kind(t, row_at(t, k - 1)) != kind)) /* the first baseline / published row */
            kc_buf_printf(&b, "%s\\multicolumn{%d}{l}{\\textit{%s}} \\\\\n", k ? "\\midrule\n" : "", t->n_cols + 1,
                          heading[kind]);
        table_latex_escape(&b, t->row_names[r]);
        for (int c = 0; c < t->n_cols; c++) {
            double v = t->vals[(size_t)r * t->n_cols + c];
            if (isnan(v)) kc_buf_printf(&b, " & --");
            else if (is_bold(t, r, c, col_best(t, c)))
                kc_buf_printf(&b, " & \\textbf{%.*f}", t->decimals, v * t->scale);
            else kc_buf_printf(&b, " & %.*f", t->decimals, v * t->scale);
        }
        kc_buf_printf(&b, " \\\\\n");
    }
    kc_buf_printf(&b, "\\bottomrule\n\\end{tabular}\n");
    return b.s;
}

int table_write(const char *dir, const char *base, const kc_table *t)
{
    static const char *const ext[3] = {"csv", "md", "tex"};
    for (int k = 0; k < 3; k++) {
        char *text = k == 0 ? table_csv(t) : k == 1 ? table_markdown(t) : table_latex(t);
        char *path = kc_strfmt("%s/%s.%s", dir, base, ext[k]);
        int rc = kc_write_file_atomic(path, text, strlen(text));
        free(path);
        free(text);
        KC_TRY(rc);
    }
    return 0;
}

void table_macro_word(kc_buf *b, const char *s)
{
    static const char *const digits[10] = {"Zero", "One", "Two", "Three", "Four",
                                           "Five", "Six", "Seven", "Eight", "Nine"};
    int upper = 1;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (isalpha(*p) && *p < 128) {
            kc_buf_printf(b, "%c", upper ? toupper(*p) : *p);
            upper = 0;
            continue;
        }
        if (isdigit(*p)) kc_buf_printf(b, "%s", digits[*p - '0']);
        else if (*p == '-') kc_buf_printf(b, "Dash");
        else if (*p == '.') kc_buf_printf(b, "Dot");
        else if (*p == '_') kc_buf_printf(b, "Underscore");
        else kc_buf_printf(b, "X");
        upper = 1;
    }
}
