/* eval/davis/propagate.h — DINO's DAVIS label propagation (eval_video_segmentation.py), windowed.
 *
 * Per video, at patch resolution (grid gh x gw, n = gh * gw patches, C label channels):
 *   - frame 0: its annotation, brought to gw x gh by Pillow's NEAREST resize, one-hot over
 *     C = max(small labels) + 1 channels (background included);
 *   - frame t >= 1: context = frame 0 and the `context` (7) most recent frames with their soft
 *     labels; features L2-normalised (x / max(|x|, 1e-12)); for target patch i and source patch j
 *     of a context frame, a_ij = exp(cos(i, j) / temperature) when |row_i - row_j| <= window and
 *     |col_i - col_j| <= window (else 0); over all context frames together keep every a_ij >= the
 *     topk-th largest, normalise to sum 1; soft_i = sum_j a_ij * soft_j.  The target's features
 *     and soft labels join the context (the oldest recent frame leaves).
 * Affinities, top-k and soft labels are computed in double (see propagate.c); features stay float.
 * Only the window is ever computed: memory is O(n * (dim + C) * (context + 1)), never O(n^2).
 *
 * To pixels (prop_soft_to_labels): soft labels (gh, gw, C) upsampled x patch bilinearly
 * (PyTorch align_corners=False: src = (dst + 0.5) / patch - 0.5, clamped at 0); each channel
 * min-max normalised when its max is > 0 (a constant positive channel becomes NaN as in PyTorch
 * and wins the arg-max); arg-max over channels (lowest label on ties); Pillow NEAREST resize to
 * the original w x h.
 *
 *     prop_config cfg; prop_config_default(&cfg);
 *     prop_video v;
 *     prop_init(&v, &cfg, gh, gw, dim, feat0, small0);   // feat0: (n, dim); small0: (gh, gw)
 *     for (t = 1; t < T; t++) {
 *         prop_step(&v, feat[t], soft);                   // soft: (n, C)
 *         prop_soft_to_labels(soft, gh, gw, v.n_labels, cfg.patch, w, h, out);   // out: (h, w)
 *     }
 *     prop_free(&v);
 */
#ifndef KC_PROPAGATE_H
#define KC_PROPAGATE_H
#include <stdint.h>

typedef struct prop_config {
    int window;         /* +- patches in both axes (12) */
    int topk;           /* 5 */
    double temperature; /* 0.1 */
    int context;        /* recent frames kept besides the first (7) */
    int patch;          /* upsampling factor (16) */
} prop_config;

void prop_config_default(prop_config *c);
/* Range checks; errors name the option. */
int prop_config_check(const prop_config *c);

typedef struct prop_video {
    prop_config cfg;
    int gh, gw, n, dim, n_labels;
    float *feat;   /* (1 + context, n, dim) raw: slot 0 the first frame, then a ring of recent frames */
    double *soft;  /* (1 + context, n, C) */
    double *norm;  /* (1 + context, n): max(|feature row|, 1e-12) */
    int n_recent;  /* recent frames held (<= context) */
    int next;      /* ring slot (1..context) the next frame goes to */
} prop_video;

/* small0: the first frame's labels at grid size (gh, gw).  Errors: bad sizes. */
int prop_init(prop_video *v, const prop_config *cfg, int gh, int gw, int dim, const float *feat0,
              const uint8_t *small0);
/* feat: (n, dim) of the next frame; soft: (n, C) out.  The frame joins the context. */
int prop_step(prop_video *v, const float *feat, float *soft);
void prop_free(prop_video *v);

/* soft (gh, gw, C) -> labels (h, w) as described above. */
void prop_soft_to_labels(const float *soft, int gh, int gw, int C, int patch, int w, int h, uint8_t *labels);
#endif
