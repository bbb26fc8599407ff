/* tests/bench_score.c — data and in-memory timings for the scoring benchmark (tests/bench_score.sh).
 *
 *   bench_score DIR [N_IMAGES [N_SETTINGS]]
 *
 * Writes (once; reused when DIR/done exists) a generated VOC-layout ground truth of N_IMAGES
 * (default 1000) images of 500x375 pixels — JPEGImages (gray, only the size matters),
 * SegmentationObject palette PNGs with objects and void borders, Annotations XML — the split
 * DIR/split.txt and a masks cache DIR/masks.h5 (square480, patch 16: 30x30 label maps) with
 * N_SETTINGS (default 144) settings.  Then times, in memory: the per-image precomputation, the
 * fast scoring of every mask, and the naive per-pixel scoring of a subset (scaled).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <omp.h>

#include "eval/voc/voc_metrics.h"
#include "pipeline/cache/cache.h"
#include "pipeline/images/image.h"
#include "pipeline/kc.h"

#define W 500
#define H 375
#define GRID 30

static uint64_t rng_state = 88172645463325252ULL;
static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 32);
}

static int write_gray_jpeg(const char *path)
{
    FILE *f = fopen(path, "wb");
    if (!f) return kc_fail("%s: cannot create", path);
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr e;
    c.err = jpeg_std_error(&e);
    jpeg_create_compress(&c);
    jpeg_stdio_dest(&c, f);
    c.image_width = W;
    c.image_height = H;
    c.input_components = 1;
    c.in_color_space = JCS_GRAYSCALE;
    jpeg_set_defaults(&c);
    jpeg_start_compress(&c, TRUE);
    JSAMPLE row[W];
    memset(row, 128, sizeof row);
    while (c.next_scanline < c.image_height) {
        JSAMPROW r = row;
        jpeg_write_scanlines(&c, &r, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    fclose(f);
    return 0;
}

typedef struct gen_image {
    uint8_t obj[W * H];
    voc_box boxes[3];
    int n_boxes;
} gen_image;

static void gen_gt(gen_image *g)
{
    memset(g->obj, 0, sizeof g->obj);
    g->n_boxes = 1 + (int)(rnd() % 3);
    for (int k = 0; k < g->n_boxes; k++) {
        int x0 = (int)(rnd() % (W - 60)), y0 = (int)(rnd() % (H - 60));
        int x1 = x0 + 20 + (int)(rnd() % (uint32_t)(W - x0 - 20)), y1 = y0 + 20 + (int)(rnd() % (uint32_t)(H - y0 - 20));
        for (int y = y0; y <= y1; y++)
            for (int x = x0; x <= x1; x++)
                g->obj[y * W + x] = (y - y0 < 3 || y1 - y < 3 || x - x0 < 3 || x1 - x < 3) ? 255 : (uint8_t)(k + 1);
        g->boxes[k] = (voc_box){x0 + 1, y0 + 1, x1 + 1, y1 + 1};
    }
}

static void gen_mask(uint8_t *lab)
{
    memset(lab, 0, GRID * GRID);
    if (rnd() % 20 == 0) return; /* an empty mask now and then */
    for (int r = 1; r <= 3; r++) {
        int x0 = (int)(rnd() % GRID), y0 = (int)(rnd() % GRID);
        int x1 = x0 + (int)(rnd() % (uint32_t)(GRID - x0)), y1 = y0 + (int)(rnd() % (uint32_t)(GRID - y0));
        for (int y = y0; y <= y1; y++)
            for (int x = x0; x <= x1; x++)
                if (!lab[y * GRID + x]) lab[y * GRID + x] = (uint8_t)r;
    }
}

static const char *setting_name(int s, char *buf, size_t n)
{
    static const char *tau[4] = {"0.10", "0.15", "0.20", "0.25"}, *edge[2] = {"bin", "wtd"}, *split[2] = {"mean", "zero"},
                      *rule[3] = {"seed", "corners", "minority"};
    int k = s;
    int nn = k % 3 + 1;
    k /= 3;
    int ru = k % 3;
    k /= 3;
    int sp = k % 2;
    k /= 2;
    int ed = k % 2;
    k /= 2;
    if (k < 4) snprintf(buf, n, "t%s-%s-%s-%s-n%d", tau[k], edge[ed], split[sp], rule[ru], nn);
    else snprintf(buf, n, "extra%03d", s);
    return buf;
}

