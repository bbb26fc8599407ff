/* eval/probe/probe_file.c — heads, checkpoints and traces of the linear probe (see probe_file.h). */
#include "eval/probe/probe_file.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/kc.h"
#include "pipeline/weights/safetensors.h"

/* The whole file in *data (the caller frees it after st_close), its header parsed into f. */
static int st_read(const char *path, uint8_t **data, st_file *f)
{
    size_t size;
    KC_TRY(kc_read_file(path, data, &size));
    if (st_open(f, path, *data, size) < 0) {
        free(*data);
        return -1;
    }
    return 0;
}

/* A tensor of a safetensors file as float32, its shape checked: (a, b) or, with allow_4d,
 * (a, b, 1, 1). */
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

int probe_head_read(const char *path, probe_head *h, char **weights_sha)
{
    uint8_t *data;
    st_file f;
    KC_TRY(st_read(path, &data, &f));
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

char *probe_losses_format(const double *l, int n)
{
    kc_buf b = {0};
    kc_buf_printf(&b, "%s", "");
    for (int i = 0; i < n; i++) kc_buf_printf(&b, "%s%.17g", i ? "," : "", l[i]);
    return b.s;
}

int probe_ckpt_save(const char *path, const probe_head *h, const float *bw, const float *bb, int epochs_done,
                    const double *losses, const char *fingerprint)
{
    st_out_tensor t[4] = {{"bias", 1, {h->classes}, h->b},
                          {"momentum.bias", 1, {h->classes}, bb},
                          {"momentum.weight", 2, {h->classes, h->dim}, bw},
                          {"weight", 2, {h->classes, h->dim}, h->w}};
    char ep[16];
    snprintf(ep, sizeof ep, "%d", epochs_done);
    char *ls = probe_losses_format(losses, epochs_done);
    const char *meta[] = {"epochs_done", ep, "fingerprint", fingerprint, "losses", ls};
    int rc = st_write_f32(path, t, 4, meta, 3);
    free(ls);
    return rc;
}

int probe_ckpt_load(const char *path, probe_head *h, float *bw, float *bb, const char *fingerprint, probe_ckpt *c)
{
    uint8_t *data;
    st_file f;
    KC_TRY(st_read(path, &data, &f));
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

int probe_trace_write(const char *dir, char *const *ids, int n, const probe_head *h, uint64_t seed, int epochs,
                      int epochs_done)
{
    if (epochs_done > 0) return kc_fail("--trace: the run resumes after epoch %d; trace a fresh run", epochs_done);
    KC_TRY(kc_mkdirs(dir));
    kc_buf idl = {0}, ord = {0};
    for (int i = 0; i < n; i++) kc_buf_printf(&idl, "%s\n", ids[i]);
    int *order = kc_malloc(sizeof(int) * (size_t)n);
    for (int e = 0; e < epochs; e++) {
        probe_epoch_order(seed, e, n, order);
        for (int i = 0; i < n; i++) kc_buf_printf(&ord, "%d%c", order[i], i + 1 < n ? ' ' : '\n');
    }
    free(order);
    char *pi = kc_strfmt("%s/ids.txt", dir), *po = kc_strfmt("%s/orders.txt", dir), *ph = kc_strfmt("%s/init.safetensors", dir);
    st_out_tensor t[2] = {{"bias", 1, {h->classes}, h->b}, {"weight", 2, {h->classes, h->dim}, h->w}};
    int rc = kc_write_file_atomic(pi, idl.s, idl.n) < 0 || kc_write_file_atomic(po, ord.s, ord.n) < 0 ||
                     st_write_f32(ph, t, 2, NULL, 0) < 0
                 ? -1
                 : 0;
    free(pi), free(po), free(ph), free(idl.s), free(ord.s);
    return rc;
}
