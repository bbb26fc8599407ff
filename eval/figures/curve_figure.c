/* eval/figures/curve_figure.c — the checkpoint curves' inputs.  See curve_figure.h. */
#include "eval/figures/curve_figure.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/davis/davis_results.h"
#include "eval/probe/probe.h"
#include "eval/voc/score_summary.h"
#include "pipeline/ini.h"
#include "pipeline/kc.h"
#include "pipeline/lock.h"

static const ini_entry *ini_entry_of(const ini_file *f, const char *sec, const char *key)
{
    for (int i = 0; i < f->n; i++)
        if (!strcmp(f->e[i].section, sec) && !strcmp(f->e[i].key, key)) return &f->e[i];
    return NULL;
}

/* Each network's run and epoch from nets.ini (none: a baseline). */
static int curve_runs(const curve_figure_opts *o, const ini_file *ini, fig_curves *f)
{
    for (int i = 0; i < o->n_voc; i++) {
        fig_point *p = &f->points[i];
        const char *net = o->voc[i].name, *path = o->nets_ini;
        p->network = net;
        const ini_entry *run = ini_entry_of(ini, net, "run"), *ep = ini_entry_of(ini, net, "epoch");
        if (run && !ep) return kc_fail("%s:%d: network %s: run '%s' needs an epoch", path, run->line, net, run->value);
        if (ep && !run) return kc_fail("%s:%d: network %s: an epoch but no run", path, ep->line, net);
        if (!run) continue;
        char *end;
        p->epoch = strtod(ep->value, &end);
        if (end == ep->value || *end || !isfinite(p->epoch))
            return kc_fail("%s:%d: network %s: epoch '%s' is not a number", path, ep->line, net, ep->value);
        if (!*run->value) return kc_fail("%s:%d: network %s: empty run name", path, run->line, net);
        p->run = run->value;
        for (int j = 0; j < i; j++)
            if (f->points[j].run && !strcmp(f->points[j].run, p->run) && f->points[j].epoch == p->epoch)
                return kc_fail("%s:%d: networks %s and %s of run %s both have epoch %s", path, ep->line,
                               f->points[j].network, net, p->run, ep->value);
    }
    return 0;
}

/* VOC Jaccard and CorLoc of each network at the setting; *used: the setting (malloc'd when it is
 * each network's only one). */
static int curve_voc(const curve_figure_opts *o, fig_curves *f, char **used)
{
    for (int i = 0; i < o->n_voc; i++) {
        const fig_input *in = &o->voc[i];
        fig_point *p = &f->points[i];
        for (int m = 0; m < FIG_N_METRICS; m++) p->v[m] = NAN;
        score_summary s;
        KC_TRY(score_summary_read(in->path, in->name, "run make report first", &s));
        int k = -1, rc = 0;
        if (o->setting) {
            k = score_summary_find(&s, o->setting);
            if (k < 0)
                rc = kc_fail("%s/summary.csv: network %s has no scores for setting %s", in->path, in->name, o->setting);
        } else if (s.n == 1) {
            k = 0;
            if (!*used) *used = kc_strdup(s.settings[0]);
            else if (strcmp(*used, s.settings[0]))
                rc = kc_fail("%s/summary.csv: network %s is scored at %s, another network at %s (pass --setting)", in->path,
                             in->name, s.settings[0], *used);
        } else {
            rc = kc_fail("%s/summary.csv: network %s has %d settings; pass --setting ID", in->path, in->name, s.n);
        }
        if (rc == 0) {
            p->v[FIG_VOC_JACCARD] = s.jaccard[k];
            p->v[FIG_VOC_CORLOC] = s.corloc[k];
        }
        score_summary_free(&s);
        KC_TRY(rc);
    }
    return 0;
}

/* The index of network name among the --voc inputs, or -1. */
static int voc_index(const curve_figure_opts *o, const char *name)
{
    for (int i = 0; i < o->n_voc; i++)
        if (!strcmp(o->voc[i].name, name)) return i;
    return -1;
}

