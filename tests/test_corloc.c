/* tests/test_corloc.c — eval/voc/corloc.h and coco_round, on cases worked out by hand from the
 * LOST / TokenCut bbox_iou (eps = 1e-7) and Python's round(); the per-image agreement on real and
 * generated data is tests/test_corloc.sh. */
#include "datasets/coco.h"
#include "eval/voc/corloc.h"
#include "tests/test.h"

int main(void)
{
    /* all-integer corners: their int64 tensors make h + eps a float32, where 1e-7 vanishes next to
     * 16 or 32, so inter 512 / union 1024 is exactly 0.5 and counts (in double it would be
     * 512 / 1024.0000049 < 0.5 and miss) */
    double pred[4] = {0, 0, 32, 32};
    kc_box half = {0, 0, 32, 16};
    CHECK(corloc_iou(pred, &half) == 0.5, "float32 IoU of a half box: %.17g", corloc_iou(pred, &half));
    CHECK(corloc_hit(pred, &half, 1) == 1, "IoU exactly 0.5 is a hit");
    double naive = 512.0 / (32 * (32 + 1e-7) + 32 * (16 + 1e-7) - 512 + 1e-7);
    CHECK(naive < 0.5, "the same in double is below 0.5 (%.17g)", naive);
    /* a non-integral GT corner (float64 ground truth): double arithmetic, prediction area float32 */
    kc_box frac = {0, 0, 32, 16.5};
    double inter = 32 * 16.5, want = inter / ((double)1024.0f + 32 * (16.5 + 1e-7) - inter + 1e-7);
    CHECK_CLOSE(corloc_iou(pred, &frac), want, 0, "float64 IoU");
    /* no overlap, any box */
    kc_box far = {100, 100, 120, 130}, boxes[2] = {{100, 100, 120, 130}, {0, 0, 32, 16}};
    CHECK(corloc_iou(pred, &far) == 0 && corloc_hit(pred, &far, 1) == 0, "disjoint boxes");
    CHECK(corloc_hit(pred, boxes, 2) == 1 && corloc_hit(pred, boxes, 0) == 0, "any box / no box");
    /* the clipped prediction [0, 0, 20, 30] against itself: 600 / (600 + eps terms) rounds to 1 */
    double clipped[4] = {0, 0, 20, 30};
    kc_box same = {0, 0, 20, 30};
    CHECK(corloc_iou(clipped, &same) == 1.0f, "identical boxes: %.17g", corloc_iou(clipped, &same));
    /* Python's round(): half to even */
    const double x[] = {0.5, 1.5, 2.5, -0.5, -1.5, 3.5000001, 2.4999999, 110.5, 111.5, 0.4999};
    const double r[] = {0, 2, 2, -0.0, -2, 4, 2, 110, 112, 0};
    for (int i = 0; i < (int)(sizeof x / sizeof *x); i++)
        CHECK(coco_round(x[i]) == r[i], "round(%.9g) = %.9g, Python gives %.9g", x[i], coco_round(x[i]), r[i]);
    return test_done();
}
