/* eval/tables/setting_choice.h — the chosen setting: one rule for the report (kc-table) and for the star
 * of the sweep figure (kc-plot sweep).
 *
 * The choosing networks are those that are not baselines (random weights, the colour extractor,
 * DINO's attention masks: --baseline NET, `kind = baseline` in configs/nets.ini; a network scored
 * at one attn-mass<m> setting only is always one), or every network when all are baselines.  The
 * chosen setting is the only setting when there is one; else, among the settings scored for
 * every choosing network, the one with the best mean Jaccard over them on the selection split
 * (ties: the first id in strcmp order).
 *
 *     const score_summary *nets[2] = {&dino, &color};
 *     int baseline[2] = {0, 1};
 *     setting_choice c;
 *     if (setting_choose(nets, baseline, 2, all, n_all, &c) < 0) ...;   // no setting fits
 *     printf("%s (mean Jaccard %.4f over %d)\n", c.setting, c.mean, c.n_choosers);
 *     char *who = setting_choosers(names, nets, baseline, 2);        // "dino"
 */
#ifndef KC_SETTING_CHOICE_H
#define KC_SETTING_CHOICE_H
#include "eval/voc/score_summary.h"

typedef struct setting_choice {
    const char *setting; /* one of all[] */
    double mean;         /* its mean Jaccard over the choosing networks (NaN: the only setting) */
    int n_choosers;      /* how many networks chose it */
} setting_choice;

/* 1 when network i chooses: not a baseline, or every network is one.  baseline: (n) or NULL. */
int setting_chooses(const score_summary *const *nets, const int *baseline, int n, int i);
/* all: (n_all) the settings of any network, sorted by strcmp (score_settings_union).  Returns 0,
 * or -1 without a message when no setting is scored for every choosing network. */
int setting_choose(const score_summary *const *nets, const int *baseline, int n, char *const *all, int n_all,
                   setting_choice *c);
/* The names of the choosing networks, joined with ", " (malloc'd). */
char *setting_choosers(const char *const *names, const score_summary *const *nets, const int *baseline, int n);
#endif
