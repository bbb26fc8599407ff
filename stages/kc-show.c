/* stages/kc-show.c — overlay PNGs of one setting's masks on the original images.
 *
 *   kc-show --masks FILE --setting ID --images DATASET --out DIR [--first N]
 *
 * For each image of the masks cache's index (in index order, the first N with --first), finds
 * the image with the same id in DATASET, maps /masks/<ID>/<image id> back to pixels under the
 * cache's policy (root attributes "policy" and "patch": a grid must be the one they give the image,
 * e.g. 35x35 for patch 14 under square480), and writes DIR/<image id>.png (a DAVIS id seq/frame
 * becomes DIR/seq/frame.png).  An image whose file changed since extraction (its sha256 is not the
 * one the cache recorded, pipeline/extract/image_check.h) is refused, naming it.
 * An attention-mass setting (attn-mass<m>: a (heads, grid_h, grid_w) stack per image) is drawn as
 * one panel per head, three panels a row, each labelled with its head.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/dataset.h"
#include "decoders/attn_mass.h"
#include "eval/figures/overlay.h"
#include "pipeline/images/grid_map.h"
#include "pipeline/cache/cache.h"
#include "pipeline/extract/image_check.h"
#include "pipeline/images/image.h"
#include "pipeline/kc.h"
#include "pipeline/opts.h"
#include "pipeline/progress.h"
#include "pipeline/images/resize.h"

static const char usage[] =
    "usage: kc-show --masks FILE --setting ID --images DATASET --out DIR [--first N]\n"
    "\n"
    "Draws the masks of one decoder setting over the original images: each label in its own\n"
    "colour (blended), its contour opaque, and the setting id and image id written at the top\n"
    "left.  Writes one PNG per image of the masks cache (DIR/<image id>.png).\n"
    "\n"
    "  --masks FILE      a masks cache (kc-decode --out, or kc-refine's pixel masks)\n"
    "  --setting ID      a setting id under /masks, e.g. t0.15-bin-mean-corners-n3\n"
    "  --images DATASET  where the images are: voc:ROOT:SPLIT, davis:ROOT:SPLIT, dir:DIR, list:FILE\n"
    "                    " DATASET_LIST_RULES
    "                    " DATASET_LIST_RULES2
    "  --out DIR         output folder (created)\n"
    "  --first N         only the first N images of the cache's index\n"
    "\n"
    "example:\n"
    "  kc-show --masks cache/dino/voc12-val/masks.h5 --setting t0.15-bin-mean-corners-n3 \\\n"
    "          --images voc:/data/VOCdevkit/VOC2012:val --first 20 --out shows/\n";

static int read_first(const opts_option *opt, const char *v)
{
    char *end;
    long *first = opt->target;
    *first = strtol(v, &end, 10);
    if (end == v || *end || *first <= 0) return kc_fail("--first needs a positive number, got '%s'", v);
    return 0;
}

static int parse_patch(const cache_reader *r, kc_policy pol, int *patch)
{
    const char *ps = cache_attr(r, "patch");
    *patch = 0;
    if (ps) {
        char *end;
        long v = strtol(ps, &end, 10);
        if (end == ps || *end || v <= 0 || v > 1024) return kc_fail("%s: bad 'patch' attribute '%s'", r->path, ps);
        *patch = (int)v;
    } else if (pol == POLICY_NATIVE16) {
        return kc_fail("%s: native16 masks without a 'patch' attribute", r->path);
    }
    return 0;
}

/* The image of row ix of the masks cache, which must have the size the masks were made from. */
static int load_image(const cache_reader *r, int ix, const char *img_path, kc_image *im)
{
    KC_TRY(image_load_rgb(img_path, im));
    if (im->h != r->index.size[2 * ix] || im->w != r->index.size[2 * ix + 1])
        return kc_fail("%s: %dx%d pixels, but the masks of image %s in %s were made from %dx%d (wrong --images?)",
                       img_path, im->w, im->h, r->index.ids[ix], r->path, r->index.size[2 * ix + 1], r->index.size[2 * ix]);
    return 0;
}

/* Writes DIR/<id>.png (a DAVIS id seq/frame: DIR/seq/frame.png), making its folder. */
static int write_overlay(const char *out_dir, const char *id, const kc_image *im)
{
    char *out = kc_strfmt("%s/%s.png", out_dir, id), *dir = kc_strdup(out);
    *strrchr(dir, '/') = 0;
    int rc = kc_mkdirs(dir) < 0 ? -1 : image_write_png_rgb(out, im);
    free(out);
    free(dir);
    return rc;
}

