/* datasets/demo_gen.c — see demo_gen.h. */
#include "datasets/demo_gen.h"


#include <math.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <jpeglib.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/images/image.h"
#include "pipeline/kc.h"

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t next_u64(rng *r) /* splitmix64 */
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double uni(rng *r) { return (double)(next_u64(r) >> 11) * (1.0 / 9007199254740992.0); }

static double range(rng *r, double lo, double hi) { return lo + (hi - lo) * uni(r); }

/* ---- JPEG writing (the demo's only JPEG encoder use) -------------------------------------- */

typedef struct jerr {
    struct jpeg_error_mgr pub;
    jmp_buf jb;
} jerr;

static void jerr_exit(j_common_ptr c)
{
    jerr *e = (jerr *)c->err;
    longjmp(e->jb, 1);
}

static int write_jpeg(const char *path, int w, int h, const uint8_t *rgb, int quality)
{
    char *tmp = kc_strfmt("%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        kc_fail("%s: cannot create", tmp);
        free(tmp);
        return -1;
    }
    struct jpeg_compress_struct c;
    jerr e;
    c.err = jpeg_std_error(&e.pub);
    e.pub.error_exit = jerr_exit;
    if (setjmp(e.jb)) {
        jpeg_destroy_compress(&c);
        fclose(f);
        unlink(tmp);
        kc_fail("%s: JPEG encoding failed", path);
        free(tmp);
        return -1;
    }
    jpeg_create_compress(&c);
    jpeg_stdio_dest(&c, f);
    c.image_width = (JDIMENSION)w;
    c.image_height = (JDIMENSION)h;
    c.input_components = 3;
    c.in_color_space = JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, quality, TRUE);
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < c.image_height) {
        JSAMPROW row = (JSAMPROW)(rgb + (size_t)c.next_scanline * (size_t)w * 3);
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    int rc = fclose(f) == 0 ? 0 : kc_fail("%s: write failed", tmp);
    if (rc == 0 && rename(tmp, path) != 0) rc = kc_fail("%s: cannot rename into place", path);
    free(tmp);
    return rc;
}

/* ---- drawing ------------------------------------------------------------------------------ */

typedef struct shape {
    int kind;          /* 0 ellipse, 1 box, 2 triangle */
    double cx, cy, rx, ry, angle;
    uint8_t rgb[3];
    int cls;
} shape;

static int inside(const shape *s, double x, double y)
{
    double ca = cos(s->angle), sa = sin(s->angle);
    double dx = x - s->cx, dy = y - s->cy;
    double u = (ca * dx + sa * dy) / s->rx, v = (-sa * dx + ca * dy) / s->ry;
    if (s->kind == 0) return u * u + v * v <= 1.0;
    if (s->kind == 1) return fabs(u) <= 1.0 && fabs(v) <= 1.0;
    /* triangle: apex at v = -1, base at v = 1 */
    if (v < -1.0 || v > 1.0) return 0;
    return fabs(u) <= (v + 1.0) * 0.5;
}

static void hsv_to_rgb(double hue, double sat, double val, uint8_t out[3])
{
    double c = val * sat, hp = fmod(hue, 1.0) * 6.0, x = c * (1 - fabs(fmod(hp, 2.0) - 1));
    double r = 0, g = 0, b = 0;
    if (hp < 1) r = c, g = x;
    else if (hp < 2) r = x, g = c;
    else if (hp < 3) g = c, b = x;
    else if (hp < 4) g = x, b = c;
    else if (hp < 5) r = x, b = c;
    else r = c, b = x;
    double m = val - c;
    out[0] = (uint8_t)lround(255 * (r + m));
    out[1] = (uint8_t)lround(255 * (g + m));
    out[2] = (uint8_t)lround(255 * (b + m));
}

typedef struct background {
    double base[3], grad[3], fx, fy, phase, amp;
} background;

