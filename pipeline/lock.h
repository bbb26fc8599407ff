/* pipeline/lock.h — one writer per output.
 *
 * Every stage that writes an output holds an exclusive lock on it for the whole run: a lock file
 * (OUT.partial/lock for a cache, DIR/.keycut.lock for a folder, DIR/.NAME.keycut.lock for the
 * files NAME.* a stage writes into a shared folder) that says who holds it:
 *
 *     keycut-lock 1
 *     program kc-extract
 *     host node07
 *     pid 41233
 *     since 2026-12-01T19:40:00Z
 *     boot <the kernel's boot id>      (with start: tells a live pid from a reused one)
 *     start <the process's start time in clock ticks since boot>
 *
 * Where the filesystem has file locks (flock), the lock is flock's: the kernel (or the NFS lock
 * daemon) drops it when the holder dies, however it dies, so a file left behind by a run that is
 * gone is taken over with one warning.  Where it has none (flock fails with ENOLCK, ENOSYS or
 * EOPNOTSUPP: NFS without lockd, Lustre without -o flock), the lock file itself is the lock: it
 * is created with O_EXCL (making it is taking it) and gets its text at once, and a file left by
 * a run that is gone is taken over when that run was on this host (same boot, its pid dead or
 * now another process), under a short-lived guard file so that two runs taking over at once do
 * not remove each other's new lock; a file of another host is refused with the path to remove,
 * since this host cannot tell whether that run still lives.
 *
 * A second run on the same output is refused at once, with one line naming the other run:
 *
 *     kc_lock *lk;
 *     if (kc_lock_take(&lk, "cache/keys.h5.partial/lock", "cache/keys.h5") < 0) kc_die();
 *     ... write ...
 *     kc_lock_release(lk);        // also done by kc_die and on SIGINT/SIGTERM (the file goes)
 *
 * The lock file's folder must exist.  Releasing removes the file: a run that opened it just
 * before checks, once it holds the lock, that the path still names the file it locked.
 */
#ifndef KC_LOCK_H
#define KC_LOCK_H

typedef struct kc_lock kc_lock;

/* Takes the lock at lock_path for the output `output` (named in messages).  0, or -1 with a
 * one-line message (another run holds it; or the lock file cannot be made). */
int kc_lock_take(kc_lock **lock, const char *lock_path, const char *output);
/* As kc_lock_take, waiting while another run holds the lock, for a lock held only for moments (a
 * commit): as long as its holder lives (flock's, or a lock file of a live run of this host), or up to
 * max_wait seconds for a lock file of another host on a filesystem without file locks (whose run may
 * have ended: then -1 with kc_lock_take's message).  One info line once it has waited 2 s. */
int kc_lock_wait(kc_lock **lock, const char *path, const char *output, double max_wait);
/* The lock of a folder output: DIR/.keycut.lock, or DIR/.NAME.keycut.lock when name is given
 * (the outputs NAME.* of a stage that shares the folder with others); DIR is created. */
int kc_lock_folder(kc_lock **lock, const char *dir, const char *name);
/* Removes the lock file and drops the lock; NULL is allowed. */
void kc_lock_release(kc_lock *lock);
/* 1 once a lock was taken on a filesystem without file locks (the HDF5 layer then opens files
 * without HDF5's own lock). */
int kc_lock_fs_has_no_locks(void);
/* Records that path's filesystem has no file locks (err: how a lock failed there), with one
 * warning per run, whichever layer (this one or HDF5's) finds it first. */
void kc_lock_note_no_locks(const char *path, int err);
#endif
