/* src/spinlock/spinlock.c: fl_spinlock_t, test-and-test-and-set with
 * exponential backoff (the word: include/fastlock/spinlock.h).
 *
 * A waiter reads the word until it is 0 and only then tries the exchange:
 * reads of a line that is not changing stay in the waiter's cache, while
 * every exchange takes the line away from the holder.  After each lost
 * exchange it waits twice as long between reads, up to
 * FL_SPIN_BACKOFF_MAX fl_cpu_relax: the more often it loses, the more
 * threads are after the lock, and the less it should add to the traffic
 * on its line.  The price is fairness: the releasing thread, whose cache
 * still holds the line, usually takes the lock back first.  Throughput is
 * what this lock is for; the ticket and queued locks are the fair ones.
 *
 * A waiter that has seen the lock held without a break for
 * FL_SPIN_YIELD_AFTER yields: the holder may be waiting for this CPU.  */
#include "config.h"

#include "spinlock/internal.h"
#include "sys/cpu.h"

#include <sched.h>

#define FL_SPIN_BACKOFF_MAX 64

int fl_spin_lock_slow(fl_spinlock_t *l)
{
  uint32_t delay = 1, i, since = fl_spin_now();

  for (;;) {
    if (fl_load_relaxed(&l->word) == 0) {
      /* Acquire, as on the fastpath.  */
      if (fl_atomic_xchg_acquire(&l->word, 1) == 0)
        return 0;
      if (delay < FL_SPIN_BACKOFF_MAX)
        delay <<= 1;
      since = fl_spin_now();
    } else if (fl_spin_elapsed(since, fl_spin_now(), FL_SPIN_YIELD_AFTER)) {
      sched_yield();
    }
    for (i = 0; i < delay; i++)
      fl_cpu_relax();
  }
}

int fl_spin_init(fl_spinlock_t *l, unsigned flags)
{
  int rc = fl_spin_check_flags(flags, 1);

  if (rc != 0)
    return rc;
  fl_store_relaxed(&l->word, 0);
  FL_SPIN_ANNOTATE_CREATE(l);
  return 0;
}

int fl_spin_destroy(fl_spinlock_t *l)
{
  if (fl_load_relaxed(&l->word) != 0)
    return EBUSY;
  FL_SPIN_ANNOTATE_DESTROY(l);
  return 0;
}

/* The library's own lock, trylock and unlock: the inline fastpaths, with
 * the tools told what happened.  An unlock of a free lock is caught before
 * the tools hear of it, so that ThreadSanitizer does not report what the
 * return value already does.  */
int (fl_spin_lock)(fl_spinlock_t *l)
{
  FL_VG_HIDE(l, sizeof *l);
  FL_TSAN_PRE_LOCK(l, 0);
  fl_spin_lock_inline(l);
  FL_TSAN_POST_LOCK(l, 0);
  FL_VG_RWLOCK_ACQUIRED(l, 1);
  return 0;
}

int (fl_spin_trylock)(fl_spinlock_t *l)
{
  int rc;

  FL_VG_HIDE(l, sizeof *l);
  FL_TSAN_PRE_LOCK(l, FL_TSAN_TRY);
  rc = fl_spin_trylock_inline(l);
  FL_TSAN_POST_LOCK(l, FL_TSAN_TRY | (rc != 0 ? FL_TSAN_TRY_FAILED : 0u));
  if (rc == 0)
    FL_VG_RWLOCK_ACQUIRED(l, 1);
  return rc;
}

int (fl_spin_unlock)(fl_spinlock_t *l)
{
  if (fl_load_relaxed(&l->word) == 0)
    return EPERM;
  FL_VG_RWLOCK_RELEASED(l, 1);
  FL_TSAN_PRE_UNLOCK(l, 0);
  fl_spin_unlock_inline(l);
  FL_TSAN_POST_UNLOCK(l, 0);
  return 0;
}
