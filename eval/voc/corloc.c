/* eval/voc/corloc.c — the LOST / TokenCut box IoU with their float32 promotion (see corloc.h). */
#include "eval/voc/corloc.h"

#include <math.h>

static int all_int(const double *v, int n)
{
    for (int i = 0; i < n; i++)
        if (v[i] != floor(v[i]) || fabs(v[i]) > 16777216.0) return 0;
    return 1;
}

/* volatile stores force each float32 rounding even where the compiler could keep more precision */
static double iou_promoted(const double pred[4], const kc_box *gt, int gt_int)
{
    const double g[4] = {gt->xmin, gt->ymin, gt->xmax, gt->ymax};
    double iw = fmin(pred[2], g[2]) - fmax(pred[0], g[0]);
    double ih = fmin(pred[3], g[3]) - fmax(pred[1], g[1]);
    if (iw < 0) iw = 0;
    if (ih < 0) ih = 0;
    double inter = iw * ih; /* int64 when every corner is an integer, else float64: exact either way */
    const double eps = 1e-7;
    const float feps = (float)eps;
    /* the prediction is an int64 tensor: h1 + eps and w1 * h1 are float32 in every case */
    volatile float h1 = (float)(pred[3] - pred[1]) + feps;
    volatile float a1 = (float)(pred[2] - pred[0]) * h1;
    if (gt_int) {
        volatile float h2 = (float)(g[3] - g[1]) + feps;
        volatile float a2 = (float)(g[2] - g[0]) * h2;
        volatile float u = a1 + a2;
        u = u - (float)inter;
        u = u + feps;
        volatile float iou = (float)inter / u;
        return iou;
    }
    /* float64 ground truth: the float32 area of the prediction joins double arithmetic */
    double h2 = (g[3] - g[1]) + eps;
    double u = (double)a1 + (g[2] - g[0]) * h2 - inter + eps;
    return inter / u;
}

static int boxes_int(const kc_box *gt, int n)
{
    for (int i = 0; i < n; i++)
        if (!all_int(&gt[i].xmin, 1) || !all_int(&gt[i].ymin, 1) || !all_int(&gt[i].xmax, 1) ||
            !all_int(&gt[i].ymax, 1))
            return 0;
    return 1;
}

double corloc_iou(const double pred[4], const kc_box *gt)
{
    return iou_promoted(pred, gt, boxes_int(gt, 1));
}

int corloc_hit(const double pred[4], const kc_box *gt, int n)
{
    int gt_int = boxes_int(gt, n); /* np.asarray of all boxes: int64 only when every corner is */
    for (int i = 0; i < n; i++)
        if (iou_promoted(pred, &gt[i], gt_int) >= 0.5) return 1;
    return 0;
}