static void make_background(rng *r, background *bg)
{
    double hue = uni(r);
    uint8_t c[3];
    hsv_to_rgb(hue, range(r, 0.05, 0.25), range(r, 0.35, 0.6), c);
    for (int k = 0; k < 3; k++) {
        bg->base[k] = c[k];
        bg->grad[k] = range(r, -40, 40);
    }
    bg->fx = range(r, 0.02, 0.08);
    bg->fy = range(r, 0.02, 0.08);
    bg->phase = range(r, 0, 6.28);
    bg->amp = range(r, 6, 14);
}

static uint8_t clip8(double v) { return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : lround(v)); }

/* Renders background + shapes; obj: (h, w) object id (0 background), later shapes on top. */
static void render(rng *r, const background *bg, double shift, const shape *sh, int ns, int w, int h, uint8_t *rgb,
                   uint8_t *obj)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            double xs = x + shift;
            double t = bg->amp * sin(bg->fx * xs + bg->phase) * cos(bg->fy * y);
            double fy = (double)y / h;
            int id = 0;
            for (int s = 0; s < ns; s++)
                if (inside(&sh[s], x + 0.5, y + 0.5)) id = s + 1;
            uint8_t *p = rgb + ((size_t)y * w + x) * 3;
            for (int k = 0; k < 3; k++) {
                double v;
                if (id) {
                    const shape *s = &sh[id - 1];
                    double shade = 1.0 - 0.15 * ((y - s->cy) / (s->ry + 1));
                    v = s->rgb[k] * shade;
                } else {
                    v = bg->base[k] + bg->grad[k] * fy + t;
                }
                v += range(r, -6, 6);
                p[k] = clip8(v);
            }
            obj[(size_t)y * w + x] = (uint8_t)id;
        }
}

static void random_shape(rng *r, shape *s, int w, int h, double hue)
{
    s->kind = (int)(uni(r) * 3);
    double scale = w < h ? w : h;
    s->rx = range(r, 0.12, 0.28) * scale;
    s->ry = range(r, 0.12, 0.28) * scale;
    s->cx = range(r, s->rx + 4, w - s->rx - 4);
    s->cy = range(r, s->ry + 4, h - s->ry - 4);
    s->angle = range(r, -0.6, 0.6);
    hsv_to_rgb(hue, range(r, 0.75, 1.0), range(r, 0.75, 1.0), s->rgb);
    s->cls = 1 + (int)(uni(r) * 20);
}

/* VOC marks a band of void (255) pixels on every object's border: here, pixels within 2 pixels
 * (Chebyshev) of a pixel with another object id. */
static void void_band(const uint8_t *obj, int w, int h, uint8_t *out_obj)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint8_t v = obj[(size_t)y * w + x];
            int border = 0;
            for (int dy = -2; dy <= 2 && !border; dy++)
                for (int dx = -2; dx <= 2; dx++) {
                    int yy = y + dy, xx = x + dx;
                    if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
                    if (obj[(size_t)yy * w + xx] != v) {
                        border = 1;
                        break;
                    }
                }
            out_obj[(size_t)y * w + x] = border ? 255 : v;
        }
}

static int write_text(const char *path, const char *text) { return kc_write_file_atomic(path, text, strlen(text)); }

