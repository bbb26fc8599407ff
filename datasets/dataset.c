/* datasets/dataset.c — see dataset.h. */
#include "datasets/dataset.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "pipeline/kc.h"

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void add(kc_dataset *d, int *cap, char *id, char *path)
{
    if (d->n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        d->ids = kc_realloc(d->ids, (size_t)*cap * sizeof *d->ids);
        d->paths = kc_realloc(d->paths, (size_t)*cap * sizeof *d->paths);
    }
    d->ids[d->n] = id;
    d->paths[d->n] = path;
    d->n++;
}

/* Lines of a text file, trimmed, empty lines and '#' comments skipped; first token only when
 * first_token is set (VOC's Main lists carry a second column). */
static int read_lines(const char *path, int first_token, char ***out, int *n_out)
{
    uint8_t *data;
    size_t size;
    KC_TRY(kc_read_file(path, &data, &size));
    if (memchr(data, 0, size)) {
        free(data);
        return kc_fail("%s: not a text file", path);
    }
    int n = 0, cap = 64;
    char **lines = kc_malloc((size_t)cap * sizeof *lines);
    char *save = NULL;
    for (char *l = strtok_r((char *)data, "\r\n", &save); l; l = strtok_r(NULL, "\r\n", &save)) {
        while (*l && isspace((unsigned char)*l)) l++;
        char *e = l + strlen(l);
        while (e > l && isspace((unsigned char)e[-1])) *--e = 0;
        if (!*l || *l == '#') continue;
        if (first_token) {
            char *sp = l;
            while (*sp && !isspace((unsigned char)*sp)) sp++;
            *sp = 0;
        }
        if (n == cap) lines = kc_realloc(lines, (size_t)(cap *= 2) * sizeof *lines);
        lines[n++] = kc_strdup(l);
    }
    free(data);
    *out = lines;
    *n_out = n;
    return 0;
}

int dataset_read_lines(const char *path, int first_token, char ***lines, int *n)
{
    return read_lines(path, first_token, lines, n);
}

static void free_lines(char **l, int n)
{
    for (int i = 0; i < n; i++) free(l[i]);
    free(l);
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int has_image_ext(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot && (!strcasecmp(dot, ".jpg") || !strcasecmp(dot, ".jpeg") || !strcasecmp(dot, ".png"));
}

static char *stem(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char *s = kc_strdup(base);
    char *dot = strrchr(s, '.');
    if (dot && dot != s) *dot = 0;
    return s;
}

static int check_unique(const kc_dataset *d)
{
    int *order = kc_malloc((size_t)d->n * sizeof *order);
    for (int i = 0; i < d->n; i++) order[i] = i;
    /* insertion of indices sorted by id (n log n via qsort on pointers) */
    char **sorted = kc_malloc((size_t)d->n * sizeof *sorted);
    for (int i = 0; i < d->n; i++) sorted[i] = d->ids[i];
    qsort(sorted, (size_t)d->n, sizeof *sorted, cmp_str);
    int rc = 0;
    for (int i = 1; i < d->n && rc == 0; i++)
        if (!strcmp(sorted[i], sorted[i - 1])) {
            const char *a = NULL, *b = NULL;
            for (int j = 0; j < d->n; j++)
                if (!strcmp(d->ids[j], sorted[i])) {
                    if (!a) a = d->paths[j];
                    else if (!b) b = d->paths[j];
                }
            rc = kc_fail("%s: two images have the id '%s': %s and %s", d->spec, sorted[i], a, b);
        }
    free(sorted);
    free(order);
    return rc;
}

char *dataset_voc_split_file(const char *root, const char *split)
{
    char *split_path;
    char *under = kc_strfmt("%s/ImageSets/%s.txt", root, split); /* Main/trainval, Segmentation/val */
    if (is_file(split))
        split_path = kc_strdup(split);
    else if (strchr(split, '/') && is_file(under))
        split_path = kc_strdup(under);
    else if (strchr(split, '/'))
        split_path = kc_strdup(split);
    else
        split_path = dataset_voc_split_path(root, split);
    free(under);
    return split_path;
}

static int open_voc(kc_dataset *d, int *cap)
{
    char *split_path = dataset_voc_split_file(d->root, d->split);
    if (!is_dir(d->root)) {
        free(split_path);
        return kc_fail("%s: VOC root folder not found", d->root);
    }
    char **lines;
    int n;
    if (read_lines(split_path, 1, &lines, &n) < 0) {
        free(split_path);
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        char *p = kc_strfmt("%s/JPEGImages/%s.jpg", d->root, lines[i]);
        if (!is_file(p)) {
            rc = kc_fail("%s: image of id '%s' (line %d of %s) not found", p, lines[i], i + 1, split_path);
            free(p);
        } else {
            add(d, cap, kc_strdup(lines[i]), p);
        }
    }
    free_lines(lines, n);
    free(split_path);
    return rc;
}

char *dataset_voc_split_path(const char *root, const char *split)
{
    char *seg = kc_strfmt("%s/ImageSets/Segmentation/%s.txt", root, split);
    if (is_file(seg)) return seg;
    char *det = kc_strfmt("%s/ImageSets/Main/%s.txt", root, split);
    if (is_file(det)) {
        free(seg);
        return det;
    }
    free(det);
    return seg; /* neither exists: the error names the segmentation split */
}

/* coco:ROOT:LIST: ROOT/<line> per line; id = the file name without extension. */
static int open_coco(kc_dataset *d, int *cap)
{
    if (!is_dir(d->root)) return kc_fail("%s: COCO root folder not found", d->root);
    char **lines;
    int n;
    KC_TRY(read_lines(d->split, 0, &lines, &n));
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        char *p = kc_strfmt("%s/%s", d->root, lines[i]);
        if (!is_file(p)) {
            rc = kc_fail("%s: line %d names a missing image: %s", d->split, i + 1, p);
            free(p);
        } else {
            add(d, cap, stem(lines[i]), p);
        }
    }
    free_lines(lines, n);
    return rc;
}

