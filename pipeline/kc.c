/* pipeline/kc.c — see kc.h. */
#include "pipeline/kc.h"

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static _Thread_local char err_buf[2048];
static const char *prog_name = "keycut";
static char *cmdline_buf;

int kc_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err_buf, sizeof err_buf, fmt, ap);
    va_end(ap);
    return -1;
}

int kc_fail_prefix(const char *fmt, ...)
{
    char prefix[1024], old[sizeof err_buf];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err_buf, sizeof old);
    snprintf(err_buf, sizeof err_buf, "%.1000s: %.1000s", prefix, old);
    return -1;
}

const char *kc_error(void) { return err_buf; }

void kc_set_error(const char *msg) { snprintf(err_buf, sizeof err_buf, "%s", msg); }

void kc_set_prog(const char *name) { prog_name = name; }
const char *kc_prog(void) { return prog_name; }

void kc_keep_freed_memory(void)
{
#ifdef __GLIBC__
    /* glibc serves requests above the mmap threshold with mmap (128 KiB to start, raised only as
     * such blocks are freed) and returns a heap's free top above the trim threshold: both give
     * the next image fresh pages.  32 MiB is glibc's largest threshold on 64-bit (larger requests
     * still get their own mapping); no trimming. */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, -1);
#endif
}

/* One line on stderr: "<prog>: <tag><message>". */
static void log_line(const char *tag, const char *fmt, va_list ap)
{
    char line[4096];
    vsnprintf(line, sizeof line, fmt, ap);
    fprintf(stderr, "%s: %s%s\n", prog_name, tag, line);
}

void kc_info(const char *fmt, ...)
{
    const char *q = getenv("KC_QUIET");
    if (q && *q && *q != '0') return;
    va_list ap;
    va_start(ap, fmt);
    log_line("", fmt, ap);
    va_end(ap);
}

void kc_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_line("warning: ", fmt, ap);
    va_end(ap);
}

void kc_die(void)
{
    fprintf(stderr, "%s: error: %s\n", prog_name, err_buf[0] ? err_buf : "failed");
    /* _exit, not exit: library cleanup handlers (HDF5 flushing half-written pieces on a full
     * disk) must not run after a failure; finished work is already on disk. */
    fflush(NULL);
    _exit(1);
}

void kc_die_msg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err_buf, sizeof err_buf, fmt, ap);
    va_end(ap);
    kc_die();
}

static void oom(size_t n)
{
    fprintf(stderr, "%s: error: out of memory allocating %zu bytes\n", prog_name, n);
    abort();
}

void *kc_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) oom(n);
    return p;
}

void *kc_calloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) oom(n * size);
    return p;
}

void *kc_realloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) oom(n);
    return q;
}

char *kc_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = kc_malloc(n);
    memcpy(d, s, n);
    return d;
}

char *kc_strfmt(const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = kc_malloc((size_t)n + 1);
    vsnprintf(s, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return s;
}

void kc_buf_printf(kc_buf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (b->s && (size_t)k < b->cap - b->n) {
            b->n += (size_t)k;
            return;
        }
        b->cap = (b->cap + (size_t)k + 1) * 2;
        b->s = kc_realloc(b->s, b->cap);
    }
}

int kc_read_file(const char *path, uint8_t **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return kc_fail("%s: cannot open (%s)", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return kc_fail("%s: not a regular file", path);
    }
    size_t n = (size_t)st.st_size;
    uint8_t *buf = kc_malloc(n + 1);
    if (n && fread(buf, 1, n, f) != n) {
        free(buf);
        fclose(f);
        return kc_fail("%s: read error", path);
    }
    fclose(f);
    buf[n] = 0;
    *data = buf;
    *size = n;
    return 0;
}

int kc_write_file_atomic(const char *path, const void *data, size_t size)
{
    char *tmp = kc_strfmt("%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        kc_fail("%s: cannot create (%s)", tmp, strerror(errno));
        free(tmp);
        return -1;
    }
    const uint8_t *p = data;
    size_t left = size;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR) continue;
            kc_fail("%s: write failed (%s)", tmp, strerror(errno));
            close(fd);
            unlink(tmp);
            free(tmp);
            return -1;
        }
        p += w;
        left -= (size_t)w;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        kc_fail("%s: write failed (%s)", tmp, strerror(errno));
        unlink(tmp);
        free(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        kc_fail("%s: cannot rename into place (%s)", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return -1;
    }
    free(tmp);
    return 0;
}

int kc_mkdirs(const char *path)
{
    char *p = kc_strdup(path);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/') continue;
        *s = 0;
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            kc_fail("%s: cannot create folder (%s)", p, strerror(errno));
            free(p);
            return -1;
        }
        *s = '/';
    }
    if (mkdir(p, 0755) != 0 && errno != EEXIST) {
        kc_fail("%s: cannot create folder (%s)", p, strerror(errno));
        free(p);
        return -1;
    }
    free(p);
    return 0;
}

int kc_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

double kc_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void kc_utc_now(char out[32])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void kc_set_cmdline(int argc, char **argv)
{
    size_t n = 1;
    for (int i = 0; i < argc; i++) n += strlen(argv[i]) + 1;
    free(cmdline_buf);
    cmdline_buf = kc_malloc(n);
    cmdline_buf[0] = 0;
    for (int i = 0; i < argc; i++) {
        if (i) strcat(cmdline_buf, " ");
        strcat(cmdline_buf, argv[i]);
    }
}

const char *kc_cmdline(void) { return cmdline_buf ? cmdline_buf : ""; }

static char interrupt_msg[1024];

static void on_signal(int sig)
{
    (void)sig;
    ssize_t w = write(2, interrupt_msg, strlen(interrupt_msg));
    (void)w;
    _exit(130);
}

void kc_on_interrupt(const char *hint)
{
    snprintf(interrupt_msg, sizeof interrupt_msg, "\n%s: interrupted; %s\n", prog_name, hint);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* a file-size limit makes writes fail (EFBIG) and be reported, instead of killing us */
    signal(SIGXFSZ, SIG_IGN);
}
