/* stages/kc-decode.c — normalized-cut decoding of a features cache into a masks cache.
 *
 *   kc-decode --features FILE [--kind keys|tokens] (--setting ID | --grid FILE) [--shard i/n] --out masks.h5
 *
 * Writes /masks/<setting id>/<image id> uint8 (grid_h, grid_w) (0 background, r the mask of
 * round r) with float attributes lambda2 and eigengap (one per round, NaN for a round not run)
 * and int degenerate, int knife_edge (a decision too close to call: docs/ties.md) and float
 * knife_margin (the smallest decision margin over max|x|); /index copied from the features cache; provenance: the features cache's
 * root attributes plus features (its path), features_content_hash, feature_kind, settings (the
 * number) and the command line.  Work is shared across settings as decoders/grid.h describes.
 * Images of a batch (16) are decoded in parallel (OpenMP), one image per thread; the output does
 * not depend on the number of threads.  Resumable and atomic (pieces in OUT.partial/).
 *
 * --kind attn (class attention, kc-extract --features attn) takes one setting attn-mass<m>
 * (default attn-mass0.60; decoders/attn_mass.h): /masks/attn-mass<m>/<id> is then a uint8
 * (heads, grid_h, grid_w) stack, 1 = kept, one mask per head, with attributes mass (float) and
 * knife_edge_heads (int, heads whose cut was within 1e-6 of 1 - m); see docs/attention-baseline.md.
 *
 *   kc-decode --check-setting ID [--grid FILE]
 *
 * checks a user's SETTING before the pipeline runs anything: exit 0 and silent when ID is a decoder
 * setting id --setting accepts, otherwise exit 1 and one line saying why, with the nearest id of
 * FILE (edit distance, decoders/grid.h ncut_setting_check).  `best` and attn-mass<m> are refused.
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/attn_mass.h"
#include "decoders/grid.h"
#include "pipeline/cache/cache.h"
#include "pipeline/cache/derive.h"
#include "pipeline/kc.h"
#include "pipeline/opts.h"
#include "pipeline/progress.h"
#include "pipeline/cache/shard.h"

enum { BATCH = 16 };

static const char usage[] =
    "usage: kc-decode --features FILE [--kind keys|tokens] (--setting ID | --grid FILE) [--shard i/n]\n"
    "                 --out masks.h5\n"
    "       kc-decode --features FILE --kind attn [--setting attn-mass<m>] [--shard i/n] --out masks.h5\n"
    "       kc-decode --check-setting ID [--grid FILE]\n"
    "\n"
    "Finds objects without labels: a normalized cut of each image's patch graph (TokenCut /\n"
    "MaskCut style), for one decoder setting or every setting of a grid.\n"
    "\n"
    "  --features FILE  a features cache (kc-extract or kc-center output)\n"
    "  --kind K         keys (default), tokens, or attn (class attention: DINO's mass masks)\n"
    "  --setting ID     one setting, e.g. t0.20-bin-mean-seed-n1 (TokenCut) or\n"
    "                   t0.15-bin-mean-corners-n3 (MaskCut): tau-edges-split-foreground-masks\n"
    "  --grid FILE      every setting of a grid file (configs/sweep.ini: 144 settings)\n"
    "                   with --kind attn: attn-mass<m>, 0 < m <= 1 (default attn-mass0.60): per head\n"
    "                   the patches holding the top m of the attention mass, a (heads, h, w) stack\n"
    "  --out FILE       the masks cache to write (an interrupted run resumes from FILE.partial/)\n"
    "  --shard i/n      only slice i of n of the images (pipeline/cache/shard.h); join with kc-merge\n"
    "  --check-setting ID  decode nothing: exit 0 silently when ID is a setting id --setting takes,\n"
    "                   else exit 1 with one line saying why and the nearest id of --grid FILE\n"
    "                   (edit distance); `best` and attn-mass<m> are not decoder settings\n"
    "\n"
    "examples:\n"
    "  kc-decode --features cache/dino/voc12-val/centered.h5 --grid configs/sweep.ini \\\n"
    "            --out cache/dino/voc12-val/masks.h5\n"
    "  kc-decode --features keys.h5 --setting t0.20-bin-mean-seed-n1 --out one.h5\n"
    "  kc-decode --features attn.h5 --kind attn --setting attn-mass0.60 --out attn-masks.h5\n"
    "  kc-decode --check-setting t0.20-bin-mean-seed-n1 --grid configs/sweep.ini\n";

/* --check-setting ID [--grid FILE]: returns 0 when ID is a decoder setting id; dies with one line
 * otherwise (a broken grid file with its own line).  Decodes nothing, opens nothing else. */