static int generate(const char *dir, int n, int n_settings)
{
    const char *subs[4] = {"JPEGImages", "SegmentationObject", "Annotations", ""};
    for (int k = 0; k < 4; k++) {
        char *p = kc_strfmt("%s/%s", dir, subs[k]);
        KC_TRY(kc_mkdirs(p));
        free(p);
    }
    uint8_t pal[768];
    image_davis_palette(pal);
    gen_image *g = kc_malloc(sizeof *g);
    char *sp = kc_strfmt("%s/split.txt", dir);
    FILE *split = fopen(sp, "w");
    if (!split) return kc_fail("%s: cannot create", sp);
    for (int i = 0; i < n; i++) {
        char id[32];
        snprintf(id, sizeof id, "2099_%06d", i);
        fprintf(split, "%s\n", id);
        gen_gt(g);
        char *p = kc_strfmt("%s/JPEGImages/%s.jpg", dir, id);
        KC_TRY(write_gray_jpeg(p));
        free(p);
        p = kc_strfmt("%s/SegmentationObject/%s.png", dir, id);
        KC_TRY(image_write_png_index(p, W, H, g->obj, pal));
        free(p);
        p = kc_strfmt("%s/Annotations/%s.xml", dir, id);
        FILE *x = fopen(p, "w");
        if (!x) return kc_fail("%s: cannot create", p);
        fprintf(x, "<annotation>\n  <size><width>%d</width><height>%d</height><depth>3</depth></size>\n", W, H);
        for (int k = 0; k < g->n_boxes; k++)
            fprintf(x, "  <object><name>dog</name><bndbox><xmin>%g</xmin><ymin>%g</ymin><xmax>%g</xmax>"
                       "<ymax>%g</ymax></bndbox></object>\n", g->boxes[k].xmin, g->boxes[k].ymin, g->boxes[k].xmax,
                    g->boxes[k].ymax);
        fprintf(x, "</annotation>\n");
        fclose(x);
        free(p);
    }
    fclose(split);
    free(sp);
    free(g);
    /* the masks cache, 100 images per piece */
    char *mp = kc_strfmt("%s/masks.h5", dir);
    cache_writer cw;
    int per = 100, n_batches = (n + per - 1) / per;
    char fp[65];
    const char *parts[2] = {"bench_score", dir};
    cache_fingerprint(fp, 2, parts);
    KC_TRY(cache_writer_open(&cw, mp, CACHE_FORMAT_MASKS, fp, n_batches));
    uint8_t lab[GRID * GRID];
    float l2[3] = {0.25f, 0.5f, 0.75f}, gap[3] = {0.125f, 0.125f, 0.125f};
    for (int b = 0; b < n_batches; b++) {
        if (cache_writer_have(&cw, b)) continue;
        cache_piece *pc = cache_piece_new(&cw, b);
        for (int i = b * per; i < n && i < (b + 1) * per; i++)
            for (int s = 0; s < n_settings; s++) {
                char name[64], ds[128];
                snprintf(ds, sizeof ds, "/masks/%s/2099_%06d", setting_name(s, name, sizeof name), i);
                gen_mask(lab);
                int64_t dims[2] = {GRID, GRID};
                if (cache_piece_put_u8(pc, ds, lab, 2, dims) < 0 || cache_piece_attr_f32(pc, ds, "lambda2", l2, 3) < 0 ||
                    cache_piece_attr_f32(pc, ds, "eigengap", gap, 3) < 0 ||
                    cache_piece_attr_i32(pc, ds, "degenerate", 0) < 0) {
                    cache_piece_abort(pc);
                    return -1;
                }
            }
        KC_TRY(cache_piece_commit(pc));
    }
    cache_index ix = {n, kc_malloc((size_t)n * sizeof(char *)), kc_malloc((size_t)n * 2 * sizeof(int32_t)),
                      kc_malloc((size_t)n * 2 * sizeof(int32_t)), NULL, NULL};
    for (int i = 0; i < n; i++) {
        ix.ids[i] = kc_strfmt("2099_%06d", i);
        ix.grid[2 * i] = ix.grid[2 * i + 1] = GRID;
        ix.size[2 * i] = H;
        ix.size[2 * i + 1] = W;
    }
    cache_prov prov = {0};
    prov_set(&prov, "policy", "square480");
    prov_set(&prov, "patch", "16");
    prov_set(&prov, "network", "bench");
    int rc = cache_writer_finish(&cw, &ix, &prov);
    cache_writer_free(&cw);
    prov_free(&prov);
    cache_index_free(&ix);
    free(mp);
    return rc;
}

