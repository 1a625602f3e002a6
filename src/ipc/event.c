/* src/ipc/event.c: events (ipc-internal.h: a = 1 if signalled; the type
 * says manual or auto reset).  A wait on an auto-reset event resets it as
 * it acquires it (wait.c); a manual-reset event stays set for every
 * waiter until reset.  Pulse grants whoever waits now (every eligible
 * waiter for a manual event, the first for an auto one) and leaves the
 * event reset, in one section, so no waiter that comes later sees it set.
 * It resets the event first and never sets it: the scan treats it as
 * signalled (fl_ipc_wake_pulse, wait.c), so that a pulser killed between
 * two grants, whose grants the checkpoints keep, leaves it reset too.  */
#include "config.h"

#include "ipc/ipc-internal.h"

#include <errno.h>

int fl_ipc_event_create(fl_ipc_t *r, const char *name, int manual_reset,
                        int signaled, fl_ipc_obj_t *out)
{
  const uint32_t v[4] = { signaled != 0, 0, 0, 0 };

  return fl_ipc_object_create(
      r, name, manual_reset ? FL_IPC_EVENT_MANUAL : FL_IPC_EVENT, v, out);
}

enum { SET, RESET, PULSE, READ };

static int event_op(fl_ipc_t *r, fl_ipc_obj_t event, int op, int *prev)
{
  struct fl_ipc_object *o;
  uint32_t i;
  int rc;

  if (r == NULL || (op == READ && prev == NULL))
    return EINVAL;
  if ((rc = fl_ipc_enter(r)) != 0)
    return rc;
  rc = fl_ipc_object_get(r, event, FL_IPC_EVENT, &i);
  if (rc == 0) {
    o = &fl_ipc_objects(r)[i];
    if (prev != NULL)
      *prev = (int)o->a;
    if (op != READ)
      fl_ipc_set(r, &o->a, op == SET);
    if (op == SET)
      fl_ipc_wake_scan(r);
    else if (op == PULSE)
      fl_ipc_wake_pulse(r, i);
  }
  fl_ipc_unlock(r);
  return rc;
}

int fl_ipc_event_set(fl_ipc_t *r, fl_ipc_obj_t event, int *prev)
{
  return event_op(r, event, SET, prev);
}

int fl_ipc_event_reset(fl_ipc_t *r, fl_ipc_obj_t event, int *prev)
{
  return event_op(r, event, RESET, prev);
}

int fl_ipc_event_pulse(fl_ipc_t *r, fl_ipc_obj_t event, int *prev)
{
  return event_op(r, event, PULSE, prev);
}

int fl_ipc_event_read(fl_ipc_t *r, fl_ipc_obj_t event, int *signaled)
{
  return event_op(r, event, READ, signaled);
}
