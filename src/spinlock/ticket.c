/* src/spinlock/ticket.c: fl_ticketlock_t, the ticket lock's slowpaths (the
 * word: include/fastlock/spinlock.h).
 *
 * A waiter holding ticket t watches the word:
 *
 *   owner == t, PENDING   the lock was granted to us: claim it by clearing
 *                         PENDING (compare-and-swap, acquire);
 *   t not in [owner, next) we were passed over while we were not running
 *                         (or our number came round again and the grant
 *                         went to the thread now holding it): take a new
 *                         ticket, at the tail;
 *   otherwise             wait.  If the word shows an unclaimed grant
 *                         (PENDING) that has not moved for
 *                         fl_spin_patience, the grantee is not running:
 *                         move owner on past it, keeping PENDING for the
 *                         next ticket, or, when the next ticket is ours,
 *                         taking the lock in the same compare-and-swap.
 *
 * So the lock goes in ticket order to every waiter that is running when
 * its turn comes, and a preempted waiter costs the others one patience
 * instead of the rest of its time slice.  A waiter waits longer between
 * reads the further back it is (proportional backoff): only the next in
 * line needs to see the grant at once, and fewer readers leave the line
 * to the holder.  It yields once nothing has moved for
 * FL_SPIN_YIELD_AFTER.  */
#include "config.h"

#include "spinlock/internal.h"
#include "sys/cpu.h"

#include <sched.h>

/* fl_cpu_relax between two reads: one for the next in line, this many
 * more for each ticket further back, and at most.  */
#define FL_TICKET_RELAX_PER_WAITER 8
#define FL_TICKET_RELAX_MAX 64

#define FL_TICKET_OWNER(v) ((v) & FL_TICKET_MASK)
#define FL_TICKET_NEXT(v) (((v) >> FL_TICKET_NEXT_SHIFT) & FL_TICKET_MASK)

/* The word with owner moved on by one: PENDING if a ticket is waiting for
 * the new owner, free if none is.  */
static uint32_t fl_ticket_advance(uint32_t v)
{
  uint32_t owner = (FL_TICKET_OWNER(v) + 1) & FL_TICKET_MASK;
  uint32_t rest = v & ~(FL_TICKET_MASK | FL_TICKET_PENDING);

  return rest | owner | (owner != FL_TICKET_NEXT(v) ? FL_TICKET_PENDING : 0);
}

int fl_ticket_lock_slow(fl_ticketlock_t *l, uint32_t ticket)
{
  uint32_t seen = UINT32_MAX, since = 0, now, v, owner, ahead, relax;

  for (;;) {
    /* Acquire: a grant we find here was made by an unlock (release), and
     * our claim below must see the critical section before it.  */
    v = (uint32_t)fl_load_acquire(&l->word);
    owner = FL_TICKET_OWNER(v);
    ahead = (ticket - owner) & FL_TICKET_MASK;

    if (ahead == 0 && (v & FL_TICKET_PENDING)) {
      /* Acquire: the critical section stays after the claim.  */
      if (fl_atomic_cmpxchg_acquire(&l->word, (int32_t)v,
                                    (int32_t)(v & ~FL_TICKET_PENDING)) == (int32_t)v)
        return 0;
      continue;
    }
    if (ahead != 0 && ahead >= ((FL_TICKET_NEXT(v) - owner) & FL_TICKET_MASK)) {
      v = (uint32_t)fl_atomic_fetch_add_acquire(&l->word,
                                                (int32_t)FL_TICKET_NEXT_ONE);
      ticket = FL_TICKET_NEXT(v);
      if (ticket == FL_TICKET_OWNER(v))
        return 0;
      seen = UINT32_MAX;
      continue;
    }

    now = fl_spin_now();
    if ((v & (FL_TICKET_MASK | FL_TICKET_PENDING)) != seen) {
      seen = v & (FL_TICKET_MASK | FL_TICKET_PENDING);
      since = now;
    } else if ((v & FL_TICKET_PENDING) &&
               fl_spin_elapsed(since, now, fl_load_relaxed(&fl_spin_patience))) {
      /* Pass the absent grantee over.  When the next ticket is ours we
       * take the lock here, so this is an acquire.  */
      uint32_t passed = fl_ticket_advance(v);
      int mine = ((owner + 1) & FL_TICKET_MASK) == ticket;

      if (mine)
        passed &= ~FL_TICKET_PENDING;
      if (fl_atomic_cmpxchg_acquire(&l->word, (int32_t)v, (int32_t)passed) ==
            (int32_t)v && mine)
        return 0;
      continue;
    } else if (fl_spin_elapsed(since, now, FL_SPIN_YIELD_AFTER)) {
      sched_yield();
    }

    relax = ahead <= 1 ? 1 : (ahead - 1) * FL_TICKET_RELAX_PER_WAITER;
    if (relax > FL_TICKET_RELAX_MAX)
      relax = FL_TICKET_RELAX_MAX;
    while (relax-- > 0)
      fl_cpu_relax();
  }
}

