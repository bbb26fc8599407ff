/* pipeline/lock.c — see lock.h. */
#include "pipeline/lock.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pipeline/kc.h"

enum { LOCK_FLOCK = 1, LOCK_FILE = 2 };

struct kc_lock {
    char *path;
    int fd;      /* flock mode: the locked file, open for the whole run */
    int mode;
    int slot;    /* the cleanup slot that removes the file on an early end */
    int dir_slots[16], n_dir_slots; /* folders kc_lock_folder made (removed, if empty, on an early end) */
};

static int fs_without_locks, warned_no_locks;
/* Why the last kc_lock_take of this thread failed: 0 an error, HELD_LIVE another run holds the lock
 * and lives (flock's, or a lock file of a live pid of this host), HELD_MAYBE a lock file of another
 * host on a filesystem without file locks (its run may have ended).  kc_lock_wait's guide. */
enum { HELD_LIVE = 1, HELD_MAYBE = 2 };
static __thread int last_held;

int kc_lock_fs_has_no_locks(void) { return __atomic_load_n(&fs_without_locks, __ATOMIC_RELAXED); }

void kc_lock_note_no_locks(const char *path, int err)
{
    __atomic_store_n(&fs_without_locks, 1, __ATOMIC_RELAXED);
    if (!__atomic_exchange_n(&warned_no_locks, 1, __ATOMIC_RELAXED))
        kc_warn("%s: this filesystem has no file locks (%s); keycut's lock files stand in for them, and HDF5 files "
                "are opened without HDF5's own lock", path, strerror(err));
}

/* ---- who holds a lock ---------------------------------------------------------------------- */

typedef struct holder {
    char program[64], host[256], since[32], boot[64];
    long pid;
    unsigned long long start;
    int valid;
} holder;

static void read_boot_id(char out[64])
{
    out[0] = 0;
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!f) return;
    if (!fgets(out, 64, f)) out[0] = 0;
    fclose(f);
    out[strcspn(out, "\n")] = 0;
}

/* Field 22 of /proc/PID/stat: the process's start time in clock ticks after boot (0 if unknown). */
static unsigned long long proc_start(long pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
    if (!p) return 0;
    p++;
    for (int field = 3; field < 22 && p; field++) { /* p is before field `field` */
        while (*p == ' ') p++;
        p = strchr(p, ' ');
    }
    return p ? strtoull(p, NULL, 10) : 0;
}

static void own_holder(holder *h)
{
    memset(h, 0, sizeof *h);
    snprintf(h->program, sizeof h->program, "%s", kc_prog());
    if (gethostname(h->host, sizeof h->host - 1) != 0) snprintf(h->host, sizeof h->host, "unknown");
    h->pid = (long)getpid();
    kc_utc_now(h->since);
    read_boot_id(h->boot);
    h->start = proc_start(h->pid);
    h->valid = 1;
}

static char *holder_text(const holder *h)
{
    return kc_strfmt("keycut-lock 1\nprogram %s\nhost %s\npid %ld\nsince %s\nboot %s\nstart %llu\n", h->program,
                     h->host, h->pid, h->since, h->boot[0] ? h->boot : "-", h->start);
}

static void parse_holder(const char *text, holder *h)
{
    memset(h, 0, sizeof *h);
    if (strncmp(text, "keycut-lock 1\n", 14) != 0) return;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char buf[512];
        if (len < sizeof buf) {
            memcpy(buf, line, len);
            buf[len] = 0;
            char *sp = strchr(buf, ' ');
            if (sp) {
                *sp = 0;
                const char *v = sp + 1;
                if (!strcmp(buf, "program")) snprintf(h->program, sizeof h->program, "%s", v);
                else if (!strcmp(buf, "host")) snprintf(h->host, sizeof h->host, "%s", v);
                else if (!strcmp(buf, "pid")) h->pid = strtol(v, NULL, 10);
                else if (!strcmp(buf, "since")) snprintf(h->since, sizeof h->since, "%s", v);
                else if (!strcmp(buf, "boot")) snprintf(h->boot, sizeof h->boot, "%s", strcmp(v, "-") ? v : "");
                else if (!strcmp(buf, "start")) h->start = strtoull(v, NULL, 10);
            }
        }
        line += len + (end ? 1 : 0);
    }
    h->valid = h->pid > 0 && h->host[0];
}

/* The holder named in the file at path (valid = 0 when it is empty, unreadable or not ours).  A
 * holder rewriting a taken-over file leaves it empty for a moment: `tries` short retries. */
