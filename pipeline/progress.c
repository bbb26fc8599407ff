/* pipeline/progress.c — see progress.h. */
#include "pipeline/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "pipeline/kc.h"

void progress_fmt_time(double s, char *out, int size)
{
    if (s < 0) s = 0;
    if (s < 60)
        snprintf(out, (size_t)size, "%.1fs", s);
    else if (s < 3600)
        snprintf(out, (size_t)size, "%dm%02ds", (int)s / 60, (int)s % 60);
    else
        snprintf(out, (size_t)size, "%dh%02dm", (int)s / 3600, ((int)s % 3600) / 60);
}

void progress_init(progress *p, const char *what, long total, const char *unit)
{
    const char *q = getenv("KC_QUIET");
    p->what = what;
    p->unit = unit;
    p->total = total;
    p->done = 0;
    p->start_done = 0;
    p->t0 = kc_now();
    p->last_print = p->t0;
    p->tty = isatty(2);
    p->quiet = q && *q && *q != '0';
}

void progress_skip(progress *p, long n)
{
#pragma omp critical(kc_progress)
    {
        p->done += n;
        p->start_done += n;
    }
}

static void print_line(progress *p, double now)
{
    double el = now - p->t0;
    long fresh = p->done - p->start_done;
    double rate = el > 0 ? (double)fresh / el : 0;
    char eta[32] = "?";
    if (rate > 0) progress_fmt_time((double)(p->total - p->done) / rate, eta, sizeof eta);
    fprintf(stderr, "%s%s: %s: %ld/%ld %s, %.2f %s/s, ETA %s%s", p->tty ? "\r" : "", kc_prog(),
            p->what, p->done, p->total, p->unit, rate, p->unit, eta, p->tty ? "\033[K" : "\n");
    fflush(stderr);
}

void progress_add(progress *p, long n)
{
#pragma omp critical(kc_progress)
    {
        p->done += n;
        double now = kc_now();
        double every = p->tty ? 0.2 : 10.0;
        const char *e = getenv("KC_PROGRESS_SECONDS");
        if (e && *e) every = atof(e);
        if (!p->quiet && now - p->last_print >= every) {
            p->last_print = now;
            print_line(p, now);
        }
    }
}

void progress_end(progress *p)
{
    double el = kc_now() - p->t0;
    char t[32];
    progress_fmt_time(el, t, sizeof t);
    long fresh = p->done - p->start_done;
    if (p->quiet) return;
    if (p->tty) fprintf(stderr, "\r\033[K");
    fprintf(stderr, "%s: %s: %ld %s in %s (%.2f %s/s)", kc_prog(), p->what, fresh, p->unit, t,
            el > 0 ? (double)fresh / el : 0.0, p->unit);
    if (p->start_done) fprintf(stderr, ", %ld resumed from earlier pieces", p->start_done);
    fprintf(stderr, "\n");
}