int fl_ticket_trylock_slow(fl_ticketlock_t *l)
{
  uint32_t v;

  for (;;) {
    v = (uint32_t)fl_load_relaxed(&l->word);
    if (FL_TICKET_NEXT(v) != FL_TICKET_OWNER(v))
      return EBUSY;
    /* Acquire, as on the fastpath.  */
    if (fl_atomic_cmpxchg_acquire(&l->word, (int32_t)v,
                                  (int32_t)(v + FL_TICKET_NEXT_ONE)) == (int32_t)v)
      return 0;
  }
}

/* Not held: free (owner == next), or granted and not yet claimed (the
 * holder has gone and the grantee has not arrived): either way, nobody
 * may unlock it.  */
static int fl_ticket_held(uint32_t v)
{
  return !(v & FL_TICKET_PENDING) && FL_TICKET_NEXT(v) != FL_TICKET_OWNER(v);
}

int fl_ticket_unlock_slow(fl_ticketlock_t *l)
{
  uint32_t v;

  for (;;) {
    v = (uint32_t)fl_load_relaxed(&l->word);
    if (!fl_ticket_held(v))
      return EPERM;
    /* Release: the critical section is done before the grant shows.  */
    if (fl_atomic_cmpxchg_release(&l->word, (int32_t)v,
                                  (int32_t)fl_ticket_advance(v)) == (int32_t)v)
      return 0;
  }
}

int fl_ticket_init(fl_ticketlock_t *l, unsigned flags)
{
  int rc = fl_spin_check_flags(flags, 1);

  if (rc != 0)
    return rc;
  fl_store_relaxed(&l->word, 0);
  FL_SPIN_ANNOTATE_CREATE(l);
  return 0;
}

int fl_ticket_destroy(fl_ticketlock_t *l)
{
  uint32_t v = (uint32_t)fl_load_relaxed(&l->word);

  if (FL_TICKET_NEXT(v) != FL_TICKET_OWNER(v))
    return EBUSY;
  FL_SPIN_ANNOTATE_DESTROY(l);
  return 0;
}

/* The library's own lock, trylock and unlock, annotated (see spinlock.c).
 * A ticket lock cannot see a relock by its holder, so lock has no misuse
 * to catch first.  */
int (fl_ticket_lock)(fl_ticketlock_t *l)
{
  FL_VG_HIDE(l, sizeof *l);
  FL_TSAN_PRE_LOCK(l, 0);
  fl_ticket_lock_inline(l);
  FL_TSAN_POST_LOCK(l, 0);
  FL_VG_RWLOCK_ACQUIRED(l, 1);
  return 0;
}

int (fl_ticket_trylock)(fl_ticketlock_t *l)
{
  int rc;

  FL_VG_HIDE(l, sizeof *l);
  FL_TSAN_PRE_LOCK(l, FL_TSAN_TRY);
  rc = fl_ticket_trylock_inline(l);
  FL_TSAN_POST_LOCK(l, FL_TSAN_TRY | (rc != 0 ? FL_TSAN_TRY_FAILED : 0u));
  if (rc == 0)
    FL_VG_RWLOCK_ACQUIRED(l, 1);
  return rc;
}

int (fl_ticket_unlock)(fl_ticketlock_t *l)
{
  if (!fl_ticket_held((uint32_t)fl_load_relaxed(&l->word)))
    return EPERM;
  FL_VG_RWLOCK_RELEASED(l, 1);
  FL_TSAN_PRE_UNLOCK(l, 0);
  fl_ticket_unlock_inline(l);
  FL_TSAN_POST_UNLOCK(l, 0);
  return 0;
}
