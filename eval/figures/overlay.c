/* eval/figures/overlay.c — see overlay.h. */
#include "eval/figures/overlay.h"

#include <stdlib.h>
#include <string.h>

#include "pipeline/images/grid_map.h"
#include "pipeline/cache/cache.h"
#include "pipeline/kc.h"

int overlay_grid_to_pixels(const uint8_t *grid, int gh, int gw, kc_policy p, int patch, int W, int H,
                           uint8_t *labels)
{
    if (gh <= 0 || gw <= 0 || W <= 0 || H <= 0)
        return kc_fail("invalid grid %dx%d or image %dx%d", gw, gh, W, H);
    if (p == POLICY_NATIVE16) {
        if (patch <= 0) return kc_fail("native16 needs a patch size (got %d)", patch);
        if ((long long)gw * patch < W || (long long)gh * patch < H)
            return kc_fail("a %dx%d grid of %d-pixel patches does not cover a %dx%d image", gw, gh, patch, W, H);
    }
    int32_t *col = kc_malloc(sizeof(int32_t) * W);
    grid_axis_cells(p, patch, W, gw, col);
    for (int y = 0; y < H; y++) {
        int gy = grid_pixel_cell(p, patch, y, H, gh);
        const uint8_t *g = grid + (size_t)gy * gw;
        uint8_t *o = labels + (size_t)y * W;
        for (int x = 0; x < W; x++) o[x] = g[col[x]];
    }
    free(col);
    return 0;
}

void overlay_color(int label, uint8_t rgb[3])
{
    static const uint8_t table[12][3] = {
        {230, 25, 75},  {60, 180, 75},  {0, 130, 200}, {255, 225, 25}, {245, 130, 48},  {145, 30, 180},
        {70, 240, 240}, {240, 50, 230}, {210, 245, 60}, {250, 190, 212}, {0, 128, 128}, {170, 110, 40},
    };
    memcpy(rgb, table[(label - 1 + 1200) % 12], 3);
}

void overlay_draw_masks(kc_image *img, const uint8_t *labels, float alpha)
{
    int W = img->w, H = img->h;
    int a = (int)(alpha * 256.0f + 0.5f);
    if (a < 0) a = 0;
    if (a > 256) a = 256;
    uint8_t colors[256][3];
    for (int l = 1; l < 256; l++) overlay_color(l, colors[l]);
    /* contour pixels: a label > 0 with a 4-neighbour of another label (the image border counts) */
    uint8_t *edge = kc_calloc((size_t)W * H, 1);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            uint8_t l = labels[(size_t)y * W + x];
            if (!l) continue;
            int e = (x > 0 && labels[(size_t)y * W + x - 1] != l) || (x + 1 < W && labels[(size_t)y * W + x + 1] != l) ||
                    (y > 0 && labels[(size_t)(y - 1) * W + x] != l) || (y + 1 < H && labels[(size_t)(y + 1) * W + x] != l);
            edge[(size_t)y * W + x] = (uint8_t)e;
        }
    int r = (W < H ? W : H) / 240; /* extra thickness, inward only */
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            size_t i = (size_t)y * W + x;
            uint8_t l = labels[i];
            if (!l) continue;
            uint8_t *px = img->rgb + 3 * i;
            int on_edge = edge[i] == 1;
            for (int dy = -r; dy <= r && !on_edge; dy++)
                for (int dx = -r; dx <= r && !on_edge; dx++) {
                    int yy = y + dy, xx = x + dx;
                    if (yy < 0 || yy >= H || xx < 0 || xx >= W) continue;
                    size_t j = (size_t)yy * W + xx;
                    on_edge = edge[j] == 1 && labels[j] == l;
                }
            for (int c = 0; c < 3; c++)
                px[c] = on_edge ? colors[l][c] : (uint8_t)((px[c] * (256 - a) + colors[l][c] * a + 128) >> 8);
        }
    free(edge);
}

/* 5x7 glyphs, one byte per row, bit 4 = leftmost column. */
static const uint8_t GLYPH_DIGITS[10][7] = {
    {0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E}, {0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E},
    {0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F}, {0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E},
    {0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02}, {0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E},
    {0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E}, {0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08},
    {0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E}, {0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C},
};
static const uint8_t GLYPH_LETTERS[26][7] = {
    {0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11}, {0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E}, /* A B */
    {0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E}, {0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C}, /* C D */
    {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F}, {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10}, /* E F */
    {0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F}, {0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11}, /* G H */
    {0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E}, {0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C}, /* I J */
    {0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11}, {0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F}, /* K L */
    {0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11}, {0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11}, /* M N */
    {0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E}, {0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10}, /* O P */
    {0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D}, {0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11}, /* Q R */
    {0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E}, {0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04}, /* S T */
    {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E}, {0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04}, /* U V */
    {0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A}, {0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11}, /* W X */
    {0x11, 0x11, 0x11, 0x0A, 0x04, 0x04, 0x04}, {0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F}, /* Y Z */
};
static const struct {
    char c;
    uint8_t rows[7];
} GLYPH_PUNCT[] = {
    {' ', {0, 0, 0, 0, 0, 0, 0}},
    {'.', {0, 0, 0, 0, 0, 0x0C, 0x0C}},
    {'-', {0, 0, 0, 0x1F, 0, 0, 0}},
    {'_', {0, 0, 0, 0, 0, 0, 0x1F}},
    {'/', {0x01, 0x01, 0x02, 0x04, 0x08, 0x10, 0x10}},
    {':', {0, 0x0C, 0x0C, 0, 0x0C, 0x0C, 0}},
    {'(', {0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02}},
    {')', {0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08}},
    {'=', {0, 0, 0x1F, 0, 0x1F, 0, 0}},
    {',', {0, 0, 0, 0, 0x0C, 0x04, 0x08}},
    {'+', {0, 0x04, 0x04, 0x1F, 0x04, 0x04, 0}},
    {'?', {0x0E, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04}},
};

