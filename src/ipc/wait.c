/* src/ipc/wait.c: waiting for any or all of several objects.
 *
 * A wait first tries to acquire under the region lock.  If it cannot, it
 * asks whether the owner of each mutex in its way is still alive
 * (liveness.c) and cleans up after any that died, which may free the
 * mutex at once; otherwise it fills a wait slot (ipc-internal.h: the
 * objects, any or all, the thread, a ticket), takes a reference on each
 * object for as long as it waits (so a close by another thread of the
 * process cannot free an object under it), and sleeps on the slot's state
 * word, FL_IPC_PROBE_MS at most at a time.
 *
 * Wakers: every operation that can make an object acquirable (a release,
 * a set, a pulse, an abandonment) calls fl_ipc_wake_scan before leaving
 * the lock.  It visits the WAITING slots oldest ticket first and grants
 * each one that can be satisfied now: it acquires the objects for that
 * waiter (wait-any: the first acquirable in its array; wait-all: all of
 * them, checked first, so all or nothing), records the result, marks the
 * slot GRANTED and queues its futex word for waking after the unlock.
 * One pass suffices: a grant only takes from what is available, so a slot
 * that could not be satisfied earlier in the pass cannot be later in it.
 * Before granting, the waker makes sure the waiter's process still runs
 * (liveness.c; one system call per grant, on the contended path only).
 * Each grant ends with a checkpoint (lock.c), since the state between
 * two grants is consistent.
 *
 * A pulse (event.c) resets its event and runs the scan with the event
 * treated as signalled (fl_ipc_wake_pulse): every eligible waiter of a
 * manual-reset event is granted, the first of an auto-reset one, whose
 * virtual signal that grant consumes.  The signal lives in the pulser's
 * own memory only: a pulser that dies mid-scan leaves the event reset,
 * and the grants checkpointed before its death stand (the pulse then
 * woke fewer waiters; it can never leave the event set).
 *
 * The waiter, woken or timed out, takes the lock and reads its slot
 * there: GRANTED is final (a grant a dying waker left half done was
 * undone before anyone could take the lock); WAITING past its deadline
 * gives up (ETIMEDOUT, nothing acquired); WAITING otherwise probes the
 * mutex owners again and sleeps again.  A waker and a timing-out waiter
 * are ordered by the lock, so a wait either succeeds or times out, never
 * both; a waiter's death leaves a slot that the clean-up frees.
 *
 * The lock-order checker (src/lockdep/, when it is on) hears of each
 * mutex a wait took anew (recursion 1: not a recursive acquisition),
 * after the wait, outside the region lock: a wait for one object as a
 * lock waited for, so that the order of locks taken one after another is
 * checked; a wait on several objects as a lock taken without waiting
 * (which of several a wait-any takes, or that a wait-all takes all at
 * once, is no order the checker can hold against another).  Before each
 * sleep the checker checks that no spinlock is held.  fl_ipc_mutex_release
 * tells it of the release (mutex.c).
 *
 * A wait that took a mutex anew makes sure its thread has the thread-exit
 * hook (liveness.c), which abandons the mutexes a thread exits owning. */
#include "config.h"

#include "ipc/ipc-internal.h"
#include "lockdep/lockdep.h"
#include "sys/clock.h"
#include "sys/futex.h"

#include <errno.h>

int fl_ipc_can_acquire(const struct fl_ipc_object *o, uint32_t tag,
                       uint32_t tid)
{
  uint32_t a = o->a & ~FL_IPC_SLOW;

  switch (o->type) {
    case FL_IPC_SEM:
      return a > 0;
    case FL_IPC_MUTEX:
      /* Free, or ours (recursion, up to what the count can hold).  */
      return a == 0 || (a == tag && o->b == tid && o->c != UINT32_MAX - 1);
    case FL_IPC_EVENT:
    case FL_IPC_EVENT_MANUAL:
      return o->a != 0;
    default:
      return 0;
  }
}

