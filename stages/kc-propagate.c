/* stages/kc-propagate.c — DINO's DAVIS-2017 label propagation from a features cache.
 *
 *   kc-propagate --features FILE --davis ROOT --split NAME --out DIR [--kind tokens|keys]
 *                [--window 12] [--topk 5] [--temperature 0.1] [--context 7] [--patch 16]
 *
 * For every sequence of ROOT/ImageSets/2017/NAME.txt: the first frame's annotation is copied,
 * every later frame gets the propagated labels (eval/propagate.h), as palette PNGs
 * DIR/<seq>/<frame>.png, the layout kc-davis and the official evaluator read.  Each sequence is
 * written into DIR/<seq>.partial/ and renamed when complete: a rerun skips finished sequences.
 * DIR/propagate.json records the settings; a DIR holding results of other settings is refused.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "datasets/davis_gt.h"
#include "eval/propagate.h"
#include "pipeline/cache/cache.h"
#include "pipeline/images/image.h"
#include "pipeline/kc.h"
#include "pipeline/lock.h"
#include "pipeline/progress.h"
#include "pipeline/cache/shard.h"

static void usage(int status)
{
    fprintf(status ? stderr : stdout,
            "usage: kc-propagate --features FILE --davis ROOT --split NAME --out DIR [--kind tokens|keys]\n"
            "                    [--window 12] [--topk 5] [--temperature 0.1] [--context 7] [--patch 16]\n"
            "                    [--shard i/n]\n"
            "\n"
            "Propagates each DAVIS sequence's first-frame annotation through the video with the frozen\n"
            "features of FILE (a kc-extract cache with ids <sequence>/<frame>), DINO's protocol: context =\n"
            "the first frame and the --context most recent frames, affinity exp(cos / temperature) within\n"
            "+-window patches, the top-k sources, x patch bilinear upsampling, per-channel min-max, argmax.\n"
            "Writes palette PNGs DIR/<sequence>/<frame>.png and DIR/propagate.json (the settings).\n"
            "Finished sequences are kept: rerunning the command resumes.  Default kind: tokens.\n"
            "--shard i/n propagates only slice i of n of the sequences (whole videos, pipeline/cache/shard.h);\n"
            "the n shards may run at once into the same DIR, which then holds every sequence.\n"
            "\n"
            "example:\n"
            "  kc-propagate --features cache/dino/davis17-val/tokens.h5 --davis /data/DAVIS --split val \\\n"
            "               --out results/dino/davis17-val\n"
            "  kc-davis --results results/dino/davis17-val --davis /data/DAVIS --split val\n");
    exit(status);
}

static int parse_int(const char *opt, const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || end == s || v < -1000000 || v > 1000000) return kc_fail("%s %s: not an integer", opt, s);
    *out = (int)v;
    return 0;
}

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

typedef struct run {
    cache_reader cache;
    const char *kind, *root, *out;
    prop_config cfg;
    uint8_t palette[768];
    progress prog;
} run;

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

int main(int argc, char **argv)
{
    kc_set_prog("kc-propagate");
    kc_keep_freed_memory();
    kc_set_cmdline(argc, argv);
    run R;
    memset(&R, 0, sizeof R);
    prop_config_default(&R.cfg);
    const char *features = NULL, *split = NULL;
    R.kind = "tokens";
    kc_shard shard = KC_SHARD_NONE;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) usage(0);
        if (i + 1 >= argc) kc_die_msg("%s needs a value (see --help)", a);
        const char *val = argv[++i];
        if (!strcmp(a, "--features")) features = val;
        else if (!strcmp(a, "--davis")) R.root = val;
        else if (!strcmp(a, "--split")) split = val;
        else if (!strcmp(a, "--out")) R.out = val;
        else if (!strcmp(a, "--shard")) {
            if (shard_parse(val, &shard) < 0) kc_die();
        }
        else if (!strcmp(a, "--kind")) {
            if (strcmp(val, "tokens") && strcmp(val, "keys")) kc_die_msg("--kind %s: must be tokens or keys", val);
            R.kind = val;
        } else if (!strcmp(a, "--window")) {
            if (parse_int(a, val, &R.cfg.window) < 0) kc_die();
        } else if (!strcmp(a, "--topk")) {
            if (parse_int(a, val, &R.cfg.topk) < 0) kc_die();
        } else if (!strcmp(a, "--context")) {
            if (parse_int(a, val, &R.cfg.context) < 0) kc_die();
        } else if (!strcmp(a, "--patch")) {
            if (parse_int(a, val, &R.cfg.patch) < 0) kc_die();
        } else if (!strcmp(a, "--temperature")) {
            char *end;
            R.cfg.temperature = strtod(val, &end);
            if (*end || end == val) kc_die_msg("--temperature %s: not a number", val);
        } else
            kc_die_msg("unknown option %s (see --help)", a);
    }
    if (!features || !R.root || !split || !R.out) kc_die_msg("--features, --davis, --split and --out are required (see --help)");
    if (prop_config_check(&R.cfg) < 0) kc_die();
    double t0 = kc_now();
    if (cache_open(&R.cache, features, CACHE_FORMAT_FEATURES) < 0 || shard_check_input(&shard, &R.cache) < 0) kc_die();
    char **seqs;
    int n_seq;
    if (davis_read_split(R.root, split, &seqs, &n_seq) < 0) kc_die();
    image_davis_palette(R.palette);
    if (shard_active(&shard)) { /* this shard's sequences: whole videos, the slice rule of every stage */
        int *keep = kc_malloc((size_t)n_seq * sizeof *keep), m = 0;
        shard_select(&shard, (const char *const *)seqs, n_seq, keep);
        for (int s = 0; s < n_seq; s++) {
            if (keep[s]) seqs[m++] = seqs[s];
            else free(seqs[s]);
        }
        n_seq = m;
        free(keep);
    }

    /* the settings, recorded beside the PNGs; other settings' results are never mixed in */
    const char *hash = cache_content_hash(&R.cache);
    char *settings = kc_strfmt("{\n \"stage\": \"kc-propagate\",\n \"code_version\": \"%s\",\n \"features\": \"%s\",\n"
                               " \"features_content_hash\": \"%s\",\n \"kind\": \"%s\",\n \"split\": \"%s\",\n"
                               " \"window\": %d,\n \"topk\": %d,\n \"temperature\": %.17g,\n \"context\": %d,\n"
                               " \"patch\": %d,\n \"protocol\": \"DINO eval_video_segmentation (first frame + context "
                               "recent frames, exp(cos/T), window, top-k, bilinear x patch, min-max, argmax, "
                               "nearest to the original size)\"\n}\n",
                               KC_VERSION, features, hash ? hash : "", R.kind, split, R.cfg.window, R.cfg.topk,
                               R.cfg.temperature, R.cfg.context, R.cfg.patch);
    /* one run per results folder (kc-davis takes the same lock); a shard's lock is its own, as
     * shards write distinct sequences of the same folder at once by design */
    kc_lock *lock;
    char lock_name[64];
    snprintf(lock_name, sizeof lock_name, "propagate-%d-of-%d", shard.index, shard.count);
    if (kc_lock_folder(&lock, R.out, shard_active(&shard) ? lock_name : NULL) < 0) kc_die();
    char *hint = kc_strfmt("finished sequences are kept in %s; rerun the same command to resume", R.out);
    kc_on_interrupt(hint);
    free(hint);
    char *spath = kc_strfmt("%s/propagate.json", R.out);
    if (kc_exists(spath)) {
        uint8_t *old;
        size_t len;
        if (kc_read_file(spath, &old, &len) < 0) kc_die();
        if (len != strlen(settings) || memcmp(old, settings, len) != 0) {
            /* another run's settings: only acceptable when it finished no sequence */
            int finished = 0;
            for (int s = 0; s < n_seq; s++) {
                char *f = kc_strfmt("%s/%s", R.out, seqs[s]);
                finished |= kc_exists(f);
                free(f);
            }
            if (finished)
                kc_die_msg("%s: %s holds results of other settings or features; use another --out or remove it",
                           spath, R.out);
            if (kc_write_file_atomic(spath, settings, strlen(settings)) < 0) kc_die();
        }
        free(old);
    } else if (!shard_active(&shard)) {
        if (kc_write_file_atomic(spath, settings, strlen(settings)) < 0) kc_die();
    } else {
        /* shards may start at once: each writes its own copy, then renames it over the same name */
        char *mine = kc_strfmt("%s.shard-%d", spath, shard.index);
        if (kc_write_file_atomic(mine, settings, strlen(settings)) < 0) kc_die();
        if (rename(mine, spath) < 0) kc_die_msg("%s: cannot rename to %s (%s)", mine, spath, strerror(errno));
        free(mine);
    }

    /* frames of each sequence */
    char ***frames = kc_calloc(n_seq, sizeof *frames);
    int *n_frames = kc_calloc(n_seq, sizeof *n_frames);
    long total = 0;
    for (int s = 0; s < n_seq; s++) {
        char *dir = davis_image_dir(R.root, seqs[s]);
        if (davis_list_frames(dir, ".jpg", &frames[s], &n_frames[s]) < 0) kc_die();
        free(dir);
        total += n_frames[s];
    }
    progress_init(&R.prog, "propagate", total, "frames");
    int done = 0;
    for (int s = 0; s < n_seq; s++) {
        char *final = kc_strfmt("%s/%s", R.out, seqs[s]);
        if (kc_exists(final)) {
            progress_skip(&R.prog, n_frames[s]);
            done++;
        } else if (propagate_sequence(&R, seqs[s], frames[s], n_frames[s]) < 0) {
            kc_die();
        }
        free(final);
    }
    progress_end(&R.prog);
    if (done) kc_info("%d of %d sequences were already done (kept)", done, n_seq);
    char took[32];
    progress_fmt_time(kc_now() - t0, took, sizeof took);
    kc_info("%d sequences in %s", n_seq, took);
    for (int s = 0; s < n_seq; s++) davis_free_names(frames[s], n_frames[s]);
    free(frames);
    free(n_frames);
    davis_free_names(seqs, n_seq);
    free(settings);
    free(spath);
    cache_close(&R.cache);
    kc_lock_release(lock);
    return 0;
}
