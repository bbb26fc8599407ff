/* pipeline/images/image.c — JPEG and PNG decoding to 8-bit RGB as Pillow 9.4's convert("RGB") does,
 * palette/gray index PNGs, and deterministic atomic PNG writing.
 *
 * What Pillow 9.4 does, and therefore what this file does (checked by tests/test_image.c against
 * tests/ref/image_refs.py):
 *   JPEG  libjpeg with its defaults (JDCT_ISLOW, fancy upsampling).  1 component -> "L" (gray
 *         replicated), 3 -> RGB (libjpeg's colour conversion), 4 -> "CMYK" read with rawmode
 *         "CMYK;I": Pillow ALWAYS assumes Adobe's inverted polarity, whatever the APP14 marker
 *         says (the marker only steers libjpeg's CMYK/YCCK choice).  So c = 255 - stored, then
 *         cmyk2rgb:  nk = 255 - k;  R = nk - MULDIV255(c, nk)  with
 *         MULDIV255(a, b) = t = a*b + 128, ((t >> 8) + t) >> 8.
 *         A premature end of data (libjpeg only warns and pads with gray) is an error here.
 *   PNG   gray 1/2/4-bit scaled to 0..255 (x255, x85, x17); gray 16-bit becomes Pillow's "I" mode
 *         and convert("RGB") CLIPS it to 255 (it does not scale); gray+alpha and RGB(A) 16-bit
 *         keep the high byte; alpha is dropped, never composited; palette entries beyond the PLTE
 *         length read as Pillow's default gray ramp (i, i, i); tRNS does not change the colours.
 */
#include "pipeline/images/image.h"

#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* after stdio.h: */
#include <jerror.h>
#include <jpeglib.h>
#include <png.h>

#include "pipeline/kc.h"
#include "pipeline/sha256.h"

#define IMAGE_MAX_PIXELS (1ull << 28)

void image_free(kc_image *img)
{
    if (!img) return;
    free(img->rgb);
    img->rgb = NULL;
    img->w = img->h = 0;
}

static int check_dims(const char *path, long long w, long long h)
{
    if (w <= 0 || h <= 0) return kc_fail("%s: invalid image size %lldx%lld", path, w, h);
    if ((unsigned long long)w * (unsigned long long)h > IMAGE_MAX_PIXELS)
        return kc_fail("%s: image too large (%lldx%lld pixels, limit 2^28)", path, w, h);
    return 0;
}

enum { FMT_UNKNOWN, FMT_JPEG, FMT_PNG };

static int sniff(const uint8_t *d, size_t n)
{
    static const uint8_t png_sig[8] = {0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a};
    if (n >= 3 && d[0] == 0xff && d[1] == 0xd8 && d[2] == 0xff) return FMT_JPEG;
    if (n >= 8 && memcmp(d, png_sig, 8) == 0) return FMT_PNG;
    return FMT_UNKNOWN;
}

/* ---- JPEG ----------------------------------------------------------------------------------- */

typedef struct jpeg_err {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    char msg[JMSG_LENGTH_MAX];
} jpeg_err;

static void jpeg_error_exit_cb(j_common_ptr cinfo)
{
    jpeg_err *e = (jpeg_err *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, e->msg);
    longjmp(e->jump, 1);
}

/* Warnings: a premature end of the data (the file is truncated, libjpeg would pad the rest with
 * gray) is fatal; the other warnings (extraneous bytes, ...) are ignored as Pillow does. */
static void jpeg_emit_cb(j_common_ptr cinfo, int level)
{
    jpeg_err *e = (jpeg_err *)cinfo->err;
    if (level >= 0) return;
    int code = cinfo->err->msg_code;
    if (code == JWRN_JPEG_EOF || code == JWRN_HIT_MARKER) {
        (*cinfo->err->format_message)(cinfo, e->msg);
        if (code == JWRN_JPEG_EOF) snprintf(e->msg, sizeof e->msg, "truncated JPEG (premature end of data)");
        longjmp(e->jump, 1);
    }
}

static void jpeg_setup_err(struct jpeg_decompress_struct *cinfo, jpeg_err *err)
{
    cinfo->err = jpeg_std_error(&err->pub);
    err->pub.error_exit = jpeg_error_exit_cb;
    err->pub.emit_message = jpeg_emit_cb;
    err->msg[0] = 0;
}

static inline uint8_t muldiv255(int a, int b)
{
    int t = a * b + 128;
    return (uint8_t)(((t >> 8) + t) >> 8);
}

