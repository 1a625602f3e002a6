/* tests/test-spinlock-torture.h: the locktorture-style torture for one spinlock,
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

#include <pthread.h>
#include <stdint.h>

#include "fl-check.h"

struct fl_torture_lock {
  const char *name;
  void *lock;
  int (*init_fn)(void *lock, unsigned flags);
  int (*destroy_fn)(void *lock);
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
  long violations;   /* found another thread inside */
  long lost_updates; /* acquisitions - plain counter, when plain */
  long order_errors;
  long call_errors; /* a lock or unlock that did not return 0 */
  long min, max;    /* per thread, while all threads ran */
  int starved;
};

/* Run the torture with threads threads of iterations acquisitions each,
 * print a summary line ending in "End of test: SUCCESS" or "FAILURE", and
 * fill *r.  */
void fl_torture(const struct fl_torture_lock *t, int threads, long iterations,
                struct fl_torture_report *r);

/* Assert what a correct lock's report must say.  */
void fl_torture_assert_clean(const struct fl_torture_report *r, long expected);

/* Run the torture on t->lock, which the caller has _init'ed, assert that
 * its report is clean, and destroy the lock, which must be free.  */
void fl_torture_check(const struct fl_torture_lock *t, int threads,
                      long iterations);

/* The suite of a spinlock test program, named name, and its two test
 * cases for the caller to add its tests to: *single, "one thread", and
 * *threads, "threads" (tagged FL_TAG_THREADS, 120 s to run), which holds
 * the negative control already: a test-and-set lock with its test and its
 * set split by a yield, run through the torture, which must see threads
 * overlap.  */
Suite *fl_spin_suite(const char *name, TCase **single, TCase **threads);

/* The static adapters from the API of the lock type T, short name s, to
 * the functions of struct fl_torture_lock: s_t_* through the header's
 * macros (the inline fastpaths, or the library on an annotated build),
 * s_n_* through the library's functions by name.  FL_TORTURE_OPS(s) and
 * FL_TORTURE_OPS_BY_NAME(s) initialise those fields with them.  */
#define FL_TORTURE_ADAPTERS(s, T)                                              \
 static int s##_t_init(void *l, unsigned flags)                                \
 {                                                                             \
  return fl_##s##_init((T *)l, flags);                                         \
 }                                                                             \
 static int s##_t_destroy(void *l)                                             \
 {                                                                             \
  return fl_##s##_destroy((T *)l);                                             \
 }                                                                             \
 static int s##_t_lock(void *l)                                                \
 {                                                                             \
  return fl_##s##_lock((T *)l);                                                \
 }                                                                             \
 static int s##_t_trylock(void *l)                                             \
 {                                                                             \
  return fl_##s##_trylock((T *)l);                                             \
 }                                                                             \
 static int s##_t_unlock(void *l)                                              \
 {                                                                             \
  return fl_##s##_unlock((T *)l);                                              \
 }                                                                             \
 static int s##_n_lock(void *l)                                                \
 {                                                                             \
  return (fl_##s##_lock)((T *)l);                                              \
 }                                                                             \
 static int s##_n_trylock(void *l)                                             \
 {                                                                             \
  return (fl_##s##_trylock)((T *)l);                                           \
 }                                                                             \
 static int s##_n_unlock(void *l)                                              \
 {                                                                             \
  return (fl_##s##_unlock)((T *)l);                                            \
 }
#define FL_TORTURE_OPS(s)                                                      \
 .init_fn = s##_t_init, .destroy_fn = s##_t_destroy, .lock_fn = s##_t_lock,    \
 .trylock_fn = s##_t_trylock, .unlock_fn = s##_t_unlock
#define FL_TORTURE_OPS_BY_NAME(s)                                              \
 .init_fn = s##_t_init, .destroy_fn = s##_t_destroy, .lock_fn = s##_n_lock,    \
 .trylock_fn = s##_n_trylock, .unlock_fn = s##_n_unlock

/* The two ways into the lock functions, for a Check loop test's _i: [0]
 * the macros, [1] the library by name.  */
#define FL_TORTURE_WAYS(s)                                                     \
 {                                                                             \
  { .name = "macros", FL_TORTURE_OPS(s) },                                     \
  {                                                                            \
   .name = "by name", FL_TORTURE_OPS_BY_NAME(s)                                \
  }                                                                            \
 }

/* The misuse every lock refuses, leaving its word as it was, on l, a free
 * lock, through t's functions: an unlock of the free lock (EPERM); a
 * trylock and a destroy of the held lock (EBUSY); an unlock after the
 * unlock (EPERM).  Every lock here is one 32-bit word.  */
void fl_test_misuse(const struct fl_torture_lock *t, void *l);

/* FL_PSHARED between two processes: t's init_fn sets up a lock with
 * FL_PSHARED in a shared mapping (t->lock is not used), and the parent
 * and a forked child each add 1 to a counter beside it iterations times
 * under the lock.  The counter must come to twice that, and the lock be
 * free to destroy.  */
void fl_test_pshared(const struct fl_torture_lock *t, long iterations);

/* Spin (and yield) until cond(arg) holds; for a thread waiting on another
 * thread's progress in a lock.  */
void fl_test_wait_until(int (*cond)(void *), void *arg);

/* A cond for fl_test_wait_until: the int32_t flag is not 0 (read with
 * acquire).  */
int fl_test_flag_set(void *flag);

/* A waiter stopped where it waits, as if preempted: fl_test_park(t) sends
 * thread t SIGUSR1, whose handler sleeps until fl_test_unpark, and returns
 * once t is in the handler.  fl_test_unpark lets t go on and puts the
 * signal's default action back.  (ThreadSanitizer holds an asynchronous
 * signal back until the thread enters its runtime, which a thread waiting
 * in a lock's slowpath never does: there no signal can park a waiter.)  */
void fl_test_park(pthread_t t);
void fl_test_unpark(void);

/* Whether a signal sent to a thread waiting in a lock's slowpath runs its
 * handler there, with the thread's own TLS (fl_test_park, a handler that
 * takes another lock): 1; or 0 after a line saying that the tests named
 * in what are left out, and why: under ThreadSanitizer (above), or where
 * a thread that runs a signal handler comes back with another thread's
 * TLS, and so with another thread's lock state (qemu-i386 user mode,
 * stress/tls-probe.h).  */
int fl_test_signals_reach_waiters(const char *what);

#endif /* FASTLOCK_TESTS_SPINLOCK_TORTURE_H */
