/* tests/test_image.c — image decoding against Pillow 9.4 (tests/ref/image_refs.py wrote
 * tests/data/image/), label PNGs, the DAVIS palette, atomic PNG writing and bad files.
 * Tolerance everywhere: 0 (byte-exact). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/images/image.h"
#include "pipeline/kc.h"
#include "pipeline/sha256.h"
#include "tests/test.h"

#define DATA "tests/data/image"

/* Compares two RGB buffers; prints the worst difference and how many bytes differ. */
static int compare_bytes(const char *what, const uint8_t *a, const uint8_t *b, size_t n)
{
    size_t ndiff = 0;
    int worst = 0;
    for (size_t i = 0; i < n; i++) {
        int d = abs((int)a[i] - (int)b[i]);
        if (d) ndiff++;
        if (d > worst) worst = d;
    }
    CHECK(ndiff == 0, "%s: %zu of %zu bytes differ, max |diff| %d (tol 0)", what, ndiff, n, worst);
    return ndiff == 0;
}

static void hex_digest(const uint8_t *data, size_t n, char hex[65]) { kc_sha256_buf_hex(data, n, hex); }

static void test_synth(void)
{
    FILE *f = fopen(DATA "/synth.tsv", "r");
    CHECK(f != NULL, "cannot open %s/synth.tsv (run tests/ref/image_refs.py)", DATA);
    if (!f) return;
    char name[256];
    int w, h, n = 0, same = 0;
    while (fscanf(f, "%255s %d %d", name, &w, &h) == 3) {
        char *path = kc_strfmt(DATA "/synth/%s", name);
        char *ref_path = kc_strfmt(DATA "/synth/%.*s.rgb", (int)(strrchr(name, '.') - name), name);
        uint8_t *ref;
        size_t ref_n;
        kc_image im;
        n++;
        if (kc_read_file(ref_path, &ref, &ref_n) < 0) {
            CHECK(0, "%s", kc_error());
        } else if (image_load_rgb(path, &im) < 0) {
            CHECK(0, "%s: %s", name, kc_error());
            free(ref);
        } else {
            CHECK(im.w == w && im.h == h, "%s: size %dx%d, Pillow %dx%d", name, im.w, im.h, w, h);
            if (im.w == w && im.h == h && ref_n == (size_t)w * h * 3) same += compare_bytes(name, im.rgb, ref, ref_n);
            int sw = 0, sh = 0;
            CHECK(image_size(path, &sw, &sh) == 0 && sw == w && sh == h, "%s: image_size %dx%d", name, sw, sh);
            image_free(&im);
            free(ref);
        }
        free(path);
        free(ref_path);
    }
    fclose(f);
    printf("synthetic files: %d of %d byte-identical to Pillow\n", same, n);
    CHECK(n >= 30, "only %d synthetic files listed", n);
}

static void test_real(void)
{
    const char *shared = test_shared_data();
    if (!shared) {
        SKIP("shared data absent: real JPEG/PNG digests not checked");
        return;
    }
    FILE *f = fopen(DATA "/real.tsv", "r");
    CHECK(f != NULL, "cannot open %s/real.tsv", DATA);
    if (!f) return;
    char rel[1024], want[80];
    int w, h, n = 0, same = 0;
    while (fscanf(f, "%1023s %d %d %79s", rel, &w, &h, want) == 4) {
        char *path = kc_strfmt("%s/%s", shared, rel);
        kc_image im;
        n++;
        if (image_load_rgb(path, &im) < 0) {
            CHECK(0, "%s", kc_error());
        } else {
            char hex[65];
            hex_digest(im.rgb, (size_t)im.w * im.h * 3, hex);
            int ok = im.w == w && im.h == h && strcmp(hex, want) == 0;
            CHECK(ok, "%s: %dx%d sha256 %s, Pillow %dx%d %s", rel, im.w, im.h, hex, w, h, want);
            same += ok;
            image_free(&im);
        }
        free(path);
    }
    fclose(f);
    printf("real files: %d of %d decode to Pillow's exact RGB bytes (sha256)\n", same, n);
    CHECK(n >= 100, "only %d real files listed", n);
}

