/* eval/tables/saliency_table.c — the unsupervised saliency table.  See saliency_table.h. */
#include "eval/tables/saliency_table.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/tables/table.h"
#include "eval/voc/ledger.h"
#include "pipeline/ini.h"
#include "pipeline/kc.h"
#include "pipeline/lock.h"

enum { SAL_NONE, SAL_BS, SAL_N_REFINE };
enum { SAL_MAX_FBETA, SAL_IOU, SAL_ACCURACY, SAL_N_METRICS };

static const char *const refine_name[SAL_N_REFINE] = {"none", "bs"};
static const char *const metric_key[SAL_N_METRICS] = {"max_fbeta", "iou", "accuracy"};
static const char *const metric_label[SAL_N_METRICS] = {"maxFβ", "IoU", "Acc"};
static const char *const metric_latex[SAL_N_METRICS] = {"max$F_\\beta$", "IoU", "Acc"};

/* TokenCut's datasets, in its README's order, and their keys in published.ini. */
#define SAL_N_KNOWN 3
static const char *const known_dataset[SAL_N_KNOWN] = {"ECSSD", "DUTS-TE", "DUT-OMRON"};
static const char *const known_key[SAL_N_KNOWN] = {"ecssd", "duts", "dutomron"};

/* One score folder: one network on one dataset. */
typedef struct sal_folder {
    char *dir, *net, *setting, *dataset;
    int images;
    double v[SAL_N_REFINE][SAL_N_METRICS]; /* fractions; iou may be NaN */
} sal_folder;

/* One published row: a label's values, as fractions, per known dataset and metric (NaN: none). */
typedef struct pub_row {
    const char *label; /* points into the INI */
    int bs;            /* its metrics end in _bs (-1: none read yet) */
    double v[SAL_N_KNOWN][SAL_N_METRICS];
} pub_row;

/* The network's name: the first line of DIR/network, else the folder's name. */
static int folder_net(sal_folder *f)
{
    char *np = kc_strfmt("%s/network", f->dir);
    int rc = 0;
    if (kc_exists(np)) {
        uint8_t *d;
        size_t sz;
        if (kc_read_text(np, &d, &sz) < 0) rc = -1;
        else {
            char *nl = strpbrk((char *)d, "\r\n");
            if (nl) *nl = 0;
            if (!d[0]) rc = kc_fail("%s: empty network name", np);
            else f->net = kc_strdup((char *)d);
            free(d);
        }
    } else {
        const char *slash = strrchr(f->dir, '/');
        f->net = kc_strdup(slash ? slash + 1 : f->dir);
    }
    free(np);
    return rc;
}

/* A fraction field: a number in [0, 1], or NaN when nan_ok and the text is nan. */
static int parse_frac(const char *path, int line, const char *what, const char *s, int nan_ok, double *v)
{
    char *end;
    *v = strtod(s, &end);
    if (end == s || *end || isinf(*v) || (isnan(*v) && !nan_ok))
        return kc_fail("%s:%d: %s '%s' is not a number", path, line, what, s);
    if (*v < 0 || *v > 1) return kc_fail("%s:%d: %s %s is outside [0, 1]", path, line, what, s);
    return 0;
}

/* The fields of one data row (8) into f, refine r. */
static int parse_row(const char *path, int line, char **fld, sal_folder *f, int r)
{
    char *end;
    long images = strtol(fld[3], &end, 10);
    if (end == fld[3] || *end || images <= 0 || images > 100000000)
        return kc_fail("%s:%d: images '%s' is not a positive count", path, line, fld[3]);
    if (!*fld[0]) return kc_fail("%s:%d: empty setting", path, line);
    if (!*fld[2]) return kc_fail("%s:%d: empty dataset", path, line);
    if (f->setting) { /* the second row read: as the first */
        if (strcmp(f->setting, fld[0]))
            return kc_fail("%s:%d: setting %s, but the other row's is %s", path, line, fld[0], f->setting);
        if (strcmp(f->dataset, fld[2]))
            return kc_fail("%s:%d: dataset %s, but the other row's is %s", path, line, fld[2], f->dataset);
        if (f->images != images)
            return kc_fail("%s:%d: %ld images, but the other row has %d", path, line, images, f->images);
    }
    for (int m = 0; m < SAL_N_METRICS; m++)
        KC_TRY(parse_frac(path, line, metric_key[m], fld[4 + m], m == SAL_IOU, &f->v[r][m]));
    double threshold;
    KC_TRY(parse_frac(path, line, "threshold", fld[7], 0, &threshold));
    if (!f->setting) {
        f->setting = kc_strdup(fld[0]);
        f->dataset = kc_strdup(fld[2]);
        f->images = (int)images;
    }
    return 0;
}

