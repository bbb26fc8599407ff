/* stages/kc-plot.c — the thesis figures (eval/figures.h) from score files, results and masks.
 *
 *   kc-plot sweep      --scores NET=DIR... --out DIR [--chosen ID] [--prefix sweep]
 *   kc-plot curves     --voc NET=DIR... [--davis NET=DIR]... [--probe NET=DIR]... [--nets-ini FILE] [--published FILE]
 *                      [--setting ID] --out DIR [--name curves]
 *   kc-plot voc-grid   --voc ROOT --split SPLIT --setting ID --masks NET=FILE... [--ids A,B,..|--first N]
 *                      --out DIR [--name grid-voc]
 *   kc-plot davis-grid --davis ROOT --sequence SEQ --results NET=DIR... [--frames N] --out DIR
 *                      [--name grid-davis]
 *
 * sweep: DIR is a kc-score folder of the selection split (DIR/summary.csv); writes per network
 * PREFIX-<net>-{jaccard,corloc} and, over all networks, PREFIX-{jaccard,corloc} (the mean over the
 * networks, the quantity the setting is chosen on).  The chosen setting is --chosen, else the
 * setting with the best mean Jaccard over the networks scored for all of them (ties: the first id
 * in strcmp order), the rule of kc-table --print-best.
 * curves: --voc DIR is a network's kc-score folder at the report setting (one setting, or
 * --setting); --davis DIR its DAVIS results folder (global_results-val.csv, J&F-Mean).  A network
 * whose nets.ini section has `run` and `epoch` is a point of that run's curve; any other is a
 * baseline.  --published: an INI with one section per reference line (label, metric =
 * voc_jaccard|voc_corloc|davis_jf, value in percent, source).
 * voc-grid: rows = the ids (or the first N of the split, default 4), columns = the ground truth
 * (SegmentationObject) and each network's masks at --setting, drawn as kc-show draws them.
 * davis-grid: rows = N frames of the sequence evenly spaced (default 4), columns = the ground-truth
 * annotation and each network's propagated labels (DIR/<seq>/<frame>.png).
 * Every figure: DIR/NAME.{pdf,svg,png,csv,tex}; every file written atomically, byte-identical
 * across runs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/dataset.h"
#include "datasets/davis_gt.h"
#include "datasets/voc.h"
#include "eval/figures.h"
#include "eval/overlay.h"
#include "eval/plot.h"
#include "eval/probe.h"
#include "pipeline/cache/cache.h"
#include "pipeline/images/image.h"
#include "pipeline/ini.h"
#include "pipeline/kc.h"
#include "pipeline/lock.h"

static void usage(int status)
{
    fprintf(status ? stderr : stdout,
            "usage: kc-plot sweep      --scores NET=DIR... --out DIR [--chosen ID] [--prefix sweep]\n"
            "       kc-plot curves     --voc NET=DIR... [--davis NET=DIR]... [--probe NET=DIR]... [--nets-ini FILE]\n"
            "                          [--published FILE]\n"
            "                          [--setting ID] --out DIR [--name curves]\n"
            "       kc-plot voc-grid   --voc ROOT --split SPLIT --setting ID --masks NET=FILE...\n"
            "                          [--ids A,B,... | --first N] --out DIR [--name grid-voc]\n"
            "       kc-plot davis-grid --davis ROOT --sequence SEQ --results NET=DIR... [--frames N] --out DIR\n"
            "                          [--name grid-davis]\n"
            "\n"
            "Draws the thesis figures with cairo: each as PDF, SVG, a PNG preview, a pgfplots .tex fragment\n"
            "and the CSV of its data (Okabe-Ito colours with markers and dash patterns: readable in grey\n"
            "and by colour-blind readers).  sweep: Jaccard and CorLoc of every decoder setting on the\n"
            "selection split (small multiples: rule x edges/split panels, tau on x, one line per N; the\n"
            "chosen, TokenCut's and MaskCut's settings marked), per network and the mean over them.\n"
            "curves: VOC Jaccard, CorLoc and DAVIS J&F of each training run (configs/nets.ini `run`,\n"
            "`epoch`) against the epoch, other networks and published numbers as horizontal lines.\n"
            "voc-grid / davis-grid: pictures of what each network found, beside the ground truth.\n"
            "\n"
            "example:\n"
            "  kc-plot sweep --scores dino=work/scores/dino/select --scores selfpatch=work/scores/selfpatch/select \\\n"
            "                --out figures\n"
            "  kc-plot curves --voc run2-e05=work/scores/run2-e05/val-t0.15-bin-mean-corners-n3 \\\n"
            "                 --voc dino=work/scores/dino/val-t0.15-bin-mean-corners-n3 --published configs/published.ini \\\n"
            "                 --out figures\n");
    exit(status);
}

typedef struct named {
    char *name, *path;
} named;

static void parse_named(const char *opt, const char *v, named **list, int *n)
{
    const char *eq = strchr(v, '=');
    if (!eq || eq == v || !eq[1]) kc_die_msg("%s wants NET=PATH, got '%s'", opt, v);
    for (int i = 0; i < *n; i++)
        if (strlen((*list)[i].name) == (size_t)(eq - v) && !strncmp((*list)[i].name, v, (size_t)(eq - v)))
            kc_die_msg("%s: network '%.*s' given twice", opt, (int)(eq - v), v);
    *list = kc_realloc(*list, (size_t)(*n + 1) * sizeof **list);
    (*list)[*n].name = kc_strfmt("%.*s", (int)(eq - v), v);
    (*list)[*n].path = kc_strdup(eq + 1);
    size_t k = strlen((*list)[*n].path);
    while (k > 1 && (*list)[*n].path[k - 1] == '/') (*list)[*n].path[--k] = 0;
    (*n)++;
}

static void free_named(named *l, int n)
{
    for (int i = 0; i < n; i++) {
        free(l[i].name);
        free(l[i].path);
    }
    free(l);
}

static int parse_count(const char *opt, const char *v)
{
    char *end;
    long x = strtol(v, &end, 10);
    if (end == v || *end || x <= 0 || x > 1000) kc_die_msg("%s needs a positive number, got '%s'", opt, v);
    return (int)x;
}

/* ---- summary.csv ---------------------------------------------------------------------------- */