static void test_index_and_palette(void)
{
    int w, h;
    uint8_t *idx, *ref;
    size_t ref_n;
    if (image_read_png_index(DATA "/synth/pil_p.png", &w, &h, &idx) < 0) {
        CHECK(0, "%s", kc_error());
    } else {
        CHECK(kc_read_file(DATA "/synth/pil_p.idx", &ref, &ref_n) == 0 && ref_n == (size_t)w * h, "pil_p.idx");
        compare_bytes("pil_p.png indices", idx, ref, (size_t)w * h);
        free(ref);
        free(idx);
    }
    if (image_read_png_index(DATA "/synth/gray8.png", &w, &h, &idx) < 0) {
        CHECK(0, "%s", kc_error());
    } else {
        CHECK(kc_read_file(DATA "/synth/gray8.idx", &ref, &ref_n) == 0 && ref_n == (size_t)w * h, "gray8.idx");
        compare_bytes("gray8.png values", idx, ref, (size_t)w * h);
        free(ref);
        free(idx);
    }
    /* other kinds are refused with the file's name */
    const char *refused[] = {"rgb8.png", "gray16.png", "graya8.png", "rgb420.jpg"};
    for (int i = 0; i < 4; i++) {
        char *p = kc_strfmt(DATA "/synth/%s", refused[i]);
        idx = NULL;
        int rc = image_read_png_index(p, &w, &h, &idx);
        CHECK(rc < 0 && strstr(kc_error(), refused[i]), "image_read_png_index(%s) should fail naming it: %s",
              refused[i], kc_error());
        free(idx);
        free(p);
    }

    uint8_t pal[768];
    image_davis_palette(pal);
    CHECK(pal[3] == 128 && pal[4] == 0 && pal[5] == 0 && pal[6] == 0 && pal[7] == 128 && pal[255 * 3] == 224,
          "DAVIS palette: 1=(%d,%d,%d) 2=(%d,%d,%d) 255.r=%d", pal[3], pal[4], pal[5], pal[6], pal[7], pal[8],
          pal[765]);
    const char *shared = test_shared_data();
    if (!shared) {
        SKIP("shared data absent: DAVIS palette not compared with a real annotation");
        return;
    }
    /* The real annotation's palette: decode it as RGB and compare pixel colours with our palette
     * applied to its indices (covers every index present), and read the PLTE chunk itself. */
    char *ann = kc_strfmt("%s/davis/Annotations/480p/blackswan/00000.png", shared);
    uint8_t *file;
    size_t fn;
    if (kc_read_file(ann, &file, &fn) == 0) {
        int found = 0;
        for (size_t i = 8; i + 8 < fn;) {
            uint32_t len = (uint32_t)file[i] << 24 | file[i + 1] << 16 | file[i + 2] << 8 | file[i + 3];
            if (!memcmp(file + i + 4, "PLTE", 4)) {
                int np = (int)(len / 3), bad = 0;
                for (int k = 0; k < np * 3; k++) bad += file[i + 8 + k] != pal[k];
                CHECK(np == 256 && bad == 0, "blackswan palette: %d entries, %d values differ from ours", np, bad);
                found = 1;
                break;
            }
            i += 12 + len;
        }
        CHECK(found, "no PLTE in %s", ann);
        free(file);
    } else {
        CHECK(0, "%s", kc_error());
    }
    if (image_read_png_index(ann, &w, &h, &idx) == 0) {
        int n1 = 0, other = 0;
        for (int i = 0; i < w * h; i++) n1 += idx[i] == 1, other += idx[i] > 1;
        CHECK(w == 854 && h == 480 && n1 > 1000 && other == 0, "blackswan 00000: %dx%d, %d pixels of 1, %d other",
              w, h, n1, other);
        free(idx);
    } else {
        CHECK(0, "%s", kc_error());
    }
    free(ann);
}

