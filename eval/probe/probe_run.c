/* eval/probe/probe_run.c — kc-probe train and eval (see probe_run.h). */
#include "eval/probe/probe_run.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eval/voc/ledger.h"
#include "eval/probe/probe.h"
#include "eval/probe/probe_data.h"
#include "eval/probe/probe_file.h"
#include "pipeline/kc.h"
#include "pipeline/lock.h"
#include "pipeline/progress.h"
#include "pipeline/sha256.h"
#include "pipeline/weights/safetensors.h"

#ifdef _OPENMP
#include <omp.h>
#endif

static const char *const VOC_NAMES[21] = {"background", "aeroplane", "bicycle", "bird",  "boat",        "bottle",
                                          "bus",        "car",       "cat",     "chair", "cow",         "diningtable",
                                          "dog",        "horse",     "motorbike", "person", "pottedplant", "sheep",
                                          "sofa",       "train",     "tvmonitor"};

probe_run_opts probe_run_defaults(void)
{
    return (probe_run_opts){.epochs = 25, .batch = 60, .drop_at = 20, .mask = 100, .classes = 21, .lr = 0.01,
                            .momentum = 0.9, .weight_decay = 1e-4, .ledger = "ledger.tsv"};
}

/* ---- the inputs of both runs ---------------------------------------------------------------------- */

typedef struct inputs {
    probe_label_set L;
    probe_tokens T;
    probe_label_maps lm;
    int S; /* the labels' first size */
} inputs;

static void inputs_free(inputs *in)
{
    probe_label_maps_free(&in->lm, in->L.n);
    probe_tokens_close(&in->T);
    probe_label_set_free(&in->L);
}

/* What the options ask of the cache: the head's token width and network (eval: h, head_ws), the
 * size S, a batch's worth of images (train: h NULL). */
static int inputs_check(inputs *in, const probe_run_opts *o, const probe_head *h, const char *head_ws)
{
    const cache_reader *r = &in->T.r;
    const char *pol = cache_attr(r, "policy");
    int S = in->T.size;
    if (h) {
        if (in->T.dim != h->dim)
            return kc_fail("%s: tokens of width %d, but the head %s takes %d", o->features, in->T.dim, o->head, h->dim);
        const char *ws = cache_attr(r, "weights_sha256");
        if (head_ws && ws && strcmp(head_ws, "-") && strcmp(head_ws, ws))
            return kc_fail("%s: tokens of another network (weights sha256 %.12s) than the head %s was trained on (%.12s)",
                           o->features, ws, o->head, head_ws);
    }
    if (o->size && S && o->size != S)
        return kc_fail("%s: tokens at policy %s (%d pixels), but --size %d%s", o->features, pol, S, o->size,
                       h ? "" : ": the labels would not match the images");
    if (o->size) S = o->size;
    if (!S && !(h && o->full))
        return kc_fail("%s: policy %s is not a square one; give the labels' size with --size S", o->features,
                       pol ? pol : "?");
    if (!h && in->L.n < o->batch)
        return kc_fail("%s: %d images, fewer than one batch of %d (the short batch is dropped)", o->labels, in->L.n,
                       o->batch);
    in->S = S;
    return 0;
}

/* The labels, the tokens and every label map, read and checked before anything is written. */
static int inputs_open(inputs *in, const probe_run_opts *o, const probe_head *h, const char *head_ws)
{
    memset(in, 0, sizeof *in);
    KC_TRY(probe_label_set_open(&in->L, o->labels, o->label_dir));
    int rc = probe_tokens_open(&in->T, o->features, &in->L);
    if (rc == 0) rc = inputs_check(in, o, h, head_ws);
    if (rc == 0)
        rc = probe_label_maps_load(&in->lm, &in->L, &in->T, in->S, o->mask, h ? o->full : 0, h ? h->classes : o->classes);
    if (rc == 0 && in->lm.total == 0)
        rc = kc_fail("%s: no valid pixel in the split (every label is %d)", o->labels, PROBE_IGNORE);
    if (rc < 0) inputs_free(in);
    return rc;
}

/* ---- training ------------------------------------------------------------------------------------ */

