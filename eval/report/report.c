/* eval/report/report.c — the results browser's run: every input read, then the pictures drawn, then the
 * pages written and renamed together.  See report.h. */
#include "eval/report/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "datasets/voc.h"
#include "eval/report/report_assets.h"
#include "eval/report/report_data.h"
#include "eval/report/report_davis.h"
#include "eval/report/report_files.h"
#include "eval/report/report_gallery.h"
#include "eval/report/report_index.h"
#include "eval/report/report_pages.h"
#include "eval/report/report_pictures.h"
#include "eval/report/report_saliency.h"
#include "pipeline/extract/image_check.h"
#include "pipeline/lock.h"
#include "pipeline/progress.h"

/* The photo of m must be the file its masks were made from: checked against the hash recorded in
 * the masks cache of the first gallery showing it that has one (pipeline/extract/image_check.h). */
static int photo_unchanged(const report *R, const image_ref *m)
{
    for (int k = 0; k < m->n_in; k++) {
        const gallery *G = &R->g[m->in_gallery[k]];
        if (G->masks < 0) continue;
        char *dset = kc_strfmt("/masks/%s/%s", G->setting, m->id);
        int has = cache_has(&R->mr[G->masks], dset), rc = has ? image_check_unchanged(&R->mr[G->masks], dset, m->photo) : 0;
        free(dset);
        if (has) return rc;
    }
    return 0;
}

/* Everything the report shows, before anything is written: the tables, the galleries, the masks
 * caches, the photos (--images), the DAVIS results. */
static int read_inputs(report *R, csv_file *tables, report_davis *dn)
{
    for (int t = 0; t < R->n_tables; t++) KC_TRY(csv_read(R->tables[t].path, &tables[t]));
    for (int s = 0; s < R->n_scores; s++) KC_TRY(gallery_load(R, &R->scores[s]));
    R->mr = kc_calloc((size_t)R->n_masks + 1, sizeof *R->mr);
    for (int k = 0; k < R->n_masks; k++) {
        if (!kc_exists(R->masks[k].path))
            return kc_fail("%s: no such file (masks of %s)", R->masks[k].path, R->masks[k].name);
        KC_TRY(cache_open(&R->mr[k], R->masks[k].path, CACHE_FORMAT_MASKS));
    }
    gallery_link(R);
    if (R->images_spec) {
        KC_TRY(dataset_open(&R->ds, R->images_spec));
        R->have_ds = 1;
        for (int j = 0; j < R->ds.n; j++)
            for (int i = 0; i < R->n_img; i++)
                if (!R->img[i].photo && !strcmp(R->img[i].id, R->ds.ids[j])) R->img[i].photo = R->ds.paths[j];
        if (!R->voc_root && !strcmp(R->ds.kind, "voc")) R->voc_root = R->ds.root;
        for (int i = 0; i < R->n_img; i++)
            if (!R->img[i].photo)
                return kc_fail("image %s of %s is not in %s (wrong --images?)", R->img[i].id,
                               R->g[R->img[i].in_gallery[0]].csv_path, R->images_spec);
        for (int i = 0; i < R->n_img; i++) KC_TRY(photo_unchanged(R, &R->img[i]));
    }
    if (R->val_split && R->have_ds && !strcmp(R->ds.kind, "voc") && strcmp(R->val_split, R->ds.split))
        return kc_fail("--val-split %s, but --images %s is of the split %s", R->val_split, R->images_spec, R->ds.split);
    for (int k = 0; k < R->n_davis; k++) KC_TRY(report_davis_load(&R->davis[k], R->davis_split, &dn[k]));
    KC_TRY(report_saliency_load(R));
    if (R->n_davis && R->davis_root && !kc_exists(R->davis_root))
        return kc_fail("%s: no such folder (--davis-root)", R->davis_root);
    return 0;
}

/* The picture options as OUT/.pictures holds them (a new string); sets R->force when they differ
 * from the last run's, and then removes that file, so that a run that stops midway redraws next
 * time too. */
static char *picture_options(report *R, const char *opts_path)
{
    char *opts = kc_strfmt("keycut-report-pictures 2\nthumb-height %d\nquality %d\nimages %s\nvoc %s\ndavis-root %s\n",
                           R->thumb_h, R->quality, R->images_spec ? R->images_spec : "-",
                           R->voc_root ? R->voc_root : "-", R->davis_root ? R->davis_root : "-");
    /* the photos of each saliency gallery come from its first network's dataset */
    for (int g = 0; g < R->n_sg; g++) {
        char *more = kc_strfmt("%ssaliency %s %s\n", opts, R->sg[g].safe, R->sal[R->sg[g].run[0]].spec);
        free(opts);
        opts = more;
    }
    uint8_t *old;
    size_t len;
    R->force = !kc_exists(opts_path) || kc_read_file(opts_path, &old, &len) < 0;
    if (!R->force) {
        R->force = len != strlen(opts) || memcmp(old, opts, len) != 0;
        free(old);
    }
    if (R->force && kc_exists(opts_path)) unlink(opts_path);
    return opts;
}

