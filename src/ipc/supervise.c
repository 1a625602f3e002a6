/* src/ipc/supervise.c: what happens when a client is gone.
 *
 * fl_ipc_cleanup is the one clean-up, whoever finds the death: a waiter
 * whose mutex owner died (wait.c), the taker of a dead holder's region
 * lock (lock.c), a process claiming a dead client's slot (region.c), the
 * server through fl_ipc_client_died, or the client itself leaving
 * (fl_ipc_close).  Like ntsync's mutex-kill it abandons every mutex the
 * client owns (owner cleared, recursion 0, abandoned flag set: the next
 * acquirer gets EOWNERDEAD), ends every wait of the client's and drops
 * every reference it holds; then the waiters the abandoned mutexes can
 * satisfy are granted.
 *
 * It is restartable: it runs in steps (one object, then the waits), each
 * ending at a checkpoint, and the client slot changes state only at the
 * end.  If the process cleaning up dies in the middle, the client is
 * still LIVE and dead, so the next prober repeats the clean-up; the steps
 * already done find nothing left to do (no mutex owned by the client, no
 * references, no waits).
 *
 * The report (the abandoned mutexes) stays in the client slot until a
 * process claims the slot again; fl_ipc_client_died marks it read
 * (REPORTED), and a claim takes a slot with an unread report only when
 * the region has no other (region.c), so a server that asks late still
 * gets it unless the region filled up in the meantime.  */
#include "config.h"

#include "ipc/ipc-internal.h"

#include <fastlock/arch/atomic.h>

#include <errno.h>

void fl_ipc_cleanup(fl_ipc_t *r, uint32_t index, uint32_t state)
{
  struct fl_ipc_hdr *h = fl_ipc_hdr(r);
  struct fl_ipc_client *c = &fl_ipc_clients(r)[index];
  struct fl_ipc_object *o = fl_ipc_objects(r);
  struct fl_ipc_wait *w = fl_ipc_waits(r);
  uint32_t tag = (index + 1) | (c->gen & 0x7fffu) << 16;
  uint32_t i, k;

  /* closing first, then (a full barrier) the scan: a fastpath acquire
   * that the scan misses sees closing after its CAS (fastpath.c).  */
  fl_ipc_set(r, &c->closing, 1);
  fl_ipc_checkpoint(r);
  fl_smp_mb();
  for (i = 0; i < h->nobjects; i++) {
    if (o[i].type != FL_IPC_MUTEX
        || ((uint32_t)fl_load_relaxed((int32_t *)&o[i].a) & ~FL_IPC_SLOW)
               != tag)
      continue;
    fl_ipc_abandon(r, i, index);
    fl_ipc_checkpoint(r);
  }
  for (k = 0; k < h->nwaits; k++) {
    uint32_t end = state == FL_IPC_CLIENT_KILLED ? FL_IPC_WAIT_CANCELLED
                                                 : FL_IPC_WAIT_FREE;
    if (w[k].client != tag
        || (w[k].state != FL_IPC_WAIT_WAITING
            && w[k].state != FL_IPC_WAIT_GRANTED))
      continue;
    if (w[k].state == FL_IPC_WAIT_WAITING)
      fl_ipc_wait_leave(r, &w[k], end);
    else
      fl_ipc_set(r, &w[k].state, end);
    /* A process cut off may still run and sleep there: it must learn.  */
    if (end == FL_IPC_WAIT_CANCELLED)
      fl_ipc_wake_later(r, &w[k].state);
    fl_ipc_checkpoint(r);
  }
  /* The waits' references are among the client's: all go here.  */
  fl_ipc_drop_refs(r, index);
  /* The death's stamp, for a process that must take a slot with an
   * unread report (region.c): the oldest one goes.  */
  fl_ipc_set(r, &c->died, h->ticket);
  fl_ipc_set(r, &h->ticket, h->ticket + 1);
  fl_ipc_set(r, &c->state, state);
  fl_ipc_wake_scan(r);
}

void fl_ipc_abandon(fl_ipc_t *r, uint32_t index, uint32_t owner)
{
  struct fl_ipc_client *c = &fl_ipc_clients(r)[owner];
  struct fl_ipc_object *o = &fl_ipc_objects(r)[index];
  uint32_t k = c->nabandoned;

  fl_ipc_hold(r, index);
  if (k < FL_IPC_REPORT_MAX)
    fl_ipc_set(r, &c->abandoned[k], fl_ipc_handle(r, index).id);
  fl_ipc_set(r, &c->nabandoned, k + 1);
  fl_ipc_set(r, &o->a, FL_IPC_SLOW);
  fl_ipc_set(r, &o->b, 0);
  fl_ipc_set(r, &o->c, 0);
  fl_ipc_set(r, &o->d, 1);
}

uint32_t fl_ipc_client_id(const fl_ipc_t *r)
{
  return r->tag;
}

int fl_ipc_client_died(fl_ipc_t *r, uint32_t client, fl_ipc_obj_t *abandoned,
                       uint32_t cap, uint32_t *n)
{
  struct fl_ipc_client *c;
  uint32_t index = FL_IPC_TAG_INDEX(client), i;
  int rc;

  if (r == NULL || (cap > 0 && abandoned == NULL))
    return EINVAL;
  if ((rc = fl_ipc_enter(r)) != 0)
    return rc;
  c = &fl_ipc_clients(r)[index];
  if ((client & FL_IPC_LOCK_WAITERS) || index >= fl_ipc_hdr(r)->nclients
      || (c->gen & 0x7fffu) != client >> 16) {
    rc = ESRCH;
  } else if (client == r->tag) {
    rc = EINVAL; /* a process cannot cut itself off */
  } else {
    if (c->state == FL_IPC_CLIENT_LIVE)
      fl_ipc_cleanup(r, index,
                     fl_ipc_client_alive(r, index) ? FL_IPC_CLIENT_KILLED
                                                   : FL_IPC_CLIENT_DEAD);
    /* Read: the slot may go before those whose report is unread.  */
    if (c->state == FL_IPC_CLIENT_DEAD || c->state == FL_IPC_CLIENT_KILLED)
      fl_ipc_set(r, &c->state, FL_IPC_CLIENT_REPORTED);
    for (i = 0; i < cap && i < c->nabandoned && i < FL_IPC_REPORT_MAX; i++) {
      abandoned[i].region = fl_ipc_hdr(r)->region;
      abandoned[i].id = c->abandoned[i];
    }
    if (n != NULL)
      *n = c->nabandoned;
  }
  fl_ipc_unlock(r);
  return rc;
}
