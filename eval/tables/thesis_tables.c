/* eval/tables/thesis_tables.c — the sweep and report tables, their macros.  See thesis_tables.h. */
#include "eval/tables/thesis_tables.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/davis/davis_results.h"
#include "eval/voc/ledger.h"
#include "eval/probe/probe.h"
#include "eval/voc/score_summary.h"
#include "eval/tables/setting_choice.h"
#include "eval/tables/table.h"
#include "eval/tables/table_about.h"
#include "pipeline/kc.h"
#include "pipeline/lock.h"

typedef struct net_scores {
    char *name, *dir;
    score_summary s;
    int has_davis;
    double jf, j, f;       /* at full precision (the JSON of kc-davis) */
    char *davis_split;     /* the split of the results file read */
    int has_probe; /* the linear probe's mIoU (kc-probe eval's summary.csv) */
    double probe_miou;
    int baseline;
} net_scores;

/* NAME-macros.tex: one \newcommand per number; two numbers may not share a name. */
typedef struct macros {
    const char *name; /* the tables' NAME */
    kc_buf text;
    char **seen;
    int n_seen;
} macros;

static int macro(macros *m, const char *net, const char *metric, const char *value)
{
    kc_buf id = {0};
    kc_buf_printf(&id, "kc");
    table_macro_word(&id, m->name);
    if (net) table_macro_word(&id, net);
    kc_buf_printf(&id, "%s", metric);
    for (int i = 0; i < m->n_seen; i++)
        if (!strcmp(m->seen[i], id.s)) {
            int rc = kc_fail("two numbers would get the macro \\%s (rename a network)", id.s);
            free(id.s);
            return rc;
        }
    m->seen = kc_realloc(m->seen, (size_t)(m->n_seen + 1) * sizeof *m->seen);
    m->seen[m->n_seen++] = id.s;
    kc_buf_printf(&m->text, "\\newcommand{\\%s}{%s}\n", id.s, value);
    return 0;
}

static int macro_pct(macros *m, const char *net, const char *metric, double v)
{
    char val[64];
    snprintf(val, sizeof val, "%.1f", 100 * v);
    return macro(m, net, metric, val);
}

static int macro_tex(macros *m, const char *net, const char *metric, const char *text)
{
    kc_buf esc = {0};
    table_latex_escape(&esc, text);
    int rc = macro(m, net, metric, esc.s);
    free(esc.s);
    return rc;
}

/* The network's name: the first line of DIR/network, else the folder's name. */
static int net_name(net_scores *ns)
{
    char *np = kc_strfmt("%s/network", ns->dir);
    int rc = 0;
    if (kc_exists(np)) {
        uint8_t *d;
        size_t sz;
        if (kc_read_file(np, &d, &sz) < 0) rc = -1;
        else {
            char *nl = strpbrk((char *)d, "\r\n");
            if (nl) *nl = 0;
            if (!d[0]) rc = kc_fail("%s: empty network name", np);
            else ns->name = kc_strdup((char *)d);
            free(d);
        }
    } else {
        const char *slash = strrchr(ns->dir, '/');
        ns->name = kc_strdup(slash ? slash + 1 : ns->dir);
    }
    free(np);
    return rc;
}

static int load_nets(const thesis_tables_opts *o, net_scores *nets)
{
    for (int i = 0; i < o->n_dirs; i++) {
        net_scores *ns = &nets[i];
        ns->dir = kc_strdup(o->dirs[i]);
        size_t k = strlen(ns->dir);
        while (k > 1 && ns->dir[k - 1] == '/') ns->dir[--k] = 0;
        KC_TRY(net_name(ns));
        for (int j = 0; j < i; j++)
            if (!strcmp(nets[j].name, ns->name))
                return kc_fail("%s and %s are both network '%s' (write the name into DIR/network)", nets[j].dir, ns->dir,
                               ns->name);
        KC_TRY(score_summary_read(ns->dir, NULL, NULL, &ns->s));
        score_summary_read_knife(ns->dir, &ns->s);
    }
    return 0;
}

/* The network named by the first len characters of name, or -1. */
static int net_index(const net_scores *nets, int n, const char *name, size_t len)
{
    for (int i = 0; i < n; i++)
        if (strlen(nets[i].name) == len && !strncmp(nets[i].name, name, len)) return i;
    return -1;
}