/* OUT's folder and OUT.partial/ made, OUT.partial/lock taken. */
static int train_lock(const char *out, const char *partial, kc_lock **lock)
{
    char *dir = kc_strdup(out), *slash = strrchr(dir, '/');
    int rc = 0;
    if (slash && slash != dir) {
        *slash = 0;
        rc = kc_mkdirs(dir);
    }
    free(dir);
    KC_TRY(rc);
    if (mkdir(partial, 0755) != 0 && errno != EEXIST)
        return kc_fail("%s: cannot create folder (%s)", partial, strerror(errno));
    char *lock_path = kc_strfmt("%s/lock", partial);
    rc = kc_lock_take(lock, lock_path, out);
    free(lock_path);
    if (rc < 0) rmdir(partial); /* (only when empty: another run's stays) */
    return rc;
}

static char *stem_of(const char *out)
{
    char *s = kc_strdup(out);
    size_t n = strlen(s);
    if (n > 12 && !strcmp(s + n - 12, ".safetensors")) s[n - 12] = 0;
    return s;
}

/* The head with its protocol and provenance in the metadata. */
static int write_head(const probe_run_opts *o, const inputs *in, const probe_head *h, const double *loss_per_epoch,
                      const char *content)
{
    char ep[16], bs[16], ms[16], ss[16], sd[32], da[16], lrs[32], mos[32], wds[32], cl[16], created[32];
    snprintf(ep, sizeof ep, "%d", o->epochs);
    snprintf(bs, sizeof bs, "%d", o->batch);
    snprintf(ms, sizeof ms, "%d", o->mask);
    snprintf(ss, sizeof ss, "%d", in->S);
    snprintf(sd, sizeof sd, "%lld", o->seed);
    snprintf(da, sizeof da, "%d", o->drop_at);
    snprintf(lrs, sizeof lrs, "%.17g", o->lr);
    snprintf(mos, sizeof mos, "%.17g", o->momentum);
    snprintf(wds, sizeof wds, "%.17g", o->weight_decay);
    snprintf(cl, sizeof cl, "%d", o->classes);
    kc_utc_created(created);
    char *losses = probe_losses_format(loss_per_epoch, o->epochs);
    const char *ws = cache_attr(&in->T.r, "weights_sha256");
    const char *meta[] = {"format", "keycut-probe-head 1",
                          "protocol", "Leopart linear: 1x1 conv on frozen last-block tokens, bilinear logits to the mask "
                                      "size (align_corners False), cross-entropy ignore 255 (mean over a batch's valid "
                                      "pixels), SGD momentum, weight decay, lr x0.1 from drop_at, PyTorch Conv2d init, "
                                      "seeded shuffle, last short batch dropped",
                          "code_version", KC_VERSION,
                          "command", kc_cmdline(),
                          "features", o->features,
                          "features_content_hash", content ? content : "-",
                          "weights_sha256", ws ? ws : "-",
                          "labels", o->labels,
                          "labels_sha256", in->L.hash,
                          "epochs", ep, "batch", bs, "lr", lrs, "drop_at", da, "momentum", mos, "weight_decay", wds,
                          "mask_size", ms, "size", ss, "seed", sd, "classes", cl,
                          "losses", losses,
                          "created", created};
    st_out_tensor t[2] = {{"bias", 1, {h->classes}, h->b}, {"weight", 2, {h->classes, h->dim}, h->w}};
    int rc = st_write_f32(o->out, t, 2, meta, (int)(sizeof meta / sizeof *meta / 2));
    free(losses);
    return rc;
}

