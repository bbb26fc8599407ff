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
#include <sys/wait.h>
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
    return test_done();
}