/* The DAVIS results file f (or NULL) of network ns, at full precision. */
static int read_davis(net_scores *ns, const char *f)
{
    if (!f) return 0;
    KC_TRY(davis_results_read_full(f, &ns->jf, &ns->j, &ns->f));
    ns->has_davis = 1;
    ns->davis_split = davis_results_split(f);
    return 0;
}

/* --davis NET=DIR, --probe NET=DIR, --baseline NET, then the DAVIS results in the score folders;
 * all of one split. */
static int attach(const thesis_tables_opts *o, net_scores *nets)
{
    int n = o->n_dirs, failed;
    for (int k = 0; k < o->n_davis; k++) {
        const char *v = o->davis[k], *eq = strchr(v, '=');
        int i = net_index(nets, n, v, (size_t)(eq - v));
        if (i < 0) return kc_fail("--davis %s: no score folder of network '%.*s'", v, (int)(eq - v), v);
        if (nets[i].has_davis) return kc_fail("--davis %s: network '%s' is given twice", v, nets[i].name);
        char *f = davis_results_find(eq + 1, o->davis_split, 1, &failed);
        int rc = f ? read_davis(&nets[i], f) : -1;
        free(f);
        KC_TRY(rc);
    }
    for (int k = 0; k < o->n_probe; k++) {
        const char *v = o->probe[k], *eq = strchr(v, '=');
        int i = net_index(nets, n, v, (size_t)(eq - v));
        if (i < 0) return kc_fail("--probe %s: no score folder of network '%.*s'", v, (int)(eq - v), v);
        KC_TRY(probe_read_summary(eq + 1, &nets[i].probe_miou));
        nets[i].has_probe = 1;
    }
    for (int k = 0; k < o->n_baselines; k++) {
        int i = net_index(nets, n, o->baselines[k], strlen(o->baselines[k]));
        if (i < 0) return kc_fail("--baseline %s: no score folder of network '%s'", o->baselines[k], o->baselines[k]);
        nets[i].baseline = 1;
    }
    for (int i = 0; i < n; i++) /* DINO's attention masks (one attn-mass<m> setting) are always a baseline */
        if (nets[i].s.n == 1 && !strncmp(nets[i].s.settings[0], "attn-mass", 9)) nets[i].baseline = 1;
    for (int i = 0; i < n; i++) {
        if (nets[i].has_davis) continue;
        char *f = davis_results_find(nets[i].dir, o->davis_split, 0, &failed);
        int rc = failed ? -1 : read_davis(&nets[i], f);
        free(f);
        KC_TRY(rc);
    }
    for (int i = 0, first = -1; i < n; i++) {
        if (!nets[i].has_davis) continue;
        if (first < 0) first = i;
        else if (strcmp(nets[i].davis_split, nets[first].davis_split))
            return kc_fail("the DAVIS results of %s are of split %s but those of %s of %s; pass --davis-split NAME",
                           nets[first].name, nets[first].davis_split, nets[i].name, nets[i].davis_split);
    }
    return 0;
}

/* The networks in the order given, with their baseline flags (the sweep's column groups). */
static char *sweep_about(const thesis_tables_opts *o, const net_scores *nets, int n_settings)
{
    int n = o->n_dirs;
    const char **names = kc_calloc((size_t)n + 1, sizeof *names);
    int *base = kc_calloc((size_t)n + 1, sizeof *base);
    for (int i = 0; i < n; i++) {
        names[i] = nets[i].name;
        base[i] = nets[i].baseline;
    }
    table_about a = {.sweep = 1, .select_list = o->select_list, .voc_root = o->voc_root, .n_settings = n_settings,
                     .nets = names, .baseline = base, .n_nets = n};
    char *line = table_about_line(&a);
    free(names);
    free(base);
    return line;
}

