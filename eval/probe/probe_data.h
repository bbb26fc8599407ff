/* eval/probe/probe_data.h — what the linear probe (eval/probe/probe.h) reads: label maps and token batches.
 *
 * Labels.  A voc: or davis: dataset spec (datasets/dataset.h) names the split's ids and their
 * class maps: VOC ROOT/SegmentationClass/<id>.png (SegmentationClassAug for trainaug / train_aug,
 * or the folder label_dir names), DAVIS ROOT/Annotations/480p/<seq>/<frame>.png (object ids as
 * classes).  probe_label_maps_load reads every map, checks that it has the size of its image in
 * the features cache and holds only classes 0..C-1 and PROBE_IGNORE, then brings it to M x M
 * (probe_labels_resize: S x S, then M x M) or keeps it at its own size (full).  The set's hash is
 * sha256 over the split file's hex hash and every label file's bytes, in split order.
 *
 * Tokens.  A features cache of kc-extract --features tokens holds /features/tokens/<id>, (G, D)
 * float32 with G = gh * gw patches; the probe needs every labelled image, all on one grid (a
 * square policy: 224, 448 or 480 pixels rounded up to a multiple of the cache's patch, the side S
 * the labels are resized to, and the grid must be S / patch).  A batch of
 * images' tokens is read on a thread of its own while the previous batch is computed:
 *
 *     probe_label_set L;   if (probe_label_set_open(&L, "voc:/data/VOC2012:val", NULL) < 0) ...
 *     probe_tokens T;      if (probe_tokens_open(&T, "val/tokens224.h5", &L) < 0) ...
 *     probe_label_maps lm; if (probe_label_maps_load(&lm, &L, &T, T.size, 100, 0, 21) < 0) ...
 *     probe_batch b = {.tok = &T, .L = &L, .ids = order, .count = B, .buf = buf};   // buf (B, G, D)
 *     probe_batch_start(&b);  ...  if (probe_batch_wait(&b) < 0) ...    // b.buf filled
 *     probe_label_maps_free(&lm, L.n);  probe_tokens_close(&T);  probe_label_set_free(&L);
 */
#ifndef KC_PROBE_DATA_H
#define KC_PROBE_DATA_H
#include <pthread.h>
#include <stdint.h>

#include "pipeline/cache/cache.h"

typedef struct probe_label_set {
    int n;
    char **ids, **paths; /* (n): the split's ids and their label files */
    char *split_file;    /* the list the ids came from (the ledger names it) */
    char hash[65];       /* set by probe_label_maps_load (see above) */
} probe_label_set;

/* 0, or -1 with a message (the spec names no voc: or davis: dataset, or the dataset's own errors). */
int probe_label_set_open(probe_label_set *L, const char *spec, const char *label_dir);
void probe_label_set_free(probe_label_set *L);

typedef struct probe_tokens {
    cache_reader r;
    int *cix;       /* (L->n): each label's row in the cache index */
    int gh, gw;     /* the one patch grid */
    int dim;        /* D, the token width */
    int size;       /* the side of the cache's square policy for its patch (policy_size: 224, 448,
                     * 480; 490 for square480 with patch 14), 0 when the policy is not square */
} probe_tokens;

/* Opens the cache and checks that it holds tokens of every image of L on one grid. */
int probe_tokens_open(probe_tokens *t, const char *path, const probe_label_set *L);
void probe_tokens_close(probe_tokens *t);

typedef struct probe_label_maps {
    uint8_t **map; /* (n): the maps, (h[i], w[i]) each */
    int *w, *h;    /* (n): their sizes (M x M unless full) */
    long *valid;   /* (n): valid pixels each */
    long total;    /* valid pixels of the split */
} probe_label_maps;

/* Reads and checks every label of L (see above) and sets L->hash; classes: C. */
int probe_label_maps_load(probe_label_maps *m, probe_label_set *L, const probe_tokens *t, int S, int M, int full,
                          int classes);
void probe_label_maps_free(probe_label_maps *m, int n);

/* One batch of tokens, read by its own thread: set tok, L, ids, count and buf, then start; wait
 * joins the thread and returns 0 (buf filled) or -1 with the reader's message. */
typedef struct probe_batch {
    const probe_tokens *tok;
    const probe_label_set *L;
    const int *ids; /* (count): label indices of the batch */
    int count;
    float *buf;     /* (count, G, D) */
    int rc;
    char err[2048];
    pthread_t th;
    int running;
} probe_batch;
void probe_batch_start(probe_batch *b);
int probe_batch_wait(probe_batch *b);
#endif