/* DIR/summary.csv: the header, then exactly one none row and one bs row. */
static int read_summary(sal_folder *f)
{
    static const char header[] = "setting,refine,dataset,images,max_fbeta,iou,accuracy,threshold";
    char *path = kc_strfmt("%s/summary.csv", f->dir);
    uint8_t *data = NULL;
    size_t size;
    int rc = kc_exists(path) ? kc_read_text(path, &data, &size) : kc_fail("%s: no such file (not a kc-saliency folder)", path);
    int seen[SAL_N_REFINE] = {0}, line = 0;
    char *next = data ? (char *)data : NULL;
    while (rc == 0 && next && *next) {
        char *l = next, *nl = strchr(l, '\n');
        next = nl ? nl + 1 : NULL;
        if (nl) *nl = 0;
        size_t k = strlen(l);
        if (k && l[k - 1] == '\r') l[--k] = 0;
        line++;
        if (line == 1) {
            if (strcmp(l, header)) rc = kc_fail("%s: header is not '%s' (not a kc-saliency summary)", path, header);
            continue;
        }
        if (!*l) {
            rc = kc_fail("%s:%d: empty line", path, line);
            break;
        }
        char *fld[9];
        int nf = 1, r = -1;
        fld[0] = l;
        for (char *p = l; *p && nf < 9; p++)
            if (*p == ',') {
                *p = 0;
                fld[nf++] = p + 1;
            }
        if (nf != 8) {
            rc = kc_fail("%s:%d: expected 8 fields, found %d", path, line, nf);
            break;
        }
        for (int m = 0; m < SAL_N_REFINE; m++)
            if (!strcmp(fld[1], refine_name[m])) r = m;
        if (r < 0) rc = kc_fail("%s:%d: refine '%s' is neither none nor bs", path, line, fld[1]);
        else if (seen[r]++) rc = kc_fail("%s:%d: a second %s row", path, line, fld[1]);
        else rc = parse_row(path, line, fld, f, r);
    }
    if (rc == 0 && !(seen[SAL_NONE] && seen[SAL_BS]))
        rc = kc_fail("%s: wants two rows, refine none and bs (found %s%s%s)", path, seen[SAL_NONE] ? "none" : "",
                     seen[SAL_NONE] && seen[SAL_BS] ? ", " : "", seen[SAL_BS] ? "bs" : !seen[SAL_NONE] ? "neither" : "");
    free(data);
    free(path);
    return rc;
}

static int load_folders(const saliency_table_opts *o, sal_folder *fs)
{
    for (int i = 0; i < o->n_dirs; i++) {
        sal_folder *f = &fs[i];
        f->dir = kc_strdup(o->dirs[i]);
        size_t k = strlen(f->dir);
        while (k > 1 && f->dir[k - 1] == '/') f->dir[--k] = 0;
        KC_TRY(folder_net(f));
        KC_TRY(read_summary(f));
        for (int j = 0; j < i; j++) {
            if (!strcmp(fs[j].net, f->net) && !strcmp(fs[j].dataset, f->dataset))
                return kc_fail("%s/summary.csv: network %s on %s again (also %s; write the name into DIR/network)", f->dir,
                               f->net, f->dataset, fs[j].dir);
            if (strcmp(fs[j].setting, f->setting))
                return kc_fail("%s/summary.csv: setting %s, but %s/summary.csv is at %s (one setting per table)", f->dir,
                               f->setting, fs[j].dir, fs[j].setting);
        }
    }
    return 0;
}

