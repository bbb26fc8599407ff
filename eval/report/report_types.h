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
 *     report_saliency              report_types, report_pages, report_data, report_files, report_pictures
 *     report_index                 report_types, report_pages, report_gallery, report_davis, report_saliency,
 *                                  report_pictures
 *     report                       all of them (the run; included by stages/kc-report.c only)
 *
 * (html and csv, the leaves, include nothing of the report.)  tests/layout.sh refuses a circle.
 */
#ifndef KC_REPORT_TYPES_H
#define KC_REPORT_TYPES_H
#include "datasets/dataset.h"
#include "eval/report/csv.h"
#include "pipeline/cache/cache.h"

/* An input given as NAME=PATH (--scores, --masks, --davis, --saliency; --table: the file's base name). */
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

/* One image of a saliency gallery (eval/report/report_saliency.h). */
typedef struct sal_image {
    char *id, *safe;
    const char *photo;     /* the first run's dataset's */
    char *gt;              /* its ground-truth PNG (dataset_saliency_gt) */
    int w, h;              /* the photo's size */
    int pos;               /* first seen: the order of the runs' CSVs */
    double key;            /* the first run's solver IoU: the page's order (worst first, NaN last) */
} sal_image;

/* The per-image values of a saliency run that the gallery shows. */
enum { SAL_NONE_IOU, SAL_NONE_FBETA, SAL_BS_IOU, SAL_BS_FBETA, SAL_N_VALUES };
/* The summary.csv values of a saliency run, per refine (none, bs). */
enum { SAL_IMAGES, SAL_MAX_FBETA, SAL_IOU, SAL_ACCURACY, SAL_THRESHOLD, SAL_N_SUMMARY };

/* One --saliency NET=DIR: kc-saliency's scores of a network on a dataset. */
typedef struct sal_run {
    const report_named *in;
    char *setting, *dataset_name, *spec, *network_file; /* network_file: DIR/network's text, NULL when absent */
    char *summary_path, *csv_path, *png_dir;
    csv_file summary, table;
    const char *sum[2][SAL_N_SUMMARY];  /* summary.csv's text: refine none, bs */
    kc_dataset ds;
    int have_ds;
    int gallery;                        /* its sal_gallery */
    const char **v;                     /* (n_img of its gallery, SAL_N_VALUES) the CSV's text, "" absent */
    char **png;                         /* (n_img) DIR/png/<id>.png, NULL when not in its CSV */
} sal_run;

/* One saliency dataset: a gallery page of every network's run on it. */
typedef struct sal_gallery {
    char *name, *safe, *page;          /* summary.csv's dataset; saliency-<safe>.html */
    int *run, n_run;                   /* indices into R->sal, in the order given */
    sal_image *img;                    /* (n_img) in the page's order */
    int n_img;
} sal_gallery;

typedef struct report {
    /* the options (kc-report's command line) */
    const char *out, *title, *images_spec, *voc_root, *davis_root;
    const char *setting, *refine;   /* named on index.html (NULL: not given; refine "none": none) */
    const char *val_split;          /* the VOC val split named (NULL: that of --images voc:ROOT:SPLIT) */
    const char *davis_split;        /* picks each --davis folder's results; NULL: val, else the only one */
    int thumb_h, quality, strip;
    report_named *tables, *scores, *masks, *davis, *saliency;
    int n_tables, n_scores, n_masks, n_davis, n_saliency;
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
    sal_run *sal;          /* (n_saliency) */
    sal_gallery *sg;       /* the saliency galleries: ECSSD, DUTS-TE, DUT-OMRON, then others by name */
    int n_sg;
    struct report_files *files; /* the files this run writes or keeps, and earlier runs' (report_files.h) */
} report;
#endif
