/* stages/kc-probe.c — the linear probe on frozen tokens, scored by mIoU (eval/probe.h).
 *
 *   kc-probe train --features TRAIN.h5 --labels voc:ROOT:trainaug --out HEAD.safetensors [options]
 *   kc-probe eval  --head HEAD.safetensors --features VAL.h5 --labels voc:ROOT:val --out DIR
 *
 * train: Leopart's linear protocol on the cached last-block tokens (kc-extract --features tokens
 * --policy square224 | square448): a 1x1 convolution to the classes, bilinear to the mask size,
 * cross-entropy with ignore 255; SGD with momentum and weight decay, the learning rate x0.1 from
 * --drop-at; the head starts as PyTorch's Conv2d default from --seed, each epoch's image order is
 * a seeded shuffle, the last short batch is dropped.  Tokens are read from the cache batch by
 * batch (a reader thread fetches the next batch while this one is computed), so memory does not
 * grow with the dataset.  After each epoch a checkpoint (head, momentum, losses) goes to
 * HEAD.partial/: a killed run resumes from it to the same bytes.  Writes HEAD (tensors weight
 * (C, D) and bias (C), the protocol and provenance in its metadata) and HEAD's stem + .loss.csv.
 * eval: writes DIR/summary.csv (miou,classes,pixels) and DIR/iou.csv (class,name,iou,tp,fp,fn);
 * a head in PyTorch's layout (weight (C, D) or (C, D, 1, 1), bias (C)) from elsewhere is scored the
 * same way; every run appends a line to the ledger (the val labels were opened).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "datasets/dataset.h"
#include "eval/ledger.h"
#include "eval/probe.h"
#include "pipeline/cache/cache.h"
#include "pipeline/images/image.h"
#include "pipeline/kc.h"
#include "pipeline/lock.h"
#include "pipeline/progress.h"
#include "pipeline/images/resize.h"
#include "pipeline/weights/safetensors.h"
#include "pipeline/sha256.h"

#ifdef _OPENMP
#include <omp.h>
#endif

static const char *const VOC_NAMES[21] = {"background", "aeroplane", "bicycle", "bird",  "boat",        "bottle",
                                          "bus",        "car",       "cat",     "chair", "cow",         "diningtable",
                                          "dog",        "horse",     "motorbike", "person", "pottedplant", "sheep",
                                          "sofa",       "train",     "tvmonitor"};

static void usage(int rc)
{
    FILE *f = rc ? stderr : stdout;
    fprintf(f,
            "usage: kc-probe train --features TRAIN.h5 --labels voc:ROOT:SPLIT --out HEAD.safetensors\n"
            "                      [--epochs 25] [--lr 0.01] [--batch 60] [--drop-at 20] [--momentum 0.9]\n"
            "                      [--weight-decay 1e-4] [--mask-size 100] [--size S] [--seed 0]\n"
            "                      [--classes 21] [--label-dir NAME] [--trace DIR]\n"
            "       kc-probe eval  --head HEAD.safetensors --features VAL.h5 --labels voc:ROOT:SPLIT --out DIR\n"
            "                      [--mask-size 100] [--eval-size mask|full] [--size S] [--classes 21]\n"
            "                      [--label-dir NAME] [--ledger FILE] [--network NAME]\n"
            "\n"
            "The thesis's second reading of a network: one linear layer trained with labels on the frozen\n"
            "last-block tokens (a features cache of kc-extract --features tokens --policy square224 or\n"
            "square448), scored by mIoU on the VOC classes (Leopart's linear protocol).\n"
            "  --labels SPEC    voc:ROOT:SPLIT: ROOT/ImageSets/Segmentation/SPLIT.txt, labels\n"
            "                   ROOT/SegmentationClass/<id>.png (SegmentationClassAug for trainaug; --label-dir\n"
            "                   names another folder); davis:ROOT:SPLIT: Annotations/480p/<seq>/<frame>.png\n"
            "                   (object ids as classes: --classes 2 for one object)\n"
            "  --size S         the side the labels are first resized to (nearest); default: the\n"
            "                   features' policy (224 or 448), which it must equal\n"
            "  --mask-size M    the side logits and labels are compared at (default 100)\n"
            "  --drop-at E      epochs E, E+1, ... (0-based) run at lr x 0.1\n"
            "  --eval-size full compare at each label's own size instead of M x M\n"
            "  --ledger FILE    eval: the ledger of label openings (default ./ledger.tsv)\n"
            "  --trace DIR      train: also write the ids, the initial head and every epoch's image order\n"
            "                   (what the PyTorch reference tests/ref/probe_ref.py replays)\n"
            "A killed train resumes from HEAD.partial/ when rerun with the same command.\n"
            "\n"
            "examples:\n"
            "  kc-probe train --features cache/dino/voc12-trainaug/tokens224.h5 --labels voc:/data/VOC2012:trainaug \\\n"
            "                 --out cache/dino/probe/head.safetensors\n"
            "  kc-probe eval --head cache/dino/probe/head.safetensors --features cache/dino/voc12-val/tokens224.h5 \\\n"
            "                --labels voc:/data/VOC2012:val --out scores/dino/probe\n");
    exit(rc);
}

/* ---- options ----------------------------------------------------------------------------------- */