/* The sweep: one row per setting of all[], per network Jaccard, CorLoc (and Knife edge). */
static void sweep_table(const net_scores *nets, int n, char *const *all, int n_all, kc_table *sw)
{
    int *col0 = kc_malloc((size_t)n * sizeof *col0), n_cols = 0; /* a network's first column */
    for (int i = 0; i < n; i++) {
        col0[i] = n_cols;
        n_cols += 2 + nets[i].s.has_knife;
    }
    table_init(sw, "setting", "Setting", n_cols, n_all);
    sw->groups = kc_calloc((size_t)n_cols, sizeof(char *));
    for (int i = 0; i < n; i++) {
        static const char *const key[3] = {"jaccard", "corloc", "knife_edge"}, *const label[3] = {"Jaccard", "CorLoc",
                                                                                                  "Knife edge"};
        for (int c = 0; c < 2 + nets[i].s.has_knife; c++) { /* knife edge: docs/ties.md */
            char *k = kc_strfmt("%s_%s", nets[i].name, key[c]);
            table_col(sw, col0[i] + c, k, label[c], c < 2);
            sw->groups[col0[i] + c] = kc_strdup(nets[i].name);
            free(k);
        }
    }
    for (int r = 0; r < n_all; r++) {
        table_row(sw, r, all[r]);
        for (int i = 0; i < n; i++) {
            int s = score_summary_find(&nets[i].s, all[r]);
            if (s < 0) continue;
            double *row = sw->vals + (size_t)r * sw->n_cols + col0[i];
            row[0] = nets[i].s.jaccard[s];
            row[1] = nets[i].s.corloc[s];
            if (nets[i].s.has_knife) row[2] = nets[i].s.knife[s];
        }
    }
    free(col0);
}

/* Per network the sweep's best Jaccard (and its setting) and best CorLoc. */
static int sweep_macros(const net_scores *nets, int n, macros *m)
{
    for (int i = 0; i < n; i++) {
        const score_summary *s = &nets[i].s;
        int bj = 0, bc = 0;
        for (int k = 1; k < s->n; k++) {
            if (s->jaccard[k] > s->jaccard[bj]) bj = k;
            if (s->corloc[k] > s->corloc[bc]) bc = k;
        }
        KC_TRY(macro_tex(m, nets[i].name, "BestJaccardSetting", s->settings[bj]));
        KC_TRY(macro_pct(m, nets[i].name, "BestJaccard", s->jaccard[bj]));
        KC_TRY(macro_pct(m, nets[i].name, "BestCorLoc", s->corloc[bc]));
    }
    return 0;
}

/* The report's line (eval/tables/table_about.h): its rows in the table's order, the networks then the
 * baselines, each with its setting when that is not the table's (row_setting[i] of nets[i]). */
static char *report_about(const thesis_tables_opts *o, const net_scores *nets, const char *setting,
                          char *const *row_setting, const char *davis_split)
{
    int n = o->n_dirs, k = 0;
    const char **names = kc_calloc((size_t)n + 1, sizeof *names), **own = kc_calloc((size_t)n + 1, sizeof *own);
    int *base = kc_calloc((size_t)n + 1, sizeof *base);
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++)
            if (!!nets[i].baseline == pass) {
                names[k] = nets[i].name;
                own[k] = strcmp(row_setting[i], setting) ? row_setting[i] : NULL;
                base[k++] = pass;
            }
    table_about a = {.setting = setting, .refine = o->refine, .val_split = o->val_split, .voc_root = o->voc_root,
                     .has_davis = davis_split != NULL, .davis_split = davis_split, .davis_root = o->davis_root,
                     .nets = names, .baseline = base, .own_setting = own, .n_nets = n};
    char *line = table_about_line(&a);
    free(names);
    free(own);
    free(base);
    return line;
}

