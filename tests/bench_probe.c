/* tests/bench_probe.c — the synthetic data of tests/bench_probe.sh: N images of the linear probe's
 * shape (a 14 x 14 grid of 384-wide tokens: ViT-S/16 at square224) in a keycut features cache, and
 * a VOC-layout folder with their 224 x 224 class labels (a few random rectangles of 20 classes on
 * background, a void border), listed as ImageSets/Segmentation/trainaug.txt with the labels in
 * SegmentationClassAug/, as users lay out the augmented set.
 *
 *     bench_probe OUT_DIR N [DIM]      -> OUT_DIR/tokens.h5, OUT_DIR/voc/...
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/cache/cache.h"
#include "pipeline/images/image.h"
#include "pipeline/kc.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng >> 32);
}
static float gauss(void) /* a sum of four uniforms, centred: close enough to a normal for timing */
{
    float s = 0;
    for (int k = 0; k < 4; k++) s += (float)(next() >> 8) * (1.0f / 16777216.0f);
    return (s - 2.0f) * 1.7f;
}

int main(int argc, char **argv)
{
    kc_set_prog("bench_probe");
    if (argc < 3) kc_die_msg("usage: bench_probe OUT_DIR N [DIM]");
    const char *out = argv[1];
    const int n = atoi(argv[2]), D = argc > 3 ? atoi(argv[3]) : 384, gh = 14, gw = 14, G = gh * gw, S = 224;
    if (n < 1 || D < 1) kc_die_msg("bad N or DIM");
    char *voc = kc_strfmt("%s/voc", out), *sets = kc_strfmt("%s/ImageSets/Segmentation", voc),
         *labs = kc_strfmt("%s/SegmentationClassAug", voc), *jpg = kc_strfmt("%s/JPEGImages", voc);
    if (kc_mkdirs(sets) < 0 || kc_mkdirs(labs) < 0 || kc_mkdirs(jpg) < 0) kc_die();
    uint8_t pal[768];
    image_davis_palette(pal);
    kc_buf list = {0};
    cache_index ix = {n, kc_malloc(sizeof(char *) * (size_t)n), kc_malloc(sizeof(int32_t) * 2 * (size_t)n),
                      kc_malloc(sizeof(int32_t) * 2 * (size_t)n), NULL, NULL};
    uint8_t *lab = kc_malloc((size_t)S * S);
    for (int i = 0; i < n; i++) {
        char id[32];
        snprintf(id, sizeof id, "2099_%06d", i + 1);
        ix.ids[i] = kc_strdup(id);
        ix.grid[2 * i] = gh, ix.grid[2 * i + 1] = gw;
        ix.size[2 * i] = S, ix.size[2 * i + 1] = S;
        kc_buf_printf(&list, "%s\n", id);
        memset(lab, 0, (size_t)S * S);
        int k = 1 + (int)(next() % 3);
        for (int r = 0; r < k; r++) {
            int c = 1 + (int)(next() % 20), x0 = (int)(next() % 180), y0 = (int)(next() % 180);
            int w = 20 + (int)(next() % 100), h = 20 + (int)(next() % 100);
            for (int y = y0; y < y0 + h && y < S; y++)
                for (int x = x0; x < x0 + w && x < S; x++) lab[y * S + x] = (uint8_t)c;
        }
        for (int y = 0; y < S; y++)
            for (int x = 0; x < S; x++)
                if (x < 2 || y < 2 || x >= S - 2 || y >= S - 2) lab[y * S + x] = 255;
        char *p = kc_strfmt("%s/%s.png", labs, id);
        if (image_write_png_index(p, S, S, lab, pal) < 0) kc_die();
        free(p);
    }
    char *lp = kc_strfmt("%s/trainaug.txt", sets);
    if (kc_write_file_atomic(lp, list.s, list.n) < 0) kc_die();
    /* the tokens, in pieces of 64 images */
    char *cp = kc_strfmt("%s/tokens.h5", out);
    const char *parts[] = {"bench_probe", argv[2]};
    char fp[65];
    cache_fingerprint(fp, 2, parts);
    const int batch = 64, nb = (n + batch - 1) / batch;
    cache_writer w;
    if (cache_writer_open(&w, cp, CACHE_FORMAT_FEATURES, fp, nb) < 0) kc_die();
    float *tok = kc_malloc(sizeof(float) * (size_t)G * D);
    for (int b = 0; b < nb; b++) {
        cache_piece *pc = cache_piece_new(&w, b);
        for (int i = b * batch; i < n && i < (b + 1) * batch; i++) {
            for (int j = 0; j < G * D; j++) tok[j] = gauss();
            char *ds = kc_strfmt("/features/tokens/%s", ix.ids[i]);
            int64_t dims[2] = {G, D};
            if (cache_piece_put_f32(pc, ds, tok, 2, dims) < 0) kc_die();
            free(ds);
        }
        if (cache_piece_commit(pc) < 0) kc_die();
    }
    cache_prov prov = {0};
    prov_set(&prov, "feature_kinds", "tokens");
    prov_set(&prov, "policy", "square224");
    prov_set(&prov, "weights_sha256", "-");
    prov_set(&prov, "dataset", "bench_probe (synthetic)");
    if (cache_writer_finish(&w, &ix, &prov) < 0) kc_die();
    cache_writer_free(&w);
    prov_free(&prov);
    printf("wrote %s (%d images, %d x %d tokens of %d) and %s\n", cp, n, gh, gw, D, voc);
    free(tok), free(cp), free(lp), free(list.s), free(lab), free(voc), free(sets), free(labs), free(jpg);
    cache_index_free(&ix);
    return 0;
}
