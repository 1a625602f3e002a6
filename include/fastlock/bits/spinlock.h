/* <fastlock/bits/spinlock.h>: the machinery behind <fastlock/spinlock.h>:
 * each lock's word, its inline fastpaths, and the library's slowpaths
 * they call.  Not API: include <fastlock/spinlock.h>.  */
#ifndef FASTLOCK_BITS_SPINLOCK_H
#define FASTLOCK_BITS_SPINLOCK_H

#include <errno.h>
#include <stdint.h>

#include <fastlock/common.h>
#include <fastlock/arch/atomic.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * fl_spinlock_t: test-and-test-and-set.
 *
 * The word: 0 when unlocked, 1 when held.  Lock exchanges 1 in, unlock
 * stores 0.
 * --------------------------------------------------------------------- */

/* The out-of-line halves of the inline functions (not API).  Each takes
 * what the fastpath's atomic left (old: the previous word, with
 * fl_tools_active ORed in; for a trylock, 0 if it took the lock, again
 * with the switch ORed in) and finishes the job: it waits for the lock,
 * or it watches the operation when fl_tools_active is set.  */
FL_EXPORT int fl_spin_lock_slowpath(fl_spinlock_t *l, int32_t old);
FL_EXPORT int fl_spin_trylock_slowpath(fl_spinlock_t *l, int32_t old);
FL_EXPORT int fl_spin_unlock_slowpath(fl_spinlock_t *l);

/* Acquire: the critical section's loads and stores stay after the
 * exchange that takes the lock.  */
static inline int32_t fl_spin_attempt(fl_spinlock_t *l)
{
  return fl_atomic_xchg_acquire(&l->word, 1);
}

static inline int fl_spin_lock_inline(fl_spinlock_t *l)
{
  int32_t old;

  if (FL_TOOLS_ALWAYS)
    return (fl_spin_lock)(l);
  old = fl_spin_attempt(l) | FL_TOOLS_ACTIVE;
  if (__builtin_expect(old == 0, 1))
    return 0;
  return fl_spin_lock_slowpath(l, old);
}

/* Exchanging 1 into a held lock changes nothing.  */
static inline int fl_spin_trylock_inline(fl_spinlock_t *l)
{
  int32_t old;

  if (FL_TOOLS_ALWAYS)
    return (fl_spin_trylock)(l);
  old = fl_spin_attempt(l) | FL_TOOLS_ACTIVE;
  if (__builtin_expect(old == 0, 1))
    return 0;
  return fl_spin_trylock_slowpath(l, old);
}

/* Release: the critical section's loads and stores are done before the
 * word reads 0.  The relaxed load only tells a held lock (1) from a free
 * one, which the caller, if it holds the lock, already made so; a free
 * one is the slowpath's EPERM.  */
static inline int fl_spin_unlock_inline(fl_spinlock_t *l)
{
  if (FL_TOOLS_ALWAYS)
    return (fl_spin_unlock)(l);
  if (__builtin_expect(((fl_load_relaxed(&l->word) ^ 1) | FL_TOOLS_ACTIVE) != 0,
                       0))
    return fl_spin_unlock_slowpath(l);
  fl_store_release(&l->word, 0);
  return 0;
}

/* ------------------------------------------------------------------------
 * fl_ticketlock_t: tickets, handed out and served in order.
 *
 * The word:
 *   bits  0-14  owner: the ticket being served;
 *   bit   15    FL_TICKET_PENDING: owner has been granted to a waiter that
 *               has not claimed it yet;
 *   bits 16-31  next: a 16-bit counter whose low 15 bits are the next
 *               ticket to hand out.  Taking a ticket adds 1 << 16 to the
 *               word; the carry out of bit 31 is lost, so next wraps by
 *               itself and never disturbs owner.
 * Tickets are 15-bit and compared modulo 2^15: the lock is free when owner
 * == next, held otherwise, and the tickets in [owner, next) are the
 * holder's and its waiters'.  So at most 32767 threads may hold or wait for
 * one ticket lock at once; a 32768th ticket would make next equal owner
 * and the lock look free.  Wrapping is otherwise harmless: every
 * comparison is a modular difference, and every change that gives the lock
 * to someone is a compare-and-swap on the whole word, so a waiter whose
 * ticket number came round again can never take the lock with another's
 * claim.
 *
 * Unlock moves owner on, and sets PENDING if a ticket is waiting for it.
 * The waiter whose ticket owner now is claims the lock by clearing
 * PENDING; a free lock taken on the fastpath is never PENDING.  That is
 * what lets the other waiters tell a holder, which may hold the lock as
 * long as it likes, from a grantee that is not running: a PENDING grant
 * left unclaimed for FL_SPIN_PATIENCE is passed over (owner moves on once
 * more), and its waiter takes a new ticket when it next looks.
 * --------------------------------------------------------------------- */

