/* src/rwsem/robust.c: owners across processes (FL_PSHARED) and dead
 * write holders (FL_ROBUST).
 *
 * IDENTITY.  A TID is unique within its PID namespace only: two processes
 * that are each PID 1 of their own namespace, sharing a lock through
 * /dev/shm, have the same TID.  So an FL_PSHARED write holder records
 * its PID namespace too (owner_ns: the inode number of /proc/self/ns/pid,
 * unique among the namespaces that exist at once; 0 where /proc is not
 * mounted, and then namespaces are not told apart).  It is read once per
 * process, and again in the child of a fork (which may be the first
 * process of a new namespace).
 *
 * DEAD WRITE HOLDERS (FL_ROBUST).  The kernel's robust list is not used:
 * it is glibc's (one list head per thread, set_robust_list), and its
 * entries must be futex words with the owner's TID in their low 30 bits,
 * which the count word is not.  Instead a writer (or reader) that has
 * waited one FL_PSHARED poll (50 ms, FL_RWSEM_ROBUST_POLL_MS) for a lock
 * held for writing asks whether the recorded holder still exists: kill
 * (tid, 0) failing with ESRCH, which the kernel answers for any thread ID
 * of the caller's PID namespace.  A holder in another namespace cannot be
 * probed: its death is not detected (documented).  So a death is found
 * about one poll after someone starts to wait, and costs the fastpaths
 * nothing (a robust lock is FL_PSHARED, whose write fastpath already
 * fails into the library).  Bounds of the probe: a holder that dies in
 * the few instructions between taking WRITER and recording itself in
 * owner (two stores: what it records is worked out before it waits), or
 * between clearing owner and giving WRITER up (up_write, downgrade: the
 * record must go first, or a new holder's could be erased), is not
 * found; a TID reused by a new thread before the probe makes the holder
 * look alive.  fastlock-stress rwsem --kill-ms meets these now and then
 * (README, Known gaps).  The waiter that finds the death takes
 * the lock over with a CAS on owner (T12 in rwsem.c) and gets
 * EOWNERDEAD; fl_rwsem_consistent then marks the data repaired, and an
 * up_write without it leaves the lock ENOTRECOVERABLE for good.
 *
 * DEAD READ HOLDERS.  Read locks are counted in the count word, not
 * named (naming them would cost the read fastpath its single atomic).  A
 * process that dies holding n read locks leaves n in the count; a
 * supervisor that knows it (waitpid, a pidfd) calls fl_rwsem_reader_died
 * n times.  */
#include "config.h"

#include "rwsem/rwsem-internal.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>

static int32_t self_ns = -1; /* -1: not read yet in this process */
static pthread_once_t ns_once = PTHREAD_ONCE_INIT;

static void ns_forget(void)
{
  self_ns = -1;
}

static void ns_setup(void)
{
  pthread_atfork(NULL, NULL, ns_forget);
}

int32_t fl_rwsem_self_ns(void)
{
  int32_t ns = fl_load_relaxed(&self_ns);

  if (ns == -1) {
    struct stat st;

    pthread_once(&ns_once, ns_setup);
    ns = stat("/proc/self/ns/pid", &st) == 0 ? (int32_t)(uint32_t)st.st_ino : 0;
    if (ns == -1)
      ns = 1; /* -1 means "not read" */
    fl_store_relaxed(&self_ns, ns);
  }
  return ns;
}

int fl_rwsem_owner_dead(const fl_rwsem_t *s)
{
  int32_t tid = fl_load_relaxed(&s->owner) & ~FL_RWSEM_OWNER_SLOW;

  if (tid <= 0 || fl_load_relaxed(&s->owner_ns) != fl_rwsem_self_ns())
    return 0;
  return kill((pid_t)tid, 0) != 0 && errno == ESRCH;
}

int fl_rwsem_consistent(fl_rwsem_t *s)
{
  int32_t m = fl_load_relaxed(&s->mode);

  if (!(m & (int32_t)FL_ROBUST) || !(m & (int32_t)FL_RWSEM_ROBUST_DEAD)
      || !fl_rwsem_write_held_by_me(s))
    return EINVAL;
  /* Only the holder changes mode now.  */
  fl_store_relaxed(&s->mode, m & ~(int32_t)FL_RWSEM_ROBUST_DEAD);
  return 0;
}

int fl_rwsem_reader_died(fl_rwsem_t *s)
{
  return fl_rwsem_count_up_read(s);
}
