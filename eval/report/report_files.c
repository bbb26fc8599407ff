/* eval/report/report_files.c — the report folder's files: this run's record, earlier runs' list and
 * journal, and the removal of what only earlier runs wrote.  See report_files.h. */
#include "eval/report/report_files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipeline/kc.h"

static const char list_magic[] = "keycut-report-files 1\n";
static const char journal_magic[] = "keycut-report-files-journal 1\n";

/* The files of a report of a kc-report from before the list (report.h's layout), matched with
 * fnmatch(FNM_PATHNAME | FNM_PERIOD): '*' matches no '/' and no leading '.'. */
static const char *const legacy_layout[] = {
    "index.html", "davis.html", "report.js", "report.css", ".pictures", "gallery-*.html", "images/*.html",
    "photo/*.jpg", "data/*/*.js", "davis/*/*/*.jpg", "figures/*.png", "figures/*.svg",
};

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void add(char ***list, int *n, int *cap, const char *rel)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 256;
        *list = kc_realloc(*list, sizeof(char *) * (size_t)*cap);
    }
    (*list)[(*n)++] = kc_strdup(rel);
}

/* Sorts list (n) and drops repeats. */
static void sort_unique(char **list, int *n)
{
    if (*n == 0) return;   // (list may be NULL then: qsort must not be given it)
    qsort(list, (size_t)*n, sizeof(char *), cmp_str);
    int k = 0;
    for (int i = 0; i < *n; i++) {
        if (k && !strcmp(list[k - 1], list[i])) free(list[i]);
        else list[k++] = list[i];
    }
    *n = k;
}

static int contains(char *const *list, int n, const char *rel)
{
    if (n == 0) return 0;   // (list may be NULL then)
    return bsearch(&rel, list, (size_t)n, sizeof(char *), cmp_str) != NULL;
}

/* 1 when rel may name a file of the report: relative, no empty, "." or ".." part, no newline, and
 * not the lock, the list or the journal. */
static int is_report_path(const char *rel)
{
    if (!*rel || strchr(rel, '\n') || !strncmp(rel, ".keycut", 7)) return 0;
    for (const char *p = rel;;) {
        size_t n = strcspn(p, "/");
        if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) return 0;
        if (!p[n]) return 1;
        p += n + 1;
    }
}

/* The paths of the list or journal `path` (its first line magic) into owned.  A journal's last
 * line may be cut short (a run killed while adding it): it is skipped. */
static int read_list(report_files *F, const char *path, const char *magic, int journal)
{
    uint8_t *data;
    size_t size;
    KC_TRY(kc_read_file(path, &data, &size));
    char *text = (char *)data, *end = text + size;
    size_t lm = strlen(magic);
    int rc = 0;
    if (size < lm || memcmp(text, magic, lm) != 0)
        rc = kc_fail("%s: not a list of kc-report's files (its first line must be '%.*s')", path, (int)lm - 1, magic);
    int line = 2;
    for (char *p = text + lm; rc == 0 && p < end; line++) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl && journal) break;
        if (!nl) nl = end;
        *nl = 0;
        if (journal && !*p) {
            /* an empty line: the newline a later run added after a line cut short */
        } else if (!is_report_path(p) || strlen(p) != (size_t)(nl - p))
            rc = kc_fail("%s: line %d is not a path of a file in the report folder", path, line);
        else add(&F->owned, &F->n_owned, &F->cap_owned, p);
        p = nl + 1;
    }
    free(data);
    return rc;
}

/* A report of a kc-report from before the list: the files of the layout, recursively from the
 * folder rel of out ("" for out itself), into owned. */
