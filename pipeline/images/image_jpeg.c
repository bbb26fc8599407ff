/* pipeline/images/image_jpeg.c — see image_jpeg.h. */
#include "pipeline/images/image_jpeg.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <png.h>

#include "pipeline/kc.h"

typedef struct jpeg_err {
    struct jpeg_error_mgr mgr;
    jmp_buf jump;
    char msg[JMSG_LENGTH_MAX];
} jpeg_err;

static void on_jpeg_error(j_common_ptr c)
{
    jpeg_err *e = (jpeg_err *)c->err;
    c->err->format_message(c, e->msg);
    longjmp(e->jump, 1);
}

int image_encode_jpeg(const kc_image *img, int quality, const char *what, uint8_t **data, size_t *size)
{
    *data = NULL;
    *size = 0;
    if (img->w <= 0 || img->h <= 0 || !img->rgb)
        return kc_fail("%s: cannot write an empty image (%dx%d)", what, img->w, img->h);
    if (quality < 1 || quality > 100) return kc_fail("%s: JPEG quality %d is not in 1..100", what, quality);
    struct jpeg_compress_struct c;
    jpeg_err err;
    unsigned char *buf = NULL;
    unsigned long len = 0;
    c.err = jpeg_std_error(&err.mgr);
    err.mgr.error_exit = on_jpeg_error;
    if (setjmp(err.jump)) {
        jpeg_destroy_compress(&c);
        free(buf);
        return kc_fail("%s: cannot encode JPEG: %s", what, err.msg);
    }
    jpeg_create_compress(&c);
    jpeg_mem_dest(&c, &buf, &len);
    c.image_width = (JDIMENSION)img->w;
    c.image_height = (JDIMENSION)img->h;
    c.input_components = 3;
    c.in_color_space = JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, quality, TRUE);
    c.optimize_coding = TRUE;
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < c.image_height) {
        JSAMPROW row = (JSAMPROW)(img->rgb + (size_t)c.next_scanline * img->w * 3);
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    *data = buf;
    *size = len;
    return 0;
}

int image_write_jpeg(const char *path, const kc_image *img, int quality)
{
    uint8_t *data;
    size_t size;
    KC_TRY(image_encode_jpeg(img, quality, path, &data, &size));
    int rc = kc_write_file_atomic(path, data, size);
    free(data);
    return rc;
}

int image_shrink_area(const kc_image *src, int dw, int dh, kc_image *dst)
{
    dst->w = dst->h = 0;
    dst->rgb = NULL;
    if (dw < 1 || dh < 1 || dw > src->w || dh > src->h)
        return kc_fail("cannot shrink a %dx%d picture to %dx%d", src->w, src->h, dw, dh);
    const int sw = src->w, sh = src->h;
    dst->w = dw;
    dst->h = dh;
    dst->rgb = kc_malloc((size_t)dw * dh * 3);
    /* source columns [x0[x], x0[x + 1]) fall in output column x (likewise rows) */
    int *x0 = kc_malloc(sizeof(int) * (size_t)(dw + 1)), *y0 = kc_malloc(sizeof(int) * (size_t)(dh + 1));
    for (int x = 0; x <= dw; x++) x0[x] = (int)(((int64_t)x * sw + dw / 2) / dw);
    for (int y = 0; y <= dh; y++) y0[y] = (int)(((int64_t)y * sh + dh / 2) / dh);
    for (int x = 0; x < dw; x++)
        if (x0[x + 1] <= x0[x]) x0[x + 1] = x0[x] + 1 <= sw ? x0[x] + 1 : sw;
    for (int y = 0; y < dh; y++)
        if (y0[y + 1] <= y0[y]) y0[y + 1] = y0[y] + 1 <= sh ? y0[y] + 1 : sh;
    for (int y = 0; y < dh; y++)
        for (int x = 0; x < dw; x++) {
            uint32_t sum[3] = {0, 0, 0}, n = 0;
            for (int sy = y0[y]; sy < y0[y + 1]; sy++)
                for (int sx = x0[x]; sx < x0[x + 1]; sx++) {
                    const uint8_t *p = src->rgb + ((size_t)sy * sw + sx) * 3;
                    sum[0] += p[0];
                    sum[1] += p[1];
                    sum[2] += p[2];
                    n++;
                }
            uint8_t *q = dst->rgb + ((size_t)y * dw + x) * 3;
            for (int c = 0; c < 3; c++) q[c] = (uint8_t)(n ? (sum[c] + n / 2) / n : 0);
        }
    free(x0);
    free(y0);
    return 0;
}

typedef struct png_mem {
    uint8_t *data;
    size_t size, cap;
    jmp_buf jump;
    char msg[200];
} png_mem;

static void png_mem_write(png_structp png, png_bytep bytes, png_size_t n)
{
    png_mem *m = png_get_io_ptr(png);
    if (m->size + n > m->cap) {
        m->cap = 2 * (m->size + n);
        m->data = kc_realloc(m->data, m->cap);
    }
    memcpy(m->data + m->size, bytes, n);
    m->size += n;
}

static void png_mem_flush(png_structp png) { (void)png; }

static void png_mem_error(png_structp png, png_const_charp msg)
{
    png_mem *m = png_get_error_ptr(png);
    snprintf(m->msg, sizeof m->msg, "%s", msg);
    longjmp(m->jump, 1);
}

