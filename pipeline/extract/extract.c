/* pipeline/extract/extract.c — the extraction engine of kc-extract: the network over the images,
 * the cores' split, the piece writer, the cache.  See extract.h, and docs/design.md "Stages", "The
 * model", "The cache". */
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/cache/cache.h"
#include "pipeline/cache/shard.h"
#include "pipeline/extract/extract.h"
#include "pipeline/images/image.h"
#include "pipeline/images/resize.h"
#include "pipeline/kc.h"
#include "pipeline/model/gemm.h"
#include "pipeline/model/vit.h"
#include "pipeline/progress.h"
#include "pipeline/sha256.h"
#include "pipeline/weights/weights.h"

/* "oneDNN 2.6.3 avx512_core; row kernels avx512; attention fused avx512": what computed the
 * forward (provenance) */
static const char *products_describe(const vit_model *m)
{
    static char buf[320];
    snprintf(buf, sizeof buf, "%s; row kernels %s; attention %s", kc_gemm_describe(),
             kc_simd_level() >= 2 ? "avx512" : "avx2", vit_attention_path(m));
    return buf;
}

/* One image of a batch: decoded input, its grid, and its outputs. */
typedef struct extract_job {
    const char *path;
    int gh, gw;                  /* the grid from the image's header */
    float *chw;                  /* (3, gh*patch, gw*patch) normalised, NULL once run */
    float *keys, *tokens, *attn; /* outputs, or NULL when not wanted */
    uint8_t sha[32];             /* the image file's sha256 (CACHE_IMAGE_SHA on its datasets) */
} extract_job;

/* The cache piece of one batch, written (HDF5, flush, fsync, rename) by a thread of its own while
 * the next batch is computed: about 35 ms per batch of 8 keys that the cores would otherwise wait
 * for.  One piece at a time: piece_launch starts it, writer_wait waits for it and hands on its
 * error. */
typedef struct piece_task {
    cache_writer *cw;
    int batch, count, dim, heads;
    const char *const *ids;      /* the batch's image ids */
    extract_job *jobs;           /* its outputs, freed by the writer */
    int rc;
    char err[2048];
    pthread_t thread;
    int running;
} piece_task;

static int piece_write_jobs(piece_task *t)
{
    cache_piece *piece = cache_piece_new(t->cw, t->batch);
    int rc = 0;
    for (int k = 0; k < t->count; k++) {
        extract_job *j = &t->jobs[k];
        int64_t dims[2] = {(int64_t)j->gh * j->gw, t->dim};
        int64_t adims[2] = {t->heads, dims[0]};
        const struct { const char *kind; const float *data; const int64_t *dims; } outs[3] = {
            {"keys", j->keys, dims}, {"tokens", j->tokens, dims}, {"attn", j->attn, adims}};
        for (int o = 0; o < 3 && rc == 0; o++) {
            if (!outs[o].data) continue;
            char *name = kc_strfmt("/features/%s/%s", outs[o].kind, t->ids[k]);
            rc = cache_piece_put_f32(piece, name, outs[o].data, 2, outs[o].dims);
            if (rc == 0) rc = cache_piece_attr_sha(piece, name, j->sha);
            free(name);
        }
        free(j->keys);
        free(j->tokens);
        free(j->attn);
        j->keys = j->tokens = j->attn = NULL;
    }
    if (cache_piece_commit(piece) < 0) rc = -1; /* (removes the temporary file after a failure) */
    return rc;
}

static void *piece_thread(void *arg)
{
    piece_task *t = arg;
    t->rc = piece_write_jobs(t);
    if (t->rc < 0) snprintf(t->err, sizeof t->err, "%s", kc_error());
    return NULL;
}

/* The first error of a parallel loop, kept for the main thread (path: prefix, or NULL). */
static void job_error_text(char *errmsg, size_t size, const char *text)
{
#pragma omp critical(kc_extract_err)
    if (!errmsg[0]) snprintf(errmsg, size, "%s", text);
}

static void job_error(char *errmsg, size_t size, const char *path)
{
#pragma omp critical(kc_extract_err)
    if (!errmsg[0]) {
        if (path) snprintf(errmsg, size, "%s: %s", path, kc_error());
        else snprintf(errmsg, size, "%s", kc_error());
    }
}

