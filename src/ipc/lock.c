/* src/ipc/lock.c: the region lock, robust against its holder's death,
 * and the undo log that makes a dead holder's half-done section vanish.
 *
 * The lock word (hdr.lock) is a futex mutex in Drepper's shape: 0 is
 * free; a holder stores its client tag (client index + 1 | generation <<
 * 16); FL_IPC_LOCK_WAITERS is set, by compare-and-swap of the whole word,
 * by a thread before it sleeps, and a thread that wakes takes the lock
 * with the bit set again (it cannot know whether others still sleep), so
 * that every unlock that might leave a sleeper behind wakes one.  Any
 * woken thread may take the lock: FUTEX_WAKE(1) needs to reach nobody in
 * particular.
 *
 *   state        how it is left
 *   0            lock: CAS 0 -> tag (fastpath), or tag|W (after sleeping)
 *   tag          unlock: XCHG -> 0 (no wake); a waiter: CAS -> tag|W
 *   tag|W        unlock: XCHG -> 0, then FUTEX_WAKE(1)
 *   tag|W, the holder dead   takeover: CAS tag|W -> own tag|W, recover
 *
 * Death of the holder.  A sleeper sleeps at most FL_IPC_PROBE_MS at a
 * time; each time it times out it asks liveness.c whether the holder's
 * process still runs.  If not, it swaps the dead holder's tag for its own
 * (a CAS on the very value it probed, so a lock that changed hands in the
 * meantime is not stolen; the generation in the tag keeps a dead client's
 * slot, reused by a new process that took the lock meanwhile, from
 * looking the same), then undoes the dead holder's section (the log) and
 * cleans up after the dead client (supervise.c).  So a dead holder
 * delays the others by at most one probe interval plus the clean-up.
 *
 * The undo log.  fl_ipc_set appends (offset, old value) to the log in
 * the region, publishes the new length, and only then writes the word;
 * both stores are release stores, so the entry is in memory before the
 * length and the length before the write, in the order a SIGKILL could
 * interrupt them (and the kernel's exit path orders all of it before a
 * taker's probe).  Undoing is writing the old values back, last first:
 * idempotent, so a taker that dies while undoing leaves the log for the
 * next one.  A checkpoint (log length 0, a release store after the
 * section's writes) declares the state consistent.  */
#include "config.h"

#include "ipc/ipc-internal.h"
#include "sys/annotate.h"
#include "sys/clock.h"
#include "sys/futex.h"

#include <fastlock/arch/atomic.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

static int32_t *lock_word(fl_ipc_t *r)
{
  return (int32_t *)&fl_ipc_hdr(r)->lock;
}

/* Undo a dead holder's section (see the top), wake every waiter it may
 * have granted without waking, clean up after it, and grant what the
 * undo left grantable.  */
static void recover(fl_ipc_t *r, uint32_t dead_tag)
{
  struct fl_ipc_hdr *h = fl_ipc_hdr(r);
  struct fl_ipc_undo *log = fl_ipc_log(r);
  struct fl_ipc_wait *w = fl_ipc_waits(r);
  struct fl_ipc_client *c;
  uint32_t n = (uint32_t)fl_load_acquire((int32_t *)&h->log_n);
  uint32_t i, index = FL_IPC_TAG_INDEX(dead_tag);

  if (n > FL_IPC_LOG_MAX)
    n = FL_IPC_LOG_MAX;
  while (n-- > 0) {
    /* Entries are written by this library only; an offset outside the
     * region or unaligned would be a corrupt region, not a log entry.  */
    if (log[n].off < h->size && log[n].off % 4 == 0)
      fl_store_release((int32_t *)(void *)(r->base + log[n].off),
                       (int32_t)log[n].old);
  }
  fl_store_release((int32_t *)&h->log_n, 0);
  for (i = 0; i < h->nwaits; i++)
    if (w[i].state == FL_IPC_WAIT_GRANTED
        || w[i].state == FL_IPC_WAIT_CANCELLED)
      fl_ipc_wake_later(r, &w[i].state);
  if (index < h->nclients) {
    c = &fl_ipc_clients(r)[index];
    if (c->state == FL_IPC_CLIENT_LIVE
        && (c->gen & 0x7fffu) == (dead_tag >> 16))
      fl_ipc_cleanup(r, index, FL_IPC_CLIENT_DEAD);
  }
  /* The undo may have taken back a grant whose release stands (the
   * release's own checkpoint came first): grant again, whatever became
   * of the dead holder's client (models/ipc.pml, BUG_RECOVER_NO_SCAN).  */
  fl_ipc_wake_scan(r);
}

