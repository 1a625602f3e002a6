/* src/pthread/mutex.c: pthread_mutex_* (the layout and the lock word's
 * states are in mutex.h; robust lists in robust.c).
 *
 * The default kind (NORMAL, private: a zero kind word) takes the whole
 * fast path inline here: one compare-and-swap to lock, one exchange to
 * unlock.  Every other kind goes through mutex_lock()/mutex_unlock(),
 * which check ownership against the TID in the lock word (EDEADLK,
 * EPERM), count recursion, spin a bounded while for ADAPTIVE, keep the
 * robust list and hand PRIO_INHERIT/PRIO_PROTECT to glibc.
 *
 * The lock-order checker (src/lockdep/) hears of every kind's
 * acquisitions and releases, in mutex_lock()/mutex_unlock(), while
 * fl_tools_active is set; the inline paths cannot tell it, so they step
 * aside then (fl_pt_vg is nonzero: annotate.c) and cost nothing more
 * while it is off.  */
#include "config.h"

#include <fastlock/common.h>

#include "lockdep/lockdep.h"
#include "pthread/mutex.h"
#include "sys/clock.h"
#include "sys/cpu.h"
#include "sys/futex.h"

#include <errno.h>
#include <string.h>
#if defined(HAVE_SYS_SINGLE_THREADED_H)
# include <sys/single_threaded.h>
#endif

#define W(p) ((int32_t *)(void *)(p))

/* How long an ADAPTIVE mutex spins on a held word before it sleeps:
 * glibc's default bound (its max_adaptive_count).  */
#define FL_PM_SPIN 100

enum { BLOCK, TRY };

/* Nonzero while the process has only ever had one thread (glibc keeps
 * __libc_single_threaded, and clears it before a second thread starts,
 * which then happens-after everything this one did).  A private mutex of
 * such a process has nobody to race with: glibc takes and releases it
 * with plain loads and stores, and so do we.  */
static inline int single_threaded(void)
{
#if defined(HAVE_SYS_SINGLE_THREADED_H)
  return __libc_single_threaded;
#else
  return 0;
#endif
}

/* Keeps the compiler from moving the critical section across a plain
 * lock-word store (the CPU cannot reorder them as seen by this one
 * thread, and a signal handler sees program order).  */
#define COMPILER_BARRIER() __asm__ __volatile__("" : : : "memory")

static int pm_futex_shared(int32_t kind)
{
  /* The kernel wakes a dead robust owner's waiters with a shared
   * operation (robust.c): robust mutexes sleep on shared futexes.  */
  return (kind & (FL_PM_PSHARED | FL_PM_ROBUST)) != 0;
}

static void vg_acquired(pthread_mutex_t *m)
{
  if (fl_pt_under_vg()) {
    fl_pt_vg_hide(m, sizeof *m);
    fl_pt_vg_acquired(m, 1);
  }
}

static void vg_released(pthread_mutex_t *m)
{
  if (fl_pt_under_vg())
    fl_pt_vg_released(m, 1);
}

/* Take the lock word for tid: 0, EOWNERDEAD (it was a dead owner's),
 * EBUSY (TRY), ETIMEDOUT, EINVAL (a bad abstime, once we must wait).  */
static int acquire_word(struct fl_pmutex *pm, int32_t kind, uint32_t tid,
                        int how, clockid_t clock,
                        const struct timespec *abstime)
{
  uint32_t slept = 0;
  int spins =
      (kind & FL_PM_TYPE_MASK) == PTHREAD_MUTEX_ADAPTIVE_NP ? FL_PM_SPIN : 0;

  for (;;) {
    uint32_t v = (uint32_t)fl_load_relaxed(W(&pm->lock));

    if ((v & FL_PM_TID_MASK) == 0) {
      /* Free, or a dead owner's.  A thread that slept takes it with
       * WAITERS set: it cannot know whether others still sleep.
       * Acquire: the critical section starts after the word is ours.  */
      uint32_t nv = tid | (v & FL_PM_WAITERS) | slept;
      if ((uint32_t)fl_atomic_cmpxchg_acquire(W(&pm->lock), (int32_t)v,
                                              (int32_t)nv)
          == v)
        return (v & FL_PM_OWNER_DIED) != 0 ? EOWNERDEAD : 0;
      continue;
    }
    if (how == TRY)
      return EBUSY;
    if (spins > 0) {
      spins--;
      fl_cpu_relax();
      continue;
    }
    if (abstime != NULL && !fl_timespec_valid(abstime))
      return EINVAL;
    if ((v & FL_PM_WAITERS) == 0) {
      /* Relaxed: the flag only asks the owner for a wake-up; the futex
       * call re-reads the word in the kernel.  */
      if ((uint32_t)fl_atomic_cmpxchg_relaxed(W(&pm->lock), (int32_t)v,
                                              (int32_t)(v | FL_PM_WAITERS))
          != v)
        continue;
      v |= FL_PM_WAITERS;
    }
    int rc = fl_pt_wait(&pm->lock, v, pm_futex_shared(kind), clock, abstime, 0);
    if (rc != 0)
      return rc;
    slept = FL_PM_WAITERS;
  }
}

