/* stages/kc-davis.c — J, F and J&F of a DAVIS-2017 results folder, as the official
 * davis2017-evaluation (semi-supervised task) computes them.  See eval/davis/davis_jf.h.
 *
 *   kc-davis --results DIR --davis ROOT --split NAME [--force]
 *
 * Writes DIR/global_results-<split>.csv, DIR/per-sequence_results-<split>.csv (the official
 * columns, %.3f) and DIR/global_results-<split>.json (full precision, per object and per frame).
 * It holds DIR's lock and kc-propagate's commit lock (eval/davis/propagate_run.h) from reading to
 * writing, so a kc-propagate run (a shard's, or one with --replace, which removes these three
 * files) never changes the sequences while they are scored.
 */
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "eval/davis/davis_jf.h"
#include "eval/davis/propagate_run.h"
#include "pipeline/kc.h"
#include "pipeline/lock.h"
#include "pipeline/opts.h"

static const char usage[] =
    "usage: kc-davis --results DIR --davis ROOT --split NAME [--force]\n"
    "\n"
    "Scores the palette PNGs DIR/<sequence>/<frame>.png against the DAVIS-2017 ground truth\n"
    "ROOT/Annotations/480p/ of the sequences in ROOT/ImageSets/2017/NAME.txt, exactly as the\n"
    "official davis2017-evaluation (semi-supervised) does: J, F, J&F with recall and decay.\n"
    "Writes DIR/global_results-NAME.csv, DIR/per-sequence_results-NAME.csv and\n"
    "DIR/global_results-NAME.json; refuses to overwrite them unless --force is given.\n"
    "\n"
    "example:\n"
    "  kc-davis --results results/dino/davis17-val --davis /data/DAVIS --split val\n";

int main(int argc, char **argv)
{
    kc_set_prog("kc-davis");
    kc_keep_freed_memory();
    kc_set_cmdline(argc, argv);
    const char *results = NULL, *root = NULL, *split = NULL;
    int force = 0;
    const opts_option options[] = {
        {"--results", .value = &results}, {"--davis", .value = &root}, {"--split", .value = &split},
        {"--force", .flag = &force}, {0}};
    const opts_cli cli = {.usage = usage, .options = options};
    int rc = opts_parse(&cli, argc, argv);
    if (rc < 0) kc_die();
    if (rc != OPTS_OK) exit(opts_usage(&cli, rc));
    if (!results || !root || !split) kc_die_msg("--results, --davis and --split are required (see --help)");
    double t0 = kc_now();
    struct stat st;
    if (stat(results, &st) != 0) kc_die_msg("%s: results folder not found", results);
    if (!S_ISDIR(st.st_mode)) kc_die_msg("%s: not a folder", results);
    /* one run per results folder (kc-propagate takes the same lock); the three files appear
     * together at the end */
    kc_lock *lock, *commit;
    if (kc_lock_folder(&lock, results, NULL) < 0) kc_die();
    /* and kc-propagate's commit lock, which its shards take too: no sequence is added, replaced or
     * discarded while the folder is read and its scores are written (a folder mid-way through a
     * kc-propagate --replace lacks sequences, which is refused below) */
    char *commit_path = kc_strfmt("%s/%s", results, PROP_COMMIT_LOCK);
    if (kc_lock_wait(&commit, commit_path, results, 600) < 0) kc_die();
    free(commit_path);
    kc_outputs_begin();
    /* Refuse early, before the work, when the outputs exist. */
    if (!force) {
        const char *names[3] = {"global_results-%s.csv", "per-sequence_results-%s.csv", "global_results-%s.json"};
        for (int k = 0; k < 3; k++) {
            char *name = kc_strfmt(names[k], split);
            char *p = kc_strfmt("%s/%s", results, name);
            if (kc_exists(p))
                kc_die_msg("%s: exists; not overwritten (use --force to recompute and replace it)", p);
            free(p);
            free(name);
        }
    }
    davis_eval ev;
    if (davis_evaluate(results, root, split, &ev) < 0) kc_die();
    if (davis_write_outputs(&ev, results, split, force) < 0 || kc_outputs_commit() < 0) kc_die();
    kc_lock_release(commit);
    kc_lock_release(lock);
    printf("%-10s", "");
    for (int k = 0; k < DAVIS_N_GLOBAL; k++) printf(" %9s", davis_global_names[k]);
    printf("\n%-10s", split);
    for (int k = 0; k < DAVIS_N_GLOBAL; k++) printf(" %9.3f", ev.global[k]);
    printf("\n");
    char took[32];
    double dt = kc_now() - t0;
    snprintf(took, sizeof took, "%.1fs", dt);
    kc_info("%d sequence%s, %d object%s, %d scored frame%s in %s", ev.n_seq, kc_s(ev.n_seq), ev.n_obj, kc_s(ev.n_obj),
            ev.n_frames, kc_s(ev.n_frames), took);
    davis_eval_free(&ev);
    return 0;
}
