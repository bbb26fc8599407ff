/* datasets/davis_gt.c — DAVIS-2017 layout (see davis_gt.h). */
#include "datasets/davis_gt.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pipeline/images/image.h"
#include "pipeline/kc.h"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void davis_free_names(char **names, int n)
{
    if (!names) return;
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
}

int davis_read_split(const char *root, const char *split, char ***seqs, int *n_seq)
{
    struct stat st;
    char *path;
    *seqs = NULL;
    *n_seq = 0;
    if (strchr(split, '/') && stat(split, &st) == 0 && S_ISREG(st.st_mode))
        path = kc_strdup(split);
    else
        path = kc_strfmt("%s/ImageSets/2017/%s.txt", root, split);
    uint8_t *data;
    size_t size;
    if (kc_read_file(path, &data, &size) < 0) {
        kc_fail("%s: cannot read the DAVIS sequence list (%s)", path, strerror(errno));
        free(path);
        return -1;
    }
    int cap = 16, n = 0;
    char **names = kc_malloc(sizeof *names * cap);
    char *save = NULL;
    for (char *line = strtok_r((char *)data, "\r\n", &save); line; line = strtok_r(NULL, "\r\n", &save)) {
        char *a = line, *b = line + strlen(line);
        while (*a == ' ' || *a == '\t') a++;
        while (b > a && (b[-1] == ' ' || b[-1] == '\t')) b--;
        if (b == a) continue;
        *b = 0;
        if (strchr(a, '/') || strcmp(a, "..") == 0) {
            kc_fail("%s: bad sequence name '%s'", path, a);
            davis_free_names(names, n);
            free(data);
            free(path);
            return -1;
        }
        if (n == cap) names = kc_realloc(names, sizeof *names * (cap *= 2));
        names[n++] = kc_strdup(a);
    }
    free(data);
    if (n == 0) {
        kc_fail("%s: the sequence list is empty", path);
        free(names);
        free(path);
        return -1;
    }
    free(path);
    *seqs = names;
    *n_seq = n;
    return 0;
}

int davis_list_frames(const char *dir, const char *ext, char ***names_out, int *n_out)
{
    *names_out = NULL;
    *n_out = 0;
    DIR *d = opendir(dir);
    if (!d) return kc_fail("%s: cannot open folder (%s)", dir, strerror(errno));
    size_t le = strlen(ext);
    int cap = 64, n = 0;
    char **names = kc_malloc(sizeof *names * cap);
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l <= le || strcmp(e->d_name + l - le, ext) != 0 || e->d_name[0] == '.') continue;
        if (n == cap) names = kc_realloc(names, sizeof *names * (cap *= 2));
        names[n] = kc_strdup(e->d_name);
        names[n][l - le] = 0;
        n++;
    }
    closedir(d);
    if (n == 0) {
        free(names);
        return kc_fail("%s: no *%s file", dir, ext);
    }
    qsort(names, n, sizeof *names, cmp_str);
    *names_out = names;
    *n_out = n;
    return 0;
}

char *davis_annotation_dir(const char *root, const char *seq)
{
    return kc_strfmt("%s/Annotations/480p/%s", root, seq);
}

char *davis_image_dir(const char *root, const char *seq)
{
    return kc_strfmt("%s/JPEGImages/480p/%s", root, seq);
}

int davis_read_labels(const char *path, int *w, int *h, uint8_t **labels)
{
    return image_read_png_index(path, w, h, labels);
}