/* Is the process that took the lock as holder gone?  Our own slot's
 * byte lock is ours, so a holder with our slot index is either a thread
 * of ours (our tag) or the slot's former, dead, owner: a process claims
 * a dead client's slot (region.c) before it can take the lock, and may
 * find that client's tag still in the lock word.  */
static int holder_dead(fl_ipc_t *r, uint32_t holder)
{
  uint32_t index = FL_IPC_TAG_INDEX(holder);

  if (index == r->client)
    return holder != r->tag;
  return !fl_ipc_client_alive(r, index);
}

/* Take the lock the slow way: 0, or the tag of a dead holder whose
 * section the caller must undo (it holds the lock then).  */
static uint32_t lock_slowpath(fl_ipc_t *r)
{
  int32_t *word = lock_word(r);
  int32_t tag = (int32_t)(r->tag | FL_IPC_LOCK_WAITERS);

  for (;;) {
    uint32_t v = (uint32_t)fl_load_relaxed(word);
    struct timespec probe;

    if (v == 0) {
      if (fl_atomic_cmpxchg_acquire(word, 0, tag) == 0)
        return 0;
      continue;
    }
    if (!(v & FL_IPC_LOCK_WAITERS)) {
      if (fl_atomic_cmpxchg_relaxed(word, (int32_t)v,
                                    (int32_t)(v | FL_IPC_LOCK_WAITERS))
          != (int32_t)v)
        continue;
      v |= FL_IPC_LOCK_WAITERS;
    }
    probe = fl_deadline_after_ns(CLOCK_MONOTONIC,
                                 FL_IPC_PROBE_MS * (int64_t)1000000);
    if (fl_futex_wait((uint32_t *)word, v, 1, CLOCK_MONOTONIC, &probe)
        != ETIMEDOUT)
      continue;
    fl_ipc_count_probe_nap();
    if (holder_dead(r, v & ~FL_IPC_LOCK_WAITERS)
        && fl_atomic_cmpxchg_acquire(word, (int32_t)v, tag) == (int32_t)v)
      return v & ~FL_IPC_LOCK_WAITERS;
  }
}

/* The race tools see the region lock as an exclusive lock (annotate.h);
 * its word is hidden from the Valgrind tools in fl_ipc_annotate.  */
void fl_ipc_lock(fl_ipc_t *r)
{
  uint32_t dead = 0;

  FL_TSAN_PRE_LOCK(lock_word(r), 0u);
  if (fl_atomic_cmpxchg_acquire(lock_word(r), 0, (int32_t)r->tag) != 0)
    dead = lock_slowpath(r);
  FL_TSAN_POST_LOCK(lock_word(r), 0u);
  FL_VG_RWLOCK_ACQUIRED(lock_word(r), 1);
  r->nwake = 0;
  r->nheld = 0;
  if (dead != 0)
    recover(r, dead);
}

/* Besides the lock word, the wait slots' state words are futex words
 * the kernel reads outside the lock: hide them too.  */
void fl_ipc_annotate(fl_ipc_t *r)
{
  struct fl_ipc_wait *w = fl_ipc_waits(r);
  uint32_t i;

  FL_VG_HIDE(lock_word(r), sizeof(int32_t));
  for (i = 0; i < fl_ipc_hdr(r)->nwaits; i++)
    FL_VG_HIDE(&w[i].state, sizeof w[i].state);
  (void)w; /* without Valgrind annotations */
}

int fl_ipc_enter(fl_ipc_t *r)
{
  const struct fl_ipc_client *c;

  if (r->fd < 0)
    return ENOTCONN;
  fl_ipc_lock(r);
  c = &fl_ipc_clients(r)[r->client];
  if (c->state != FL_IPC_CLIENT_LIVE || (c->gen & 0x7fffu) != (r->tag >> 16)) {
    fl_ipc_unlock(r);
    return ENOTCONN;
  }
  return 0;
}

void fl_ipc_checkpoint(fl_ipc_t *r)
{
  /* Release: the section's writes are in memory before the log that
   * could undo them is dropped.  */
  fl_store_release((int32_t *)&fl_ipc_hdr(r)->log_n, 0);
}