typedef struct opts {
    const char *features, *labels, *out, *head, *label_dir, *ledger, *network, *trace;
    int epochs, batch, drop_at, mask, size, classes, full;
    double lr, momentum, wd;
    long long seed;
} opts;

static double num(const char *opt, const char *v, double lo, double hi)
{
    char *end;
    double x = strtod(v, &end);
    if (end == v || *end || !(x >= lo && x <= hi)) kc_die_msg("%s: bad value '%s' (%g..%g)", opt, v, lo, hi);
    return x;
}

static void parse(int argc, char **argv, opts *o)
{
    *o = (opts){.epochs = 25, .batch = 60, .drop_at = 20, .mask = 100, .classes = 21, .lr = 0.01, .momentum = 0.9,
                .wd = 1e-4, .ledger = "ledger.tsv"};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) usage(0);
        if (i + 1 >= argc) kc_die_msg("%s needs a value (see --help)", a);
        const char *v = argv[++i];
        if (!strcmp(a, "--features")) o->features = v;
        else if (!strcmp(a, "--labels")) o->labels = v;
        else if (!strcmp(a, "--out")) o->out = v;
        else if (!strcmp(a, "--head")) o->head = v;
        else if (!strcmp(a, "--label-dir")) o->label_dir = v;
        else if (!strcmp(a, "--ledger")) o->ledger = v;
        else if (!strcmp(a, "--network")) o->network = v;
        else if (!strcmp(a, "--trace")) o->trace = v;
        else if (!strcmp(a, "--epochs")) o->epochs = (int)num(a, v, 1, 100000);
        else if (!strcmp(a, "--batch")) o->batch = (int)num(a, v, 1, 100000);
        else if (!strcmp(a, "--drop-at")) o->drop_at = (int)num(a, v, 0, 100000);
        else if (!strcmp(a, "--mask-size")) o->mask = (int)num(a, v, 1, 4096);
        else if (!strcmp(a, "--size")) o->size = (int)num(a, v, 1, 8192);
        else if (!strcmp(a, "--classes")) o->classes = (int)num(a, v, 2, 255);
        else if (!strcmp(a, "--lr")) o->lr = num(a, v, 0, 100);
        else if (!strcmp(a, "--momentum")) o->momentum = num(a, v, 0, 1);
        else if (!strcmp(a, "--weight-decay")) o->wd = num(a, v, 0, 1);
        else if (!strcmp(a, "--seed")) o->seed = (long long)num(a, v, 0, 9007199254740991.0);
        else if (!strcmp(a, "--eval-size")) {
            if (!strcmp(v, "full")) o->full = 1;
            else if (strcmp(v, "mask")) kc_die_msg("--eval-size: unknown '%s' (mask or full)", v);
        } else kc_die_msg("unknown option %s (see --help)", a);
    }
    if (o->full && o->size) kc_die_msg("--eval-size full compares at the labels' own size: --size does not apply");
}

/* ---- labels -------------------------------------------------------------------------------------- */

typedef struct label_set {
    int n;
    char **ids, **paths;
    char *split_file; /* the list the ids came from (the ledger names it) */
    char hash[65];    /* sha256 over the split file's hash and every label file's bytes */
} label_set;

static void label_set_free(label_set *l)
{
    for (int i = 0; i < l->n; i++) free(l->ids[i]), free(l->paths[i]);
    free(l->ids), free(l->paths), free(l->split_file);
    memset(l, 0, sizeof *l);
}

static int labels_open(const char *spec, const char *label_dir, label_set *L)
{
    memset(L, 0, sizeof *L);
    kc_dataset d;
    KC_TRY(dataset_open(&d, spec));
    int rc = 0;
    if (strcmp(d.kind, "voc") && strcmp(d.kind, "davis")) {
        rc = kc_fail("--labels %s: a voc: or davis: dataset is needed (the labels are its class maps)", spec);
    } else {
        const char *dir = label_dir;
        if (!dir && !strcmp(d.kind, "voc"))
            dir = !strcmp(d.split, "trainaug") || !strcmp(d.split, "train_aug") ? "SegmentationClassAug" : "SegmentationClass";
        L->n = d.n;
        L->ids = kc_malloc(sizeof(char *) * (size_t)d.n);
        L->paths = kc_malloc(sizeof(char *) * (size_t)d.n);
        for (int i = 0; i < d.n; i++) {
            L->ids[i] = kc_strdup(d.ids[i]);
            L->paths[i] = !strcmp(d.kind, "voc") ? kc_strfmt("%s/%s/%s.png", d.root, dir, d.ids[i])
                                                 : kc_strfmt("%s/Annotations/480p/%s.png", d.root, d.ids[i]);
        }
        L->split_file = !strcmp(d.kind, "voc") ? dataset_voc_split_path(d.root, d.split)
                                               : kc_strfmt("%s/ImageSets/2017/%s.txt", d.root, d.split);
        if (!kc_exists(L->split_file)) {
            free(L->split_file);
            L->split_file = kc_strdup(d.split);
        }
    }
    dataset_free(&d);
    return rc;
}

/* Reads every label map, checks it against the cache's image sizes and the class count, and
 * brings it to M x M (mask mode) or keeps it as it is (full). */