static int gen_voc(const char *root, rng *r, int n_train, int n_val)
{
    const char *dirs[] = {"JPEGImages", "SegmentationObject", "SegmentationClass", "Annotations",
                          "ImageSets/Segmentation"};
    for (int i = 0; i < 5; i++) {
        char *d = kc_strfmt("%s/%s", root, dirs[i]);
        int rc = kc_mkdirs(d);
        free(d);
        KC_TRY(rc);
    }
    static const char *names[21] = {"background", "aeroplane", "bicycle", "bird", "boat", "bottle", "bus",
                                    "car", "cat", "chair", "cow", "diningtable", "dog", "horse", "motorbike",
                                    "person", "pottedplant", "sheep", "sofa", "train", "tvmonitor"};
    uint8_t pal[768];
    image_davis_palette(pal);
    size_t cap = 1 << 16;
    char *train = kc_calloc(cap, 1), *val = kc_calloc(cap, 1);
    for (int i = 0; i < n_train + n_val; i++) {
        char id[32];
        snprintf(id, sizeof id, "2099_%06d", i + 1);
        int w = 320 + (int)(uni(r) * 160), h = 240 + (int)(uni(r) * 100);
        background bg;
        make_background(r, &bg);
        int ns = 1 + (uni(r) < 0.35) + (uni(r) < 0.15);
        shape sh[3];
        double hue0 = uni(r);
        for (int s = 0; s < ns; s++) random_shape(r, &sh[s], w, h, hue0 + 0.33 * s);
        uint8_t *rgb = kc_malloc((size_t)w * h * 3), *obj = kc_malloc((size_t)w * h),
                *objv = kc_malloc((size_t)w * h), *cls = kc_malloc((size_t)w * h);
        render(r, &bg, 0, sh, ns, w, h, rgb, obj);
        void_band(obj, w, h, objv);
        /* an object entirely hidden by later ones keeps no pixels: renumber 1..K by presence */
        int present[4] = {0, 0, 0, 0}, remap[4] = {0, 0, 0, 0}, k = 0;
        for (size_t p = 0; p < (size_t)w * h; p++) present[obj[p]] = 1;
        for (int s = 1; s <= ns; s++)
            if (present[s]) remap[s] = ++k;
        for (size_t p = 0; p < (size_t)w * h; p++) {
            uint8_t v = objv[p];
            objv[p] = v == 255 ? 255 : (uint8_t)remap[v];
            cls[p] = v == 255 ? 255 : v ? (uint8_t)sh[v - 1].cls : 0;
        }
        char *p1 = kc_strfmt("%s/JPEGImages/%s.jpg", root, id);
        char *p2 = kc_strfmt("%s/SegmentationObject/%s.png", root, id);
        char *p3 = kc_strfmt("%s/SegmentationClass/%s.png", root, id);
        char *p4 = kc_strfmt("%s/Annotations/%s.xml", root, id);
        int rc = write_jpeg(p1, w, h, rgb, 92);
        if (rc == 0) rc = image_write_png_index(p2, w, h, objv, pal);
        if (rc == 0) rc = image_write_png_index(p3, w, h, cls, pal);
        /* boxes from the object pixels (void band excluded, as VOC's boxes hug the object) */
        char *xml = kc_strfmt("<annotation>\n  <folder>VOC2099</folder>\n  <filename>%s.jpg</filename>\n"
                              "  <size>\n    <width>%d</width>\n    <height>%d</height>\n    <depth>3</depth>\n"
                              "  </size>\n  <segmented>1</segmented>\n",
                              id, w, h);
        for (int s = 1; s <= ns && rc == 0; s++) {
            if (!remap[s]) continue;
            int x0 = w, y0 = h, x1 = -1, y1 = -1;
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++)
                    if (obj[(size_t)y * w + x] == s) {
                        if (x < x0) x0 = x;
                        if (x > x1) x1 = x;
                        if (y < y0) y0 = y;
                        if (y > y1) y1 = y;
                    }
            char *o = kc_strfmt("%s  <object>\n    <name>%s</name>\n    <pose>Unspecified</pose>\n"
                                "    <truncated>0</truncated>\n    <difficult>0</difficult>\n    <bndbox>\n"
                                "      <xmin>%d</xmin>\n      <ymin>%d</ymin>\n      <xmax>%d</xmax>\n"
                                "      <ymax>%d</ymax>\n    </bndbox>\n  </object>\n",
                                xml, names[sh[s - 1].cls], x0 + 1, y0 + 1, x1 + 1, y1 + 1);
            free(xml);
            xml = o;
        }
        char *full = kc_strfmt("%s</annotation>\n", xml);
        if (rc == 0) rc = write_text(p4, full);
        free(full);
        free(xml);
        char *list = i < n_train ? train : val;
        if (strlen(list) + 32 < cap) strcat(strcat(list, id), "\n");
        free(p1), free(p2), free(p3), free(p4), free(rgb), free(obj), free(objv), free(cls);
        if (rc < 0) {
            free(train);
            free(val);
            return -1;
        }
    }
    char *t = kc_strfmt("%s/ImageSets/Segmentation/train.txt", root), *v = kc_strfmt("%s/ImageSets/Segmentation/val.txt", root);
    int rc = write_text(t, train);
    if (rc == 0) rc = write_text(v, val);
    free(t), free(v), free(train), free(val);
    return rc;
}

