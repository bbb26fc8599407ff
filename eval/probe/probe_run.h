/* eval/probe/probe_run.h — kc-probe's two runs: train a linear head on frozen tokens, score one by mIoU.
 *
 * train: Leopart's linear protocol (eval/probe/probe.h) on the cached last-block tokens (kc-extract
 * --features tokens --policy square224 | square448), the labels read and checked first
 * (eval/probe/probe_data.h).  SGD with momentum and weight decay, the learning rate x0.1 from drop_at;
 * the head starts as PyTorch's Conv2d default from the seed, each epoch's image order is a seeded
 * shuffle, the last short batch is dropped.  Tokens are read batch by batch (a reader thread
 * fetches the next batch while this one is computed), so memory does not grow with the dataset.
 * OUT.partial/ holds the lock and, after each epoch, a checkpoint (eval/probe/probe_file.h): a killed
 * run resumes from it to the same bytes.  Writes OUT (the head, its protocol and provenance in
 * the metadata) and OUT's stem + .loss.csv (epoch,lr,loss), then removes OUT.partial/.
 *
 * eval: the head's arg-max against the labels, at M x M or (full) at each label's own size, in a
 * confusion matrix; writes OUT/summary.csv (miou,classes,pixels), OUT/iou.csv
 * (class,name,iou,tp,fp,fn; the VOC names when C = 21) and, with a network name, OUT/network, all
 * at once; then appends one line to the ledger (eval/voc/ledger.h: the labels were opened).
 *
 *     probe_run_opts o = probe_run_defaults();
 *     o.features = "train/tokens224.h5", o.labels = "voc:/data/VOC2012:trainaug", o.out = "head.safetensors";
 *     if (probe_run_train(&o) < 0) kc_die();
 */
#ifndef KC_PROBE_RUN_H
#define KC_PROBE_RUN_H

typedef struct probe_run_opts {
    const char *features, *labels, *out; /* both runs: the tokens, the voc:/davis: spec, the output */
    const char *label_dir;               /* another label folder (NULL: the dataset's) */
    const char *head;                    /* eval: the head to score */
    const char *ledger, *network;        /* eval */
    const char *trace;                   /* train: the trace folder (eval/probe/probe_file.h), or NULL */
    int epochs, batch, drop_at;          /* train */
    int mask;                            /* M, the side logits and labels are compared at */
    int size;                            /* S, the labels' first size (0: the policy's) */
    int classes;                         /* train: C */
    int full;                            /* eval: compare at each label's own size */
    double lr, momentum, weight_decay;   /* train */
    long long seed;                      /* train */
} probe_run_opts;

/* kc-probe's defaults: 25 epochs, batch 60, drop at 20, M = 100, 21 classes, lr 0.01, momentum
 * 0.9, weight decay 1e-4, ledger ./ledger.tsv. */
probe_run_opts probe_run_defaults(void);

/* 0, or -1 with a message (bad inputs, another run holding the output, a write that failed).
 * A failure of eval after it took OUT's lock leaves the lock to main's kc_die, whose clean-up
 * removes it and the folders the lock made (pipeline/lock.h), as for any early end. */
int probe_run_train(const probe_run_opts *o);
int probe_run_eval(const probe_run_opts *o);
#endif