typedef struct label_maps {
    uint8_t **map; /* n maps */
    int *w, *h;    /* their sizes (M x M in mask mode) */
    long *valid;   /* valid pixels each */
    long total;
} label_maps;

static void label_maps_free(label_maps *m, int n)
{
    for (int i = 0; m->map && i < n; i++) free(m->map[i]);
    free(m->map), free(m->w), free(m->h), free(m->valid);
    memset(m, 0, sizeof *m);
}

static int labels_load(label_set *L, const cache_reader *r, const int *cix, int S, int M, int full, int classes,
                       label_maps *out)
{
    memset(out, 0, sizeof *out);
    out->map = kc_calloc((size_t)L->n, sizeof *out->map);
    out->w = kc_calloc((size_t)L->n, sizeof(int));
    out->h = kc_calloc((size_t)L->n, sizeof(int));
    out->valid = kc_calloc((size_t)L->n, sizeof(long));
    kc_sha256 hh;
    kc_sha256_init(&hh);
    char split_hash[65] = "";
    if (kc_sha256_file(L->split_file, split_hash) == 0) kc_sha256_update(&hh, split_hash, 64);
    char errmsg[2048] = "";
    progress pg;
    progress_init(&pg, "labels", L->n, "maps");
    for (int i = 0; i < L->n && !errmsg[0]; i++) {
        uint8_t *lab = NULL, *bytes = NULL;
        size_t nb = 0;
        int w, h;
        if (!kc_exists(L->paths[i])) {
            snprintf(errmsg, sizeof errmsg, "%s: no label file for image %s of the split", L->paths[i], L->ids[i]);
            break;
        }
        if (kc_read_file(L->paths[i], &bytes, &nb) < 0 || image_read_png_index(L->paths[i], &w, &h, &lab) < 0) {
            snprintf(errmsg, sizeof errmsg, "%s", kc_error());
            free(bytes);
            break;
        }
        kc_sha256_update(&hh, bytes, nb);
        free(bytes);
        const int32_t *sz = r->index.size + 2 * cix[i];
        if (w != sz[1] || h != sz[0]) {
            snprintf(errmsg, sizeof errmsg, "%s: label of %dx%d, but its image %s is %dx%d in %s", L->paths[i], w, h,
                     L->ids[i], sz[1], sz[0], r->path);
            free(lab);
            break;
        }
        if (probe_count_valid(lab, (long)w * h, classes, L->paths[i]) < 0) {
            snprintf(errmsg, sizeof errmsg, "%s", kc_error());
            free(lab);
            break;
        }
        if (full) {
            out->map[i] = lab;
            out->w[i] = w, out->h[i] = h;
        } else {
            out->map[i] = kc_malloc((size_t)M * M);
            probe_labels_resize(lab, w, h, S, M, out->map[i]);
            out->w[i] = out->h[i] = M;
            free(lab);
        }
        out->valid[i] = probe_count_valid(out->map[i], (long)out->w[i] * out->h[i], classes, L->paths[i]);
        out->total += out->valid[i];
        progress_add(&pg, 1);
    }
    progress_end(&pg);
    kc_sha256_hex(&hh, L->hash);
    if (errmsg[0]) {
        kc_set_error(errmsg);
        return -1;
    }
    return 0;
}

/* ---- the features cache -------------------------------------------------------------------------- */

/* Opens the cache, checks it holds tokens of every labelled image on one grid, and gives each
 * label's index in the cache, the grid, the token width and the size S of the policy. */
static int features_open(const char *path, const label_set *L, cache_reader *r, int **cix_out, int *gh, int *gw, int *dim,
                         int *S)
{
    KC_TRY(cache_open(r, path, CACHE_FORMAT_FEATURES));
    const char *kinds = cache_attr(r, "feature_kinds");
    if (!kinds || !strstr(kinds, "tokens"))
        return kc_fail("%s: holds no tokens (feature kinds '%s'); extract with --features tokens", path, kinds ? kinds : "?");
    const char *pol = cache_attr(r, "policy");
    kc_policy p;
    *S = 0;
    if (pol && policy_parse(pol, &p) == 0) {
        if (p == POLICY_SQUARE224) *S = 224;
        else if (p == POLICY_SQUARE448) *S = 448;
        else if (p == POLICY_SQUARE480) *S = 480;
    }
    int *cix = kc_malloc(sizeof(int) * (size_t)L->n);
    for (int i = 0; i < L->n; i++) {
        cix[i] = cache_index_find(&r->index, L->ids[i]);
        if (cix[i] < 0) {
            free(cix);
            return kc_fail("%s: no tokens of image %s of the split (a cache of other images?)", path, L->ids[i]);
        }
        const int32_t *g = r->index.grid + 2 * cix[i];
        if (i == 0) *gh = g[0], *gw = g[1];
        if (g[0] != *gh || g[1] != *gw) {
            free(cix);
            return kc_fail("%s: image %s has a %dx%d grid, %s %dx%d: the probe needs one grid (a square policy)", path,
                           L->ids[i], g[1], g[0], L->ids[0], *gw, *gh);
        }
    }
    char *ds = kc_strfmt("/features/tokens/%s", L->ids[0]);
    float *t;
    int rows, cols;
    int rc = cache_read_f32(r, ds, &t, &rows, &cols);
    free(ds);
    if (rc < 0) {
        free(cix);
        return -1;
    }
    free(t);
    *dim = cols;
    *cix_out = cix;
    return 0;
}

