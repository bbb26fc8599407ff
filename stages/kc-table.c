/* stages/kc-table.c — the thesis tables from the score folders of many networks.
 *
 *   kc-table SCORE_DIRS... --out DIR [--name NAME] [--setting ID] [--davis NET=DIR]... [--ledger FILE]
 *            [--only sweep|report] [--baseline NET]... [--refine none|crf|bs]
 *
 * Each SCORE_DIR is one network's kc-score output; the network's name is the first line of
 * SCORE_DIR/network when present, else the folder's name.  From every SCORE_DIR/summary.csv:
 *   DIR/NAME-sweep.{csv,md,tex}  one row per setting, per network a Jaccard and a CorLoc column,
 *                                the best of each column in bold, and when the per-setting CSVs
 *                                have kc-score's knife_edge column, a `Knife edge` column: the share
 *                                of images whose mask rests on rounding (docs/ties.md)
 *   DIR/NAME.{csv,md,tex}        one row per network: VOC Jaccard and CorLoc at the chosen setting,
 *                                plus DAVIS J&F, J-Mean and F-Mean when a global_results-*.csv is found
 *                                for the network (in --davis NET=DIR, else in its SCORE_DIR; val
 *                                preferred when there are several)
 *   DIR/NAME-macros.tex          \newcommand{\kc<Name><Net><Metric>}{value} for single numbers,
 *                                \kc<Name>Setting and \kc<Name>Settings, per network the sweep's best
 *                                (\kc<Name><Net>BestJaccard, ...BestCorLoc, ...BestJaccardSetting);
 *                                letters only, see eval/table.h
 * An attention baseline's folder (kc-score of attn-mass masks: one attn-mass<m> setting, an empty
 * corloc) is reported at its own setting with a blank CorLoc (docs/attention-baseline.md).
 * --only sweep / --only report writes just that table, as DIR/NAME.{csv,md,tex}.
 * --baseline NET marks network NET as a baseline (random weights, the colour extractor, ...): its
 * report row is listed after the networks and labelled (eval/table.h), it is left out of the mean
 * that chooses the setting (unless every network is a baseline), and a baseline scored at one
 * setting only (DINO's attention masks) is reported at that setting whatever the chosen one.
 * --refine crf|bs names the pixel refinement the report's VOC scores were computed after (kc-refine:
 * MaskCut's dense CRF, TokenCut's bilateral solver) in their column titles and the macro
 * \kc<Name>Refine.
 * NAME defaults to "report".  The chosen setting is --setting, else the only setting when there is
 * one, else the setting with the best mean Jaccard over the networks (printed).  Tables show
 * percentages with one decimal; CSVs hold fractions.  Every file is written atomically and is
 * byte-identical across runs.  Finally it prints, from the ledger (--ledger, default
 * ./ledger.tsv), how many times each split's labels were opened.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/ledger.h"
#include "eval/probe.h"
#include "eval/table.h"
#include "pipeline/kc.h"
#include "pipeline/lock.h"

static void usage(int status)
{
    fprintf(status ? stderr : stdout,
            "usage: kc-table SCORE_DIRS... --out DIR [--name NAME] [--setting ID] [--davis NET=DIR]... [--probe NET=DIR]...\n"
            "                [--ledger FILE] [--only sweep|report] [--baseline NET]... [--refine none|crf|bs]\n"
            "       kc-table SCORE_DIRS... --print-best [--baseline NET]...\n"
            "\n"
            "Builds the sweep table (one row per setting, one column pair per network, best in bold)\n"
            "and the report table (one row per network at the chosen setting, with DAVIS J&F when\n"
            "found) as CSV, Markdown and LaTeX booktabs, plus NAME-macros.tex; prints how often each\n"
            "split's labels were opened according to the ledger (default ./ledger.tsv).\n"
            "--print-best prints the setting with the best mean Jaccard over the networks (the\n"
            "selection rule) and writes nothing.\n"
            "--refine crf|bs: the VOC scores are of kc-refine's pixel masks; the column titles say which.\n"
            "--probe NET=DIR: the report gains the column \"Probe mIoU\" (kc-probe eval's DIR/summary.csv).\n"
            "--baseline NET: network NET is a baseline: listed after the networks under a rule and\n"
            "labelled, left out of the setting choice; one with a single setting is reported at it.\n"
            "\n"
            "example:\n"
            "  kc-table out/dino/scores out/selfpatch/scores --out tables --name val \\\n"
            "           --setting t0.15-bin-mean-corners-n3 --davis dino=out/dino/davis\n");
    exit(status);
}

typedef struct net_scores {
    char *name, *dir;
    int n;
    char **settings;
    int *images;
    double *jaccard, *corloc;
    double *knife;  /* (n) share of images on a knife edge (kc-score's knife_edge column), NaN: unknown */
    int has_knife;  /* some setting's CSV has the knife_edge column filled */
    int has_davis;
    double jf, j, f;
    char *davis_file;
    int has_probe;  /* --probe NET=DIR: the linear probe's mIoU (kc-probe eval's summary.csv) */
    double probe_miou;
    int baseline;
} net_scores;