static void read_holder_tries(const char *path, holder *h, int tries)
{
    for (int attempt = 0; attempt < tries; attempt++) {
        char buf[2048];
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
        if (fd >= 0) close(fd);
        buf[n > 0 ? n : 0] = 0;
        parse_holder(buf, h);
        if (h->valid || (fd < 0 && errno == ENOENT) || attempt + 1 == tries) return;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static void read_holder_path(const char *path, holder *h) { read_holder_tries(path, h, 20); }

/* "kc-extract, pid 41233 on node07, since 2026-12-01T19:40:00Z" */
static void describe(const holder *h, char *out, size_t size)
{
    if (!h->valid) snprintf(out, size, "a run that left no details");
    else snprintf(out, size, "%s, pid %ld on %s, since %s", h->program[0] ? h->program : "keycut", h->pid, h->host,
                  h->since[0] ? h->since : "?");
}

/* For a lock without flock: 1 if the holder certainly ended (this host, and its pid is gone or is
 * another process now, or the host rebooted since), 0 if it may live (or is on another host). */
static int holder_gone_here(const holder *h, const holder *me)
{
    if (!h->valid || strcmp(h->host, me->host) != 0) return 0;
    if (h->boot[0] && me->boot[0] && strcmp(h->boot, me->boot) != 0) return 1;
    if (h->pid == me->pid) return 0;
    if (kill((pid_t)h->pid, 0) != 0 && errno == ESRCH) return 1;
    unsigned long long now = proc_start(h->pid);
    return h->start && now && now != h->start; /* the pid was reused */
}

static int is_nolock_errno(int e) { return e == ENOLCK || e == ENOSYS || e == EOPNOTSUPP || e == ENOTSUP; }

static int refuse(const char *output, const char *path, const holder *h)
{
    char who[512];
    describe(h, who, sizeof who);
    return kc_fail("%s is being written by another run (%s); wait for it to end or stop it, then rerun "
                   "(its lock: %s)", output, who, path);
}

/* ---- taking and releasing ------------------------------------------------------------------ */

static int write_text_fd(int fd, const char *text)
{
    size_t n = strlen(text), done = 0;
    while (done < n) {
        ssize_t w = pwrite(fd, text + done, n - done, (off_t)done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        done += (size_t)w;
    }
    return fsync(fd) == 0 || errno == EINVAL ? 0 : -1;
}

/* Without flock: removes the lock file of a holder known to be gone, under a short-lived guard
 * file so that two runs taking over at once do not remove each other's new lock. */
static void take_over_file(const char *path, const char *seen_text)
{
    char *guard = kc_strfmt("%s.takeover", path);
    int g = open(guard, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (g < 0) {
        struct stat st;
        /* a guard older than 30 s was left by a run that died in these few lines */
        if (stat(guard, &st) == 0 && time(NULL) - st.st_mtime > 30) unlink(guard);
        free(guard);
        return;
    }
    close(g);
    char buf[2048];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0) close(fd);
    buf[n > 0 ? n : 0] = 0;
    if (n > 0 && !strcmp(buf, seen_text)) unlink(path); /* still the dead holder's */
    unlink(guard);
    free(guard);
}

static int finish_take(kc_lock **out, const char *path, int fd, int mode)
{
    kc_lock *l = kc_calloc(1, sizeof *l);
    l->path = kc_strdup(path);
    l->fd = fd;
    l->mode = mode;
    l->slot = kc_cleanup_add(path);
    *out = l;
    return 0;
}

int kc_lock_take(kc_lock **lock, const char *path, const char *output)
{
    *lock = NULL;
    holder me;
    own_holder(&me);
    char *text = holder_text(&me);
    int rc = -1, warned = 0, blank_waits = 0;
    last_held = 0;
    kc_set_error(""); /* every failure below records its own line */
    for (int attempt = 0; attempt < 50 && rc < 0 && !kc_error()[0]; attempt++) {
        /* the file is made with O_EXCL (so that, without flock, making it is taking it) and gets
         * its text at once; a reader that finds it empty retries for a moment (read_holder_path) */
        int created = 1;
        int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0 && errno == EEXIST) {
            created = 0;
            fd = open(path, O_RDWR | O_CLOEXEC);
            if (fd < 0 && errno == ENOENT) continue; /* its holder just removed it */
        }
        if (fd < 0) {
            kc_fail("%s: cannot write its lock file %s (%s)", output, path, strerror(errno));
            break;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
            struct stat a, b;
            if (fstat(fd, &a) != 0 || stat(path, &b) != 0 || a.st_ino != b.st_ino || a.st_dev != b.st_dev) {
                close(fd); /* its holder removed it as we opened it: start again */
                continue;
            }
            /* we hold it now: no live run writes its text any more, so read it once.  Empty is a run
             * that made the file and lost the flock to us (it waits for our text: no retries here) */
            holder old;
            if (!created) read_holder_tries(path, &old, 1);
            if (!created && old.valid && !warned) {
                char who[512];
                describe(&old, who, sizeof who);
                kc_warn("%s: taking over the lock left by a run that has ended (%s)", path, who);
                warned = 1;
            }
            if (ftruncate(fd, 0) != 0 || write_text_fd(fd, text) < 0) {
                kc_fail("%s: cannot write its lock file %s (%s)", output, path, strerror(errno));
                close(fd);
                if (created) unlink(path);
                break;
            }
            rc = finish_take(lock, path, fd, LOCK_FLOCK);
            break;
        }
        int e = errno;
        if (e != EWOULDBLOCK && e != EAGAIN && !is_nolock_errno(e)) {
            kc_fail("%s: cannot lock %s (%s)", output, path, strerror(e));
            close(fd);
            if (created) unlink(path);
            break;
        }
        if (e == EWOULDBLOCK || e == EAGAIN) {
            holder h;
            read_holder_path(path, &h);
            if (!h.valid) {
                /* its holder released it between our open and our flock (unlink, then close): the
                 * path names another file now, or none; start again rather than refuse naming nobody */
                struct stat a, b;
                if (fstat(fd, &a) != 0 || stat(path, &b) != 0 || a.st_ino != b.st_ino || a.st_dev != b.st_dev) {
                    close(fd);
                    continue;
                }
                /* still the locked file, and no text yet: its holder made it (or emptied it to take
                 * it over) and has not written since; on a loaded machine that can outlast the reads
                 * above (tests/test_lock.c's slow holder).  Ask again, up to ~8 s in all. */
                if (++blank_waits < 40) {
                    close(fd);
                    continue;
                }
            }
            close(fd);
            refuse(output, path, &h);
            last_held = HELD_LIVE;
            break;
        }
        /* no flock on this filesystem: the file is the lock */
        kc_lock_note_no_locks(path, e);
        if (created) {
            int w = write_text_fd(fd, text);
            close(fd);
            if (w < 0) {
                kc_fail("%s: cannot write its lock file %s (%s)", output, path, strerror(errno));
                unlink(path);
                break;
            }
            rc = finish_take(lock, path, -1, LOCK_FILE);
            break;
        }
        close(fd);
        holder h;
        read_holder_path(path, &h);
        if (!h.valid) {
            kc_fail("%s is locked by %s, which names no keycut run; if no run is writing %s, remove it and rerun",
                    output, path, output);
            break;
        }
        if (!holder_gone_here(&h, &me)) {
            if (strcmp(h.host, me.host) != 0) {
                char who[512];
                describe(&h, who, sizeof who);
                kc_fail("%s is locked by a run on another host (%s), which this host cannot check on a filesystem "
                        "without file locks; if that run has ended, remove %s and rerun", output, who, path);
                last_held = HELD_MAYBE;
            } else {
                refuse(output, path, &h);
                last_held = HELD_LIVE;
            }
            break;
        }
        if (!warned) {
            char who[512];
            describe(&h, who, sizeof who);
            kc_warn("%s: taking over the lock left by a run that has ended (%s)", path, who);
            warned = 1;
        }
        char buf[2048];
        int rfd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = rfd >= 0 ? read(rfd, buf, sizeof buf - 1) : -1;
        if (rfd >= 0) close(rfd);
        buf[n > 0 ? n : 0] = 0;
        if (n > 0) take_over_file(path, buf);
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (rc < 0 && !kc_error()[0]) kc_fail("%s: could not take the lock %s (it kept changing hands)", output, path);
    free(text);
    return rc;
}

int kc_lock_wait(kc_lock **lock, const char *path, const char *output, double max_wait)
{
    double t0 = kc_now();
    int said = 0;
    for (;;) {
        if (kc_lock_take(lock, path, output) == 0) return 0;
        double waited = kc_now() - t0;
        if (!last_held || (last_held == HELD_MAYBE && waited > max_wait)) return -1;
        if (!said && waited > 2) {
            kc_info("%s: waiting for another run to release %s", output, path);
            said = 1;
        }
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

int kc_lock_folder(kc_lock **lock, const char *dir, const char *name)
{
    *lock = NULL;
    /* the levels of dir that do not exist yet: a run that fails leaves no empty folder behind */
    char *made[16];
    int n_made = 0;
    {
        char *p = kc_strdup(dir);
        size_t len = strlen(p);
        for (size_t i = 1; i <= len; i++) {
            if (p[i] != '/' && p[i] != 0) continue;
            char c = p[i];
            p[i] = 0;
            if (!kc_exists(p) && n_made < 16) made[n_made++] = kc_strdup(p);
            p[i] = c;
        }
        free(p);
    }
    if (kc_mkdirs(dir) < 0) {
        for (int i = 0; i < n_made; i++) free(made[i]);
        return -1;
    }
    int dir_slots[16];
    for (int i = 0; i < n_made; i++) {
        dir_slots[i] = kc_cleanup_add_dir(made[i]);
        free(made[i]);
    }
    char *path = name ? kc_strfmt("%s/.%s.keycut.lock", dir, name) : kc_strfmt("%s/.keycut.lock", dir);
    char *what = name ? kc_strfmt("%s/%s.*", dir, name) : kc_strdup(dir);
    int rc = kc_lock_take(lock, path, what);
    free(path);
    free(what);
    if (rc == 0) {
        memcpy((*lock)->dir_slots, dir_slots, sizeof(int) * (size_t)n_made);
        (*lock)->n_dir_slots = n_made;
    }
    return rc;
}

void kc_lock_release(kc_lock *l)
{
    if (!l) return;
    unlink(l->path);
    kc_cleanup_drop(l->slot);
    for (int i = 0; i < l->n_dir_slots; i++) kc_cleanup_drop(l->dir_slots[i]); /* the run succeeded: they stay */
    if (l->fd >= 0) close(l->fd);
    free(l->path);
    free(l);
}