typedef struct summary {
    int n;
    char **settings;
    double *jaccard, *corloc;
} summary;

static void summary_free(summary *s)
{
    for (int i = 0; i < s->n; i++) free(s->settings[i]);
    free(s->settings);
    free(s->jaccard);
    free(s->corloc);
    memset(s, 0, sizeof *s);
}

static int parse_frac(const char *path, int line, const char *s, double *v)
{
    char *end;
    *v = strtod(s, &end);
    if (end == s || *end || !isfinite(*v)) return kc_fail("%s:%d: '%s' is not a number", path, line, s);
    if (*v < 0 || *v > 1) return kc_fail("%s:%d: %s is outside [0, 1]", path, line, s);
    return 0;
}

/* Reads DIR/summary.csv of network net; `hint` says how to make it when it is missing. */
static int read_summary(const char *net, const char *dir, const char *hint, summary *s)
{
    memset(s, 0, sizeof *s);
    char *path = kc_strfmt("%s/summary.csv", dir);
    if (!kc_exists(path)) {
        kc_fail("network %s has no scores yet: %s does not exist (%s)", net, path, hint);
        free(path);
        return -1;
    }
    uint8_t *data;
    size_t size;
    if (kc_read_file(path, &data, &size) < 0) {
        free(path);
        return -1;
    }
    int rc = 0, line = 0;
    char *save = NULL;
    for (char *l = strtok_r((char *)data, "\n", &save); l && rc == 0; l = strtok_r(NULL, "\n", &save)) {
        line++;
        size_t k = strlen(l);
        if (k && l[k - 1] == '\r') l[--k] = 0;
        if (line == 1) {
            if (strcmp(l, "setting,images,jaccard,corloc"))
                rc = kc_fail("%s: header is not 'setting,images,jaccard,corloc' (not a kc-score summary)", path);
            continue;
        }
        char *f[4];
        int nf = 0;
        f[nf++] = l;
        for (char *p = l; *p; p++)
            if (*p == ',') {
                if (nf == 4) {
                    nf = 5;
                    break;
                }
                *p = 0;
                f[nf++] = p + 1;
            }
        if (nf != 4) {
            rc = kc_fail("%s:%d: expected 4 fields", path, line);
            break;
        }
        double j, c;
        if (parse_frac(path, line, f[2], &j) < 0 || parse_frac(path, line, f[3], &c) < 0) {
            rc = -1;
            break;
        }
        for (int i = 0; i < s->n; i++)
            if (!strcmp(s->settings[i], f[0])) rc = kc_fail("%s:%d: setting %s listed twice", path, line, f[0]);
        s->settings = kc_realloc(s->settings, (size_t)(s->n + 1) * sizeof(char *));
        s->jaccard = kc_realloc(s->jaccard, (size_t)(s->n + 1) * sizeof(double));
        s->corloc = kc_realloc(s->corloc, (size_t)(s->n + 1) * sizeof(double));
        s->settings[s->n] = kc_strdup(f[0]);
        s->jaccard[s->n] = j;
        s->corloc[s->n] = c;
        s->n++;
    }
    if (rc == 0 && s->n == 0) rc = kc_fail("%s: no settings (network %s)", path, net);
    free(data);
    free(path);
    if (rc < 0) summary_free(s);
    return rc;
}

static int summary_find(const summary *s, const char *id)
{
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->settings[i], id)) return i;
    return -1;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }
