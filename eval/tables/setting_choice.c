/* eval/tables/setting_choice.c — the rule that chooses the setting.  See setting_choice.h. */
#include "eval/tables/setting_choice.h"

#include <math.h>
#include <string.h>

#include "pipeline/kc.h"

/* DINO's attention masks: scored at one attn-mass<m> setting only. */
static int attention_only(const score_summary *s) { return s->n == 1 && !strncmp(s->settings[0], "attn-mass", 9); }

static int is_baseline(const score_summary *const *nets, const int *baseline, int i)
{
    return (baseline && baseline[i]) || attention_only(nets[i]);
}

int setting_chooses(const score_summary *const *nets, const int *baseline, int n, int i)
{
    if (!is_baseline(nets, baseline, i)) return 1;
    for (int k = 0; k < n; k++)
        if (!is_baseline(nets, baseline, k)) return 0;
    return 1;
}

int setting_choose(const score_summary *const *nets, const int *baseline, int n, char *const *all, int n_all,
                   setting_choice *c)
{
    c->setting = NULL;
    c->mean = NAN;
    c->n_choosers = 0;
    for (int i = 0; i < n; i++) c->n_choosers += setting_chooses(nets, baseline, n, i);
    if (n_all == 1) {
        c->setting = all[0];
        return 0;
    }
    double best = -1;
    for (int r = 0; r < n_all; r++) {
        double sum = 0;
        int have = 0;
        for (int i = 0; i < n; i++) {
            int s = score_summary_find(nets[i], all[r]);
            if (s >= 0 && setting_chooses(nets, baseline, n, i)) {
                sum += nets[i]->jaccard[s];
                have++;
            }
        }
        if (have == c->n_choosers && sum / have > best) {
            best = sum / have;
            c->setting = all[r];
        }
    }
    if (!c->setting) return -1;
    c->mean = best;
    return 0;
}

char *setting_choosers(const char *const *names, const score_summary *const *nets, const int *baseline, int n)
{
    kc_buf b = {0};
    for (int i = 0; i < n; i++)
        if (setting_chooses(nets, baseline, n, i)) kc_buf_printf(&b, "%s%s", b.n ? ", " : "", names[i]);
    return b.s ? b.s : kc_strdup("");
}