/* "saliency_<key>_<metric>[_bs]" into *d (known dataset), *m, *bs; -1 when it is not of that form. */
static int parse_metric(const char *s, int *d, int *m, int *bs)
{
    if (strncmp(s, "saliency_", 9)) return -1;
    s += 9;
    size_t len = strlen(s);
    *bs = len > 3 && !strcmp(s + len - 3, "_bs");
    if (*bs) len -= 3;
    for (*d = 0; *d < SAL_N_KNOWN; ++*d) {
        size_t kl = strlen(known_key[*d]);
        if (len > kl && !strncmp(s, known_key[*d], kl) && s[kl] == '_') break;
    }
    if (*d == SAL_N_KNOWN) return -1;
    size_t kl = strlen(known_key[*d]) + 1;
    for (*m = 0; *m < SAL_N_METRICS; ++*m)
        if (strlen(metric_key[*m]) == len - kl && !strncmp(s + kl, metric_key[*m], len - kl)) return 0;
    return -1;
}

static const ini_entry *entry_of(const ini_file *f, const char *sec, const char *key)
{
    for (int i = 0; i < f->n; i++)
        if (!strcmp(f->e[i].section, sec) && !strcmp(f->e[i].key, key)) return &f->e[i];
    return NULL;
}

/* The saliency sections of the published file (loaded in pub) as rows (*rows, *n_rows). */
static int read_published(const char *path, const ini_file *pub, pub_row **rows, int *n_rows)
{
    *rows = NULL;
    *n_rows = 0;
    for (int i = 0; i < pub->n; i++) {
        const char *sec = pub->e[i].section;
        int first = 1;
        for (int j = 0; j < i && first; j++) first = strcmp(pub->e[j].section, sec) != 0;
        if (!first || !*sec) continue;
        const ini_entry *lab = entry_of(pub, sec, "label"), *met = entry_of(pub, sec, "metric"),
                        *val = entry_of(pub, sec, "value");
        if (!met || strncmp(met->value, "saliency_", 9)) continue; /* another figure's line */
        if (!lab || !val || !*lab->value) return kc_fail("%s: [%s] needs label, metric and value", path, sec);
        int d, m, bs;
        if (parse_metric(met->value, &d, &m, &bs) < 0)
            return kc_fail("%s:%d: metric '%s' is not saliency_<ecssd|duts|dutomron>_<max_fbeta|iou|accuracy>[_bs]", path,
                           met->line, met->value);
        char *end;
        double v = strtod(val->value, &end);
        if (end == val->value || *end || !(v >= 0 && v <= 100))
            return kc_fail("%s:%d: value '%s' is not a percentage", path, val->line, val->value);
        int r = 0;
        while (r < *n_rows && strcmp((*rows)[r].label, lab->value)) r++;
        if (r == *n_rows) {
            *rows = kc_realloc(*rows, (size_t)(*n_rows + 1) * sizeof **rows);
            pub_row *p = &(*rows)[(*n_rows)++];
            p->label = lab->value;
            p->bs = bs;
            for (int a = 0; a < SAL_N_KNOWN; a++)
                for (int b = 0; b < SAL_N_METRICS; b++) p->v[a][b] = NAN;
        }
        pub_row *p = &(*rows)[r];
        if (!strpbrk(val->value, "eExX")) { /* the fraction nearest the decimal text: 80.3 -> 0.803, not 0.803 - 1 ulp */
            char *frac = kc_strfmt("%se-2", val->value);
            v = strtod(frac, NULL);
            free(frac);
        } else {
            v /= 100;
        }
        if (p->bs != bs)
            return kc_fail("%s:%d: label '%s' has metrics with and without _bs (one label per row)", path, met->line,
                           lab->value);
        if (!isnan(p->v[d][m]))
            return kc_fail("%s:%d: label '%s' has %s twice", path, met->line, lab->value, met->value);
        p->v[d][m] = v;
    }
    return 0;
}