/* Under the lock, o held (fl_ipc_hold) if it is a semaphore or mutex.  */
int fl_ipc_acquire(fl_ipc_t *r, struct fl_ipc_object *o, uint32_t tag,
                   uint32_t tid)
{
  int abandoned = 0;

  switch (o->type) {
    case FL_IPC_SEM:
      fl_ipc_set(r, &o->a, o->a - 1);
      break;
    case FL_IPC_MUTEX:
      if ((o->a & ~FL_IPC_SLOW) != 0) {
        fl_ipc_set(r, &o->c, o->c + 1);
        break;
      }
      abandoned = o->d != 0;
      fl_ipc_set(r, &o->d, 0);
      fl_ipc_set(r, &o->a, tag | FL_IPC_SLOW);
      fl_ipc_set(r, &o->b, tid);
      fl_ipc_set(r, &o->c, 0);
      break;
    case FL_IPC_EVENT:
      fl_ipc_set(r, &o->a, 0);
      break;
    default:
      break;
  }
  return abandoned;
}

/* Can (tag, tid) acquire object index now?  The event of the section's
 * pulse (r->pulse) can, though its word says unsignalled.  */
static int can_take(fl_ipc_t *r, uint32_t index, uint32_t tag, uint32_t tid)
{
  return index + 1 == r->pulse
         || fl_ipc_can_acquire(&fl_ipc_objects(r)[index], tag, tid);
}

/* Acquire object index for (tag, tid): fl_ipc_acquire, and a pulsed
 * auto-reset event's signal is consumed, as acquiring a set one resets
 * it.  */
static int take(fl_ipc_t *r, uint32_t index, uint32_t tag, uint32_t tid)
{
  struct fl_ipc_object *o = &fl_ipc_objects(r)[index];

  if (index + 1 == r->pulse && o->type == FL_IPC_EVENT)
    r->pulse = 0;
  return fl_ipc_acquire(r, o, tag, tid);
}

/* Acquire for (tag, tid) now if the wait can be satisfied: 1 (and
 * *result, *abandoned) if so.  Any: *result is the index acquired and
 * *abandoned 1 if it was an abandoned mutex.  All: *abandoned and
 * *result are the low and high halves of the mask of abandoned ones.  */
static int try_acquire(fl_ipc_t *r, const uint32_t *idx, uint32_t n, int all,
                       uint32_t tag, uint32_t tid, uint32_t *result,
                       uint32_t *abandoned)
{
  uint64_t mask = 0;
  uint32_t i;

  if (!all) {
    for (i = 0; i < n; i++)
      if (can_take(r, idx[i], tag, tid)) {
        *result = i;
        *abandoned = (uint32_t)take(r, idx[i], tag, tid);
        return 1;
      }
    return 0;
  }
  for (i = 0; i < n; i++)
    if (!can_take(r, idx[i], tag, tid))
      return 0;
  for (i = 0; i < n; i++)
    if (take(r, idx[i], tag, tid))
      mask |= (uint64_t)1 << i;
  *abandoned = (uint32_t)mask;
  *result = (uint32_t)(mask >> 32);
  return 1;
}

static void hold_all(fl_ipc_t *r, const uint32_t *idx, uint32_t n)
{
  uint32_t i;

  for (i = 0; i < n; i++)
    fl_ipc_hold(r, idx[i]);
}

/* The objects are held in this section, so that the unlock lets go of
 * those that no one waits for any more.  */
void fl_ipc_wait_leave(fl_ipc_t *r, struct fl_ipc_wait *w, uint32_t state)
{
  struct fl_ipc_object *o = fl_ipc_objects(r);
  uint32_t i;

  for (i = 0; i < w->n; i++) {
    fl_ipc_hold(r, w->obj[i]);
    fl_ipc_set(r, &o[w->obj[i]].waiters, o[w->obj[i]].waiters - 1);
  }
  fl_ipc_set(r, &fl_ipc_hdr(r)->nwaiting, fl_ipc_hdr(r)->nwaiting - 1);
  fl_ipc_set(r, &w->state, state);
}