static void test_write(void)
{
    const char *dir = test_tmpdir("image");
    uint8_t pal[768], idx[7 * 5];
    image_davis_palette(pal);
    for (int i = 0; i < 35; i++) idx[i] = (uint8_t)(i % 9 == 0 ? 255 : i % 4);
    char *p = kc_strfmt("%s/idx.png", dir), *tmp = kc_strfmt("%s/idx.png.tmp", dir);
    CHECK(image_write_png_index(p, 7, 5, idx, pal) == 0, "write index: %s", kc_error());
    CHECK(!kc_exists(tmp), "temporary file left behind");
    int w, h;
    uint8_t *back = NULL;
    CHECK(image_read_png_index(p, &w, &h, &back) == 0 && w == 7 && h == 5, "read back: %s", kc_error());
    if (back) compare_bytes("index PNG round trip", back, idx, 35);
    free(back);
    kc_image im;
    if (image_load_rgb(p, &im) == 0) {
        uint8_t want[35 * 3];
        for (int i = 0; i < 35; i++) memcpy(want + 3 * i, pal + 3 * idx[i], 3);
        compare_bytes("index PNG as RGB", im.rgb, want, sizeof want);
        /* RGB writer round trip, and determinism (same bytes twice) */
        char *q = kc_strfmt("%s/rgb.png", dir);
        CHECK(image_write_png_rgb(q, &im) == 0, "write rgb: %s", kc_error());
        uint8_t *f1 = NULL, *f2 = NULL;
        size_t n1 = 0, n2 = 0;
        kc_read_file(q, &f1, &n1);
        CHECK(image_write_png_rgb(q, &im) == 0, "write rgb again: %s", kc_error());
        kc_read_file(q, &f2, &n2);
        CHECK(n1 == n2 && n1 > 0 && memcmp(f1, f2, n1) == 0, "PNG output not deterministic");
        free(f1);
        free(f2);
        kc_image im2;
        if (image_load_rgb(q, &im2) == 0) {
            compare_bytes("RGB PNG round trip", im2.rgb, im.rgb, sizeof want);
            image_free(&im2);
        }
        image_free(&im);
        /* a failed write leaves the existing file intact */
        char *bad = kc_strfmt("%s/no-such-dir/x.png", dir);
        kc_image one = {1, 1, (uint8_t[]){1, 2, 3}};
        CHECK(image_write_png_rgb(bad, &one) < 0 && strstr(kc_error(), "no-such-dir"), "write into missing dir");
        free(bad);
        free(q);
    } else {
        CHECK(0, "%s", kc_error());
    }
    free(p);
    free(tmp);
}

static void test_bad(void)
{
    struct {
        const char *file, *msg;
    } cases[] = {
        {"empty.jpg", "empty"},
        {"text.png", "not a JPEG or PNG"},
        {"truncated.jpg", "truncated|premature"},
        {"truncated_progressive.jpg", "truncated|premature"},
        {"truncated.png", "truncated|premature|Read Error|Not enough"},
        {"badcrc_idat.png", "CRC"},
        {"badcrc_ihdr.png", "CRC"},
        {"huge.png", "too large"},
        {"huge.jpg", "too large"},
        {"missing.jpg", "missing.jpg"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *p = kc_strfmt(DATA "/bad/%s", cases[i].file);
        kc_image im = {0, 0, NULL};
        int rc = image_load_rgb(p, &im);
        const char *e = kc_error();
        int named = strstr(e, cases[i].file) != NULL && strchr(e, '\n') == NULL;
        int matched = 0;
        char alts[128];
        snprintf(alts, sizeof alts, "%s", cases[i].msg);
        for (char *t = strtok(alts, "|"); t; t = strtok(NULL, "|")) matched |= strstr(e, t) != NULL;
        CHECK(rc < 0 && im.rgb == NULL && named && matched, "bad/%s: rc %d, message '%s' (want one line naming "
              "the file, saying '%s')", cases[i].file, rc, e, cases[i].msg);
        printf("bad/%-26s -> %s\n", cases[i].file, e);
        free(p);
    }
    int w, h;
    CHECK(image_size(DATA "/bad/huge.png", &w, &h) < 0 && strstr(kc_error(), "too large"), "image_size huge.png");
    CHECK(image_size(DATA "/bad/empty.jpg", &w, &h) < 0, "image_size of an empty file");
}

int main(void)
{
    test_synth();
    test_real();
    test_index_and_palette();
    test_write();
    test_bad();
    return test_done();
}