/* Batches of tokens, read by a thread of its own while the previous batch is computed. */
typedef struct reader {
    const cache_reader *r;
    const label_set *L;
    int G, D;
    const int *ids; /* label indices of the batch */
    int count;
    float *buf;     /* (count, G, D) */
    int rc;
    char err[2048];
    pthread_t th;
    int running;
} reader;

static void *read_batch(void *arg)
{
    reader *b = arg;
    b->rc = 0;
    for (int k = 0; k < b->count && b->rc == 0; k++) {
        char *ds = kc_strfmt("/features/tokens/%s", b->L->ids[b->ids[k]]);
        float *t;
        int rows, cols;
        if (cache_read_f32(b->r, ds, &t, &rows, &cols) < 0) {
            b->rc = -1;
        } else if (rows != b->G || cols != b->D) {
            b->rc = kc_fail("%s: %s is (%d, %d), expected (%d, %d)", b->r->path, ds, rows, cols, b->G, b->D);
            free(t);
        } else {
            memcpy(b->buf + (size_t)k * b->G * b->D, t, sizeof(float) * (size_t)b->G * b->D);
            free(t);
        }
        free(ds);
    }
    if (b->rc < 0) snprintf(b->err, sizeof b->err, "%s", kc_error());
    return NULL;
}

static void reader_start(reader *b)
{
    b->running = pthread_create(&b->th, NULL, read_batch, b) == 0;
    if (!b->running) read_batch(b);
}

static int reader_wait(reader *b)
{
    if (b->running) pthread_join(b->th, NULL);
    b->running = 0;
    if (b->rc < 0) {
        kc_set_error(b->err);
        return -1;
    }
    return 0;
}

/* ---- training ------------------------------------------------------------------------------------ */

typedef struct ckpt {
    int epochs_done;
    double *losses; /* per epoch */
} ckpt;

static char *fmt_losses(const double *l, int n)
{
    kc_buf b = {0};
    kc_buf_printf(&b, "%s", "");
    for (int i = 0; i < n; i++) kc_buf_printf(&b, "%s%.17g", i ? "," : "", l[i]);
    return b.s;
}

static int save_ckpt(const char *path, const probe_head *h, const float *bw, const float *bb, int epochs_done,
                     const double *losses, const char *fingerprint)
{
    st_out_tensor t[4] = {{"bias", 1, {h->classes}, h->b},
                          {"momentum.bias", 1, {h->classes}, bb},
                          {"momentum.weight", 2, {h->classes, h->dim}, bw},
                          {"weight", 2, {h->classes, h->dim}, h->w}};
    char ep[16];
    snprintf(ep, sizeof ep, "%d", epochs_done);
    char *ls = fmt_losses(losses, epochs_done);
    const char *meta[] = {"epochs_done", ep, "fingerprint", fingerprint, "losses", ls};
    int rc = st_write_f32(path, t, 4, meta, 3);
    free(ls);
    return rc;
}

/* A tensor of a safetensors file as float32, its shape checked: (a, b) or, with b4, (a, b, 1, 1). */
static int st_get(const st_file *f, const char *name, int ndim, const int64_t *shape, int allow_4d, float **out)
{
    for (int i = 0; i < f->n; i++) {
        const st_tensor *t = &f->t[i];
        if (strcmp(t->name, name)) continue;
        int okshape = t->ndim == ndim;
        for (int k = 0; okshape && k < ndim; k++) okshape = t->shape[k] == shape[k];
        if (!okshape && allow_4d && ndim == 2 && t->ndim == 4)
            okshape = t->shape[0] == shape[0] && t->shape[1] == shape[1] && t->shape[2] == 1 && t->shape[3] == 1;
        if (!okshape) return kc_fail("%s: tensor %s has the wrong shape", f->path, name);
        return st_tensor_f32(f, t, out);
    }
    return kc_fail("%s: no tensor %s", f->path, name);
}

static int load_ckpt(const char *path, probe_head *h, float *bw, float *bb, const char *fingerprint, ckpt *c)
{
    uint8_t *data;
    size_t size;
    KC_TRY(kc_read_file(path, &data, &size));
    st_file f;
    if (st_open(&f, path, data, size) < 0) {
        free(data);
        return -1;
    }
    int rc = 0;
    const char *fp = st_meta(&f, "fingerprint"), *ep = st_meta(&f, "epochs_done"), *ls = st_meta(&f, "losses");
    int64_t sw[2] = {h->classes, h->dim}, sb[1] = {h->classes};
    float *w = NULL, *b = NULL, *mw = NULL, *mb = NULL;
    if (!fp || strcmp(fp, fingerprint) || !ep || !ls) {
        rc = kc_fail("%s: a checkpoint of another run", path);
    } else if (st_get(&f, "weight", 2, sw, 0, &w) < 0 || st_get(&f, "bias", 1, sb, 0, &b) < 0 ||
               st_get(&f, "momentum.weight", 2, sw, 0, &mw) < 0 || st_get(&f, "momentum.bias", 1, sb, 0, &mb) < 0) {
        rc = -1;
    } else {
        memcpy(h->w, w, sizeof(float) * (size_t)h->classes * h->dim);
        memcpy(h->b, b, sizeof(float) * (size_t)h->classes);
        memcpy(bw, mw, sizeof(float) * (size_t)h->classes * h->dim);
        memcpy(bb, mb, sizeof(float) * (size_t)h->classes);
        c->epochs_done = atoi(ep);
        c->losses = kc_calloc((size_t)c->epochs_done + 1, sizeof(double));
        const char *p = ls;
        for (int i = 0; i < c->epochs_done; i++) {
            char *end;
            c->losses[i] = strtod(p, &end);
            p = *end == ',' ? end + 1 : end;
        }
    }
    free(w), free(b), free(mw), free(mb);
    st_close(&f);
    free(data);
    return rc;
}