/* Decode and preprocess; the decoded size must give the grid the header gave. */
static int job_decode(extract_job *j, kc_policy policy, int patch, char *errmsg, size_t size)
{
    kc_image im = {0, 0, NULL};
    int bh = 0, bw = 0, rc = 0;
    j->chw = NULL;
    if (image_load_rgb_sha(j->path, &im, j->sha) < 0 || policy_prepare(&im, policy, patch, &j->chw, &bh, &bw) < 0) {
        job_error(errmsg, size, NULL);
        rc = -1;
    } else if (bh / patch != j->gh || bw / patch != j->gw) {
        kc_fail("%s: decoded size differs from its header (grid %dx%d, expected %dx%d)", j->path, bh / patch,
                bw / patch, j->gh, j->gw);
        job_error(errmsg, size, NULL);
        rc = -1;
    }
    if (im.rgb) image_free(&im);
    if (rc < 0) {
        free(j->chw);
        j->chw = NULL;
    }
    return rc;
}

static void job_alloc(extract_job *j, int keys, int tokens, int attn, int dim, int heads)
{
    size_t n_tok = (size_t)j->gh * j->gw;
    j->keys = keys ? kc_malloc(n_tok * (size_t)dim * sizeof(float)) : NULL;
    j->tokens = tokens ? kc_malloc(n_tok * (size_t)dim * sizeof(float)) : NULL;
    j->attn = attn ? kc_malloc(n_tok * (size_t)heads * sizeof(float)) : NULL;
}

/* Waits for the piece being written, if any; its error goes to errmsg (the first error wins). */
static int writer_wait(piece_task *t, char *errmsg, size_t size)
{
    if (t->running) pthread_join(t->thread, NULL);
    t->running = 0;
    if (t->rc < 0) {
        job_error_text(errmsg, size, t->err);
        t->rc = 0;
        return -1;
    }
    return 0;
}

/* Writes t's piece on a thread of its own (or here, without one: then its error is in t->err). */
static void piece_launch(piece_task *t)
{
    t->rc = 0;
    t->err[0] = 0;
    t->running = pthread_create(&t->thread, NULL, piece_thread, t) == 0;
    if (!t->running) piece_thread(t);
}

/* The batch loop's stops, after which extract_run returns -1: the piece being written is finished
 * first (HDF5 is closed at exit; the caller's kc_die closes nothing).  writer_fail: -1 on the
 * writer's error, with its message (0 when it wrote its piece); fail_joined: on the loop's own
 * error (kc_error), which wins over the writer's, -1. */
static int writer_fail(piece_task *t)
{
    char err[2048] = "";
    if (writer_wait(t, err, sizeof err) < 0) {
        kc_set_error(err);
        return -1;
    }
    return 0;
}

static int fail_joined(piece_task *t)
{
    char mine[2048], theirs[2048] = "";
    snprintf(mine, sizeof mine, "%s", kc_error());
    writer_wait(t, theirs, sizeof theirs);
    kc_set_error(mine);
    return -1;
}

/* --verbose's figures.  t_first: the end of the first batch (one image per thread: when the first
 * image after it was taken).  The steady state is n_steady images over t_a..t_b while every thread
 * was busy: with one image per thread, each image after the first nt is taken the moment another
 * one finishes, so between the takes of image a (the first after the first batch and after the
 * first nt) and of the last one, b, exactly b - a images finished; rows mode: the batches after the
 * first until the last one is computed (its piece is written after).  The run's start and its tail
 * (threads running out of images, the last piece) are left out: a run of thousands of images is
 * that steady state throughout. */
typedef struct run_times {
    double t_first, t_a, t_b;
    int n_first, n_steady;
} run_times;

/* The run set up by extract_run, shared by its steps. */
typedef struct extract_ctx {
    const extract_opts *o;
    int n;                 /* the shard's images */
    char **ids;            /* (n) copies of their ids */
    const char **paths;    /* (n) the caller's paths */
    char full_ids[65];     /* shard_ids_hash of the full list */
    int full_n;            /* images of the full list */
    int use_vit;
    kc_weights w;
    vit_model *model;      /* NULL for the colour extractor */
    int patch, dim, heads; /* heads: of the class attention, 0 without --features attn */
    cache_index ix;        /* the grid of every image, from its header */
    cache_writer cw;
    int n_batches, nt;
    progress pr;
} extract_ctx;

