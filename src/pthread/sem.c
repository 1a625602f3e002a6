/* src/pthread/sem.c: sem_init, sem_destroy, sem_wait and its variants,
 * sem_post, sem_getvalue (the protocol is in sem.h).  */
#include "config.h"

#include "pthread/sem.h"
#include "sys/clock.h"
#include "sys/futex.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#define W(p) ((int32_t *)(void *)(p))

enum { BLOCK, TRY };

static struct fl_psem *fl_ps(sem_t *s)
{
  return (struct fl_psem *)(void *)s;
}

static int fail(int err)
{
  errno = err;
  return -1;
}

void fl_pt_sem_setup(sem_t *s, int shared, unsigned value)
{
  struct fl_psem *ps = fl_ps(s);

  memset(s, 0, sizeof *s);
  ps->value = value;
  ps->flags = shared ? FL_PS_SHARED : 0;
}

/* Take one unit if there is one: 0, or EAGAIN.  */
static int take(struct fl_psem *ps)
{
  int32_t v = fl_load_relaxed(W(&ps->value));

  while (v > 0) {
    /* Acquire: what the poster did before its post is visible after.  */
    int32_t seen = fl_atomic_cmpxchg_acquire(W(&ps->value), v, v - 1);
    if (seen == v)
      return 0;
    v = seen;
  }
  return EAGAIN;
}

/* The cleanup of a waiter cancelled in its sleep: check out, and pass
 * on a wake-up that may have been meant for it (a unit it did not take
 * must not be left with the other waiters asleep).  */
static void cancelled(void *arg)
{
  struct fl_psem *ps = arg;
  int shared = (fl_load_relaxed(&ps->flags) & FL_PS_SHARED) != 0;

  fl_atomic_fetch_add_relaxed(W(&ps->nwaiters), -1);
  fl_pt_mb_after_rmw(); /* check out, then look: sem.h */
  if (fl_load_relaxed(W(&ps->value)) > 0)
    fl_futex_wake(&ps->value, 1, shared);
}

static int sem_take(sem_t *s, int how, clockid_t clock,
                    const struct timespec *abstime)
{
  struct fl_psem *ps = fl_ps(s);
  int shared = (fl_load_relaxed(&ps->flags) & FL_PS_SHARED) != 0;
  struct _pthread_cleanup_buffer cleanup;
  int rc;

  if (how != TRY)
    pthread_testcancel(); /* a cancellation point even when not blocking */
  if (take(ps) == 0)
    goto taken;
  if (how == TRY)
    return fail(EAGAIN);
  if (abstime != NULL && !fl_timespec_valid(abstime))
    return fail(EINVAL);
  fl_atomic_fetch_add_relaxed(W(&ps->nwaiters), 1);
  fl_pt_mb_after_rmw(); /* check in, then look: sem.h */
  _pthread_cleanup_push(&cleanup, cancelled, ps);
  for (;;) {
    rc = take(ps);
    if (rc == 0)
      break;
    /* The sleep is a cancellation point, as POSIX has sem_wait's.  */
    rc = fl_futex_wait_cancellable(&ps->value, 0, shared, clock, abstime);
    /* sem_wait is interrupted by a signal handler (EINTR), as POSIX and
     * Linux have it; EAGAIN: value moved before we slept.  */
    if (rc == ETIMEDOUT || rc == EINTR || rc == EINVAL)
      break;
  }
  _pthread_cleanup_pop(&cleanup, 0);
  fl_atomic_fetch_add_relaxed(W(&ps->nwaiters), -1);
  if (rc != 0)
    return fail(rc);
taken:
  if (fl_pt_under_vg()) {
    fl_pt_vg_hide(s, sizeof *s);
    fl_pt_vg_happens_after(s);
  }
  return 0;
}

FL_PT_API int sem_init(sem_t *s, int pshared, unsigned value)
{
  if (value > SEM_VALUE_MAX)
    return fail(EINVAL);
  fl_pt_sem_setup(s, pshared != 0, value);
  return 0;
}

FL_PT_API int sem_destroy(sem_t *s)
{
  (void)s;
  return 0;
}

FL_PT_API int sem_wait(sem_t *s)
{
  return sem_take(s, BLOCK, CLOCK_REALTIME, NULL);
}

FL_PT_API int sem_trywait(sem_t *s)
{
  return sem_take(s, TRY, CLOCK_REALTIME, NULL);
}

FL_PT_API int sem_timedwait(sem_t *s, const struct timespec *abstime)
{
  return sem_take(s, BLOCK, CLOCK_REALTIME, abstime);
}

FL_PT_API int sem_clockwait(sem_t *s, clockid_t clock,
                            const struct timespec *abstime)
{
  if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
    return fail(EINVAL);
  return sem_take(s, BLOCK, clock, abstime);
}

FL_PT_API int sem_post(sem_t *s)
{
  struct fl_psem *ps = fl_ps(s);
  int32_t v = fl_load_relaxed(W(&ps->value));

  if (fl_pt_under_vg()) {
    fl_pt_vg_hide(s, sizeof *s);
    fl_pt_vg_happens_before(s);
  }
  for (;;) {
    int32_t seen;
    if (v == SEM_VALUE_MAX)
      return fail(EOVERFLOW);
    /* Release: what we did before the post is visible to the taker.  */
    seen = fl_atomic_cmpxchg_release(W(&ps->value), v, v + 1);
    if (seen == v)
      break;
    v = seen;
  }
  fl_pt_mb_after_rmw(); /* raise, then look: sem.h */
  if (fl_load_relaxed(W(&ps->nwaiters)) != 0)
    fl_futex_wake(&ps->value, 1,
                  (fl_load_relaxed(&ps->flags) & FL_PS_SHARED) != 0);
  return 0;
}

FL_PT_API int sem_getvalue(sem_t *s, int *sval)
{
  *sval = fl_load_relaxed(W(&fl_ps(s)->value));
  return 0;
}
