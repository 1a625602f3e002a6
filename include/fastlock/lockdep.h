/* <fastlock/lockdep.h>: the lock-order checker (fl_lockdep(3)).
 *
 * Off by default.  Turned on for the whole process by FASTLOCK_LOCKDEP=1
 * in the environment (at library load, before main) or by
 * fl_lockdep_enable(); it cannot be turned off again.  While it is on,
 * every fastlock acquisition and release goes through the library's
 * watched paths (<fastlock/common.h>), and the checker reports on
 * standard error, each message starting "fastlock: ":
 *
 *   possible deadlock   a cycle in the order in which lock classes were
 *                       taken ("held A, then took B" in one place, "held
 *                       B, then took A" in another, or a longer cycle),
 *                       whether or not this run deadlocked, with the
 *                       stacks of both acquisitions and the classes'
 *                       names; once per cycle;
 *   recursive locking   a thread asks for an exclusive lock it holds, or
 *                       (FL_RWSEM fair mode) for a read lock it holds
 *                       while a writer waits;
 *   release of a lock not held by this thread (one the checker has seen
 *                       initialised or taken);
 *   lock held at thread exit;
 *   destroying a held lock;
 *   spinlock held across a blocking wait of another fastlock primitive.
 *
 * Classes.  A lock initialised with its _init function belongs to the
 * class of that call site (the return address of the _init call): every
 * lock made by the same line of code is one class, as with the kernel's
 * lockdep.  A lock that never went through _init (FL_*_INITIALIZER, or
 * zero-filled memory) is a class by itself, named by its address.
 *
 * Cost: the checker keeps a per-thread stack of held locks and a graph of
 * classes; a backtrace is taken only when a new "A then B" edge appears.
 * It takes no lock a caller could be waiting for, allocates nothing
 * after start-up, and ignores acquisitions made inside itself (a signal
 * handler that interrupts it).  */
#ifndef FASTLOCK_LOCKDEP_H
#define FASTLOCK_LOCKDEP_H

#include <fastlock/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Turn the checker on.  Locks already held when it is turned on are not
 * known to it: call it before the threads that use locks start.
 * Returns 0.  */
FL_EXPORT int fl_lockdep_enable(void);

/* Nonzero while the checker is on.  */
FL_EXPORT int fl_lockdep_enabled(void);

/* The number of reports the checker has printed so far.  */
FL_EXPORT unsigned long fl_lockdep_reports(void);

#ifdef __cplusplus
}
#endif

#endif /* FASTLOCK_LOCKDEP_H */