static int batch_count(const extract_ctx *x, int b)
{
    const int first = b * x->o->batch;
    return x->n - first < x->o->batch ? x->n - first : x->o->batch;
}

/* One image per thread over the whole run (--split images, and auto on the matmul path): each thread
 * takes the next image as it comes free, across batch boundaries, and the thread that finishes the
 * last image of a batch writes that batch's piece (one piece at a time) while the others go on, so
 * no core waits at the end of every batch for another core's last image (cores of one machine often
 * run at different speeds: a busy neighbour, interrupts).  Batches already in the cache are skipped.
 * Returns the number of images run; 0 and errmsg set on an error (the pieces of the batches
 * finished before it are in place, for a resume).  Times for --verbose in *tm (see run_times). */
static int extract_images(extract_ctx *r, char *errmsg, size_t size, run_times *tm)
{
    const extract_opts *o = r->o;
    const int n = r->n;
    int *todo = kc_malloc(sizeof(int) * (size_t)(n > 0 ? n : 1)), n_todo = 0;
    int *left = kc_calloc((size_t)r->n_batches, sizeof(int)); /* images of a batch still to run */
    extract_job *jobs = kc_calloc((size_t)(n > 0 ? n : 1), sizeof *jobs);
    tm->n_first = 0;
    for (int b = 0; b < r->n_batches; b++) {
        const int first = b * o->batch, count = batch_count(r, b);
        if (cache_writer_have(&r->cw, b)) {
            progress_skip(&r->pr, count);
            continue;
        }
        if (!n_todo) tm->n_first = count;
        left[b] = count;
        for (int k = first; k < first + count; k++) {
            todo[n_todo++] = k;
            jobs[k] = (extract_job){.path = r->paths[k], .gh = r->ix.grid[2 * k], .gw = r->ix.grid[2 * k + 1]};
        }
    }
    vit_state **tstate = kc_calloc((size_t)r->nt, sizeof *tstate);
    int failed = 0;
    piece_task writer = {0}; /* the piece being written (one at a time) */
    const int qa = tm->n_first > r->nt ? tm->n_first : r->nt, qb = n_todo - 1;
    tm->t_first = tm->t_a = tm->t_b = 0;
    tm->n_steady = qb > qa ? qb - qa : 0;
#pragma omp parallel num_threads(r->nt)
    {
        const int tid = omp_get_thread_num();
        int tgh = 0, tgw = 0; /* the grid of this thread's state */
#pragma omp for schedule(dynamic, 1)
        for (int q = 0; q < n_todo; q++) {
            int stop;
#pragma omp atomic read
            stop = failed;
            if (stop) continue;
            if (q == tm->n_first) tm->t_first = kc_now();
            if (q == qa) tm->t_a = kc_now();
            if (q == qb) tm->t_b = kc_now();
            const int i = todo[q], b = i / o->batch;
            extract_job *j = &jobs[i];
            job_alloc(j, o->want_keys, o->want_tokens, o->want_attn, r->dim, r->heads);
            int rc = job_decode(j, o->policy, r->patch, errmsg, size);
            vit_state **ts = &tstate[tid];
            if (rc == 0 && (!*ts || tgh != j->gh || tgw != j->gw)) {
                vit_state_free(*ts);
                tgh = j->gh, tgw = j->gw;
                if ((rc = vit_state_new_threads(ts, r->model, j->gh, j->gw, 1)) < 0) job_error(errmsg, size, NULL);
            }
            if (rc == 0) {
                const vit_outputs vo = {j->keys, j->tokens, j->attn};
                if ((rc = vit_forward_ex(r->model, *ts, j->chw, j->gh, j->gw, &vo)) < 0) job_error(errmsg, size, j->path);
            }
            free(j->chw);
            j->chw = NULL;
            if (rc < 0) {
#pragma omp atomic write
                failed = 1;
                continue;
            }
            progress_add(&r->pr, 1);
            int rest;
#pragma omp atomic capture seq_cst
            rest = --left[b];
            if (rest == 0) { /* the batch is complete: its piece, by the writer thread */
                const int first = b * o->batch, count = batch_count(r, b);
#pragma omp critical(kc_extract_piece)
                {
                    if (writer_wait(&writer, errmsg, size) < 0) {
#pragma omp atomic write
                        failed = 1;
                    }
                    writer = (piece_task){.cw = &r->cw, .batch = b, .count = count, .dim = r->dim, .heads = r->heads,
                                          .ids = (const char *const *)r->ids + first, .jobs = jobs + first};
                    piece_launch(&writer);
                }
            }
        }
    }
    if (writer_wait(&writer, errmsg, size) < 0) failed = 1;
    for (int t = 0; t < r->nt; t++) vit_state_free(tstate[t]);
    free(tstate);
    for (int k = 0; k < n; k++) free(jobs[k].keys), free(jobs[k].tokens), free(jobs[k].attn); /* after an error */
    free(jobs);
    free(left);
    free(todo);
    return failed ? 0 : n_todo;
}