/* The report: one row per network at setting (a single-setting baseline at its own). */
static int report_table(const thesis_tables_opts *o, const net_scores *nets, const char *setting, kc_table *rp,
                        macros *m)
{
    int n = o->n_dirs, any_probe = 0;
    const char *davis_split = NULL; /* one for all networks (attach) */
    for (int i = 0; i < n; i++) {
        if (nets[i].has_davis && !davis_split) davis_split = nets[i].davis_split;
        any_probe |= nets[i].has_probe;
    }
    const int any_davis = davis_split != NULL, probe_col = any_davis ? 5 : 2, n_cols = probe_col + any_probe;
    table_init(rp, "network", "Network", n_cols, n);
    /* the refinement the VOC masks were scored after, named in the column titles */
    const char *refine = o->refine, *refine_what = table_refine_label(refine);
    char refine_label[32] = "", jac_title[64], cor_title[64];
    if (refine_what) snprintf(refine_label, sizeof refine_label, " (%s)", refine_what);
    snprintf(jac_title, sizeof jac_title, "VOC Jaccard%s", refine_label);
    snprintf(cor_title, sizeof cor_title, "VOC CorLoc%s", refine_label);
    table_col(rp, 0, "voc_jaccard", jac_title, 1);
    table_col(rp, 1, "voc_corloc", cor_title, 1);
    if (any_davis) {
        table_col(rp, 2, "davis_jf", "DAVIS J&F", 1);
        table_col(rp, 3, "davis_j", "J-Mean", 1);
        table_col(rp, 4, "davis_f", "F-Mean", 1);
    }
    if (any_probe) table_col(rp, probe_col, "probe_miou", "Probe mIoU", 1);
    KC_TRY(macro_tex(m, NULL, "Setting", setting));
    if (strcmp(refine, "none")) KC_TRY(macro(m, NULL, "Refine", refine));
    if (o->val_split) KC_TRY(macro_tex(m, NULL, "ValSplit", o->val_split));
    if (any_davis) KC_TRY(macro_tex(m, NULL, "DavisSplit", davis_split));
    if (any_davis && o->davis_root) KC_TRY(macro_tex(m, NULL, "DavisRoot", o->davis_root));
    char **row_setting = kc_calloc((size_t)n + 1, sizeof *row_setting); /* each row's setting */
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        const score_summary *s = &nets[i].s;
        int k = score_summary_find(s, setting);
        if (k < 0 && nets[i].baseline && s->n == 1) {
            k = 0; /* e.g. an attention baseline (BASELINES=attn): its own single setting, VOC Jaccard only */
            kc_info("baseline %s: reported at its only setting %s", nets[i].name, s->settings[0]);
        }
        if (k < 0) {
            rc = kc_fail("%s: network %s has no scores for setting %s", nets[i].dir, nets[i].name, setting);
            break;
        }
        row_setting[i] = s->settings[k];
        table_row(rp, i, nets[i].name);
        rp->baseline[i] = nets[i].baseline;
        double *row = rp->vals + (size_t)i * n_cols;
        row[0] = s->jaccard[k];
        row[1] = s->corloc[k];
        if (nets[i].has_davis) {
            row[2] = nets[i].jf;
            row[3] = nets[i].j;
            row[4] = nets[i].f;
        }
        if (nets[i].has_probe) row[probe_col] = nets[i].probe_miou;
        const char *metric[5] = {"VocJaccard", "VocCorLoc", "DavisJF", "DavisJ", "DavisF"};
        for (int c = 0; c < n_cols && rc == 0; c++)
            if (!isnan(row[c]))
                rc = macro_pct(m, nets[i].name, any_probe && c == probe_col ? "ProbeMIoU" : metric[c], row[c]);
        char val[32];
        snprintf(val, sizeof val, "%d", s->images[k]);
        if (rc == 0) rc = macro(m, nets[i].name, "VocImages", val);
    }
    if (rc == 0) {
        char *line = report_about(o, nets, setting, row_setting, davis_split);
        table_note(rp, line);
        free(line);
    }
    free(row_setting);
    return rc;
}

/* The setting of the report when --setting is not given (eval/tables/setting_choice.h); NULL on error. */
static const char *choose(const thesis_tables_opts *o, const net_scores *nets, char *const *all, int n_all)
{
    int n = o->n_dirs, n_contenders = 0;
    const score_summary **sums = kc_malloc((size_t)n * sizeof *sums);
    int *baseline = kc_malloc((size_t)n * sizeof *baseline);
    for (int i = 0; i < n; i++) {
        sums[i] = &nets[i].s;
        baseline[i] = nets[i].baseline;
        n_contenders += !baseline[i];
    }
    setting_choice c;
    if (setting_choose(sums, baseline, n, all, n_all, &c) < 0)
        kc_fail("no setting is scored for every network; pass --setting ID");
    else if (n_all > 1 && !o->print_best)
        kc_info("no --setting: reporting %s, the best mean Jaccard (%.4f) over the %d network%s%s", c.setting, c.mean,
                c.n_choosers, kc_s(c.n_choosers), n_contenders && o->n_baselines ? " (baselines left out)" : "");
    free(sums);
    free(baseline);
    return c.setting;
}