/* Splits a CSV line (no quoting in the files we read) into at most max fields; returns the count. */
static int split_csv(char *line, char **f, int max)
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

static int read_summary(net_scores *ns)
{
    char *path = kc_strfmt("%s/summary.csv", ns->dir);
    uint8_t *data;
    size_t size;
    int rc = kc_read_file(path, &data, &size);
    if (rc < 0) {
        free(path);
        return -1;
    }
    int line = 0, cap = 0;
    for (char *s = strtok((char *)data, "\n"); s && rc == 0; s = strtok(NULL, "\n")) {
        line++;
        char *f[8];
        if (line == 1) {
            if (strcmp(s, "setting,images,jaccard,corloc") && strcmp(s, "setting,images,jaccard,corloc\r"))
                rc = kc_fail("%s: header is not 'setting,images,jaccard,corloc' (not a kc-score summary)", path);
            continue;
        }
        if (split_csv(s, f, 8) != 4) {
            rc = kc_fail("%s:%d: expected 4 fields", path, line);
            break;
        }
        double im, j, c;
        if (parse_num(path, line, f[1], &im) < 0 || parse_num(path, line, f[2], &j) < 0 ||
            (f[3][0] ? parse_num(path, line, f[3], &c) < 0 : (c = NAN, 0))) { /* empty corloc: attention masks */
            rc = -1;
            break;
        }
        if (j < 0 || j > 1 || c < 0 || c > 1) { /* (false for a NaN corloc) */
            rc = kc_fail("%s:%d: values outside [0, 1]", path, line);
            break;
        }
        for (int i = 0; i < ns->n; i++)
            if (!strcmp(ns->settings[i], f[0])) rc = kc_fail("%s:%d: setting %s listed twice", path, line, f[0]);
        if (ns->n == cap) {
            cap = cap ? 2 * cap : 64;
            ns->settings = kc_realloc(ns->settings, (size_t)cap * sizeof(char *));
            ns->images = kc_realloc(ns->images, (size_t)cap * sizeof(int));
            ns->jaccard = kc_realloc(ns->jaccard, (size_t)cap * sizeof(double));
            ns->corloc = kc_realloc(ns->corloc, (size_t)cap * sizeof(double));
        }
        ns->settings[ns->n] = kc_strdup(f[0]);
        ns->images[ns->n] = (int)im;
        ns->jaccard[ns->n] = j;
        ns->corloc[ns->n] = c;
        ns->n++;
    }
    if (rc == 0 && ns->n == 0) rc = kc_fail("%s: no settings", path);
    free(data);
    free(path);
    return rc;
}

/* Per setting, the share of images whose knife_edge field (the 9th, docs/ties.md) is 1, from
 * DIR/<setting>.csv; NaN when the file or the column is absent (older score folders). */