/* An attention-mass stack: one panel per head (three a row), each head's mask in its own colour. */
static int show_stack(const cache_reader *r, const char *setting, int ix, const char *img_path, kc_policy pol,
                      int patch, const char *out_dir)
{
    const char *id = r->index.ids[ix];
    char *dset = kc_strfmt("/masks/%s/%s", setting, id);
    uint8_t *stack = NULL, *labels = NULL;
    int heads, gh, gw, rc = -1;
    kc_image im = {0, 0, NULL}, canvas = {0, 0, NULL}, panel = {0, 0, NULL};
    if (cache_read_u8_stack(r, dset, &stack, &heads, &gh, &gw) < 0) goto done;
    if (gh != r->index.grid[2 * ix] || gw != r->index.grid[2 * ix + 1]) {
        kc_fail("%s: %s is %dx%d per head but /index/grid says %dx%d", r->path, dset, gw, gh, r->index.grid[2 * ix + 1],
                r->index.grid[2 * ix]);
        goto done;
    }
    if (load_image(r, ix, img_path, &im) < 0) goto done;
    if (grid_check_policy(dset, pol, patch, im.w, im.h, gh, gw) < 0) {
        kc_fail_prefix("%s", r->path);
        goto done;
    }
    const int cols = heads < 3 ? heads : 3, rows = (heads + cols - 1) / cols;
    const size_t W = (size_t)im.w, H = (size_t)im.h;
    canvas.w = (int)(W * cols);
    canvas.h = (int)(H * rows);
    canvas.rgb = kc_calloc((size_t)canvas.w * canvas.h * 3, 1);
    panel.w = im.w;
    panel.h = im.h;
    panel.rgb = kc_malloc(W * H * 3);
    labels = kc_malloc(W * H);
    for (int h = 0; h < heads; h++) {
        if (overlay_grid_to_pixels(stack + (size_t)h * gh * gw, gh, gw, pol, patch, im.w, im.h, labels) < 0) {
            kc_fail_prefix("%s: %s", r->path, dset);
            goto done;
        }
        for (size_t k = 0; k < W * H; k++) labels[k] = labels[k] ? (uint8_t)(h + 1) : 0;
        memcpy(panel.rgb, im.rgb, W * H * 3);
        overlay_draw_masks(&panel, labels, 0.45f);
        char head[32];
        snprintf(head, sizeof head, "head %d", h);
        const char *lines[3] = {setting, id, head};
        overlay_draw_text(&panel, lines, 3);
        const size_t x0 = (size_t)(h % cols) * W, y0 = (size_t)(h / cols) * H;
        for (size_t y = 0; y < H; y++)
            memcpy(canvas.rgb + ((y0 + y) * canvas.w + x0) * 3, panel.rgb + y * W * 3, W * 3);
    }
    rc = write_overlay(out_dir, id, &canvas);
done:
    free(dset);
    free(stack);
    free(labels);
    free(canvas.rgb);
    free(panel.rgb);
    image_free(&im);
    return rc;
}

/* Draws one image; returns -1 with a message naming the file on failure. */
static int show_one(const cache_reader *r, const char *setting, int ix, const char *img_path, kc_policy pol,
                    int patch, const char *out_dir)
{
    const char *id = r->index.ids[ix];
    char *dset = kc_strfmt("/masks/%s/%s", setting, id);
    uint8_t *grid = NULL, *labels = NULL;
    int gh, gw, rc = -1;
    kc_image im = {0, 0, NULL};
    if (!cache_has(r, dset)) {
        kc_fail("%s: no mask %s", r->path, dset);
        goto done;
    }
    if (cache_read_u8(r, dset, &grid, &gh, &gw) < 0) goto done;
    /* kc-refine's caches hold pixel masks at the image's size (/index/size), the others patch grids */
    const int refined = cache_attr(r, "refine") != NULL;
    const int32_t *want = refined ? r->index.size + 2 * ix : r->index.grid + 2 * ix;
    if (gh != want[0] || gw != want[1]) {
        kc_fail("%s: %s is %dx%d but /index/%s says %dx%d", r->path, dset, gw, gh, refined ? "size" : "grid", want[1],
                want[0]);
        goto done;
    }
    if (load_image(r, ix, img_path, &im) < 0) goto done;
    if (!refined && grid_check_policy(dset, pol, patch, im.w, im.h, gh, gw) < 0) {
        kc_fail_prefix("%s", r->path); /* (another patch's or rule's grid maps to the wrong pixels) */
        goto done;
    }
    if (refined) {
        labels = grid;
        grid = NULL;
    } else {
        labels = kc_malloc((size_t)im.w * im.h);
        if (overlay_grid_to_pixels(grid, gh, gw, pol, patch, im.w, im.h, labels) < 0) {
            kc_fail_prefix("%s: %s", r->path, dset);
            goto done;
        }
    }
    overlay_draw_masks(&im, labels, 0.45f);
    const char *lines[2] = {setting, id};
    overlay_draw_text(&im, lines, 2);
    rc = write_overlay(out_dir, id, &im);
done:
    free(dset);
    free(grid);
    free(labels);
    image_free(&im);
    return rc;
}

