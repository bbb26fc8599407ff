/* tests/test.h — the tiny harness every test program uses.
 *
 *   CHECK(cond, "fmt", ...)      counts a pass or prints "FAIL file:line: message" and counts a failure
 *   CHECK_CLOSE(a, b, tol, what)  |a - b| <= tol, printing both values on failure
 *   SKIP("why")                   counts a skipped check (data absent, ...)
 *   test_shared_data()            path of ../shared/data, or NULL when it is absent (a user's clone)
 *   test_missing("py:torch ...")  the Debian packages of the optional tools that are absent, or NULL
 *   return test_done();           prints "RESULT passed failed skipped"; exit status 1 on any failure
 */
#ifndef KC_TEST_H
#define KC_TEST_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int test_passed, test_failed, test_skipped;

#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        if (cond) {                                                             \
            test_passed++;                                                      \
        } else {                                                                \
            test_failed++;                                                      \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
        }                                                                       \
    } while (0)

#define CHECK_CLOSE(a, b, tol, what)                                            \
    do {                                                                        \
        double ca_ = (double)(a), cb_ = (double)(b);                            \
        CHECK(fabs(ca_ - cb_) <= (tol), "%s: %.9g vs %.9g (tol %.3g)", (what),  \
              ca_, cb_, (double)(tol));                                         \
    } while (0)

#define SKIP(...)                                                               \
    do {                                                                        \
        test_skipped++;                                                         \
        fprintf(stderr, "SKIP %s:%d: ", __FILE__, __LINE__);                    \
        fprintf(stderr, __VA_ARGS__);                                           \
        fputc('\n', stderr);                                                    \
    } while (0)

static inline const char *test_shared_data(void)
{
    const char *p = getenv("KC_SHARED_DATA");
    static char buf[4096];
    struct stat st;
    if (!p || !*p) p = "../shared/data";
    snprintf(buf, sizeof buf, "%s", p);
    if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) return NULL;
    return buf;
}

/* The Debian packages of the optional tools REQS that are absent ("py:torch py:h5py", the names of
   tests/optional.sh, which answers), comma-separated; NULL when all are here.  Run from the root of
   the repository, as tests/run.sh does.  Use: if ((m = test_missing(...))) SKIP("...: %s not installed", m); */
static inline const char *test_missing(const char *reqs)
{
    static char buf[512];
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "bash tests/optional.sh %s 2>/dev/null", reqs);
    FILE *f = popen(cmd, "r");
    buf[0] = 0;
    if (!f) return "tests/optional.sh (cannot run it)";
    if (!fgets(buf, sizeof buf, f)) buf[0] = 0;
    int rc = pclose(f);
    buf[strcspn(buf, "\n")] = 0;
    if (rc != 0) return "tests/optional.sh (it failed)";
    return buf[0] ? buf : NULL;
}

/* A scratch folder for this test program: build/test-tmp/<name>, emptied first. */
static inline const char *test_tmpdir(const char *name)
{
    static char buf[4096];
    const char *b = getenv("BUILD");
    char cmd[8300];
    snprintf(buf, sizeof buf, "%s/test-tmp/%s", b && *b ? b : "build", name);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", buf, buf);
    if (system(cmd) != 0) {
        fprintf(stderr, "cannot make %s\n", buf);
        exit(2);
    }
    return buf;
}

/* The whole of a file that holds exactly `bytes` bytes (a reference blob), malloc'd; NULL when it
 * is absent or of another size. */
static inline void *test_read_exact(const char *path, size_t bytes)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    void *v = malloc(bytes ? bytes : 1);
    size_t got = fread(v, 1, bytes, f);
    int extra = fgetc(f);
    fclose(f);
    if (got != bytes || extra != EOF) {
        free(v);
        return NULL;
    }
    return v;
}

static inline int test_done(void)
{
    printf("RESULT %d %d %d\n", test_passed, test_failed, test_skipped);
    fflush(stdout);
    return test_failed ? 1 : 0;
}
#endif
