/* tests/bench_davis.c — synthetic DAVIS-layout data for kc-davis / kc-propagate tests and the bench.
 *
 *   bench_davis gen --root ROOT --results DIR [--videos 30] [--frames 70] [--width 854]
 *                   [--height 480] [--objects 2] [--seed 1] [--split val]
 *       ROOT/ImageSets/2017/<split>.txt, ROOT/Annotations/480p/vNN/NNNNN.png (moving ellipses,
 *       ids 1..objects) and DIR/vNN/NNNNN.png: a "prediction" = the ground truth shifted by a few
 *       pixels, with the later objects' masks dilated or eroded and some speckle, so J and F vary.
 *   bench_davis video ROOT CACHE WIDTH HEIGHT FRAMES DIM
 *       one video "wide" (annotations, empty JPEG names) and a features cache of random (n, DIM)
 *       tokens on the short480 grid, for kc-propagate's memory measure.
 *   bench_davis png FILE WIDTH HEIGHT VALUE
 *       a palette PNG of one value (for bad-input tests).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/cache/cache.h"
#include "pipeline/images/image.h"
#include "pipeline/kc.h"

static uint32_t hash32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

/* Object k's ellipse at frame t (seeded): centre, radii. */
static void object_at(int seed, int video, int k, int t, int w, int h, double *cx, double *cy, double *rx, double *ry)
{
    uint32_t s = hash32((uint32_t)(seed * 7919 + video * 104729 + k * 31));
    double fx = (s & 1023) / 1023.0, fy = ((s >> 10) & 1023) / 1023.0, ph = ((s >> 20) & 1023) / 1023.0 * 6.28;
    *cx = w * (0.2 + 0.6 * fx) + w * 0.15 * sin(0.07 * t + ph);
    *cy = h * (0.2 + 0.6 * fy) + h * 0.1 * cos(0.05 * t + ph);
    *rx = w * (0.06 + 0.05 * ((s >> 3) % 5) / 4.0);
    *ry = h * (0.08 + 0.06 * ((s >> 7) % 5) / 4.0);
}

static void draw(uint8_t *lab, int w, int h, int seed, int video, int t, int n_obj, double shift, double grow)
{
    memset(lab, 0, (size_t)w * h);
    for (int k = 1; k <= n_obj; k++) {
        double cx, cy, rx, ry;
        object_at(seed, video, k, t, w, h, &cx, &cy, &rx, &ry);
        cx += shift;
        rx *= 1 + grow * (k - 1);
        ry *= 1 + grow * (k - 1);
        int y0 = (int)fmax(0, cy - ry - 1), y1 = (int)fmin(h - 1, cy + ry + 1);
        int x0 = (int)fmax(0, cx - rx - 1), x1 = (int)fmin(w - 1, cx + rx + 1);
        for (int y = y0; y <= y1; y++)
            for (int x = x0; x <= x1; x++) {
                double dx = (x - cx) / rx, dy = (y - cy) / ry;
                if (dx * dx + dy * dy <= 1) lab[(size_t)y * w + x] = (uint8_t)k;
            }
    }
}

static int gen(int argc, char **argv)
{
    const char *root = NULL, *results = NULL, *split = "val";
    int videos = 30, frames = 70, w = 854, h = 480, n_obj = 2, seed = 1;
    for (int i = 2; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (!strcmp(a, "--root")) root = v;
        else if (!strcmp(a, "--results")) results = v;
        else if (!strcmp(a, "--split")) split = v;
        else if (!strcmp(a, "--videos")) videos = atoi(v);
        else if (!strcmp(a, "--frames")) frames = atoi(v);
        else if (!strcmp(a, "--width")) w = atoi(v);
        else if (!strcmp(a, "--height")) h = atoi(v);
        else if (!strcmp(a, "--objects")) n_obj = atoi(v);
        else if (!strcmp(a, "--seed")) seed = atoi(v);
        else kc_die_msg("unknown option %s", a);
    }
    if (!root || videos < 1 || frames < 1 || w < 2 || h < 2 || n_obj < 1 || n_obj > 254)
        kc_die_msg("usage: bench_davis gen --root ROOT [--results DIR] [--videos N] ...");
    uint8_t pal[768];
    image_davis_palette(pal);
    char *sets = kc_strfmt("%s/ImageSets/2017", root);
    if (kc_mkdirs(sets) < 0) kc_die();
    char *list = kc_strfmt("%s/%s.txt", sets, split);
    FILE *f = fopen(list, "w");
    if (!f) kc_die_msg("%s: cannot write", list);
    for (int v = 0; v < videos; v++) fprintf(f, "v%02d\n", v);
    fclose(f);
    for (int v = 0; v < videos; v++) {
        char *a = kc_strfmt("%s/Annotations/480p/v%02d", root, v);
        if (kc_mkdirs(a) < 0) kc_die();
        free(a);
        if (results) {
            char *r = kc_strfmt("%s/v%02d", results, v);
            if (kc_mkdirs(r) < 0) kc_die();
            free(r);
        }
    }
    int failed = 0;
#pragma omp parallel
    {
        uint8_t *lab = kc_malloc((size_t)w * h);
#pragma omp for schedule(dynamic, 4) collapse(2)
        for (int v = 0; v < videos; v++)
            for (int t = 0; t < frames; t++) {
                char *p = kc_strfmt("%s/Annotations/480p/v%02d/%05d.png", root, v, t);
                draw(lab, w, h, seed, v, t, n_obj, 0, 0);
                if (image_write_png_index(p, w, h, lab, pal) < 0) {
#pragma omp critical
                    fprintf(stderr, "%s\n", kc_error());
                    failed = 1;
                }
                free(p);
                if (!results) continue;
                double shift = 3.0 * sin(0.3 * t + v), grow = 0.08 * cos(0.2 * t);
                draw(lab, w, h, seed, v, t, n_obj, shift, grow);
                for (size_t i = 0; i < (size_t)w * h; i += 97)
                    if (hash32((uint32_t)(i + 7 * t + 1000 * v)) % 5 == 0) lab[i] = (uint8_t)(hash32((uint32_t)i) % (n_obj + 1));
                p = kc_strfmt("%s/v%02d/%05d.png", results, v, t);
                if (image_write_png_index(p, w, h, lab, pal) < 0) {
#pragma omp critical
                    fprintf(stderr, "%s\n", kc_error());
                    failed = 1;
                }
                free(p);
            }
        free(lab);
    }
    free(sets);
    free(list);
    return failed;
}

