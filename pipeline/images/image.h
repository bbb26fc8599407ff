/* pipeline/images/image.h — image files in and out.  (Owner: images module.)
 *
 * Decoding matches Pillow 9.4's Image.open(p).convert("RGB") byte for byte: JPEG (baseline,
 * progressive, gray, CMYK, Adobe-inverted CMYK) through libjpeg, PNG (gray, gray+alpha, palette,
 * 16-bit, RGBA; alpha dropped, not composited) through libpng.  EXIF orientation is ignored.
 * A truncated or corrupt file is an error naming the file, never a partly gray image.
 *
 *     kc_image im;
 *     if (image_load_rgb("a.jpg", &im) < 0) return -1;   // im.rgb: (h, w, 3) uint8
 *     image_free(&im);
 */
#ifndef KC_IMAGE_H
#define KC_IMAGE_H
#include <stdint.h>

typedef struct kc_image {
    int w, h;
    uint8_t *rgb; /* (h, w, 3) row-major */
} kc_image;

int image_load_rgb(const char *path, kc_image *img);
/* The same, and the sha256 of the file's bytes as read (kc-extract records it). */
int image_load_rgb_sha(const char *path, kc_image *img, uint8_t sha[32]);
void image_free(kc_image *img);
/* Width and height from the header only. */
int image_size(const char *path, int *w, int *h);
/* The same, and a JPEG's EXIF orientation (the tag's value, 1 when it has none; a PNG: 1).  keycut,
 * like PIL's Image.open and the reference code, ignores it: pixels are read as stored. */
int image_header(const char *path, int *w, int *h, int *orientation);
/* An 8-bit palette or gray PNG's stored values (palette indices, not colours): (h, w) uint8.
 * Used for VOC SegmentationObject/Class and DAVIS annotations and results. */
int image_read_png_index(const char *path, int *w, int *h, uint8_t **index);
/* Writes an 8-bit palette PNG (index: (h, w)); palette: 256 RGB triples.  Atomic (tmp + rename). */
int image_write_png_index(const char *path, int w, int h, const uint8_t *index, const uint8_t *palette);
/* Writes an RGB PNG.  Atomic. */
int image_write_png_rgb(const char *path, const kc_image *img);
/* The DAVIS / VOC colour palette (bit-interleaved label colours, 256 entries). */
void image_davis_palette(uint8_t palette[768]);
#endif