/* The images of a batch and their outputs (chw, keys, tokens, attn), after an error. */
static void jobs_free(extract_job *jobs, int count)
{
    for (int k = 0; k < count; k++) {
        free(jobs[k].chw), free(jobs[k].keys), free(jobs[k].tokens), free(jobs[k].attn);
        jobs[k].chw = jobs[k].keys = jobs[k].tokens = jobs[k].attn = NULL;
    }
}

/* Every image over all threads (--split rows, the colour extractor, one thread; one image per
 * thread runs in extract_images), batch by batch: the images of a batch decoded in parallel, then
 * each forward over all cores, while the piece of the batch before is written.  Two sets of jobs:
 * the other one may still be being written.  Returns the number of images run, or -1 with the error
 * set.  Times for --verbose in *tm (see run_times). */
static int extract_rows(extract_ctx *x, run_times *tm)
{
    const extract_opts *o = x->o;
    extract_job *job_sets[2] = {kc_calloc((size_t)o->batch, sizeof(extract_job)),
                                kc_calloc((size_t)o->batch, sizeof(extract_job))};
    piece_task writer = {0}; /* the piece of the batch before, being written */
    vit_state *state = NULL;
    int state_gh = 0, state_gw = 0, n_done = 0, count = 0, rc = 0;
    extract_job *jobs = NULL;
    for (int b = 0; b < x->n_batches && rc == 0; b++) {
        const int first = b * o->batch;
        count = batch_count(x, b);
        if (cache_writer_have(&x->cw, b)) {
            progress_skip(&x->pr, count);
            continue;
        }
        jobs = job_sets[b % 2]; /* (the other set may still be being written) */
        char errmsg[2048] = "";
        for (int k = 0; k < count; k++) {
            jobs[k] = (extract_job){.path = x->paths[first + k], .gh = x->ix.grid[2 * (first + k)],
                                    .gw = x->ix.grid[2 * (first + k) + 1]};
        }
#pragma omp parallel for schedule(dynamic, 1)
        for (int k = 0; k < count; k++) job_decode(&jobs[k], o->policy, x->patch, errmsg, sizeof errmsg);
        if (errmsg[0]) {
            kc_set_error(errmsg);
            rc = fail_joined(&writer);
            break;
        }
        for (int k = 0; k < count; k++) job_alloc(&jobs[k], o->want_keys, o->want_tokens, o->want_attn, x->dim, x->heads);
        for (int k = 0; k < count && rc == 0; k++) {
            extract_job *j = &jobs[k];
            if (x->use_vit) {
                if (!state || j->gh != state_gh || j->gw != state_gw) {
                    if (state) vit_state_free(state);
                    state = NULL;
                    if (vit_state_new(&state, x->model, j->gh, j->gw) < 0) {
                        rc = fail_joined(&writer);
                        break;
                    }
                    state_gh = j->gh;
                    state_gw = j->gw;
                }
                const vit_outputs vo = {j->keys, j->tokens, j->attn};
                if (vit_forward_ex(x->model, state, j->chw, j->gh, j->gw, &vo) < 0) {
                    kc_fail_prefix("%s", j->path);
                    rc = fail_joined(&writer);
                    break;
                }
            } else {
                size_t n_tok = (size_t)j->gh * j->gw;
                float *f = j->keys ? j->keys : j->tokens;
                if (color_features(j->chw, j->gh, j->gw, x->patch, f) < 0) {
                    rc = fail_joined(&writer);
                    break;
                }
                if (j->keys && j->tokens) memcpy(j->tokens, j->keys, n_tok * (size_t)x->dim * sizeof(float));
            }
            free(j->chw);
            j->chw = NULL;
            progress_add(&x->pr, 1);
        }
        if (rc < 0 || (rc = writer_fail(&writer)) < 0) break;
        writer = (piece_task){.cw = &x->cw, .batch = b, .count = count, .dim = x->dim, .heads = x->heads,
                              .ids = (const char *const *)x->ids + first, .jobs = jobs};
        piece_launch(&writer);
        jobs = NULL; /* (the writer's now) */
        if (!n_done) tm->t_first = tm->t_a = kc_now(), tm->n_first = count;
        n_done += count;
        tm->t_b = kc_now(), tm->n_steady = n_done - tm->n_first;
    }
    if (rc == 0) rc = writer_fail(&writer);
    if (rc < 0 && jobs) jobs_free(jobs, count);
    if (state) vit_state_free(state);
    free(job_sets[0]);
    free(job_sets[1]);
    return rc < 0 ? -1 : n_done;
}
/* A resume must compute with the path that made the pieces already there.  OUT.partial/products
 * names that path (written after the first open; the fingerprint, which includes it, is the guard
 * where the note is missing): another one is refused with both named. */
