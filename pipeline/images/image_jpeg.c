/* pipeline/images/image_jpeg.c — see image_jpeg.h. */
#include "pipeline/images/image_jpeg.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

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
