/* eval/davis/propagate_run.c — see propagate_run.h.
 *
 * prop_run: open the features, read the split (and take the shard's slice), take OUT's lock,
 * check or record OUT/propagate.json (settings_json, record_settings; with --replace discarding
 * the results of other settings), list every sequence's frames, then propagate_sequence each
 * sequence not finished yet, committing each under OUT/.propagate.keycut.lock (commit_sequence).
 *
 * The folder's invariant: every finished sequence OUT/<seq> was made with the settings that
 * OUT/propagate.json records.  propagate.json changes only under the commit lock and only once
 * the folder holds no finished sequence (none there, or all discarded by --replace, kc-davis's
 * outputs with them); a sequence is renamed into place only under the same lock, after checking
 * that propagate.json still records this run's settings.  So shards of the same settings never
 * discard each other's sequences (they find their own settings recorded), a run of other settings
 * can never add a sequence to a folder that records another's, and kc-davis, which holds the
 * commit lock while it reads and writes, sees one run's results or fails on a missing sequence.
 */
#include "eval/davis/propagate_run.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "datasets/davis_gt.h"
#include "eval/davis/propagate.h"
#include "pipeline/cache/cache.h"
#include "pipeline/cache/shard.h"
#include "pipeline/images/image.h"
#include "pipeline/images/resize.h"
#include "pipeline/kc.h"
#include "pipeline/lock.h"
#include "pipeline/progress.h"

/* Removes a folder of plain files (a stale DIR/<seq>.partial). */
static int remove_flat_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return kc_fail("%s: cannot open (%s)", dir, strerror(errno));
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char *p = kc_strfmt("%s/%s", dir, e->d_name);
        int rc = unlink(p);
        free(p);
        if (rc < 0) {
            closedir(d);
            return kc_fail("%s: cannot clear (%s)", dir, strerror(errno));
        }
    }
    closedir(d);
    if (rmdir(dir) < 0) return kc_fail("%s: cannot remove (%s)", dir, strerror(errno));
    return 0;
}

/* One run's state: the features, the settings, the palette of every PNG, the progress. */
typedef struct run {
    cache_reader cache;
    const char *kind, *root, *out;
    const char *settings, *spath; /* the text of OUT/propagate.json for this run, and its path */
    prop_config cfg;
    uint8_t palette[768];
    progress prog;
} run;

/* OUT/.propagate.keycut.lock, held for moments: while propagate.json is checked or changed (and
 * results are discarded), while a finished sequence is renamed into place; kc-davis holds it while
 * it scores the folder.  Waits while another run holds it. */
static int commit_lock(const char *out, kc_lock **lock)
{
    char *path = kc_strfmt("%s/%s", out, PROP_COMMIT_LOCK);
    int rc = kc_lock_wait(lock, path, out, 600);
    free(path);
    return rc;
}

/* 1 when OUT/propagate.json holds exactly settings, 0 when it holds other text or is absent. */
static int settings_recorded(const char *spath, const char *settings)
{
    uint8_t *old = NULL;
    size_t len = 0;
    if (!kc_exists(spath) || kc_read_file(spath, &old, &len) < 0) return 0;
    int same = len == strlen(settings) && memcmp(old, settings, len) == 0;
    free(old);
    return same;
}

/* Under the commit lock: renames OUT/<seq>.partial (complete) to OUT/<seq>, once propagate.json is
 * seen to record this run's settings still. */
static int commit_sequence(run *R, const char *partial, const char *final)
{
    kc_lock *lock;
    KC_TRY(commit_lock(R->out, &lock));
    int rc = 0;
    if (!settings_recorded(R->spath, R->settings))
        rc = kc_fail("%s: another run replaced the results in %s (other settings or features) while this one ran",
                     R->spath, R->out);
    else if (rename(partial, final) < 0)
        rc = kc_fail("%s: cannot rename to %s (%s)", partial, final, strerror(errno));
    kc_lock_release(lock);
    return rc;
}

/* One sequence (frames: its n frame names, in order) into OUT/<seq>.partial/, renamed to
 * OUT/<seq> when complete; on failure the partial folder goes. */
