/* <fastlock/spinlock.h>: three 4-byte spinlocks.
 *
 *   fl_spinlock_t    test-and-test-and-set with exponential backoff.  The
 *                    fastest when uncontended and with few threads, and
 *                    unfair: a thread that just released it usually takes
 *                    it again.  Works in shared memory (FL_PSHARED).
 *   fl_ticketlock_t  a ticket lock: FIFO among the threads that are
 *                    running.  Works in shared memory (FL_PSHARED).
 *   fl_qspinlock_t   a queued lock in the manner of the Linux kernel's
 *                    qspinlock: each waiter spins on its own queue node, so
 *                    a release touches one waiter's cache line, not every
 *                    waiter's.  FIFO among running threads.  Process-private
 *                    (the queue nodes are per thread, in this process).
 *
 * Each has _init(l, flags), _destroy, _lock, _trylock and _unlock under its
 * short name (fl_spin_*, fl_ticket_*, fl_qspin_*), returning 0 or an errno
 * value:
 *   EINVAL   _init: a flag other than FL_PSHARED, or FL_PSHARED for
 *            fl_qspinlock_t;
 *   ENOTSUP  _init: FL_PSHARED on a build whose atomics are not atomic
 *            between processes (MIPS sysmips: its hashed locks are per
 *            process);
 *   EBUSY    _trylock of a held lock (also by its holder); _destroy of a
 *            held lock (or of a ticket or queued lock with waiters);
 *   EPERM    _unlock of a lock that nobody holds.
 * A misused lock is left as it was.  An all-zero lock is a valid unlocked
 * one: _init only checks the flags and tells the race detectors about the
 * lock.
 *
 * None of the three knows its holder.  Four bytes would hold a thread id
 * for fl_spinlock_t, and with it EPERM for every unlock by another thread
 * and EDEADLK for a relock, but the fastpath would have to fetch the id
 * from thread-local storage and compare-and-swap it in (a lock and unlock
 * of 11 instructions on x86_64 instead of 8, measured), the id would have
 * to be looked up again in a forked child, and ids repeat between PID
 * namespaces that share memory.  The ticket and queued locks have no room
 * for one.  So: unlocking a lock that nobody holds is EPERM on all three,
 * but an unlock by a thread other than the holder releases the lock, and a
 * relock by the holder spins forever, as with pthread_spin_lock.
 *
 * Waiting.  Waiters spin with fl_cpu_relax, and yield the CPU
 * (sched_yield) once the lock has made no progress for tens of
 * microseconds: with more threads than CPUs the holder may be the thread
 * that is not running.  A FIFO lock has a worse problem there: the next
 * thread in line may have been preempted while it waited, and then the
 * lock stays free until the scheduler runs it again (milliseconds), while
 * every running thread waits behind it.  Both fair locks therefore hand
 * the lock only to a waiter that is running: a waiter that has been
 * granted the lock, or is about to be, and has not been seen spinning for
 * FL_SPIN_PATIENCE (8 to 16 us, src/spinlock/wait.h) is passed over, and
 * when it runs again it finds it was and queues again at the tail.  FIFO
 * order holds among the waiters that keep running; a preempted waiter
 * loses its place, which it could not have used.  (The alternative, letting
 * waiters time out of the queue by themselves, cannot help: a preempted
 * waiter runs no code, so the others must be the ones to decide.)
 *
 * Inline fastpaths.  The uncontended lock and unlock are inline functions
 * here (an atomic instruction of <fastlock/arch/atomic.h> and a compare),
 * reached through macros named like the functions; the contended paths are
 * in the library.  Every function is also in the library under its own
 * name, so that &fl_spin_lock or (fl_spin_lock)(l) gets the out-of-line
 * one.
 *
 * Race tools and the lock-order checker.  Each fastpath folds the switch
 * fl_tools_active (<fastlock/common.h>) into the test it makes anyway, and
 * leaves for the library's slowpath when it is set: there the lock is
 * watched, told to helgrind, drd and the lock-order checker
 * (fl_lockdep(3)).  A program compiled with -fsanitize=thread calls the
 * library's functions directly, which tell ThreadSanitizer.  Neither needs
 * a special build of the library or of the program.
 */
#ifndef FASTLOCK_SPINLOCK_H
#define FASTLOCK_SPINLOCK_H

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
typedef struct {
  int32_t word;
} fl_spinlock_t;

#define FL_SPINLOCK_INITIALIZER { 0 }

FL_EXPORT int fl_spin_init(fl_spinlock_t *l, unsigned flags);
FL_EXPORT int fl_spin_destroy(fl_spinlock_t *l);
FL_EXPORT int fl_spin_lock(fl_spinlock_t *l);
FL_EXPORT int fl_spin_trylock(fl_spinlock_t *l);
FL_EXPORT int fl_spin_unlock(fl_spinlock_t *l);

/* The out-of-line halves of the inline functions (not API).  Each takes
 * what the fastpath's atomic left (old: the previous word, with
 * fl_tools_active ORed in; for a trylock, 0 if it took the lock, again
 * with the switch ORed in) and finishes the job: it waits for the lock,
 * or it watches the operation when fl_tools_active is set.  */
