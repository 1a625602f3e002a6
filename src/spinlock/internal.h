/* src/spinlock/internal.h: what the three spinlocks share inside the
 * library.  */
#ifndef FASTLOCK_SPINLOCK_INTERNAL_H
#define FASTLOCK_SPINLOCK_INTERNAL_H

#include <errno.h>

#include <fastlock/spinlock.h>

#include "spinlock/wait.h"
#include "lockdep/lockdep.h"
#include "sys/annotate.h"

/* The sysmips shim builds its read-modify-writes from spinlocks in a
 * per-process table: they are not atomic against another process.  */
#if FL_ATOMICS_ASM && FL_ARCH_MIPS && FL_MIPS_SYSMIPS
# define FL_SPIN_PSHARED_WORKS 0
#else
# define FL_SPIN_PSHARED_WORKS 1
#endif

/* For fl_spinlock_t and fl_qspinlock_t, whose attempt returns the old
 * word (FL_TOOLS_ON ORed in by the inline code): it took the lock if the
 * word was 0, and a trylock whose attempt did not is EBUSY, the lock
 * being held or waited for.  */
static inline int fl_spin_was_free(int32_t old)
{
  return (old & ~(int32_t)FL_TOOLS_ON) == 0;
}

static inline int fl_spin_try_failed(const void *l, int32_t old)
{
  (void)l;
  (void)old;
  return EBUSY;
}

/* The ticket lock's wait for its ticket (tests/test-spinlock-ticket.c
 * calls it with a ticket it made up).  */
int fl_ticket_lock_wait(fl_ticketlock_t *l, uint32_t ticket);

/* The _init flags check: FL_PSHARED is the only flag, and only the locks
 * that keep all their state in their word may take it.  */
static inline int fl_spin_check_flags(unsigned flags, int pshared_allowed)
{
  if (flags & ~FL_PSHARED)
    return EINVAL;
  if (flags & FL_PSHARED) {
    if (!pshared_allowed)
      return EINVAL;
    if (!FL_SPIN_PSHARED_WORKS)
      return ENOTSUP;
  }
  return 0;
}

/* The library's _init, _destroy, _lock, _trylock and _unlock of the lock
 * type T with short name s (fl_s_init, ...), and the slowpaths of its
 * inline functions, the same for all three locks but for what each lock
 * does with its word v:
 *
 *   pshared_allowed   whether _init may take FL_PSHARED;
 *   busy(v)           _destroy must refuse the lock;
 *   held(v)           _unlock may release it;
 *   taken(old)        the fastpath's atomic (fl_s_attempt) took the lock
 *                     (old may have FL_TOOLS_ON ORed in);
 *   wait(l, old)      wait for it after an attempt that did not;
 *   try_first(l)      a trylock's first try: 0 if it took the lock (the
 *                     inline trylock passes that with FL_TOOLS_ON ORed
 *                     in, which the slowpath takes out);
 *   try_again(l, st)  the answer to a trylock whose try left st: 0 (it
 *                     took the lock after all) or EBUSY;
 *   release(l)        release the lock, or EPERM if it is not held.
 *
 * Watched operations (fl_tools_active set, or the out-of-line functions
 * called by name, as a TSan program does) tell helgrind and drd (the
 * lock is an exclusive-only rwlock to them, its word hidden from them on
 * every acquisition, for locks that never went through _init),
 * ThreadSanitizer, and the lock-order checker.  The checker hears of a
 * blocking acquisition before it waits, so that a lock-order inversion
 * is reported even when this run then deadlocks on it, and of a release
 * before the lock is free.  An unlock of a lock that is not held is
 * caught before the race tools hear of it, so that ThreadSanitizer does
 * not report what the return value already does.  */
