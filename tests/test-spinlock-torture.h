/* tests/test-spinlock-torture.h: the DESIGN.md torture for one spinlock,
 * run inside a Check test, and what the spinlock tests share.
 *
 * N threads take the lock M times each, by lock or (one time in eight)
 * trylock, and inside the critical section check that nobody else is in
 * it, increment a plain counter (the data the race detectors must see as
 * protected), check the order in which tickets are served where the lock
 * has tickets, and hold the lock a random while, yielding the CPU inside
 * it now and then.  The report counts violations, lost updates and order
 * errors, and gives each thread's acquisitions while all threads were
 * still running (min, max, and the starvation flag max / 2 > min: printed,
 * not asserted, since it depends on the scheduler).  */
#ifndef FASTLOCK_TESTS_SPINLOCK_TORTURE_H
#define FASTLOCK_TESTS_SPINLOCK_TORTURE_H

#include <stdint.h>

struct fl_torture_lock {
  const char *name;
  void *lock;
  int (*lock_fn)(void *lock);
  int (*trylock_fn)(void *lock);
  int (*unlock_fn)(void *lock);
  /* The ticket being served, read by the holder; NULL for a lock without
   * tickets.  Tickets are compared modulo order_mask + 1.  */
  uint32_t (*serving_fn)(void *lock);
  uint32_t order_mask;
  /* 1: each served ticket must be the one after the last (no waiter may
   * have been passed over); 0: it must only come after it.  */
  int strict_order;
  /* 1: increment the plain counter (0 for a lock that does not exclude,
   * which the race detectors would rightly report).  */
  int plain;
  /* Yield inside one critical section in this many.  */
  int yield_every;
};

struct fl_torture_report {
  long acquisitions;
  long violations;      /* found another thread inside */
  long lost_updates;    /* acquisitions - plain counter, when plain */
  long order_errors;
  long call_errors;     /* a lock or unlock that did not return 0 */
  long min, max;        /* per thread, while all threads ran */
  int starved;
};

/* Run the torture with threads threads of iterations acquisitions each,
 * print a summary line ending in "End of test: SUCCESS" or "FAILURE", and
 * fill *r.  */
void fl_torture(const struct fl_torture_lock *t, int threads, long iterations,
                struct fl_torture_report *r);

/* Assert what a correct lock's report must say.  */
void fl_torture_assert_clean(const struct fl_torture_report *r, long expected);

/* The negative control: a test-and-set lock with its test and its set
 * split by a yield, run through the same torture, which must see threads
 * overlap.  */
void fl_torture_negative_control(int threads, long iterations);

/* Spin (and yield) until cond(arg) holds; for a thread waiting on another
 * thread's progress in a lock.  */
void fl_test_wait_until(int (*cond)(void *), void *arg);

#endif /* FASTLOCK_TESTS_SPINLOCK_TORTURE_H */