typedef struct products_check {
    const char *out, *products;
} products_check;

/* (called by cache_writer_open_check under the output's lock, before the pieces change; a folder
 * without a finished piece has lost its note by then, so only finished pieces are guarded) */
static int check_products(void *ctx)
{
    const char *out = ((const products_check *)ctx)->out, *products = ((const products_check *)ctx)->products;
    char *path = kc_strfmt("%s.partial/products", out);
    uint8_t *old = NULL;
    size_t n = 0;
    int rc = 0;
    if (kc_exists(path) && kc_read_file(path, &old, &n) == 0 &&
        (n != strlen(products) || memcmp(old, products, n) != 0))
        rc = kc_fail("%s.partial holds pieces computed with products '%.*s', and this run computes with "
                     "'%s' (another CPU, or KC_ISA): the cache would mix the two; finish it where it was "
                     "started (or with the same KC_ISA), or remove %s.partial to start over",
                     out, (int)n, (const char *)old, products, out);
    free(old);
    free(path);
    return rc;
}

static void note_products(const char *out, const char *products)
{
    char *path = kc_strfmt("%s.partial/products", out);
    if (!kc_exists(path)) kc_write_file_atomic(path, products, strlen(products)); /* a note only */
    free(path);
}

/* "keys", "tokens", "attn" or a comma list of them, each at most once. */

/* --shard: the shard's slice of the images (the full list's hash goes into the provenance). */
static void select_images(extract_ctx *x, int n, const char *const *ids, const char *const *paths)
{
    const extract_opts *o = x->o;
    x->full_n = n;
    shard_ids_hash(ids, n, x->full_ids);
    int *keep = kc_malloc((size_t)(n > 0 ? n : 1) * sizeof *keep);
    for (int i = 0; i < n; i++) keep[i] = 1;
    if (shard_active(&o->shard)) shard_select(&o->shard, ids, n, keep);
    x->ids = kc_malloc((size_t)(n > 0 ? n : 1) * sizeof *x->ids);
    x->paths = kc_malloc((size_t)(n > 0 ? n : 1) * sizeof *x->paths);
    x->n = 0;
    for (int i = 0; i < n; i++) {
        if (!keep[i]) continue;
        x->ids[x->n] = kc_strdup(ids[i]);
        x->paths[x->n++] = paths[i];
    }
    free(keep);
}

