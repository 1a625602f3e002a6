/* src/pthread/delegate.c: glibc's own mutex functions, for the kinds the
 * drop-in hands to glibc (priority inheritance, priority protection), and
 * its condition-variable functions, for a ThreadSanitizer program, where
 * the drop-in hands both to glibc (tsan.c).
 *
 * Those kinds need the kernel's PI futexes and glibc's ceiling
 * bookkeeping; glibc implements them on the very pthread_mutex_t the
 * program passes, so the drop-in calls glibc's function on that object
 * rather than fail or pretend.  dlsym(RTLD_NEXT) finds the definition
 * after ours in the lookup order: libc.so.6's on glibc >= 2.34, and
 * libpthread.so.0's before.  It may allocate, so it runs when such a
 * mutex is initialised (glibc has no static initializer for these
 * kinds), never on a lock path.  */
#define _GNU_SOURCE 1
#include "config.h"

#include "pthread/internal.h"

#include <dlfcn.h>
#include <errno.h>

struct fl_pt_glibc fl_pt_glibc;

/* 0: not yet resolved; 1: resolved; -1: glibc's functions are missing.  */
static int32_t resolved;

#define RESOLVE(field, name)                                                   \
 do {                                                                          \
  void *sym = dlsym(RTLD_NEXT, name);                                          \
  if (sym == NULL)                                                             \
   ok = 0;                                                                     \
  __builtin_memcpy(&g.field, &sym, sizeof sym);                                \
 } while (0)

int fl_pt_glibc_resolve(void)
{
  struct fl_pt_glibc g;
  int ok = 1;
  int32_t r = fl_load_acquire(&resolved);

  if (r != 0)
    return r > 0 ? 0 : ENOSYS;
  RESOLVE(mutex_init, "pthread_mutex_init");
  RESOLVE(mutex_destroy, "pthread_mutex_destroy");
  RESOLVE(mutex_lock, "pthread_mutex_lock");
  RESOLVE(mutex_trylock, "pthread_mutex_trylock");
  RESOLVE(mutex_timedlock, "pthread_mutex_timedlock");
  RESOLVE(mutex_clocklock, "pthread_mutex_clocklock");
  RESOLVE(mutex_unlock, "pthread_mutex_unlock");
  RESOLVE(mutex_consistent, "pthread_mutex_consistent");
  RESOLVE(mutex_getprioceiling, "pthread_mutex_getprioceiling");
  RESOLVE(mutex_setprioceiling, "pthread_mutex_setprioceiling");
  RESOLVE(cond_init, "pthread_cond_init");
  RESOLVE(cond_destroy, "pthread_cond_destroy");
  RESOLVE(cond_wait, "pthread_cond_wait");
  RESOLVE(cond_timedwait, "pthread_cond_timedwait");
  RESOLVE(cond_clockwait, "pthread_cond_clockwait");
  RESOLVE(cond_signal, "pthread_cond_signal");
  RESOLVE(cond_broadcast, "pthread_cond_broadcast");
  if (!ok) {
    fl_store_release(&resolved, -1);
    return ENOSYS;
  }
  /* Two threads may resolve at once; both write the same pointers.  The
   * release store publishes them to the lock paths of every thread that
   * learns of the mutex afterwards (through the mutex's init).  */
  fl_pt_glibc = g;
  fl_store_release(&resolved, 1);
  return 0;
}