#define FL_TICKET_MASK 0x7fffu
#define FL_TICKET_PENDING 0x8000u
#define FL_TICKET_NEXT_SHIFT 16
#define FL_TICKET_NEXT_ONE 0x10000u

FL_EXPORT int fl_ticket_lock_slowpath(fl_ticketlock_t *l, int32_t old);
FL_EXPORT int fl_ticket_trylock_slowpath(fl_ticketlock_t *l, int32_t old);
FL_EXPORT int fl_ticket_unlock_slowpath(fl_ticketlock_t *l);

/* Take a ticket.  Acquire: if the lock was free the critical section
 * starts here, and its accesses stay after the add.  Returns the old
 * word: the lock was free if the ticket we got, its next, is the one
 * being served.  */
static inline int32_t fl_ticket_attempt(fl_ticketlock_t *l)
{
  return fl_atomic_fetch_add_acquire(&l->word, (int32_t)FL_TICKET_NEXT_ONE);
}

static inline uint32_t fl_ticket_unserved(int32_t old)
{
  return (((uint32_t)old >> FL_TICKET_NEXT_SHIFT) ^ (uint32_t)old)
         & FL_TICKET_MASK;
}

static inline int fl_ticket_lock_inline(fl_ticketlock_t *l)
{
  int32_t old;

  if (FL_TOOLS_ALWAYS)
    return (fl_ticket_lock)(l);
  old = fl_ticket_attempt(l);
  if (__builtin_expect(
          (fl_ticket_unserved(old) | (uint32_t)FL_TOOLS_ACTIVE) == 0, 1))
    return 0;
  return fl_ticket_lock_slowpath(l, old);
}

/* A ticket only if it would be served at once.  The slowpath gets 0 if
 * the compare-and-swap took the lock, 1 if it lost it to another thread
 * and must look again, with fl_tools_active ORed in.  */
static inline int fl_ticket_trylock_inline(fl_ticketlock_t *l)
{
  uint32_t v;
  int32_t lost;

  if (FL_TOOLS_ALWAYS)
    return (fl_ticket_trylock)(l);
  v = (uint32_t)fl_load_relaxed(&l->word);
  if (fl_ticket_unserved((int32_t)v) != 0)
    return EBUSY;
  lost = fl_atomic_cmpxchg_acquire(&l->word, (int32_t)v,
                                   (int32_t)(v + FL_TICKET_NEXT_ONE))
         != (int32_t)v;
  if (__builtin_expect((lost | FL_TOOLS_ACTIVE) == 0, 1))
    return 0;
  return fl_ticket_trylock_slowpath(l, lost);
}

/* The uncontended unlock: nothing pending, no ticket waiting (next is
 * owner + 1), and owner not about to wrap; then adding 1 to the word moves
 * owner on to next, and the lock is free.  The low half, owner and
 * PENDING, plus 1, equal to next as plain numbers says all three at once:
 * with PENDING set, or owner at its last value, the sum is at least 2^15,
 * which next never is.  The compare-and-swap confirms that no ticket was
 * taken meanwhile; anything else, and a watched unlock, is the
 * slowpath's.  Release: the critical section is done before the new
 * owner can be seen.  */
static inline int fl_ticket_unlock_inline(fl_ticketlock_t *l)
{
  uint32_t v;

  if (FL_TOOLS_ALWAYS)
    return (fl_ticket_unlock)(l);
  v = (uint32_t)fl_load_relaxed(&l->word);
  if (__builtin_expect(((((v & (FL_TICKET_MASK | FL_TICKET_PENDING)) + 1)
                         ^ ((v >> FL_TICKET_NEXT_SHIFT) & FL_TICKET_MASK))
                        | (uint32_t)FL_TOOLS_ACTIVE)
                           == 0,
                       1)
      && fl_atomic_cmpxchg_release(&l->word, (int32_t)v, (int32_t)(v + 1))
             == (int32_t)v)
    return 0;
  return fl_ticket_unlock_slowpath(l);
}