const uint8_t *overlay_glyph(char c)
{
    if (c >= '0' && c <= '9') return GLYPH_DIGITS[c - '0'];
    if (c >= 'a' && c <= 'z') return GLYPH_LETTERS[c - 'a'];
    if (c >= 'A' && c <= 'Z') return GLYPH_LETTERS[c - 'A'];
    int n = (int)(sizeof GLYPH_PUNCT / sizeof *GLYPH_PUNCT);
    for (int i = 0; i < n; i++)
        if (GLYPH_PUNCT[i].c == c) return GLYPH_PUNCT[i].rows;
    return GLYPH_PUNCT[n - 1].rows; /* '?' */
}

void overlay_draw_text(kc_image *img, const char *const *lines, int n)
{
    int W = img->w, H = img->h;
    int s = W / 320 > 1 ? W / 320 : 1; /* pixels per font dot */
    int adv = 6 * s, line_h = 9 * s, pad = 2 * s;
    int longest = 0;
    for (int i = 0; i < n; i++) {
        int len = (int)strlen(lines[i]);
        if (len > longest) longest = len;
    }
    int bw = 2 * pad + longest * adv, bh = 2 * pad + n * line_h;
    if (bw > W) bw = W;
    if (bh > H) bh = H;
    for (int y = 0; y < bh; y++) /* the dark band: 30 % of the picture shows through */
        for (int x = 0; x < bw; x++) {
            uint8_t *px = img->rgb + 3 * ((size_t)y * W + x);
            for (int c = 0; c < 3; c++) px[c] = (uint8_t)(px[c] * 3 / 10);
        }
    for (int i = 0; i < n; i++) {
        int y0 = pad + i * line_h;
        for (int k = 0; lines[i][k]; k++) {
            int x0 = pad + k * adv;
            if (x0 + 5 * s > W) break;
            const uint8_t *g = overlay_glyph(lines[i][k]);
            for (int gy = 0; gy < 7; gy++)
                for (int gx = 0; gx < 5; gx++) {
                    if (!(g[gy] & (0x10 >> gx))) continue;
                    for (int dy = 0; dy < s; dy++)
                        for (int dx = 0; dx < s; dx++) {
                            int x = x0 + gx * s + dx, y = y0 + gy * s + dy;
                            if (x >= W || y >= H) continue;
                            memset(img->rgb + 3 * ((size_t)y * W + x), 255, 3);
                        }
                }
        }
    }
}

int overlay_cache_labels(const cache_reader *r, const char *setting, const char *id, int W, int H, uint8_t **labels)
{
    int ix = cache_index_find(&r->index, id);
    if (ix < 0) return kc_fail("%s: no image %s in its index", r->path, id);
    if (r->index.size[2 * ix] != H || r->index.size[2 * ix + 1] != W)
        return kc_fail("%s: image %s was %dx%d when decoded, the dataset's is %dx%d", r->path, id,
                       r->index.size[2 * ix + 1], r->index.size[2 * ix], W, H);
    const char *pol_name = cache_attr(r, "policy"), *ps = cache_attr(r, "patch");
    kc_policy pol;
    if (!pol_name) return kc_fail("%s: no 'policy' attribute (cannot map the grid back to pixels)", r->path);
    if (policy_parse(pol_name, &pol) < 0) return kc_fail_prefix("%s", r->path);
    int patch = ps ? atoi(ps) : 0;
    if (pol == POLICY_NATIVE16 && patch <= 0) return kc_fail("%s: native16 masks without a 'patch' attribute", r->path);
    char *dset = kc_strfmt("/masks/%s/%s", setting, id);
    uint8_t *grid = NULL;
    int gh, gw, rc = 0;
    if (!cache_has(r, dset)) rc = kc_fail("%s: no mask %s (was setting %s decoded?)", r->path, dset, setting);
    else if (cache_masks_are_stacks(r)) { /* an attention-mass stack (heads, gh, gw): the union of the heads */
        int heads;
        if (cache_read_u8_stack(r, dset, &grid, &heads, &gh, &gw) < 0) rc = -1;
        else
            for (int h = 1; h < heads; h++)
                for (size_t k = 0; k < (size_t)gh * gw; k++) grid[k] |= grid[(size_t)h * gh * gw + k];
    } else if (cache_read_u8(r, dset, &grid, &gh, &gw) < 0) rc = -1;
    if (rc == 0 && cache_attr(r, "refine")) { /* kc-refine's pixel masks, at the image's size */
        if (gh != H || gw != W) {
            rc = kc_fail("%s: %s is %dx%d, but its image is %dx%d (a refined mask is at the image's size)", r->path,
                         dset, gw, gh, W, H);
        } else {
            *labels = grid;
            grid = NULL;
        }
    } else if (rc == 0 && grid_check_policy(dset, pol, patch, W, H, gh, gw) < 0) {
        rc = kc_fail_prefix("%s", r->path); /* (a grid of another patch or policy rule maps to the wrong pixels) */
    } else if (rc == 0) {
        *labels = kc_malloc((size_t)W * H);
        if (overlay_grid_to_pixels(grid, gh, gw, pol, patch, W, H, *labels) < 0) {
            rc = kc_fail_prefix("%s: %s", r->path, dset);
            free(*labels);
            *labels = NULL;
        }
    }
    free(grid);
    free(dset);
    return rc;
}