static int write_tables(const thesis_tables_opts *o, const kc_table *sw, const kc_table *rp, const macros *m,
                        const char *setting, int n_all)
{
    int do_sweep = !o->only || !strcmp(o->only, "sweep"), do_report = !o->only || !strcmp(o->only, "report");
    KC_TRY(kc_mkdirs(o->out));
    char *sweep_base = do_report ? kc_strfmt("%s-sweep", o->name) : kc_strdup(o->name);
    char *mp = kc_strfmt("%s/%s-macros.tex", o->out, o->name);
    int rc = (do_sweep && table_write(o->out, sweep_base, sw) < 0) || (do_report && table_write(o->out, o->name, rp) < 0) ||
                     kc_write_file_atomic(mp, m->text.s, m->text.n) < 0 || kc_outputs_commit() < 0
                 ? -1
                 : 0;
    if (rc == 0 && do_sweep)
        kc_info("wrote the sweep table %s/%s.{csv,md,tex} (%d network%s, %d setting%s)", o->out, sweep_base, o->n_dirs,
                kc_s(o->n_dirs), n_all, kc_s(n_all));
    if (rc == 0 && do_report) kc_info("wrote the report table %s/%s.{csv,md,tex} at %s", o->out, o->name, setting);
    if (rc == 0) kc_info("wrote %s", mp);
    free(sweep_base);
    free(mp);
    return rc;
}

int thesis_tables_run(const thesis_tables_opts *o)
{
    int n = o->n_dirs, do_sweep = !o->only || !strcmp(o->only, "sweep"), do_report = !o->only || !strcmp(o->only, "report");
    /* one run per set of tables NAME.* (other names share the folder); they appear together */
    kc_lock *lock = NULL;
    if (!o->print_best) {
        KC_TRY(kc_lock_folder(&lock, o->out, o->name));
        kc_outputs_begin();
    }
    net_scores *nets = kc_calloc((size_t)n, sizeof *nets);
    char **all = NULL;
    int n_all = 0, rc = 0;
    macros m = {.name = o->name};
    kc_table sw = {0}, rp = {0};
    const char *setting = o->setting;
    if (load_nets(o, nets) < 0 || attach(o, nets) < 0) {
        rc = -1;
        goto done;
    }
    const score_summary **sums = kc_malloc((size_t)n * sizeof *sums);
    for (int i = 0; i < n; i++) sums[i] = &nets[i].s;
    score_settings_union(sums, n, &all, &n_all);
    free(sums);
    sweep_table(nets, n, all, n_all, &sw);
    char *line = sweep_about(o, nets, n_all);
    table_note(&sw, line);
    free(line);
    kc_buf_printf(&m.text, "%% generated by keycut kc-table: single numbers (percentages) for \\input\n");
    char val[32];
    snprintf(val, sizeof val, "%d", n_all);
    if (macro(&m, NULL, "Settings", val) < 0 || (o->voc_root && macro_tex(&m, NULL, "VocRoot", o->voc_root) < 0) ||
        (do_sweep && o->select_list && macro_tex(&m, NULL, "SelectList", o->select_list) < 0) ||
        (do_sweep && sweep_macros(nets, n, &m) < 0)) {
        rc = -1;
        goto done;
    }
    if (do_report && !setting && !(setting = choose(o, nets, all, n_all))) {
        rc = -1;
        goto done;
    }
    if (o->print_best) {
        printf("%s\n", setting);
        goto done;
    }
    if ((do_report && report_table(o, nets, setting, &rp, &m) < 0) || write_tables(o, &sw, &rp, &m, setting, n_all) < 0) {
        rc = -1;
        goto done;
    }
    kc_lock_release(lock);
    lock = NULL;
    rc = ledger_print(o->ledger);
done:
    for (int i = 0; i < m.n_seen; i++) free(m.seen[i]);
    free(m.seen);
    free(m.text.s);
    table_free(&sw);
    table_free(&rp);
    free(all);
    for (int i = 0; i < n; i++) {
        score_summary_free(&nets[i].s);
        free(nets[i].name);
        free(nets[i].dir);
        free(nets[i].davis_split);
    }
    free(nets);
    return rc;
}