static int cmp_tau(const void *a, const void *b)
{
    double x = atof((const char *)a), y = atof((const char *)b);
    return (x > y) - (x < y);
}

/* ---- sweep ---------------------------------------------------------------------------------- */

static int cmd_sweep(int argc, char **argv)
{
    named *nets = NULL;
    int n_nets = 0;
    const char *out = NULL, *chosen = NULL, *prefix = "sweep";
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) usage(0);
        if (i + 1 >= argc) kc_die_msg("%s needs a value (see --help)", a);
        const char *v = argv[++i];
        if (!strcmp(a, "--scores")) parse_named(a, v, &nets, &n_nets);
        else if (!strcmp(a, "--out")) out = v;
        else if (!strcmp(a, "--chosen")) chosen = v;
        else if (!strcmp(a, "--prefix")) prefix = v;
        else kc_die_msg("unknown option %s (see --help)", a);
    }
    if (!out || !n_nets) kc_die_msg("sweep needs --scores NET=DIR and --out DIR (see --help)");
    if (!*prefix || strpbrk(prefix, "/ \t")) kc_die_msg("--prefix: bad value '%s'", prefix);
    summary *sc = kc_calloc((size_t)n_nets, sizeof *sc);
    for (int i = 0; i < n_nets; i++)
        if (read_summary(nets[i].name, nets[i].path, "run make sweep first", &sc[i]) < 0) kc_die();

    /* all settings, sorted (as kc-table), and the grid's tau values */
    char **all = NULL;
    int n_all = 0;
    for (int i = 0; i < n_nets; i++)
        for (int s = 0; s < sc[i].n; s++) {
            int k = 0;
            while (k < n_all && strcmp(all[k], sc[i].settings[s])) k++;
            if (k == n_all) {
                all = kc_realloc(all, (size_t)(n_all + 1) * sizeof *all);
                all[n_all++] = sc[i].settings[s];
            }
        }
    qsort(all, (size_t)n_all, sizeof *all, cmp_str);
    fig_sweep f = {0};
    int off_grid = 0;
    for (int k = 0; k < n_all; k++) {
        char tt[16];
        int e, sp, r, n;
        if (fig_parse_setting(all[k], tt, &e, &sp, &r, &n) < 0) {
            off_grid++;
            continue;
        }
        int t = 0;
        while (t < f.n_tau && atof(f.tau[t]) != atof(tt)) t++;
        if (t == f.n_tau) {
            if (f.n_tau == FIG_MAX_TAU) kc_die_msg("more than %d tau values in the scores", FIG_MAX_TAU);
            snprintf(f.tau[f.n_tau++], 16, "%s", tt);
        }
    }
    qsort(f.tau, (size_t)f.n_tau, sizeof f.tau[0], cmp_tau);
    if (off_grid) kc_info("%d settings are not of the t<tau>-<edges>-<split>-<rule>-n<N> grid and are not drawn", off_grid);
    if (!f.n_tau) kc_die_msg("%s/summary.csv: no setting of the decoder grid to draw", nets[0].path);

    /* the chosen setting: --chosen, else kc-table's rule */
    if (!chosen) {
        double best = -1;
        for (int k = 0; k < n_all; k++) {
            double sum = 0;
            int have = 0;
            for (int i = 0; i < n_nets; i++) {
                int s = summary_find(&sc[i], all[k]);
                if (s >= 0) {
                    sum += sc[i].jaccard[s];
                    have++;
                }
            }
            if (have == n_nets && sum / n_nets > best) {
                best = sum / n_nets;
                chosen = all[k];
            }
        }
    }
    /* one run per figure (its files appear together at the end) */
    kc_lock *lock;
    if (kc_lock_folder(&lock, out, prefix) < 0) kc_die();
    kc_outputs_begin();
    int nv = f.n_tau * FIG_EDGES * FIG_SPLITS * FIG_RULES * FIG_NS;
    f.v = kc_malloc(sizeof(double) * (size_t)nv);
    f.chosen = chosen;
    const char *metric_name[2] = {"jaccard", "corloc"}, *metric_label[2] = {"Jaccard", "CorLoc"};
    for (int m = 0; m < 2; m++) {
        f.metric = metric_label[m];
        for (int i = 0; i <= n_nets; i++) { /* i == n_nets: the mean over the networks */
            for (int k = 0; k < nv; k++) f.v[k] = NAN;
            for (int k = 0; k < n_all; k++) {
                char tt[16];
                int e, sp, r, n;
                if (fig_parse_setting(all[k], tt, &e, &sp, &r, &n) < 0) continue;
                int t = 0;
                while (atof(f.tau[t]) != atof(tt)) t++;
                double sum = 0;
                int have = 0;
                for (int j = (i < n_nets ? i : 0); j < (i < n_nets ? i + 1 : n_nets); j++) {
                    int s = summary_find(&sc[j], all[k]);
                    if (s >= 0) {
                        sum += m ? sc[j].corloc[s] : sc[j].jaccard[s];
                        have++;
                    }
                }
                if (i < n_nets && have) f.v[fig_sweep_at(t, e, sp, r, n)] = sum;
                if (i == n_nets && have == n_nets) f.v[fig_sweep_at(t, e, sp, r, n)] = sum / n_nets;
            }
            char *title = i < n_nets ? kc_strdup(nets[i].name)
                                     : kc_strfmt("mean of %d network%s", n_nets, n_nets == 1 ? "" : "s");
            char *base = i < n_nets ? kc_strfmt("%s-%s-%s", prefix, nets[i].name, metric_name[m])
                                    : kc_strfmt("%s-%s", prefix, metric_name[m]);
            f.title = title;
            if (fig_sweep_write(out, base, &f) < 0) kc_die();
            free(title);
            free(base);
        }
    }
    if (kc_outputs_commit() < 0) kc_die();
    kc_lock_release(lock);
    kc_info("wrote the sweep figures of %d network%s to %s/ (%s-*.{pdf,svg,png,tex,csv}); chosen setting %s", n_nets,
            n_nets == 1 ? "" : "s", out, prefix, chosen ? chosen : "(none)");
    free(f.v);
    free(all);
    for (int i = 0; i < n_nets; i++) summary_free(&sc[i]);
    free(sc);
    free_named(nets, n_nets);
    return 0;
}

