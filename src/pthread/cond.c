/* src/pthread/cond.c: pthread_cond_*, laid over pthread_cond_t.
 *
 * glibc's condition variable unlocks and relocks the mutex inside
 * pthread_cond_wait without going through pthread_mutex_unlock, so once
 * the mutex is ours the condition variable must be too.
 *
 * The words (all zero in PTHREAD_COND_INITIALIZER: a private
 * CLOCK_REALTIME condition variable):
 *   seq      the futex word: bumped by every signal and broadcast that
 *            finds a waiter
 *   waiters  threads between their check-in and their check-out, plus
 *            FL_PC_DESTROYING while pthread_cond_destroy waits for them
 *   flags    FL_PC_SHARED, FL_PC_MONOTONIC (from the attribute object)
 *
 * A waiter checks in (waiters + 1) and reads seq while it holds the mutex,
 * releases the mutex and sleeps while seq is unchanged.  A signal that
 * matters to it is one made after the waiter released the mutex (before
 * that the predicate change would have been seen under the mutex), so the
 * signaller's view of waiters and seq is ordered after the waiter's by the
 * mutex itself: no barrier is needed here, and a signal with no waiter
 * checked in is one load.  Any woken waiter may take the signal; a signal
 * may also end the wait of one that checked in after it (POSIX allows the
 * spurious wake-up).  Waiters re-check in a loop, as POSIX tells them to.  */
#include "config.h"

#include "pthread/internal.h"
#include "sys/clock.h"
#include "sys/futex.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

struct fl_pcond {
  uint32_t seq;
  uint32_t waiters;
  int32_t flags;
};

_Static_assert(sizeof(struct fl_pcond) <= sizeof(pthread_cond_t),
               "the condition variable fits in pthread_cond_t");
_Static_assert(_Alignof(struct fl_pcond) <= _Alignof(pthread_cond_t),
               "no more alignment than pthread_cond_t");

#define FL_PC_SHARED 0x1
#define FL_PC_MONOTONIC 0x2
#define FL_PC_DESTROYING 0x80000000u
#define FL_PC_COUNT 0x7fffffffu

#define W(p) ((int32_t *)(void *)(p))

static struct fl_pcond *fl_pc(pthread_cond_t *c)
{
  return (struct fl_pcond *)(void *)c;
}

/* A waiter between its check-in and its check-out.  */
struct cond_waiter {
  struct fl_pcond *pc;
  pthread_mutex_t *m;
  uint32_t depth;
  int shared;
};

/* Check out.  Release: pthread_cond_destroy may free the condition
 * variable once the count is zero, so this is the last access but for
 * the futex wake, which only uses the address.  */
static void check_out(const struct cond_waiter *w)
{
  uint32_t n = (uint32_t)fl_atomic_fetch_add_release(W(&w->pc->waiters), -1);

  if (n == (FL_PC_DESTROYING | 1))
    fl_futex_wake(&w->pc->waiters, INT32_MAX, w->shared);
}

/* The cleanup of a waiter cancelled in its sleep: wake one other waiter
 * (the signal that woke us may be lost with us; a spurious wake-up for
 * the other is allowed), check out, and take the mutex again, as POSIX
 * has it before the caller's cleanup handlers run.  */
static void cancelled(void *arg)
{
  const struct cond_waiter *w = arg;

  fl_futex_wake(&w->pc->seq, 1, w->shared);
  check_out(w);
  fl_pt_mutex_reacquire(w->m, w->depth);
}

static int cond_wait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
                     const struct timespec *abstime)
{
  struct cond_waiter w = { fl_pc(c), m, 0, 0 };
  struct _pthread_cleanup_buffer cleanup;
  uint32_t seq;
  int rc, rc2;

  w.shared = (fl_load_relaxed(&w.pc->flags) & FL_PC_SHARED) != 0;
  if (abstime != NULL && !fl_timespec_valid(abstime))
    return EINVAL;
  /* A cancellation point where the mutex is held, as the cleanup
   * handlers expect; the sleep is one too (cancelled).  */
  pthread_testcancel();
  if (fl_pt_under_vg())
    fl_pt_vg_hide(c, sizeof *c);
  fl_atomic_fetch_add_relaxed(W(&w.pc->waiters), 1);
  seq = (uint32_t)fl_load_relaxed(W(&w.pc->seq));
  rc = fl_pt_mutex_release_for_wait(m, &w.depth);
  if (rc != 0) {
    fl_atomic_fetch_add_relaxed(W(&w.pc->waiters), -1);
    return rc;
  }
  _pthread_cleanup_push(&cleanup, cancelled, &w);
  rc = fl_pt_wait(&w.pc->seq, seq, w.shared, clock, abstime, 1);
  _pthread_cleanup_pop(&cleanup, 0);
  check_out(&w);
  if (fl_pt_under_vg())
    fl_pt_vg_happens_after(c);
  rc2 = fl_pt_mutex_reacquire(m, w.depth);
  if (rc2 != 0)
    return rc2;
  return rc == ETIMEDOUT ? ETIMEDOUT : 0;
}

