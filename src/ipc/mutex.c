/* src/ipc/mutex.c: mutexes (ipc-internal.h: a = owner's client tag |
 * SLOW, b = owner's thread id, c = recursion - 1, d = abandoned).
 * Acquiring is a wait (wait.c); here are creating, releasing and reading.
 * A release by the owner at recursion 1 tries the fastpath first
 * (fastpath.c).
 *
 *   state                   transitions
 *   free (a = 0)            acquire -> owned by T, recursion 1
 *   abandoned (a = 0, d)    acquire -> owned by T, recursion 1, d = 0, the
 *                           acquirer told EOWNERDEAD (exactly once)
 *   owned by T, c = k       T acquires -> k + 1; T releases -> k - 1, free
 *                           at 0; T exits, or T's process dies or is
 *                           cut off -> abandoned (supervise.c)
 *
 * The lock-order checker hears of a release that frees the mutex, and of
 * one that fails with EPERM (a release of a lock not held), after the
 * region lock; of acquisitions, from wait.c.  */
#include "config.h"

#include "ipc/ipc-internal.h"
#include "lockdep/lockdep.h"

#include <errno.h>

int fl_ipc_mutex_create(fl_ipc_t *r, const char *name, int initially_owned,
                        fl_ipc_obj_t *out)
{
  uint32_t v[4] = { 0, 0, 0, 0 };
  int rc;

  if (r == NULL)
    return EINVAL;
  if (initially_owned) {
    v[0] = r->tag;
    v[1] = fl_ipc_tid();
  }
  rc = fl_ipc_object_create(r, name, FL_IPC_MUTEX, v, out);
  /* An owner from now on: watched at its exit (liveness.c).  */
  if (rc == 0 && initially_owned)
    fl_ipc_watch_thread();
  return rc;
}

int fl_ipc_mutex_release(fl_ipc_t *r, fl_ipc_obj_t mutex, uint32_t *prev)
{
  struct fl_ipc_object *o;
  uint32_t i;
  int rc, freed = 0;

  if (r != NULL
      && (rc = fl_ipc_fast_mutex_release(r, mutex, prev)) != FL_IPC_SLOWPATH)
    return rc;
  if ((rc = fl_ipc_enter_object(r, mutex, FL_IPC_MUTEX, &i)) != 0)
    return rc;
  fl_ipc_hold(r, i);
  o = &fl_ipc_objects(r)[i];
  if (o->a != (r->tag | FL_IPC_SLOW) || o->b != fl_ipc_tid()) {
    rc = EPERM;
  } else {
    if (prev != NULL)
      *prev = o->c + 1;
    if (o->c > 0) {
      fl_ipc_set(r, &o->c, o->c - 1);
    } else {
      fl_ipc_set(r, &o->a, FL_IPC_SLOW);
      fl_ipc_set(r, &o->b, 0);
      fl_ipc_wake_scan(r);
      freed = 1;
    }
  }
  fl_ipc_unlock(r);
  if (freed || rc == EPERM)
    fl_lockdep_release(o);
  return rc;
}

int fl_ipc_mutex_read(fl_ipc_t *r, fl_ipc_obj_t mutex, uint32_t *owner,
                      uint32_t *tid, uint32_t *recursion)
{
  const struct fl_ipc_object *o;
  uint32_t i;
  int rc;

  if ((rc = fl_ipc_enter_object(r, mutex, FL_IPC_MUTEX, &i)) != 0)
    return rc;
  /* Held: a, b and c are read as one state.  */
  fl_ipc_hold(r, i);
  o = &fl_ipc_objects(r)[i];
  if (owner != NULL)
    *owner = o->a & ~FL_IPC_SLOW;
  if (tid != NULL)
    *tid = o->b;
  if (recursion != NULL)
    *recursion = o->a != FL_IPC_SLOW ? o->c + 1 : 0;
  fl_ipc_unlock(r);
  return rc;
}