static int curve_davis_probe(const curve_figure_opts *o, fig_curves *f)
{
    for (int d = 0; d < o->n_davis; d++) {
        const fig_input *in = &o->davis[d];
        int i = voc_index(o, in->name);
        if (i < 0) return kc_fail("--davis %s=%s: no --voc scores of network %s", in->name, in->path, in->name);
        KC_TRY(davis_results_read_jf(in->name, in->path, &f->points[i].v[FIG_DAVIS_JF]));
    }
    for (int d = 0; d < o->n_probe; d++) {
        const fig_input *in = &o->probe[d];
        int i = voc_index(o, in->name);
        if (i < 0) return kc_fail("--probe %s=%s: no --voc scores of network %s", in->name, in->path, in->name);
        if (probe_read_summary(in->path, &f->points[i].v[FIG_PROBE_MIOU]) < 0)
            return kc_fail_prefix("network %s (run make probe first?)", in->name);
    }
    return 0;
}

/* The reference lines of published.ini (pub, loaded); its saliency_* sections are skipped. */
static int curve_published(const char *published, const ini_file *pub, fig_curves *f)
{
    char **secs = NULL;
    int n_secs = 0, rc = 0;
    for (int i = 0; i < pub->n; i++) {
        int k = 0;
        while (k < n_secs && strcmp(secs[k], pub->e[i].section)) k++;
        if (k == n_secs && *pub->e[i].section) {
            secs = kc_realloc(secs, (size_t)(n_secs + 1) * sizeof *secs);
            secs[n_secs++] = pub->e[i].section;
        }
    }
    f->refs = kc_calloc((size_t)n_secs + 1, sizeof *f->refs);
    for (int k = 0; k < n_secs && rc == 0; k++) {
        const ini_entry *lab = ini_entry_of(pub, secs[k], "label"), *met = ini_entry_of(pub, secs[k], "metric"),
                        *val = ini_entry_of(pub, secs[k], "value");
        if (!lab || !met || !val) {
            rc = kc_fail("%s: [%s] needs label, metric and value", published, secs[k]);
            break;
        }
        if (!strncmp(met->value, "saliency_", 9)) continue; /* a row of kc-table --saliency, not a line here */
        fig_reference *r = &f->refs[f->n_refs++];
        r->label = lab->value;
        r->metric = -1;
        for (int m = 0; m < FIG_N_METRICS; m++)
            if (!strcmp(met->value, fig_metric_key[m])) r->metric = m;
        char *end;
        r->value = strtod(val->value, &end);
        if (r->metric < 0)
            rc = kc_fail("%s:%d: metric '%s' is not voc_jaccard, voc_corloc, davis_jf or probe_miou", published, met->line,
                         met->value);
        else if (end == val->value || *end || !(r->value >= 0 && r->value <= 100))
            rc = kc_fail("%s:%d: value '%s' is not a percentage", published, val->line, val->value);
    }
    free(secs);
    return rc;
}

int curve_figure_run(const curve_figure_opts *o)
{
    if (!kc_exists(o->nets_ini)) return kc_fail("%s: no such file (the networks' run and epoch come from it)", o->nets_ini);
    ini_file ini = {0}, pub = {0};
    KC_TRY(ini_load(&ini, o->nets_ini));
    fig_curves f = {0};
    f.n = o->n_voc;
    f.points = kc_calloc((size_t)o->n_voc, sizeof *f.points);
    char *used = NULL, *sub = NULL;
    int rc = curve_runs(o, &ini, &f) < 0 || curve_voc(o, &f, &used) < 0 || curve_davis_probe(o, &f) < 0 ? -1 : 0;
    int have_pub = rc == 0 && o->published;
    if (have_pub && (ini_load(&pub, o->published) < 0 || curve_published(o->published, &pub, &f) < 0)) rc = -1;
    const char *setting = o->setting ? o->setting : used;
    kc_lock *lock = NULL;
    if (rc == 0) {
        sub = setting ? kc_strfmt("VOC val at %s", setting) : NULL;
        f.subtitle = sub;
        if (kc_lock_folder(&lock, o->out, o->name) < 0) rc = -1;
    }
    if (rc == 0) {
        kc_outputs_begin();
        if (fig_curves_write(o->out, o->name, &f) < 0 || kc_outputs_commit() < 0) rc = -1;
    }
    if (rc == 0) {
        kc_lock_release(lock);
        kc_info("wrote %s/%s.{pdf,svg,png,tex,csv} (%d network%s, %d reference line%s)", o->out, o->name, o->n_voc,
                kc_s(o->n_voc), f.n_refs, kc_s(f.n_refs));
    }
    free(used);
    free(sub);
    free(f.points);
    free(f.refs);
    ini_free(&ini);
    if (have_pub) ini_free(&pub);
    return rc;
}
