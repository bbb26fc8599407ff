/* eval/probe/probe.h — the linear probe on frozen tokens (kc-probe): Leopart's linear protocol.
 *
 * A head (C classes, D = token width) maps each patch token t of an image to logits
 *     z = W t + b                                        W (C, D), b (C): a 1x1 convolution
 * on the patch grid (gh, gw); the logits are upsampled to the mask size (mh, mw) as PyTorch's
 * F.interpolate(mode="bilinear", align_corners=False) does (source (dst + 0.5) * in / out - 0.5,
 * clamped at 0, in float; the two rows and columns around it, weights 1 - l and l), and scored by
 * the cross-entropy against the label map at that size, pixels of label 255 ignored:
 *     loss = sum over valid pixels p of (log sum_c exp(u_cp) - u_{label(p) p}) / N
 * with N the valid pixels of the whole batch (PyTorch's mean with ignore_index).  Upsampling the
 * C logits instead of the D-wide tokens is the same map (both steps are linear, and each output's
 * bilinear weights sum to one), and C = 21 is far less than D = 384.
 *
 * Gradients (per image, added over the batch in image order, so that the result does not depend
 * on the number of threads):  g_u = (softmax(u) - onehot(label)) / N on valid pixels, 0 elsewhere;
 * g_z = the transposed upsampling of g_u; dW = g_z T (C, D), db = sum over the grid of g_z.
 * The step is PyTorch's SGD: d = grad + weight_decay * p; buf = d on the first step, else
 * buf = momentum * buf + d; p -= lr * buf (for W and b alike).
 *
 * Labels (VOC SegmentationClass, 0..20 and 255): the map is brought to S x S by Pillow's NEAREST
 * resize (torchvision's Resize((S, S), NEAREST) of the PIL label), then to M x M as
 * F.interpolate(mode="nearest") does (source floor(dst * (in / out)) in float, the identity when
 * the sizes are equal).
 *
 * Evaluation: the arg-max over classes of the upsampled logits (lowest class on a tie) against
 * the label, in a C x C confusion matrix (rows: true class, columns: predicted) over valid pixels;
 * IoU_c = tp / (tp + fp + fn); mIoU = the mean over the classes with tp + fp + fn > 0.
 *
 *     probe_geom g;  probe_geom_init(&g, 14, 14, 100, 100);
 *     probe_scratch *s = probe_scratch_new(&g, C);
 *     double loss = probe_image_grad(&head, &g, tokens, labels, 1.0 / n_valid_batch, s, dW, db);
 *     probe_predict(&head, &g, tokens, s, pred);       // pred (mh, mw)
 *     probe_scratch_free(s);  probe_geom_free(&g);
 */
#ifndef KC_PROBE_H
#define KC_PROBE_H
#include <stdint.h>

#define PROBE_IGNORE 255

typedef struct probe_head {
    int classes, dim;
    float *w; /* (classes, dim) row-major */
    float *b; /* (classes) */
} probe_head;

/* The bilinear map from a (gh, gw) grid to (mh, mw) pixels, per axis. */
typedef struct probe_geom {
    int gh, gw, mh, mw;
    int *y0, *y1, *x0, *x1; /* (mh), (mw): source rows / columns */
    float *wy0, *wy1, *wx0, *wx1;
} probe_geom;

void probe_geom_init(probe_geom *g, int gh, int gw, int mh, int mw);
void probe_geom_free(probe_geom *g);

/* u (C, mh, mw) from z (C, gh, gw); tmp: C * gh * mw floats. */
void probe_upsample(const probe_geom *g, int C, const float *z, float *tmp, float *u);
/* The transpose: gz (C, gh, gw) from gu (C, mh, mw) (gz overwritten); tmp: C * gh * mw floats. */
void probe_upsample_t(const probe_geom *g, int C, const float *gu, float *tmp, float *gz);

typedef struct probe_scratch probe_scratch;
probe_scratch *probe_scratch_new(const probe_geom *g, int classes);
void probe_scratch_free(probe_scratch *s);

/* One image: tokens (gh * gw, D), labels (mh * mw) (0..C-1 or PROBE_IGNORE).  Writes the
 * image's gradients dW (C, D), db (C), scaled by inv_n; returns the image's summed loss over its
 * valid pixels (not scaled), in double. */
