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
 * FL_SPIN_PATIENCE (8 to 16 us) is passed over, and when it runs again
 * it finds it was and queues again at the tail.  FIFO
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

#include <stdint.h>

#include <fastlock/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Each lock is one 32-bit word (its layout: <fastlock/bits/spinlock.h>).
 * All three: _init, _destroy, _lock, _trylock, _unlock, as above.  */

/* fl_spinlock_t: test-and-test-and-set, unfair, FL_PSHARED allowed.  */
typedef struct {
  int32_t word;
} fl_spinlock_t;

#define FL_SPINLOCK_INITIALIZER                                                \
 {                                                                             \
  0                                                                            \
 }

FL_EXPORT int fl_spin_init(fl_spinlock_t *l, unsigned flags);
FL_EXPORT int fl_spin_destroy(fl_spinlock_t *l);
FL_EXPORT int fl_spin_lock(fl_spinlock_t *l);
FL_EXPORT int fl_spin_trylock(fl_spinlock_t *l);
FL_EXPORT int fl_spin_unlock(fl_spinlock_t *l);

/* fl_ticketlock_t: FIFO among running waiters, FL_PSHARED allowed; at
 * most 32767 threads may hold or wait for one lock at once.  */
typedef struct {
  int32_t word;
} fl_ticketlock_t;

#define FL_TICKETLOCK_INITIALIZER                                              \
 {                                                                             \
  0                                                                            \
 }

FL_EXPORT int fl_ticket_init(fl_ticketlock_t *l, unsigned flags);
FL_EXPORT int fl_ticket_destroy(fl_ticketlock_t *l);
FL_EXPORT int fl_ticket_lock(fl_ticketlock_t *l);
FL_EXPORT int fl_ticket_trylock(fl_ticketlock_t *l);
FL_EXPORT int fl_ticket_unlock(fl_ticketlock_t *l);

/* fl_qspinlock_t: queued (MCS), FIFO among running waiters, process-
 * private; at most 16383 threads queue at once, 4 nested queueings per
 * thread (signal handlers), beyond which a thread spins on the word.  */
typedef struct {
  int32_t word;
} fl_qspinlock_t;

#define FL_QSPINLOCK_INITIALIZER                                               \
 {                                                                             \
  0                                                                            \
 }

FL_EXPORT int fl_qspin_init(fl_qspinlock_t *l, unsigned flags);
FL_EXPORT int fl_qspin_destroy(fl_qspinlock_t *l);
FL_EXPORT int fl_qspin_lock(fl_qspinlock_t *l);
FL_EXPORT int fl_qspin_trylock(fl_qspinlock_t *l);
FL_EXPORT int fl_qspin_unlock(fl_qspinlock_t *l);

#ifdef __cplusplus
}
#endif

/* The inline fastpaths behind the names above.  */
#include <fastlock/bits/spinlock.h>

#endif /* FASTLOCK_SPINLOCK_H */