static int propagate_sequence(run *R, const char *seq, char **frames, int n)
{
    int rc = -1, w, h, gh = 0, gw = 0, dim = 0;
    uint8_t *first = NULL, *small = NULL, *labels = NULL;
    float *feat = NULL, *soft = NULL;
    prop_video v;
    memset(&v, 0, sizeof v);
    char *final = kc_strfmt("%s/%s", R->out, seq), *partial = kc_strfmt("%s/%s.partial", R->out, seq);
    char *apath = kc_strfmt("%s/Annotations/480p/%s/%s.png", R->root, seq, frames[0]);
    if (kc_exists(partial) && remove_flat_dir(partial) < 0) goto out;
    if (kc_mkdirs(partial) < 0) goto out;
    if (davis_read_labels(apath, &w, &h, &first) < 0) goto out;
    labels = kc_malloc((size_t)w * h);
    for (int t = 0; t < n; t++) {
        char *id = kc_strfmt("%s/%s", seq, frames[t]);
        int k = cache_index_find(&R->cache.index, id);
        if (k < 0) {
            kc_fail("%s: no features for %s (the cache must be extracted from the same DAVIS split)", R->cache.path, id);
            free(id);
            goto out;
        }
        int fgh = R->cache.index.grid[2 * k], fgw = R->cache.index.grid[2 * k + 1];
        int fh = R->cache.index.size[2 * k], fw = R->cache.index.size[2 * k + 1];
        if (fh != h || fw != w) {
            kc_fail("%s: %s was extracted from a %dx%d image but %s is %dx%d (frames of different sizes?)",
                    R->cache.path, id, fw, fh, apath, w, h);
            free(id);
            goto out;
        }
        if (t > 0 && (fgh != gh || fgw != gw)) {
            kc_fail("%s: %s has a %dx%d grid, the sequence's first frame %dx%d", R->cache.path, id, fgh, fgw, gh, gw);
            free(id);
            goto out;
        }
        char *dset = kc_strfmt("/features/%s/%s", R->kind, id);
        int rows, cols;
        free(feat);
        feat = NULL;
        int rr = cache_read_f32(&R->cache, dset, &feat, &rows, &cols);
        free(dset);
        if (rr < 0) {
            free(id);
            goto out;
        }
        if (rows != fgh * fgw || (t > 0 && cols != dim)) {
            kc_fail("%s: %s holds %dx%d features, expected %d rows (grid %dx%d)%s", R->cache.path, id, rows, cols,
                    fgh * fgw, fgh, fgw, t > 0 ? " of the first frame's width" : "");
            free(id);
            goto out;
        }
        free(id);
        char *png = kc_strfmt("%s/%s.png", partial, frames[t]);
        if (t == 0) {
            gh = fgh;
            gw = fgw;
            dim = cols;
            small = kc_malloc((size_t)gh * gw);
            resize_nearest_pillow(first, w, h, small, gw, gh);
            if (prop_init(&v, &R->cfg, gh, gw, dim, feat, small) < 0) {
                free(png);
                goto out;
            }
            soft = kc_malloc(sizeof *soft * (size_t)gh * gw * v.n_labels);
            rr = image_write_png_index(png, w, h, first, R->palette); /* DINO writes the annotation as is */
        } else {
            rr = prop_step(&v, feat, soft);
            if (rr == 0) {
                prop_soft_to_labels(soft, gh, gw, v.n_labels, R->cfg.patch, w, h, labels);
                rr = image_write_png_index(png, w, h, labels, R->palette);
            }
        }
        free(png);
        if (rr < 0) goto out;
        progress_add(&R->prog, 1);
    }
    if (commit_sequence(R, partial, final) < 0) goto out;
    rc = 0;
out:
    if (rc < 0 && kc_exists(partial)) { /* (a full disk, say): the sequence is redone from scratch anyway */
        char msg[2048];
        snprintf(msg, sizeof msg, "%s", kc_error());
        remove_flat_dir(partial);
        kc_set_error(msg);
    }
    prop_free(&v);
    free(first);
    free(small);
    free(labels);
    free(feat);
    free(soft);
    free(final);
    free(partial);
    free(apath);
    return rc;
}

/* Keeps only the shard's slice of the sequences (whole videos, the slice rule of every stage). */
static void select_shard(const kc_shard *shard, char **seqs, int *n_seq)
{
    if (!shard_active(shard)) return;
    int *keep = kc_malloc((size_t)*n_seq * sizeof *keep), m = 0;
    shard_select(shard, (const char *const *)seqs, *n_seq, keep);
    for (int s = 0; s < *n_seq; s++) {
        if (keep[s]) seqs[m++] = seqs[s];
        else free(seqs[s]);
    }
    *n_seq = m;
    free(keep);
}

/* The text of OUT/propagate.json: the settings that determine the PNGs. */
static char *settings_json(const prop_run_config *c, int patch, const char *features_hash)
{
    return kc_strfmt("{\n \"stage\": \"kc-propagate\",\n \"code_version\": \"%s\",\n \"features\": \"%s\",\n"
                     " \"features_content_hash\": \"%s\",\n \"kind\": \"%s\",\n \"split\": \"%s\",\n"
                     " \"window\": %d,\n \"topk\": %d,\n \"temperature\": %.17g,\n \"context\": %d,\n"
                     " \"patch\": %d,\n \"protocol\": \"DINO eval_video_segmentation (first frame + context "
                     "recent frames, exp(cos/T), window, top-k, bilinear x patch, min-max, argmax, "
                     "nearest to the original size)\"\n}\n",
                     KC_VERSION, c->features, features_hash ? features_hash : "", c->kind, c->split, c->prop.window,
                     c->prop.topk, c->prop.temperature, c->prop.context, patch);
}

