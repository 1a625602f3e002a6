/* src/pthread/self.c: the calling thread's TID, and the futex wait every
 * object of the drop-in sleeps in.  */
#include "config.h"

#include "pthread/internal.h"
#include "sys/futex.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

__thread int32_t fl_pt_tid_cache __attribute__((tls_model("initial-exec")));

int32_t fl_pt_tid_slowpath(void)
{
  /* A system call only: this runs inside the first lock of a thread,
   * which may be one of malloc's.  */
  fl_pt_tid_cache = (int32_t)syscall(SYS_gettid);
  return fl_pt_tid_cache;
}

/* In a fork() child the one thread has a new TID.  */
static void forget_tid(void)
{
  fl_pt_tid_cache = 0;
}

/* Registered from the constructor, not lazily: pthread_atfork allocates,
 * and the first use of a lock may come from inside malloc.  A library
 * whose constructor runs before ours and forks from a thread that already
 * took one of our locks leaves its child with a stale TID: the man page
 * says so.  */
__attribute__((constructor)) static void register_atfork(void)
{
  pthread_atfork(NULL, NULL, forget_tid);
}

int fl_pt_wait(uint32_t *word, uint32_t expected, int pshared, clockid_t clock,
               const struct timespec *abstime, int cancellable)
{
  int rc = cancellable ? fl_futex_wait_cancellable(word, expected, pshared,
                                                   clock, abstime)
                       : fl_futex_wait(word, expected, pshared, clock, abstime);

  /* EAGAIN: the word changed before we slept; EINTR: a signal handler
   * ran.  Either way the caller looks at its word again.  */
  return rc == EAGAIN || rc == EINTR ? 0 : rc;
}