void (*fl_ipc_grant_hook)(void);

void fl_ipc_wake_scan(fl_ipc_t *r)
{
  struct fl_ipc_hdr *h = fl_ipc_hdr(r);
  struct fl_ipc_wait *w = fl_ipc_waits(r);
  uint32_t bound = UINT32_MAX, left = h->nwaiting;

  /* The caller's own operation is complete: a consistent state.  */
  fl_ipc_checkpoint(r);
  /* Oldest first: age = next ticket - ticket, and each round takes the
   * oldest slot younger than the one before.  */
  while (left > 0) {
    uint32_t i, best = h->nwaits, best_age = 0, result, abandoned;

    for (i = 0; i < h->nwaits; i++) {
      uint32_t age = h->ticket - w[i].ticket;
      if (w[i].state == FL_IPC_WAIT_WAITING && age < bound
          && (best == h->nwaits || age > best_age)) {
        best = i;
        best_age = age;
      }
    }
    if (best == h->nwaits)
      break;
    bound = best_age;
    left--;
    /* A waiter whose process died since it queued would take the units
     * to its grave: drop its slot instead (its references and anything
     * else it held go when its client is cleaned up).  */
    if (FL_IPC_TAG_INDEX(w[best].client) != r->client
        && !fl_ipc_client_alive(r, FL_IPC_TAG_INDEX(w[best].client))) {
      fl_ipc_wait_leave(r, &w[best], FL_IPC_WAIT_FREE);
      fl_ipc_checkpoint(r);
      continue;
    }
    /* The slot's objects have waiters, so they are held (SLOW).  */
    if (try_acquire(r, w[best].obj, w[best].n, (int)w[best].all, w[best].client,
                    w[best].tid, &result, &abandoned)) {
      fl_ipc_set(r, &w[best].result, result);
      fl_ipc_set(r, &w[best].abandoned, abandoned);
      fl_ipc_wait_leave(r, &w[best], FL_IPC_WAIT_GRANTED);
      fl_ipc_wake_later(r, &w[best].state);
      fl_ipc_checkpoint(r);
      if (fl_ipc_grant_hook != NULL)
        fl_ipc_grant_hook();
    }
  }
}

/* The pulse's scan (see the top); the caller has reset the event.  */
void fl_ipc_wake_pulse(fl_ipc_t *r, uint32_t index)
{
  r->pulse = index + 1;
  fl_ipc_wake_scan(r);
  r->pulse = 0;
}

/* Clean up after the dead owners of mutexes in the way: 1 if any.  An
 * owner whose client is no longer LIVE (or is another generation) took
 * the mutex on the fastpath as its clean-up passed (fastpath.c): the
 * mutex is abandoned here.  The objects are held.  */
static int reap_owners(fl_ipc_t *r, const uint32_t *idx, uint32_t n)
{
  const struct fl_ipc_object *o = fl_ipc_objects(r);
  struct fl_ipc_client *c = fl_ipc_clients(r);
  uint32_t i, owner, index;
  int found = 0;

  for (i = 0; i < n; i++) {
    owner = o[idx[i]].a & ~FL_IPC_SLOW;
    if (o[idx[i]].type != FL_IPC_MUTEX || owner == 0 || owner == r->tag)
      continue;
    index = FL_IPC_TAG_INDEX(owner);
    if (c[index].state != FL_IPC_CLIENT_LIVE
        || (c[index].gen & 0x7fffu) != owner >> 16) {
      fl_ipc_abandon(r, idx[i], &c[index]);
      fl_ipc_checkpoint(r);
      found = 1;
    } else if (!fl_ipc_client_alive(r, index)) {
      fl_ipc_cleanup(r, index, FL_IPC_CLIENT_DEAD);
      found = 1;
    }
  }
  return found;
}

