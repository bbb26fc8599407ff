/* decoders/refine/refine_cache.h — kc-refine's run: every mask of a masks cache refined at pixel level by
 * the protocols of decoders/refine/refine.h, into a masks cache of the same layout.
 *
 * For each image of the (sliced) input index and each setting: the label map and the decoder's
 * attributes read from /masks/<setting>/<id>, refine_image on the original image, and written as
 * /masks/<setting>/<id> uint8 (H, W) at the image's size with the decoder's attributes (lambda2,
 * eigengap, degenerate; knife_edge and knife_margin where the input has them), refine_iou (per
 * round) and refine_dropped (rounds emptied by MaskCut's IoU filter), then the image hash.  The
 * fingerprint holds every constant (refine_params); the provenance is the input's (derive_prov),
 * then refine, refine_params, masks, masks_content_hash, refine_dataset.  Images of a batch (8) are
 * refined in parallel, one image per thread: the output does not depend on the number of threads.
 * Resumable and atomic (pieces in OUT.partial/, pipeline/cache/cache.h).
 *
 * What the caller checks first (kc-refine): the input is a masks cache of kc-decode, not refined,
 * without attention-mass stacks; settings exist; every image is in the dataset, unchanged, with the
 * grid of the cache's policy.
 *
 *     refine_run run = {&o, &in, masks, spec, out, settings, n_settings, policy, "square480", 16,
 *                       paths, kc_now()};
 *     if (refine_cache(&run) < 0) kc_die();     // in.r closed on success
 */
#ifndef KC_REFINE_CACHE_H
#define KC_REFINE_CACHE_H

#include "decoders/refine/refine.h"
#include "pipeline/cache/derive.h"

typedef struct refine_run {
    const refine_opts *o;     /* the method and its constants (refine_check passed) */
    derive_input *in;         /* the input masks cache, after derive_slice */
    const char *masks;        /* its path (messages, fingerprint, provenance) */
    const char *spec;         /* the dataset the images come from (fingerprint, provenance) */
    const char *out;          /* the masks cache to write */
    char **settings;          /* (n_settings) the settings to refine */
    int n_settings;
    kc_policy policy;         /* the input's policy and patch size */
    const char *policy_name;  /* its name as the input records it */
    int patch;
    const char *const *paths; /* (in->r.index.n) the image of each row of the index */
    double t0;                /* kc_now() at the start (the closing line's time) */
} refine_run;

/* Refines, writes and finishes the output cache (derive_finish: the input is closed), then prints
 * the closing lines.  0, or -1 with the error set (nothing freed then: the caller dies). */
int refine_cache(const refine_run *run);
#endif
