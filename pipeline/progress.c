/* pipeline/progress.c — see progress.h. */
#include "pipeline/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

void progress_fmt_rate(double rate, char *out, int size)
{
    /* 3 significant digits: 68451.25 -> 68500, 160.45 -> 160, 16.24 -> 16.2, 6.214 -> 6.21 */
    int digits = rate >= 100 ? 0 : rate >= 10 ? 1 : rate >= 1 ? 2 : 3;
    if (rate >= 1000) {
        double scale = 1;
        while (rate / scale >= 1000) scale *= 10;
        rate = (double)(long long)(rate / scale + 0.5) * scale;
    }
    snprintf(out, (size_t)size, "%.*f", digits, rate);
}

/* The unit for a count: "images" for 2, "image" for 1 (a unit ending in s). */
static int unit_len(const char *unit, long n)
{
    int len = (int)strlen(unit);
    return n == 1 && len > 1 && unit[len - 1] == 's' ? len - 1 : len;
}

static void print_line(progress *p, double now)
{
    double el = now - p->t0;
    long fresh = p->done - p->start_done;
    double rate = el > 0 ? (double)fresh / el : 0;
    char eta[32] = "?";
    if (rate > 0) progress_fmt_time((double)(p->total - p->done) / rate, eta, sizeof eta);
    char r[32];
    progress_fmt_rate(rate, r, sizeof r);
    fprintf(stderr, "%s%s: %s: %ld/%ld %.*s, %s %s/s, ETA %s%s", p->tty ? "\r" : "", kc_prog(), p->what, p->done,
            p->total, unit_len(p->unit, p->total), p->unit, r, p->unit, eta, p->tty ? "\033[K" : "\n");
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
    char r[32];
    progress_fmt_rate(el > 0 ? (double)fresh / el : 0.0, r, sizeof r);
    fprintf(stderr, "%s: %s: %ld %.*s in %s (%s %s/s)", kc_prog(), p->what, fresh, unit_len(p->unit, fresh), p->unit, t,
            r, p->unit);
    if (p->start_done) fprintf(stderr, ", %ld resumed from earlier pieces", p->start_done);
    fprintf(stderr, "\n");
}
