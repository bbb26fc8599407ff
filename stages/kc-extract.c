/* stages/kc-extract.c — images -> keys.h5 (ViT attention keys and/or output tokens, or the
 * no-learning colour features).  See docs/design.md "Stages", "The model", "The cache". */
#include <getopt.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/dataset.h"
#include "pipeline/cache/cache.h"
#include "pipeline/model/gemm.h"
#include "pipeline/images/image.h"
#include "pipeline/kc.h"
#include "pipeline/progress.h"
#include "pipeline/images/resize.h"
#include "pipeline/sha256.h"
#include "pipeline/cache/shard.h"
#include "pipeline/model/vit.h"
#include "pipeline/weights/weights.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kc-extract --weights FILE [--checkpoint-key K] [--model vit|color] [--drop-cls]\n"
            "                  [--heads H] [--ln-eps E] --dataset SPEC [--policy square480|short480|native16]\n"
            "                  [--features keys|tokens|attn|keys,tokens,...] [--posembed dino|hf] [--batch N]\n"
            "                  [--patch P] [--shard i/n] [--split auto|images|rows] [--verbose] --out keys.h5\n"
            "\n"
            "Runs a ViT teacher (or the no-learning colour extractor) over a dataset and stores, per\n"
            "image, the last block's attention keys and/or its output tokens, without the class token.\n"
            "\n"
            "  --weights FILE        .pth (state dict or training checkpoint) or .safetensors\n"
            "  --checkpoint-key K    state dict inside a checkpoint (default: first of teacher, student,\n"
            "                        model, state_dict holding tensors)\n"
            "  --model vit|color     vit (default with --weights) or color (no weights; patch 16)\n"
            "  --drop-cls            run DINO weights as the converted network (no class token, no final norm)\n"
            "  --heads H             attention heads (default: config.json beside the weights, else dim/64)\n"
            "  --ln-eps E            LayerNorm eps (default 1e-6 DINO/timm names, config.json/1e-12 HF names)\n"
            "  --dataset SPEC        voc:ROOT:SPLIT | davis:ROOT:SPLIT | dir:DIR | list:FILE\n"
            "  --policy P            square480 (default for voc/dir/list), short480 (default for davis),\n"
            "                        native16\n"
            "  --features F          keys (default), tokens, attn, or a comma list (keys,attn); attn is the\n"
            "                        last block's class-token attention per head, (heads, patches), as DINO\n"
            "                        reads it (needs a class token: not SelfPatch-like or --drop-cls)\n"
            "  --posembed dino|hf    position-embedding resampling rule (default dino)\n"
            "  --batch N             images per crash-safe piece (default 8)\n"
            "  --patch P             patch size of the colour extractor (default 16)\n"
            "  --out FILE            the cache to write (atomically; an interrupted run resumes)\n"
            "  --shard i/n           only slice i of n of the images (pipeline/cache/shard.h); merge the n\n"
            "                        shard caches with kc-merge\n"
            "  --split auto|images|rows  how the cores share the work: images = one image per core (each\n"
            "                        forward on one thread), rows = every image over all cores; auto\n"
            "                        (default) runs one image per core where the outputs are the same\n"
            "                        bytes either way (the matmul path, see --verbose), else rows\n"
            "  --verbose             print once which product kernels run (library, version, ISA), and\n"
            "                        the time taken: start-up, first batch, ms per image after it\n"
            "  environment: KC_ISA=avx512|avx2|generic forces a kernel path (default: the best\n"
            "                        this CPU has); the cache records the one used (attribute products)\n"
            "\n"
            "example:\n"
            "  kc-extract --weights dino_deitsmall16_pretrain.pth --dataset voc:/data/VOC2012:val \\\n"
            "             --policy square480 --out cache/dino/voc12-val/keys.h5\n");
}

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

/* The batch loop's stops: the piece being written is finished first (HDF5 is closed at exit).
 * writer_or_die: on the writer's error; die_joined: on the loop's own (kc_error), which wins. */
static void writer_or_die(piece_task *t)
{
    char err[2048] = "";
    if (writer_wait(t, err, sizeof err) < 0) {
        kc_set_error(err);
        kc_die();
    }
}

