/* datasets/coco.h — COCO detection ground truth for a list of images (COCO20k), read with a
 * streaming JSON parser.
 *
 * Layout: ROOT/<line> for every line of LIST (e.g. train2014/COCO_train2014_000000560992.jpg, the
 * format of LOST's and TokenCut's datasets/coco_20k_filenames.txt), boxes from
 * ROOT/annotations/instances_train2014.json.  Image id = the line's file name without extension.
 *
 * The JSON (about 450 MB) is parsed by yajl's event API in 1 MiB chunks: only `images` entries
 * whose file_name is listed and their `annotations` are kept, so memory is proportional to the
 * boxes kept, not to the file (if `annotations` comes before `images`, which COCO's files never
 * do, every annotation's box is kept until the images are known: 48 bytes each).  Per listed
 * image: its width and height, and the non-crowd boxes as LOST/TokenCut's extract_gt_COCO makes
 * them: [x, y, x + w, y + h], each corner rounded half-to-even (Python's round()).  Boxes with
 * iscrowd = 1 are dropped (and counted).
 *
 * Bad input, each a one-line error naming the file: truncated or malformed JSON; an `images`
 * entry without file_name or id; an annotation without image_id or a 4-number bbox; a listed image
 * with no `images` entry, or with an entry but no annotation at all (LOST's and TokenCut's code
 * fail on the latter too: IndexError in get_image_name).  A listed image whose annotations are
 * all crowd boxes is kept with no box (a CorLoc miss, counted in the denominator).
 *
 * The result is cached in CACHE_DIR/coco-boxes-<json sha256>-<list sha256>.tsv (16 hex digits
 * each), written to a temporary name and renamed; later runs read it instead of the JSON.
 *
 *     coco_gt g;
 *     if (coco_gt_load("/data/coco", "coco_20k_filenames.txt", "work/cache/coco", &g) < 0) kc_die();
 *     for (int i = 0; i < g.n; i++) use(g.img[i].id, g.img[i].boxes, g.img[i].n_boxes);
 *     coco_gt_free(&g);
 */
#ifndef KC_COCO_H
#define KC_COCO_H
#include "pipeline/box.h"

#define COCO_ANNOTATIONS "annotations/instances_train2014.json"

typedef struct coco_image {
    char *id;        /* file name without extension */
    char *file_name; /* as in the JSON (the list line's last path component) */
    int w, h;        /* the JSON's width and height */
    int n_boxes;     /* non-crowd boxes */
    kc_box *boxes;   /* (n_boxes) corners, rounded */
    int n_crowd;     /* crowd boxes dropped */
    int n_annotations;
} coco_image;

typedef struct coco_gt {
    int n;
    coco_image *img; /* (n) in list order */
} coco_gt;

/* Streams json_path and keeps the images named in file_names (n, basenames, unique). */
int coco_read_json(const char *json_path, char *const *file_names, int n, coco_gt *out);

/* The list's images with their boxes, through the cache (cache_dir NULL: no cache). */
int coco_gt_load(const char *root, const char *list, const char *cache_dir, coco_gt *out);
void coco_gt_free(coco_gt *g);

/* Python's int(round(x)) for the corner values COCO holds: half to even. */
double coco_round(double x);
#endif
