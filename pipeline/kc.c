/* pipeline/kc.c — see kc.h. */
#include "pipeline/kc.h"

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <pthread.h>
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

static void install_signals(void);

void kc_set_prog(const char *name)
{
    prog_name = name;
    install_signals();
}
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
     * disk) must not run after a failure; finished work is already on disk.  The temporary
     * files in flight and this run's lock files go. */
    fflush(NULL);
    kc_cleanup_run();
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

int kc_read_text(const char *path, uint8_t **data, size_t *size)
{
    KC_TRY(kc_read_file(path, data, size));
    if (memchr(*data, 0, *size)) {
        free(*data);
        *data = NULL;
        return kc_fail("%s: not a text file (NUL byte)", path);
    }
    return 0;
}

/* ---- deferred renames (kc_outputs_begin) ----------------------------------------------------- */
static int deferring;
static struct deferred {
    char *tmp, *path;
    int slot;
} *deferred;
static int n_deferred, cap_deferred;

void kc_outputs_begin(void) { deferring = 1; }

void kc_fsync_dir_of(const char *path)
{
    char *dir = kc_strdup(path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    else strcpy(dir, ".");
    int fd = open(dir, O_RDONLY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(dir);
}

int kc_rename_output(const char *tmp, const char *path)
{
    if (deferring) {
        for (int i = 0; i < n_deferred; i++)
            if (!strcmp(deferred[i].path, path)) { /* written twice: the later one counts */
                if (strcmp(deferred[i].tmp, tmp) != 0) {
                    unlink(deferred[i].tmp);
                    kc_cleanup_drop(deferred[i].slot);
                    free(deferred[i].tmp);
                    deferred[i].tmp = kc_strdup(tmp);
                    deferred[i].slot = kc_cleanup_add(tmp);
                }
                return 0;
            }
        if (n_deferred == cap_deferred) {
            cap_deferred = cap_deferred ? 2 * cap_deferred : 16;
            deferred = kc_realloc(deferred, (size_t)cap_deferred * sizeof *deferred);
        }
        deferred[n_deferred++] = (struct deferred){kc_strdup(tmp), kc_strdup(path), kc_cleanup_add(tmp)};
        return 0;
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return kc_fail("%s: cannot rename into place (%s)", path, strerror(e));
    }
    return 0;
}

int kc_outputs_commit(void)
{
    int rc = 0;
    for (int i = 0; i < n_deferred; i++) {
        if (rc == 0 && rename(deferred[i].tmp, deferred[i].path) != 0)
            rc = kc_fail("%s: cannot rename into place (%s)", deferred[i].path, strerror(errno));
        if (rc < 0) unlink(deferred[i].tmp);
    }
    for (int i = 0; i < n_deferred; i++) {
        /* each folder once (outputs of a run share one or two) */
        int seen = 0;
        for (int k = 0; k < i && !seen; k++) {
            const char *a = strrchr(deferred[i].path, '/'), *b = strrchr(deferred[k].path, '/');
            size_t la = a ? (size_t)(a - deferred[i].path) : 0, lb = b ? (size_t)(b - deferred[k].path) : 0;
            seen = la == lb && !strncmp(deferred[i].path, deferred[k].path, la);
        }
        if (rc == 0 && !seen) kc_fsync_dir_of(deferred[i].path);
    }
    for (int i = 0; i < n_deferred; i++) {
        kc_cleanup_drop(deferred[i].slot);
        free(deferred[i].tmp);
        free(deferred[i].path);
    }
    free(deferred);
    deferred = NULL;
    n_deferred = cap_deferred = 0;
    deferring = 0;
    return rc;
}

int kc_write_file_atomic(const char *path, const void *data, size_t size)
{
    char *tmp = kc_strfmt("%s.tmp", path);
    int slot = kc_create_begin(tmp);
    int fd = slot == -2 ? -1 : open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int open_errno = slot == -2 ? EINTR : errno;
    if (slot != -2) kc_create_end();
    if (fd < 0) {
        kc_cleanup_drop(slot);
        kc_fail("%s: cannot create (%s)", tmp, strerror(open_errno));
        free(tmp);
        return -1;
    }
    const uint8_t *p = data;
    size_t left = size;
    int rc = 0;
    while (left > 0 && rc == 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR) continue;
            rc = kc_fail("%s: cannot write (%s)", tmp, strerror(errno));
            break;
        }
        p += w;
        left -= (size_t)w;
    }
    if (rc == 0 && fsync(fd) != 0) rc = kc_fail("%s: cannot write (%s)", tmp, strerror(errno));
    if (close(fd) != 0 && rc == 0) rc = kc_fail("%s: cannot write (%s)", tmp, strerror(errno));
    if (rc < 0) unlink(tmp);
    else rc = kc_rename_output(tmp, path);
    kc_cleanup_drop(slot);
    free(tmp);
    return rc;
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

void kc_utc_created(char out[32])
{
    const char *e = getenv("SOURCE_DATE_EPOCH");
    char *end = NULL;
    long long v = e && *e ? strtoll(e, &end, 10) : -1;
    if (v < 0 || (end && *end)) {
        kc_utc_now(out);
        return;
    }
    time_t t = (time_t)v;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
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

/* ---- paths to remove when the run ends early ------------------------------------------------
 * A fixed table of fixed-size slots, so that the signal handler reads nothing that another
 * thread may be freeing: a slot is claimed (state 0 -> 1) with an atomic exchange, filled, then
 * published (state 2); the handler unlinks the published ones.  Unlink is async-signal-safe. */
#define KC_CLEANUP_SLOTS 1024
static struct {
    volatile int state; /* 0 free, 1 being filled or emptied, 2 holds a file's path, 3 a folder's */
    char path[1024];
} cleanup_slots[KC_CLEANUP_SLOTS];

static int cleanup_add(const char *path, int state)
{
    size_t n = strlen(path);
    if (n >= sizeof cleanup_slots[0].path) return -1;
    for (int i = 0; i < KC_CLEANUP_SLOTS; i++) {
        int expected = 0;
        if (!__atomic_compare_exchange_n(&cleanup_slots[i].state, &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            continue;
        memcpy(cleanup_slots[i].path, path, n + 1);
        __atomic_store_n(&cleanup_slots[i].state, state, __ATOMIC_RELEASE);
        return i;
    }
    return -1; /* table full: the path is simply not removed early (a rerun removes it) */
}

int kc_cleanup_add(const char *path) { return cleanup_add(path, 2); }
int kc_cleanup_add_dir(const char *path) { return cleanup_add(path, 3); }

void kc_cleanup_drop(int slot)
{
    if (slot < 0 || slot >= KC_CLEANUP_SLOTS) return;
    __atomic_store_n(&cleanup_slots[slot].state, 1, __ATOMIC_RELEASE);
    cleanup_slots[slot].path[0] = 0;
    __atomic_store_n(&cleanup_slots[slot].state, 0, __ATOMIC_RELEASE);
}

/* Creations of temporary files: the handler waits for those in progress on other threads (so
 * that the file it then removes is there and registered) and no new one starts once it runs. */
static int stopping, creating;
static _Thread_local int creating_here;

int kc_create_begin(const char *path)
{
    __atomic_add_fetch(&creating, 1, __ATOMIC_SEQ_CST);
    creating_here++;
    if (__atomic_load_n(&stopping, __ATOMIC_SEQ_CST)) {
        kc_create_end();
        return -2;
    }
    return kc_cleanup_add(path);
}

void kc_create_end(void)
{
    creating_here--;
    __atomic_sub_fetch(&creating, 1, __ATOMIC_SEQ_CST);
}

/* (signal handler and kc_die) stop new creations and wait, at most a second, for those under way
 * on other threads */
static void stop_creations(void)
{
    __atomic_store_n(&stopping, 1, __ATOMIC_SEQ_CST);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (__atomic_load_n(&creating, __ATOMIC_SEQ_CST) > creating_here) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) > 1000000000L) break;
    }
}

void kc_cleanup_run(void)
{
    stop_creations();
    for (int i = 0; i < KC_CLEANUP_SLOTS; i++)
        if (__atomic_load_n(&cleanup_slots[i].state, __ATOMIC_ACQUIRE) == 2) unlink(cleanup_slots[i].path);
    /* folders last, the deepest (registered last) first; rmdir removes only empty ones */
    for (int i = KC_CLEANUP_SLOTS - 1; i >= 0; i--)
        if (__atomic_load_n(&cleanup_slots[i].state, __ATOMIC_ACQUIRE) == 3) rmdir(cleanup_slots[i].path);
}

static char interrupt_msg[1024];
static char interrupt_hint[900];

/* SIGINT (Ctrl-C) and SIGTERM (what Slurm and kill send before SIGKILL): every finished piece is
 * already renamed into place, so any moment is a safe point; the piece in flight and the lock
 * files go, the one line is printed, and the exit status is 128 + the signal, as a shell reports
 * a process killed by it (130, 143). */
static void on_signal(int sig)
{
    kc_cleanup_run();
    const char *m = interrupt_msg;
    ssize_t w = write(2, m, strlen(m));
    (void)w;
    _exit(128 + sig);
}

static void install_signals(void)
{
    /* before a stage says how it resumes (kc_on_interrupt), nothing of its output is in place yet */
    snprintf(interrupt_msg, sizeof interrupt_msg, "\n%s: interrupted; %s\n", prog_name,
             interrupt_hint[0] ? interrupt_hint : "rerun the same command");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    for (int s = 0; s < 2; s++) {
        int sig = s ? SIGTERM : SIGINT;
        struct sigaction old;
        /* a signal the caller ignores stays ignored (nohup, a shell's background job) */
        if (sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        sigaction(sig, &sa, NULL);
    }
    /* a file-size limit makes writes fail (EFBIG) and be reported, instead of killing us */
    signal(SIGXFSZ, SIG_IGN);
}

void kc_on_interrupt(const char *hint)
{
    snprintf(interrupt_hint, sizeof interrupt_hint, "%s", hint ? hint : "");
    /* the message is rebuilt before the handlers see it: block them meanwhile */
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    install_signals();
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}
