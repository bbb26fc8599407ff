/* pipeline/kc.h — errors, logging and allocation shared by every keycut module.
 *
 * Library code never exits.  A function that fails records one line with kc_fail() and returns
 * a negative value (or NULL); the caller may add context with kc_fail_prefix(); only main()
 * prints the message (kc_die) and exits.  Messages name the file and what was wrong with it:
 *
 *     if (n < 0) return kc_fail("%s: truncated JPEG (premature end of data)", path);
 *
 * The message buffer is thread-local, so worker threads can fail independently.
 */
#ifndef KC_KC_H
#define KC_KC_H
#include <stddef.h>
#include <stdint.h>

#define KC_VERSION "0.1.0"

/* Records the message (printf format) and returns -1. */
int kc_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prepends "prefix: " (printf format) to the recorded message; returns -1. */
int kc_fail_prefix(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The last recorded message of this thread ("" when none). */
const char *kc_error(void);
/* Copies another thread's message into this thread's (for OpenMP workers reporting to main). */
void kc_set_error(const char *msg);

/* Program name used in log lines ("kc-extract"); also installs the signal handlers (below). */
void kc_set_prog(const char *name);
const char *kc_prog(void);
/* For the stages that loop over images (main() only, before the loop): freed memory stays with
 * the allocator for the next image rather than going back to the system, so each image's buffers
 * (a decoded frame, its tensor, the forward's activations) are not mapped and zeroed afresh; a
 * page fault costs 12 us in some VMs, a few ms per image.  The process keeps its peak footprint. */
void kc_keep_freed_memory(void);
/* The plural ending of a count: kc_info("%d image%s", n, kc_s(n)) gives "1 image", "2 images". */
static inline const char *kc_s(long n) { return n == 1 ? "" : "s"; }
/* Informational line on stderr: "kc-extract: message".  KC_QUIET=1 silences info lines. */
void kc_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void kc_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* For main() only: prints "prog: error: <kc_error()>" and exits with status 1. */
void kc_die(void) __attribute__((noreturn));
/* For main() only: prints "prog: error: <message>" and exits 1 (usage errors). */
void kc_die_msg(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* Allocation that aborts on exhaustion (an out-of-memory is not bad input; callers that size an
 * allocation from untrusted input must check the size against the input first). */
void *kc_malloc(size_t n);
void *kc_calloc(size_t n, size_t size);
void *kc_realloc(void *p, size_t n);
char *kc_strdup(const char *s);
char *kc_strfmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A growing text buffer: kc_buf b = {0}; kc_buf_printf(&b, "%d,", x); ... free(b.s); */
typedef struct kc_buf {
    char *s;
    size_t n, cap;
} kc_buf;
void kc_buf_printf(kc_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Whole file into memory (adds a NUL after the data); returns -1 with a message on failure. */
int kc_read_file(const char *path, uint8_t **data, size_t *size);
/* As kc_read_file, for a text file: one holding a NUL byte is refused ("PATH: not a text file
 * (NUL byte)"), so that the data reads as one C string. */
int kc_read_text(const char *path, uint8_t **data, size_t *size);
/* Writes data to path.tmp, fsyncs, renames to path (or, between kc_outputs_begin and
 * kc_outputs_commit, leaves the rename for the commit). */
int kc_write_file_atomic(const char *path, const void *data, size_t size);
/* Renames a finished (written and closed) temporary file to path, or defers it as above; on an
 * immediate rename's failure tmp is removed. */
int kc_rename_output(const char *tmp, const char *path);
/* All-or-nothing outputs of several files: after kc_outputs_begin, every output is left under its
 * temporary name, fsynced, and kc_outputs_commit renames them all (then syncs their folders), so
 * a run that fails before the commit leaves every existing output as it was (its temporary files
 * are removed by kc_die and the signal handlers). */
void kc_outputs_begin(void);
int kc_outputs_commit(void);
/* fsync of the folder holding path (so that a rename into it is durable); errors ignored. */
void kc_fsync_dir_of(const char *path);
/* mkdir -p */
int kc_mkdirs(const char *path);
/* 1 if path exists (any type). */
int kc_exists(const char *path);
/* Seconds since an arbitrary start (monotonic). */
double kc_now(void);
/* Current UTC time as "YYYY-MM-DDTHH:MM:SSZ". */
void kc_utc_now(char out[32]);
/* The time a cache records as `created`: now, or SOURCE_DATE_EPOCH (seconds since 1970) when that
 * is set, the reproducible-builds convention, so that two runs can give the same bytes. */
void kc_utc_created(char out[32]);
/* The whole command line joined by spaces (for provenance); set by kc_set_cmdline in main. */
void kc_set_cmdline(int argc, char **argv);
const char *kc_cmdline(void);

/* Returns -1 from the enclosing function when expr is negative. */
#define KC_TRY(expr)                                                         \
    do {                                                                     \
        if ((expr) < 0) return -1;                                           \
    } while (0)



/* Signals.  kc_set_prog installs SIGINT and SIGTERM handlers (unless the signal is ignored, as
 * nohup does): they remove the paths registered below, print "prog: interrupted; HINT" and exit
 * with status 128 + signal (130, 143).  kc_on_interrupt sets the hint (how to resume); until a
 * stage sets one, it is "rerun the same command". */
void kc_on_interrupt(const char *hint);

/* Paths removed when the run ends early (kc_die, kc_die_msg, SIGINT, SIGTERM): temporary files in
 * flight and this run's lock files.  kc_cleanup_add returns a slot (or -1 when the table is full:
 * the path then stays, and a rerun removes it); kc_cleanup_drop forgets a slot once its path is
 * renamed or removed.  kc_cleanup_run unlinks every registered path (async-signal-safe). */
int kc_cleanup_add(const char *path);
/* A folder this run made for its output: removed (if empty) after the files. */
int kc_cleanup_add_dir(const char *path);
void kc_cleanup_drop(int slot);
void kc_cleanup_run(void);
/* Around the creation of a temporary file that kc_cleanup_run must not miss: kc_create_begin
 * registers path (its slot, as kc_cleanup_add; -2 when the run is being stopped: create nothing)
 * and kc_create_end closes the window, once the file is created (or its creation failed).
 * kc_cleanup_run waits for creations under way on other threads. */
int kc_create_begin(const char *path);
void kc_create_end(void);
#endif