/* The network (or the colour extractor's patch and width), and the lines that name it. */
static int load_model(extract_ctx *x)
{
    const extract_opts *o = x->o;
    x->patch = o->patch_color;
    x->dim = COLOR_DIM;
    if (x->use_vit) {
        KC_TRY(weights_load(&x->w, o->weights, o->ckey));
        vit_opts vo = VIT_OPTS_DEFAULT;
        vo.heads = o->heads;
        vo.ln_eps = o->ln_eps;
        vo.drop_cls = o->drop_cls;
        vo.posembed = !strcmp(o->posembed, "hf") ? VIT_POS_HF : !strcmp(o->posembed, "dino") ? VIT_POS_DINO
                    : !strcmp(o->posembed, "antialias") ? VIT_POS_AA : VIT_POS_AUTO;
        vo.keys_pre_rope = o->keys_pre_rope;
        KC_TRY(vit_init(&x->model, &x->w, &vo));
        x->patch = vit_patch(x->model);
        x->dim = vit_dim(x->model);
        kc_info("%s: %s, %s", o->weights, vit_describe(x->model), vit_forward_kind(x->model));
        if (x->w.checkpoint_key[0]) /* which state dict of a nested checkpoint: said once */
            kc_info("%s: the state dict under checkpoint key \"%s\" (%s)", o->weights, x->w.checkpoint_key,
                    o->ckey ? "--checkpoint-key" : "automatic: the first of teacher, student, model, state_dict "
                                                   "holding tensors; --checkpoint-key chooses");
        if (o->verbose) kc_info("products: %s", products_describe(x->model));
        const kc_weights *w = &x->w;
        if (w->n_skipped) { /* outside the backbone (a classification or DINO head, optimizer state) */
            kc_buf sk = {0};
            for (int i = 0; i < w->n_skipped && i < 12; i++) kc_buf_printf(&sk, "%s%s", i ? ", " : "", w->skipped[i]);
            kc_info("%s: skipped %d entr%s outside the backbone: %s%s", o->weights, w->n_skipped,
                    w->n_skipped == 1 ? "y" : "ies", sk.s, w->n_skipped > 12 ? ", ..." : "");
            free(sk.s);
        }
        if (o->want_attn && !vit_has_cls(x->model))
            return kc_fail("%s: --features attn needs the class token's attention, and this network runs no class "
                           "token (%s)", o->weights, vit_forward_kind(x->model));
        x->heads = o->want_attn ? vit_heads(x->model) : 0;
    } else if (o->want_attn) {
        return kc_fail("--features attn needs a ViT with a class token (--model color has no attention)");
    } else if (o->drop_cls || o->heads || o->ln_eps != 0 || o->ckey || o->keys_pre_rope) {
        return kc_fail("--drop-cls, --heads, --ln-eps, --keys and --checkpoint-key apply to --model vit only");
    }
    return 0;
}

/* The index from the image headers: the grid each image will have. */
static int index_images(extract_ctx *x)
{
    const kc_policy policy = x->o->policy;
    cache_index *ix = &x->ix;
    ix->n = x->n;
    ix->ids = x->ids;
    ix->grid = kc_malloc((size_t)x->n * 2 * sizeof(int32_t));
    ix->size = kc_malloc((size_t)x->n * 2 * sizeof(int32_t));
    ix->resized = kc_malloc((size_t)x->n * 2 * sizeof(int32_t));
    ix->box = kc_malloc((size_t)x->n * 4 * sizeof(int32_t));
    int n_turned = 0, first_turned = -1, turn = 1;
    for (int i = 0; i < x->n; i++) {
        int iw, ih, gh, gw, orientation;
        KC_TRY(image_header(x->paths[i], &iw, &ih, &orientation));
        if (orientation != 1 && n_turned++ == 0) {
            first_turned = i;
            turn = orientation;
        }
        if (policy == POLICY_NATIVE16 && (iw < x->patch || ih < x->patch))
            return kc_fail("%s: image of %dx%d is smaller than one %d-pixel patch", x->paths[i], iw, ih, x->patch);
        policy_grid(policy, x->patch, iw, ih, &gh, &gw); /* every side a multiple of the patch */
        if (gh < 1 || gw < 1)
            return kc_fail("%s: image of %dx%d has a side below half a %d-pixel patch (policy %s rounds it to 0)",
                           x->paths[i], iw, ih, x->patch, policy_name(policy));
        ix->grid[2 * i] = gh;
        ix->grid[2 * i + 1] = gw;
        ix->size[2 * i] = ih;
        ix->size[2 * i + 1] = iw;
        /* how the grid maps back (docs/cache-format.md): the network input is the grid times the
         * patch; the image fills it, but under native16, which pads it below and right */
        int32_t *rs = ix->resized + 2 * i, *box = ix->box + 4 * i;
        rs[0] = gh * x->patch;
        rs[1] = gw * x->patch;
        box[0] = box[1] = 0;
        box[2] = policy == POLICY_NATIVE16 ? ih : rs[0];
        box[3] = policy == POLICY_NATIVE16 ? iw : rs[1];
    }
    if (n_turned)
        kc_warn("%d image%s an EXIF orientation other than 1 (%s%s, orientation %d); keycut, like the reference code, "
                "reads pixels as stored", n_turned, n_turned == 1 ? " carries" : "s carry", n_turned == 1 ? "" : "first: ",
                x->paths[first_turned], turn);
    return 0;
}

