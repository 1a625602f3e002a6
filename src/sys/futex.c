/* src/sys/futex.c: the futex wrapper (see futex.h).  */
#include "config.h"

#include "sys/futex.h"
#include "sys/clock.h"
#include "lockdep/lockdep.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

/* A 32-bit process built with a 64-bit time_t must use the time64 system
 * call; everywhere else the plain one takes the C library's timespec.  */
#if defined(__NR_futex_time64) && !defined(__LP64__)
# define FL_NR_FUTEX (sizeof(time_t) == 8 ? __NR_futex_time64 : __NR_futex)
#else
# define FL_NR_FUTEX __NR_futex
#endif

static int futex_private(int op, int pshared)
{
  return pshared ? op : op | FUTEX_PRIVATE_FLAG;
}

/* The futex wait of both entry points below; cancellable: the sleep is a
 * cancellation point (fl_futex_wait_cancellable).  */
static int futex_wait(const uint32_t *word, uint32_t expected, int pshared,
                      clockid_t clock, const struct timespec *abstime,
                      int cancellable)
{
  int op = futex_private(FUTEX_WAIT_BITSET, pshared), type = 0, err;
  long rc;

  if (clock == CLOCK_REALTIME)
    op |= FUTEX_CLOCK_REALTIME;
  else if (clock != CLOCK_MONOTONIC)
    return EINVAL;
  if (abstime != NULL) {
    if (!fl_timespec_valid(abstime))
      return EINVAL;
    /* The kernel refuses a negative tv_sec with EINVAL; for a deadline it
     * simply lies in the past.  */
    if (abstime->tv_sec < 0)
      return ETIMEDOUT;
  }
  /* Every blocking wait of a fastlock primitive passes here: the
   * lock-order checker looks for a spinlock held across it.  */
  if (FL_TOOLS_ACTIVE)
    fl_lockdep_wait();
  /* Asynchronous cancellation for the system call alone, as glibc's
   * cancellable system calls have it: a pthread_cancel that comes while
   * the thread sleeps, or came before (setting the type acts on a
   * pending one), unwinds it from here through the caller's cleanup
   * handler; nothing of ours is half done inside this window.  */
  if (cancellable)
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &type);
  rc = syscall(FL_NR_FUTEX, word, op, expected, abstime, NULL,
               FUTEX_BITSET_MATCH_ANY);
  err = rc == 0 ? 0 : errno;
  if (cancellable)
    pthread_setcanceltype(type, NULL);
  /* EWOULDBLOCK is EAGAIN on Linux; EINTR and ETIMEDOUT pass through.  */
  return err;
}

int fl_futex_wait(const uint32_t *word, uint32_t expected, int pshared,
                  clockid_t clock, const struct timespec *abstime)
{
  return futex_wait(word, expected, pshared, clock, abstime, 0);
}

int fl_futex_wait_cancellable(const uint32_t *word, uint32_t expected,
                              int pshared, clockid_t clock,
                              const struct timespec *abstime)
{
  return futex_wait(word, expected, pshared, clock, abstime, 1);
}

int fl_futex_wake(uint32_t *word, int count, int pshared)
{
  long rc = syscall(FL_NR_FUTEX, word, futex_private(FUTEX_WAKE, pshared),
                    count, NULL, NULL, 0);
  return rc < 0 ? 0 : (int)rc;
}