static void die_joined(piece_task *t)
{
    char mine[2048], theirs[2048] = "";
    snprintf(mine, sizeof mine, "%s", kc_error());
    writer_wait(t, theirs, sizeof theirs);
    kc_set_error(mine);
    kc_die();
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

/* What extract_images needs of the run set up by main. */
typedef struct images_run {
    cache_writer *cw;
    const kc_dataset *ds;
    const cache_index *ix;
    int batch, n_batches, nt, dim, heads, patch;
    kc_policy policy;
    int want_keys, want_tokens, want_attn;
    const vit_model *model;
    progress *pr;
} images_run;

/* One image per thread over the whole run (--split images, and auto on the matmul path): each thread
 * takes the next image as it comes free, across batch boundaries, and the thread that finishes the
 * last image of a batch writes that batch's piece (one piece at a time) while the others go on, so
 * no core waits at the end of every batch for another core's last image (cores of one machine often
 * run at different speeds: a busy neighbour, interrupts).  Batches already in the cache are skipped.
 * Returns the number of images run; 0 and errmsg set on an error (the pieces of the batches
 * finished before it are in place, for a resume).  Times for --verbose in *tm (see run_times). */
static int extract_images(const images_run *r, char *errmsg, size_t size, run_times *tm)
{
    const int n = r->ds->n;
    int *todo = kc_malloc(sizeof(int) * (size_t)(n > 0 ? n : 1)), n_todo = 0;
    int *left = kc_calloc((size_t)r->n_batches, sizeof(int)); /* images of a batch still to run */
    extract_job *jobs = kc_calloc((size_t)(n > 0 ? n : 1), sizeof *jobs);
    tm->n_first = 0;
    for (int b = 0; b < r->n_batches; b++) {
        const int first = b * r->batch, count = n - first < r->batch ? n - first : r->batch;
        if (cache_writer_have(r->cw, b)) {
            progress_skip(r->pr, count);
            continue;
        }
        if (!n_todo) tm->n_first = count;
        left[b] = count;
        for (int k = first; k < first + count; k++) {
            todo[n_todo++] = k;
            jobs[k] = (extract_job){.path = r->ds->paths[k], .gh = r->ix->grid[2 * k], .gw = r->ix->grid[2 * k + 1]};
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
            const int i = todo[q], b = i / r->batch;
            extract_job *j = &jobs[i];
            job_alloc(j, r->want_keys, r->want_tokens, r->want_attn, r->dim, r->heads);
            int rc = job_decode(j, r->policy, r->patch, errmsg, size);
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
            progress_add(r->pr, 1);
            int rest;
#pragma omp atomic capture seq_cst
            rest = --left[b];
            if (rest == 0) { /* the batch is complete: its piece, by the writer thread */
                const int first = b * r->batch, count = n - first < r->batch ? n - first : r->batch;
#pragma omp critical(kc_extract_piece)
                {
                    if (writer_wait(&writer, errmsg, size) < 0) {
#pragma omp atomic write
                        failed = 1;
                    }
                    writer = (piece_task){.cw = r->cw, .batch = b, .count = count, .dim = r->dim, .heads = r->heads,
                                          .ids = (const char *const *)r->ds->ids + first, .jobs = jobs + first};
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

enum { SPLIT_AUTO, SPLIT_IMAGES, SPLIT_ROWS };

/* A resume must compute with the path that made the pieces already there.  OUT.partial/products
 * names that path (written after the first open; the fingerprint, which includes it, is the guard
 * where the note is missing): another one is refused with both named. */
typedef struct products_check {
    const char *out, *products;
} products_check;

/* (called by cache_writer_open_check under the output's lock, before the folder changes) */
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
static int parse_features(const char *list, int *keys, int *tokens, int *attn)
{
    char buf[64];
    if (!list[0] || strlen(list) >= sizeof buf)
        return kc_fail("--features: bad value '%s' (keys, tokens, attn or a comma list)", list);
    strcpy(buf, list);
    for (char *save = NULL, *f = strtok_r(buf, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
        int *w = !strcmp(f, "keys") ? keys : !strcmp(f, "tokens") ? tokens : !strcmp(f, "attn") ? attn : NULL;
        if (!w) return kc_fail("--features: unknown kind '%s' in '%s' (keys, tokens, attn or a comma list)", f, list);
        if (*w) return kc_fail("--features: '%s' listed twice in '%s'", f, list);
        *w = 1;
    }
    if (list[strlen(list) - 1] == ',' || list[0] == ',' || strstr(list, ",,"))
        return kc_fail("--features: bad value '%s' (keys, tokens, attn or a comma list)", list);
    return 0;
}

int main(int argc, char **argv)
{
    const double t_main = kc_now();
    kc_set_prog("kc-extract");
    kc_keep_freed_memory();
    kc_set_cmdline(argc, argv);
    const char *weights = NULL, *ckey = NULL, *model_name = NULL, *spec = NULL, *policy_s = NULL,
               *features = "keys", *posembed = "dino", *out = NULL;
    int drop_cls = 0, heads = 0, batch = 8, patch_color = 16, verbose = 0, split_mode = SPLIT_AUTO;
    double ln_eps = 0;
    static struct option opts[] = {{"weights", 1, 0, 'w'},  {"checkpoint-key", 1, 0, 'k'}, {"model", 1, 0, 'm'},
                                   {"drop-cls", 0, 0, 'd'}, {"heads", 1, 0, 'H'},          {"ln-eps", 1, 0, 'e'},
                                   {"dataset", 1, 0, 's'},  {"policy", 1, 0, 'p'},         {"features", 1, 0, 'f'},
                                   {"posembed", 1, 0, 'P'}, {"out", 1, 0, 'o'},            {"batch", 1, 0, 'b'},
                                   {"patch", 1, 0, 'x'},    {"help", 0, 0, 'h'},           {"shard", 1, 0, 'S'},
                                   {"verbose", 0, 0, 'v'},  {"split", 1, 0, 'T'},          {0, 0, 0, 0}};
    kc_shard shard = KC_SHARD_NONE;
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'w': weights = optarg; break;
        case 'k': ckey = optarg; break;
        case 'm': model_name = optarg; break;
        case 'd': drop_cls = 1; break;
        case 'H': heads = atoi(optarg); break;
        case 'e': ln_eps = atof(optarg); break;
        case 's': spec = optarg; break;
        case 'p': policy_s = optarg; break;
        case 'f': features = optarg; break;
        case 'P': posembed = optarg; break;
        case 'o': out = optarg; break;
        case 'b': batch = atoi(optarg); break;
        case 'x': patch_color = atoi(optarg); break;
        case 'S':
            if (shard_parse(optarg, &shard) < 0) kc_die();
            break;
        case 'v': verbose = 1; break;
        case 'T':
            if (!strcmp(optarg, "auto")) split_mode = SPLIT_AUTO;
            else if (!strcmp(optarg, "images")) split_mode = SPLIT_IMAGES;
            else if (!strcmp(optarg, "rows")) split_mode = SPLIT_ROWS;
            else kc_die_msg("--split: unknown '%s' (auto, images or rows)", optarg);
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) kc_die_msg("unexpected argument '%s' (see --help)", argv[optind]);
    if (!model_name) model_name = weights ? "vit" : "color";
    int use_vit = !strcmp(model_name, "vit");
    if (!use_vit && strcmp(model_name, "color")) kc_die_msg("--model: unknown model '%s' (vit or color)", model_name);
    if (use_vit && !weights) kc_die_msg("--model vit needs --weights FILE (or use --model color)");
    if (!use_vit && weights) kc_die_msg("--model color takes no --weights");
    if (!spec) kc_die_msg("--dataset is required (see --help)");
    if (!out) kc_die_msg("--out is required (see --help)");
    if (batch < 1 || batch > 4096) kc_die_msg("--batch: %d is out of range 1..4096", batch);
    if (heads < 0) kc_die_msg("--heads: must be positive");
    if (patch_color < 2 || patch_color > 64) kc_die_msg("--patch: %d is out of range 2..64", patch_color);
    int want_keys = 0, want_tokens = 0, want_attn = 0;
    if (parse_features(features, &want_keys, &want_tokens, &want_attn) < 0) kc_die();
    if (strcmp(posembed, "dino") && strcmp(posembed, "hf")) kc_die_msg("--posembed: unknown '%s' (dino or hf)", posembed);

    kc_dataset ds;
    if (dataset_open(&ds, spec) < 0) kc_die();
    /* --shard: keep this shard's slice of the images (the full list's hash goes into provenance) */
    char full_ids[65];
    int full_n = ds.n;
    shard_ids_hash((const char *const *)ds.ids, ds.n, full_ids);
    if (shard_active(&shard)) {
        int *keep = kc_malloc((size_t)ds.n * sizeof *keep), m = 0;
        shard_select(&shard, (const char *const *)ds.ids, ds.n, keep);
        for (int i = 0; i < ds.n; i++) {
            if (!keep[i]) {
                free(ds.ids[i]);
                free(ds.paths[i]);
                continue;
            }
            ds.ids[m] = ds.ids[i];
            ds.paths[m++] = ds.paths[i];
        }
        ds.n = m;
        free(keep);
    }
    kc_policy policy;
    if (policy_s) {
        if (policy_parse(policy_s, &policy) < 0) kc_die();
    } else {
        policy = !strcmp(ds.kind, "davis") ? POLICY_SHORT480 : POLICY_SQUARE480;
    }

    kc_weights w;
    memset(&w, 0, sizeof w);
    vit_model *model = NULL;
    int patch = patch_color, dim = COLOR_DIM;
    if (use_vit) {
        if (weights_load(&w, weights, ckey) < 0) kc_die();
        vit_opts vo = VIT_OPTS_DEFAULT;
        vo.heads = heads;
        vo.ln_eps = ln_eps;
        vo.drop_cls = drop_cls;
        vo.posembed_hf = !strcmp(posembed, "hf");
        if (vit_init(&model, &w, &vo) < 0) kc_die();
        patch = vit_patch(model);
        dim = vit_dim(model);
        kc_info("%s: %s, %s", weights, vit_describe(model), vit_forward_kind(model));
        if (verbose) kc_info("products: %s", products_describe(model));
        if (w.n_skipped) { /* outside the backbone (a classification or DINO head, optimizer state) */
            kc_buf sk = {0};
            for (int i = 0; i < w.n_skipped && i < 12; i++) kc_buf_printf(&sk, "%s%s", i ? ", " : "", w.skipped[i]);
            kc_info("%s: skipped %d entr%s outside the backbone: %s%s", weights, w.n_skipped, w.n_skipped == 1 ? "y" : "ies",
                    sk.s, w.n_skipped > 12 ? ", ..." : "");
            free(sk.s);
        }
        if (want_attn && !vit_has_cls(model))
            kc_die_msg("%s: --features attn needs the class token's attention, and this network runs no class "
                       "token (%s)", weights, vit_forward_kind(model));
    } else if (want_attn) {
        kc_die_msg("--features attn needs a ViT with a class token (--model color has no attention)");
    } else if (drop_cls || heads || ln_eps != 0 || ckey) {
        kc_die_msg("--drop-cls, --heads, --ln-eps and --checkpoint-key apply to --model vit only");
    }

    /* index from the image headers: the grid each image will have */
    cache_index ix = {0};
    ix.n = ds.n;
    ix.ids = ds.ids;
    ix.grid = kc_malloc((size_t)ds.n * 2 * sizeof(int32_t));
    ix.size = kc_malloc((size_t)ds.n * 2 * sizeof(int32_t));
    for (int i = 0; i < ds.n; i++) {
        int iw, ih, ow, oh;
        if (image_size(ds.paths[i], &iw, &ih) < 0) kc_die();
        policy_size(policy, iw, ih, &ow, &oh);
        if (policy == POLICY_NATIVE16 && (iw < patch || ih < patch))
            kc_die_msg("%s: image of %dx%d is smaller than one %d-pixel patch", ds.paths[i], iw, ih, patch);
        ix.grid[2 * i] = (oh + patch - 1) / patch;
        ix.grid[2 * i + 1] = (ow + patch - 1) / patch;
        ix.size[2 * i] = ih;
        ix.size[2 * i + 1] = iw;
    }

    /* fingerprint: everything that determines the output */
    char batch_s[16], heads_s[16], eps_s[32], patch_s[16], shard_s[32];
    snprintf(batch_s, sizeof batch_s, "%d", batch);
    snprintf(heads_s, sizeof heads_s, "%d", heads);
    snprintf(eps_s, sizeof eps_s, "%.17g", ln_eps);
    snprintf(patch_s, sizeof patch_s, "%d", patch);
    kc_sha256 idh;
    kc_sha256_init(&idh);
    for (int i = 0; i < ds.n; i++) {
        kc_sha256_update(&idh, ds.ids[i], strlen(ds.ids[i]) + 1);
        kc_sha256_update(&idh, ds.paths[i], strlen(ds.paths[i]) + 1);
    }
    char ids_hash[65];
    kc_sha256_hex(&idh, ids_hash);
    /* the product path too: pieces computed by two paths (a resume on another CPU, or under another
     * KC_ISA) would differ in their last bits, so they are never mixed (check_products) */
    const char *products = use_vit ? products_describe(model) : "-";
    const char *parts[] = {"kc-extract", KC_VERSION, model_name, use_vit ? w.sha256 : "-", ckey ? ckey : "-",
                           drop_cls ? "drop-cls" : "-", heads_s, eps_s, policy_name(policy), features, posembed,
                           batch_s, patch_s, ids_hash, products, shard_str(&shard, shard_s)};
    char fp[65];
    cache_fingerprint(fp, (int)(sizeof parts / sizeof *parts) - !shard_active(&shard), parts);

    int n_batches = (ds.n + batch - 1) / batch;
    cache_writer cw;
    const products_check pc = {out, products};
    if (cache_writer_open_check(&cw, out, CACHE_FORMAT_FEATURES, fp, n_batches, check_products, (void *)&pc) < 0) kc_die();
    note_products(out, products);

    progress pr;
    progress_init(&pr, "extract", ds.n, "images");
    const int nt = omp_get_max_threads() > 0 ? omp_get_max_threads() : 1;
    /* one image per thread only where the rows come out the same either way (see --split) */
    const int per_image_ok = use_vit && nt > 1 && kc_linear_available();
    extract_job *job_sets[2] = {kc_calloc((size_t)batch, sizeof(extract_job)),
                                kc_calloc((size_t)batch, sizeof(extract_job))};
    piece_task writer = {0}; /* the piece of the batch before, being written */
    vit_state *state = NULL;
    int state_gh = 0, state_gw = 0;
    const double t_start = kc_now();
    run_times tm = {0};
    int n_done = 0;
    /* one image per thread where asked, or by default where the rows come out the same either way */
    const int images_mode = use_vit && nt > 1 && (split_mode == SPLIT_IMAGES || (split_mode == SPLIT_AUTO && per_image_ok));
    if (images_mode) {
        char errmsg[2048] = "";
        const images_run run = {&cw, &ds, &ix, batch, n_batches, nt, dim, want_attn ? vit_heads(model) : 0, patch,
                                policy, want_keys, want_tokens, want_attn, model, &pr};
        n_done = extract_images(&run, errmsg, sizeof errmsg, &tm);
        if (errmsg[0]) {
            kc_set_error(errmsg);
            kc_die();
        }
        if (n_done <= tm.n_first) tm.t_first = kc_now();
    }
    for (int b = 0; b < n_batches && !images_mode; b++) {
        int first = b * batch, count = ds.n - first < batch ? ds.n - first : batch;
        extract_job *jobs = job_sets[b % 2]; /* (the other set may still be being written) */
        if (cache_writer_have(&cw, b)) {
            progress_skip(&pr, count);
            continue;
        }
        /* every image over all threads (one image per thread runs in extract_images) */
        char errmsg[2048] = "";
        for (int k = 0; k < count; k++) {
            jobs[k] = (extract_job){.path = ds.paths[first + k], .gh = ix.grid[2 * (first + k)], .gw = ix.grid[2 * (first + k) + 1]};
        }
#pragma omp parallel for schedule(dynamic, 1)
        for (int k = 0; k < count; k++) job_decode(&jobs[k], policy, patch, errmsg, sizeof errmsg);
        if (errmsg[0]) {
            kc_set_error(errmsg);
            die_joined(&writer);
        }
        for (int k = 0; k < count; k++) job_alloc(&jobs[k], want_keys, want_tokens, want_attn, dim, use_vit ? vit_heads(model) : 0);
        for (int k = 0; k < count; k++) {
            extract_job *j = &jobs[k];
            if (use_vit) {
                if (!state || j->gh != state_gh || j->gw != state_gw) {
                    if (state) vit_state_free(state);
                    if (vit_state_new(&state, model, j->gh, j->gw) < 0) die_joined(&writer);
                    state_gh = j->gh;
                    state_gw = j->gw;
                }
                const vit_outputs vo = {j->keys, j->tokens, j->attn};
                if (vit_forward_ex(model, state, j->chw, j->gh, j->gw, &vo) < 0) {
                    kc_fail_prefix("%s", j->path);
                    die_joined(&writer);
                }
            } else {
                size_t n_tok = (size_t)j->gh * j->gw;
                float *f = j->keys ? j->keys : j->tokens;
                if (color_features(j->chw, j->gh, j->gw, patch, f) < 0) die_joined(&writer);
                if (j->keys && j->tokens) memcpy(j->tokens, j->keys, n_tok * (size_t)dim * sizeof(float));
            }
            free(j->chw);
            j->chw = NULL;
            progress_add(&pr, 1);
        }
        writer_or_die(&writer);
        writer = (piece_task){.cw = &cw, .batch = b, .count = count, .dim = dim,
                              .heads = use_vit && want_attn ? vit_heads(model) : 0,
                              .ids = (const char *const *)ds.ids + first, .jobs = jobs};
        piece_launch(&writer);
        if (!n_done) tm.t_first = tm.t_a = kc_now(), tm.n_first = count;
        n_done += count;
        tm.t_b = kc_now(), tm.n_steady = n_done - tm.n_first;
    }
    writer_or_die(&writer);
    const double t_end = kc_now();
    if (state) vit_state_free(state);
    free(job_sets[0]);
    free(job_sets[1]);
    if (verbose && n_done > 0) {
        char steady[96] = "too few images for a steady state";
        if (tm.n_steady > 0)
            snprintf(steady, sizeof steady, "steady state %.1f ms/image over %d images",
                     1e3 * (tm.t_b - tm.t_a) / tm.n_steady, tm.n_steady);
        kc_info("time: %d images in %.2f s after %.2f s of start-up (first batch of %d: %.2f s; %s)", n_done,
                t_end - t_start, t_start - t_main, tm.n_first, tm.t_first - t_start, steady);
    }

    cache_prov prov = {0};
    prov_set(&prov, "command", kc_cmdline());
    prov_set(&prov, "model", model_name);
    if (use_vit) {
        prov_set(&prov, "weights", weights);
        prov_set(&prov, "weights_sha256", w.sha256);
        prov_set(&prov, "weights_format", w.format);
        prov_set(&prov, "checkpoint_key", ckey ? ckey : "(automatic)");
        prov_set(&prov, "arch", vit_describe(model));
        prov_set(&prov, "forward", vit_forward_kind(model));
        prov_setf(&prov, "ln_eps", "%.9g", vit_ln_eps(model));
        prov_set(&prov, "posembed", posembed);
        prov_set(&prov, "products", products_describe(model));
    } else {
        prov_setf(&prov, "arch", "color dim=%d patch=%d", COLOR_DIM, patch);
        prov_set(&prov, "forward", "color statistics (no learning)");
        prov_set(&prov, "weights_sha256", "-");
        prov_set(&prov, "posembed", "-");
        prov_set(&prov, "ln_eps", "-");
        prov_set(&prov, "products", "-");
    }
    {
        char kinds[32] = "";
        const char *kn[3] = {"keys", "tokens", "attn"};
        const int kw[3] = {want_keys, want_tokens, want_attn};
        for (int q = 0; q < 3; q++)
            if (kw[q]) snprintf(kinds + strlen(kinds), sizeof kinds - strlen(kinds), "%s%s", kinds[0] ? "," : "", kn[q]);
        prov_set(&prov, "feature_kinds", kinds);
    }
    if (want_attn) {
        prov_setf(&prov, "heads", "%d", vit_heads(model));
        prov_set(&prov, "attn", "last block, class-token query, softmax over all tokens, class column dropped; (heads, G)");
    }
    prov_set(&prov, "policy", policy_name(policy));
    prov_set(&prov, "normalisation", policy_describe(policy));
    prov_setf(&prov, "patch", "%d", patch);
    prov_setf(&prov, "dim", "%d", dim);
    prov_set(&prov, "dataset", spec);
    prov_set(&prov, "dataset_kind", ds.kind);
    shard_prov(&shard, &prov, full_ids, full_n, batch, out);
    if (cache_writer_finish(&cw, &ix, &prov) < 0) kc_die();
    progress_end(&pr);
    kc_info("wrote %s (%d images, %s)", out, ds.n, prov_get(&prov, "feature_kinds"));
    prov_free(&prov);
    cache_writer_free(&cw);
    free(ix.grid);
    free(ix.size);
    if (model) vit_free(model);
    if (use_vit) weights_free(&w);
    dataset_free(&ds);
    return 0;
}
