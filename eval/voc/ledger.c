/* eval/voc/ledger.c — append-only record of label openings.  See ledger.h. */
#include "eval/voc/ledger.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/kc.h"

static const char header[] =
    LEDGER_MAGIC "\ttime\tsplit\tsplit_sha256\tnetworks\tsettings\tsummary_sha256\n";

static char *clean(const char *s)
{
    char *c = kc_strdup(s ? s : "");
    for (char *p = c; *p; p++)
        if (*p == '\t' || *p == '\n' || *p == '\r') *p = ' ';
    return c;
}

static int write_all(int fd, const char *path, const char *buf, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return kc_fail("%s: write failed (%s)", path, strerror(errno));
        }
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

int ledger_append(const char *path, ledger_entry *e)
{
    if (!e->time[0]) kc_utc_now(e->time);
    /* A new ledger gets its header first; O_EXCL makes exactly one creator write it. */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND, 0644);
    if (fd >= 0) {
        int rc = write_all(fd, path, header, sizeof header - 1);
        close(fd);
        KC_TRY(rc);
    } else if (errno != EEXIST) {
        return kc_fail("%s: cannot create the ledger (%s)", path, strerror(errno));
    }
    fd = open(path, O_WRONLY | O_APPEND);
    if (fd < 0) return kc_fail("%s: cannot open the ledger (%s)", path, strerror(errno));
    char *split = clean(e->split), *nets = clean(e->networks);
    char *line = kc_strfmt("%s\t%s\t%s\t%s\t%d\t%s\n", e->time, split, e->split_sha256, nets, e->n_settings,
                           e->summary_sha256);
    /* one write() so concurrent appenders never interleave */
    ssize_t w = write(fd, line, strlen(line));
    int rc = 0;
    if (w != (ssize_t)strlen(line))
        rc = kc_fail("%s: appending to the ledger failed (%s)", path, w < 0 ? strerror(errno) : "short write");
    if (rc == 0 && fsync(fd) != 0) rc = kc_fail("%s: fsync failed (%s)", path, strerror(errno));
    close(fd);
    free(split);
    free(nets);
    free(line);
    return rc;
}

void ledger_free(ledger_entry *es, int n)
{
    for (int i = 0; i < n; i++) {
        free(es[i].split);
        free(es[i].networks);
    }
    free(es);
}

static int is_hex64(const char *s) { return strlen(s) == 64 && strspn(s, "0123456789abcdef") == 64; }

int ledger_read(const char *path, ledger_entry **out, int *n_out)
{
    uint8_t *data;
    size_t size;
    *out = NULL;
    *n_out = 0;
    KC_TRY(kc_read_file(path, &data, &size));
    char *s = (char *)data;
    if (strncmp(s, LEDGER_MAGIC "\t", strlen(LEDGER_MAGIC) + 1)) {
        free(data);
        return kc_fail("%s: not a keycut ledger (first line must start with '%s')", path, LEDGER_MAGIC);
    }
    ledger_entry *es = NULL;
    int n = 0, cap = 0, line = 0;
    while (*s) {
        char *e = strchr(s, '\n');
        if (e) *e = 0;
        line++;
        if (line > 1 && *s) {
            char *f[7];
            int k = 0;
            char *p = s;
            f[k++] = p;
            while (k < 7 && (p = strchr(p, '\t'))) {
                *p++ = 0;
                f[k++] = p;
            }
            char *end = NULL;
            long ns = k == 6 ? strtol(f[4], &end, 10) : -1;
            if (k != 6 || strlen(f[0]) >= 32 || !is_hex64(f[2]) || !is_hex64(f[5]) || !end || *end || ns < 0) {
                kc_fail("%s:%d: malformed ledger line", path, line);
                ledger_free(es, n);
                free(data);
                return -1;
            }
            if (n == cap) {
                cap = cap ? 2 * cap : 16;
                es = kc_realloc(es, (size_t)cap * sizeof *es);
            }
            ledger_entry *le = &es[n++];
            memset(le, 0, sizeof *le);
            snprintf(le->time, sizeof le->time, "%s", f[0]);
            le->split = kc_strdup(f[1]);
            memcpy(le->split_sha256, f[2], 65);
            le->networks = kc_strdup(f[3]);
            le->n_settings = (int)ns;
            memcpy(le->summary_sha256, f[5], 65);
        }
        if (!e) break;
        s = e + 1;
    }
    free(data);
    *out = es;
    *n_out = n;
    return 0;
}

int ledger_count(const ledger_entry *es, int n, char ***split, char ***hash, int **runs, int *n_splits)
{
    char **sp = kc_malloc((size_t)(n + 1) * sizeof *sp), **hs = kc_malloc((size_t)(n + 1) * sizeof *hs);
    int *r = kc_calloc((size_t)(n + 1), sizeof *r), m = 0;
    for (int i = 0; i < n; i++) {
        int j = 0;
        while (j < m && strcmp(hs[j], es[i].split_sha256)) j++;
        if (j == m) {
            hs[m] = kc_strdup(es[i].split_sha256);
            sp[m] = NULL;
            m++;
        }
        free(sp[j]);
        sp[j] = kc_strdup(es[i].split);
        r[j]++;
    }
    *split = sp;
    *hash = hs;
    *runs = r;
    *n_splits = m;
    return 0;
}

int ledger_print(const char *path)
{
    if (!kc_exists(path)) {
        printf("ledger %s: absent (no labels opened through it)\n", path);
        return 0;
    }
    ledger_entry *es;
    int ne;
    KC_TRY(ledger_read(path, &es, &ne));
    char **sp, **sh;
    int *runs, n_sp;
    ledger_count(es, ne, &sp, &sh, &runs, &n_sp);
    printf("ledger %s: %d scoring runs opened labels (kc-score, kc-probe eval, kc-saliency)\n", path, ne);
    for (int k = 0; k < n_sp; k++) {
        printf("  %-40s sha256 %.12s  opened %d time%s\n", sp[k], sh[k], runs[k], runs[k] == 1 ? "" : "s");
        free(sp[k]);
        free(sh[k]);
    }
    free(sp);
    free(sh);
    free(runs);
    ledger_free(es, ne);
    return 0;
}