static int check_setting(const char *id, const char *grid_path)
{
    ncut_grid grid = {0, NULL};
    if (grid_path && ncut_grid_load(&grid, grid_path) < 0) kc_die();
    int rc = ncut_setting_check(id, "SETTING", grid_path ? &grid : NULL, grid_path);
    ncut_grid_free(&grid);
    if (rc < 0) kc_die();
    return 0;
}

/* Opens the features cache, checks that it holds /features/<kind>, and takes the shard's slice. */
static void open_features(derive_input *in, const char *features, const char *kind, const kc_shard *shard)
{
    if (derive_open(in, features, CACHE_FORMAT_FEATURES, shard) < 0) kc_die();
    char *d0 = kc_strfmt("/features/%s/%s", kind, in->r.index.ids[0]);
    if (!cache_has(&in->r, d0)) {
        const char *held = cache_attr(&in->r, "feature_kinds");
        if (!strcmp(kind, "attn"))
            kc_die_msg("%s: no /features/attn (holds %s; extract the class attention with kc-extract --features attn)",
                       features, held ? held : "other features");
        kc_die_msg("%s: no /features/%s (choose --kind %s)", features, kind, strcmp(kind, "keys") ? "keys" : "tokens");
    }
    free(d0);
    derive_slice(in);
}

/* The masks cache's provenance (the features cache's, then what this run adds) and the atomic
 * finish: merges the pieces into out, frees w and closes the input. */
static void finish_masks(derive_input *in, cache_writer *w, const char *features, const char *kind, int n_settings,
                         const char *decoder, const char *out)
{
    cache_prov prov = {0, NULL, NULL};
    derive_prov(&prov, in);
    prov_set(&prov, "features", features);
    prov_set(&prov, "features_content_hash", in->hash);
    prov_set(&prov, "feature_kind", kind);
    prov_setf(&prov, "settings", "%d", n_settings);
    prov_set(&prov, "decoder", decoder);
    if (derive_finish(in, w, &prov, BATCH, out) < 0) kc_die();
}

/* --kind attn: DINO's attention-mass masks of a class-attention cache, one (heads, h, w) stack per
 * image (decoders/attn_mass.h).  Everything is checked before anything is written. */
static int decode_attn(const char *features, const char *kind, const char *setting, const char *grid_path,
                       const char *out, const char *shard_arg)
{
    double t0 = kc_now();
    if (strcmp(kind, "attn"))
        kc_die_msg("--setting %s decodes class attention: give --kind attn (and a cache from kc-extract --features attn)",
                   setting);
    if (grid_path) kc_die_msg("--kind attn takes one --setting attn-mass<m>, not --grid");
    if (!setting) setting = ATTN_MASS_DEFAULT;
    double mass;
    char id[32];
    if (!attn_mass_is_setting(setting))
        kc_die_msg("--kind attn: setting '%s' is not attn-mass<m> (e.g. attn-mass0.60)", setting);
    if (attn_mass_parse(setting, &mass, id) < 0) kc_die();
    kc_shard shard = KC_SHARD_NONE;
    if (shard_arg && shard_parse(shard_arg, &shard) < 0) kc_die();
    derive_input in;
    open_features(&in, features, "attn", &shard);
    cache_reader *const r = &in.r;
    char shard_s[32];
    const int n = r->index.n;
    const char *parts[] = {"kc-decode", KC_VERSION, features, in.hash, "attn", id, shard_str(&shard, shard_s)};
    char fp[65];
    cache_fingerprint(fp, 6 + shard_active(&shard), parts);
    int n_batches = (n + BATCH - 1) / BATCH;
    cache_writer w;
    if (cache_writer_open(&w, out, CACHE_FORMAT_MASKS, fp, n_batches) < 0) kc_die();
    kc_info("%d image%s, %s (class attention, mass %g)", n, kc_s(n), id, mass);
    progress p;
    progress_init(&p, "decode", n, "images");
    long knife_total = 0;
    for (int b = 0; b < n_batches; b++) {
        int i0, i1;
        if (!derive_batch_todo(&w, &p, b, BATCH, n, &i0, &i1)) continue;
        cache_piece *pc = cache_piece_new(&w, b);
        for (int i = i0; i < i1; i++) {
            char *dset = kc_strfmt("/features/attn/%s", r->index.ids[i]);
            float *attn = NULL;
            int heads, G, gh = r->index.grid[2 * i], gw = r->index.grid[2 * i + 1];
            if (cache_read_f32(r, dset, &attn, &heads, &G) < 0) kc_die();
            if (G != gh * gw) kc_die_msg("%s: %s has %d patches per head but its grid is %dx%d", features, dset, G, gh, gw);
            for (size_t k = 0; k < (size_t)heads * G; k++)
                if (attn[k] < 0) kc_die_msg("%s: %s holds a negative weight (%g): not attention", features, dset, attn[k]);
            uint8_t *masks = kc_malloc((size_t)heads * G);
            int knife = attn_mass_masks(attn, heads, G, mass, masks);
            if (knife < 0) {
                kc_fail_prefix("%s: %s", features, dset);
                kc_die();
            }
            knife_total += knife;
            char *md = kc_strfmt("/masks/%s/%s", id, r->index.ids[i]);
            int64_t dims[3] = {heads, gh, gw};
            float mf = (float)mass;
            if (cache_piece_put_u8(pc, md, masks, 3, dims) < 0 || cache_piece_attr_f32(pc, md, "mass", &mf, 1) < 0 ||
                cache_piece_attr_i32(pc, md, "knife_edge_heads", knife) < 0 || cache_piece_copy_image_sha(pc, md, r, dset) < 0) {
                cache_piece_abort(pc);
                kc_die();
            }
            free(md);
            free(masks);
            free(attn);
            free(dset);
            progress_add(&p, 1);
        }
        if (cache_piece_commit(pc) < 0) kc_die();
    }
    progress_end(&p);
    finish_masks(&in, &w, features, "attn", 1,
                 "attention mass (DINO visualize_attention.py --threshold): per head, ascending sort, "
                 "keep cumulative share > 1 - m; masks are (heads, grid_h, grid_w) stacks",
                 out);
    char took[32];
    progress_fmt_time(kc_now() - t0, took, sizeof took);
    if (knife_total) kc_info("%ld head masks had a patch within %g of the mass threshold (knife edges)", knife_total, ATTN_KNIFE);
    kc_info("wrote %s (%d image%s, %s) in %s", out, n, kc_s(n), id, took);
    return 0;
}

