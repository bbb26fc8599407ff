/* tests/shims/nolock.c — an LD_PRELOAD library that makes file locks fail the way an NFS mount
 * without lockd does (and Lustre without -o flock does with ENOSYS): flock() and the fcntl lock
 * commands return -1 with errno KC_NOLOCK_ERRNO (default ENOLCK, 37).  Everything else passes
 * through.  Used by tests/test_storage.sh:
 *
 *     LD_PRELOAD=build/tests/libkc_nolock.so build/kc-extract ...
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/file.h>

static int lock_errno(void)
{
    const char *e = getenv("KC_NOLOCK_ERRNO");
    return e && *e ? atoi(e) : ENOLCK;
}

int flock(int fd, int op)
{
    (void)fd;
    (void)op;
    errno = lock_errno();
    return -1;
}

static int is_lock_cmd(int cmd)
{
    return cmd == F_SETLK || cmd == F_SETLKW || cmd == F_GETLK
#ifdef F_OFD_SETLK
           || cmd == F_OFD_SETLK || cmd == F_OFD_SETLKW || cmd == F_OFD_GETLK
#endif
        ;
}

typedef int (*fcntl_fn)(int, int, ...);

/* A lock command fails; any other goes to the C library's function of that name. */
static int shim_fcntl(const char *name, int fd, int cmd, void *arg)
{
    if (is_lock_cmd(cmd)) {
        errno = lock_errno();
        return -1;
    }
    fcntl_fn real = (fcntl_fn)dlsym(RTLD_NEXT, name);
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    return real(fd, cmd, arg);
}

int fcntl(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    return shim_fcntl("fcntl", fd, cmd, arg);
}

int fcntl64(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    return shim_fcntl("fcntl64", fd, cmd, arg);
}

int lockf(int fd, int cmd, off_t len)
{
    (void)fd;
    (void)len;
    if (cmd == F_TEST) return 0;
    errno = lock_errno();
    return -1;
}