/* The fingerprint (everything that determines the output), then the writer: a resume keeps the
 * pieces of the same fingerprint made with the same products. */
static int open_cache(extract_ctx *x)
{
    const extract_opts *o = x->o;
    char batch_s[16], heads_s[16], eps_s[32], patch_s[16], shard_s[32];
    snprintf(batch_s, sizeof batch_s, "%d", o->batch);
    snprintf(heads_s, sizeof heads_s, "%d", o->heads);
    snprintf(eps_s, sizeof eps_s, "%.17g", o->ln_eps);
    snprintf(patch_s, sizeof patch_s, "%d", x->patch);
    kc_sha256 idh;
    kc_sha256_init(&idh);
    for (int i = 0; i < x->n; i++) {
        kc_sha256_update(&idh, x->ids[i], strlen(x->ids[i]) + 1);
        kc_sha256_update(&idh, x->paths[i], strlen(x->paths[i]) + 1);
    }
    char ids_hash[65];
    kc_sha256_hex(&idh, ids_hash);
    /* the product path too: pieces computed by two paths (a resume on another CPU, or under another
     * KC_ISA) would differ in their last bits, so they are never mixed (check_products) */
    const char *products = x->use_vit ? products_describe(x->model) : "-";
    /* the position rule as the forward resolved it ("auto" of a DINO file is "dino", as before) */
    const char *posembed = x->use_vit ? vit_posembed_name(x->model) : strcmp(o->posembed, "auto") ? o->posembed : "dino";
    char features[96];
    snprintf(features, sizeof features, "%s%s", o->features, o->keys_pre_rope ? ";keys=pre-rope" : "");
    const char *parts[] = {"kc-extract", KC_VERSION, o->model_name, x->use_vit ? x->w.sha256 : "-",
                           o->ckey ? o->ckey : "-", o->drop_cls ? "drop-cls" : "-", heads_s, eps_s,
                           policy_name(o->policy), features, posembed, batch_s, patch_s, ids_hash, products,
                           shard_str(&o->shard, shard_s)};
    char fp[65];
    cache_fingerprint(fp, (int)(sizeof parts / sizeof *parts) - !shard_active(&o->shard), parts);
    x->n_batches = (x->n + o->batch - 1) / o->batch;
    const products_check pc = {o->out, products};
    KC_TRY(cache_writer_open_check(&x->cw, o->out, CACHE_FORMAT_FEATURES, fp, x->n_batches, check_products, (void *)&pc));
    note_products(o->out, products);
    return 0;
}