/* The wait slot is done with: free it and drop the wait's references. */
static void finish(fl_ipc_t *r, struct fl_ipc_wait *w)
{
  uint32_t i;

  if (w->state == FL_IPC_WAIT_WAITING)
    fl_ipc_wait_leave(r, w, FL_IPC_WAIT_FREE);
  else
    fl_ipc_set(r, &w->state, FL_IPC_WAIT_FREE);
  fl_ipc_checkpoint(r);
  for (i = 0; i < w->n; i++) {
    fl_ipc_unref(r, r->client, w->obj[i], 1);
    fl_ipc_checkpoint(r);
  }
}

static int past(clockid_t clock, const struct timespec *abstime)
{
  return abstime != NULL
         && fl_clock_ns(clock) >= (int64_t)abstime->tv_sec * FL_NSEC_PER_SEC
                                      + abstime->tv_nsec;
}

/* Sleep on the slot until woken, a probe interval, or the deadline.  */
static void nap(const struct fl_ipc_wait *w, clockid_t clock,
                const struct timespec *abstime)
{
  int64_t probe = FL_IPC_PROBE_MS * (int64_t)1000000, left;
  struct timespec until;

  if (abstime != NULL) {
    left = (int64_t)abstime->tv_sec * FL_NSEC_PER_SEC + abstime->tv_nsec
           - fl_clock_ns(clock);
    if (left < probe)
      probe = left > 0 ? left : 0;
  }
  until = fl_deadline_after_ns(CLOCK_MONOTONIC, probe);
  if (fl_futex_wait(&w->state, FL_IPC_WAIT_WAITING, 1, CLOCK_MONOTONIC, &until)
          == ETIMEDOUT
      && probe == FL_IPC_PROBE_MS * (int64_t)1000000)
    fl_ipc_count_probe_nap();
}

/* The mutexes among idx[0..n) that a successful wait took anew (wait-any:
 * the one at result), for the checker and the thread-exit hook; under the
 * region lock.  */
static uint32_t taken_anew(fl_ipc_t *r, const uint32_t *idx, uint32_t n,
                           int all, uint32_t result,
                           const struct fl_ipc_object **out)
{
  const struct fl_ipc_object *objects = fl_ipc_objects(r);
  uint32_t i, k = 0;

  for (i = 0; i < n; i++) {
    const struct fl_ipc_object *o = &objects[idx[i]];
    if ((all || i == result) && o->type == FL_IPC_MUTEX && o->c == 0)
      out[k++] = o;
  }
  return k;
}

static void tell_checker(const struct fl_ipc_object **taken, uint32_t k,
                         uint32_t n)
{
  uint32_t i;

  for (i = 0; i < k; i++)
    fl_lockdep_acquire(taken[i], FL_IPC_LOCKDEP_KIND,
                       n == 1 ? 0u : FL_LOCKDEP_TRY);
}