static void read_knife(net_scores *ns)
{
    ns->knife = kc_malloc((size_t)ns->n * sizeof *ns->knife);
    for (int s = 0; s < ns->n; s++) {
        ns->knife[s] = NAN;
        char *path = kc_strfmt("%s/%s.csv", ns->dir, ns->settings[s]);
        uint8_t *data;
        size_t size;
        if (kc_read_file(path, &data, &size) == 0) {
            int rows = 0, on = 0, known = 0, line = 0;
            for (char *l = strtok((char *)data, "\n"); l; l = strtok(NULL, "\n"))
                if (line++ > 0) {
                    char *f[10];
                    rows++;
                    if (split_csv(l, f, 10) == 9 && f[8][0]) known++, on += !strcmp(f[8], "1");
                }
            if (rows > 0 && known == rows) {
                ns->knife[s] = (double)on / rows;
                ns->has_knife = 1;
            }
            free(data);
        }
        free(path);
    }
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The DAVIS global results file in dir: global_results-val.csv, else the only global_results-*.csv. */
static char *find_davis(const char *dir, int required, int *failed)
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
    char *out = NULL;
    if (n) qsort(names, (size_t)n, sizeof *names, cmp_str);
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], "global_results-val.csv")) out = kc_strfmt("%s/%s", dir, names[i]);
    if (!out && n == 1) out = kc_strfmt("%s/%s", dir, names[0]);
    if (!out && n > 1) *failed = kc_fail("%s: several global_results-*.csv and none is for val; pass --davis NET=DIR", dir);
    else if (!out && required) *failed = kc_fail("%s: no global_results-*.csv (run kc-davis first)", dir);
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
    return out;
}

static int read_davis(net_scores *ns, const char *path)
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
    int nh = split_csv(l1, h, 16), nv = split_csv(l2, v, 16);
    double *dst[3] = {&ns->jf, &ns->j, &ns->f};
    const char *want[3] = {"J&F-Mean", "J-Mean", "F-Mean"};
    for (int k = 0; k < 3 && rc == 0; k++) {
        int c = 0;
        while (c < nh && strcmp(h[c], want[k])) c++;
        if (c == nh) rc = kc_fail("%s: no %s column (not a DAVIS global results file)", path, want[k]);
        else if (c >= nv) rc = kc_fail("%s: the values line is short", path);
        else rc = parse_num(path, 2, v[c], dst[k]);
    }
    free(data);
    if (rc == 0) {
        ns->has_davis = 1;
        ns->davis_file = kc_strdup(path);
    }
    return rc;
}

static int find_setting(const net_scores *ns, const char *s)
{
    for (int i = 0; i < ns->n; i++)
        if (!strcmp(ns->settings[i], s)) return i;
    return -1;
}

static void macro(kc_buf *b, const char *name, const char *net, const char *metric, const char *value,
                  char ***seen, int *n_seen)
{
    kc_buf m = {0};
    kc_buf_printf(&m, "kc");
    table_macro_word(&m, name);
    if (net) table_macro_word(&m, net);
    kc_buf_printf(&m, "%s", metric);
    for (int i = 0; i < *n_seen; i++)
        if (!strcmp((*seen)[i], m.s)) kc_die_msg("two numbers would get the macro \\%s (rename a network)", m.s);
    *seen = kc_realloc(*seen, (size_t)(*n_seen + 1) * sizeof **seen);
    (*seen)[(*n_seen)++] = kc_strdup(m.s);
    kc_buf_printf(b, "\\newcommand{\\%s}{%s}\n", m.s, value);
    free(m.s);
}

static void free_nets(net_scores *nets, int n)
{
    for (int i = 0; i < n; i++) {
        for (int s = 0; s < nets[i].n; s++) free(nets[i].settings[s]);
        free(nets[i].settings);
        free(nets[i].images);
        free(nets[i].jaccard);
        free(nets[i].corloc);
        free(nets[i].knife);
        free(nets[i].name);
        free(nets[i].dir);
        free(nets[i].davis_file);
    }
    free(nets);
}