int probe_run_train(const probe_run_opts *o)
{
    inputs in;
    KC_TRY(inputs_open(&in, o, NULL, NULL));
    const cache_reader *r = &in.T.r;
    const int M = o->mask, C = o->classes, D = in.T.dim, G = in.T.gh * in.T.gw, n = in.L.n;
    const int B = o->batch, n_batches = n / B;
    int rc = -1;
    kc_lock *lock = NULL;
    probe_head h = {0};
    probe_trainer tr = {0};
    probe_ckpt ck = {0, NULL};
    char *ck_path = NULL, *stem = NULL, *csv_path = NULL;
    int *order = NULL;
    const uint8_t **labs = NULL;
    long *valid = NULL;
    probe_batch rd[2] = {{0}};
    kc_buf csv = {0};

    /* the lock, before anything is written */
    char *partial = kc_strfmt("%s.partial", o->out);
    if (train_lock(o->out, partial, &lock) < 0) goto done;

    /* everything that determines the head */
    char fpbuf[64 * 6];
    snprintf(fpbuf, sizeof fpbuf, "%d %d %.17g %.17g %.17g %d %d %d %d %lld %d", o->epochs, o->batch, o->lr, o->momentum,
             o->weight_decay, o->drop_at, M, in.S, C, o->seed, D);
    const char *content = cache_content_hash(r);
    const char *parts[] = {"kc-probe train", KC_VERSION, content ? content : "-", in.L.hash, fpbuf};
    char fingerprint[65];
    cache_fingerprint(fingerprint, 5, parts);

    probe_head_init(&h, C, D, (uint64_t)o->seed);
    probe_trainer_init(&tr, &h, in.T.gh, in.T.gw, M, B); /* (its momentum buffers are what a checkpoint restores) */
    ck.losses = kc_calloc((size_t)o->epochs + 1, sizeof(double));
    ck_path = kc_strfmt("%s/checkpoint.safetensors", partial);
    if (kc_exists(ck_path)) {
        probe_ckpt got = {0, NULL};
        if (probe_ckpt_load(ck_path, &h, tr.bw, tr.bb, fingerprint, &got) < 0) {
            char why[2048]; /* (a copy: kc_fail writes the buffer kc_error() reads) */
            snprintf(why, sizeof why, "%s", kc_error());
            kc_fail("%s; remove %s to start over, or rerun the original command", why, partial);
            goto done;
        }
        free(ck.losses);
        ck = got;
        ck.losses = kc_realloc(ck.losses, sizeof(double) * ((size_t)o->epochs + 1));
        kc_info("resuming after epoch %d of %d (%s)", ck.epochs_done, o->epochs, ck_path);
    }
    char *hint = kc_strfmt("finished epochs are kept in %s; rerun the same command to resume", partial);
    kc_on_interrupt(hint);
    free(hint);

    tr.steps = ck.epochs_done * n_batches;
    order = kc_malloc(sizeof(int) * (size_t)n);
    labs = kc_malloc(sizeof *labs * (size_t)B);
    valid = kc_malloc(sizeof(long) * (size_t)B);
    for (int k = 0; k < 2; k++)
        rd[k] = (probe_batch){.tok = &in.T, .L = &in.L, .buf = kc_malloc(sizeof(float) * (size_t)B * G * D)};
    if (o->trace && probe_trace_write(o->trace, in.L.ids, n, &h, (uint64_t)o->seed, o->epochs, ck.epochs_done) < 0)
        goto done;
    progress pg;
    progress_init(&pg, "train", (long)(o->epochs - ck.epochs_done) * n_batches * B, "images");
    kc_buf_printf(&csv, "epoch,lr,loss\n");
    for (int e = 0; e < ck.epochs_done; e++)
        kc_buf_printf(&csv, "%d,%.9g,%.9g\n", e, e >= o->drop_at ? o->lr * 0.1 : o->lr, ck.losses[e]);
    const double t0 = kc_now();
    for (int e = ck.epochs_done; e < o->epochs; e++) {
        const double lr = e >= o->drop_at ? o->lr * 0.1 : o->lr;
        probe_epoch_order((uint64_t)o->seed, e, n, order);
        double loss_sum = 0;
        int n_steps = 0;
        rd[0].ids = order, rd[0].count = B;
        probe_batch_start(&rd[0]);
        for (int bi = 0; bi < n_batches; bi++) {
            probe_batch *cur = &rd[bi % 2], *next = &rd[(bi + 1) % 2];
            if (probe_batch_wait(cur) < 0) goto done; /* (no reader runs: the next starts after this one) */
            if (bi + 1 < n_batches) {
                next->ids = order + (size_t)(bi + 1) * B, next->count = B;
                probe_batch_start(next);
            }
            const int *ids = order + (size_t)bi * B;
            for (int k = 0; k < B; k++) labs[k] = in.lm.map[ids[k]], valid[k] = in.lm.valid[ids[k]];
            double bl = probe_trainer_step(&tr, cur->buf, labs, valid, (float)lr, (float)o->momentum,
                                           (float)o->weight_decay);
            if (!isnan(bl)) loss_sum += bl, n_steps++;
            progress_add(&pg, B);
        }
        ck.losses[e] = n_steps ? loss_sum / n_steps : NAN;
        kc_info("epoch %d of %d: loss %.6f (lr %g)", e + 1, o->epochs, ck.losses[e], lr);
        kc_buf_printf(&csv, "%d,%.9g,%.9g\n", e, lr, ck.losses[e]);
        ck.epochs_done = e + 1;
        if (probe_ckpt_save(ck_path, &h, tr.bw, tr.bb, ck.epochs_done, ck.losses, fingerprint) < 0) goto done;
    }
    progress_end(&pg);

    /* the head, then its loss curve; the partial folder goes last */
    stem = stem_of(o->out);
    csv_path = kc_strfmt("%s.loss.csv", stem);
    if (kc_write_file_atomic(csv_path, csv.s, csv.n) < 0 || write_head(o, &in, &h, ck.losses, content) < 0) goto done;
    unlink(ck_path);
    kc_lock_release(lock);
    lock = NULL;
    rmdir(partial);
    kc_info("wrote %s and %s (%d image%s x %d epoch%s in %.1f s, final loss %.6f)", o->out, csv_path, n_batches * B,
            kc_s(n_batches * B), o->epochs, kc_s(o->epochs), kc_now() - t0, ck.losses[o->epochs - 1]);
    rc = 0;
done:
    kc_lock_release(lock); /* (on a failure: the lock file goes, OUT.partial/ stays) */
    free(stem), free(csv_path), free(csv.s), free(ck_path), free(ck.losses);
    for (int k = 0; k < 2; k++) free(rd[k].buf);
    probe_trainer_free(&tr);
    free(order), free(labs), free(valid);
    probe_head_free(&h);
    inputs_free(&in);
    free(partial);
    return rc;
}