#define FL_SPIN_DEFINE_API(s, T, pshared_allowed, busy, held, taken, wait,     \
                           try_first, try_again, release)                      \
 int fl_##s##_init(T *l, unsigned flags)                                       \
 {                                                                             \
  int rc = fl_spin_check_flags(flags, pshared_allowed);                        \
                                                                               \
  if (rc != 0)                                                                 \
   return rc;                                                                  \
  fl_store_relaxed(&l->word, 0);                                               \
  FL_VG_HIDE(l, sizeof *l);                                                    \
  FL_VG_RWLOCK_CREATE(l);                                                      \
  FL_TSAN_CREATE(l);                                                           \
  fl_lockdep_init(l, #T, FL_LOCKDEP_SPIN, __builtin_return_address(0));        \
  return 0;                                                                    \
 }                                                                             \
                                                                               \
 int fl_##s##_destroy(T *l)                                                    \
 {                                                                             \
  fl_lockdep_destroy(l);                                                       \
  if (busy((uint32_t)fl_load_relaxed(&l->word)))                               \
   return EBUSY;                                                               \
  FL_VG_RWLOCK_DESTROY(l);                                                     \
  FL_TSAN_DESTROY(l);                                                          \
  return 0;                                                                    \
 }                                                                             \
                                                                               \
 static int fl_##s##_lock_watched(T *l, int32_t old)                           \
 {                                                                             \
  FL_VG_HIDE(l, sizeof *l);                                                    \
  fl_lockdep_acquire(l, #T, FL_LOCKDEP_SPIN);                                  \
  if (!taken(old))                                                             \
   wait(l, old);                                                               \
  FL_VG_RWLOCK_ACQUIRED(l, 1);                                                 \
  return 0;                                                                    \
 }                                                                             \
                                                                               \
 int fl_##s##_lock_slowpath(T *l, int32_t old)                                 \
 {                                                                             \
  if (FL_TOOLS_ACTIVE)                                                         \
   return fl_##s##_lock_watched(l, old);                                       \
  return wait(l, old);                                                         \
 }                                                                             \
                                                                               \
 int(fl_##s##_lock)(T * l)                                                     \
 {                                                                             \
  int rc;                                                                      \
                                                                               \
  FL_TSAN_PRE_LOCK(l, 0);                                                      \
  rc = fl_##s##_lock_watched(l, fl_##s##_attempt(l));                          \
  FL_TSAN_POST_LOCK(l, 0);                                                     \
  return rc;                                                                   \
 }                                                                             \
                                                                               \
 static int fl_##s##_trylock_watched(T *l, int32_t st)                         \
 {                                                                             \
  int rc = (st & ~(int32_t)FL_TOOLS_ON) == 0 ? 0 : try_again(l, st);           \
                                                                               \
  if (rc == 0) {                                                               \
   FL_VG_HIDE(l, sizeof *l);                                                   \
   fl_lockdep_acquire(l, #T, FL_LOCKDEP_SPIN | FL_LOCKDEP_TRY);                \
   FL_VG_RWLOCK_ACQUIRED(l, 1);                                                \
  }                                                                            \
  return rc;                                                                   \
 }                                                                             \
                                                                               \
 int fl_##s##_trylock_slowpath(T *l, int32_t st)                               \
 {                                                                             \
  if (FL_TOOLS_ACTIVE)                                                         \
   return fl_##s##_trylock_watched(l, st);                                     \
  return try_again(l, st);                                                     \
 }                                                                             \
                                                                               \
 int(fl_##s##_trylock)(T * l)                                                  \
 {                                                                             \
  int rc;                                                                      \
                                                                               \
  FL_TSAN_PRE_LOCK(l, FL_TSAN_TRY);                                            \
  rc = fl_##s##_trylock_watched(l, try_first(l));                              \
  FL_TSAN_POST_LOCK(l, FL_TSAN_TRY | (rc != 0 ? FL_TSAN_TRY_FAILED : 0u));     \
  return rc;                                                                   \
 }                                                                             \
                                                                               \
 int(fl_##s##_unlock)(T * l)                                                   \
 {                                                                             \
  fl_lockdep_release(l);                                                       \
  if (!held((uint32_t)fl_load_relaxed(&l->word)))                              \
   return EPERM;                                                               \
  FL_VG_RWLOCK_RELEASED(l, 1);                                                 \
  FL_TSAN_PRE_UNLOCK(l, 0);                                                    \
  release(l);                                                                  \
  FL_TSAN_POST_UNLOCK(l, 0);                                                   \
  return 0;                                                                    \
 }                                                                             \
                                                                               \
 int fl_##s##_unlock_slowpath(T *l)                                            \
 {                                                                             \
  if (FL_TOOLS_ACTIVE)                                                         \
   return (fl_##s##_unlock)(l);                                                \
  return release(l);                                                           \
 }

#endif /* FASTLOCK_SPINLOCK_INTERNAL_H */