/* The datasets of the folders: TokenCut's three in its order, then the others first-seen. */
static int dataset_order(const sal_folder *fs, int n, const char ***names)
{
    const char **ds = kc_calloc((size_t)n + SAL_N_KNOWN, sizeof *ds);
    int n_ds = 0;
    for (int k = 0; k < SAL_N_KNOWN; k++)
        for (int i = 0; i < n; i++)
            if (!strcmp(fs[i].dataset, known_dataset[k])) {
                ds[n_ds++] = known_dataset[k];
                break;
            }
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int k = 0; k < n_ds && !seen; k++) seen = !strcmp(ds[k], fs[i].dataset);
        if (!seen) ds[n_ds++] = fs[i].dataset;
    }
    *names = ds;
    return n_ds;
}

/* The note line: what the table is of. */
static char *about_line(const sal_folder *fs, int n, const char *const *ds, int n_ds, const char *const *nets,
                        const int *baseline, int n_nets, const char *published, const pub_row *pub, const int *pub_used,
                        int n_pub)
{
    kc_buf b = {0};
    kc_buf_printf(&b, "Unsupervised saliency detection (TokenCut's protocol: metric.py's max F-beta, IoU and accuracy; "
                      "+ BS: after TokenCut's bilateral solver), setting %s; datasets", fs[0].setting);
    for (int k = 0; k < n_ds; k++) {
        int lo = 0, hi = 0;
        for (int i = 0; i < n; i++)
            if (!strcmp(fs[i].dataset, ds[k])) {
                if (!lo || fs[i].images < lo) lo = fs[i].images;
                if (fs[i].images > hi) hi = fs[i].images;
            }
        if (lo == hi) kc_buf_printf(&b, "%s %s (%d image%s)", k ? "," : "", ds[k], lo, kc_s(lo));
        else kc_buf_printf(&b, "%s %s (%d to %d images)", k ? "," : "", ds[k], lo, hi);
    }
    kc_buf_printf(&b, "; networks:");
    for (int pass = 0, k = 0; pass < 2; pass++)
        for (int i = 0; i < n_nets; i++)
            if (baseline[i] == pass) kc_buf_printf(&b, "%s %s%s", k++ ? "," : "", nets[i], pass ? " (baseline)" : "");
    int k = 0;
    for (int r = 0; r < n_pub; r++) {
        if (!pub_used[r]) continue;
        if (k++ == 0) kc_buf_printf(&b, "; published rows from %s: %s", published, pub[r].label);
        else kc_buf_printf(&b, ", %s", pub[r].label);
    }
    return b.s;
}