static int list_dir_sorted(const char *dir, int want_images, char ***out, int *n_out)
{
    DIR *dd = opendir(dir);
    if (!dd) return kc_fail("%s: cannot open folder", dir);
    int n = 0, cap = 64;
    char **names = kc_malloc((size_t)cap * sizeof *names);
    struct dirent *e;
    while ((e = readdir(dd))) {
        if (e->d_name[0] == '.') continue;
        if (want_images && !has_image_ext(e->d_name)) continue;
        if (n == cap) names = kc_realloc(names, (size_t)(cap *= 2) * sizeof *names);
        names[n++] = kc_strdup(e->d_name);
    }
    closedir(dd);
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    *out = names;
    *n_out = n;
    return 0;
}

int dataset_davis_sequences(const char *root, const char *split, char ***seqs, int *n_seq)
{
    char *split_path;
    if (strchr(split, '/') || is_file(split))
        split_path = kc_strdup(split);
    else
        split_path = kc_strfmt("%s/ImageSets/2017/%s.txt", root, split);
    int rc = read_lines(split_path, 1, seqs, n_seq);
    if (rc == 0 && *n_seq == 0) {
        free_lines(*seqs, 0);
        rc = kc_fail("%s: the sequence list is empty", split_path);
    }
    free(split_path);
    return rc;
}

static int open_davis(kc_dataset *d, int *cap)
{
    char **seqs;
    int n_seq;
    if (!is_dir(d->root)) return kc_fail("%s: DAVIS root folder not found", d->root);
    KC_TRY(dataset_davis_sequences(d->root, d->split, &seqs, &n_seq));
    int rc = 0;
    for (int s = 0; s < n_seq && rc == 0; s++) {
        char *dir = kc_strfmt("%s/JPEGImages/480p/%s", d->root, seqs[s]);
        char **frames;
        int nf;
        if (list_dir_sorted(dir, 1, &frames, &nf) < 0) {
            rc = kc_fail("%s: frames of sequence '%s' not found", dir, seqs[s]);
        } else {
            if (nf == 0) rc = kc_fail("%s: sequence '%s' has no frames", dir, seqs[s]);
            for (int f = 0; f < nf && rc == 0; f++) {
                char *st = stem(frames[f]);
                add(d, cap, kc_strfmt("%s/%s", seqs[s], st), kc_strfmt("%s/%s", dir, frames[f]));
                free(st);
            }
            free_lines(frames, nf);
        }
        free(dir);
    }
    free_lines(seqs, n_seq);
    return rc;
}

/* One line for what a dir: dataset leaves out of DIR, when it leaves anything: the files of other
 * extensions, counted by extension (the first few named), and the subfolders (dir: does not
 * recurse).  Hidden entries (a leading '.') are left out silently. */
