/* pipeline/images/image_jpeg.h — pictures for the web: JPEG, an area-average shrink, and the RGBA
 * layer of a drawing.
 *
 * For the results browser (kc-report, eval/report/report.h).  Photos are written once as baseline JPEG
 * (libjpeg, 4:2:0 chroma, optimised Huffman tables: 5-10x smaller than image.h's RGB PNG).  The
 * masks are not stored as pictures: report.js draws them from label data, and the C reference of
 * what it must draw (eval/report/report_data.h) is built here.  A layer is recovered exactly from the
 * same drawing done twice, over black (B) and over white (W): wherever the drawing blends colour c
 * with opacity a over the background, B = a c and W = a c + (1 - a) 255, so a = 1 - (W - B) / 255
 * (the mean over the three channels) and c = B / a; drawn over the photo with source-over, the
 * layer gives the picture kc-show draws (to rounding).  Writes are atomic (kc_write_file_atomic:
 * tmp + rename).
 *
 * The shrink is the area average ("box" filter): output pixel (x, y) of a dw x dh picture is the
 * mean of the source pixels whose centres fall in [x sw / dw, (x + 1) sw / dw) x [y sh / dh,
 * (y + 1) sh / dh) (at least one pixel), rounded to nearest.  Only for shrinking (dw <= sw,
 * dh <= sh); it is exact for integer factors and needs no filter table.
 *
 *     kc_image small;
 *     image_shrink_area(&im, 128, 96, &small);
 *     if (image_write_jpeg("thumbs/a.jpg", &small, 80) < 0) return -1;
 *     image_free(&small);
 */
#ifndef KC_IMAGE_JPEG_H
#define KC_IMAGE_JPEG_H
#include <stddef.h>
#include <stdint.h>

#include "pipeline/images/image.h"

/* Encodes img (quality 1..100) into a new buffer *data of *size bytes; 0, or -1 with a message
 * naming `what`. */
int image_encode_jpeg(const kc_image *img, int quality, const char *what, uint8_t **data, size_t *size);
/* Encodes and writes path atomically. */
int image_write_jpeg(const char *path, const kc_image *img, int quality);
/* The layer (rgba: (h, w, 4)) of a drawing given over black and over white (same size). */
void image_layer_from_pair(const kc_image *on_black, const kc_image *on_white, uint8_t *rgba);
/* Area-average shrink of src to dw x dh (1 <= dw <= src->w, 1 <= dh <= src->h) into a new *dst.
 * Returns -1 with a message on bad sizes. */
int image_shrink_area(const kc_image *src, int dw, int dh, kc_image *dst);
#endif