int saliency_table_run(const saliency_table_opts *o)
{
    int n = o->n_dirs, rc = 0, n_pub = 0, n_nets = 0;
    sal_folder *fs = kc_calloc((size_t)n + 1, sizeof *fs);
    const char **nets = kc_calloc((size_t)n + 1, sizeof *nets), **ds = NULL;
    int *net_of = kc_calloc((size_t)n + 1, sizeof *net_of), *baseline = kc_calloc((size_t)n + 1, sizeof *baseline);
    int *pub_used = NULL;
    ini_file pub = {0};
    pub_row *rows = NULL;
    kc_table t = {0};
    kc_lock *lock = NULL;
    char *note = NULL;
    int have_pub = 0;
    if (n == 0) {
        rc = kc_fail("no score folders");
        goto done;
    }
    if (load_folders(o, fs) < 0) {
        rc = -1;
        goto done;
    }
    for (int i = 0; i < n; i++) { /* the networks in the order of their first folder */
        int k = 0;
        while (k < n_nets && strcmp(nets[k], fs[i].net)) k++;
        if (k == n_nets) nets[n_nets++] = fs[i].net;
        net_of[i] = k;
    }
    for (int b = 0; b < o->n_baselines; b++) {
        int k = 0;
        while (k < n_nets && strcmp(nets[k], o->baselines[b])) k++;
        if (k == n_nets) {
            rc = kc_fail("--baseline %s: no score folder of network '%s'", o->baselines[b], o->baselines[b]);
            goto done;
        }
        baseline[k] = 1;
    }
    if (o->published) {
        have_pub = 1;
        if (ini_load(&pub, o->published) < 0 || read_published(o->published, &pub, &rows, &n_pub) < 0) {
            rc = -1;
            goto done;
        }
    }
    int n_ds = dataset_order(fs, n, &ds);
    /* the published rows with a value in the table's datasets */
    pub_used = kc_calloc((size_t)n_pub + 1, sizeof *pub_used);
    int n_pub_used = 0;
    for (int r = 0; r < n_pub; r++) {
        for (int k = 0; k < n_ds; k++)
            for (int d = 0; d < SAL_N_KNOWN; d++)
                for (int m = 0; m < SAL_N_METRICS; m++)
                    if (!strcmp(ds[k], known_dataset[d]) && !isnan(rows[r].v[d][m])) pub_used[r] = 1;
        n_pub_used += pub_used[r];
    }
    table_init(&t, "network", "Network", n_ds * SAL_N_METRICS, 2 * n_nets + n_pub_used);
    t.groups = kc_calloc((size_t)t.n_cols + 1, sizeof *t.groups);
    t.latex_labels = kc_calloc((size_t)t.n_cols + 1, sizeof *t.latex_labels);
    for (int k = 0; k < n_ds; k++)
        for (int m = 0; m < SAL_N_METRICS; m++) {
            int c = k * SAL_N_METRICS + m;
            char *key = kc_strfmt("%s_%s", ds[k], metric_key[m]);
            table_col(&t, c, key, metric_label[m], 1);
            t.groups[c] = kc_strdup(ds[k]);
            t.latex_labels[c] = kc_strdup(metric_latex[m]);
            free(key);
        }
    for (int k = 0; k < n_nets; k++)
        for (int r = 0; r < SAL_N_REFINE; r++) {
            int row = 2 * k + r;
            char *name = kc_strfmt("%s%s", nets[k], r == SAL_BS ? " + BS" : "");
            table_row(&t, row, name);
            free(name);
            t.baseline[row] = baseline[k];
        }
    for (int i = 0; i < n; i++) {
        int k = 0;
        while (strcmp(ds[k], fs[i].dataset)) k++;
        for (int r = 0; r < SAL_N_REFINE; r++)
            for (int m = 0; m < SAL_N_METRICS; m++)
                t.vals[(size_t)(2 * net_of[i] + r) * t.n_cols + k * SAL_N_METRICS + m] = fs[i].v[r][m];
    }
    for (int r = 0, row = 2 * n_nets; r < n_pub; r++) {
        if (!pub_used[r]) continue;
        table_row(&t, row, rows[r].label);
        t.published[row] = 1;
        for (int k = 0; k < n_ds; k++)
            for (int d = 0; d < SAL_N_KNOWN; d++)
                if (!strcmp(ds[k], known_dataset[d]))
                    for (int m = 0; m < SAL_N_METRICS; m++)
                        t.vals[(size_t)row * t.n_cols + k * SAL_N_METRICS + m] = rows[r].v[d][m];
        row++;
    }
    note = about_line(fs, n, ds, n_ds, nets, baseline, n_nets, o->published, rows, pub_used, n_pub);
    table_note(&t, note);
    /* everything is read: write */
    if (kc_lock_folder(&lock, o->out, o->name) < 0) {
        rc = -1;
        goto done;
    }
    kc_outputs_begin();
    if (table_write(o->out, o->name, &t) < 0 || kc_outputs_commit() < 0) {
        rc = -1;
        goto done;
    }
    kc_lock_release(lock);
    lock = NULL;
    kc_info("wrote the saliency table %s/%s.{csv,md,tex} (%d network%s, %d dataset%s, %d published row%s)", o->out,
            o->name, n_nets, kc_s(n_nets), n_ds, kc_s(n_ds), n_pub_used, kc_s(n_pub_used));
    if (o->ledger) rc = ledger_print(o->ledger);
done:
    kc_lock_release(lock);
    for (int i = 0; i < n; i++) {
        free(fs[i].dir);
        free(fs[i].net);
        free(fs[i].setting);
        free(fs[i].dataset);
    }
    free(fs);
    free(nets);
    free(ds);
    free(net_of);
    free(baseline);
    free(pub_used);
    free(rows);
    free(note);
    table_free(&t);
    if (have_pub) ini_free(&pub);
    return rc;
}