int main(int argc, char **argv)
{
    kc_set_prog("bench_score");
    if (argc < 2) kc_die_msg("usage: bench_score DIR [N_IMAGES [N_SETTINGS]]");
    const char *dir = argv[1];
    int n = argc > 2 ? atoi(argv[2]) : 1000, n_settings = argc > 3 ? atoi(argv[3]) : 144;
    if (n <= 0 || n_settings <= 0) kc_die_msg("bad sizes");
    char *done = kc_strfmt("%s/done-%d-%d", dir, n, n_settings);
    double t0 = kc_now();
    if (!kc_exists(done)) {
        if (generate(dir, n, n_settings) < 0) kc_die();
        if (kc_write_file_atomic(done, "", 0) < 0) kc_die();
        printf("generated %d images x %d settings in %s in %.1f s\n", n, n_settings, dir, kc_now() - t0);
    }
    free(done);

    /* in-memory timings on fresh generated ground truth and masks */
    rng_state = 12345;
    gen_image *g = kc_malloc(sizeof *g);
    voc_cells *cells = kc_calloc((size_t)n, sizeof *cells);
    uint8_t **obj = kc_malloc((size_t)n * sizeof *obj);
    voc_box (*boxes)[3] = kc_malloc((size_t)n * sizeof *boxes);
    int *nb = kc_malloc((size_t)n * sizeof *nb);
    for (int i = 0; i < n; i++) {
        gen_gt(g);
        obj[i] = kc_malloc(W * H);
        memcpy(obj[i], g->obj, W * H);
        memcpy(boxes[i], g->boxes, sizeof g->boxes);
        nb[i] = g->n_boxes;
    }
    free(g);
    size_t n_masks = (size_t)n * n_settings;
    uint8_t *labs = kc_malloc(n_masks * GRID * GRID);
    for (size_t k = 0; k < n_masks; k++) gen_mask(labs + k * GRID * GRID);
    double t = kc_now();
#pragma omp parallel for schedule(dynamic, 8)
    for (int i = 0; i < n; i++)
        voc_cells_init(&cells[i], obj[i], H, W, boxes[i], nb[i], POLICY_SQUARE480, 16, GRID, GRID);
    double t_cells = kc_now() - t;
    t = kc_now();
    double sum = 0;
#pragma omp parallel for schedule(static) reduction(+ : sum)
    for (int i = 0; i < n; i++)
        for (int s = 0; s < n_settings; s++) {
            voc_score sc;
            voc_score_mask(&cells[i], labs + ((size_t)s * n + i) * GRID * GRID, &sc);
            sum += sc.jaccard + sc.corloc;
        }
    double t_fast = kc_now() - t;
    int sub = n < 20 ? n : 20;
    t = kc_now();
    double sum2 = 0;
#pragma omp parallel for schedule(dynamic) reduction(+ : sum2)
    for (int i = 0; i < sub; i++)
        for (int s = 0; s < n_settings; s++) {
            voc_score sc;
            voc_score_naive(obj[i], H, W, boxes[i], nb[i], POLICY_SQUARE480, 16,
                            labs + ((size_t)s * n + i) * GRID * GRID, GRID, GRID, &sc);
            sum2 += sc.jaccard;
        }
    double t_naive = (kc_now() - t) * n / sub;
    printf("in memory, %d threads: per-image precomputation %.2f s; fast scoring of %zu masks %.3f s "
           "(%.2f us/mask); naive per-pixel scoring %.1f s (scaled from %d images)  [checksum %.6f]\n",
           omp_get_max_threads(), t_cells, n_masks, t_fast, 1e6 * t_fast / (double)n_masks, t_naive, sub,
           sum / (double)n_masks);
    for (int i = 0; i < n; i++) {
        voc_cells_free(&cells[i]);
        free(obj[i]);
    }
    free(cells);
    free(obj);
    free(boxes);
    free(nb);
    free(labs);
    return 0;
}