/* ---- curves --------------------------------------------------------------------------------- */

static const ini_entry *ini_entry_of(const ini_file *f, const char *sec, const char *key)
{
    for (int i = 0; i < f->n; i++)
        if (!strcmp(f->e[i].section, sec) && !strcmp(f->e[i].key, key)) return &f->e[i];
    return NULL;
}

static int read_davis_jf(const char *net, const char *dir, double *jf)
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
            for (char *p = strtok(l1, ",\r"); p; p = strtok(NULL, ",\r"), col++)
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

static int cmd_curves(int argc, char **argv)
{
    named *voc = NULL, *davis = NULL, *probe = NULL;
    int n_voc = 0, n_davis = 0, n_probe = 0;
    const char *out = NULL, *nets_ini = "configs/nets.ini", *published = NULL, *setting = NULL, *name = "curves";
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) usage(0);
        if (i + 1 >= argc) kc_die_msg("%s needs a value (see --help)", a);
        const char *v = argv[++i];
        if (!strcmp(a, "--voc")) parse_named(a, v, &voc, &n_voc);
        else if (!strcmp(a, "--davis")) parse_named(a, v, &davis, &n_davis);
        else if (!strcmp(a, "--probe")) parse_named(a, v, &probe, &n_probe);
        else if (!strcmp(a, "--out")) out = v;
        else if (!strcmp(a, "--nets-ini")) nets_ini = v;
        else if (!strcmp(a, "--published")) published = v;
        else if (!strcmp(a, "--setting")) setting = v;
        else if (!strcmp(a, "--name")) name = v;
        else kc_die_msg("unknown option %s (see --help)", a);
    }
    if (!out || !n_voc) kc_die_msg("curves needs --voc NET=DIR and --out DIR (see --help)");
    if (!*name || strpbrk(name, "/ \t")) kc_die_msg("--name: bad value '%s'", name);
    ini_file ini;
    if (!kc_exists(nets_ini)) kc_die_msg("%s: no such file (the networks' run and epoch come from it)", nets_ini);
    if (ini_load(&ini, nets_ini) < 0) kc_die();
    fig_curves f = {0};
    f.n = n_voc;
    f.points = kc_calloc((size_t)n_voc, sizeof *f.points);
    const char *used_setting = setting;
    for (int i = 0; i < n_voc; i++) {
        fig_point *p = &f.points[i];
        p->network = voc[i].name;
        const ini_entry *run = ini_entry_of(&ini, voc[i].name, "run"), *ep = ini_entry_of(&ini, voc[i].name, "epoch");
        if (run && !ep) kc_die_msg("%s:%d: network %s: run '%s' needs an epoch", nets_ini, run->line, voc[i].name, run->value);
        if (ep && !run) kc_die_msg("%s:%d: network %s: an epoch but no run", nets_ini, ep->line, voc[i].name);
        if (run) {
            char *end;
            p->epoch = strtod(ep->value, &end);
            if (end == ep->value || *end || !isfinite(p->epoch))
                kc_die_msg("%s:%d: network %s: epoch '%s' is not a number", nets_ini, ep->line, voc[i].name, ep->value);
            if (!*run->value) kc_die_msg("%s:%d: network %s: empty run name", nets_ini, run->line, voc[i].name);
            p->run = run->value;
            for (int j = 0; j < i; j++)
                if (f.points[j].run && !strcmp(f.points[j].run, p->run) && f.points[j].epoch == p->epoch)
                    kc_die_msg("%s:%d: networks %s and %s of run %s both have epoch %s", nets_ini, ep->line,
                               f.points[j].network, voc[i].name, p->run, ep->value);
        }
    }
    for (int i = 0; i < n_voc; i++) {
        fig_point *p = &f.points[i];
        for (int m = 0; m < FIG_N_METRICS; m++) p->v[m] = NAN;
        summary s;
        if (read_summary(voc[i].name, voc[i].path, "run make report first", &s) < 0) kc_die();
        int k = -1;
        if (setting) {
            k = summary_find(&s, setting);
            if (k < 0) kc_die_msg("%s/summary.csv: network %s has no scores for setting %s", voc[i].path, voc[i].name, setting);
        } else if (s.n == 1) {
            k = 0;
            if (!used_setting) used_setting = kc_strdup(s.settings[0]);
            else if (strcmp(used_setting, s.settings[0]))
                kc_die_msg("%s/summary.csv: network %s is scored at %s, another network at %s (pass --setting)",
                           voc[i].path, voc[i].name, s.settings[0], used_setting);
        } else {
            kc_die_msg("%s/summary.csv: network %s has %d settings; pass --setting ID", voc[i].path, voc[i].name, s.n);
        }
        p->v[FIG_VOC_JACCARD] = s.jaccard[k];
        p->v[FIG_VOC_CORLOC] = s.corloc[k];
        summary_free(&s);
    }
    for (int d = 0; d < n_davis; d++) {
        int i = 0;
        while (i < n_voc && strcmp(voc[i].name, davis[d].name)) i++;
        if (i == n_voc) kc_die_msg("--davis %s=%s: no --voc scores of network %s", davis[d].name, davis[d].path, davis[d].name);
        if (read_davis_jf(davis[d].name, davis[d].path, &f.points[i].v[FIG_DAVIS_JF]) < 0) kc_die();
    }
    for (int d = 0; d < n_probe; d++) {
        int i = 0;
        while (i < n_voc && strcmp(voc[i].name, probe[d].name)) i++;
        if (i == n_voc) kc_die_msg("--probe %s=%s: no --voc scores of network %s", probe[d].name, probe[d].path, probe[d].name);
        if (probe_read_summary(probe[d].path, &f.points[i].v[FIG_PROBE_MIOU]) < 0) {
            kc_fail_prefix("network %s (run make probe first?)", probe[d].name);
            kc_die();
        }
    }
    ini_file pub = {0};
    if (published) {
        if (ini_load(&pub, published) < 0) kc_die();
        char **secs = NULL;
        int n_secs = 0;
        for (int i = 0; i < pub.n; i++) {
            int k = 0;
            while (k < n_secs && strcmp(secs[k], pub.e[i].section)) k++;
            if (k == n_secs && *pub.e[i].section) {
                secs = kc_realloc(secs, (size_t)(n_secs + 1) * sizeof *secs);
                secs[n_secs++] = pub.e[i].section;
            }
        }
        f.refs = kc_calloc((size_t)n_secs + 1, sizeof *f.refs);
        for (int k = 0; k < n_secs; k++) {
            const ini_entry *lab = ini_entry_of(&pub, secs[k], "label"), *met = ini_entry_of(&pub, secs[k], "metric"),
                            *val = ini_entry_of(&pub, secs[k], "value");
            if (!lab || !met || !val) kc_die_msg("%s: [%s] needs label, metric and value", published, secs[k]);
            fig_reference *r = &f.refs[f.n_refs++];
            r->label = lab->value;
            r->metric = -1;
            for (int m = 0; m < FIG_N_METRICS; m++)
                if (!strcmp(met->value, fig_metric_key[m])) r->metric = m;
            if (r->metric < 0)
                kc_die_msg("%s:%d: metric '%s' is not voc_jaccard, voc_corloc, davis_jf or probe_miou", published, met->line,
                           met->value);
            char *end;
            r->value = strtod(val->value, &end);
            if (end == val->value || *end || !(r->value >= 0 && r->value <= 100))
                kc_die_msg("%s:%d: value '%s' is not a percentage", published, val->line, val->value);
        }
        free(secs);
    }
    char *sub = used_setting ? kc_strfmt("VOC val at %s", used_setting) : NULL;
    f.subtitle = sub;
    kc_lock *lock;
    if (kc_lock_folder(&lock, out, name) < 0) kc_die();
    kc_outputs_begin();
    if (fig_curves_write(out, name, &f) < 0 || kc_outputs_commit() < 0) kc_die();
    kc_lock_release(lock);
    kc_info("wrote %s/%s.{pdf,svg,png,tex,csv} (%d networks, %d reference lines)", out, name, n_voc, f.n_refs);
    if (used_setting != setting) free((char *)used_setting);
    free(sub);
    free(f.points);
    free(f.refs);
    ini_free(&ini);
    if (published) ini_free(&pub);
    free_named(voc, n_voc);
    free_named(davis, n_davis);
    free_named(probe, n_probe);
    return 0;
}