/* The upsampling factor: the patch the features cache records (the grid times it is the image the
 * features saw), else c->prop.patch; a --patch that disagrees with the cache's is refused. */
static int cache_patch(const cache_reader *r, const prop_run_config *c, int *patch)
{
    const char *ps = cache_attr(r, "patch");
    *patch = c->prop.patch;
    if (!ps) return 0;
    char *end;
    long v = strtol(ps, &end, 10);
    if (end == ps || *end || v < 1 || v > 64) return kc_fail("%s: bad 'patch' attribute '%s' (1..64)", r->path, ps);
    if (c->patch_given && v != c->prop.patch)
        return kc_fail("%s: features of %ld-pixel patches, but --patch %d (leave --patch out: the cache's is used)",
                       r->path, v, c->prop.patch);
    *patch = (int)v;
    return 0;
}

/* kc-davis's outputs: global_results-<split>.csv and .json, per-sequence_results-<split>.csv. */
static int is_davis_output(const char *name)
{
    size_t l = strlen(name);
    int csv = l > 4 && !strcmp(name + l - 4, ".csv"), json = l > 5 && !strcmp(name + l - 5, ".json");
    return (!strncmp(name, "global_results-", 15) && (csv || json)) ||
           (!strncmp(name, "per-sequence_results-", 21) && csv);
}

/* 1 when dir is a folder of PNG files only (a sequence's results; empty counts), else 0. */
static int is_results_dir(const char *dir)
{
    struct stat st;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) return 0;
    DIR *d = opendir(dir);
    if (!d) return 0;
    int only_png = 1;
    struct dirent *e;
    while (only_png && (e = readdir(d))) {
        const char *n = e->d_name;
        if (!strcmp(n, ".") || !strcmp(n, "..")) continue;
        size_t l = strlen(n);
        char *p = kc_strfmt("%s/%s", dir, n);
        only_png = l > 4 && !strcmp(n + l - 4, ".png") && lstat(p, &st) == 0 && S_ISREG(st.st_mode);
        free(p);
    }
    closedir(d);
    return only_png;
}

static int ends_with_partial(const char *name)
{
    size_t l = strlen(name);
    return l > 8 && !strcmp(name + l - 8, ".partial");
}

/* The results in OUT: with discard 0, counts the finished sequences (folders of PNGs, not
 * <seq>.partial); with discard 1, removes them and kc-davis's outputs, and returns how many
 * sequences went.  A finished sequence is first renamed to <seq>.partial, so that a kill in between
 * never leaves a half-removed folder that looks finished.  Partial sequences stay (each run clears
 * its own before writing one; a run of other settings still writing one stops at its commit with
 * its own message), and so do other files and folders (propagate.json, lock files, anything not of
 * PNGs).  -1 with the error set. */
static int results_in(const char *out, int discard)
{
    DIR *d = opendir(out);
    if (!d) return kc_fail("%s: cannot open (%s)", out, strerror(errno));
    int n = 0, rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        const char *name = e->d_name;
        if (name[0] == '.') continue; /* ".", "..", lock files */
        char *p = kc_strfmt("%s/%s", out, name);
        if (discard && is_davis_output(name)) {
            if (unlink(p) < 0 && errno != ENOENT) rc = kc_fail("%s: cannot remove (%s)", p, strerror(errno));
        } else if (is_results_dir(p)) {
            int finished = !ends_with_partial(name);
            n += finished;
            if (discard && finished) {
                char *gone = kc_strfmt("%s.partial", p);
                if (kc_exists(gone)) rc = remove_flat_dir(gone);
                if (rc == 0 && rename(p, gone) < 0)
                    rc = kc_fail("%s: cannot rename to %s (%s)", p, gone, strerror(errno));
                if (rc == 0) rc = remove_flat_dir(gone);
                free(gone);
            }
        }
        free(p);
    }
    closedir(d);
    return rc < 0 ? -1 : n;
}

/* Under the commit lock: records settings as OUT/propagate.json (spath).  Other settings' results
 * are never mixed in: a folder that records other settings (or none) is taken over when it holds
 * no finished sequence, with replace once its results are discarded, and else refused. */