static int gen_davis(const char *root, rng *r, int n_videos, int n_frames)
{
    static const char *seq_names[] = {"dots", "kites", "boats", "comets", "marbles", "lanterns"};
    if (n_videos > 6) n_videos = 6;
    char *sets = kc_strfmt("%s/ImageSets/2017", root);
    int rc = kc_mkdirs(sets);
    free(sets);
    KC_TRY(rc);
    uint8_t pal[768];
    image_davis_palette(pal);
    char list[256] = "";
    const int w = 427, h = 240;
    for (int v = 0; v < n_videos && rc == 0; v++) {
        char *jd = kc_strfmt("%s/JPEGImages/480p/%s", root, seq_names[v]);
        char *ad = kc_strfmt("%s/Annotations/480p/%s", root, seq_names[v]);
        rc = kc_mkdirs(jd);
        if (rc == 0) rc = kc_mkdirs(ad);
        background bg;
        make_background(r, &bg);
        int ns = 1 + (v % 2);
        shape sh[2];
        double vx[2], vy[2];
        double hue0 = uni(r);
        for (int s = 0; s < ns; s++) {
            random_shape(r, &sh[s], w, h, hue0 + 0.4 * s);
            sh[s].rx *= 0.7;
            sh[s].ry *= 0.7;
            sh[s].cx = (s == 0 ? 0.3 : 0.7) * w;
            sh[s].cy = range(r, 0.35, 0.65) * h;
            vx[s] = (s == 0 ? 1 : -1) * range(r, 3, 6);
            vy[s] = range(r, -2, 2);
        }
        uint8_t *rgb = kc_malloc((size_t)w * h * 3), *obj = kc_malloc((size_t)w * h);
        for (int f = 0; f < n_frames && rc == 0; f++) {
            render(r, &bg, 1.5 * f, sh, ns, w, h, rgb, obj);
            char *jp = kc_strfmt("%s/%05d.jpg", jd, f), *ap = kc_strfmt("%s/%05d.png", ad, f);
            rc = write_jpeg(jp, w, h, rgb, 92);
            if (rc == 0) rc = image_write_png_index(ap, w, h, obj, pal);
            free(jp);
            free(ap);
            for (int s = 0; s < ns; s++) {
                sh[s].cx += vx[s];
                sh[s].cy += vy[s];
                sh[s].angle += 0.03;
            }
        }
        free(rgb), free(obj), free(jd), free(ad);
        strcat(strcat(list, seq_names[v]), "\n");
    }
    if (rc == 0) {
        char *vp = kc_strfmt("%s/ImageSets/2017/val.txt", root);
        rc = write_text(vp, list);
        free(vp);
    }
    return rc;
}

int demo_generate(const char *root, unsigned seed, int n_train, int n_val, int n_videos, int n_frames)
{
    rng r = {seed};
    char *voc = kc_strfmt("%s/voc", root), *davis = kc_strfmt("%s/davis", root);
    int rc = gen_voc(voc, &r, n_train, n_val);
    if (rc == 0) rc = gen_davis(davis, &r, n_videos, n_frames);
    free(voc);
    free(davis);
    return rc;
}