/* ---- picture grids -------------------------------------------------------------------------- */

static void split_ids(const char *v, char ***ids, int *n)
{
    char *copy = kc_strdup(v);
    *ids = NULL;
    *n = 0;
    char *save = NULL;
    for (char *p = strtok_r(copy, ", ", &save); p; p = strtok_r(NULL, ", ", &save)) {
        *ids = kc_realloc(*ids, (size_t)(*n + 1) * sizeof **ids);
        (*ids)[(*n)++] = kc_strdup(p);
    }
    free(copy);
}

/* The masks of one image from a masks cache, mapped to its pixels (W x H). */
static int cache_labels(const cache_reader *r, const char *setting, const char *id, int W, int H, uint8_t **labels)
{
    int ix = -1;
    for (int i = 0; i < r->index.n && ix < 0; i++)
        if (!strcmp(r->index.ids[i], id)) ix = i;
    if (ix < 0) return kc_fail("%s: no image %s in its index", r->path, id);
    if (r->index.size[2 * ix] != H || r->index.size[2 * ix + 1] != W)
        return kc_fail("%s: image %s was %dx%d when decoded, the dataset's is %dx%d", r->path, id,
                       r->index.size[2 * ix + 1], r->index.size[2 * ix], W, H);
    const char *pol_name = cache_attr(r, "policy"), *ps = cache_attr(r, "patch");
    kc_policy pol;
    if (!pol_name) return kc_fail("%s: no 'policy' attribute (cannot map the grid back to pixels)", r->path);
    if (policy_parse(pol_name, &pol) < 0) return kc_fail_prefix("%s", r->path);
    int patch = ps ? atoi(ps) : 0;
    if (pol == POLICY_NATIVE16 && patch <= 0) return kc_fail("%s: native16 masks without a 'patch' attribute", r->path);
    char *dset = kc_strfmt("/masks/%s/%s", setting, id);
    uint8_t *grid = NULL;
    int gh, gw, rc = 0;
    if (!cache_has(r, dset)) rc = kc_fail("%s: no mask %s (was setting %s decoded?)", r->path, dset, setting);
    else if (cache_read_u8(r, dset, &grid, &gh, &gw) < 0) rc = -1;
    else if (cache_attr(r, "refine")) { /* kc-refine's pixel masks, at the image's size */
        if (gh != H || gw != W) {
            rc = kc_fail("%s: %s is %dx%d, but its image is %dx%d (a refined mask is at the image's size)", r->path,
                         dset, gw, gh, W, H);
        } else {
            *labels = grid;
            grid = NULL;
        }
    } else {
        *labels = kc_malloc((size_t)W * H);
        if (overlay_grid_to_pixels(grid, gh, gw, pol, patch, W, H, *labels) < 0) {
            rc = kc_fail_prefix("%s: %s", r->path, dset);
            free(*labels);
            *labels = NULL;
        }
    }
    free(grid);
    free(dset);
    return rc;
}