/* Release the lock word; wake one sleeper (all for an unrecoverable
 * robust mutex, so that each of them sees it).  */
static void release_word(struct fl_pmutex *pm, int32_t kind, int all)
{
  /* Release: the critical section's accesses stay before the store
   * that frees the word.  */
  uint32_t v = (uint32_t)fl_atomic_xchg_release(W(&pm->lock), 0);
  if ((v & FL_PM_WAITERS) != 0)
    fl_futex_wake(&pm->lock, all ? INT32_MAX : 1, pm_futex_shared(kind));
}

static int kind_valid(int32_t kind)
{
  return kind >= 0
         && (kind & ~(FL_PM_TYPE_MASK | FL_PM_ROBUST | FL_PM_PSHARED)) == 0;
}

/* glibc's mutex on this object: a PI or PP kind, or every mutex in a
 * ThreadSanitizer program (tsan.c).  */
static int delegated(int32_t kind)
{
  return fl_pt_tsan || (kind >= 0 && (kind & (FL_PM_PI | FL_PM_PP)) != 0);
}

static int lock_word_or_glibc(pthread_mutex_t *m, int how, clockid_t clock,
                              const struct timespec *abstime)
{
  struct fl_pmutex *pm = fl_pm(m);
  int32_t kind = fl_load_relaxed(&pm->kind);
  int type = kind & FL_PM_TYPE_MASK;
  uint32_t tid;
  void *head = NULL;
  int rc;

  if (delegated(kind)) {
    if (how == TRY)
      return fl_pt_glibc.mutex_trylock(m);
    if (abstime == NULL && how == BLOCK && clock == CLOCK_REALTIME)
      return fl_pt_glibc.mutex_lock(m);
    return fl_pt_glibc.mutex_clocklock(m, clock, abstime);
  }
  if (!kind_valid(kind))
    return EINVAL;
  tid = (uint32_t)fl_pt_tid();
  if ((fl_load_relaxed(W(&pm->lock)) & FL_PM_TID_MASK) == tid) {
    if (type == PTHREAD_MUTEX_RECURSIVE) {
      /* Only the owner touches depth while it owns the word.  */
      if (pm->depth == UINT32_MAX)
        return EAGAIN;
      pm->depth++;
      return 0;
    }
    /* As glibc: trylock says EBUSY but for a robust ERRORCHECK mutex.  */
    if (how == TRY && (kind & FL_PM_ROBUST) == 0)
      return EBUSY;
    if (type == PTHREAD_MUTEX_ERRORCHECK)
      return EDEADLK;
    if (how == TRY)
      return EBUSY;
    /* NORMAL and ADAPTIVE deadlock, as POSIX says (until a timeout).  */
  }
  if ((kind & FL_PM_ROBUST) != 0) {
    if (fl_load_relaxed(&pm->state) == FL_PM_UNRECOVERABLE)
      return ENOTRECOVERABLE;
    head = fl_pt_robust_head();
    if (head != NULL)
      fl_pt_robust_pending(head, pm);
  }
  rc = acquire_word(pm, kind, tid, how, clock, abstime);
  if (head != NULL) {
    if (rc == 0 || rc == EOWNERDEAD)
      fl_pt_robust_link(head, pm);
    fl_pt_robust_pending(head, NULL);
  }
  if (rc == EOWNERDEAD) {
    /* Until pthread_mutex_consistent, unlocking makes it unusable.  */
    fl_store_relaxed(&pm->state, FL_PM_INCONSISTENT);
  } else if (rc == 0 && (kind & FL_PM_ROBUST) != 0
             && fl_load_relaxed(&pm->state) == FL_PM_UNRECOVERABLE) {
    /* Made unrecoverable while we waited: pass the word on.  */
    if (head != NULL) {
      fl_pt_robust_pending(head, pm);
      fl_pt_robust_unlink(head, pm);
    }
    release_word(pm, kind, 1);
    if (head != NULL)
      fl_pt_robust_pending(head, NULL);
    return ENOTRECOVERABLE;
  }
  if (rc == 0 || rc == EOWNERDEAD) {
    pm->depth = 0;
    vg_acquired(m);
  }
  return rc;
}

