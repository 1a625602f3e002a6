/* src/spinlock/spinlock.c: fl_spinlock_t, test-and-test-and-set with
 * exponential backoff (the word: include/fastlock/spinlock.h).
 *
 * A waiter reads the word until it is 0 and only then tries the exchange:
 * reads of a line that is not changing stay in the waiter's cache, while
 * every exchange takes the line away from the holder.  After each read
 * that finds the lock held, and each lost exchange, it waits twice as long
 * before the next read, up to FL_SPIN_BACKOFF_MAX fl_cpu_relax: each read
 * also takes the line from a holder that is taking and releasing the lock
 * again and again, and the longer the lock has stayed busy, the less the
 * waiter should add to the traffic on its line.  (Doubling only after a
 * lost exchange, the waiter read the line every few relaxes all the time
 * another thread held the lock: with 2 threads on 2 CPUs, 1.0 to 1.3
 * times glibc's pthread_spin_lock; doubling after every failed read, 3
 * times.)  The price is fairness: the releasing thread, whose cache still
 * holds the line, usually takes the lock back first, and a waiter may
 * sleep through a release.  Throughput is what this lock is for; the
 * ticket and queued locks are the fair ones.
 *
 * A waiter that has seen the lock held without a break for
 * FL_SPIN_YIELD_AFTER yields: the holder may be waiting for this CPU.  */
#include "config.h"

#include "spinlock/internal.h"

#include <sched.h>

#define FL_SPIN_BACKOFF_MAX 64

static int fl_spin_wait(fl_spinlock_t *l, int32_t old)
{
  uint32_t delay = 1, since = fl_spin_now();

  (void)old;
  for (;;) {
    if (fl_load_relaxed(&l->word) == 0) {
      /* Acquire, as on the fastpath.  */
      if (fl_atomic_xchg_acquire(&l->word, 1) == 0)
        return 0;
      since = fl_spin_now();
    } else if (fl_spin_elapsed(since, fl_spin_now(), FL_SPIN_YIELD_AFTER)) {
      sched_yield();
    }
    if (delay < FL_SPIN_BACKOFF_MAX)
      delay <<= 1;
    fl_spin_relax(delay);
  }
}

/* Held, and so busy, whenever the word is not 0.  */
static int fl_spin_held(uint32_t v)
{
  return v != 0;
}

/* Release: the critical section's loads and stores are done before the
 * word reads 0.  */
static int fl_spin_release(fl_spinlock_t *l)
{
  if (!fl_spin_held((uint32_t)fl_load_relaxed(&l->word)))
    return EPERM;
  fl_store_release(&l->word, 0);
  return 0;
}

FL_SPIN_DEFINE_API(spin, fl_spinlock_t, 1, fl_spin_held, fl_spin_held,
                   fl_spin_was_free, fl_spin_wait, fl_spin_attempt,
                   fl_spin_try_failed, fl_spin_release)