static int record_settings(const prop_run_config *c, const char *spath, const char *settings)
{
    if (settings_recorded(spath, settings)) return 0;
    int finished = results_in(c->out, 0);
    if (finished < 0) return -1;
    if (finished > 0 && !c->replace && kc_exists(spath))
        return kc_fail("%s: %s holds results of other settings or features; use another --out or remove it, or "
                       "pass --replace to redo them", spath, c->out);
    if (finished > 0 && !c->replace)
        return kc_fail("%s holds results of unknown settings (no propagate.json); use another --out or remove them, "
                       "or pass --replace to redo them", c->out);
    /* their kc-davis scores go too, even with no finished sequence left */
    KC_TRY(results_in(c->out, 1));
    if (finished > 0)
        kc_info("--replace: discarded %d sequence%s of other settings or features in %s", finished,
                finished == 1 ? "" : "s", c->out);
    return kc_write_file_atomic(spath, settings, strlen(settings));
}

int prop_run(const prop_run_config *c)
{
    double t0 = kc_now();
    run R;
    memset(&R, 0, sizeof R);
    R.kind = c->kind;
    R.root = c->davis;
    R.out = c->out;
    R.cfg = c->prop;
    char **seqs = NULL, ***frames = NULL, *settings = NULL, *spath = NULL;
    int n_seq = 0, *n_frames = NULL, rc = -1;
    kc_lock *lock = NULL;
    if (cache_open(&R.cache, c->features, CACHE_FORMAT_FEATURES) < 0 || shard_check_input(&c->shard, &R.cache) < 0)
        goto done;
    if (cache_patch(&R.cache, c, &R.cfg.patch) < 0) goto done;
    if (davis_read_split(R.root, c->split, &seqs, &n_seq) < 0) goto done;
    image_davis_palette(R.palette);
    select_shard(&c->shard, seqs, &n_seq);
    settings = settings_json(c, R.cfg.patch, cache_content_hash(&R.cache));

    /* one run per results folder (kc-davis takes the same lock); a shard's lock is its own, as
     * shards write distinct sequences of the same folder at once by design */
    char lock_name[64];
    snprintf(lock_name, sizeof lock_name, "propagate-%d-of-%d", c->shard.index, c->shard.count);
    if (kc_lock_folder(&lock, R.out, shard_active(&c->shard) ? lock_name : NULL) < 0) goto done;
    char *hint = kc_strfmt("finished sequences are kept in %s; rerun the same command to resume", R.out);
    kc_on_interrupt(hint);
    free(hint);
    spath = kc_strfmt("%s/propagate.json", R.out);
    R.settings = settings;
    R.spath = spath;
    kc_lock *commit;
    if (commit_lock(R.out, &commit) < 0) goto done;
    int recorded = record_settings(c, spath, settings);
    kc_lock_release(commit);
    if (recorded < 0) goto done;

    /* frames of each sequence */
    frames = kc_calloc(n_seq, sizeof *frames);
    n_frames = kc_calloc(n_seq, sizeof *n_frames);
    long total = 0;
    for (int s = 0; s < n_seq; s++) {
        char *dir = davis_image_dir(R.root, seqs[s]);
        int lr = davis_list_frames(dir, ".jpg", &frames[s], &n_frames[s]);
        free(dir);
        if (lr < 0) goto done;
        total += n_frames[s];
    }
    progress_init(&R.prog, "propagate", total, "frames");
    int kept = 0;
    for (int s = 0; s < n_seq; s++) {
        char *final = kc_strfmt("%s/%s", R.out, seqs[s]);
        int finished = kc_exists(final);
        free(final);
        if (finished) {
            progress_skip(&R.prog, n_frames[s]);
            kept++;
        } else if (propagate_sequence(&R, seqs[s], frames[s], n_frames[s]) < 0) {
            goto done;
        }
    }
    progress_end(&R.prog);
    /* (a run that only kept sequences has committed nothing: the folder must still be its own) */
    if (commit_lock(R.out, &commit) < 0) goto done;
    recorded = settings_recorded(spath, settings);
    kc_lock_release(commit);
    if (!recorded) {
        kc_fail("%s: another run replaced the results in %s (other settings or features) while this one ran", spath,
                R.out);
        goto done;
    }
    if (kept) kc_info("%d of %d sequence%s %s already done (kept)", kept, n_seq, kc_s(n_seq), kept == 1 ? "was" : "were");
    char took[32];
    progress_fmt_time(kc_now() - t0, took, sizeof took);
    kc_info("%d sequence%s in %s", n_seq, kc_s(n_seq), took);
    rc = 0;
done:
    for (int s = 0; frames && s < n_seq; s++) davis_free_names(frames[s], n_frames[s]);
    free(frames);
    free(n_frames);
    davis_free_names(seqs, n_seq);
    free(settings);
    free(spath);
    cache_close(&R.cache);
    kc_lock_release(lock);
    return rc;
}
