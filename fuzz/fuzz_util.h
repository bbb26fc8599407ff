/* fuzz/fuzz_util.h — helpers shared by the libFuzzer harnesses.
 *
 * Parsers that take a path (images, VOC XML, HDF5 caches) get the input written to a scratch file
 * under $TMPDIR (default /dev/shm, a RAM disk) whose name holds the process id, so parallel
 * fuzzers never share it; it is removed at exit.  Each harness calls fuzz_init() once to silence keycut's info lines.
 */
#ifndef KC_FUZZ_UTIL_H
#define KC_FUZZ_UTIL_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline void fuzz_init(void)
{
    static int done;
    if (!done) {
        setenv("KC_QUIET", "1", 1);
        done = 1;
    }
}

/* Writes data to a per-process scratch file with the given suffix; returns its path (static). */
static char fuzz_scratch_path[512];
static inline void fuzz_scratch_remove(void)
{
    if (fuzz_scratch_path[0]) unlink(fuzz_scratch_path);
}

static inline const char *fuzz_scratch(const uint8_t *data, size_t size, const char *suffix)
{
    char *path = fuzz_scratch_path;
    static int registered;
    if (!registered) {
        atexit(fuzz_scratch_remove);
        registered = 1;
    }
    if (path[0]) unlink(path);
    const char *dir = getenv("KC_FUZZ_TMP");
    if (!dir || !*dir) dir = "/dev/shm";
    snprintf(path, sizeof fuzz_scratch_path, "%s/kc-fuzz-%ld%s", dir, (long)getpid(), suffix);
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        abort();
    }
    if (size && data && fwrite(data, 1, size, f) != size) abort();
    if (fclose(f) != 0) abort();
    return path;
}
#endif
