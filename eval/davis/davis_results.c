/* eval/davis/davis_results.c — kc-davis's global results.  See davis_results.h. */
#include "eval/davis/davis_results.h"

#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eval/voc/score_summary.h"
#include "pipeline/json.h"
#include "pipeline/kc.h"

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

char *davis_results_find(const char *dir, const char *split, int required, int *failed)
{
    *failed = 0;
    DIR *d = opendir(dir);
    if (!d) {
        if (required) *failed = kc_fail("%s: cannot open the DAVIS results folder", dir);
        return NULL;
    }
    char **names = NULL;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t k = strlen(e->d_name);
        if (!strncmp(e->d_name, "global_results-", 15) && k > 19 && !strcmp(e->d_name + k - 4, ".csv")) {
            names = kc_realloc(names, (size_t)(n + 1) * sizeof *names);
            names[n++] = kc_strdup(e->d_name);
        }
    }
    closedir(d);
    char *out = NULL, *want = kc_strfmt("global_results-%s.csv", split ? split : "val");
    if (n) qsort(names, (size_t)n, sizeof *names, cmp_str);
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], want)) out = kc_strfmt("%s/%s", dir, names[i]);
    if (split) {
        if (!out && (n || required))
            *failed = kc_fail("%s/%s: no such file (DAVIS split %s%s%s; run kc-davis --split %s)", dir, want, split,
                              n ? ", but the folder has " : "", n ? names[0] : "", split);
    } else {
        if (!out && n == 1) out = kc_strfmt("%s/%s", dir, names[0]);
        if (!out && n > 1)
            *failed = kc_fail("%s: several global_results-*.csv and none is for val; pass --davis-split NAME", dir);
        else if (!out && required) *failed = kc_fail("%s: no global_results-*.csv (run kc-davis first)", dir);
    }
    free(want);
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
    return out;
}

int davis_results_read(const char *path, double *jf, double *j, double *f)
{
    uint8_t *data;
    size_t size;
    KC_TRY(kc_read_file(path, &data, &size));
    char *l1 = (char *)data, *l2 = strchr(l1, '\n');
    int rc = 0;
    if (!l2) {
        free(data);
        return kc_fail("%s: no values line", path);
    }
    *l2++ = 0;
    char *nl = strchr(l2, '\n');
    if (nl) *nl = 0;
    char *h[16], *v[16];
    int nh = score_csv_split(l1, h, 16), nv = score_csv_split(l2, v, 16);
    double *dst[3] = {jf, j, f};
    const char *want[3] = {"J&F-Mean", "J-Mean", "F-Mean"};
    for (int k = 0; k < 3 && rc == 0; k++) {
        int c = 0;
        while (c < nh && strcmp(h[c], want[k])) c++;
        char *end;
        if (c == nh) rc = kc_fail("%s: no %s column (not a DAVIS global results file)", path, want[k]);
        else if (c >= nv) rc = kc_fail("%s: the values line is short", path);
        else if ((*dst[k] = strtod(v[c], &end), end == v[c] || *end || !isfinite(*dst[k])))
            rc = kc_fail("%s:%d: '%s' is not a number", path, 2, v[c]);
    }
    free(data);
    return rc;
}

char *davis_results_split(const char *path)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    size_t k = strlen(base);
    if (strncmp(base, "global_results-", 15) || k < 20) return kc_strdup("");
    return kc_strfmt("%.*s", (int)(k - 19), base + 15);
}

int davis_results_read_full(const char *path, double *jf, double *j, double *f)
{
    double csv[3];
    KC_TRY(davis_results_read(path, &csv[0], &csv[1], &csv[2]));
    size_t k = strlen(path);
    char *json = kc_strfmt("%.*s.json", (int)(k > 4 ? k - 4 : k), path);
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    uint8_t *text = NULL;
    size_t len;
    json_value root;
    int rc = 0, parsed = 0;
    if (!kc_exists(json))
        rc = kc_fail("%s: no such file: the DAVIS numbers of the tables are read from it at full precision (kc-davis "
                     "writes it beside %s; rerun kc-davis --force)",
                     json, base);
    else if (kc_read_file(json, &text, &len) < 0 || json_parse(&root, (char *)text, len, json) < 0)
        rc = -1;
    else
        parsed = 1;
    double *dst[3] = {jf, j, f};
    const char *want[3] = {"J&F-Mean", "J-Mean", "F-Mean"};
    for (int c = 0; c < 3 && rc == 0; c++) {
        const json_value *g = json_get(json_get(&root, "global"), want[c]);
        if (json_get_number(g, dst[c]) < 0 || !isfinite(*dst[c]))
            rc = kc_fail("%s: no number \"global\": {\"%s\"} (not kc-davis's global_results JSON)", json, want[c]);
        else if (fabs(*dst[c] - csv[c]) > 0.0005 + 1e-9)
            rc = kc_fail("%s: %s is %.17g but %s has %.3f: files of two runs (rerun kc-davis --force)", json, want[c],
                         *dst[c], base, csv[c]);
    }
    if (parsed) json_free(&root);
    free(text);
    free(json);
    return rc;
}

int davis_results_read_jf(const char *net, const char *dir, double *jf)
{
    char *path = kc_strfmt("%s/global_results-val.csv", dir);
    uint8_t *data = NULL;
    size_t size;
    int rc = 0;
    if (!kc_exists(path)) {
        rc = kc_fail("network %s has no DAVIS results yet: %s does not exist (run make davis first)", net, path);
    } else if (kc_read_file(path, &data, &size) == 0) {
        char *l1 = (char *)data, *l2 = strchr(l1, '\n');
        if (!l2) rc = kc_fail("%s: no values line", path);
        else {
            *l2++ = 0;
            int col = 0, found = -1;
            char *save = NULL;
            for (char *p = strtok_r(l1, ",\r", &save); p; p = strtok_r(NULL, ",\r", &save), col++)
                if (!strcmp(p, "J&F-Mean")) found = col;
            if (found < 0) rc = kc_fail("%s: no J&F-Mean column (not a DAVIS global results file)", path);
            else {
                char *p = l2;
                for (int c = 0; c < found && p; c++) {
                    p = strchr(p, ',');
                    if (p) p++;
                }
                char *end;
                *jf = p ? strtod(p, &end) : NAN;
                if (!p || end == p || !isfinite(*jf) || *jf < 0 || *jf > 1)
                    rc = kc_fail("%s: J&F-Mean is not a number in [0, 1]", path);
            }
        }
    } else {
        rc = -1;
    }
    free(data);
    free(path);
    return rc;
}
