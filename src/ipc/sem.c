/* src/ipc/sem.c: semaphores: a count of units and a maximum
 * (ipc-internal.h: a = count | SLOW, b = max; invariant count <= b).
 * Waiting takes one unit (wait.c); release gives units back.  Both try
 * the fastpath first (fastpath.c); here are their ways under the lock.  */
#include "config.h"

#include "ipc/ipc-internal.h"

#include <fastlock/arch/atomic.h>

#include <errno.h>

int fl_ipc_sem_create(fl_ipc_t *r, const char *name, uint32_t count,
                      uint32_t max, fl_ipc_obj_t *out)
{
  const uint32_t v[4] = { count, max, 0, 0 };

  if (max == 0 || count > max || max >= FL_IPC_SLOW)
    return EINVAL;
  return fl_ipc_object_create(r, name, FL_IPC_SEM, v, out);
}

int fl_ipc_sem_release(fl_ipc_t *r, fl_ipc_obj_t sem, uint32_t n,
                       uint32_t *prev)
{
  struct fl_ipc_object *o;
  uint32_t i, count;
  int rc;

  if (r == NULL || n == 0)
    return EINVAL;
  if ((rc = fl_ipc_fast_sem_release(r, sem, n, prev)) != FL_IPC_SLOWPATH)
    return rc;
  if ((rc = fl_ipc_enter(r)) != 0)
    return rc;
  rc = fl_ipc_object_get(r, sem, FL_IPC_SEM, &i);
  if (rc == 0) {
    fl_ipc_hold(r, i);
    o = &fl_ipc_objects(r)[i];
    count = o->a & ~FL_IPC_SLOW;
    /* b - count is the room left; comparing with it cannot overflow.  */
    if (n > o->b - count) {
      rc = EOVERFLOW;
    } else {
      if (prev != NULL)
        *prev = count;
      fl_ipc_set(r, &o->a, o->a + n);
      fl_ipc_wake_scan(r);
    }
  }
  fl_ipc_unlock(r);
  return rc;
}

int fl_ipc_sem_read(fl_ipc_t *r, fl_ipc_obj_t sem, uint32_t *count,
                    uint32_t *max)
{
  const struct fl_ipc_object *o;
  uint32_t i;
  int rc;

  if ((rc = fl_ipc_enter_object(r, sem, FL_IPC_SEM, &i)) != 0)
    return rc;
  o = &fl_ipc_objects(r)[i];
  if (count != NULL)
    *count = (uint32_t)fl_load_relaxed((const int32_t *)&o->a) & ~FL_IPC_SLOW;
  if (max != NULL)
    *max = o->b;
  fl_ipc_unlock(r);
  return rc;
}