/* Every page, and report.js and report.css, renamed together at the commit. */
static int write_pages(report *R, const csv_file *tables, const report_figures *figs, const report_davis *dn,
                       kc_buf *davis_page)
{
    kc_outputs_begin();
    kc_buf b = {0};
    for (int g = 0; g < R->n_g; g++) {
        gallery_page(&b, R, g);
        KC_TRY(report_page_write(R, R->g[g].page, &b));
    }
    for (int i = 0; i < R->n_img; i++) {
        report_image_page(&b, R, i);
        char *rel = kc_strfmt("images/%s.html", R->img[i].safe);
        int rc = report_page_write(R, rel, &b);
        free(rel);
        KC_TRY(rc);
    }
    if (R->n_davis) KC_TRY(report_page_write(R, "davis.html", davis_page));
    for (int s = 0; s < R->n_sg; s++) {
        report_saliency_page(&b, R, s);
        KC_TRY(report_page_write(R, R->sg[s].page, &b));
    }
    report_index(&b, R, tables, figs, dn);
    KC_TRY(report_page_write(R, "index.html", &b));
    char *js = report_out_path(R, "report.js"), *css = js ? report_out_path(R, "report.css") : NULL;
    int rc = css ? kc_write_file_atomic(js, report_js, strlen(report_js)) : -1;
    if (rc == 0) rc = kc_write_file_atomic(css, report_css, strlen(report_css));
    if (rc == 0) rc = kc_outputs_commit();
    free(js);
    free(css);
    return rc;
}

/* The test option --layer-hashes: the C reference of every layer report.js draws, VOC's and the
 * saliency galleries', into path (eval/report/report_data.h). */
static int write_layer_hashes(report *R, const char *path)
{
    kc_buf b = {0};
    int rc = report_layer_hashes(R, &b);
    if (rc == 0) rc = report_saliency_hashes(R, &b);
    if (rc == 0) rc = kc_write_file_atomic(path, b.s ? b.s : "", b.n);
    free(b.s);
    return rc;
}

static void report_free(report *R, csv_file *tables, report_davis *dn)
{
    for (int k = 0; k < R->n_davis; k++) report_davis_free(&dn[k]);
    free(dn);
    for (int t = 0; t < R->n_tables; t++) csv_free(&tables[t]);
    free(tables);
    for (int g = 0; g < R->n_g; g++) gallery_free(&R->g[g]);
    free(R->g);
    for (int i = 0; i < R->n_img; i++) {
        free(R->img[i].id);
        free(R->img[i].safe);
        free(R->img[i].in_gallery);
        free(R->img[i].in_entry);
    }
    free(R->img);
    for (int k = 0; k < R->n_masks; k++) cache_close(&R->mr[k]);
    free(R->mr);
    if (R->have_ds) dataset_free(&R->ds);
    report_saliency_free(R);
    report_files_free(R);
}

int report_run(report *R)
{
    double t0 = kc_now();
    csv_file *tables = kc_calloc((size_t)R->n_tables + 1, sizeof *tables);
    report_davis *dn = kc_calloc((size_t)R->n_davis + 1, sizeof *dn);
    KC_TRY(read_inputs(R, tables, dn));
    voc_init();

    kc_lock *lock;
    KC_TRY(kc_lock_folder(&lock, R->out, NULL));
    KC_TRY(report_files_open(R));
    R->exe_mtime = report_mtime("/proc/self/exe");
    char *opts_path = kc_strfmt("%s/.pictures", R->out), *opts = picture_options(R, opts_path);
    kc_on_interrupt("rerun the same command: pictures already drawn are kept");

    progress p;
    progress_init(&p, "report", R->n_img, "images");
    for (int i = 0; i < R->n_img; i++) {
        KC_TRY(report_draw_image(R, i));
        progress_add(&p, 1);
    }
    progress_end(&p);
    KC_TRY(report_write_data(R));
    KC_TRY(report_saliency_draw(R));
    if (R->layer_hashes) KC_TRY(write_layer_hashes(R, R->layer_hashes));
    report_figures figs;
    KC_TRY(report_copy_figures(R, &figs));
    kc_buf davis_page = {0};
    if (R->n_davis) KC_TRY(report_davis_page(R, dn, &davis_page));
    char *opts_out = report_out_path(R, ".pictures");
    KC_TRY(opts_out ? kc_write_file_atomic(opts_out, opts, strlen(opts)) : -1);
    free(opts_out);
    KC_TRY(write_pages(R, tables, &figs, dn, &davis_page));
    KC_TRY(report_files_close(R));
    kc_lock_release(lock);

    char took[32];
    progress_fmt_time(kc_now() - t0, took, sizeof took);
    char removed[64] = "";
    if (R->files->removed)
        snprintf(removed, sizeof removed, "; %ld files of earlier runs removed", R->files->removed);
    kc_info(
        "wrote %s/index.html: %d table%s, %d gallery%s of %d image%s, saliency on %d dataset%s, %d DAVIS result%s, "
        "%d figure%s; %ld picture%s drawn, %ld up to date%s, in %s",
        R->out, R->n_tables, kc_s(R->n_tables), R->n_g, kc_s(R->n_g), R->n_img, kc_s(R->n_img), R->n_sg,
        kc_s(R->n_sg), R->n_davis, kc_s(R->n_davis), figs.n, kc_s(figs.n), R->drawn, kc_s(R->drawn), R->kept, removed, took);
    free(opts);
    free(opts_path);
    report_figures_free(&figs);
    report_free(R, tables, dn);
    return 0;
}
