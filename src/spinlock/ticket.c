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
 * FL_SPIN_YIELD_AFTER.
 *
 * An unlock that grants the lock waits, reading only, until the grantee
 * has claimed it (at most FL_TICKET_HANDOVER_SPINS fl_cpu_relax).  The
 * thread that unlocks is the one most likely to take a ticket next, and
 * its fetch-and-add would take the line away from the grantee between
 * the grantee's read and its claim, which then fails and goes round
 * again: a hand-over that costs two trips of the line instead of one.
 * With 4 threads on 2 CPUs (the benchmark's spin-4) this wait doubles
 * the throughput.  */
#include "config.h"

#include "spinlock/internal.h"
#include "sys/cpu.h"

#include <sched.h>

/* fl_cpu_relax between two reads: one for the next in line, this many
 * more for each ticket further back, and at most.  */
#define FL_TICKET_RELAX_PER_WAITER 8
#define FL_TICKET_RELAX_MAX 64

/* fl_cpu_relax an unlock waits, at most, for its grant to be claimed: a
 * running grantee claims within a few hundred nanoseconds.  None on a
 * uniprocessor build, where the grantee cannot run while we wait.  */
#if FL_UNIPROCESSOR
# define FL_TICKET_HANDOVER_SPINS 0
#else
# define FL_TICKET_HANDOVER_SPINS 64
#endif

#define FL_TICKET_OWNER(v) ((v)&FL_TICKET_MASK)
#define FL_TICKET_NEXT(v) (((v) >> FL_TICKET_NEXT_SHIFT) & FL_TICKET_MASK)

/* Busy while any ticket is out: held, granted, or waited for.  */
static int fl_ticket_busy(uint32_t v)
{
  return FL_TICKET_NEXT(v) != FL_TICKET_OWNER(v);
}

/* The word with owner moved on by one: PENDING if a ticket is waiting for
 * the new owner, free if none is.  */
static uint32_t fl_ticket_advance(uint32_t v)
{
  uint32_t owner = (FL_TICKET_OWNER(v) + 1) & FL_TICKET_MASK;
  uint32_t rest = v & ~(FL_TICKET_MASK | FL_TICKET_PENDING);

  return rest | owner | (owner != FL_TICKET_NEXT(v) ? FL_TICKET_PENDING : 0);
}

int fl_ticket_lock_wait(fl_ticketlock_t *l, uint32_t ticket)
{
  struct fl_spin_watch watch;
  uint32_t v, owner, ahead, relax;
  int32_t waited;

  /* Progress is owner or PENDING moving (the tail, next, moves with every
   * arrival).  */
  fl_spin_watch_start(&watch, UINT32_MAX);
  for (;;) {
    /* Acquire: a grant we find here was made by an unlock (release), and
     * our claim below must see the critical section before it.  */
    v = (uint32_t)fl_load_acquire(&l->word);
    owner = FL_TICKET_OWNER(v);
    ahead = (ticket - owner) & FL_TICKET_MASK;

    if (ahead == 0 && (v & FL_TICKET_PENDING)) {
      /* Acquire: the critical section stays after the claim.  */
      if (fl_atomic_cmpxchg_acquire(&l->word, (int32_t)v,
                                    (int32_t)(v & ~FL_TICKET_PENDING))
          == (int32_t)v)
        return 0;
      continue;
    }
    if (ahead != 0 && ahead >= ((FL_TICKET_NEXT(v) - owner) & FL_TICKET_MASK)) {
      v = (uint32_t)fl_atomic_fetch_add_acquire(&l->word,
                                                (int32_t)FL_TICKET_NEXT_ONE);
      ticket = FL_TICKET_NEXT(v);
      if (ticket == FL_TICKET_OWNER(v))
        return 0;
      fl_spin_watch_start(&watch, UINT32_MAX);
      continue;
    }

    waited = fl_spin_watch(&watch, v & (FL_TICKET_MASK | FL_TICKET_PENDING),
                           fl_spin_now());
    if ((v & FL_TICKET_PENDING)
        && waited > fl_load_relaxed(&fl_spin_patience)) {
      /* Pass the absent grantee over.  When the next ticket is ours we
       * take the lock here, so this is an acquire.  */
      uint32_t passed = fl_ticket_advance(v);
      int mine = ((owner + 1) & FL_TICKET_MASK) == ticket;

      if (mine)
        passed &= ~FL_TICKET_PENDING;
      if (fl_atomic_cmpxchg_acquire(&l->word, (int32_t)v, (int32_t)passed)
              == (int32_t)v
          && mine)
        return 0;
      continue;
    } else if (waited > FL_SPIN_YIELD_AFTER) {
      sched_yield();
    }

    relax = ahead <= 1 ? 1 : (ahead - 1) * FL_TICKET_RELAX_PER_WAITER;
    fl_spin_relax(relax < FL_TICKET_RELAX_MAX ? relax : FL_TICKET_RELAX_MAX);
  }
}

/* A trylock: take the lock if no ticket is out, looking again after
 * losing a compare-and-swap to another thread (st is unused: the word is
 * read again either way).  */
static int fl_ticket_try(fl_ticketlock_t *l, int32_t st)
{
  uint32_t v;

  (void)st;
  for (;;) {
    v = (uint32_t)fl_load_relaxed(&l->word);
    if (fl_ticket_busy(v))
      return EBUSY;
    /* Acquire, as on the fastpath.  */
    if (fl_atomic_cmpxchg_acquire(&l->word, (int32_t)v,
                                  (int32_t)(v + FL_TICKET_NEXT_ONE))
        == (int32_t)v)
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

/* After an unlock that left the word granted: if that is a grant to a
 * waiter (PENDING), give the grantee the line to claim it in, reading
 * only while owner and PENDING stay as we left them (see the top of this
 * file).  */
static void fl_ticket_hand_over(fl_ticketlock_t *l, uint32_t granted)
{
  int32_t spins = FL_TICKET_HANDOVER_SPINS;

  granted &= FL_TICKET_MASK | FL_TICKET_PENDING;
  if (!(granted & FL_TICKET_PENDING))
    return;
  while (spins-- > 0
         && ((uint32_t)fl_load_relaxed(&l->word)
             & (FL_TICKET_MASK | FL_TICKET_PENDING))
                == granted)
    fl_cpu_relax();
}

static int fl_ticket_release(fl_ticketlock_t *l)
{
  uint32_t v, granted;

  for (;;) {
    v = (uint32_t)fl_load_relaxed(&l->word);
    if (!fl_ticket_held(v))
      return EPERM;
    granted = fl_ticket_advance(v);
    /* Release: the critical section is done before the grant shows.  */
    if (fl_atomic_cmpxchg_release(&l->word, (int32_t)v, (int32_t)granted)
        == (int32_t)v) {
      fl_ticket_hand_over(l, granted);
      return 0;
    }
  }
}

static int fl_ticket_taken(int32_t old)
{
  return fl_ticket_unserved(old) == 0;
}

/* After a fetch-and-add that did not take the lock: wait with the ticket
 * it gave us, the old next.  */
static int fl_ticket_wait(fl_ticketlock_t *l, int32_t old)
{
  return fl_ticket_lock_wait(l, FL_TICKET_NEXT((uint32_t)old));
}

/* A trylock's first try is fl_ticket_try's: nothing was tried before.  */
static int32_t fl_ticket_untried(fl_ticketlock_t *l)
{
  (void)l;
  return 1;
}

FL_SPIN_DEFINE_API(ticket, fl_ticketlock_t, 1, fl_ticket_busy, fl_ticket_held,
                   fl_ticket_taken, fl_ticket_wait, fl_ticket_untried,
                   fl_ticket_try, fl_ticket_release)
