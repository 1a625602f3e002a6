/* src/pthread/spin.c: pthread_spin_* on fl_spinlock_t, which is exactly
 * pthread_spinlock_t's size (a zero word is an unlocked lock, as glibc's
 * is after pthread_spin_init).  Under helgrind or drd fl_spin_* take their
 * own watched paths (fl_tools_active), which tell the tool what the lock
 * does: nothing is annotated here, or the tool would see each lock taken
 * twice.  */
#include "config.h"

#include "lockdep/lockdep.h"
#include "pthread/internal.h"

#include <fastlock/spinlock.h>
#include <errno.h>

_Static_assert(sizeof(fl_spinlock_t) == sizeof(pthread_spinlock_t),
               "fl_spinlock_t is pthread_spinlock_t's size");
_Static_assert(_Alignof(fl_spinlock_t) <= _Alignof(pthread_spinlock_t),
               "no more alignment than pthread_spinlock_t");

static fl_spinlock_t *fl_ps(pthread_spinlock_t *l)
{
  return (fl_spinlock_t *)(void *)l;
}

FL_PT_API int pthread_spin_init(pthread_spinlock_t *l, int pshared)
{
  if (pshared != PTHREAD_PROCESS_PRIVATE && pshared != PTHREAD_PROCESS_SHARED)
    return EINVAL;
  int rc = fl_spin_init(fl_ps(l),
                        pshared == PTHREAD_PROCESS_SHARED ? FL_PSHARED : 0);

  /* fl_spin_init gave the lock the class of its call site, which is
   * here for every spinlock: the checker's class is our caller's.  */
  if (rc == 0)
    fl_lockdep_init(fl_ps(l), "pthread_spinlock_t", FL_LOCKDEP_SPIN,
                    __builtin_return_address(0));
  return rc;
}

FL_PT_API int pthread_spin_destroy(pthread_spinlock_t *l)
{
  return fl_spin_destroy(fl_ps(l));
}

FL_PT_API int pthread_spin_lock(pthread_spinlock_t *l)
{
  return fl_spin_lock(fl_ps(l));
}

FL_PT_API int pthread_spin_trylock(pthread_spinlock_t *l)
{
  return fl_spin_trylock(fl_ps(l));
}

FL_PT_API int pthread_spin_unlock(pthread_spinlock_t *l)
{
  return fl_spin_unlock(fl_ps(l));
}