static int adopt_layout(report_files *F, const char *out, const char *rel, int depth)
{
    char *dir = *rel ? kc_strfmt("%s/%s", out, rel) : kc_strdup(out);
    DIR *d = opendir(dir);
    if (!d) {
        int rc = kc_fail("%s: cannot read the folder (%s)", dir, strerror(errno));
        free(dir);
        return rc;
    }
    int rc = 0;
    for (struct dirent *de; rc == 0 && (de = readdir(d));) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        char *sub = *rel ? kc_strfmt("%s/%s", rel, de->d_name) : kc_strdup(de->d_name);
        char *path = kc_strfmt("%s/%s", dir, de->d_name);
        struct stat st;
        int kind = lstat(path, &st) != 0 ? 0 : S_ISDIR(st.st_mode) ? 'd' : S_ISREG(st.st_mode) ? 'f' : 0;
        if (kind == 'd' && depth < 3) rc = adopt_layout(F, out, sub, depth + 1); /* davis/<net>/<seq>/ at most */
        else if (kind == 'f')
            for (size_t k = 0; k < sizeof legacy_layout / sizeof *legacy_layout; k++)
                if (fnmatch(legacy_layout[k], sub, FNM_PATHNAME | FNM_PERIOD) == 0) {
                    add(&F->owned, &F->n_owned, &F->cap_owned, sub);
                    break;
                }
        free(sub);
        free(path);
    }
    closedir(d);
    free(dir);
    return rc;
}

/* 1 when the folder holds anything but the lock's files. */
static int has_files(const char *out)
{
    DIR *d = opendir(out);
    int any = 0;
    for (struct dirent *de; d && !any && (de = readdir(d));)
        any = strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && strncmp(de->d_name, ".keycut.lock", 12);
    if (d) closedir(d);
    return any;
}

/* 1 when OUT/.pictures is kc-report's (report.c's picture options). */
static int has_pictures_file(const char *out)
{
    char *path = kc_strfmt("%s/.pictures", out);
    uint8_t *text = NULL;
    size_t len = 0;
    static const char magic[] = "keycut-report-pictures ";
    int ours = kc_exists(path) && kc_read_file(path, &text, &len) == 0 && len >= strlen(magic) &&
               !memcmp(text, magic, strlen(magic));
    free(text);
    free(path);
    return ours;
}

int report_files_open(report *R)
{
    report_files *F = R->files = kc_calloc(1, sizeof *F);
    F->journal = -1;
    char *list = kc_strfmt("%s/%s", R->out, REPORT_FILES_LIST);
    char *journal = kc_strfmt("%s/%s", R->out, REPORT_FILES_JOURNAL);
    int have_list = kc_exists(list), have_journal = kc_exists(journal), rc = 0;
    if (have_list) rc = read_list(F, list, list_magic, 0);
    if (rc == 0 && have_journal) rc = read_list(F, journal, journal_magic, 1);
    if (rc == 0 && !have_list && !have_journal) {
        if (has_pictures_file(R->out)) rc = adopt_layout(F, R->out, "", 0);
        else if (has_files(R->out))
            rc = kc_fail("%s: holds files that no kc-report run wrote (it has no %s, the list of an earlier run's "
                         "files): give a new or empty folder",
                         R->out, REPORT_FILES_LIST);
    }
    sort_unique(F->owned, &F->n_owned);
    free(list);
    free(journal);
    return rc;
}

