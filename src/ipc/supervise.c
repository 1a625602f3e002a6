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
 * fl_ipc_thread_exit abandons, the same way, only the mutexes one thread
 * of a live client owns: the thread's exit hook (liveness.c) calls it,
 * as Wine calls ntsync's mutex-kill for each thread that terminates.
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

/* Does mutex o belong to (tag, and thread tid unless tid is 0)?  Read
 * without holding o, the answer is a hint (a fastpath of another thread
 * may change the word); held, it is the truth.  The words are read
 * relaxed, as the fastpath writes them by atomics.  */
static int owned_by(struct fl_ipc_object *o, uint32_t tag, uint32_t tid)
{
  return o->type == FL_IPC_MUTEX
         && ((uint32_t)fl_load_relaxed((int32_t *)&o->a) & ~FL_IPC_SLOW) == tag
         && (tid == 0 || (uint32_t)fl_load_relaxed((int32_t *)&o->b) == tid);
}

/* Abandon every mutex client index owns, or with tid nonzero those of
 * its thread tid, one object per checkpoint.  Each candidate is held
 * before it is abandoned and asked again: between the hint and the hold
 * its owner may have released it on the fastpath and another taken it.
 * Only a client's clean-up reports what it abandoned (fl_ipc_client_died
 * tells of the client's death, and a thread's exit is none).  */
static void abandon_owned(fl_ipc_t *r, uint32_t index, uint32_t tid)
{
  struct fl_ipc_client *c = &fl_ipc_clients(r)[index];
  struct fl_ipc_object *o = fl_ipc_objects(r);
  uint32_t tag = (index + 1) | (c->gen & 0x7fffu) << 16;
  uint32_t i;

  for (i = 0; i < fl_ipc_hdr(r)->nobjects; i++) {
    if (!owned_by(&o[i], tag, tid))
      continue;
    fl_ipc_hold(r, i);
    if (!owned_by(&o[i], tag, tid))
      continue;
    fl_ipc_abandon(r, i, tid == 0 ? c : NULL);
    fl_ipc_checkpoint(r);
  }
}

void fl_ipc_cleanup(fl_ipc_t *r, uint32_t index, uint32_t state)
{
  struct fl_ipc_hdr *h = fl_ipc_hdr(r);
  struct fl_ipc_client *c = &fl_ipc_clients(r)[index];
  struct fl_ipc_wait *w = fl_ipc_waits(r);
  uint32_t tag = (index + 1) | (c->gen & 0x7fffu) << 16;
  uint32_t k;

  /* closing first, then (a full barrier) the scan: a fastpath acquire
   * that the scan misses sees closing after its CAS (fastpath.c).  */
  fl_ipc_set(r, &c->closing, 1);
  fl_ipc_checkpoint(r);
  fl_smp_mb();
  abandon_owned(r, index, 0);
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

void fl_ipc_abandon(fl_ipc_t *r, uint32_t index, struct fl_ipc_client *report)
{
  struct fl_ipc_object *o = &fl_ipc_objects(r)[index];
  uint32_t k;

  if (report != NULL) {
    k = report->nabandoned;
    if (k < FL_IPC_REPORT_MAX)
      fl_ipc_set(r, &report->abandoned[k], fl_ipc_handle(r, index).id);
    fl_ipc_set(r, &report->nabandoned, k + 1);
  }
  fl_ipc_set(r, &o->a, FL_IPC_SLOW);
  fl_ipc_set(r, &o->b, 0);
  fl_ipc_set(r, &o->c, 0);
  fl_ipc_set(r, &o->d, 1);
}

/* Does the thread tid of ours own a mutex in r?  Asked of the calling
 * thread, without the lock, the answer is exact where it matters: no
 * one but the thread takes a mutex for (our tag, tid) (its fastpath, or
 * a grant it then confirmed under the lock: both seen here), and no one
 * takes one from it but a clean-up of the whole client.  A torn read of
 * another owner only costs a section that finds nothing.  */
static int thread_owns(fl_ipc_t *r, uint32_t tid)
{
  struct fl_ipc_object *o = fl_ipc_objects(r);
  uint32_t i;

  for (i = 0; i < fl_ipc_hdr(r)->nobjects; i++)
    if (owned_by(&o[i], r->tag, tid))
      return 1;
  return 0;
}

/* The calling thread, tid, exits (its exit hook, liveness.c): it waits
 * for nothing, so after the scan it owns nothing in r.  A thread that
 * owns nothing takes no lock (its exit never waits for the region), but
 * while a race tool watches, the look is made under the lock like every
 * other (fl_ipc_lock_only).  A process cut off from r was cleaned up
 * whole (ENOTCONN): nothing left to do.  */
void fl_ipc_thread_exit(fl_ipc_t *r, uint32_t tid)
{
  if ((!fl_ipc_lock_only() && !thread_owns(r, tid)) || fl_ipc_enter(r) != 0)
    return;
  abandon_owned(r, r->client, tid);
  fl_ipc_wake_scan(r);
  fl_ipc_unlock(r);
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