/* --trace DIR (for the PyTorch reference, tests/ref/probe_ref.py): the ids in label order, the
 * initial head and every epoch's image order, as plain files. */
static void write_trace(const char *dir, const label_set *L, const probe_head *h, uint64_t seed, int epochs, int n,
                        int epochs_done)
{
    if (epochs_done > 0) kc_die_msg("--trace: the run resumes after epoch %d; trace a fresh run", epochs_done);
    if (kc_mkdirs(dir) < 0) kc_die();
    kc_buf ids = {0}, ord = {0};
    for (int i = 0; i < L->n; i++) kc_buf_printf(&ids, "%s\n", L->ids[i]);
    int *order = kc_malloc(sizeof(int) * (size_t)n);
    for (int e = 0; e < epochs; e++) {
        probe_epoch_order(seed, e, n, order);
        for (int i = 0; i < n; i++) kc_buf_printf(&ord, "%d%c", order[i], i + 1 < n ? ' ' : '\n');
    }
    free(order);
    char *pi = kc_strfmt("%s/ids.txt", dir), *po = kc_strfmt("%s/orders.txt", dir), *ph = kc_strfmt("%s/init.safetensors", dir);
    st_out_tensor t[2] = {{"bias", 1, {h->classes}, h->b}, {"weight", 2, {h->classes, h->dim}, h->w}};
    if (kc_write_file_atomic(pi, ids.s, ids.n) < 0 || kc_write_file_atomic(po, ord.s, ord.n) < 0 ||
        st_write_f32(ph, t, 2, NULL, 0) < 0)
        kc_die();
    free(pi), free(po), free(ph), free(ids.s), free(ord.s);
}

static char *stem_of(const char *out)
{
    char *s = kc_strdup(out);
    size_t n = strlen(s);
    if (n > 12 && !strcmp(s + n - 12, ".safetensors")) s[n - 12] = 0;
    return s;
}

