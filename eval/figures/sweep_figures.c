/* eval/figures/sweep_figures.c — the sweep figures from score folders.  See sweep_figures.h. */
#include "eval/figures/sweep_figures.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/voc/score_summary.h"
#include "eval/tables/setting_choice.h"
#include "pipeline/kc.h"
#include "pipeline/lock.h"

static int cmp_tau(const void *a, const void *b)
{
    double x = atof((const char *)a), y = atof((const char *)b);
    return (x > y) - (x < y);
}

/* The grid's tau values of all[] into f (sorted by value); *off_grid counts the other settings. */
static int sweep_taus(char *const *all, int n_all, fig_sweep *f, int *off_grid)
{
    *off_grid = 0;
    for (int k = 0; k < n_all; k++) {
        char tt[16];
        int e, sp, r, n;
        if (fig_parse_setting(all[k], tt, &e, &sp, &r, &n) < 0) {
            (*off_grid)++;
            continue;
        }
        int t = 0;
        while (t < f->n_tau && atof(f->tau[t]) != atof(tt)) t++;
        if (t == f->n_tau) {
            if (f->n_tau == FIG_MAX_TAU) return kc_fail("more than %d tau values in the scores", FIG_MAX_TAU);
            snprintf(f->tau[f->n_tau++], 16, "%s", tt);
        }
    }
    qsort(f->tau, (size_t)f->n_tau, sizeof f->tau[0], cmp_tau);
    return 0;
}

/* f->v of network i (i == n: the mean over the networks scored at a setting, all of them), metric
 * m (0 Jaccard, 1 CorLoc). */
static void sweep_values(const score_summary *sc, int n, int i, int m, char *const *all, int n_all, fig_sweep *f)
{
    int nv = f->n_tau * FIG_EDGES * FIG_SPLITS * FIG_RULES * FIG_NS;
    for (int k = 0; k < nv; k++) f->v[k] = NAN;
    for (int k = 0; k < n_all; k++) {
        char tt[16];
        int e, sp, r, nn;
        if (fig_parse_setting(all[k], tt, &e, &sp, &r, &nn) < 0) continue;
        int t = 0;
        while (atof(f->tau[t]) != atof(tt)) t++;
        double sum = 0;
        int have = 0;
        for (int j = (i < n ? i : 0); j < (i < n ? i + 1 : n); j++) {
            int s = score_summary_find(&sc[j], all[k]);
            if (s >= 0) {
                sum += m ? sc[j].corloc[s] : sc[j].jaccard[s];
                have++;
            }
        }
        if (i < n && have) f->v[fig_sweep_at(t, e, sp, r, nn)] = sum;
        if (i == n && have == n) f->v[fig_sweep_at(t, e, sp, r, nn)] = sum / n;
    }
}

/* The star: the report's setting (eval/tables/setting_choice.h), and the networks that chose it. */
static int sweep_chosen(const sweep_figures_opts *o, const score_summary *const *ps, char *const *all, int n_all,
                        const char **chosen, char **chosen_by)
{
    int n = o->n_nets;
    int *baseline = kc_calloc((size_t)n, sizeof *baseline);
    const char **names = kc_malloc((size_t)n * sizeof *names);
    for (int i = 0; i < n; i++) names[i] = o->nets[i].name;
    int rc = 0;
    for (int k = 0; k < o->n_baselines && rc == 0; k++) {
        int i = 0;
        while (i < n && strcmp(names[i], o->baselines[k])) i++;
        if (i == n) rc = kc_fail("--baseline %s: no score folder of network '%s'", o->baselines[k], o->baselines[k]);
        else baseline[i] = 1;
    }
    setting_choice c;
    if (rc == 0 && setting_choose(ps, baseline, n, all, n_all, &c) == 0) {
        *chosen = c.setting;
        *chosen_by = setting_choosers(names, ps, baseline, n);
    }
    free(baseline);
    free(names);
    return rc;
}

static int draw_all(const sweep_figures_opts *o, const score_summary *sc, char *const *all, int n_all, fig_sweep *f)
{
    int n = o->n_nets;
    const char *metric_name[2] = {"jaccard", "corloc"}, *metric_label[2] = {"Jaccard", "CorLoc"};
    for (int m = 0; m < 2; m++) {
        f->metric = metric_label[m];
        for (int i = 0; i <= n; i++) { /* i == n: the mean over the networks */
            sweep_values(sc, n, i, m, all, n_all, f);
            char *title = i < n ? kc_strdup(o->nets[i].name) : kc_strfmt("mean of %d network%s", n, n == 1 ? "" : "s");
            char *base = i < n ? kc_strfmt("%s-%s-%s", o->prefix, o->nets[i].name, metric_name[m])
                               : kc_strfmt("%s-%s", o->prefix, metric_name[m]);
            f->title = title;
            int rc = fig_sweep_write(o->out, base, f);
            free(title);
            free(base);
            KC_TRY(rc);
        }
    }
    return 0;
}

int sweep_figures_run(const sweep_figures_opts *o)
{
    int n = o->n_nets, rc = 0;
    score_summary *sc = kc_calloc((size_t)n, sizeof *sc);
    const score_summary **ps = kc_malloc((size_t)n * sizeof *ps);
    char **all = NULL;
    int n_all = 0, off_grid = 0;
    fig_sweep f = {0};
    for (int i = 0; i < n && rc == 0; i++) {
        rc = score_summary_read(o->nets[i].path, o->nets[i].name, "run make sweep first", &sc[i]);
        ps[i] = &sc[i];
    }
    if (rc == 0) {
        /* all settings, sorted (as kc-table), and the grid's tau values */
        score_settings_union(ps, n, &all, &n_all);
        rc = sweep_taus(all, n_all, &f, &off_grid);
    }
    if (rc == 0 && off_grid)
        kc_info("%d settings are not of the t<tau>-<edges>-<split>-<rule>-n<N> grid and are not drawn", off_grid);
    if (rc == 0 && !f.n_tau) rc = kc_fail("%s/summary.csv: no setting of the decoder grid to draw", o->nets[0].path);
    const char *chosen = o->chosen;
    char *chosen_by = NULL;
    if (rc == 0 && !chosen && sweep_chosen(o, ps, all, n_all, &chosen, &chosen_by) < 0) rc = -1;
    /* one run per figure (its files appear together at the end) */
    kc_lock *lock = NULL;
    if (rc == 0 && kc_lock_folder(&lock, o->out, o->prefix) < 0) rc = -1;
    if (rc == 0) {
        kc_outputs_begin();
        f.v = kc_malloc(sizeof(double) * (size_t)(f.n_tau * FIG_EDGES * FIG_SPLITS * FIG_RULES * FIG_NS));
        f.chosen = chosen;
        f.chosen_by = chosen_by;
        rc = draw_all(o, sc, all, n_all, &f) < 0 || kc_outputs_commit() < 0 ? -1 : 0;
    }
    if (rc == 0) {
        kc_lock_release(lock);
        kc_info("wrote the sweep figures of %d network%s to %s/ (%s-*.{pdf,svg,png,tex,csv}); chosen setting %s", n,
                n == 1 ? "" : "s", o->out, o->prefix, chosen ? chosen : "(none)");
    }
    free(chosen_by);
    free(f.v);
    free(all);
    for (int i = 0; i < n; i++) score_summary_free(&sc[i]);
    free(sc);
    free(ps);
    return rc;
}
