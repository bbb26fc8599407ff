/* stages/kc-center.c — subtract each image's mean key from its keys.
 *
 *   kc-center [--shard i/n] IN.h5 OUT.h5
 *
 * For every image of a features cache: keys' = keys - mean over the image's tokens of keys (the
 * mean summed in double, in token order).  OUT has IN's layout and index, so every later stage
 * reads either.  The removed mean's Euclidean norm is stored per image as the float attribute
 * `mean_norm` on its /features/keys/<id> dataset.  Other feature kinds (/features/tokens,
 * /features/attn) are copied unchanged.  Provenance: IN's root attributes, plus input (IN's path),
 * input_content_hash, centered ("keys") and the command line.  Resumable and atomic (batches of 16
 * images as pieces in OUT.partial/, merged into OUT at the end).
 */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/cache/cache.h"
#include "pipeline/cache/derive.h"
#include "pipeline/kc.h"
#include "pipeline/opts.h"
#include "pipeline/progress.h"
#include "pipeline/cache/shard.h"

enum { BATCH = 16 };

static const char usage[] =
    "usage: kc-center [--shard i/n] IN.h5 OUT.h5\n"
    "\n"
    "Subtracts each image's mean key (over its tokens) from its keys.  OUT has the layout and\n"
    "index of IN; each /features/keys/<id> carries the removed mean's norm as attribute\n"
    "mean_norm.  /features/tokens, when present, is copied unchanged.  Rerunning after an\n"
    "interruption resumes from OUT.partial/.  --shard i/n centres only slice i of n of IN's\n"
    "images (pipeline/cache/shard.h); join the shard caches with kc-merge.\n"
    "\n"
    "example:\n"
    "  kc-center cache/dino/voc12-val/keys.h5 cache/dino/voc12-val/centered.h5\n";

static int read_shard(const opts_option *opt, const char *value) { return shard_parse(value, opt->target); }

int main(int argc, char **argv)
{
    kc_set_prog("kc-center");
    kc_keep_freed_memory();
    kc_set_cmdline(argc, argv);
    kc_shard shard = KC_SHARD_NONE;
    const char *args[2];
    const opts_option options[] = {{"--shard", .read = read_shard, .target = &shard}, {0}};
    const opts_cli cli = {.usage = usage, .options = options, .syntax = OPTS_ARGS, .args = args, .min_args = 2,
                          .max_args = 2};
    int rc = opts_parse(&cli, argc, argv);
    if (rc < 0) kc_die();
    if (rc != OPTS_OK) exit(opts_usage(&cli, rc));
    const char *in = args[0], *out = args[1];
    openblas_set_num_threads(1);
    double t0 = kc_now();
    derive_input din;
    if (derive_open(&din, in, CACHE_FORMAT_FEATURES, &shard) < 0) kc_die();
    cache_reader *const r = &din.r;
    char *d0k = kc_strfmt("/features/keys/%s", r->index.ids[0]), *d0t = kc_strfmt("/features/tokens/%s", r->index.ids[0]);
    int has_keys = cache_has(r, d0k), has_tokens = cache_has(r, d0t);
    char *d0a = kc_strfmt("/features/attn/%s", r->index.ids[0]);
    const int has_attn = cache_has(r, d0a);
    free(d0a);
    free(d0k);
    free(d0t);
    if (!has_keys) kc_die_msg("%s: no /features/keys (kc-center centres keys; was it extracted with --features tokens?)", in);
    char shard_s[32];
    derive_slice(&din);
    const int n = r->index.n;
    const char *parts[] = {"kc-center", KC_VERSION, in, din.hash, has_tokens && has_attn ? "tokens,attn" : has_tokens ? "tokens" : has_attn ? "attn" : "",
                           shard_str(&shard, shard_s)};
    char fp[65];
    cache_fingerprint(fp, shard_active(&shard) ? 6 : 5, parts);
    int n_batches = (n + BATCH - 1) / BATCH;
    cache_writer w;
    if (cache_writer_open(&w, out, CACHE_FORMAT_FEATURES, fp, n_batches) < 0) kc_die();
    progress p;
    progress_init(&p, "center", n, "images");
    for (int b = 0; b < n_batches; b++) {
        int i0, i1;
        if (!derive_batch_todo(&w, &p, b, BATCH, n, &i0, &i1)) continue;
        cache_piece *pc = cache_piece_new(&w, b);
        for (int i = i0; i < i1; i++) {
            const char *id = r->index.ids[i];
            char *dk = kc_strfmt("/features/keys/%s", id);
            float *keys;
            int n_tok, dim;
            if (cache_read_f32(r, dk, &keys, &n_tok, &dim) < 0) {
                cache_piece_abort(pc);
                kc_die();
            }
            if (n_tok != r->index.grid[2 * i] * r->index.grid[2 * i + 1]) {
                cache_piece_abort(pc);
                kc_die_msg("%s: %s has %d tokens but its grid is %dx%d", in, dk, n_tok, r->index.grid[2 * i],
                           r->index.grid[2 * i + 1]);
            }
            double *mean = kc_calloc((size_t)dim, sizeof *mean), norm = 0;
            for (int t = 0; t < n_tok; t++)
                for (int k = 0; k < dim; k++) mean[k] += keys[(size_t)t * dim + k];
            for (int k = 0; k < dim; k++) {
                mean[k] /= n_tok;
                norm += mean[k] * mean[k];
            }
            for (int t = 0; t < n_tok; t++)
                for (int k = 0; k < dim; k++) keys[(size_t)t * dim + k] = (float)(keys[(size_t)t * dim + k] - mean[k]);
            float mn = (float)sqrt(norm);
            int64_t dims[2] = {n_tok, dim};
            if (cache_piece_put_f32(pc, dk, keys, 2, dims) < 0 || cache_piece_attr_f32(pc, dk, "mean_norm", &mn, 1) < 0 ||
                cache_piece_copy_image_sha(pc, dk, r, dk) < 0) {
                cache_piece_abort(pc);
                kc_die();
            }
            free(mean);
            free(keys);
            free(dk);
            if (has_tokens) {
                char *dt = kc_strfmt("/features/tokens/%s", id);
                float *tok;
                int rows, cols;
                if (cache_read_f32(r, dt, &tok, &rows, &cols) < 0) {
                    cache_piece_abort(pc);
                    kc_die();
                }
                int64_t tdims[2] = {rows, cols};
                if (cache_piece_put_f32(pc, dt, tok, 2, tdims) < 0 || cache_piece_copy_image_sha(pc, dt, r, dt) < 0) {
                    cache_piece_abort(pc);
                    kc_die();
                }
                free(tok);
                free(dt);
            }
            if (has_attn) { /* the class attention (kc-extract --features attn), unchanged */
                char *da = kc_strfmt("/features/attn/%s", id);
                if (cache_piece_copy(pc, r, da) < 0) {
                    cache_piece_abort(pc);
                    kc_die();
                }
                free(da);
            }
            progress_add(&p, 1);
        }
        if (cache_piece_commit(pc) < 0) kc_die();
    }
    progress_end(&p);
    cache_prov prov = {0, NULL, NULL};
    derive_prov(&prov, &din);
    prov_set(&prov, "input", in);
    prov_set(&prov, "input_content_hash", din.hash);
    prov_set(&prov, "centered", "keys");
    if (derive_finish(&din, &w, &prov, BATCH, out) < 0) kc_die();
    char took[32];
    progress_fmt_time(kc_now() - t0, took, sizeof took);
    kc_info("wrote %s (%d image%s) in %s", out, n, kc_s(n), took);
    return 0;
}
