/* eval/davis/davis_jf.h — J, F and J&F as the official davis2017-evaluation (semi-supervised) computes them.
 *
 * Per sequence: the ground-truth frames are the PNGs of ROOT/Annotations/480p/<seq>/ (sorted); object ids
 * are 1..K with K the largest id of the first ground-truth frame (ids above K in later frames are
 * ignored, with a warning; 255 counts as background).  Frames 1..N-2 are scored (the first and
 * the last are not); no void mask.  A result id above K is an error (the official tool stops
 * there too); an id missing from a result frame is an empty mask.
 *
 *   J = |A & B| / |A | B|, 1 when the union is empty.
 *   F = 2PR / (P + R), 0 when P + R = 0.  Boundaries: seg2bmap's rule, b(y,x) = s(y,x) differs from
 *       s(y,x+1), s(y+1,x) or s(y+1,x+1) (last row: from s(y,x+1) only; last column: from s(y+1,x)
 *       only; the corner pixel never).  P = |{fg boundary px within distance r of a gt boundary px}|
 *       / |fg boundary|, R likewise with the roles swapped, r = ceil(0.008 * sqrt(H^2 + W^2)) and
 *       "within" meaning dx^2 + dy^2 <= r^2 (a cv2.dilate with skimage's disk(r)).  Edge cases:
 *       both boundaries empty -> P = R = 1; only fg empty -> P = 1, R = 0; only gt empty -> P = 0, R = 1.
 *   Per object over its scored frames v[0..n-1]: M = mean, R = mean(v > 0.5), D = mean(bin 0) -
 *       mean(bin 3), bins v[e_i .. e_(i+1)] (both ends included), e = round(linspace(1, n, 5) +
 *       1e-10) - 1 with halves rounding up.
 *   Global: each of J-Mean, J-Recall, J-Decay, F-... is the mean over objects; J&F-Mean =
 *       (J-Mean + F-Mean) / 2.
 *
 * The fast F: boundary pixels only exist within the masks' bounding box grown by one pixel toward
 * the origin; inside that window a per-row distance to the nearest boundary pixel of the other map
 * answers "is there one within the disk" with 2r+1 lookups per boundary pixel (exact: squared
 * integer distances).  davis_f_measure_naive builds both maps over the whole image and dilates
 * with an explicit disk, as the official code does; the tests hold the two equal.
 *
 *     davis_eval ev;
 *     if (davis_evaluate(results_dir, davis_root, "val", &ev) < 0) kc_die();
 *     if (davis_write_outputs(&ev, results_dir, "val", force) < 0) kc_die();
 *     printf("%f\n", ev.global[DAVIS_JF_MEAN]);
 *     davis_eval_free(&ev);
 */
#ifndef KC_DAVIS_JF_H
#define KC_DAVIS_JF_H
#include <stdint.h>

#define DAVIS_BOUND_TH 0.008

/* Boundary tolerance in pixels: ceil(bound_th * sqrt(h^2 + w^2)) (bound_th >= 1: itself). */
int davis_bound_radius(int w, int h, double bound_th);
/* seg2bmap of the mask (labels == id): bmap (h, w) of 0/1. */
void davis_seg2bmap(const uint8_t *labels, int w, int h, int id, uint8_t *bmap);
/* J of object id: gt, res (h, w) label maps. */
double davis_jaccard(const uint8_t *gt, const uint8_t *res, int w, int h, int id);
/* F of object id, fast (bounding-box windows and row distances). */
double davis_f_measure(const uint8_t *gt, const uint8_t *res, int w, int h, int id, int radius);
/* F of object id the official way: whole-image boundary maps, explicit disk dilation (slow). */
double davis_f_measure_naive(const uint8_t *gt, const uint8_t *res, int w, int h, int id, int radius);
/* M, R, D of n per-frame values (n >= 1). */
void davis_statistics(const double *v, int n, double *mean, double *recall, double *decay);

/* Global value positions, in the official column order. */
enum { DAVIS_JF_MEAN, DAVIS_J_MEAN, DAVIS_J_RECALL, DAVIS_J_DECAY, DAVIS_F_MEAN, DAVIS_F_RECALL,
       DAVIS_F_DECAY, DAVIS_N_GLOBAL };
extern const char *const davis_global_names[DAVIS_N_GLOBAL];

typedef struct davis_object {
    char *name;          /* "<seq>_<id>" */
    int n;               /* scored frames */
    char **frames;       /* n frame names (borrowed from the sequence's list, owned here) */
    double *J, *F;       /* n values each */
    double j_stats[3];   /* M, R, D */
    double f_stats[3];
} davis_object;

typedef struct davis_eval {
    int n_obj;
    davis_object *obj;
    double global[DAVIS_N_GLOBAL];
    int n_seq, n_frames; /* sequences and scored frames (for messages) */
} davis_eval;

/* Scores every sequence of the split (ROOT/ImageSets/2017/<split>.txt) against results/<seq>/.
 * Errors: a missing result frame (all missing ones are named), result ids above K, frames of
 * different sizes, an empty list, a sequence of fewer than 3 frames. */
int davis_evaluate(const char *results, const char *root, const char *split, davis_eval *ev);
/* Writes results/global_results-<split>.csv, per-sequence_results-<split>.csv and
 * global_results-<split>.json (atomically).  Without force, any of them existing is an error. */
int davis_write_outputs(const davis_eval *ev, const char *results, const char *split, int force);
void davis_eval_free(davis_eval *ev);
#endif