static int cond_wake(pthread_cond_t *c, int count)
{
  struct fl_pcond *pc = fl_pc(c);

  if (fl_pt_under_vg())
    fl_pt_vg_happens_before(c);
  if ((fl_load_relaxed(W(&pc->waiters)) & FL_PC_COUNT) == 0)
    return 0;
  fl_atomic_fetch_add_relaxed(W(&pc->seq), 1);
  fl_futex_wake(&pc->seq, count,
                (fl_load_relaxed(&pc->flags) & FL_PC_SHARED) != 0);
  return 0;
}

FL_PT_API int pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a)
{
  int pshared = PTHREAD_PROCESS_PRIVATE;
  clockid_t clock = CLOCK_REALTIME;
  struct fl_pcond *pc = fl_pc(c);

  if (fl_pt_tsan)
    return fl_pt_glibc.cond_init(c, a);
  if (a != NULL) {
    /* glibc's attribute object, read through glibc's getters.  */
    pthread_condattr_getpshared(a, &pshared);
    pthread_condattr_getclock(a, &clock);
  }
  memset(c, 0, sizeof *c);
  pc->flags = (pshared == PTHREAD_PROCESS_SHARED ? FL_PC_SHARED : 0)
              | (clock == CLOCK_MONOTONIC ? FL_PC_MONOTONIC : 0);
  return 0;
}

/* As glibc's: waits until every waiter that was woken has left (so that
 * the memory may be freed right after); waiters that were never woken
 * would make it wait for ever, which POSIX leaves undefined.  */
FL_PT_API int pthread_cond_destroy(pthread_cond_t *c)
{
  struct fl_pcond *pc = fl_pc(c);
  int shared = (fl_load_relaxed(&pc->flags) & FL_PC_SHARED) != 0;

  if (fl_pt_tsan)
    return fl_pt_glibc.cond_destroy(c);
  for (;;) {
    /* Acquire: pairs with the waiters' release check-out.  */
    uint32_t w = (uint32_t)fl_load_acquire(W(&pc->waiters));
    if ((w & FL_PC_COUNT) == 0)
      return 0;
    if ((w & FL_PC_DESTROYING) == 0
        && (uint32_t)fl_atomic_cmpxchg_relaxed(W(&pc->waiters), (int32_t)w,
                                               (int32_t)(w | FL_PC_DESTROYING))
               != w)
      continue;
    fl_pt_wait(&pc->waiters, w | FL_PC_DESTROYING, shared, CLOCK_MONOTONIC,
               NULL, 0);
  }
}

FL_PT_API int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
  if (fl_pt_tsan)
    return fl_pt_glibc.cond_wait(c, m);
  return cond_wait(c, m, CLOCK_REALTIME, NULL);
}

FL_PT_API int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
                                     const struct timespec *abstime)
{
  int monotonic = (fl_load_relaxed(&fl_pc(c)->flags) & FL_PC_MONOTONIC) != 0;

  if (fl_pt_tsan)
    return fl_pt_glibc.cond_timedwait(c, m, abstime);
  return cond_wait(c, m, monotonic ? CLOCK_MONOTONIC : CLOCK_REALTIME, abstime);
}

FL_PT_API int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m,
                                     clockid_t clock,
                                     const struct timespec *abstime)
{
  if (fl_pt_tsan)
    return fl_pt_glibc.cond_clockwait(c, m, clock, abstime);
  if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
    return EINVAL;
  return cond_wait(c, m, clock, abstime);
}

FL_PT_API int pthread_cond_signal(pthread_cond_t *c)
{
  if (fl_pt_tsan)
    return fl_pt_glibc.cond_signal(c);
  return cond_wake(c, 1);
}

FL_PT_API int pthread_cond_broadcast(pthread_cond_t *c)
{
  if (fl_pt_tsan)
    return fl_pt_glibc.cond_broadcast(c);
  return cond_wake(c, INT32_MAX);
}
