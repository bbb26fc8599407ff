/* eval/probe/probe_file.h — the linear probe's files (safetensors, pipeline/weights/safetensors.h).
 *
 * Head (kc-probe train's output, read by kc-probe eval): tensors weight (C, D) and bias (C),
 * float32; the metadata holds "format" "keycut-probe-head 1", the protocol, the run's settings,
 * the per-epoch losses and the provenance, among them "weights_sha256" of the network whose tokens
 * it was trained on (probe_run.c writes it).  A head in PyTorch's layout from elsewhere is read the
 * same way: weight (C, D) or (C, D, 1, 1) with 2 <= C <= 255, bias (C), no other tensor.
 *
 * Checkpoint (HEAD.partial/checkpoint.safetensors, after every epoch): weight, bias and the SGD
 * momentum buffers momentum.weight (C, D), momentum.bias (C); metadata epochs_done, the run's
 * fingerprint (a checkpoint of another run is refused) and the losses so far, "%.17g" joined by
 * commas, so that a resumed run continues to the same bytes.
 *
 * Trace (--trace DIR, for the PyTorch reference tests/ref/probe_ref.py): DIR/ids.txt (the ids in
 * label order, one a line), DIR/orders.txt (every epoch's image order, one epoch a line) and
 * DIR/init.safetensors (the initial head).
 *
 *     probe_head h = {0};  char *ws;
 *     if (probe_head_read("head.safetensors", &h, &ws) < 0) ...      // ws: NULL when not recorded
 *     probe_ckpt c;
 *     if (probe_ckpt_load(path, &h, bw, bb, fingerprint, &c) < 0) ...  // h, bw, bb overwritten
 */
#ifndef KC_PROBE_FILE_H
#define KC_PROBE_FILE_H

#include "eval/probe/probe.h"

/* Reads a head (h->w, h->b new); *weights_sha: the head's "weights_sha256" (new) or NULL. */
int probe_head_read(const char *path, probe_head *h, char **weights_sha);

typedef struct probe_ckpt {
    int epochs_done;
    double *losses; /* (epochs_done + 1): per epoch */
} probe_ckpt;

/* The losses as the metadata holds them: "%.17g" joined by commas (new string). */
char *probe_losses_format(const double *losses, int n);
/* bw (C, D), bb (C): the momentum buffers; losses (epochs_done). */
int probe_ckpt_save(const char *path, const probe_head *h, const float *bw, const float *bb, int epochs_done,
                    const double *losses, const char *fingerprint);
/* Restores h (its classes and dim set), bw and bb in place; c->losses new.  -1 with "a checkpoint
 * of another run" when the fingerprint differs. */
int probe_ckpt_load(const char *path, probe_head *h, float *bw, float *bb, const char *fingerprint, probe_ckpt *c);

/* ids (n): the labels in order; epochs of n images each; epochs_done > 0 is refused (a resumed
 * run cannot be traced). */
int probe_trace_write(const char *dir, char *const *ids, int n, const probe_head *h, uint64_t seed, int epochs,
                      int epochs_done);
#endif