int report_files_write(report *R, const char *rel)
{
    report_files *F = R->files;
    if (!is_report_path(rel)) return kc_fail("%s: '%s' is not a file name in the report folder", R->out, rel);
    char *journal = kc_strfmt("%s/%s", R->out, REPORT_FILES_JOURNAL);
    int rc = 0;
    struct stat st;
    if (F->journal < 0) {
        /* a journal left by a killed run is added to (read by open); its last line may be cut short,
         * so a newline first ends it */
        F->journal = open(journal, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        const char *head = F->journal >= 0 && fstat(F->journal, &st) == 0 && st.st_size == 0 ? journal_magic : "\n";
        if (F->journal < 0) rc = kc_fail("%s: cannot create (%s)", journal, strerror(errno));
        else if (write(F->journal, head, strlen(head)) != (ssize_t)strlen(head))
            rc = kc_fail("%s: cannot write (%s)", journal, strerror(errno));
    }
    /* one write per line: a run killed midway leaves whole lines (and at worst a last one cut short) */
    char *line = kc_strfmt("%s\n", rel);
    if (rc == 0 && write(F->journal, line, strlen(line)) != (ssize_t)strlen(line))
        rc = kc_fail("%s: cannot write (%s)", journal, strerror(errno));
    if (rc == 0) add(&F->done, &F->n_done, &F->cap_done, rel);
    free(line);
    free(journal);
    return rc;
}

void report_files_keep(report *R, const char *rel)
{
    report_files *F = R->files;
    add(&F->done, &F->n_done, &F->cap_done, rel);
}

/* Removes OUT/rel when it is a regular file and no folder on its way is a symbolic link; then its
 * folders that this left empty (never OUT itself).  1 when it removed the file. */
static int remove_file(const char *out, const char *rel)
{
    char *path = kc_strfmt("%s/%s", out, rel);
    size_t lo = strlen(out) + 1;
    struct stat st;
    int safe = 1;
    for (char *s = strchr(path + lo, '/'); s && safe; s = strchr(s + 1, '/')) {
        *s = 0;
        safe = lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
        *s = '/';
    }
    int removed = safe && lstat(path, &st) == 0 && S_ISREG(st.st_mode);
    if (removed && unlink(path) != 0) {
        kc_warn("%s: cannot remove this file of an earlier run (%s)", path, strerror(errno));
        removed = 0;
    }
    for (char *s = strrchr(path + lo, '/'); removed && s; s = strrchr(path + lo, '/')) {
        *s = 0;
        if (rmdir(path) != 0) break;
    }
    free(path);
    return removed;
}

int report_files_close(report *R)
{
    report_files *F = R->files;
    sort_unique(F->done, &F->n_done);
    for (int i = 0; i < F->n_owned; i++)
        if (!contains(F->done, F->n_done, F->owned[i])) F->removed += remove_file(R->out, F->owned[i]);
    /* the temporaries a killed run left beside its files */
    for (int pass = 0; pass < 2; pass++) {
        char **list = pass ? F->done : F->owned;
        for (int i = 0, n = pass ? F->n_done : F->n_owned; i < n; i++) {
            char *tmp = kc_strfmt("%s.tmp", list[i]);
            F->removed += remove_file(R->out, tmp);
            free(tmp);
        }
    }
    kc_buf b = {0};
    kc_buf_printf(&b, "%s", list_magic);
    for (int i = 0; i < F->n_done; i++) kc_buf_printf(&b, "%s\n", F->done[i]);
    char *list = kc_strfmt("%s/%s", R->out, REPORT_FILES_LIST);
    char *journal = kc_strfmt("%s/%s", R->out, REPORT_FILES_JOURNAL);
    int rc = kc_write_file_atomic(list, b.s, b.n);
    if (rc == 0) {
        if (F->journal >= 0) close(F->journal);
        F->journal = -1;
        if (unlink(journal) != 0 && errno != ENOENT) rc = kc_fail("%s: cannot remove (%s)", journal, strerror(errno));
        kc_fsync_dir_of(list);
    }
    free(b.s);
    free(list);
    free(journal);
    return rc;
}

void report_files_free(report *R)
{
    report_files *F = R->files;
    if (!F) return;
    if (F->journal >= 0) close(F->journal);
    for (int i = 0; i < F->n_done; i++) free(F->done[i]);
    for (int i = 0; i < F->n_owned; i++) free(F->owned[i]);
    free(F->done);
    free(F->owned);
    free(F);
    R->files = NULL;
}

char *report_out_path(report *R, const char *rel)
{
    if (report_files_write(R, rel) < 0) return NULL;
    char *path = kc_strfmt("%s/%s", R->out, rel), *dir = kc_strdup(path);
    *strrchr(dir, '/') = 0;
    int rc = kc_mkdirs(dir);
    free(dir);
    if (rc == 0) return path;
    free(path);
    return NULL;
}