FL_EXPORT int fl_spin_lock_slow(fl_spinlock_t *l, int32_t old);
FL_EXPORT int fl_spin_trylock_slow(fl_spinlock_t *l, int32_t old);
FL_EXPORT int fl_spin_unlock_slow(fl_spinlock_t *l);

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
  return fl_spin_lock_slow(l, old);
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
  return fl_spin_trylock_slow(l, old);
}

/* Release: the critical section's loads and stores are done before the
 * word reads 0.  The relaxed load only tells a held lock (1) from a free
 * one, which the caller, if it holds the lock, already made so; a free
 * one is the slowpath's EPERM.  */
static inline int fl_spin_unlock_inline(fl_spinlock_t *l)
{
  if (FL_TOOLS_ALWAYS)
    return (fl_spin_unlock)(l);
  if (__builtin_expect(((fl_load_relaxed(&l->word) ^ 1) | FL_TOOLS_ACTIVE) != 0, 0))
    return fl_spin_unlock_slow(l);
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
typedef struct {
  int32_t word;
} fl_ticketlock_t;

#define FL_TICKETLOCK_INITIALIZER { 0 }

#define FL_TICKET_MASK 0x7fffu
#define FL_TICKET_PENDING 0x8000u
#define FL_TICKET_NEXT_SHIFT 16
#define FL_TICKET_NEXT_ONE 0x10000u

FL_EXPORT int fl_ticket_init(fl_ticketlock_t *l, unsigned flags);
FL_EXPORT int fl_ticket_destroy(fl_ticketlock_t *l);
FL_EXPORT int fl_ticket_lock(fl_ticketlock_t *l);
FL_EXPORT int fl_ticket_trylock(fl_ticketlock_t *l);
FL_EXPORT int fl_ticket_unlock(fl_ticketlock_t *l);

FL_EXPORT int fl_ticket_lock_slow(fl_ticketlock_t *l, int32_t old);
FL_EXPORT int fl_ticket_trylock_slow(fl_ticketlock_t *l, int32_t old);
FL_EXPORT int fl_ticket_unlock_slow(fl_ticketlock_t *l);

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
  return (((uint32_t)old >> FL_TICKET_NEXT_SHIFT) ^ (uint32_t)old) & FL_TICKET_MASK;
}

static inline int fl_ticket_lock_inline(fl_ticketlock_t *l)
{
  int32_t old;

  if (FL_TOOLS_ALWAYS)
    return (fl_ticket_lock)(l);
  old = fl_ticket_attempt(l);
  if (__builtin_expect((fl_ticket_unserved(old) | (uint32_t)FL_TOOLS_ACTIVE) == 0, 1))
    return 0;
  return fl_ticket_lock_slow(l, old);
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
                                   (int32_t)(v + FL_TICKET_NEXT_ONE)) != (int32_t)v;
  if (__builtin_expect((lost | FL_TOOLS_ACTIVE) == 0, 1))
    return 0;
  return fl_ticket_trylock_slow(l, lost);
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
  if (__builtin_expect(((((v & (FL_TICKET_MASK | FL_TICKET_PENDING)) + 1) ^
                         ((v >> FL_TICKET_NEXT_SHIFT) & FL_TICKET_MASK)) |
                        (uint32_t)FL_TOOLS_ACTIVE) == 0, 1) &&
      fl_atomic_cmpxchg_release(&l->word, (int32_t)v, (int32_t)(v + 1)) == (int32_t)v)
    return 0;
  return fl_ticket_unlock_slow(l);
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
 * as long, its head preempted, is taken by a waiter further back
 * (src/spinlock/qspinlock.c).
 * --------------------------------------------------------------------- */
typedef struct {
  int32_t word;
} fl_qspinlock_t;

#define FL_QSPINLOCK_INITIALIZER { 0 }

#define FL_QSPIN_LOCKED 0x1u
#define FL_QSPIN_LOCKED_MASK 0xffu
#define FL_QSPIN_PENDING 0x100u
#define FL_QSPIN_TAIL_SHIFT 16

FL_EXPORT int fl_qspin_init(fl_qspinlock_t *l, unsigned flags);
FL_EXPORT int fl_qspin_destroy(fl_qspinlock_t *l);
FL_EXPORT int fl_qspin_lock(fl_qspinlock_t *l);
FL_EXPORT int fl_qspin_trylock(fl_qspinlock_t *l);
FL_EXPORT int fl_qspin_unlock(fl_qspinlock_t *l);

FL_EXPORT int fl_qspin_lock_slow(fl_qspinlock_t *l, int32_t old);
FL_EXPORT int fl_qspin_trylock_slow(fl_qspinlock_t *l, int32_t old);
FL_EXPORT int fl_qspin_unlock_slow(fl_qspinlock_t *l);

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
  return fl_qspin_lock_slow(l, old);
}

static inline int fl_qspin_trylock_inline(fl_qspinlock_t *l)
{
  int32_t old;

  if (FL_TOOLS_ALWAYS)
    return (fl_qspin_trylock)(l);
  old = fl_qspin_attempt(l) | FL_TOOLS_ACTIVE;
  if (__builtin_expect(old == 0, 1))
    return 0;
  return fl_qspin_trylock_slow(l, old);
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
  if (__builtin_expect(fl_atomic_cmpxchg_release(&l->word, locked, 0) == locked, 1))
    return 0;
  return fl_qspin_unlock_slow(l);
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

#endif /* FASTLOCK_SPINLOCK_H */