static int video(char **argv)
{
    const char *root = argv[2], *cache = argv[3];
    int w = atoi(argv[4]), h = atoi(argv[5]), frames = atoi(argv[6]), dim = atoi(argv[7]);
    if (w < 16 || h < 16 || frames < 2 || dim < 1) kc_die_msg("bad video size");
    int gh = 480 / 16, gw = (int)(480.0 * w / h / 64) * 64 / 16, n = gh * gw;
    uint8_t pal[768], *lab = kc_malloc((size_t)w * h);
    image_davis_palette(pal);
    char *d = kc_strfmt("%s/ImageSets/2017", root);
    char *a = kc_strfmt("%s/Annotations/480p/wide", root), *j = kc_strfmt("%s/JPEGImages/480p/wide", root);
    if (kc_mkdirs(d) < 0 || kc_mkdirs(a) < 0 || kc_mkdirs(j) < 0) kc_die();
    char *p = kc_strfmt("%s/val.txt", d);
    if (kc_write_file_atomic(p, "wide\n", 5) < 0) kc_die();
    free(p);
    cache_writer cw;
    char fp[65];
    const char *parts[1] = {cache};
    cache_fingerprint(fp, 1, parts);
    if (cache_writer_open(&cw, cache, CACHE_FORMAT_FEATURES, fp, 1) < 0) kc_die();
    cache_piece *piece = cache_piece_new(&cw, 0);
    cache_index ix = {frames, kc_malloc(sizeof(char *) * frames), kc_malloc(sizeof(int32_t) * 2 * frames),
                      kc_malloc(sizeof(int32_t) * 2 * frames), NULL, NULL};
    float *f = kc_malloc(sizeof *f * (size_t)n * dim);
    for (int t = 0; t < frames; t++) {
        draw(lab, w, h, 3, 0, t, 2, 0, 0);
        p = kc_strfmt("%s/%05d.png", a, t);
        if (t == 0 && image_write_png_index(p, w, h, lab, pal) < 0) kc_die();
        free(p);
        p = kc_strfmt("%s/%05d.jpg", j, t);
        if (kc_write_file_atomic(p, "", 0) < 0) kc_die();
        free(p);
        for (size_t i = 0; i < (size_t)n * dim; i++) f[i] = (float)(hash32((uint32_t)(i * 31 + t)) % 2001) / 1000.0f - 1;
        ix.ids[t] = kc_strfmt("wide/%05d", t);
        ix.grid[2 * t] = gh;
        ix.grid[2 * t + 1] = gw;
        ix.size[2 * t] = h;
        ix.size[2 * t + 1] = w;
        char *ds = kc_strfmt("/features/tokens/%s", ix.ids[t]);
        int64_t dims[2] = {n, dim};
        if (cache_piece_put_f32(piece, ds, f, 2, dims) < 0) kc_die();
        free(ds);
    }
    if (cache_piece_commit(piece) < 0) kc_die();
    cache_prov prov = {0};
    prov_set(&prov, "feature_kind", "tokens");
    prov_set(&prov, "policy", "short480");
    if (cache_writer_finish(&cw, &ix, &prov) < 0) kc_die();
    prov_free(&prov);
    cache_writer_free(&cw);
    cache_index_free(&ix);
    free(f);
    free(lab);
    free(a);
    free(j);
    free(d);
    return 0;
}

int main(int argc, char **argv)
{
    kc_set_prog("bench_davis");
    if (argc == 8 && !strcmp(argv[1], "video")) return video(argv);
    if (argc >= 2 && !strcmp(argv[1], "gen")) return gen(argc, argv);
    if (argc == 6 && !strcmp(argv[1], "png")) {
        int w = atoi(argv[3]), h = atoi(argv[4]), value = atoi(argv[5]);
        if (w < 1 || h < 1 || value < 0 || value > 255) kc_die_msg("bad size or value");
        uint8_t pal[768], *lab = kc_malloc((size_t)w * h);
        image_davis_palette(pal);
        memset(lab, value, (size_t)w * h);
        if (image_write_png_index(argv[2], w, h, lab, pal) < 0) kc_die();
        free(lab);
        return 0;
    }
    fprintf(stderr, "usage: bench_davis gen --root ROOT [--results DIR] [--videos 30] [--frames 70] [--width 854]\n"
                    "                       [--height 480] [--objects 2] [--seed 1] [--split val]\n"
                    "       bench_davis png FILE WIDTH HEIGHT VALUE\n");
    return 2;
}