/* ---- evaluation ------------------------------------------------------------------------------------ */

/* The confusion matrix (C, C) of the head's predictions over the split, the images in parallel. */
static int confusion(const probe_head *h, const inputs *in, int64_t *conf)
{
    const cache_reader *r = &in->T.r;
    const int C = h->classes, D = in->T.dim, gh = in->T.gh, gw = in->T.gw, G = gh * gw;
    const probe_label_maps *lm = &in->lm;
    const int nt = omp_get_max_threads() > 0 ? omp_get_max_threads() : 1;
    int64_t *part = kc_calloc((size_t)nt * C * C, sizeof(int64_t)); /* (nt, C, C): one per thread */
    char errmsg[2048] = "";
    progress pg;
    progress_init(&pg, "eval", in->L.n, "images");
#pragma omp parallel
    {
        const int t = omp_get_thread_num();
        probe_geom g = {0};
        probe_scratch *s = NULL;
        int gmh = 0, gmw = 0;
#pragma omp for schedule(dynamic, 4)
        for (int i = 0; i < in->L.n; i++) {
            if (errmsg[0]) continue;
            if (!s || gmh != lm->h[i] || gmw != lm->w[i]) {
                if (s) probe_scratch_free(s), probe_geom_free(&g);
                probe_geom_init(&g, gh, gw, lm->h[i], lm->w[i]);
                s = probe_scratch_new(&g, C);
                gmh = lm->h[i], gmw = lm->w[i];
            }
            char *ds = kc_strfmt("/features/tokens/%s", in->L.ids[i]);
            float *tok;
            int rows, cols;
            if (cache_read_f32(r, ds, &tok, &rows, &cols) < 0 || rows != G || cols != D) {
#pragma omp critical(kc_probe_err)
                if (!errmsg[0]) snprintf(errmsg, sizeof errmsg, "%s: %s: cannot read tokens of the expected shape", r->path, ds);
            } else {
                uint8_t *pred = kc_malloc((size_t)lm->w[i] * lm->h[i]);
                probe_predict(h, &g, tok, s, pred);
                probe_confusion_add(part + (size_t)t * C * C, C, lm->map[i], pred, (long)lm->w[i] * lm->h[i]);
                free(pred);
                free(tok);
            }
            free(ds);
            progress_add(&pg, 1);
        }
        if (s) probe_scratch_free(s), probe_geom_free(&g);
    }
    progress_end(&pg);
    for (int j = 0; j < C * C; j++) conf[j] = part[j];
    for (int t = 1; t < nt; t++)
        for (int j = 0; j < C * C; j++) conf[j] += part[(size_t)t * C * C + j];
    free(part);
    return errmsg[0] ? kc_fail("%s", errmsg) : 0;
}