/* ------------------------------------------------------------------ */
/* The lock-order checker.                                             */
/* ------------------------------------------------------------------ */

#define LD_KIND "pthread_mutex_t"

static int ld_on(void)
{
  return fl_load_relaxed(&fl_tools_active) != 0;
}

static int acquired(int rc)
{
  return rc == 0 || rc == EOWNERDEAD;
}

/* Whether a lock call of how on m, of kind, would take m anew, so that
 * the checker hears of it: not a recursive mutex's relock, nor a call
 * refused (EDEADLK, EBUSY, EINVAL) because the caller holds it or the
 * kind is bad.  A NORMAL or ADAPTIVE mutex's relock, which deadlocks, is
 * one: the checker reports it.  glibc keeps the owner's TID of a kind we
 * delegate in __owner (our state word).  */
static int takes_anew(pthread_mutex_t *m, int32_t kind, int how)
{
  struct fl_pmutex *pm = fl_pm(m);
  int type = kind & FL_PM_TYPE_MASK;
  uint32_t owner;

  if (delegated(kind))
    owner = (uint32_t)fl_load_relaxed(&pm->state);
  else if (kind_valid(kind))
    owner = (uint32_t)fl_load_relaxed(W(&pm->lock)) & FL_PM_TID_MASK;
  else
    return 0;
  if (owner != (uint32_t)fl_pt_tid())
    return 1;
  return how != TRY && type != PTHREAD_MUTEX_RECURSIVE
         && type != PTHREAD_MUTEX_ERRORCHECK;
}

/* Whether an unlock of m, of kind, frees it (full: a condition wait's,
 * whatever the depth), rather than counting a recursion down.  glibc's
 * count (our depth word) of a recursive mutex it keeps is 1 when held
 * once; ours counts the extra locks.  */
static int frees(pthread_mutex_t *m, int32_t kind, int full)
{
  uint32_t depth = (uint32_t)fl_load_relaxed(W(&fl_pm(m)->depth));

  if ((kind & FL_PM_TYPE_MASK) != PTHREAD_MUTEX_RECURSIVE)
    return 1;
  if (delegated(kind))
    return depth <= 1;
  return full || depth == 0;
}

/* Lock m, telling the checker: before a blocking wait (undone if the wait
 * fails: a timeout, ENOTRECOVERABLE), or after a trylock that took it.
 * EOWNERDEAD: the mutex is the caller's.  */
static int mutex_lock(pthread_mutex_t *m, int how, clockid_t clock,
                      const struct timespec *abstime)
{
  int anew, rc;

  if (!ld_on())
    return lock_word_or_glibc(m, how, clock, abstime);
  anew = takes_anew(m, fl_load_relaxed(&fl_pm(m)->kind), how);
  if (anew && how != TRY)
    fl_lockdep_acquire(m, LD_KIND, 0);
  rc = lock_word_or_glibc(m, how, clock, abstime);
  if (anew && how == TRY && acquired(rc))
    fl_lockdep_acquire(m, LD_KIND, FL_LOCKDEP_TRY);
  else if (anew && how != TRY && !acquired(rc))
    fl_lockdep_release(m);
  return rc;
}

