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

#endif /* FASTLOCK_SPINLOCK_INTERNAL_H */