int main(int argc, char **argv)
{
    kc_set_prog("kc-show");
    kc_set_cmdline(argc, argv);
    const char *masks = NULL, *setting = NULL, *images = NULL, *out_dir = NULL;
    long first = -1;
    const opts_option options[] = {
        {"--masks", .value = &masks}, {"--setting", .value = &setting}, {"--images", .value = &images},
        {"--out", .value = &out_dir}, {"--first", .read = read_first, .target = &first}, {0}};
    const opts_cli cli = {.usage = usage, .options = options, .syntax = OPTS_PAIRS_ARGS};
    int rc = opts_parse(&cli, argc, argv);
    if (rc < 0) kc_die();
    if (rc != OPTS_OK) exit(opts_usage(&cli, rc));
    if (!masks || !setting || !images || !out_dir)
        kc_die_msg("--masks, --setting, --images and --out are required (see --help)");
    double t0 = kc_now();

    cache_reader r;
    /* (checked here too: a failing cache_open currently deadlocks in cache_close, see report) */
    if (!kc_exists(masks)) kc_die_msg("%s: no such file", masks);
    if (cache_open(&r, masks, CACHE_FORMAT_MASKS) < 0) kc_die();
    const char *pol_name = cache_attr(&r, "policy");
    kc_policy pol;
    int patch;
    if (!pol_name) kc_die_msg("%s: no 'policy' attribute (cannot map the grid back to pixels)", masks);
    if (policy_parse(pol_name, &pol) < 0) {
        kc_fail_prefix("%s", masks);
        kc_die();
    }
    if (parse_patch(&r, pol, &patch) < 0) kc_die();
    char **settings = NULL;
    int n_settings = 0, found = 0;
    if (cache_list(&r, "/masks", &settings, &n_settings) < 0) kc_die();
    for (int i = 0; i < n_settings; i++) found |= strcmp(settings[i], setting) == 0;
    if (!found) {
        char avail[512] = "";
        for (int i = 0; i < n_settings && strlen(avail) < 400; i++)
            snprintf(avail + strlen(avail), sizeof avail - strlen(avail), "%s%s", i ? ", " : "", settings[i]);
        kc_die_msg("%s: no setting '%s' (it has %d: %s%s)", masks, setting, n_settings, avail,
                   n_settings > 0 && strlen(avail) >= 400 ? ", ..." : "");
    }
    for (int i = 0; i < n_settings; i++) free(settings[i]);
    free(settings);

    kc_dataset ds;
    if (dataset_open(&ds, images) < 0) kc_die();
    int n = r.index.n;
    if (first > 0 && first < n) n = (int)first;
    /* every image must be found, and be the file the masks were made from, before any is drawn */
    int *where = kc_malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++) {
        where[i] = -1;
        for (int j = 0; j < ds.n && where[i] < 0; j++)
            if (!strcmp(ds.ids[j], r.index.ids[i])) where[i] = j;
        if (where[i] < 0)
            kc_die_msg("image %s of %s is not in %s (wrong --images?)", r.index.ids[i], masks, images);
        char *dset = kc_strfmt("/masks/%s/%s", setting, r.index.ids[i]);
        if (image_check_unchanged(&r, dset, ds.paths[where[i]]) < 0) kc_die();
        free(dset);
    }
    if (kc_mkdirs(out_dir) < 0) kc_die();
    progress p;
    progress_init(&p, "show", n, "images");
    for (int i = 0; i < n; i++) {
        if ((attn_mass_is_setting(setting) ? show_stack : show_one)(&r, setting, i, ds.paths[where[i]], pol, patch,
                                                                   out_dir) < 0)
            kc_die();
        progress_add(&p, 1);
    }
    progress_end(&p);
    char took[32];
    progress_fmt_time(kc_now() - t0, took, sizeof took);
    kc_info("%d overlay%s of %s (%s) in %s, written to %s/ in %s", n, kc_s(n), setting, pol_name, images, out_dir,
            took);
    free(where);
    dataset_free(&ds);
    cache_close(&r);
    return 0;
}
