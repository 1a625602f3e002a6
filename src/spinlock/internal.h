/* src/spinlock/internal.h: what the three spinlocks share inside the
 * library.  */
#ifndef FASTLOCK_SPINLOCK_INTERNAL_H
#define FASTLOCK_SPINLOCK_INTERNAL_H

#include <errno.h>

#include <fastlock/spinlock.h>

#include "spinlock/wait.h"
#include "sys/annotate.h"

/* The sysmips shim builds its read-modify-writes from spinlocks in a
 * per-process table: they are not atomic against another process.  */
#if FL_ATOMICS_ASM && FL_ARCH_MIPS && FL_MIPS_SYSMIPS
# define FL_SPIN_PSHARED_WORKS 0
#else
# define FL_SPIN_PSHARED_WORKS 1
#endif

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

/* Tell the tools about a new lock: it is a lock (an exclusive-only
 * rwlock for the Valgrind tools), and its word is synchronisation they
 * cannot model, so they must not check it.  The out-of-line lock
 * functions hide the word again, for locks that were never _init'ed.  */
#define FL_SPIN_ANNOTATE_CREATE(l)                                          \
  do {                                                                      \
    FL_VG_HIDE(l, sizeof *(l));                                             \
    FL_VG_RWLOCK_CREATE(l);                                                 \
    FL_TSAN_CREATE(l);                                                      \
  } while (0)

#define FL_SPIN_ANNOTATE_DESTROY(l)                                         \
  do {                                                                      \
    FL_VG_RWLOCK_DESTROY(l);                                                \
    FL_TSAN_DESTROY(l);                                                     \
  } while (0)

/* The library's _init, _destroy, _lock, _trylock and _unlock of the lock
 * type T with short name s (fl_s_init, ...), the same for all three locks
 * but for three things about the word v: whether _init may take
 * FL_PSHARED (pshared_allowed), whether the lock is busy, so that _destroy
 * must refuse it (busy(v)), and whether it is held, so that _unlock may
 * release it (held(v)).
 *
 * _lock, _trylock and _unlock are the inline fastpaths with the tools told
 * what happened.  The word is hidden from the Valgrind tools again on
 * every lock, for locks that were never _init'ed.  An unlock of a lock
 * that is not held is caught before the tools hear of it, so that
 * ThreadSanitizer does not report what the return value already does.
 * None of the three can see a relock by its holder, so _lock has no misuse
 * to catch first.  */
#define FL_SPIN_DEFINE_API(s, T, pshared_allowed, busy, held)               \
  int fl_##s##_init(T *l, unsigned flags)                                   \
  {                                                                         \
    int rc = fl_spin_check_flags(flags, pshared_allowed);                   \
                                                                            \
    if (rc != 0)                                                            \
      return rc;                                                            \
    fl_store_relaxed(&l->word, 0);                                          \
    FL_SPIN_ANNOTATE_CREATE(l);                                             \
    return 0;                                                               \
  }                                                                         \
                                                                            \
  int fl_##s##_destroy(T *l)                                                \
  {                                                                         \
    if (busy((uint32_t)fl_load_relaxed(&l->word)))                          \
      return EBUSY;                                                         \
    FL_SPIN_ANNOTATE_DESTROY(l);                                            \
    return 0;                                                               \
  }                                                                         \
                                                                            \
  int (fl_##s##_lock)(T *l)                                                 \
  {                                                                         \
    FL_VG_HIDE(l, sizeof *l);                                               \
    FL_TSAN_PRE_LOCK(l, 0);                                                 \
    fl_##s##_lock_inline(l);                                                \
    FL_TSAN_POST_LOCK(l, 0);                                                \
    FL_VG_RWLOCK_ACQUIRED(l, 1);                                            \
    return 0;                                                               \
  }                                                                         \
                                                                            \
  int (fl_##s##_trylock)(T *l)                                              \
  {                                                                         \
    int rc;                                                                 \
                                                                            \
    FL_VG_HIDE(l, sizeof *l);                                               \
    FL_TSAN_PRE_LOCK(l, FL_TSAN_TRY);                                       \
    rc = fl_##s##_trylock_inline(l);                                        \
    FL_TSAN_POST_LOCK(l, FL_TSAN_TRY | (rc != 0 ? FL_TSAN_TRY_FAILED : 0u)); \
    if (rc == 0)                                                            \
      FL_VG_RWLOCK_ACQUIRED(l, 1);                                          \
    return rc;                                                              \
  }                                                                         \
                                                                            \
  int (fl_##s##_unlock)(T *l)                                               \
  {                                                                         \
    if (!held((uint32_t)fl_load_relaxed(&l->word)))                         \
      return EPERM;                                                         \
    FL_VG_RWLOCK_RELEASED(l, 1);                                            \
    FL_TSAN_PRE_UNLOCK(l, 0);                                               \
    fl_##s##_unlock_inline(l);                                              \
    FL_TSAN_POST_UNLOCK(l, 0);                                              \
    return 0;                                                               \
  }

#endif /* FASTLOCK_SPINLOCK_INTERNAL_H */