/* Give object index back to the fastpaths if no one waits for it and it
 * has no abandonment to report.  After the last checkpoint: a word the
 * fastpaths may change again must never be in the undo log.  */
static void let_go(fl_ipc_t *r, uint32_t index)
{
  struct fl_ipc_object *o = &fl_ipc_objects(r)[index];
  uint32_t v = (uint32_t)fl_load_relaxed((int32_t *)&o->a);

  if ((v & FL_IPC_SLOW) && o->waiters == 0
      && !(o->type == FL_IPC_MUTEX && o->d != 0))
    /* Release: the section's writes to the object are in memory before
     * a fastpath can see the word without SLOW.  */
    fl_store_release((int32_t *)&o->a, (int32_t)(v & ~FL_IPC_SLOW));
}

void fl_ipc_hold(fl_ipc_t *r, uint32_t index)
{
  struct fl_ipc_object *o = &fl_ipc_objects(r)[index];
  uint32_t v;

  if (o->type != FL_IPC_SEM && o->type != FL_IPC_MUTEX)
    return;
  /* Not logged: a holder that dies leaves SLOW set, which only sends the
   * fastpaths to the lock until a later section holds and lets go.
   * Acquire: what the fastpath's last owner did is seen here.  */
  do
    v = (uint32_t)fl_load_acquire((int32_t *)&o->a);
  while (!(v & FL_IPC_SLOW)
         && (uint32_t)fl_atomic_cmpxchg_acquire((int32_t *)&o->a, (int32_t)v,
                                                (int32_t)(v | FL_IPC_SLOW))
                != v);
  if (r->nheld < sizeof r->held / sizeof r->held[0])
    r->held[r->nheld] = index;
  r->nheld++;
}

void fl_ipc_unlock(fl_ipc_t *r)
{
  uint32_t wake[sizeof r->wake / sizeof r->wake[0]];
  uint32_t i, n = r->nwake;

  fl_ipc_checkpoint(r);
  if (r->nheld > sizeof r->held / sizeof r->held[0]) {
    for (i = 0; i < fl_ipc_hdr(r)->nobjects; i++)
      let_go(r, i);
  } else {
    for (i = 0; i < r->nheld; i++)
      let_go(r, r->held[i]);
  }
  for (i = 0; i < n; i++)
    wake[i] = r->wake[i];
  FL_VG_RWLOCK_RELEASED(lock_word(r), 1);
  FL_TSAN_PRE_UNLOCK(lock_word(r), 0u);
  /* Release: the section happens before the next holder's.  */
  if ((uint32_t)fl_atomic_xchg_release(lock_word(r), 0) & FL_IPC_LOCK_WAITERS)
    fl_futex_wake((uint32_t *)lock_word(r), 1, 1);
  FL_TSAN_POST_UNLOCK(lock_word(r), 0u);
  /* A slot may have been freed and reused since: a spurious wake, which
   * every waiter tolerates (it looks again under the lock).  */
  for (i = 0; i < n; i++)
    fl_futex_wake((uint32_t *)(void *)(r->base + wake[i]), INT_MAX, 1);
}

void fl_ipc_set(fl_ipc_t *r, uint32_t *word, uint32_t value)
{
  struct fl_ipc_hdr *h = fl_ipc_hdr(r);
  struct fl_ipc_undo *log = fl_ipc_log(r);
  uint32_t n = h->log_n;

  if (*word == value)
    return;
  if (n == FL_IPC_LOG_MAX) {
    /* Sections are bounded well below this (ipc-internal.h); reaching it
     * is a bug in this library, and going on would make it unrecoverable. */
    fputs("fastlock ipc: undo log overflow\n", stderr);
    abort();
  }
  log[n].off = (uint32_t)((unsigned char *)word - r->base);
  log[n].old = *word;
  fl_store_release((int32_t *)&h->log_n, (int32_t)(n + 1));
  fl_store_release((int32_t *)word, (int32_t)value);
}

void fl_ipc_wake_later(fl_ipc_t *r, uint32_t *word)
{
  if (r->nwake < sizeof r->wake / sizeof r->wake[0])
    r->wake[r->nwake++] = (uint32_t)((unsigned char *)word - r->base);
  else
    fl_futex_wake(word, INT_MAX, 1);
}
