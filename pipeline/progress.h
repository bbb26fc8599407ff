/* pipeline/progress.h — a progress line with rate and ETA on stderr.
 *
 * On a terminal the line is redrawn in place; otherwise one line is printed every few seconds
 * (KC_PROGRESS_SECONDS, default 10).  Thread-safe: progress_add may be called from workers.
 *
 *     progress p;
 *     progress_init(&p, "extract", n_images, "images");
 *     for (...) { ...; progress_add(&p, 1); }
 *     progress_end(&p);          // "kc-extract: extract: 1449 images in 6m02s (4.0 images/s)"
 */
#ifndef KC_PROGRESS_H
#define KC_PROGRESS_H
typedef struct progress {
    const char *what, *unit;
    long total, done, start_done;
    double t0, last_print;
    int tty, quiet;
} progress;

void progress_init(progress *p, const char *what, long total, const char *unit);
/* Work already done before this run (resumed pieces): counted as done, not in the rate. */
void progress_skip(progress *p, long n);
void progress_add(progress *p, long n);
void progress_end(progress *p);
/* "1h02m", "3m05s", "12.3s" */
void progress_fmt_time(double seconds, char *out, int size);
/* A rate to 3 significant digits (68451.25 -> "68500", 16.24 -> "16.2", 0.1234 -> "0.123"). */
void progress_fmt_rate(double rate, char *out, int size);
#endif