/* Release m; full: whatever the recursion depth (a condition wait). */
static int unlock_word_or_glibc(pthread_mutex_t *m, int full)
{
  struct fl_pmutex *pm = fl_pm(m);
  int32_t kind = fl_load_relaxed(&pm->kind);
  int type = kind & FL_PM_TYPE_MASK;
  int unrecoverable = 0;
  void *head = NULL;

  if (delegated(kind))
    return fl_pt_glibc.mutex_unlock(m);
  if (!kind_valid(kind))
    return EINVAL;
  if ((type == PTHREAD_MUTEX_ERRORCHECK || type == PTHREAD_MUTEX_RECURSIVE
       || (kind & FL_PM_ROBUST) != 0)
      && (fl_load_relaxed(W(&pm->lock)) & FL_PM_TID_MASK)
             != (uint32_t)fl_pt_tid())
    return EPERM;
  if (type == PTHREAD_MUTEX_RECURSIVE && pm->depth > 0 && !full) {
    pm->depth--;
    return 0;
  }
  vg_released(m);
  if ((kind & FL_PM_ROBUST) != 0) {
    if (fl_load_relaxed(&pm->state) == FL_PM_INCONSISTENT) {
      fl_store_relaxed(&pm->state, FL_PM_UNRECOVERABLE);
      unrecoverable = 1;
    }
    head = fl_pt_robust_head();
    if (head != NULL) {
      fl_pt_robust_pending(head, pm);
      fl_pt_robust_unlink(head, pm);
    }
  }
  release_word(pm, kind, unrecoverable);
  if (head != NULL)
    fl_pt_robust_pending(head, NULL);
  return 0;
}

/* Unlock m, telling the checker first, before another thread can take
 * it (an unlock that fails with EPERM is a release of a lock not held,
 * which the checker reports).  */
static int mutex_unlock(pthread_mutex_t *m, int full)
{
  int32_t kind = fl_load_relaxed(&fl_pm(m)->kind);

  if (ld_on() && (delegated(kind) || kind_valid(kind)) && frees(m, kind, full))
    fl_lockdep_release(m);
  return unlock_word_or_glibc(m, full);
}

/* ------------------------------------------------------------------ */
/* The API.                                                            */
/* ------------------------------------------------------------------ */

FL_PT_API int pthread_mutex_init(pthread_mutex_t *m,
                                 const pthread_mutexattr_t *a)
{
  int type = PTHREAD_MUTEX_DEFAULT, pshared = PTHREAD_PROCESS_PRIVATE;
  int robust = PTHREAD_MUTEX_STALLED, protocol = PTHREAD_PRIO_NONE;
  struct fl_pmutex *pm = fl_pm(m);

  if (a != NULL) {
    /* glibc's attribute object, read through glibc's getters.  */
    pthread_mutexattr_gettype(a, &type);
    pthread_mutexattr_getpshared(a, &pshared);
    pthread_mutexattr_getrobust(a, &robust);
    pthread_mutexattr_getprotocol(a, &protocol);
  }
  /* The checker's class: the code that called us.  */
  if (ld_on())
    fl_lockdep_init(m, LD_KIND, 0, __builtin_return_address(0));
  if (protocol != PTHREAD_PRIO_NONE || fl_pt_tsan) {
    int rc = fl_pt_glibc_resolve();
    return rc != 0 ? rc : fl_pt_glibc.mutex_init(m, a);
  }
  memset(m, 0, sizeof *m);
  pm->kind = (type & FL_PM_TYPE_MASK)
             | (robust == PTHREAD_MUTEX_ROBUST ? FL_PM_ROBUST : 0)
             | (pshared == PTHREAD_PROCESS_SHARED ? FL_PM_PSHARED : 0);
  if (fl_pt_under_vg())
    fl_pt_vg_hide(m, sizeof *m);
  return 0;
}

FL_PT_API int pthread_mutex_destroy(pthread_mutex_t *m)
{
  struct fl_pmutex *pm = fl_pm(m);
  int32_t kind = fl_load_relaxed(&pm->kind);

  /* Before the EBUSY answer: destroying a mutex the caller holds is what
   * the checker reports.  */
  if (ld_on() && (delegated(kind) || kind_valid(kind)))
    fl_lockdep_destroy(m);
  if (delegated(kind))
    return fl_pt_glibc.mutex_destroy(m);
  if (!kind_valid(kind))
    return EINVAL;
  if ((fl_load_relaxed(W(&pm->lock)) & FL_PM_TID_MASK) != 0)
    return EBUSY;
  if (fl_pt_under_vg())
    fl_pt_vg_destroyed(m);
  /* As glibc: a destroyed mutex has kind -1, and using it is EINVAL.  */
  fl_store_relaxed(&pm->kind, -1);
  return 0;
}