int main(int argc, char **argv)
{
    kc_set_prog("kc-decode");
    kc_keep_freed_memory();
    kc_set_cmdline(argc, argv);
    const char *features = NULL, *kind = NULL, *setting = NULL, *grid_path = NULL, *out = NULL, *shard_arg = NULL,
               *check = NULL;
    const opts_option options[] = {
        {"--features", .value = &features}, {"--kind", .value = &kind}, {"--setting", .value = &setting},
        {"--grid", .value = &grid_path}, {"--out", .value = &out}, {"--shard", .value = &shard_arg},
        {"--check-setting", .value = &check}, {0}};
    const opts_cli cli = {.usage = usage, .options = options, .unknown_first = 1};
    int rc = opts_parse(&cli, argc, argv);
    if (rc < 0) kc_die();
    if (rc != OPTS_OK) exit(opts_usage(&cli, rc));
    if (check) {
        if (features || kind || setting || out || shard_arg) kc_die_msg("--check-setting takes only --grid FILE");
        return check_setting(check, grid_path);
    }
    if (!kind) kind = "keys";
    if (!features || !out) kc_die_msg("--features and --out are required (see --help)");
    if (!strcmp(kind, "attn") || attn_mass_is_setting(setting)) return decode_attn(features, kind, setting, grid_path, out, shard_arg);
    if (!setting == !grid_path) kc_die_msg("give exactly one of --setting ID and --grid FILE");
    if (strcmp(kind, "keys") && strcmp(kind, "tokens")) kc_die_msg("--kind must be keys or tokens, or attn for class attention (got '%s')", kind);
    kc_shard shard = KC_SHARD_NONE;
    if (shard_arg && shard_parse(shard_arg, &shard) < 0) kc_die();
    openblas_set_num_threads(1);
    double t0 = kc_now();
    ncut_grid grid;
    if ((setting ? ncut_grid_single(&grid, setting) : ncut_grid_load(&grid, grid_path)) < 0) kc_die();
    derive_input in;
    open_features(&in, features, kind, &shard);
    cache_reader *const r = &in.r;
    char shard_s[32];
    const int n = r->index.n;
    /* the fingerprint: everything the output depends on */
    int n_parts = 5 + grid.n + shard_active(&shard);
    const char **parts = kc_malloc((size_t)n_parts * sizeof *parts);
    parts[0] = "kc-decode";
    parts[1] = KC_VERSION;
    parts[2] = features;
    parts[3] = in.hash;
    parts[4] = kind;
    for (int s = 0; s < grid.n; s++) parts[5 + s] = grid.set[s].id;
    if (shard_active(&shard)) parts[5 + grid.n] = shard_str(&shard, shard_s);
    char fp[65];
    cache_fingerprint(fp, n_parts, parts);
    free(parts);
    int n_batches = (n + BATCH - 1) / BATCH;
    cache_writer w;
    if (cache_writer_open(&w, out, CACHE_FORMAT_MASKS, fp, n_batches) < 0) kc_die();
    kc_info("%d image%s, %d setting%s, %s", n, kc_s(n), grid.n, kc_s(grid.n), kind);
    progress p;
    progress_init(&p, "decode", n, "images");
    ncut_stats total = {0, 0, 0, 0};
    ncut_result *res = kc_calloc((size_t)BATCH * grid.n, sizeof *res); // (BATCH, settings)
    int rc_img[BATCH];
    char err[BATCH][1024];
    for (int b = 0; b < n_batches; b++) {
        int i0, i1;
        if (!derive_batch_todo(&w, &p, b, BATCH, n, &i0, &i1)) continue;
        ncut_stats st[BATCH];
#pragma omp parallel for schedule(dynamic, 1)
        for (int i = i0; i < i1; i++) {
            int k = i - i0;
            st[k] = (ncut_stats){0, 0, 0, 0};
            char *dset = kc_strfmt("/features/%s/%s", kind, r->index.ids[i]);
            float *feats = NULL;
            int n_tok, dim, gh = r->index.grid[2 * i], gw = r->index.grid[2 * i + 1];
            rc_img[k] = cache_read_f32(r, dset, &feats, &n_tok, &dim);
            if (rc_img[k] == 0 && n_tok != gh * gw)
                rc_img[k] = kc_fail("%s: %s has %d tokens but its grid is %dx%d", features, dset, n_tok, gh, gw);
            if (rc_img[k] == 0) {
                char *what = kc_strfmt("%s: %s", features, dset);
                rc_img[k] = ncut_grid_run(&grid, feats, gh, gw, dim, what, res + (size_t)k * grid.n, &st[k]);
                free(what);
            }
            if (rc_img[k] < 0) snprintf(err[k], sizeof err[k], "%s", kc_error());
            free(feats);
            free(dset);
            progress_add(&p, 1);
        }
        if (derive_batch_error(rc_img, err, i1 - i0) < 0) kc_die();
        cache_piece *pc = cache_piece_new(&w, b);
        for (int s = 0; s < grid.n; s++)
            for (int i = i0; i < i1; i++) {
                const ncut_result *rs = &res[(size_t)(i - i0) * grid.n + s];
                char *dset = kc_strfmt("/masks/%s/%s", grid.set[s].id, r->index.ids[i]);
                char *fdset = kc_strfmt("/features/%s/%s", kind, r->index.ids[i]);
                const cache_mask m = {rs->labels, r->index.grid[2 * i], r->index.grid[2 * i + 1], rs->lambda2,
                                      rs->eigengap, rs->n_masks, rs->degenerate, 1, rs->knife, rs->knife_margin};
                if (cache_piece_put_mask(pc, dset, &m) < 0 || cache_piece_copy_image_sha(pc, dset, r, fdset) < 0) {
                    cache_piece_abort(pc);
                    kc_die();
                }
                free(dset);
                free(fdset);
            }
        if (cache_piece_commit(pc) < 0) kc_die();
        for (int k = 0; k < i1 - i0; k++) {
            ncut_results_free(res + (size_t)k * grid.n, grid.n);
            total.solves += st[k].solves;
            total.reused += st[k].reused;
            total.dense += st[k].dense;
            total.matvecs += st[k].matvecs;
        }
    }
    progress_end(&p);
    free(res);
    /* the cache's decoder attribute: the method, its constants and where the design describes it
     * (format version 1 cited "DESIGN.md Decoders", a file the repository no longer has) */
    finish_masks(&in, &w, features, kind, grid.n,
                 "normalized cut (docs/design.md, section \"Decoders\"), eps 1e-5, degenerate below eigengap 1e-6", out);
    int n_settings = grid.n;
    ncut_grid_free(&grid);
    char took[32];
    progress_fmt_time(kc_now() - t0, took, sizeof took);
    if (total.solves)
        kc_info("%ld eigen-solves (%ld shared, %ld dense), %.0f products per Krylov solve", total.solves, total.reused,
                total.dense, (double)total.matvecs / (double)(total.solves - total.dense > 0 ? total.solves - total.dense : 1));
    kc_info("wrote %s (%d image%s x %d setting%s) in %s", out, n, kc_s(n), n_settings, kc_s(n_settings), took);
    return 0;
}