static void say_skipped(const char *dir)
{
    char **names;
    int n;
    if (list_dir_sorted(dir, 0, &names, &n) < 0) return;
    enum { N_EXT = 4 };
    char ext[N_EXT][16];
    int n_ext = 0, count[N_EXT] = {0}, n_files = 0, n_dirs = 0, n_more = 0;
    for (int i = 0; i < n; i++) {
        if (has_image_ext(names[i])) continue;
        char *p = kc_strfmt("%s/%s", dir, names[i]);
        if (is_dir(p)) n_dirs++;
        else {
            const char *dot = strrchr(names[i], '.');
            char e[16];
            snprintf(e, sizeof e, "%s", dot && dot != names[i] ? dot : "");
            int k = 0;
            while (k < n_ext && strcmp(ext[k], e)) k++;
            if (k == n_ext && n_ext < N_EXT) memcpy(ext[n_ext++], e, sizeof e);
            if (k < n_ext) count[k]++;
            else n_more++;
            n_files++;
        }
        free(p);
    }
    free_lines(names, n);
    if (!n_files && !n_dirs) return;
    kc_buf b = {0};
    if (n_files) {
        kc_buf_printf(&b, "%d file%s of other extensions (", n_files, n_files == 1 ? "" : "s");
        for (int k = 0; k < n_ext; k++)
            kc_buf_printf(&b, "%s%d %s", k ? ", " : "", count[k], ext[k][0] ? ext[k] : "without one");
        if (n_more) kc_buf_printf(&b, ", %d more", n_more);
        kc_buf_printf(&b, "; only .jpg .jpeg .png are read)%s", n_dirs ? " and " : "");
    }
    if (n_dirs) kc_buf_printf(&b, "%d subfolder%s (dir: does not look inside folders)", n_dirs, n_dirs == 1 ? "" : "s");
    kc_info("dir:%s: skipped %s", dir, b.s);
    free(b.s);
}

static int open_dir(kc_dataset *d, int *cap)
{
    if (!is_dir(d->root)) return kc_fail(kc_exists(d->root) ? "%s: not a folder" : "%s: folder not found", d->root);
    char **names;
    int n;
    KC_TRY(list_dir_sorted(d->root, 1, &names, &n));
    for (int i = 0; i < n; i++) add(d, cap, stem(names[i]), kc_strfmt("%s/%s", d->root, names[i]));
    free_lines(names, n);
    say_skipped(d->root);
    return 0;
}

static int open_list(kc_dataset *d, int *cap)
{
    char **lines;
    int n;
    KC_TRY(read_lines(d->root, 0, &lines, &n));
    char *dir = kc_strdup(d->root);
    char *slash = strrchr(dir, '/');
    if (slash) slash[1] = 0;
    else dir[0] = 0;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        char *p = lines[i][0] == '/' ? kc_strdup(lines[i]) : kc_strfmt("%s%s", dir, lines[i]);
        if (!is_file(p)) {
            rc = kc_fail("%s: line %d names a missing file: %s", d->root, i + 1, p);
            free(p);
        } else {
            add(d, cap, stem(lines[i]), p);
        }
    }
    free(dir);
    free_lines(lines, n);
    return rc;
}

/* The layouts of saliency:ROOT (dataset.h): image folder, mask folder, the dataset's name. */
static const char *const SAL_LAYOUTS[][3] = {
    {"images", "ground_truth_mask", "ECSSD"},
    {"DUTS-TE-Image", "DUTS-TE-Mask", "DUTS-TE"},
    {"DUT-OMRON-image", "pixelwiseGT-new-PNG", "DUT-OMRON"},
    {"img", "gt", NULL},
};
enum { N_SAL_LAYOUTS = sizeof SAL_LAYOUTS / sizeof SAL_LAYOUTS[0] };