FL_PT_API int pthread_mutex_lock(pthread_mutex_t *m)
{
  struct fl_pmutex *pm = fl_pm(m);

  if (__builtin_expect(fl_load_relaxed(&pm->kind) == 0 && fl_pt_vg == 0, 1)) {
    if (single_threaded()) {
      if (fl_load_relaxed(W(&pm->lock)) == 0) {
        fl_store_relaxed(W(&pm->lock), fl_pt_tid());
        COMPILER_BARRIER();
        return 0;
      }
    } else if (fl_atomic_cmpxchg_acquire(W(&pm->lock), 0, fl_pt_tid()) == 0) {
      /* Acquire: the critical section starts after the word is ours.  */
      return 0;
    }
  }
  return mutex_lock(m, BLOCK, CLOCK_REALTIME, NULL);
}

FL_PT_API int pthread_mutex_trylock(pthread_mutex_t *m)
{
  return mutex_lock(m, TRY, CLOCK_REALTIME, NULL);
}

FL_PT_API int pthread_mutex_timedlock(pthread_mutex_t *m,
                                      const struct timespec *abstime)
{
  return mutex_lock(m, BLOCK, CLOCK_REALTIME, abstime);
}

FL_PT_API int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clock,
                                      const struct timespec *abstime)
{
  if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
    return EINVAL;
  return mutex_lock(m, BLOCK, clock, abstime);
}

FL_PT_API int pthread_mutex_unlock(pthread_mutex_t *m)
{
  struct fl_pmutex *pm = fl_pm(m);

  if (__builtin_expect(fl_load_relaxed(&pm->kind) == 0 && fl_pt_vg == 0, 1)) {
    uint32_t v;
    if (single_threaded()) {
      COMPILER_BARRIER();
      v = (uint32_t)fl_load_relaxed(W(&pm->lock));
      fl_store_relaxed(W(&pm->lock), 0);
    } else {
      /* Release: the critical section stays before the freeing store.  */
      v = (uint32_t)fl_atomic_xchg_release(W(&pm->lock), 0);
    }
    if (__builtin_expect((v & FL_PM_WAITERS) != 0, 0))
      fl_futex_wake(&pm->lock, 1, 0);
    return 0;
  }
  return mutex_unlock(m, 0);
}

FL_PT_API int pthread_mutex_consistent(pthread_mutex_t *m)
{
  struct fl_pmutex *pm = fl_pm(m);
  int32_t kind = fl_load_relaxed(&pm->kind);

  if (delegated(kind))
    return fl_pt_glibc.mutex_consistent(m);
  if (!kind_valid(kind) || (kind & FL_PM_ROBUST) == 0
      || fl_load_relaxed(&pm->state) != FL_PM_INCONSISTENT
      || (fl_load_relaxed(W(&pm->lock)) & FL_PM_TID_MASK)
             != (uint32_t)fl_pt_tid())
    return EINVAL;
  fl_store_relaxed(&pm->state, 0);
  return 0;
}

FL_PT_API int pthread_mutex_getprioceiling(const pthread_mutex_t *m,
                                           int *ceiling)
{
  int rc = fl_pt_glibc_resolve();
  return rc != 0 ? rc : fl_pt_glibc.mutex_getprioceiling(m, ceiling);
}

FL_PT_API int pthread_mutex_setprioceiling(pthread_mutex_t *m, int ceiling,
                                           int *old)
{
  int rc = fl_pt_glibc_resolve();
  return rc != 0 ? rc : fl_pt_glibc.mutex_setprioceiling(m, ceiling, old);
}

/* ------------------------------------------------------------------ */
/* For the condition variable.                                         */
/* ------------------------------------------------------------------ */

int fl_pt_mutex_release_for_wait(pthread_mutex_t *m, uint32_t *depth)
{
  struct fl_pmutex *pm = fl_pm(m);
  int32_t kind = fl_load_relaxed(&pm->kind);

  *depth = 0;
  if (!delegated(kind) && kind_valid(kind))
    *depth = pm->depth;
  return mutex_unlock(m, 1);
}

int fl_pt_mutex_reacquire(pthread_mutex_t *m, uint32_t depth)
{
  int rc = mutex_lock(m, BLOCK, CLOCK_REALTIME, NULL);
  if ((rc == 0 || rc == EOWNERDEAD) && !delegated(fl_pm(m)->kind))
    fl_pm(m)->depth = depth;
  return rc;
}
