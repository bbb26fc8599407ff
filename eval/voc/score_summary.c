/* eval/voc/score_summary.c — kc-score's summary.csv and knife-edge columns.  See score_summary.h. */
#include "eval/voc/score_summary.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/kc.h"

int score_csv_split(char *line, char **f, int max)
{
    int n = 0;
    f[n++] = line;
    for (char *p = line; *p && n < max; p++)
        if (*p == ',') {
            *p = 0;
            f[n++] = p + 1;
        }
    size_t k = strlen(f[n - 1]);
    while (k && (f[n - 1][k - 1] == '\r' || f[n - 1][k - 1] == '\n')) f[n - 1][--k] = 0;
    return n;
}

static int parse_num(const char *path, int line, const char *s, double *v)
{
    char *end;
    *v = strtod(s, &end);
    if (end == s || *end || !isfinite(*v)) return kc_fail("%s:%d: '%s' is not a number", path, line, s);
    return 0;
}

/* A fraction for a figure: a number in [0, 1]. */
static int parse_frac(const char *path, int line, const char *s, double *v)
{
    KC_TRY(parse_num(path, line, s, v));
    if (*v < 0 || *v > 1) return kc_fail("%s:%d: %s is outside [0, 1]", path, line, s);
    return 0;
}

/* One row's fields f (4) into im, j, c, with the habits of a table (net == NULL) or a figure. */
static int parse_row(const char *path, int line, char **f, const char *net, double *im, double *j, double *c)
{
    if (net) {
        *im = 0;
        return parse_frac(path, line, f[2], j) < 0 || parse_frac(path, line, f[3], c) < 0 ? -1 : 0;
    }
    if (parse_num(path, line, f[1], im) < 0 || parse_num(path, line, f[2], j) < 0) return -1;
    if (!f[3][0]) *c = NAN; /* empty corloc: attention masks */
    else KC_TRY(parse_num(path, line, f[3], c));
    if (*j < 0 || *j > 1 || *c < 0 || *c > 1) /* (false for a NaN corloc) */
        return kc_fail("%s:%d: values outside [0, 1]", path, line);
    return 0;
}

int score_summary_read(const char *dir, const char *net, const char *hint, score_summary *s)
{
    memset(s, 0, sizeof *s);
    char *path = kc_strfmt("%s/summary.csv", dir);
    uint8_t *data = NULL;
    size_t size;
    int rc = 0;
    if (net && !kc_exists(path)) rc = kc_fail("network %s has no scores yet: %s does not exist (%s)", net, path, hint);
    else if (kc_read_file(path, &data, &size) < 0) rc = -1;
    int line = 0, cap = 0;
    char *save = NULL;
    for (char *l = data ? strtok_r((char *)data, "\n", &save) : NULL; l && rc == 0; l = strtok_r(NULL, "\n", &save)) {
        line++;
        char *f[8];
        int nf = score_csv_split(l, f, 8);
        if (line == 1) {
            if (nf != 4 || strcmp(f[0], "setting") || strcmp(f[1], "images") || strcmp(f[2], "jaccard") ||
                strcmp(f[3], "corloc"))
                rc = kc_fail("%s: header is not 'setting,images,jaccard,corloc' (not a kc-score summary)", path);
            continue;
        }
        double im = 0, j = 0, c = 0;
        if (nf != 4) rc = kc_fail("%s:%d: expected 4 fields", path, line);
        else if (parse_row(path, line, f, net, &im, &j, &c) < 0) rc = -1;
        if (rc < 0) break;
        if (score_summary_find(s, f[0]) >= 0) rc = kc_fail("%s:%d: setting %s listed twice", path, line, f[0]);
        if (s->n == cap) {
            cap = cap ? 2 * cap : 64;
            s->settings = kc_realloc(s->settings, (size_t)cap * sizeof *s->settings);
            s->images = kc_realloc(s->images, (size_t)cap * sizeof *s->images);
            s->jaccard = kc_realloc(s->jaccard, (size_t)cap * sizeof *s->jaccard);
            s->corloc = kc_realloc(s->corloc, (size_t)cap * sizeof *s->corloc);
        }
        s->settings[s->n] = kc_strdup(f[0]);
        s->images[s->n] = (int)im;
        s->jaccard[s->n] = j;
        s->corloc[s->n] = c;
        s->n++;
    }
    if (rc == 0 && s->n == 0)
        rc = net ? kc_fail("%s: no settings (network %s)", path, net) : kc_fail("%s: no settings", path);
    free(data);
    free(path);
    if (rc < 0) score_summary_free(s);
    return rc;
}

void score_summary_read_knife(const char *dir, score_summary *s)
{
    s->knife = kc_malloc((size_t)s->n * sizeof *s->knife);
    for (int k = 0; k < s->n; k++) {
        s->knife[k] = NAN;
        char *path = kc_strfmt("%s/%s.csv", dir, s->settings[k]);
        uint8_t *data;
        size_t size;
        if (kc_read_file(path, &data, &size) == 0) {
            int rows = 0, on = 0, known = 0, line = 0;
            char *save = NULL;
            for (char *l = strtok_r((char *)data, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
                if (line++ > 0) {
                    char *f[10];
                    rows++;
                    if (score_csv_split(l, f, 10) == 9 && f[8][0]) known++, on += !strcmp(f[8], "1");
                }
            if (rows > 0 && known == rows) {
                s->knife[k] = (double)on / rows;
                s->has_knife = 1;
            }
            free(data);
        }
        free(path);
    }
}

int score_summary_find(const score_summary *s, const char *id)
{
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->settings[i], id)) return i;
    return -1;
}

void score_summary_free(score_summary *s)
{
    for (int i = 0; i < s->n; i++) free(s->settings[i]);
    free(s->settings);
    free(s->images);
    free(s->jaccard);
    free(s->corloc);
    free(s->knife);
    memset(s, 0, sizeof *s);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

void score_settings_union(const score_summary *const *s, int n, char ***all, int *n_all)
{
    *all = NULL;
    *n_all = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < s[i]->n; k++) {
            int a = 0;
            while (a < *n_all && strcmp((*all)[a], s[i]->settings[k])) a++;
            if (a == *n_all) {
                *all = kc_realloc(*all, (size_t)(*n_all + 1) * sizeof **all);
                (*all)[(*n_all)++] = s[i]->settings[k];
            }
        }
    if (*n_all) qsort(*all, (size_t)*n_all, sizeof **all, cmp_str);
}