static void overlay_cell(const kc_image *im, const uint8_t *labels, kc_image *cell)
{
    cell->w = im->w;
    cell->h = im->h;
    cell->rgb = kc_malloc((size_t)im->w * im->h * 3);
    memcpy(cell->rgb, im->rgb, (size_t)im->w * im->h * 3);
    if (labels) overlay_draw_masks(cell, labels, 0.45f);
}

static int cmd_voc_grid(int argc, char **argv)
{
    named *masks = NULL;
    int n_masks = 0, first = 4;
    const char *root = NULL, *split = NULL, *setting = NULL, *ids_opt = NULL, *out = NULL, *name = "grid-voc";
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) usage(0);
        if (i + 1 >= argc) kc_die_msg("%s needs a value (see --help)", a);
        const char *v = argv[++i];
        if (!strcmp(a, "--masks")) parse_named(a, v, &masks, &n_masks);
        else if (!strcmp(a, "--voc")) root = v;
        else if (!strcmp(a, "--split")) split = v;
        else if (!strcmp(a, "--setting")) setting = v;
        else if (!strcmp(a, "--ids")) ids_opt = v;
        else if (!strcmp(a, "--first")) first = parse_count(a, v);
        else if (!strcmp(a, "--out")) out = v;
        else if (!strcmp(a, "--name")) name = v;
        else kc_die_msg("unknown option %s (see --help)", a);
    }
    if (!root || !split || !setting || !n_masks || !out)
        kc_die_msg("voc-grid needs --voc, --split, --setting, --masks NET=FILE and --out (see --help)");
    if (!*name || strpbrk(name, "/ \t")) kc_die_msg("--name: bad value '%s'", name);
    char *spec = kc_strfmt("voc:%s:%s", root, split);
    kc_dataset ds;
    if (dataset_open(&ds, spec) < 0) kc_die();
    char **ids;
    int n_ids;
    if (ids_opt) {
        split_ids(ids_opt, &ids, &n_ids);
        if (!n_ids) kc_die_msg("--ids: no id in '%s'", ids_opt);
    } else {
        n_ids = first < ds.n ? first : ds.n;
        ids = kc_malloc(sizeof(char *) * (size_t)n_ids);
        for (int i = 0; i < n_ids; i++) ids[i] = kc_strdup(ds.ids[i]);
    }
    cache_reader *rd = kc_calloc((size_t)n_masks, sizeof *rd);
    for (int k = 0; k < n_masks; k++) {
        if (!kc_exists(masks[k].path))
            kc_die_msg("network %s has no masks yet: %s does not exist (run make report first)", masks[k].name, masks[k].path);
        if (cache_open(&rd[k], masks[k].path, CACHE_FORMAT_MASKS) < 0) kc_die();
    }
    voc_init();
    int n_cols = n_masks + 1;
    kc_image *cells = kc_calloc((size_t)n_ids * n_cols, sizeof *cells);
    const char **cols = kc_malloc(sizeof(char *) * (size_t)n_cols);
    cols[0] = "ground truth";
    for (int k = 0; k < n_masks; k++) cols[k + 1] = masks[k].name;
    kc_buf csv = {0};
    kc_buf_printf(&csv, "row,id,column,source\n");
    for (int i = 0; i < n_ids; i++) {
        int j = 0;
        while (j < ds.n && strcmp(ds.ids[j], ids[i])) j++;
        if (j == ds.n) kc_die_msg("--ids: %s is not in %s", ids[i], spec);
        kc_image im;
        if (image_load_rgb(ds.paths[j], &im) < 0) kc_die();
        voc_gt gt;
        if (voc_gt_load(root, ids[i], 0, &gt) < 0) kc_die();
        if (gt.w != im.w || gt.h != im.h) kc_die_msg("%s: %dx%d, its ground truth %dx%d", ds.paths[j], im.w, im.h, gt.w, gt.h);
        for (size_t p = 0; p < (size_t)gt.w * gt.h; p++)
            if (gt.object[p] == 255) gt.object[p] = 0;
        overlay_cell(&im, gt.object, &cells[(size_t)i * n_cols]);
        kc_buf_printf(&csv, "%d,%s,ground truth,%s/SegmentationObject/%s.png\n", i + 1, ids[i], root, ids[i]);
        voc_gt_free(&gt);
        for (int k = 0; k < n_masks; k++) {
            uint8_t *lab;
            if (cache_labels(&rd[k], setting, ids[i], im.w, im.h, &lab) < 0) kc_die();
            overlay_cell(&im, lab, &cells[(size_t)i * n_cols + k + 1]);
            kc_buf_printf(&csv, "%d,%s,%s,%s:/masks/%s/%s\n", i + 1, ids[i], masks[k].name, masks[k].path, setting, ids[i]);
            free(lab);
        }
        image_free(&im);
    }
    char *caption = kc_strfmt("VOC images (rows) x ground truth and the networks' masks at %s (columns)", setting);
    fig_grid g = {n_ids, n_cols, (const char *const *)ids, cols, cells, csv.s, caption};
    kc_lock *lock;
    if (kc_lock_folder(&lock, out, name) < 0) kc_die();
    kc_outputs_begin();
    if (fig_grid_write(out, name, &g) < 0 || kc_outputs_commit() < 0) kc_die();
    kc_lock_release(lock);
    kc_info("wrote %s/%s.{pdf,svg,png,tex,csv}: %d images x %d networks at %s", out, name, n_ids, n_masks, setting);
    for (int i = 0; i < n_ids * n_cols; i++) image_free(&cells[i]);
    free(cells);
    free(cols);
    free(caption);
    free(csv.s);
    for (int k = 0; k < n_masks; k++) cache_close(&rd[k]);
    free(rd);
    for (int i = 0; i < n_ids; i++) free(ids[i]);
    free(ids);
    dataset_free(&ds);
    free(spec);
    free_named(masks, n_masks);
    return 0;
}