/* The provenance, and the finish: the pieces merged into OUT. */
static int finish_cache(extract_ctx *x)
{
    const extract_opts *o = x->o;
    cache_prov prov = {0};
    prov_set(&prov, "command", kc_cmdline());
    prov_set(&prov, "model", o->model_name);
    if (x->use_vit) {
        prov_set(&prov, "weights", o->weights);
        prov_set(&prov, "weights_sha256", x->w.sha256);
        prov_set(&prov, "weights_format", x->w.format);
        /* the key whose state dict was taken (weights_load), "none" for a flat file */
        prov_set(&prov, "checkpoint_key", x->w.checkpoint_key[0] ? x->w.checkpoint_key : "none");
        prov_set(&prov, "checkpoint_key_from", o->ckey ? "--checkpoint-key" : "automatic");
        prov_set(&prov, "arch", vit_describe(x->model));
        prov_set(&prov, "forward", vit_forward_kind(x->model));
        prov_setf(&prov, "ln_eps", "%.9g", vit_ln_eps(x->model));
        prov_set(&prov, "posembed", vit_posembed_name(x->model));
        prov_setf(&prov, "registers", "%d", vit_registers(x->model));
        if (!strcmp(vit_posembed_name(x->model), "rope"))
            prov_set(&prov, "keys", o->keys_pre_rope ? "before RoPE (--keys pre-rope)" : "after RoPE (what attention uses)");
        prov_set(&prov, "products", products_describe(x->model));
    } else {
        prov_setf(&prov, "arch", "color dim=%d patch=%d", COLOR_DIM, x->patch);
        prov_set(&prov, "forward", "color statistics (no learning)");
        prov_set(&prov, "weights_sha256", "-");
        prov_set(&prov, "posembed", "-");
        prov_set(&prov, "ln_eps", "-");
        prov_set(&prov, "products", "-");
    }
    {
        char kinds[32] = "";
        const char *kn[3] = {"keys", "tokens", "attn"};
        const int kw[3] = {o->want_keys, o->want_tokens, o->want_attn};
        for (int q = 0; q < 3; q++)
            if (kw[q]) snprintf(kinds + strlen(kinds), sizeof kinds - strlen(kinds), "%s%s", kinds[0] ? "," : "", kn[q]);
        prov_set(&prov, "feature_kinds", kinds);
    }
    if (o->want_attn) {
        prov_setf(&prov, "heads", "%d", vit_heads(x->model));
        prov_set(&prov, "attn", "last block, class-token query, softmax over all tokens, class column dropped; (heads, G)");
    }
    prov_set(&prov, "policy", policy_name(o->policy));
    char norm[512];
    policy_describe(o->policy, x->patch, norm, sizeof norm);
    prov_set(&prov, "normalisation", norm);
    prov_setf(&prov, "patch", "%d", x->patch);
    prov_setf(&prov, "dim", "%d", x->dim);
    prov_set(&prov, "dataset", o->dataset);
    prov_set(&prov, "dataset_kind", o->dataset_kind);
    shard_prov(&o->shard, &prov, x->full_ids, x->full_n, o->batch, o->out);
    KC_TRY(cache_writer_finish(&x->cw, &x->ix, &prov));
    progress_end(&x->pr);
    kc_info("wrote %s (%d image%s, %s)", o->out, x->n, kc_s(x->n), prov_get(&prov, "feature_kinds"));
    prov_free(&prov);
    return 0;
}

int extract_run(const extract_opts *opts, int n, const char *const *ids, const char *const *paths)
{
    extract_ctx x = {.o = opts, .use_vit = !strcmp(opts->model_name, "vit")};
    const extract_opts *o = opts;
    select_images(&x, n, ids, paths);
    KC_TRY(load_model(&x));
    KC_TRY(index_images(&x));
    KC_TRY(open_cache(&x));

    progress_init(&x.pr, "extract", x.n, "images");
    x.nt = omp_get_max_threads() > 0 ? omp_get_max_threads() : 1;
    /* one image per thread only where the rows come out the same either way (see --split) */
    const int per_image_ok = x.use_vit && x.nt > 1 && kc_linear_available();
    const double t_start = kc_now();
    run_times tm = {0};
    int n_done = 0;
    /* one image per thread where asked, or by default where the rows come out the same either way */
    const int images_mode = x.use_vit && x.nt > 1 &&
                            (o->split == EXTRACT_SPLIT_IMAGES || (o->split == EXTRACT_SPLIT_AUTO && per_image_ok));
    if (images_mode) {
        char errmsg[2048] = "";
        n_done = extract_images(&x, errmsg, sizeof errmsg, &tm);
        if (errmsg[0]) {
            kc_set_error(errmsg);
            return -1;
        }
        if (n_done <= tm.n_first) tm.t_first = kc_now();
    } else if ((n_done = extract_rows(&x, &tm)) < 0) {
        return -1;
    }
    const double t_end = kc_now();
    if (o->verbose && n_done > 0) {
        char steady[96] = "too few images for a steady state";
        if (tm.n_steady > 0)
            snprintf(steady, sizeof steady, "steady state %.1f ms/image over %d images",
                     1e3 * (tm.t_b - tm.t_a) / tm.n_steady, tm.n_steady);
        kc_info("time: %d image%s in %.2f s after %.2f s of start-up (first batch of %d: %.2f s; %s)", n_done,
                kc_s(n_done), t_end - t_start, t_start - o->t_main, tm.n_first, tm.t_first - t_start, steady);
    }

    KC_TRY(finish_cache(&x));
    cache_writer_free(&x.cw);
    for (int i = 0; i < x.n; i++) free(x.ids[i]);
    free(x.ids);
    free(x.paths);
    free(x.ix.grid);
    free(x.ix.size);
    free(x.ix.resized);
    free(x.ix.box);
    if (x.model) vit_free(x.model);
    if (x.use_vit) weights_free(&x.w);
    return 0;
}
