/* eval/report/report_types.h — the results browser's shared state (eval/report/report.h): the run's
 * options and what it read (report), the galleries (gallery, gallery_entry: kc-score's per-image
 * CSVs, eval/report/report_gallery.h) and the image table (image_ref).  Types only: every module of
 * the report takes a report *R and reads or fills these; the run (report.c) owns their lifetime.
 *
 * The report's modules include one another one way only, each only those below it:
 *
 *     report_types                 csv, datasets/dataset.h, pipeline/cache/cache.h (no module above)
 *     report_files                 report_types (also report_out_path: every file's path under OUT)
 *     report_pictures              report_types, report_files
 *     report_data                  report_types, report_files, report_pictures
 *     report_pages                 report_types, report_files (the page frame, tables, provenance)
 *     report_gallery               report_types, report_pages, report_data, report_pictures
 *     report_davis                 report_types, report_pages, report_files, report_pictures
 *     report_index                 report_types, report_pages, report_gallery, report_davis, report_pictures
 *     report                       all of them (the run; included by stages/kc-report.c only)
 *
 * (html and csv, the leaves, include nothing of the report.)  tests/layout.sh refuses a circle.
 */
#ifndef KC_REPORT_TYPES_H
#define KC_REPORT_TYPES_H
#include "datasets/dataset.h"
#include "eval/report/csv.h"
#include "pipeline/cache/cache.h"

/* An input given as NAME=PATH (--scores, --masks, --davis; --table: the file's base name). */
typedef struct report_named {
    char *name, *path;
} report_named;

/* The columns of a per-image score CSV that the galleries show (eval/report/report_gallery.c). */
enum { COL_JACCARD, COL_CORLOC, COL_AREA, COL_LAMBDA2, COL_EIGENGAP, COL_DEGENERATE, COL_KNIFE, N_COLS };

/* One image of a gallery: a row of its CSV. */
typedef struct gallery_entry {
    int image;             /* index into the image table */
    const char *v[N_COLS]; /* the CSV's text ("" when the column is absent) */
    double jaccard;
    int pos;               /* row in the CSV */
} gallery_entry;

/* One <setting>.csv of a --scores folder: a gallery page. */
typedef struct gallery {
    const char *net;
    char *setting, *csv_path, *scores_dir, *page, *pic_dir, *summary;
    csv_file table;
    int n;
    gallery_entry *e;      /* worst Jaccard first */
    int masks;             /* index into the masks caches, -1: none has this setting */
} gallery;

/* One image id of the galleries: its page and pictures. */
typedef struct image_ref {
    char *id, *safe;
    const char *photo;     /* NULL: not in --images */
    int n_in;
    int *in_gallery, *in_entry;
} image_ref;

typedef struct report {
    /* the options (kc-report's command line) */
    const char *out, *title, *images_spec, *voc_root, *davis_root;
    const char *setting, *refine;   /* named on index.html (NULL: not given; refine "none": none) */
    const char *val_split;          /* the VOC val split named (NULL: that of --images voc:ROOT:SPLIT) */
    const char *davis_split;        /* picks each --davis folder's results; NULL: val, else the only one */
    int thumb_h, quality, strip;
    report_named *tables, *scores, *masks, *davis;
    int n_tables, n_scores, n_masks, n_davis;
    const char *figures;
    const char *layer_hashes; /* a test option: the C reference of the layers (eval/report/report_data.h) */
    /* the run (report_run) */
    cache_reader *mr;      /* (n_masks) opened caches */
    kc_dataset ds;
    int have_ds;
    gallery *g;
    int n_g;
    image_ref *img;
    int n_img;
    double exe_mtime;
    int force;             /* picture options changed: redraw every picture */
    long drawn, kept;
    struct report_files *files; /* the files this run writes or keeps, and earlier runs' (report_files.h) */
} report;
#endif
