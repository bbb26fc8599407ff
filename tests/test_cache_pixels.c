/* tests/test_cache_pixels.c — the grid-to-pixel rule of docs/cache-format.md (what a Python reader
 * does with /index/resized and /index/box) against pipeline/images/grid_map.h's, which kc-score,
 * kc-show and kc-refine use.
 *
 * Without arguments (make test): for every policy, patches 8, 14 and 16 and image sides 16 .. 700,
 * the box rule  cell(x) = (2 left W + (2x + 1) width) div (2 W p)  with the resized size and box
 * kc-extract records (pipeline/extract/extract.c: resized = grid p; box = the whole of it, native16:
 * the image's own size at the top left) equals grid_pixel_cell on every pixel.
 *
 * With arguments, for tests/test_cache_python.sh (the C side of its comparison):
 *   test_cache_pixels --ids CACHE                  the ids of CACHE's index, one a line
 *   test_cache_pixels --pixels MASKS SETTING ID    the mask of ID under SETTING mapped to the image's
 *                                                  pixels by grid_pixel_cell: H lines of W labels
 *                                                  (0-9), the policy and patch from MASKS' attributes */
#include <stdlib.h>

#include "pipeline/cache/cache.h"
#include "pipeline/images/grid_map.h"
#include "pipeline/kc.h"
#include "tests/test.h"

/* The box rule along one axis: n pixels, box offset `off` and extent `ext` in resized pixels. */
static int box_cell(int x, int n, int off, int ext, int patch)
{
    return (int)((2LL * off * n + (2LL * x + 1) * ext) / (2LL * n * patch));
}

static void self_check(void)
{
    static const kc_policy policies[] = {POLICY_SQUARE480, POLICY_SHORT480, POLICY_NATIVE16, POLICY_SQUARE224,
                                         POLICY_SQUARE448};
    static const int patches[] = {8, 14, 16};
    long pixels = 0, off = 0;
    for (size_t a = 0; a < sizeof policies / sizeof *policies; a++)
        for (size_t b = 0; b < sizeof patches / sizeof *patches; b++)
            for (int w = 16; w <= 700; w += 37)
                for (int h = 16; h <= 700; h += 53) {
                    const kc_policy pol = policies[a];
                    const int p = patches[b];
                    int gh, gw;
                    policy_grid(pol, p, w, h, &gh, &gw);
                    const int rh = gh * p, rw = gw * p; /* /index/resized */
                    const int bh = pol == POLICY_NATIVE16 ? h : rh, bw = pol == POLICY_NATIVE16 ? w : rw;
                    for (int x = 0; x < w; x++, pixels++)
                        if (box_cell(x, w, 0, bw, p) != grid_pixel_cell(pol, p, x, w, gw)) off++;
                    for (int y = 0; y < h; y++, pixels++)
                        if (box_cell(y, h, 0, bh, p) != grid_pixel_cell(pol, p, y, h, gh)) off++;
                }
    CHECK(off == 0, "box rule vs grid_pixel_cell: %ld of %ld pixel positions differ", off, pixels);
    fprintf(stderr, "box rule vs grid_pixel_cell: %ld pixel positions (5 policies, patches 8 14 16), %ld differ "
                    "(tol 0)\n", pixels, off);
}

static int print_ids(const char *path)
{
    cache_reader r;
    if (cache_open(&r, path, NULL) < 0) return fprintf(stderr, "%s\n", kc_error()), 1;
    for (int i = 0; i < r.index.n; i++) printf("%s\n", r.index.ids[i]);
    cache_close(&r);
    return 0;
}

static int print_pixels(const char *path, const char *setting, const char *id)
{
    cache_reader r;
    if (cache_open(&r, path, CACHE_FORMAT_MASKS) < 0) return fprintf(stderr, "%s\n", kc_error()), 1;
    int i = cache_index_find(&r.index, id), rc = 1;
    kc_policy pol;
    const char *ps = cache_attr(&r, "patch"), *pn = cache_attr(&r, "policy");
    char *d = kc_strfmt("/masks/%s/%s", setting, id);
    uint8_t *lab = NULL;
    int gh, gw;
    if (i < 0 || !ps || !pn || policy_parse(pn, &pol) < 0 || cache_read_u8(&r, d, &lab, &gh, &gw) < 0) {
        fprintf(stderr, "%s: %s not readable (%s)\n", path, d, kc_error());
    } else {
        const int h = r.index.size[2 * i], w = r.index.size[2 * i + 1], p = atoi(ps);
        for (int y = 0; y < h; y++) {
            const int cy = grid_pixel_cell(pol, p, y, h, gh);
            for (int x = 0; x < w; x++) putchar('0' + lab[(size_t)cy * gw + grid_pixel_cell(pol, p, x, w, gw)] % 10);
            putchar('\n');
        }
        rc = 0;
    }
    free(lab);
    free(d);
    cache_close(&r);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--ids")) return print_ids(argv[2]);
    if (argc == 5 && !strcmp(argv[1], "--pixels")) return print_pixels(argv[2], argv[3], argv[4]);
    if (argc != 1) {
        fprintf(stderr, "usage: test_cache_pixels [--ids CACHE | --pixels MASKS SETTING ID]\n");
        return 2;
    }
    self_check();
    return test_done();
}