/* ------------------------------------------------------------------------
 * fl_qspinlock_t: a queued spinlock (Linux's qspinlock, in user space).
 *
 * The word, as the kernel lays it out for fewer than 16K CPUs:
 *   bits  0-7   locked byte: FL_QSPIN_LOCKED (1) while held;
 *   bits  8-15  pending byte: bit 8, FL_QSPIN_PENDING, is set by the one
 *               waiter that spins on the word itself, ahead of the queue,
 *               so that light contention never touches a queue node;
 *   bits 16-17  tail nesting level: which of the tail thread's 4 nodes;
 *   bits 18-31  tail thread: 1 + the index of the thread whose node is the
 *               last in the queue (0: no queue).  Indices are given to
 *               threads at their first queueing and taken back when they
 *               exit, so 16383 threads may queue at once; a thread beyond
 *               that, or beyond 4 nested queueings (signal handlers), spins
 *               on the word instead, unfairly.
 * Every word but 0 and FL_QSPIN_LOCKED is the slowpath's: the fastpath is
 * one compare-and-swap from 0 to locked, the unlock one from locked to 0.
 * Unlock cannot be the kernel's byte store (the shim works on whole 32-bit
 * words), so when pending or a queue is present it clears the locked byte
 * with a compare-and-swap loop.
 *
 * The queue is an MCS list of per-thread nodes, linked through their tail
 * codes.  The head node's thread spins on the word until locked and pending
 * are clear, takes the lock, and makes its successor the head.  A successor
 * not seen spinning for FL_SPIN_PATIENCE is passed over then, by the new
 * holder, which also removes it from the queue; a lock that sits free for
 * as long, its head preempted, is taken by a waiter further back.
 * --------------------------------------------------------------------- */

#define FL_QSPIN_LOCKED 0x1u
#define FL_QSPIN_LOCKED_MASK 0xffu
#define FL_QSPIN_PENDING 0x100u
#define FL_QSPIN_TAIL_SHIFT 16

FL_EXPORT int fl_qspin_lock_slowpath(fl_qspinlock_t *l, int32_t old);
FL_EXPORT int fl_qspin_trylock_slowpath(fl_qspinlock_t *l, int32_t old);
FL_EXPORT int fl_qspin_unlock_slowpath(fl_qspinlock_t *l);

/* Only a word that is exactly 0 may be taken: with pending or a queue
 * present, the lock belongs to the waiters first.  Acquire: the critical
 * section's accesses stay after the compare-and-swap that takes it.  */
static inline int32_t fl_qspin_attempt(fl_qspinlock_t *l)
{
  return fl_atomic_cmpxchg_acquire(&l->word, 0, (int32_t)FL_QSPIN_LOCKED);
}

static inline int fl_qspin_lock_inline(fl_qspinlock_t *l)
{
  int32_t old;

  if (FL_TOOLS_ALWAYS)
    return (fl_qspin_lock)(l);
  old = fl_qspin_attempt(l) | FL_TOOLS_ACTIVE;
  if (__builtin_expect(old == 0, 1))
    return 0;
  return fl_qspin_lock_slowpath(l, old);
}

static inline int fl_qspin_trylock_inline(fl_qspinlock_t *l)
{
  int32_t old;

  if (FL_TOOLS_ALWAYS)
    return (fl_qspin_trylock)(l);
  old = fl_qspin_attempt(l) | FL_TOOLS_ACTIVE;
  if (__builtin_expect(old == 0, 1))
    return 0;
  return fl_qspin_trylock_slowpath(l, old);
}

/* Release: the critical section is done before the word reads unlocked.
 * A watched unlock must not release here: it expects a word of
 * FL_QSPIN_LOCKED + fl_tools_active, and with the switch on that is 3, a
 * locked byte the word never has, so the compare-and-swap fails and
 * changes nothing.  */
static inline int fl_qspin_unlock_inline(fl_qspinlock_t *l)
{
  int32_t locked;

  if (FL_TOOLS_ALWAYS)
    return (fl_qspin_unlock)(l);
  locked = (int32_t)FL_QSPIN_LOCKED + FL_TOOLS_ACTIVE;
  if (__builtin_expect(fl_atomic_cmpxchg_release(&l->word, locked, 0) == locked,
                       1))
    return 0;
  return fl_qspin_unlock_slowpath(l);
}

#define fl_spin_lock(l) fl_spin_lock_inline(l)
#define fl_spin_trylock(l) fl_spin_trylock_inline(l)
#define fl_spin_unlock(l) fl_spin_unlock_inline(l)
#define fl_ticket_lock(l) fl_ticket_lock_inline(l)
#define fl_ticket_trylock(l) fl_ticket_trylock_inline(l)
#define fl_ticket_unlock(l) fl_ticket_unlock_inline(l)
#define fl_qspin_lock(l) fl_qspin_lock_inline(l)
#define fl_qspin_trylock(l) fl_qspin_trylock_inline(l)
#define fl_qspin_unlock(l) fl_qspin_unlock_inline(l)

#ifdef __cplusplus
}
#endif

#endif /* FASTLOCK_BITS_SPINLOCK_H */