static int cmd_train(const opts *o)
{
    if (!o->features || !o->labels || !o->out) kc_die_msg("train needs --features, --labels and --out (see --help)");
    if (o->drop_at > o->epochs) kc_die_msg("--drop-at %d is after the last epoch (%d)", o->drop_at, o->epochs);
    label_set L;
    if (labels_open(o->labels, o->label_dir, &L) < 0) kc_die();
    cache_reader r;
    int *cix, gh, gw, D, S;
    if (features_open(o->features, &L, &r, &cix, &gh, &gw, &D, &S) < 0) kc_die();
    if (o->size && S && o->size != S)
        kc_die_msg("%s: tokens at policy %s (%d pixels), but --size %d: the labels would not match the images", o->features,
                   cache_attr(&r, "policy"), S, o->size);
    if (o->size) S = o->size;
    if (!S) kc_die_msg("%s: policy %s is not a square one; give the labels' size with --size S", o->features,
                       cache_attr(&r, "policy") ? cache_attr(&r, "policy") : "?");
    const int M = o->mask, C = o->classes, G = gh * gw, n = L.n;
    if (n < o->batch) kc_die_msg("%s: %d images, fewer than one batch of %d (the short batch is dropped)", o->labels, n, o->batch);

    /* every label read and checked before anything is written */
    label_maps lm;
    if (labels_load(&L, &r, cix, S, M, 0, C, &lm) < 0) kc_die();
    if (lm.total == 0) kc_die_msg("%s: no valid pixel in the split (every label is %d)", o->labels, PROBE_IGNORE);

    /* the lock, before anything is written */
    char *partial = kc_strfmt("%s.partial", o->out), *lock_path = kc_strfmt("%s/lock", partial);
    {
        char *dir = kc_strdup(o->out), *slash = strrchr(dir, '/');
        if (slash && slash != dir) {
            *slash = 0;
            if (kc_mkdirs(dir) < 0) kc_die();
        }
        free(dir);
    }
    if (mkdir(partial, 0755) != 0 && errno != EEXIST) kc_die_msg("%s: cannot create folder (%s)", partial, strerror(errno));
    kc_lock *lock;
    if (kc_lock_take(&lock, lock_path, o->out) < 0) {
        rmdir(partial); /* (only when empty: another run's stays) */
        kc_die();
    }

    /* everything that determines the head */
    char fpbuf[64 * 6];
    snprintf(fpbuf, sizeof fpbuf, "%d %d %.17g %.17g %.17g %d %d %d %d %lld %d", o->epochs, o->batch, o->lr, o->momentum,
             o->wd, o->drop_at, M, S, C, o->seed, D);
    const char *content = cache_content_hash(&r);
    const char *parts[] = {"kc-probe train", KC_VERSION, content ? content : "-", L.hash, fpbuf};
    char fingerprint[65];
    cache_fingerprint(fingerprint, 5, parts);

    probe_head h;
    probe_head_init(&h, C, D, (uint64_t)o->seed);
    probe_trainer tr; /* (its momentum buffers are what a checkpoint restores) */
    probe_trainer_init(&tr, &h, gh, gw, M, o->batch);
    ckpt ck = {0, kc_calloc((size_t)o->epochs + 1, sizeof(double))};
    char *ck_path = kc_strfmt("%s/checkpoint.safetensors", partial);
    if (kc_exists(ck_path)) {
        ckpt got = {0, NULL};
        if (load_ckpt(ck_path, &h, tr.bw, tr.bb, fingerprint, &got) < 0)
            kc_die_msg("%s; remove %s to start over, or rerun the original command", kc_error(), partial);
        free(ck.losses);
        ck = got;
        ck.losses = kc_realloc(ck.losses, sizeof(double) * ((size_t)o->epochs + 1));
        kc_info("resuming after epoch %d of %d (%s)", ck.epochs_done, o->epochs, ck_path);
    }
    char *hint = kc_strfmt("finished epochs are kept in %s; rerun the same command to resume", partial);
    kc_on_interrupt(hint);
    free(hint);

    const int B = o->batch, n_batches = n / B;
    tr.steps = ck.epochs_done * n_batches;
    int *order = kc_malloc(sizeof(int) * (size_t)n);
    const uint8_t **labs = kc_malloc(sizeof *labs * (size_t)B);
    long *valid = kc_malloc(sizeof(long) * (size_t)B);
    reader rd[2];
    for (int k = 0; k < 2; k++)
        rd[k] = (reader){.r = &r, .L = &L, .G = G, .D = D, .buf = kc_malloc(sizeof(float) * (size_t)B * G * D)};
    if (o->trace) write_trace(o->trace, &L, &h, (uint64_t)o->seed, o->epochs, n, ck.epochs_done);
    progress pg;
    progress_init(&pg, "train", (long)(o->epochs - ck.epochs_done) * n_batches * B, "images");
    kc_buf csv = {0};
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
        reader_start(&rd[0]);
        for (int bi = 0; bi < n_batches; bi++) {
            reader *cur = &rd[bi % 2], *next = &rd[(bi + 1) % 2];
            if (reader_wait(cur) < 0) kc_die();
            if (bi + 1 < n_batches) {
                next->ids = order + (size_t)(bi + 1) * B, next->count = B;
                reader_start(next);
            }
            const int *ids = order + (size_t)bi * B;
            for (int k = 0; k < B; k++) labs[k] = lm.map[ids[k]], valid[k] = lm.valid[ids[k]];
            double bl = probe_trainer_step(&tr, cur->buf, labs, valid, (float)lr, (float)o->momentum, (float)o->wd);
            if (!isnan(bl)) loss_sum += bl, n_steps++;
            progress_add(&pg, B);
        }
        ck.losses[e] = n_steps ? loss_sum / n_steps : NAN;
        kc_info("epoch %d of %d: loss %.6f (lr %g)", e + 1, o->epochs, ck.losses[e], lr);
        kc_buf_printf(&csv, "%d,%.9g,%.9g\n", e, lr, ck.losses[e]);
        ck.epochs_done = e + 1;
        if (save_ckpt(ck_path, &h, tr.bw, tr.bb, ck.epochs_done, ck.losses, fingerprint) < 0) kc_die();
    }
    progress_end(&pg);

    /* the head, then its loss curve; the partial folder goes last */
    char ep[16], bs[16], ms[16], ss[16], sd[32], da[16], lrs[32], mos[32], wds[32], cl[16], created[32];
    snprintf(ep, sizeof ep, "%d", o->epochs);
    snprintf(bs, sizeof bs, "%d", o->batch);
    snprintf(ms, sizeof ms, "%d", M);
    snprintf(ss, sizeof ss, "%d", S);
    snprintf(sd, sizeof sd, "%lld", o->seed);
    snprintf(da, sizeof da, "%d", o->drop_at);
    snprintf(lrs, sizeof lrs, "%.17g", o->lr);
    snprintf(mos, sizeof mos, "%.17g", o->momentum);
    snprintf(wds, sizeof wds, "%.17g", o->wd);
    snprintf(cl, sizeof cl, "%d", C);
    kc_utc_created(created);
    char *losses = fmt_losses(ck.losses, o->epochs);
    const char *ws = cache_attr(&r, "weights_sha256");
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
                          "labels_sha256", L.hash,
                          "epochs", ep, "batch", bs, "lr", lrs, "drop_at", da, "momentum", mos, "weight_decay", wds,
                          "mask_size", ms, "size", ss, "seed", sd, "classes", cl,
                          "losses", losses,
                          "created", created};
    st_out_tensor t[2] = {{"bias", 1, {C}, h.b}, {"weight", 2, {C, D}, h.w}};
    char *stem = stem_of(o->out), *csv_path = kc_strfmt("%s.loss.csv", stem);
    if (kc_write_file_atomic(csv_path, csv.s, csv.n) < 0 || st_write_f32(o->out, t, 2, meta, (int)(sizeof meta / sizeof *meta / 2)) < 0)
        kc_die();
    unlink(ck_path);
    kc_lock_release(lock);
    rmdir(partial);
    kc_info("wrote %s and %s (%d images x %d epochs in %.1f s, final loss %.6f)", o->out, csv_path, n_batches * B,
            o->epochs, kc_now() - t0, ck.losses[o->epochs - 1]);

    free(losses), free(stem), free(csv_path), free(csv.s), free(ck_path), free(ck.losses);
    for (int k = 0; k < 2; k++) free(rd[k].buf);
    probe_trainer_free(&tr);
    free(order), free(labs), free(valid);
    probe_head_free(&h);
    label_maps_free(&lm, L.n);
    free(cix);
    cache_close(&r);
    label_set_free(&L);
    free(partial), free(lock_path);
    return 0;
}