static int cmd_davis_grid(int argc, char **argv)
{
    named *res = NULL;
    int n_res = 0, n_frames = 4;
    const char *root = NULL, *seq = NULL, *out = NULL, *name = "grid-davis";
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) usage(0);
        if (i + 1 >= argc) kc_die_msg("%s needs a value (see --help)", a);
        const char *v = argv[++i];
        if (!strcmp(a, "--results")) parse_named(a, v, &res, &n_res);
        else if (!strcmp(a, "--davis")) root = v;
        else if (!strcmp(a, "--sequence")) seq = v;
        else if (!strcmp(a, "--frames")) n_frames = parse_count(a, v);
        else if (!strcmp(a, "--out")) out = v;
        else if (!strcmp(a, "--name")) name = v;
        else kc_die_msg("unknown option %s (see --help)", a);
    }
    if (!root || !seq || !n_res || !out)
        kc_die_msg("davis-grid needs --davis, --sequence, --results NET=DIR and --out (see --help)");
    if (!*name || strpbrk(name, "/ \t")) kc_die_msg("--name: bad value '%s'", name);
    char *imdir = davis_image_dir(root, seq), *andir = davis_annotation_dir(root, seq);
    char **frames;
    int n_all;
    if (davis_list_frames(imdir, ".jpg", &frames, &n_all) < 0) kc_die();
    if (n_frames > n_all) n_frames = n_all;
    int n_cols = n_res + 1;
    kc_image *cells = kc_calloc((size_t)n_frames * n_cols, sizeof *cells);
    const char **cols = kc_malloc(sizeof(char *) * (size_t)n_cols), **rows = kc_malloc(sizeof(char *) * (size_t)n_frames);
    char **row_names = kc_malloc(sizeof(char *) * (size_t)n_frames);
    cols[0] = "ground truth";
    for (int k = 0; k < n_res; k++) cols[k + 1] = res[k].name;
    kc_buf csv = {0};
    kc_buf_printf(&csv, "row,frame,column,source\n");
    for (int i = 0; i < n_frames; i++) {
        int fi = n_frames == 1 ? 0 : (int)(((long)i * (n_all - 1) * 2 + (n_frames - 1)) / (2L * (n_frames - 1)));
        row_names[i] = kc_strfmt("%s/%s", seq, frames[fi]);
        rows[i] = row_names[i];
        char *jpg = kc_strfmt("%s/%s.jpg", imdir, frames[fi]);
        kc_image im;
        if (image_load_rgb(jpg, &im) < 0) kc_die();
        for (int k = -1; k < n_res; k++) {
            char *png = k < 0 ? kc_strfmt("%s/%s.png", andir, frames[fi]) : kc_strfmt("%s/%s/%s.png", res[k].path, seq, frames[fi]);
            uint8_t *lab = NULL;
            int w, h;
            if (k >= 0 && !kc_exists(png))
                kc_die_msg("network %s has no propagated result %s (run make davis first)", res[k].name, png);
            if (kc_exists(png)) {
                if (davis_read_labels(png, &w, &h, &lab) < 0) kc_die();
                if (w != im.w || h != im.h) kc_die_msg("%s: %dx%d, but the frame %s is %dx%d", png, w, h, jpg, im.w, im.h);
                for (size_t p = 0; p < (size_t)w * h; p++)
                    if (lab[p] == 255) lab[p] = 0;
            }
            overlay_cell(&im, lab, &cells[(size_t)i * n_cols + k + 1]);
            kc_buf_printf(&csv, "%d,%s,%s,%s\n", i + 1, row_names[i], k < 0 ? "ground truth" : res[k].name,
                          lab ? png : "");
            free(lab);
            free(png);
        }
        image_free(&im);
        free(jpg);
    }
    char *caption = kc_strfmt("DAVIS frames of %s (rows) x ground truth and the networks' propagated labels (columns)", seq);
    fig_grid g = {n_frames, n_cols, rows, cols, cells, csv.s, caption};
    kc_lock *lock;
    if (kc_lock_folder(&lock, out, name) < 0) kc_die();
    kc_outputs_begin();
    if (fig_grid_write(out, name, &g) < 0 || kc_outputs_commit() < 0) kc_die();
    kc_lock_release(lock);
    kc_info("wrote %s/%s.{pdf,svg,png,tex,csv}: %d frames of %s x %d networks", out, name, n_frames, seq, n_res);
    for (int i = 0; i < n_frames * n_cols; i++) image_free(&cells[i]);
    for (int i = 0; i < n_frames; i++) free(row_names[i]);
    free(row_names);
    free(rows);
    free(cells);
    free(cols);
    free(caption);
    free(csv.s);
    davis_free_names(frames, n_all);
    free(imdir);
    free(andir);
    free_named(res, n_res);
    return 0;
}

int main(int argc, char **argv)
{
    kc_set_prog("kc-plot");
    kc_set_cmdline(argc, argv);
    if (argc < 2) usage(1);
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h")) usage(0);
    double t0 = kc_now();
    int rc;
    if (!strcmp(cmd, "sweep")) rc = cmd_sweep(argc - 2, argv + 2);
    else if (!strcmp(cmd, "curves")) rc = cmd_curves(argc - 2, argv + 2);
    else if (!strcmp(cmd, "voc-grid")) rc = cmd_voc_grid(argc - 2, argv + 2);
    else if (!strcmp(cmd, "davis-grid")) rc = cmd_davis_grid(argc - 2, argv + 2);
    else kc_die_msg("unknown figure '%s': sweep, curves, voc-grid or davis-grid (see --help)", cmd);
    plot_release();
    kc_info("done in %.2f s", kc_now() - t0);
    return rc;
}