static int wait_objects(fl_ipc_t *r, uint32_t n, const fl_ipc_obj_t *objs,
                        int all, clockid_t clock,
                        const struct timespec *abstime, uint32_t *index,
                        uint64_t *mask)
{
  struct fl_ipc_hdr *h;
  struct fl_ipc_wait *w;
  uint32_t idx[FL_IPC_WAIT_MAX], i, k, tid, ticket, result, abandoned;
  const struct fl_ipc_object *taken[FL_IPC_WAIT_MAX];
  uint32_t ntaken = 0;
  int rc;

  if (r == NULL || objs == NULL || n == 0
      || (clock != CLOCK_MONOTONIC && clock != CLOCK_REALTIME)
      || (abstime != NULL && !fl_timespec_valid(abstime)))
    return EINVAL;
  if (n > FL_IPC_WAIT_MAX)
    return E2BIG;
  /* One object: the fastpath (fastpath.c), which never reports an
   * abandonment (an abandoned mutex is SLOW).  */
  if (n == 1 && (rc = fl_ipc_fast_wait(r, objs[0])) != FL_IPC_SLOWPATH) {
    if (rc == 0 && index != NULL)
      *index = 0;
    return rc;
  }
  tid = fl_ipc_tid();
  if ((rc = fl_ipc_enter(r)) != 0)
    return rc;
  h = fl_ipc_hdr(r);
  for (i = 0; i < n; i++) {
    if ((rc = fl_ipc_object_get(r, objs[i], 0, &idx[i])) != 0)
      goto out;
    for (k = 0; all && k < i; k++)
      if (idx[k] == idx[i]) {
        rc = EINVAL;
        goto out;
      }
  }
  hold_all(r, idx, n);
  do {
    if (try_acquire(r, idx, n, all, r->tag, tid, &result, &abandoned))
      goto done;
  } while (reap_owners(r, idx, n));
  if (past(clock, abstime)) {
    rc = ETIMEDOUT;
    goto out;
  }
  w = fl_ipc_waits(r);
  for (k = 0; k < h->nwaits && w[k].state != FL_IPC_WAIT_FREE; k++)
    continue;
  if (k == h->nwaits) {
    rc = EAGAIN;
    goto out;
  }
  w += k;
  ticket = h->ticket;
  fl_ipc_set(r, &h->ticket, ticket + 1);
  fl_ipc_set(r, &w->client, r->tag);
  fl_ipc_set(r, &w->tid, tid);
  fl_ipc_set(r, &w->ticket, ticket);
  fl_ipc_set(r, &w->n, n);
  fl_ipc_set(r, &w->all, (uint32_t)all);
  for (i = 0; i < n; i++) {
    struct fl_ipc_object *o = &fl_ipc_objects(r)[idx[i]];
    fl_ipc_set(r, &w->obj[i], idx[i]);
    fl_ipc_set(r, &o->waiters, o->waiters + 1);
    fl_ipc_ref(r, r->client, idx[i]);
  }
  fl_ipc_set(r, &h->nwaiting, h->nwaiting + 1);
  fl_ipc_set(r, &w->state, FL_IPC_WAIT_WAITING);
  for (;;) {
    fl_ipc_unlock(r);
    fl_lockdep_wait();
    nap(w, clock, abstime);
    /* ENOTCONN: cut off; the clean-up has cancelled the slot and dropped
     * our references, and it is no longer ours to touch.  */
    if ((rc = fl_ipc_enter(r)) != 0)
      return rc;
    if (w->state == FL_IPC_WAIT_GRANTED) {
      result = w->result;
      abandoned = w->abandoned;
      finish(r, w);
      goto done;
    }
    if (past(clock, abstime)) {
      finish(r, w);
      rc = ETIMEDOUT;
      goto out;
    }
    /* A clean-up here may grant this very wait: the nap then returns at
     * once (the state is no longer WAITING) and the top takes it.  */
    hold_all(r, w->obj, w->n);
    reap_owners(r, w->obj, w->n);
  }
done:
  if (!all && index != NULL)
    *index = result;
  if (all && mask != NULL)
    *mask = (uint64_t)result << 32 | abandoned;
  rc = abandoned != 0 || (all && result != 0) ? EOWNERDEAD : 0;
  ntaken = taken_anew(r, idx, n, all, result, taken);
out:
  fl_ipc_unlock(r);
  /* A mutex taken anew: the thread must be watched from now on (a mutex
   * taken again was watched when first taken).  */
  if (ntaken > 0)
    fl_ipc_watch_thread();
  tell_checker(taken, ntaken, n);
  return rc;
}

int fl_ipc_wait_any(fl_ipc_t *r, uint32_t n, const fl_ipc_obj_t *objs,
                    clockid_t clock, const struct timespec *abstime,
                    uint32_t *index)
{
  return wait_objects(r, n, objs, 0, clock, abstime, index, NULL);
}

int fl_ipc_wait_all(fl_ipc_t *r, uint32_t n, const fl_ipc_obj_t *objs,
                    clockid_t clock, const struct timespec *abstime,
                    uint64_t *abandoned)
{
  if (abandoned != NULL)
    *abandoned = 0;
  return wait_objects(r, n, objs, 1, clock, abstime, NULL, abandoned);
}