/* OUT/iou.csv, OUT/summary.csv (its text in *sum), OUT/network, all at once. */
static int write_scores(const probe_run_opts *o, int C, const int64_t *conf, long pixels, kc_buf *sum, double *miou,
                        int *n_cls)
{
    double *iou = kc_malloc(sizeof(double) * C);
    int64_t *tp = kc_malloc(sizeof(int64_t) * C), *fp = kc_malloc(sizeof(int64_t) * C), *fn = kc_malloc(sizeof(int64_t) * C);
    *miou = probe_iou(conf, C, iou, tp, fp, fn, n_cls);
    kc_buf per = {0};
    kc_buf_printf(sum, "miou,classes,pixels\n%.9g,%d,%ld\n", *miou, *n_cls, pixels);
    kc_buf_printf(&per, "class,name,iou,tp,fp,fn\n");
    for (int c = 0; c < C; c++) {
        char name[16];
        if (C == 21) snprintf(name, sizeof name, "%s", VOC_NAMES[c]);
        else snprintf(name, sizeof name, "class%d", c);
        if (isnan(iou[c])) kc_buf_printf(&per, "%d,%s,,%lld,%lld,%lld\n", c, name, (long long)tp[c], (long long)fp[c], (long long)fn[c]);
        else kc_buf_printf(&per, "%d,%s,%.9g,%lld,%lld,%lld\n", c, name, iou[c], (long long)tp[c], (long long)fp[c], (long long)fn[c]);
    }
    char *sp = kc_strfmt("%s/summary.csv", o->out), *ip = kc_strfmt("%s/iou.csv", o->out);
    int rc = kc_write_file_atomic(ip, per.s, per.n) < 0 || kc_write_file_atomic(sp, sum->s, sum->n) < 0 ? -1 : 0;
    if (rc == 0 && o->network) {
        char *np = kc_strfmt("%s/network", o->out), *nl = kc_strfmt("%s\n", o->network);
        rc = kc_write_file_atomic(np, nl, strlen(nl));
        free(np), free(nl);
    }
    if (rc == 0) rc = kc_outputs_commit();
    free(sp), free(ip), free(per.s), free(iou), free(tp), free(fp), free(fn);
    return rc < 0 ? -1 : 0;
}

int probe_run_eval(const probe_run_opts *o)
{
    probe_head h = {0};
    char *head_ws = NULL;
    KC_TRY(probe_head_read(o->head, &h, &head_ws));
    inputs in;
    if (inputs_open(&in, o, &h, head_ws) < 0) {
        probe_head_free(&h), free(head_ws);
        return -1;
    }
    /* From here on a failure leaves the lock to kc_die's clean-up, which also removes the folder
     * the lock made (a failed run leaves no output folder behind), as for any early end. */
    int rc = -1;
    kc_lock *lock;
    const int C = h.classes;
    int64_t *conf = kc_calloc((size_t)C * C, sizeof(int64_t)); /* (C, C): rows true, columns predicted */
    kc_buf sum = {0};
    double miou;
    int n_cls;
    if (kc_lock_folder(&lock, o->out, NULL) < 0) goto done;
    kc_outputs_begin();
    if (confusion(&h, &in, conf) < 0 || write_scores(o, C, conf, in.lm.total, &sum, &miou, &n_cls) < 0) goto done;
    /* the val labels were opened: one ledger line, after the outputs */
    ledger_entry le;
    memset(&le, 0, sizeof le);
    le.split = in.L.split_file;
    if (kc_sha256_file(in.L.split_file, le.split_sha256) < 0) snprintf(le.split_sha256, sizeof le.split_sha256, "%s", in.L.hash);
    le.networks = (char *)(o->network ? o->network : "-");
    le.n_settings = 1;
    kc_sha256_buf_hex(sum.s, sum.n, le.summary_sha256);
    if (ledger_append(o->ledger, &le) < 0) goto done;
    kc_lock_release(lock);
    kc_info("mIoU %.4f over %d class%s (%ld pixels, %d image%s) -> %s/summary.csv", miou, n_cls, n_cls == 1 ? "" : "es",
            in.lm.total, in.L.n, kc_s(in.L.n), o->out);
    rc = 0;
done:
    free(sum.s), free(conf), free(head_ws);
    inputs_free(&in);
    probe_head_free(&h);
    return rc;
}
