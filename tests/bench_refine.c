/* tests/bench_refine.c — kc-refine's two methods per image, one thread: the dense CRF at 480x480
 * (square480, MaskCut) and the bilateral solver at 480x480 and at the photo's own size (TokenCut),
 * each the best of a few runs.  Figures only.
 *
 *   bench_refine PHOTO.jpg [RUNS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/refine/refine.h"
#include "pipeline/images/image.h"
#include "pipeline/kc.h"
#include "pipeline/images/resize.h"

/* An ellipse of cells (the reference script's patch_mask, label 1 only). */
static void ellipse(uint8_t *lab, int gh, int gw)
{
    for (int y = 0; y < gh; y++)
        for (int x = 0; x < gw; x++) {
            double dx = (x - gw * 0.5) / (gw * 0.3), dy = (y - gh * 0.55) / (gh * 0.35);
            lab[y * gw + x] = dx * dx + dy * dy < 1;
        }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_refine PHOTO.jpg [RUNS]\n");
        return 2;
    }
    int runs = argc > 2 ? atoi(argv[2]) : 3;
    kc_keep_freed_memory(); /* as kc-refine runs: an image's buffers are reused, not mapped afresh */
    kc_image img;
    if (image_load_rgb(argv[1], &img) < 0) kc_die();
    uint8_t *rgb480 = kc_malloc(480 * 480 * 3), lab[30 * 30], *m = kc_malloc(480 * 480), *out = kc_malloc(480 * 480);
    resize_lanczos_pillow(img.rgb, img.w, img.h, rgb480, 480, 480);
    ellipse(lab, 30, 30);
    for (int y = 0; y < 480; y++)
        for (int x = 0; x < 480; x++) m[y * 480 + x] = lab[(y / 16) * 30 + x / 16];
    refine_opts o = REFINE_DEFAULTS;
    double best = 1e9, iou;
    for (int r = 0; r < runs; r++) {
        double t0 = kc_now();
        if (refine_crf_mask(&o, rgb480, 480, 480, m, out, NULL, &iou) < 0) kc_die();
        double t = kc_now() - t0;
        if (t < best) best = t;
    }
    printf("kc-refine crf, 480x480 (10 iterations, 2 labels, one thread): %.1f ms best of %d\n", 1e3 * best, runs);
    /* the bilateral solver at 480x480 and at the original size */
    for (int k = 0; k < 2; k++) {
        int W = k ? img.w : 480, H = k ? img.h : 480;
        const uint8_t *px = k ? img.rgb : rgb480;
        double *target = kc_malloc((size_t)W * H * sizeof *target), *res = kc_malloc((size_t)W * H * sizeof *res);
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) target[(size_t)y * W + x] = lab[(y * 30 / H) * 30 + x * 30 / W];
        bs_params p = BS_TOKENCUT_RUNS;
        bs_stats st;
        best = 1e9;
        for (int r = 0; r < runs; r++) {
            double t0 = kc_now();
            if (bs_solve(&p, px, W, H, target, res, &st) < 0) kc_die();
            double t = kc_now() - t0;
            if (t < best) best = t;
        }
        printf("kc-refine bs, %dx%d (%d vertices, %d CG iterations, one thread): %.1f ms best of %d\n", W, H, st.vertices,
               st.cg_iters, 1e3 * best, runs);
        free(target);
        free(res);
    }
    free(rgb480);
    free(m);
    free(out);
    image_free(&img);
    return 0;
}