int main(int argc, char **argv)
{
    kc_set_prog("kc-table");
    kc_set_cmdline(argc, argv);
    const char *out = NULL, *name = "report", *setting = NULL, *ledger = "ledger.tsv", *only = NULL, *refine = "none";
    char **dirs = kc_calloc((size_t)argc, sizeof *dirs), **davis = kc_calloc((size_t)argc, sizeof *davis);
    char **baselines = kc_calloc((size_t)argc, sizeof *baselines);
    int n_dirs = 0, n_davis = 0, print_best = 0, n_baselines = 0, n_probe = 0;
    char **probe = kc_calloc((size_t)argc, sizeof *probe);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) usage(0);
        if (!strcmp(a, "--print-best")) {
            print_best = 1;
            continue;
        }
        if (a[0] == '-' && a[1] == '-') {
            if (i + 1 >= argc) kc_die_msg("%s needs a value (see --help)", a);
            const char *v = argv[++i];
            if (!strcmp(a, "--out")) out = v;
            else if (!strcmp(a, "--name")) name = v;
            else if (!strcmp(a, "--setting")) setting = v;
            else if (!strcmp(a, "--ledger")) ledger = v;
            else if (!strcmp(a, "--refine")) {
                if (strcmp(v, "none") && strcmp(v, "crf") && strcmp(v, "bs")) kc_die_msg("--refine: none, crf or bs, not '%s'", v);
                refine = v;
            }
            else if (!strcmp(a, "--only")) {
                if (strcmp(v, "sweep") && strcmp(v, "report")) kc_die_msg("--only: 'sweep' or 'report', not '%s'", v);
                only = v;
            }
            else if (!strcmp(a, "--baseline")) baselines[n_baselines++] = (char *)v;
            else if (!strcmp(a, "--davis")) {
                if (!strchr(v, '=') || v[0] == '=') kc_die_msg("--davis wants NET=DIR, got '%s'", v);
                davis[n_davis++] = (char *)v;
            } else if (!strcmp(a, "--probe")) {
                if (!strchr(v, '=') || v[0] == '=') kc_die_msg("--probe wants NET=DIR, got '%s'", v);
                probe[n_probe++] = (char *)v;
            } else kc_die_msg("unknown option %s (see --help)", a);
        } else {
            dirs[n_dirs++] = (char *)a;
        }
    }
    if (print_best) {
        if (setting) kc_die_msg("--print-best chooses the setting: do not pass --setting");
        only = "report";
        if (!out) out = ".";
    }
    if (!out || n_dirs == 0) kc_die_msg("need score folders and --out DIR (see --help)");
    if (!*name || strpbrk(name, "/ \t")) kc_die_msg("--name: bad value '%s'", name);
    /* one run per set of tables NAME.* (other names share the folder); they appear together */
    kc_lock *lock = NULL;
    if (!print_best) {
        if (kc_lock_folder(&lock, out, name) < 0) kc_die();
        kc_outputs_begin();
    }

    net_scores *nets = kc_calloc((size_t)n_dirs, sizeof *nets);
    for (int i = 0; i < n_dirs; i++) {
        net_scores *ns = &nets[i];
        ns->dir = kc_strdup(dirs[i]);
        size_t k = strlen(ns->dir);
        while (k > 1 && ns->dir[k - 1] == '/') ns->dir[--k] = 0;
        char *np = kc_strfmt("%s/network", ns->dir);
        if (kc_exists(np)) {
            uint8_t *d;
            size_t sz;
            if (kc_read_file(np, &d, &sz) < 0) kc_die();
            char *nl = strpbrk((char *)d, "\r\n");
            if (nl) *nl = 0;
            if (!d[0]) kc_die_msg("%s: empty network name", np);
            ns->name = kc_strdup((char *)d);
            free(d);
        } else {
            const char *slash = strrchr(ns->dir, '/');
            ns->name = kc_strdup(slash ? slash + 1 : ns->dir);
        }
        free(np);
        for (int j = 0; j < i; j++)
            if (!strcmp(nets[j].name, ns->name))
                kc_die_msg("%s and %s are both network '%s' (write the name into DIR/network)", nets[j].dir, ns->dir,
                           ns->name);
        if (read_summary(ns) < 0) kc_die();
        read_knife(ns);
    }
    for (int k = 0; k < n_davis; k++) {
        char *eq = strchr(davis[k], '=');
        int i = 0;
        while (i < n_dirs && (strncmp(nets[i].name, davis[k], (size_t)(eq - davis[k])) ||
                              nets[i].name[eq - davis[k]]))
            i++;
        if (i == n_dirs) kc_die_msg("--davis %s: no score folder of network '%.*s'", davis[k], (int)(eq - davis[k]), davis[k]);
        int failed;
        char *f = find_davis(eq + 1, 1, &failed);
        if (!f || read_davis(&nets[i], f) < 0) kc_die();
        free(f);
    }
    for (int k = 0; k < n_probe; k++) {
        char *eq = strchr(probe[k], '=');
        int i = 0;
        while (i < n_dirs && (strncmp(nets[i].name, probe[k], (size_t)(eq - probe[k])) || nets[i].name[eq - probe[k]])) i++;
        if (i == n_dirs) kc_die_msg("--probe %s: no score folder of network '%.*s'", probe[k], (int)(eq - probe[k]), probe[k]);
        if (probe_read_summary(eq + 1, &nets[i].probe_miou) < 0) kc_die();
        nets[i].has_probe = 1;
    }
    for (int k = 0; k < n_baselines; k++) {
        int i = 0;
        while (i < n_dirs && strcmp(nets[i].name, baselines[k])) i++;
        if (i == n_dirs) kc_die_msg("--baseline %s: no score folder of network '%s'", baselines[k], baselines[k]);
        nets[i].baseline = 1;
    }
    int n_contenders = 0; /* networks that choose the setting */
    for (int i = 0; i < n_dirs; i++) /* DINO's attention masks (one attn-mass<m> setting) are always a baseline */
        if (nets[i].n == 1 && !strncmp(nets[i].settings[0], "attn-mass", 9)) nets[i].baseline = 1;
    for (int i = 0; i < n_dirs; i++) n_contenders += !nets[i].baseline;
    int any_davis = 0;
    for (int i = 0; i < n_dirs; i++) {
        if (!nets[i].has_davis) {
            int failed;
            char *f = find_davis(nets[i].dir, 0, &failed);
            if (failed) kc_die();
            if (f && read_davis(&nets[i], f) < 0) kc_die();
            free(f);
        }
        any_davis |= nets[i].has_davis;
    }

    /* the sweep: every setting of any network, sorted */
    char **all = NULL;
    int n_all = 0;
    for (int i = 0; i < n_dirs; i++)
        for (int s = 0; s < nets[i].n; s++) {
            int k = 0;
            while (k < n_all && strcmp(all[k], nets[i].settings[s])) k++;
            if (k == n_all) {
                all = kc_realloc(all, (size_t)(n_all + 1) * sizeof *all);
                all[n_all++] = nets[i].settings[s];
            }
        }
    qsort(all, (size_t)n_all, sizeof *all, cmp_str);
    kc_table sw;
    int *col0 = kc_malloc((size_t)n_dirs * sizeof *col0), sw_cols = 0; /* a network's first column */
    for (int i = 0; i < n_dirs; i++) {
        col0[i] = sw_cols;
        sw_cols += 2 + nets[i].has_knife;
    }
    table_init(&sw, "setting", "Setting", sw_cols, n_all);
    sw.groups = kc_calloc((size_t)sw_cols, sizeof(char *));
    for (int i = 0; i < n_dirs; i++) {
        char *kj = kc_strfmt("%s_jaccard", nets[i].name), *kc = kc_strfmt("%s_corloc", nets[i].name);
        table_col(&sw, col0[i], kj, "Jaccard", 1);
        table_col(&sw, col0[i] + 1, kc, "CorLoc", 1);
        sw.groups[col0[i]] = kc_strdup(nets[i].name);
        sw.groups[col0[i] + 1] = kc_strdup(nets[i].name);
        if (nets[i].has_knife) { /* the share of images whose mask rests on rounding (docs/ties.md) */
            char *kk = kc_strfmt("%s_knife_edge", nets[i].name);
            table_col(&sw, col0[i] + 2, kk, "Knife edge", 0);
            sw.groups[col0[i] + 2] = kc_strdup(nets[i].name);
            free(kk);
        }
        free(kj);
        free(kc);
    }
    for (int r = 0; r < n_all; r++) {
        table_row(&sw, r, all[r]);
        for (int i = 0; i < n_dirs; i++) {
            int s = find_setting(&nets[i], all[r]);
            if (s < 0) continue;
            sw.vals[(size_t)r * sw.n_cols + col0[i]] = nets[i].jaccard[s];
            sw.vals[(size_t)r * sw.n_cols + col0[i] + 1] = nets[i].corloc[s];
            if (nets[i].has_knife) sw.vals[(size_t)r * sw.n_cols + col0[i] + 2] = nets[i].knife[s];
        }
    }
    free(col0);

    int do_sweep = !only || !strcmp(only, "sweep"), do_report = !only || !strcmp(only, "report");
    kc_buf mac = {0};
    char **seen = NULL, val[64];
    int n_seen = 0;
    kc_buf_printf(&mac, "%% generated by keycut kc-table: single numbers (percentages) for \\input\n");
    snprintf(val, sizeof val, "%d", n_all);
    macro(&mac, name, NULL, "Settings", val, &seen, &n_seen);
    if (do_sweep)
        for (int i = 0; i < n_dirs; i++) {
            int bj = 0, bc = 0;
            for (int s = 1; s < nets[i].n; s++) {
                if (nets[i].jaccard[s] > nets[i].jaccard[bj]) bj = s;
                if (nets[i].corloc[s] > nets[i].corloc[bc]) bc = s;
            }
            kc_buf esc = {0};
            table_latex_escape(&esc, nets[i].settings[bj]);
            macro(&mac, name, nets[i].name, "BestJaccardSetting", esc.s, &seen, &n_seen);
            free(esc.s);
            snprintf(val, sizeof val, "%.1f", 100 * nets[i].jaccard[bj]);
            macro(&mac, name, nets[i].name, "BestJaccard", val, &seen, &n_seen);
            snprintf(val, sizeof val, "%.1f", 100 * nets[i].corloc[bc]);
            macro(&mac, name, nets[i].name, "BestCorLoc", val, &seen, &n_seen);
        }

    /* the chosen setting */
    if (do_report && !setting) {
        if (n_all == 1) {
            setting = all[0];
        } else {
            double best = -1;
            for (int r = 0; r < n_all; r++) {
                double sum = 0;
                int have = 0;
                for (int i = 0; i < n_dirs; i++) {
                    int s = find_setting(&nets[i], all[r]);
                    if (s >= 0 && (!nets[i].baseline || n_contenders == 0)) {
                        sum += nets[i].jaccard[s];
                        have++;
                    }
                }
                int want = n_contenders ? n_contenders : n_dirs;
                if (have == want && sum / want > best) {
                    best = sum / want;
                    setting = all[r];
                }
            }
            if (!setting) kc_die_msg("no setting is scored for every network; pass --setting ID");
            if (print_best) {
                printf("%s\n", setting);
                for (int i = 0; i < n_seen; i++) free(seen[i]);
                free(seen);
                free(mac.s);
                table_free(&sw);
                free(all);
                free_nets(nets, n_dirs);
                free(dirs);
                free(davis);
                free(probe);
                free(baselines);
                return 0;
            }
            kc_info("no --setting: reporting %s, the best mean Jaccard (%.4f) over the %d networks%s", setting, best,
                    n_contenders ? n_contenders : n_dirs, n_contenders && n_baselines ? " (baselines left out)" : "");
        }
    }
    int any_probe = 0;
    for (int i = 0; i < n_dirs; i++) any_probe |= nets[i].has_probe;
    const int probe_col = any_davis ? 5 : 2;
    int n_cols = probe_col + any_probe;
    kc_table rp;
    table_init(&rp, "network", "Network", n_cols, n_dirs);
    /* the refinement the VOC masks were scored after, named in the column titles */
    const char *refine_label = !strcmp(refine, "crf") ? " (MaskCut CRF)" : !strcmp(refine, "bs") ? " (TokenCut BS)" : "";
    char jac_title[64], cor_title[64];
    snprintf(jac_title, sizeof jac_title, "VOC Jaccard%s", refine_label);
    snprintf(cor_title, sizeof cor_title, "VOC CorLoc%s", refine_label);
    table_col(&rp, 0, "voc_jaccard", jac_title, 1);
    table_col(&rp, 1, "voc_corloc", cor_title, 1);
    if (any_davis) {
        table_col(&rp, 2, "davis_jf", "DAVIS J&F", 1);
        table_col(&rp, 3, "davis_j", "J-Mean", 1);
        table_col(&rp, 4, "davis_f", "F-Mean", 1);
    }
    if (any_probe) table_col(&rp, probe_col, "probe_miou", "Probe mIoU", 1);
    if (do_report) {
        kc_buf esc = {0};
        table_latex_escape(&esc, setting);
        macro(&mac, name, NULL, "Setting", esc.s, &seen, &n_seen);
        free(esc.s);
        if (strcmp(refine, "none")) macro(&mac, name, NULL, "Refine", refine, &seen, &n_seen);
    }
    for (int i = 0; do_report && i < n_dirs; i++) {
        int s = find_setting(&nets[i], setting);
        if (s < 0 && nets[i].baseline && nets[i].n == 1) {
            s = 0; /* e.g. an attention baseline (BASELINES=attn): its own single setting, VOC Jaccard only */
            kc_info("baseline %s: reported at its only setting %s", nets[i].name, nets[i].settings[0]);
        }
        if (s < 0) kc_die_msg("%s: network %s has no scores for setting %s", nets[i].dir, nets[i].name, setting);
        table_row(&rp, i, nets[i].name);
        rp.baseline[i] = nets[i].baseline;
        double *row = rp.vals + (size_t)i * n_cols;
        row[0] = nets[i].jaccard[s];
        row[1] = nets[i].corloc[s];
        if (nets[i].has_davis) {
            row[2] = nets[i].jf;
            row[3] = nets[i].j;
            row[4] = nets[i].f;
        }
        if (nets[i].has_probe) row[probe_col] = nets[i].probe_miou;
        const char *metric[6] = {"VocJaccard", "VocCorLoc", "DavisJF", "DavisJ", "DavisF", "ProbeMIoU"};
        for (int c = 0; c < n_cols; c++) {
            if (isnan(row[c])) continue;
            snprintf(val, sizeof val, "%.1f", 100 * row[c]);
            macro(&mac, name, nets[i].name, any_probe && c == probe_col ? "ProbeMIoU" : metric[c], val, &seen, &n_seen);
        }
        snprintf(val, sizeof val, "%d", nets[i].images[s]);
        macro(&mac, name, nets[i].name, "VocImages", val, &seen, &n_seen);
    }

    if (kc_mkdirs(out) < 0) kc_die();
    char *sweep_base = do_report ? kc_strfmt("%s-sweep", name) : kc_strdup(name);
    char *mp = kc_strfmt("%s/%s-macros.tex", out, name);
    if ((do_sweep && table_write(out, sweep_base, &sw) < 0) || (do_report && table_write(out, name, &rp) < 0) ||
        kc_write_file_atomic(mp, mac.s, mac.n) < 0 || kc_outputs_commit() < 0)
        kc_die();
    kc_lock_release(lock);
    lock = NULL;
    if (do_sweep) kc_info("wrote the sweep table %s/%s.{csv,md,tex} (%d networks, %d settings)", out, sweep_base, n_dirs, n_all);
    if (do_report) kc_info("wrote the report table %s/%s.{csv,md,tex} at %s", out, name, setting);
    kc_info("wrote %s", mp);

    /* the ledger */
    if (!kc_exists(ledger)) {
        printf("ledger %s: absent (no labels opened through it)\n", ledger);
    } else {
        ledger_entry *es;
        int ne;
        if (ledger_read(ledger, &es, &ne) < 0) kc_die();
        char **sp, **sh;
        int *runs, n_sp;
        ledger_count(es, ne, &sp, &sh, &runs, &n_sp);
        printf("ledger %s: %d kc-score runs opened labels\n", ledger, ne);
        for (int k = 0; k < n_sp; k++) {
            printf("  %-40s sha256 %.12s  opened %d time%s\n", sp[k], sh[k], runs[k], runs[k] == 1 ? "" : "s");
            free(sp[k]);
            free(sh[k]);
        }
        free(sp);
        free(sh);
        free(runs);
        ledger_free(es, ne);
    }

    for (int i = 0; i < n_seen; i++) free(seen[i]);
    free(seen);
    free(mac.s);
    free(sweep_base);
    free(mp);
    table_free(&sw);
    table_free(&rp);
    free(all);
    free_nets(nets, n_dirs);
    free(dirs);
    free(davis);
    free(probe);
    free(baselines);
    return 0;
}
