/* pipeline/extract/extract.h — the extraction engine of kc-extract: a ViT teacher (or the
 * no-learning colour extractor) over a list of images into a features cache (keys.h5).
 *
 * What it owns, for one run (extract_run):
 *   - the network: the weights loaded and checked, vit_init, the lines naming it (and, with
 *     verbose, the product kernels that will run);
 *   - the index from the image headers: per image the grid the policy gives it;
 *   - the cache: the fingerprint of everything that determines the output (the product path
 *     included), the crash-safe writer (pipeline/cache/cache.h), the products check that keeps a
 *     resume on the path that made the pieces already there (OUT.partial/products), the
 *     provenance and the finish;
 *   - the run over the images: one job per image (decode, resize to the policy, the forward), the
 *     split of the cores (EXTRACT_SPLIT_IMAGES: one image per core, each forward on one thread,
 *     images taken across batch boundaries; EXTRACT_SPLIT_ROWS: every image over all cores;
 *     EXTRACT_SPLIT_AUTO: one image per core where the outputs are the same bytes either way, the
 *     matmul path), and the piece writer: each batch's piece written (HDF5, flush, fsync, rename)
 *     by a thread of its own while the next images are computed, one piece at a time;
 *   - with verbose, the time line: start-up, first batch, the steady state in ms per image.
 * What it uses: pipeline/model, pipeline/weights, pipeline/images, pipeline/cache and the base.
 * It knows no dataset type: the caller gives the images as ids and paths (and, for the
 * provenance, the dataset's spec and kind).
 *
 * Errors: extract_run returns -1 with the message set (kc_fail).  The caller then dies (kc_die):
 * after an error the cache writer is left as it is, its lock and temporary files for kc_die's
 * clean-up to remove, and the pieces finished before the error in place for a resume.
 *
 *     extract_opts o = EXTRACT_OPTS_DEFAULT;
 *     o.model_name = "vit";  o.weights = "dino_deitsmall16_pretrain.pth";
 *     o.want_keys = 1;       o.features = "keys";           // as given on the command line
 *     o.policy = POLICY_SQUARE480;
 *     o.dataset = "voc:/data/VOC2012:val";  o.dataset_kind = "voc";
 *     o.out = "cache/dino/voc12-val/keys.h5";  o.t_main = kc_now();   // at the start of main
 *     if (extract_run(&o, ds.n, (const char *const *)ds.ids, (const char *const *)ds.paths) < 0) kc_die();
 */
#ifndef KC_EXTRACT_H
#define KC_EXTRACT_H

#include "pipeline/cache/shard.h"
#include "pipeline/images/resize.h"

/* How the cores share the work (kc-extract --split). */
typedef enum extract_split { EXTRACT_SPLIT_AUTO, EXTRACT_SPLIT_IMAGES, EXTRACT_SPLIT_ROWS } extract_split;

typedef struct extract_opts {
    const char *model_name;         /* "vit" (with weights) or "color" (no weights) */
    const char *weights;            /* vit: .pth or .safetensors */
    const char *ckey;               /* vit: state dict inside a checkpoint (NULL: automatic) */
    int drop_cls, heads;            /* vit: vit_opts (heads 0: config.json, else dim / 64) */
    double ln_eps;                  /* vit: 0 for the default of the names */
    const char *posembed;           /* vit: "auto" (the family's rule), "dino", "hf" or "antialias" */
    int keys_pre_rope;              /* vit, DINOv3: the keys before RoPE (--keys pre-rope) */
    int patch_color;                /* color: the patch size */
    const char *features;           /* the --features text, for the fingerprint */
    int want_keys, want_tokens, want_attn; /* what it names (attn: vit with a class token) */
    kc_policy policy;
    int batch;                      /* images per crash-safe piece */
    extract_split split;
    kc_shard shard;                 /* KC_SHARD_NONE: every image */
    int verbose;                    /* the products line and the time line */
    double t_main;                  /* kc_now() at the start of main (the time line's start-up) */
    const char *dataset, *dataset_kind; /* for the provenance */
    const char *out;                /* the cache to write */
} extract_opts;
#define EXTRACT_OPTS_DEFAULT                                                                                   \
    ((extract_opts){.posembed = "auto", .patch_color = 16, .features = "keys", .policy = POLICY_SQUARE480,     \
                    .batch = 8, .split = EXTRACT_SPLIT_AUTO, .shard = KC_SHARD_NONE})

/* Runs the network over images [0, n) (ids (n), paths (n): the whole dataset, of which opts->shard
 * keeps its slice) into opts->out.  0, or -1 with the error set (see above: the caller dies). */
int extract_run(const extract_opts *opts, int n, const char *const *ids, const char *const *paths);
#endif