static void png_mem_warn(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

/* The palette of rgba's colours in order of first appearance (at most 256: *n, or 0 when there
 * are more) and every pixel's index into it.  pal: (256) RGBA words as stored; index: (n_px). */
static int layer_palette(const uint8_t *rgba, size_t n_px, uint32_t *pal, uint8_t *index)
{
    enum { SLOTS = 1024 }; /* open addressing; a quarter full at most */
    int16_t slot[SLOTS];
    memset(slot, -1, sizeof slot);
    int n = 0, last = -1;
    uint32_t last_v = 0;
    for (size_t p = 0; p < n_px; p++) {
        uint32_t v;
        memcpy(&v, rgba + 4 * p, 4);
        if (last < 0 || v != last_v) {
            uint32_t h = (v * 2654435761u) >> 22;
            while (slot[h] >= 0 && pal[slot[h]] != v) h = (h + 1) & (SLOTS - 1);
            if (slot[h] < 0) {
                if (n == 256) return 0;
                pal[n] = v;
                slot[h] = (int16_t)n++;
            }
            last = slot[h];
            last_v = v;
        }
        index[p] = (uint8_t)last;
    }
    return n;
}

/* A layer as a palette PNG (bit depth 1, 2, 4 or 8, the alpha in tRNS, no row filter) when it
 * has at most 256 colours, else as RGBA (adaptive filters); deflate level 9 either way.  The
 * decoded RGBA is the input's, exactly: a layer is transparent, its labels' tints and their
 * contours (a handful of colours at full size, a few dozen shades at thumbnail size), which a
 * palette holds in 1-4 bits a pixel instead of 32 (measured on a VOC photo: 2.4 KB -> 0.9 KB at
 * full size, 1.8 KB -> 0.8 KB as a thumbnail). */
static int encode_layer_png(int w, int h, const uint8_t *rgba, png_mem *m)
{
    const size_t n_px = (size_t)w * h;
    uint32_t pal[256];
    uint8_t *index = kc_malloc(n_px), *row = kc_malloc((size_t)w * 4);
    int n = layer_palette(rgba, n_px, pal, index);
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, m, png_mem_error, png_mem_warn);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info || setjmp(m->jump)) {
        if (png) png_destroy_write_struct(&png, info ? &info : NULL);
        free(index);
        free(row);
        if (!m->msg[0]) snprintf(m->msg, sizeof m->msg, "out of memory");
        return -1;
    }
    png_set_write_fn(png, m, png_mem_write, png_mem_flush);
    png_set_compression_level(png, 9);
    int depth = n <= 2 ? 1 : n <= 4 ? 2 : n <= 16 ? 4 : 8;
    if (n) {
        png_color colors[256];
        png_byte alpha[256];
        int n_alpha = 0;
        for (int k = 0; k < n; k++) {
            const uint8_t *c = (const uint8_t *)&pal[k];
            colors[k].red = c[0];
            colors[k].green = c[1];
            colors[k].blue = c[2];
            alpha[k] = c[3];
            if (c[3] != 255) n_alpha = k + 1;
        }
        png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, depth, PNG_COLOR_TYPE_PALETTE, PNG_INTERLACE_NONE,
                     PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
        png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
        png_set_PLTE(png, info, colors, n);
        if (n_alpha) png_set_tRNS(png, info, alpha, n_alpha, NULL);
    } else {
        png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8, PNG_COLOR_TYPE_RGBA, PNG_INTERLACE_NONE,
                     PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    }
    png_write_info(png, info);
    for (int y = 0; y < h; y++) {
        if (n) {
            /* the indices packed depth bits each, leftmost pixel in the high bits */
            const uint8_t *src = index + (size_t)y * w;
            memset(row, 0, (size_t)w);
            for (int x = 0; x < w; x++)
                row[(size_t)x * depth / 8] |= (uint8_t)(src[x] << (8 - depth - (x * depth) % 8));
        } else
            memcpy(row, rgba + (size_t)y * w * 4, (size_t)w * 4);
        png_write_row(png, row);
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(index);
    free(row);
    return 0;
}

int image_write_png_rgba(const char *path, int w, int h, const uint8_t *rgba)
{
    if (w <= 0 || h <= 0) return kc_fail("%s: cannot write an empty image (%dx%d)", path, w, h);
    png_mem m;
    memset(&m, 0, sizeof m);
    if (encode_layer_png(w, h, rgba, &m) < 0) {
        free(m.data);
        return kc_fail("%s: cannot encode PNG: %s", path, m.msg);
    }
    int rc = kc_write_file_atomic(path, m.data, m.size);
    free(m.data);
    return rc;
}

void image_layer_from_pair(const kc_image *on_black, const kc_image *on_white, uint8_t *rgba)
{
    const size_t n = (size_t)on_black->w * on_black->h;
    for (size_t p = 0; p < n; p++) {
        const uint8_t *b = on_black->rgb + 3 * p, *w = on_white->rgb + 3 * p;
        int through = ((int)w[0] - b[0] + (int)w[1] - b[1] + (int)w[2] - b[2] + 1) / 3; /* (1 - a) 255 */
        int a = 255 - (through < 0 ? 0 : through > 255 ? 255 : through);
        uint8_t *q = rgba + 4 * p;
        for (int c = 0; c < 3; c++) {
            int v = a ? (b[c] * 255 + a / 2) / a : 0;
            q[c] = (uint8_t)(v > 255 ? 255 : v);
        }
        q[3] = (uint8_t)a;
    }
}
