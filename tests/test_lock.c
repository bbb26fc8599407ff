/* tests/test_lock.c — the one-writer lock under a tight race (pipeline/lock.c).
 *
 * Three processes take and release the same lock as fast as they can, thousands of times.  Every
 * take either succeeds or refuses naming a live holder ("kc-..., pid N on HOST, since ...").  A
 * holder that releases between another run's open and its flock used to be reported as "a run
 * that left no details" (tests/test_storage.sh's races caught it once in CI under the sanitizers):
 * the file had gone, so the refusal named nobody.  Such a take must start again instead. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pipeline/kc.h"
#include "pipeline/lock.h"
#include "tests/test.h"

enum { WORKERS = 3, ROUNDS = 4000 };

/* One worker: exit status 0 when every refusal named a holder, else 1 (the first bad line printed). */
static int worker(const char *path)
{
    int bad = 0, took = 0, refused = 0;
    for (int i = 0; i < ROUNDS; i++) {
        kc_lock *l;
        if (kc_lock_take(&l, path, "out.h5") == 0) {
            took++;
            kc_lock_release(l);
            continue;
        }
        const char *e = kc_error();
        if (strstr(e, "is being written by another run (") && strstr(e, ", pid ") && !strstr(e, "left no details")) {
            refused++;
            continue;
        }
        if (!bad) fprintf(stderr, "worker %d, round %d: %s\n", (int)getpid(), i, e);
        bad++;
    }
    fprintf(stderr, "worker %d: %d taken, %d refused naming the holder, %d refused naming nobody\n", (int)getpid(),
            took, refused, bad);
    return bad ? 1 : 0;
}

/* A holder that is slow to write its text: it makes the file and takes its flock, then (descheduled
 * on a loaded machine, say) writes "keycut-lock 1 ..." only 700 ms later.  A take meanwhile must
 * refuse naming it once the text is there, however late, not "a run that left no details". */
static void slow_holder(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/slow.h5.lock", dir);
    int ready[2];
    CHECK(pipe(ready) == 0, "pipe failed");
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) _exit(2);
        if (write(ready[1], "x", 1) != 1) _exit(2);
        struct timespec ts = {0, 700 * 1000 * 1000}; /* beyond the 200 ms a reader used to wait */
        nanosleep(&ts, NULL);
        char host[256] = "";
        gethostname(host, sizeof host - 1);
        char text[600];
        int n = snprintf(text, sizeof text, "keycut-lock 1\nprogram kc-slow\nhost %s\npid %ld\nsince 2026-12-03T00:00:00Z\n"
                         "boot -\nstart 0\n", host, (long)getpid());
        if (pwrite(fd, text, (size_t)n, 0) != n) _exit(2);
        ts.tv_nsec = 300 * 1000 * 1000;
        nanosleep(&ts, NULL);
        unlink(path);
        close(fd);
        _exit(0);
    }
    CHECK(pid > 0, "fork failed");
    close(ready[1]); /* so that the read below ends if the holder dies before it is ready */
    if (pid <= 0) {
        close(ready[0]);
        return;
    }
    char c;
    CHECK(read(ready[0], &c, 1) == 1, "the slow holder did not start");
    kc_lock *l = NULL;
    int rc = kc_lock_take(&l, path, "slow.h5");
    const char *e = kc_error();
    CHECK(rc != 0 && strstr(e, "(kc-slow, pid ") != NULL,
          "a take while the holder had not yet written its text: want a refusal naming kc-slow, got rc %d: %s", rc, e);
    if (rc == 0) kc_lock_release(l);
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the slow holder failed");
    close(ready[0]);
}

int main(void)
{
    const char *dir = test_tmpdir("lock");
    char path[4200];
    snprintf(path, sizeof path, "%s/out.h5.lock", dir);
    pid_t pids[WORKERS];
    for (int w = 0; w < WORKERS; w++) {
        pids[w] = fork();
        if (pids[w] == 0) _exit(worker(path));
        CHECK(pids[w] > 0, "fork failed");
    }
    for (int w = 0; w < WORKERS; w++) {
        int st = 0;
        if (pids[w] <= 0) continue;
        waitpid(pids[w], &st, 0);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "worker %d: a take refused without naming a live holder", w);
    }
    CHECK(access(path, F_OK) != 0, "the lock file %s is left after every run released it", path);
    slow_holder(dir);
    return test_done();
}