static int open_saliency(kc_dataset *d, int *cap)
{
    if (!is_dir(d->root)) return kc_fail(kc_exists(d->root) ? "%s: not a folder" : "%s: folder not found", d->root);
    int found = -1;
    for (int k = 0; k < N_SAL_LAYOUTS; k++) {
        char *img = kc_strfmt("%s/%s", d->root, SAL_LAYOUTS[k][0]);
        int here = is_dir(img);
        free(img);
        if (!here) continue;
        if (found >= 0)
            return kc_fail("%s: holds two saliency layouts (%s/ and %s/): give the root of one dataset", d->root,
                           SAL_LAYOUTS[found][0], SAL_LAYOUTS[k][0]);
        found = k;
    }
    if (found < 0)
        return kc_fail("%s: no saliency layout found (expected images/ + ground_truth_mask/ (ECSSD), DUTS-TE-Image/ + "
                       "DUTS-TE-Mask/, DUT-OMRON-image/ + pixelwiseGT-new-PNG/, or img/ + gt/)", d->root);
    char *img_dir = kc_strfmt("%s/%s", d->root, SAL_LAYOUTS[found][0]);
    d->gt_dir = kc_strfmt("%s/%s", d->root, SAL_LAYOUTS[found][1]);
    if (!is_dir(d->gt_dir)) {
        free(img_dir);
        return kc_fail("%s: ground-truth folder not found (the layout of %s/ has its masks there)", d->gt_dir,
                       SAL_LAYOUTS[found][0]);
    }
    if (SAL_LAYOUTS[found][2]) {
        d->split = kc_strdup(SAL_LAYOUTS[found][2]);
    } else { /* TokenCut's img/ + gt/: the dataset is named after its folder */
        char *r = kc_strdup(d->root);
        size_t len = strlen(r);
        while (len > 1 && r[len - 1] == '/') r[--len] = 0;
        const char *base = strrchr(r, '/');
        d->split = kc_strdup(base && base[1] ? base + 1 : r);
        free(r);
    }
    char **names;
    int n;
    int rc = list_dir_sorted(img_dir, 1, &names, &n);
    if (rc == 0) {
        for (int i = 0; i < n; i++) add(d, cap, stem(names[i]), kc_strfmt("%s/%s", img_dir, names[i]));
        free_lines(names, n);
    }
    free(img_dir);
    return rc;
}

char *dataset_saliency_gt(const kc_dataset *d, int i)
{
    const char *base = strrchr(d->paths[i], '/');
    char *st = stem(base ? base + 1 : d->paths[i]);
    char *p = kc_strfmt("%s/%s.png", d->gt_dir ? d->gt_dir : ".", st);
    free(st);
    return p;
}

int dataset_open(kc_dataset *d, const char *spec)
{
    memset(d, 0, sizeof *d);
    d->spec = kc_strdup(spec);
    const char *colon = strchr(spec, ':');
    if (!colon || colon - spec > 8)
        return kc_fail("dataset '%s': expected voc:ROOT:SPLIT, davis:ROOT:SPLIT, coco:ROOT:LIST, dir:DIR, list:FILE or "
                       "saliency:ROOT", spec);
    snprintf(d->kind, sizeof d->kind, "%.*s", (int)(colon - spec), spec);
    const char *rest = colon + 1;
    int cap = 0, rc;
    if (!strcmp(d->kind, "voc") || !strcmp(d->kind, "davis") || !strcmp(d->kind, "coco")) {
        const char *last = strrchr(rest, ':');
        if (!last || last == rest || !last[1])
            return kc_fail("dataset '%s': expected %s:ROOT:SPLIT", spec, d->kind);
        d->root = kc_malloc((size_t)(last - rest) + 1);
        memcpy(d->root, rest, (size_t)(last - rest));
        d->root[last - rest] = 0;
        d->split = kc_strdup(last + 1);
        rc = !strcmp(d->kind, "voc") ? open_voc(d, &cap) : !strcmp(d->kind, "coco") ? open_coco(d, &cap) : open_davis(d, &cap);
    } else if (!strcmp(d->kind, "dir") || !strcmp(d->kind, "list") || !strcmp(d->kind, "saliency")) {
        if (!*rest) return kc_fail("dataset '%s': missing path", spec);
        d->root = kc_strdup(rest);
        rc = !strcmp(d->kind, "dir") ? open_dir(d, &cap) : !strcmp(d->kind, "list") ? open_list(d, &cap) : open_saliency(d, &cap);
    } else {
        return kc_fail("dataset '%s': unknown kind '%s' (voc, davis, coco, dir, list or saliency)", spec, d->kind);
    }
    if (rc < 0) return rc;
    if (d->n == 0) return kc_fail("dataset '%s' has no images", spec);
    return check_unique(d);
}

void dataset_free(kc_dataset *d)
{
    for (int i = 0; i < d->n; i++) {
        free(d->ids[i]);
        free(d->paths[i]);
    }
    free(d->ids);
    free(d->paths);
    free(d->spec);
    free(d->root);
    free(d->split);
    free(d->gt_dir);
    memset(d, 0, sizeof *d);
}