static int load_jpeg(const char *path, const uint8_t *data, size_t size, kc_image *img)
{
    struct jpeg_decompress_struct cinfo;
    jpeg_err err;
    uint8_t *volatile out = NULL;
    uint8_t *volatile row = NULL;
    memset(&cinfo, 0, sizeof cinfo);
    jpeg_setup_err(&cinfo, &err);
    if (setjmp(err.jump)) {
        jpeg_destroy_decompress(&cinfo);
        free(out);
        free(row);
        return kc_fail("%s: bad JPEG: %s", path, err.msg);
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);
    int nc = cinfo.num_components;
    if (nc != 1 && nc != 3 && nc != 4) {
        jpeg_destroy_decompress(&cinfo);
        return kc_fail("%s: JPEG with %d components is not supported", path, nc);
    }
    if (check_dims(path, cinfo.image_width, cinfo.image_height) < 0) {
        jpeg_destroy_decompress(&cinfo);
        return -1;
    }
    /* What Pillow asks libjpeg for: gray, RGB or CMYK; everything else at libjpeg's defaults. */
    cinfo.out_color_space = nc == 1 ? JCS_GRAYSCALE : nc == 3 ? JCS_RGB : JCS_CMYK;
    jpeg_start_decompress(&cinfo);
    int w = (int)cinfo.output_width, h = (int)cinfo.output_height, oc = cinfo.output_components;
    out = kc_malloc((size_t)w * h * 3);
    row = kc_malloc((size_t)w * oc);
    while ((int)cinfo.output_scanline < h) {
        int y = (int)cinfo.output_scanline;
        JSAMPROW rp = row;
        jpeg_read_scanlines(&cinfo, &rp, 1);
        uint8_t *o = out + (size_t)y * w * 3;
        if (oc == 1) {
            for (int x = 0; x < w; x++) o[3 * x] = o[3 * x + 1] = o[3 * x + 2] = row[x];
        } else if (oc == 3) {
            memcpy(o, row, (size_t)w * 3);
        } else {
            for (int x = 0; x < w; x++) {
                const uint8_t *s = row + 4 * x;
                int nk = s[3]; /* 255 - (255 - stored k) */
                for (int c = 0; c < 3; c++) {
                    int v = nk - muldiv255(255 - s[c], nk);
                    o[3 * x + c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
                }
            }
        }
    }
    jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    free(row);
    img->w = w;
    img->h = h;
    img->rgb = out;
    return 0;
}

/* ---- PNG ------------------------------------------------------------------------------------ */

typedef struct png_ctx {
    const char *path;
    const uint8_t *data;
    size_t size, pos;
    char msg[256];
    jmp_buf jump;
} png_ctx;

static void png_error_cb(png_structp png, png_const_charp msg)
{
    png_ctx *c = png_get_error_ptr(png);
    snprintf(c->msg, sizeof c->msg, "%s", msg);
    longjmp(c->jump, 1);
}

static void png_warn_cb(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

static void png_read_cb(png_structp png, png_bytep out, size_t n)
{
    png_ctx *c = png_get_io_ptr(png);
    if (n > c->size - c->pos) png_error(png, "truncated file (premature end of data)");
    memcpy(out, c->data + c->pos, n);
    c->pos += n;
}

/* Decodes rows without colour transforms (only interlace handling and unpacking of sub-byte
 * samples to one byte each).  rows: (h, rowbytes). */
typedef struct png_raw {
    int w, h, bit_depth, color_type, channels;
    size_t rowbytes;
    uint8_t *pix;
    png_color palette[256];
    int n_palette;
} png_raw;

static int png_decode_raw(const char *path, const uint8_t *data, size_t size, png_raw *r, int header_only)
{
    png_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.path = path;
    ctx.data = data;
    ctx.size = size;
    memset(r, 0, sizeof *r);
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &ctx, png_error_cb, png_warn_cb);
    if (!png) return kc_fail("%s: cannot create PNG reader", path);
    png_infop info = png_create_info_struct(png);
    uint8_t *volatile pix = NULL;
    png_bytep *volatile rows = NULL;
    if (!info || setjmp(ctx.jump)) {
        png_destroy_read_struct(&png, info ? &info : NULL, NULL);
        free(pix);
        free(rows);
        return kc_fail("%s: bad PNG: %s", path, ctx.msg[0] ? ctx.msg : "cannot decode");
    }
    png_set_read_fn(png, &ctx, png_read_cb);
    png_set_crc_action(png, PNG_CRC_ERROR_QUIT, PNG_CRC_ERROR_QUIT);
    png_set_user_limits(png, 0x7fffffff, 0x7fffffff);
    png_read_info(png, info);
    png_uint_32 w, h;
    int bd, ct, il;
    png_get_IHDR(png, info, &w, &h, &bd, &ct, &il, NULL, NULL);
    r->w = (int)w;
    r->h = (int)h;
    r->bit_depth = bd;
    r->color_type = ct;
    if (check_dims(path, (long long)w, (long long)h) < 0) {
        png_destroy_read_struct(&png, &info, NULL);
        return -1;
    }
    if (ct == PNG_COLOR_TYPE_PALETTE) {
        png_colorp pal = NULL;
        int n = 0;
        if (png_get_PLTE(png, info, &pal, &n) & PNG_INFO_PLTE) {
            r->n_palette = n > 256 ? 256 : n;
            memcpy(r->palette, pal, (size_t)r->n_palette * sizeof *pal);
        }
    }
    if (header_only) {
        png_destroy_read_struct(&png, &info, NULL);
        return 0;
    }
    if (bd < 8) png_set_packing(png);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    r->channels = png_get_channels(png, info);
    r->rowbytes = png_get_rowbytes(png, info);
    pix = kc_malloc(r->rowbytes * h);
    rows = kc_malloc(sizeof(png_bytep) * h);
    for (png_uint_32 y = 0; y < h; y++) rows[y] = pix + y * r->rowbytes;
    png_read_image(png, rows);
    png_read_end(png, NULL);
    png_destroy_read_struct(&png, &info, NULL);
    free(rows);
    r->pix = pix;
    return 0;
}

static int load_png(const char *path, const uint8_t *data, size_t size, kc_image *img)
{
    png_raw r;
    KC_TRY(png_decode_raw(path, data, size, &r, 0));
    int w = r.w, h = r.h, bd = r.bit_depth;
    uint8_t *out = kc_malloc((size_t)w * h * 3);
    /* Pillow's palette: the PLTE entries, then its default gray ramp. */
    uint8_t pal[768];
    for (int i = 0; i < 256; i++) pal[3 * i] = pal[3 * i + 1] = pal[3 * i + 2] = (uint8_t)i;
    for (int i = 0; i < r.n_palette; i++) {
        pal[3 * i] = r.palette[i].red;
        pal[3 * i + 1] = r.palette[i].green;
        pal[3 * i + 2] = r.palette[i].blue;
    }
    int gray_scale = bd == 1 ? 255 : bd == 2 ? 85 : bd == 4 ? 17 : 1;
    int bytes = bd == 16 ? 2 : 1; /* per sample */
    for (int y = 0; y < h; y++) {
        const uint8_t *s = r.pix + (size_t)y * r.rowbytes;
        uint8_t *o = out + (size_t)y * w * 3;
        for (int x = 0; x < w; x++, o += 3) {
            const uint8_t *p = s + (size_t)x * r.channels * bytes;
            switch (r.color_type) {
            case PNG_COLOR_TYPE_GRAY:
                if (bd == 16) {
                    int v = (p[0] << 8) | p[1];
                    o[0] = o[1] = o[2] = (uint8_t)(v > 255 ? 255 : v);
                } else {
                    o[0] = o[1] = o[2] = (uint8_t)(p[0] * gray_scale);
                }
                break;
            case PNG_COLOR_TYPE_GRAY_ALPHA: o[0] = o[1] = o[2] = p[0]; break;
            case PNG_COLOR_TYPE_PALETTE: memcpy(o, pal + 3 * p[0], 3); break;
            default: /* RGB, RGBA: the high byte of 16-bit samples */
                o[0] = p[0];
                o[1] = p[bytes];
                o[2] = p[2 * bytes];
                break;
            }
        }
    }
    free(r.pix);
    img->w = w;
    img->h = h;
    img->rgb = out;
    return 0;
}

/* ---- public --------------------------------------------------------------------------------- */

static int read_nonempty(const char *path, uint8_t **data, size_t *size)
{
    KC_TRY(kc_read_file(path, data, size));
    if (*size == 0) {
        free(*data);
        *data = NULL;
        return kc_fail("%s: empty file (0 bytes)", path);
    }
    return 0;
}

int image_load_rgb(const char *path, kc_image *img) { return image_load_rgb_sha(path, img, NULL); }

int image_load_rgb_sha(const char *path, kc_image *img, uint8_t sha[32])
{
    uint8_t *data;
    size_t size;
    memset(img, 0, sizeof *img);
    KC_TRY(read_nonempty(path, &data, &size));
    if (sha) {
        kc_sha256 c;
        kc_sha256_init(&c);
        kc_sha256_update(&c, data, size);
        kc_sha256_final(&c, sha);
    }
    int rc;
    switch (sniff(data, size)) {
    case FMT_JPEG: rc = load_jpeg(path, data, size, img); break;
    case FMT_PNG: rc = load_png(path, data, size, img); break;
    default: rc = kc_fail("%s: not a JPEG or PNG file", path); break;
    }
    free(data);
    return rc;
}

/* The orientation tag (0x0112, a SHORT) of IFD0 of an EXIF block's TIFF data; 1 when absent. */
static int tiff_orientation(const uint8_t *t, size_t n)
{
    if (n < 8 || !((t[0] == 'I' && t[1] == 'I') || (t[0] == 'M' && t[1] == 'M'))) return 1;
    const int le = t[0] == 'I';
#define U16(o) (le ? (unsigned)t[o] | (unsigned)t[(o) + 1] << 8 : (unsigned)t[o] << 8 | (unsigned)t[(o) + 1])
    const size_t ifd = le ? (size_t)U16(4) | (size_t)U16(6) << 16 : (size_t)U16(4) << 16 | (size_t)U16(6);
    if (ifd > n - 2) return 1;
    const unsigned count = U16(ifd);
    for (unsigned i = 0; i < count && ifd + 2 + 12 * (size_t)(i + 1) <= n; i++) {
        const size_t e = ifd + 2 + 12 * (size_t)i;
        if (U16(e) == 0x0112) return U16(e + 2) == 3 ? (int)U16(e + 8) : 1;
    }
#undef U16
    return 1;
}

/* The EXIF orientation of a JPEG (its APP1 "Exif" segment before the scan); 1 when it has none. */
static int jpeg_orientation(const uint8_t *d, size_t n)
{
    size_t p = 2;
    while (p + 4 <= n && d[p] == 0xFF) {
        const int m = d[p + 1];
        if (m == 0xFF) {
            p++;
            continue;
        }
        if (m == 0xDA || m == 0xD9) break;
        const size_t len = (size_t)d[p + 2] << 8 | d[p + 3];
        if (len < 2 || p + 2 + len > n) break;
        if (m == 0xE1 && len >= 2 + 6 + 8 && !memcmp(d + p + 4, "Exif\0\0", 6))
            return tiff_orientation(d + p + 10, len - 8);
        p += 2 + len;
    }
    return 1;
}

int image_size(const char *path, int *w, int *h) { return image_header(path, w, h, NULL); }

int image_header(const char *path, int *w, int *h, int *orientation)
{
    /* Enough of the file for any header: read it whole only when small; JPEG headers can sit
     * after large APPn segments, so fall back to the whole file. */
    uint8_t *data;
    size_t size;
    KC_TRY(read_nonempty(path, &data, &size));
    int rc = 0;
    int fmt = sniff(data, size);
    if (fmt == FMT_JPEG) {
        struct jpeg_decompress_struct cinfo;
        jpeg_err err;
        memset(&cinfo, 0, sizeof cinfo);
        jpeg_setup_err(&cinfo, &err);
        if (setjmp(err.jump)) {
            jpeg_destroy_decompress(&cinfo);
            free(data);
            return kc_fail("%s: bad JPEG: %s", path, err.msg);
        }
        jpeg_create_decompress(&cinfo);
        jpeg_mem_src(&cinfo, data, (unsigned long)size);
        jpeg_read_header(&cinfo, TRUE);
        *w = (int)cinfo.image_width;
        *h = (int)cinfo.image_height;
        jpeg_destroy_decompress(&cinfo);
        rc = check_dims(path, *w, *h);
        if (orientation) *orientation = jpeg_orientation(data, size);
    } else if (fmt == FMT_PNG) {
        if (orientation) *orientation = 1;
        png_raw r;
        rc = png_decode_raw(path, data, size, &r, 1);
        if (rc == 0) {
            *w = r.w;
            *h = r.h;
        }
    } else {
        rc = kc_fail("%s: not a JPEG or PNG file", path);
    }
    free(data);
    return rc;
}

int image_read_png_index(const char *path, int *w, int *h, uint8_t **index)
{
    uint8_t *data;
    size_t size;
    *index = NULL;
    KC_TRY(read_nonempty(path, &data, &size));
    if (sniff(data, size) != FMT_PNG) {
        free(data);
        return kc_fail("%s: not a PNG file", path);
    }
    png_raw r;
    int rc = png_decode_raw(path, data, size, &r, 0);
    free(data);
    KC_TRY(rc);
    int ok = (r.color_type == PNG_COLOR_TYPE_PALETTE && r.bit_depth <= 8) ||
             (r.color_type == PNG_COLOR_TYPE_GRAY && r.bit_depth == 8);
    if (!ok) {
        free(r.pix);
        return kc_fail("%s: expected an 8-bit palette or gray PNG (label map), found color type %d, "
                       "%d-bit", path, r.color_type, r.bit_depth);
    }
    uint8_t *out = kc_malloc((size_t)r.w * r.h);
    for (int y = 0; y < r.h; y++) memcpy(out + (size_t)y * r.w, r.pix + (size_t)y * r.rowbytes, (size_t)r.w);
    free(r.pix);
    *w = r.w;
    *h = r.h;
    *index = out;
    return 0;
}

/* ---- writing -------------------------------------------------------------------------------- */

typedef struct png_buf {
    uint8_t *data;
    size_t size, cap;
    char msg[256];
    jmp_buf jump;
} png_buf;

static void png_write_cb(png_structp png, png_bytep d, size_t n)
{
    png_buf *b = png_get_io_ptr(png);
    if (b->size + n > b->cap) {
        b->cap = (b->size + n) * 2 + 4096;
        b->data = kc_realloc(b->data, b->cap);
    }
    memcpy(b->data + b->size, d, n);
    b->size += n;
}

static void png_flush_cb(png_structp png) { (void)png; }

static void png_werror_cb(png_structp png, png_const_charp msg)
{
    png_buf *b = png_get_error_ptr(png);
    snprintf(b->msg, sizeof b->msg, "%s", msg);
    longjmp(b->jump, 1);
}

/* Encodes rows (h rows of rowbytes) to a PNG in memory, then writes it atomically. */
static int write_png(const char *path, int w, int h, int color_type, const uint8_t *pix, size_t rowbytes,
                     const uint8_t *palette)
{
    if (w <= 0 || h <= 0) return kc_fail("%s: cannot write an empty image (%dx%d)", path, w, h);
    png_buf b;
    memset(&b, 0, sizeof b);
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &b, png_werror_cb, png_warn_cb);
    if (!png) return kc_fail("%s: cannot create PNG writer", path);
    png_infop info = png_create_info_struct(png);
    if (!info || setjmp(b.jump)) {
        png_destroy_write_struct(&png, info ? &info : NULL);
        free(b.data);
        return kc_fail("%s: cannot encode PNG: %s", path, b.msg);
    }
    png_set_write_fn(png, &b, png_write_cb, png_flush_cb);
    png_set_compression_level(png, 6);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8, color_type, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (color_type == PNG_COLOR_TYPE_PALETTE) {
        png_color pal[256];
        for (int i = 0; i < 256; i++) {
            pal[i].red = palette[3 * i];
            pal[i].green = palette[3 * i + 1];
            pal[i].blue = palette[3 * i + 2];
        }
        png_set_PLTE(png, info, pal, 256);
    }
    png_write_info(png, info);
    for (int y = 0; y < h; y++) png_write_row(png, (png_const_bytep)(pix + (size_t)y * rowbytes));
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    int rc = kc_write_file_atomic(path, b.data, b.size);
    free(b.data);
    return rc;
}

int image_write_png_index(const char *path, int w, int h, const uint8_t *index, const uint8_t *palette)
{
    return write_png(path, w, h, PNG_COLOR_TYPE_PALETTE, index, (size_t)w, palette);
}

int image_write_png_rgb(const char *path, const kc_image *img)
{
    return write_png(path, img->w, img->h, PNG_COLOR_TYPE_RGB, img->rgb, (size_t)img->w * 3, NULL);
}

void image_davis_palette(uint8_t palette[768])
{
    for (int i = 0; i < 256; i++) {
        int c = i, r = 0, g = 0, b = 0;
        for (int j = 0; j < 8; j++) {
            r |= ((c >> 0) & 1) << (7 - j);
            g |= ((c >> 1) & 1) << (7 - j);
            b |= ((c >> 2) & 1) << (7 - j);
            c >>= 3;
        }
        palette[3 * i] = (uint8_t)r;
        palette[3 * i + 1] = (uint8_t)g;
        palette[3 * i + 2] = (uint8_t)b;
    }
}
