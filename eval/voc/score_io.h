/* eval/voc/score_io.h — what kc-score's scorers (eval/voc/score.h) share: the masks cache as they read it,
 * the end of a run (summary, network, ledger line) and the error rule of their parallel loops.
 *
 * The cache: score_check_cache refuses a cache decoded from DAVIS, without a known `policy`, with
 * a bad `patch` (needed for native16), of other images than the split, or with a grid the policy
 * does not give the image.  A cache of kc-refine (root attribute `refine` other than "none") holds
 * pixel masks at the original image size instead of grids (score_pixel_masks).  One label map is
 * /masks/<setting>/<id>, uint8 (rows, cols), with the attributes lambda2 and eigengap (of round 1),
 * degenerate and, in caches written since it exists, knife_edge.
 *
 *     score_mask m;
 *     if (score_mask_read(&r, "ncut-t0.2", ids[i], cache_index_find(&r.index, ids[i]), &m) < 0) ...
 *     ... m.labels (m.rows, m.cols) ...;  free(m.labels);
 *
 * Errors of a parallel loop over n images: the error reported is that of the lowest-numbered
 * image that failed, the one a serial loop would have stopped at.  score_first_error_note(&e, i)
 * from the failing thread, right after the failed call (kc_error() is per thread);
 * score_first_error_raise after the loop.
 */
#ifndef KC_SCORE_IO_H
#define KC_SCORE_IO_H
#include <stdint.h>

#include "pipeline/cache/cache.h"
#include "pipeline/images/resize.h"
#include "pipeline/kc.h"

/* ids (n): the split.  Sets the policy and the patch (0 when the cache records none). */
int score_check_cache(const cache_reader *r, char **ids, int n, kc_policy *policy, int *patch);
/* 1 for a cache of kc-refine: label maps are pixel masks at the original image size, scored with
 * the pixel-centre rule of a grid as large as the image, which maps each pixel to itself. */
int score_pixel_masks(const cache_reader *r);

typedef struct score_mask {
    uint8_t *labels; /* (rows, cols) */
    int rows, cols;
    float lambda2, eigengap; /* NaN when absent */
    int32_t degenerate;
    int32_t knife;           /* -1 for a cache written before the knife-edge flag existed */
} score_mask;
/* k: the image's row in the cache index, whose grid (or size, for pixel masks) the map must have. */
int score_mask_read(const cache_reader *r, const char *setting, const char *id, int k, score_mask *m);

/* One setting's outputs. */
typedef struct score_setting {
    char *name;
    kc_buf csv;            /* OUT/<setting>.csv */
    double jaccard, corloc;
    kc_buf heads, columns; /* attention settings only: OUT/<setting>.heads.csv, .columns.txt */
} score_setting;

/* The end of a scoring run, after the per-setting CSVs: the summary at summary_path, OUT/network
 * when the network is known, the commit of every output (kc_outputs_commit), and only then the
 * ledger line (a run that fails appends nothing). */
int score_write_summary(const char *summary_path, const kc_buf *summary, const char *out, const char *network,
                        const char *split, const char split_hash[65], int n_settings, const char *ledger);

typedef struct score_first_error {
    int i, n;
    char msg[2048];
} score_first_error;
void score_first_error_init(score_first_error *e, int n);
void score_first_error_note(score_first_error *e, int i);
/* 0 when no image failed; else -1 with the first image's error set. */
int score_first_error_raise(const score_first_error *e);
#endif