double probe_image_grad(const probe_head *h, const probe_geom *g, const float *tokens, const uint8_t *labels,
                        float inv_n, probe_scratch *s, float *dW, float *db);
/* The arg-max class per pixel, (mh, mw). */
void probe_predict(const probe_head *h, const probe_geom *g, const float *tokens, probe_scratch *s, uint8_t *pred);

/* Valid pixels (label != PROBE_IGNORE) of a label map; -1 with the message naming `what` when a
 * label is neither a class (< classes) nor PROBE_IGNORE. */
long probe_count_valid(const uint8_t *labels, long n, int classes, const char *what);

/* PyTorch's SGD step on p (n) with its momentum buffer buf (n); first: the first step. */
void probe_sgd(float *p, float *buf, const float *grad, int n, float lr, float momentum, float weight_decay, int first);

/* The label map (w, h) at S x S (Pillow NEAREST), then at m x m (F.interpolate nearest): out (m, m). */
void probe_labels_resize(const uint8_t *lab, int w, int h, int S, int m, uint8_t *out);

/* Confusion (C x C, int64, rows true, columns predicted) += over valid pixels. */
void probe_confusion_add(int64_t *conf, int classes, const uint8_t *truth, const uint8_t *pred, long n);
/* Per class IoU (NaN where tp + fp + fn == 0) and tp, fp, fn; returns mIoU, *n_classes the classes
 * counted. */
double probe_iou(const int64_t *conf, int classes, double *iou, int64_t *tp, int64_t *fp, int64_t *fn, int *n_classes);

/* Training: one SGD step per batch, the images' gradients computed in parallel (OpenMP) and
 * added in batch order, so that the head does not depend on the number of threads.
 *
 *     probe_trainer t;  probe_trainer_init(&t, &head, gh, gw, M, batch);
 *     double loss = probe_trainer_step(&t, tokens, labels, valid, lr, momentum, weight_decay);
 *     probe_trainer_free(&t);
 * t.bw, t.bb are the momentum buffers and t.steps the steps taken (a checkpoint restores them). */
typedef struct probe_trainer {
    probe_head *h;
    int batch, n_threads, steps;
    float *bw, *bb;       /* momentum buffers (C, D), (C) */
    probe_geom g;
    probe_scratch **sc;   /* one per thread */
    float *dW, *db;       /* (batch, C, D), (batch, C): each image's gradient */
    float *gw, *gb;       /* the batch's */
    double *img_loss;     /* (batch) */
} probe_trainer;
void probe_trainer_init(probe_trainer *t, probe_head *h, int gh, int gw, int mask, int batch);
/* tokens (batch, gh * gw, D) contiguous; labels[k] (mask, mask); valid[k] their valid pixels.
 * Returns the batch's loss (mean over its valid pixels), or NAN when it has none (no step). */
double probe_trainer_step(probe_trainer *t, const float *tokens, const uint8_t *const *labels, const long *valid,
                          float lr, float momentum, float weight_decay);
void probe_trainer_free(probe_trainer *t);

/* The mIoU of kc-probe eval's DIR/summary.csv (header miou,classes,pixels), a fraction in [0, 1];
 * -1 with a message naming the file (absent, not such a summary, or a bad value). */
int probe_read_summary(const char *dir, double *miou);

/* Head initialised as PyTorch's Conv2d(dim, classes, 1) default: weight and bias uniform in
 * [-1/sqrt(dim), 1/sqrt(dim)] (kaiming_uniform_(a = sqrt 5) for the weight), drawn from the
 * Philox generator of pipeline/model/vit_init.h with `seed` (tensor names "probe.weight", "probe.bias"). */
void probe_head_init(probe_head *h, int classes, int dim, uint64_t seed);
void probe_head_free(probe_head *h);
/* The order of the images in epoch `epoch`: a Fisher-Yates shuffle of 0..n-1 whose draws come from
 * Philox (seed, tensor name "probe.order", counter epoch * 2^32 + k). */
void probe_epoch_order(uint64_t seed, int epoch, int n, int *order);
#endif
