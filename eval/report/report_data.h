/* eval/report/report_data.h — the report's masks as label data that report.js draws (eval/report/report.h):
 * the layers are no longer pictures on disk but the label maps themselves, a few hundred bytes an
 * image, from which the browser draws exactly what kc-show draws (eval/figures/overlay.h), at full size
 * and at thumbnail height.
 *
 * The row code of a (H, W) label map: rows top to bottom, each row as runs of one label; every
 * number is written in 5-bit groups, least significant first, as the characters of
 *     A-Z a-z 0-9 - _      (values 0-63: 0-31 end a number, 32-63 are a group with more to come)
 * and a row starts with a header h:
 *     h = 3 n         the previous row, n more times (n >= 1)
 *     h = 3 n + 1     n runs follow, each: label, length (lengths add up to W)
 *     h = 2           the previous row's labels, each boundary but the last moved by a number d
 *                     written as zigzag(d) (0, -1, 1, -2 ... as 0, 1, 2, 3 ...)
 * (the first row is always of the second kind).  A network's mask, upsampled from its patch grid,
 * takes 200-500 characters; a VOC ground truth 1-3 KB.
 *
 * The data files (report_write_data): per gallery, data/gallery-<net>-<setting>/<k>.js (the
 * gallery page's name without .html) holds entries 100 k .. 100 k + 99 of the gallery (worst
 * Jaccard first, as the page lists them); the ground truth, data/gt/<k>.js, holds images
 * 100 k .. of the image table (R->img).  Each is a script
 *     kcData(1, "data/gt/0.js", [["<id>", W, H, thumb_w, thumb_h, "<row code>"], null, ...]);
 * (1: the format's version; null: an image without picture) that a page loads with <script src>
 * when it needs it (a page opened from file:// cannot fetch a JSON file).  The pages say where:
 * a gallery's list holds data-src and data-gt-src (the folders), an item's ground truth data-gt
 * "<k>.<slot>" (its mask: its position in the list); an image page's figures data-gt or data-k
 * "<k>.<slot>", the gallery's folder named by the figure's link; a saliency gallery's thumbnail
 * its folder and slot, data-src and data-k (eval/report/report_saliency.h).  The galleries of both
 * kinds write their folders through one machinery, report_layer_set (below).  A chunk is rewritten
 * only when stale: missing, older than this program, its masks cache or ground truths, the score
 * CSVs that order it or the photos that size it, its entries not the ids the request now puts in
 * it, in that order (the order comes from the request: which galleries, which network first), or
 * the picture options changed.  A data file of no chunk
 * any more (a gallery that shrank or is no longer given) goes at the end of the run with the other
 * files of earlier runs (eval/report/report_files.h).
 *
 * The C reference (report_layer): the two RGBA layers kc-report drew as PNGs before, from the
 * overlay over black and over white (image_layer_from_pair), the thumbnail by image_shrink_area of
 * both; report.js ports it integer for integer, and tests/test_report.sh and
 * tests/test_report_saliency.sh compare the two through report_layer_set_hashes (kc-report
 * --layer-hashes FILE, a test option) and report.js's ?selftest.
 *
 * Includes report_types.h (and, in the .c, report_files.h and report_pictures.h); the galleries
 * build on it (eval/report/report_types.h).
 *
 *     kc_buf b = {0};
 *     report_row_code(&b, labels, W, H);       // "LBAQ..." (labels: (H, W) row-major)
 *     report_layers L;
 *     report_layer(R, labels, W, H, &L);       // L.full (W x H x 4), L.thumb (tw x th x 4)
 *     report_layers_free(&L);
 */
#ifndef KC_REPORT_DATA_H
#define KC_REPORT_DATA_H
#include <stdint.h>

#include "eval/report/report_types.h"
#include "pipeline/kc.h"

enum { REPORT_CHUNK = 100 }; /* images per data file: a gallery's page */

/* Appends the row code of labels (H, W) to b. */
void report_row_code(kc_buf *b, const uint8_t *labels, int W, int H);

/* The layers of one label map: RGBA, non-premultiplied. */
typedef struct report_layers {
    int w, h, tw, th;
    uint8_t *full, *thumb; /* (h, w, 4), (th, tw, 4) */
} report_layers;
/* The thumbnail size of a W x H picture (report_thumb's). */
void report_thumb_size(const report *R, int W, int H, int *tw, int *th);
int report_layer(const report *R, const uint8_t *labels, int W, int H, report_layers *L);
void report_layers_free(report_layers *L);
/* FNV-1a (32 bits) of n bytes, as report.js computes it. */
uint32_t report_fnv1a(const uint8_t *p, size_t n);

/* The data file of chunk k of a gallery ("data/<pic_dir>/<k>.js") or, G NULL, of the ground
 * truth; a new string. */
char *report_data_rel(const gallery *G, int k);

/* A folder of data files (the shared machinery of the VOC galleries and the saliency galleries,
 * eval/report/report_saliency.h): n entries in a page's order, 100 a file, data/<dir>/<k>.js;
 * entry k's label map from labels().  A chunk is stale when missing, older than this program, one
 * of common[] or one of its entries' in[] (photo, label file), or the picture options changed. */
typedef struct report_layer_set {
    char *dir;            /* "data/<name>/" */
    char *what;           /* what the files hold, for their comment ("the ground truth") */
    int n;
    const char **id;      /* (n) each entry's image id; NULL: no picture (a null entry) */
    char **in;            /* (n, 2) each entry's input files, NULL ones skipped; owned */
    const char **common;  /* (n_common) the inputs of every chunk (the CSVs that order it, a cache) */
    int n_common;
    /* entry k's labels (H, W) and size, *labels NULL when it has none (the entry is written null) */
    int (*labels)(report *R, const struct report_layer_set *S, int k, int *W, int *H, uint8_t **labels);
    const void *ctx;      /* the labels' source (a gallery, a saliency run) */
    int ctx_index;
} report_layer_set;
/* Takes the new strings dir and what; id and in allocated, zero. */
void report_layer_set_init(report_layer_set *S, char *dir, char *what, int n);
void report_layer_set_free(report_layer_set *S);
/* The set's data files, each rewritten only when stale (above); counts R->drawn and R->kept. */
int report_write_layer_set(report *R, const report_layer_set *S);
/* Test option: the lines "<dir>\t<id>\t<full|thumb>\t<w>x<h>\t<fnv1a hex>" of the set's layers into b. */
int report_layer_set_hashes(report *R, const report_layer_set *S, kc_buf *b);

/* The VOC galleries' data files (the ground truth and each gallery's masks). */
int report_write_data(report *R);
/* Test option: for every VOC image with a photo, its ground truth's layers and every gallery's
 * mask layers, as report_layer_set_hashes's lines, into b. */
int report_layer_hashes(report *R, kc_buf *b);
#endif
