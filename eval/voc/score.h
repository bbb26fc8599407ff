/* eval/voc/score.h — kc-score's runs: VOC Jaccard and CorLoc of every setting in a masks cache,
 * box-only CorLoc, and the selection split.
 *
 * score_voc writes OUT/<setting id>.csv (header id,setting,jaccard,corloc,area,lambda2,eigengap,
 * degenerate,knife_edge; lambda2 and eigengap of round 1; knife_edge 0/1 from the mask's attribute,
 * empty for a cache written before it existed), OUT/summary.csv (setting,images,jaccard,corloc)
 * and, when a network name is known (given, or the cache's `network`), OUT/network; all of them
 * appear together at the end (kc_outputs_begin / kc_outputs_commit), and only then is one line
 * appended to the ledger (eval/voc/ledger.h).  The masks cache must hold exactly the split's ids, with
 * the ground truth's image sizes, a known `policy` root attribute, a `patch` attribute (required
 * for native16) and grids that fit the policy (eval/voc/score_io.h).  Jaccard and CorLoc are
 * eval/voc/voc_metrics.h's; a cache of kc-refine (pixel masks at the image size) is scored per pixel.
 *
 * Attention-mass settings (attn-mass<m>, kc-decode --kind attn: (heads, h, w) stacks) are scored
 * by DINO's protocol instead (eval/voc/attn_metrics.h, docs/attention-baseline.md): the per-image CSV
 * is id,setting,jaccard,objects,fg_jaccard_h0..; OUT/<setting>.heads.csv holds the per-head means
 * and names the best fixed head; OUT/<setting>.columns.txt says what each column means; the
 * summary line has an empty corloc.
 *
 * score_boxes scores CorLoc alone by the LOST / TokenCut protocol (eval/voc/corloc.h,
 * docs/corloc.md): VOC Annotations XML only (no_hard drops difficult and truncated objects, and the
 * images left without any), or with coco the images of the list `split` and their boxes
 * (datasets/coco.h, cached in box_cache).  The same files; jaccard is empty.
 *
 * score_make_selection writes the selection split (datasets/splits.h) OUT/select<N>.txt and its
 * .sha256; it opens no labels and appends nothing to the ledger.
 *
 *     kc_lock *lock;  kc_lock_folder(&lock, "out/dino/scores", NULL);   // the caller's (kc-score)
 *     score_opts o = {.masks = "masks.h5", .voc = "VOC2012", .split = "select1000.txt",
 *                     .out = "out/dino/scores", .ledger = "ledger.tsv", .t0 = kc_now()};
 *     if (score_voc(&o) < 0) kc_die();
 *     kc_lock_release(lock);
 */
#ifndef KC_SCORE_H
#define KC_SCORE_H

typedef struct score_opts {
    const char *masks;     /* the masks cache */
    const char *voc;       /* the VOC root (score_boxes: NULL with coco) */
    const char *coco;      /* score_boxes: the COCO root, or NULL */
    const char *split;     /* the list of ids (COCO: of image files) */
    const char *out;       /* the score folder, whose lock the caller holds */
    const char *ledger;    /* the ledger file */
    const char *network;   /* NULL: the cache's `network` attribute, if any */
    const char *box_cache; /* score_boxes with coco: the folder of cached boxes, or NULL */
    int no_hard;           /* score_boxes, VOC: leave out difficult and truncated objects */
    double t0;             /* kc_now() at the start of the run (the closing line's time) */
} score_opts;

/* 0, or -1 with a message naming the file that was wrong. */
int score_voc(const score_opts *o);
int score_boxes(const score_opts *o);
/* count ids of train_list, in sha256 order, as out/select<count>.txt (out's lock taken here). */
int score_make_selection(const char *train_list, const char *out, int count);
#endif
