/* eval/propagate_run.c — see propagate_run.h.
 *
 * prop_run: open the features, read the split (and take the shard's slice), take OUT's lock,
 * check or record OUT/propagate.json (settings_json, record_settings), list every sequence's
 * frames, then propagate_sequence each sequence not finished yet.
 */
#include "eval/propagate_run.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "datasets/davis_gt.h"
#include "eval/propagate.h"
#include "pipeline/cache/cache.h"
#include "pipeline/cache/shard.h"
#include "pipeline/images/image.h"
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
    prop_config cfg;
    uint8_t palette[768];
    progress prog;
} run;

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
            prop_resize_nearest(first, w, h, small, gw, gh);
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
    if (rename(partial, final) < 0) {
        kc_fail("%s: cannot rename to %s (%s)", partial, final, strerror(errno));
        goto out;
    }
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
static char *settings_json(const prop_run_config *c, const char *features_hash)
{
    return kc_strfmt("{\n \"stage\": \"kc-propagate\",\n \"code_version\": \"%s\",\n \"features\": \"%s\",\n"
                     " \"features_content_hash\": \"%s\",\n \"kind\": \"%s\",\n \"split\": \"%s\",\n"
                     " \"window\": %d,\n \"topk\": %d,\n \"temperature\": %.17g,\n \"context\": %d,\n"
                     " \"patch\": %d,\n \"protocol\": \"DINO eval_video_segmentation (first frame + context "
                     "recent frames, exp(cos/T), window, top-k, bilinear x patch, min-max, argmax, "
                     "nearest to the original size)\"\n}\n",
                     KC_VERSION, c->features, features_hash ? features_hash : "", c->kind, c->split, c->prop.window,
                     c->prop.topk, c->prop.temperature, c->prop.context, c->prop.patch);
}

/* Records settings as OUT/propagate.json (spath); other settings' results are never mixed in: a
 * file of other settings is replaced only when none of the sequences is finished. */
static int record_settings(const prop_run_config *c, const char *spath, const char *settings, char *const *seqs,
                           int n_seq)
{
    if (kc_exists(spath)) {
        uint8_t *old;
        size_t len;
        if (kc_read_file(spath, &old, &len) < 0) return -1;
        int rc = 0;
        if (len != strlen(settings) || memcmp(old, settings, len) != 0) {
            /* another run's settings: only acceptable when it finished no sequence */
            int finished = 0;
            for (int s = 0; s < n_seq; s++) {
                char *f = kc_strfmt("%s/%s", c->out, seqs[s]);
                finished |= kc_exists(f);
                free(f);
            }
            if (finished)
                rc = kc_fail("%s: %s holds results of other settings or features; use another --out or remove it",
                             spath, c->out);
            else
                rc = kc_write_file_atomic(spath, settings, strlen(settings));
        }
        free(old);
        return rc;
    }
    if (!shard_active(&c->shard)) return kc_write_file_atomic(spath, settings, strlen(settings));
    /* shards may start at once: each writes its own copy, then renames it over the same name */
    char *mine = kc_strfmt("%s.shard-%d", spath, c->shard.index);
    int rc = kc_write_file_atomic(mine, settings, strlen(settings));
    if (rc == 0 && rename(mine, spath) < 0)
        rc = kc_fail("%s: cannot rename to %s (%s)", mine, spath, strerror(errno));
    free(mine);
    return rc;
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
    if (davis_read_split(R.root, c->split, &seqs, &n_seq) < 0) goto done;
    image_davis_palette(R.palette);
    select_shard(&c->shard, seqs, &n_seq);
    settings = settings_json(c, cache_content_hash(&R.cache));

    /* one run per results folder (kc-davis takes the same lock); a shard's lock is its own, as
     * shards write distinct sequences of the same folder at once by design */
    char lock_name[64];
    snprintf(lock_name, sizeof lock_name, "propagate-%d-of-%d", c->shard.index, c->shard.count);
    if (kc_lock_folder(&lock, R.out, shard_active(&c->shard) ? lock_name : NULL) < 0) goto done;
    char *hint = kc_strfmt("finished sequences are kept in %s; rerun the same command to resume", R.out);
    kc_on_interrupt(hint);
    free(hint);
    spath = kc_strfmt("%s/propagate.json", R.out);
    if (record_settings(c, spath, settings, seqs, n_seq) < 0) goto done;

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
    if (kept) kc_info("%d of %d sequences were already done (kept)", kept, n_seq);
    char took[32];
    progress_fmt_time(kc_now() - t0, took, sizeof took);
    kc_info("%d sequences in %s", n_seq, took);
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