/* ---- evaluation ------------------------------------------------------------------------------------ */

static int load_head(const char *path, probe_head *h, char **weights_sha)
{
    uint8_t *data;
    size_t size;
    KC_TRY(kc_read_file(path, &data, &size));
    st_file f;
    if (st_open(&f, path, data, size) < 0) {
        free(data);
        return -1;
    }
    int rc = 0;
    const st_tensor *wt = NULL;
    for (int i = 0; i < f.n; i++)
        if (!strcmp(f.t[i].name, "weight")) wt = &f.t[i];
    if (!wt || (wt->ndim != 2 && wt->ndim != 4) || (wt->ndim == 4 && (wt->shape[2] != 1 || wt->shape[3] != 1)) ||
        wt->shape[0] < 2 || wt->shape[0] > 255) {
        rc = kc_fail("%s: no tensor 'weight' of shape (C, D) or (C, D, 1, 1) with 2 <= C <= 255", path);
    } else {
        h->classes = (int)wt->shape[0];
        h->dim = (int)wt->shape[1];
        int64_t sw[2] = {h->classes, h->dim}, sb[1] = {h->classes};
        if (st_get(&f, "weight", 2, sw, 1, &h->w) < 0 || st_get(&f, "bias", 1, sb, 0, &h->b) < 0) rc = -1;
        for (int i = 0; rc == 0 && i < f.n; i++)
            if (strcmp(f.t[i].name, "weight") && strcmp(f.t[i].name, "bias"))
                rc = kc_fail("%s: unknown tensor '%s' (a head has weight and bias)", path, f.t[i].name);
        for (int i = 0; rc == 0 && i < h->classes * h->dim; i++)
            if (!isfinite(h->w[i])) rc = kc_fail("%s: weight holds a non-finite value", path);
    }
    const char *ws = rc == 0 ? st_meta(&f, "weights_sha256") : NULL;
    *weights_sha = ws ? kc_strdup(ws) : NULL;
    st_close(&f);
    free(data);
    return rc;
}

