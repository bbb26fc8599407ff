/* eval/probe/probe_data.c — the probe's label maps and token batches (see probe_data.h). */
#include "eval/probe/probe_data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/dataset.h"
#include "eval/probe/probe.h"
#include "pipeline/images/image.h"
#include "pipeline/images/resize.h"
#include "pipeline/kc.h"
#include "pipeline/progress.h"
#include "pipeline/sha256.h"

/* ---- labels -------------------------------------------------------------------------------------- */

void probe_label_set_free(probe_label_set *L)
{
    for (int i = 0; i < L->n; i++) free(L->ids[i]), free(L->paths[i]);
    free(L->ids), free(L->paths), free(L->split_file);
    memset(L, 0, sizeof *L);
}

int probe_label_set_open(probe_label_set *L, const char *spec, const char *label_dir)
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

void probe_label_maps_free(probe_label_maps *m, int n)
{
    for (int i = 0; m->map && i < n; i++) free(m->map[i]);
    free(m->map), free(m->w), free(m->h), free(m->valid);
    memset(m, 0, sizeof *m);
}

int probe_label_maps_load(probe_label_maps *out, probe_label_set *L, const probe_tokens *t, int S, int M, int full,
                          int classes)
{
    const cache_reader *r = &t->r;
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
        const int32_t *sz = r->index.size + 2 * t->cix[i];
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
        probe_label_maps_free(out, L->n);
        kc_set_error(errmsg);
        return -1;
    }
    return 0;
}

/* ---- the features cache -------------------------------------------------------------------------- */

static int tokens_check(probe_tokens *t, const char *path, const probe_label_set *L)
{
    cache_reader *r = &t->r;
    const char *kinds = cache_attr(r, "feature_kinds");
    if (!kinds || !strstr(kinds, "tokens"))
        return kc_fail("%s: holds no tokens (feature kinds '%s'); extract with --features tokens", path, kinds ? kinds : "?");
    const char *pol = cache_attr(r, "policy"), *ps = cache_attr(r, "patch");
    kc_policy p;
    t->size = 0;
    /* the square policies' side for the recorded patch, p ceil(S / p): 224, 448, 480 for patch 16,
     * 490 under square480 with patch 14 (S itself when no patch is recorded) */
    const int patch = ps ? atoi(ps) : 0;
    if (ps && (patch <= 0 || patch > 1024)) return kc_fail("%s: bad 'patch' attribute '%s'", path, ps);
    if (pol && policy_parse(pol, &p) == 0 && (p == POLICY_SQUARE224 || p == POLICY_SQUARE448 || p == POLICY_SQUARE480)) {
        int side_w, side_h;
        policy_size(p, patch, 1, 1, &side_w, &side_h);
        t->size = side_w;
    }
    t->cix = kc_malloc(sizeof(int) * (size_t)L->n);
    for (int i = 0; i < L->n; i++) {
        t->cix[i] = cache_index_find(&r->index, L->ids[i]);
        if (t->cix[i] < 0)
            return kc_fail("%s: no tokens of image %s of the split (a cache of other images?)", path, L->ids[i]);
        const int32_t *g = r->index.grid + 2 * t->cix[i];
        if (i == 0) t->gh = g[0], t->gw = g[1];
        if (g[0] != t->gh || g[1] != t->gw)
            return kc_fail("%s: image %s has a %dx%d grid, %s %dx%d: the probe needs one grid (a square policy)", path,
                           L->ids[i], g[1], g[0], L->ids[0], t->gw, t->gh);
    }
    if (t->size && patch > 0 && L->n > 0 && (t->gh * patch != t->size || t->gw * patch != t->size))
        return kc_fail("%s: a %dx%d grid of %d-pixel patches does not cover the %dx%d image of policy %s", path, t->gw,
                       t->gh, patch, t->size, t->size, pol);
    char *ds = kc_strfmt("/features/tokens/%s", L->ids[0]);
    float *tok;
    int rows;
    int rc = cache_read_f32(r, ds, &tok, &rows, &t->dim);
    free(ds);
    if (rc < 0) return -1;
    free(tok);
    return 0;
}

int probe_tokens_open(probe_tokens *t, const char *path, const probe_label_set *L)
{
    memset(t, 0, sizeof *t);
    KC_TRY(cache_open(&t->r, path, CACHE_FORMAT_FEATURES));
    if (tokens_check(t, path, L) < 0) {
        probe_tokens_close(t);
        return -1;
    }
    return 0;
}

void probe_tokens_close(probe_tokens *t)
{
    if (t->r.path) cache_close(&t->r);
    free(t->cix);
    memset(t, 0, sizeof *t);
}

/* ---- batches of tokens ------------------------------------------------------------------------------ */

static void *read_batch(void *arg)
{
    probe_batch *b = arg;
    const cache_reader *r = &b->tok->r;
    const int G = b->tok->gh * b->tok->gw, D = b->tok->dim;
    b->rc = 0;
    for (int k = 0; k < b->count && b->rc == 0; k++) {
        char *ds = kc_strfmt("/features/tokens/%s", b->L->ids[b->ids[k]]);
        float *t;
        int rows, cols;
        if (cache_read_f32(r, ds, &t, &rows, &cols) < 0) {
            b->rc = -1;
        } else if (rows != G || cols != D) {
            b->rc = kc_fail("%s: %s is (%d, %d), expected (%d, %d)", r->path, ds, rows, cols, G, D);
            free(t);
        } else {
            memcpy(b->buf + (size_t)k * G * D, t, sizeof(float) * (size_t)G * D);
            free(t);
        }
        free(ds);
    }
    if (b->rc < 0) snprintf(b->err, sizeof b->err, "%s", kc_error());
    return NULL;
}

void probe_batch_start(probe_batch *b)
{
    b->running = pthread_create(&b->th, NULL, read_batch, b) == 0;
    if (!b->running) read_batch(b);
}

int probe_batch_wait(probe_batch *b)
{
    if (b->running) pthread_join(b->th, NULL);
    b->running = 0;
    if (b->rc < 0) {
        kc_set_error(b->err);
        return -1;
    }
    return 0;
}