static int cmd_eval(const opts *o)
{
    if (!o->head || !o->features || !o->labels || !o->out) kc_die_msg("eval needs --head, --features, --labels and --out (see --help)");
    probe_head h = {0};
    char *head_ws = NULL;
    if (load_head(o->head, &h, &head_ws) < 0) kc_die();
    label_set L;
    if (labels_open(o->labels, o->label_dir, &L) < 0) kc_die();
    cache_reader r;
    int *cix, gh, gw, D, S;
    if (features_open(o->features, &L, &r, &cix, &gh, &gw, &D, &S) < 0) kc_die();
    if (D != h.dim) kc_die_msg("%s: tokens of width %d, but the head %s takes %d", o->features, D, o->head, h.dim);
    const char *ws = cache_attr(&r, "weights_sha256");
    if (head_ws && ws && strcmp(head_ws, "-") && strcmp(head_ws, ws))
        kc_die_msg("%s: tokens of another network (weights sha256 %.12s) than the head %s was trained on (%.12s)",
                   o->features, ws, o->head, head_ws);
    if (o->size && S && o->size != S)
        kc_die_msg("%s: tokens at policy %s (%d pixels), but --size %d", o->features, cache_attr(&r, "policy"), S, o->size);
    if (o->size) S = o->size;
    if (!S && !o->full) kc_die_msg("%s: policy %s is not a square one; give the labels' size with --size S", o->features,
                                   cache_attr(&r, "policy") ? cache_attr(&r, "policy") : "?");
    const int C = h.classes, M = o->mask, G = gh * gw;
    label_maps lm;
    if (labels_load(&L, &r, cix, S, M, o->full, C, &lm) < 0) kc_die();
    if (lm.total == 0) kc_die_msg("%s: no valid pixel in the split (every label is %d)", o->labels, PROBE_IGNORE);
    kc_lock *lock;
    if (kc_lock_folder(&lock, o->out, NULL) < 0) kc_die();
    kc_outputs_begin();

    const int nt = omp_get_max_threads() > 0 ? omp_get_max_threads() : 1;
    int64_t *conf = kc_calloc((size_t)nt * C * C, sizeof(int64_t));
    char errmsg[2048] = "";
    progress pg;
    progress_init(&pg, "eval", L.n, "images");
#pragma omp parallel
    {
        const int t = omp_get_thread_num();
        probe_geom g = {0};
        probe_scratch *s = NULL;
        int gmh = 0, gmw = 0;
#pragma omp for schedule(dynamic, 4)
        for (int i = 0; i < L.n; i++) {
            if (errmsg[0]) continue;
            if (!s || gmh != lm.h[i] || gmw != lm.w[i]) {
                if (s) probe_scratch_free(s), probe_geom_free(&g);
                probe_geom_init(&g, gh, gw, lm.h[i], lm.w[i]);
                s = probe_scratch_new(&g, C);
                gmh = lm.h[i], gmw = lm.w[i];
            }
            char *ds = kc_strfmt("/features/tokens/%s", L.ids[i]);
            float *tok;
            int rows, cols;
            if (cache_read_f32(&r, ds, &tok, &rows, &cols) < 0 || rows != G || cols != D) {
#pragma omp critical(kc_probe_err)
                if (!errmsg[0]) snprintf(errmsg, sizeof errmsg, "%s: %s: cannot read tokens of the expected shape", r.path, ds);
            } else {
                uint8_t *pred = kc_malloc((size_t)lm.w[i] * lm.h[i]);
                probe_predict(&h, &g, tok, s, pred);
                probe_confusion_add(conf + (size_t)t * C * C, C, lm.map[i], pred, (long)lm.w[i] * lm.h[i]);
                free(pred);
                free(tok);
            }
            free(ds);
            progress_add(&pg, 1);
        }
        if (s) probe_scratch_free(s), probe_geom_free(&g);
    }
    progress_end(&pg);
    if (errmsg[0]) kc_die_msg("%s", errmsg);
    for (int t = 1; t < nt; t++)
        for (int j = 0; j < C * C; j++) conf[j] += conf[(size_t)t * C * C + j];
    double *iou = kc_malloc(sizeof(double) * C);
    int64_t *tp = kc_malloc(sizeof(int64_t) * C), *fp = kc_malloc(sizeof(int64_t) * C), *fn = kc_malloc(sizeof(int64_t) * C);
    int n_cls;
    double miou = probe_iou(conf, C, iou, tp, fp, fn, &n_cls);
    kc_buf sum = {0}, per = {0};
    kc_buf_printf(&sum, "miou,classes,pixels\n%.9g,%d,%ld\n", miou, n_cls, lm.total);
    kc_buf_printf(&per, "class,name,iou,tp,fp,fn\n");
    for (int c = 0; c < C; c++) {
        char name[16];
        if (C == 21) snprintf(name, sizeof name, "%s", VOC_NAMES[c]);
        else snprintf(name, sizeof name, "class%d", c);
        if (isnan(iou[c])) kc_buf_printf(&per, "%d,%s,,%lld,%lld,%lld\n", c, name, (long long)tp[c], (long long)fp[c], (long long)fn[c]);
        else kc_buf_printf(&per, "%d,%s,%.9g,%lld,%lld,%lld\n", c, name, iou[c], (long long)tp[c], (long long)fp[c], (long long)fn[c]);
    }
    char *sp = kc_strfmt("%s/summary.csv", o->out), *ip = kc_strfmt("%s/iou.csv", o->out);
    if (kc_write_file_atomic(ip, per.s, per.n) < 0 || kc_write_file_atomic(sp, sum.s, sum.n) < 0) kc_die();
    if (o->network) {
        char *np = kc_strfmt("%s/network", o->out), *nl = kc_strfmt("%s\n", o->network);
        if (kc_write_file_atomic(np, nl, strlen(nl)) < 0) kc_die();
        free(np), free(nl);
    }
    if (kc_outputs_commit() < 0) kc_die();
    /* the val labels were opened: one ledger line, after the outputs */
    ledger_entry le;
    memset(&le, 0, sizeof le);
    le.split = L.split_file;
    if (kc_sha256_file(L.split_file, le.split_sha256) < 0) snprintf(le.split_sha256, sizeof le.split_sha256, "%s", L.hash);
    le.networks = (char *)(o->network ? o->network : "-");
    le.n_settings = 1;
    kc_sha256_buf_hex(sum.s, sum.n, le.summary_sha256);
    if (ledger_append(o->ledger, &le) < 0) kc_die();
    kc_lock_release(lock);
    kc_info("mIoU %.4f over %d classes (%ld pixels, %d images) -> %s", miou, n_cls, lm.total, L.n, sp);
    free(sp), free(ip), free(sum.s), free(per.s), free(iou), free(tp), free(fp), free(fn), free(conf), free(head_ws);
    label_maps_free(&lm, L.n);
    free(cix);
    cache_close(&r);
    label_set_free(&L);
    probe_head_free(&h);
    return 0;
}

int main(int argc, char **argv)
{
    kc_set_prog("kc-probe");
    kc_set_cmdline(argc, argv);
    kc_keep_freed_memory();
    if (argc < 2) usage(2);
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) usage(0);
    opts o;
    parse(argc, argv, &o);
    if (!strcmp(argv[1], "train")) return cmd_train(&o);
    if (!strcmp(argv[1], "eval")) return cmd_eval(&o);
    kc_die_msg("unknown command '%s' (train or eval; see --help)", argv[1]);
}
