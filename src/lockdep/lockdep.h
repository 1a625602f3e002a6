/* src/lockdep/lockdep.h: the lock-order checker's hooks, called by every
 * primitive's watched paths (<fastlock/lockdep.h> says what it reports).
 *
 * Every hook returns at once while the checker is off.  lock is the
 * object's address; kind its type's name ("fl_spinlock_t"), used to name
 * its class.  */
#ifndef FASTLOCK_LOCKDEP_LOCKDEP_H
#define FASTLOCK_LOCKDEP_LOCKDEP_H

#include <fastlock/lockdep.h>

/* Flags of an acquisition (and, at _init, of the lock).  */
#define FL_LOCKDEP_READ 0x1u         /* shared: a read lock */
#define FL_LOCKDEP_TRY 0x2u          /* a trylock that succeeded */
#define FL_LOCKDEP_SPIN 0x4u         /* the lock is a spinlock */
#define FL_LOCKDEP_WRITER_WAITS 0x8u /* read, fair mode, a writer waits */

/* lock was initialised by the code at site: its class is site's.  */
void fl_lockdep_init(const void *lock, const char *kind, unsigned flags,
                     const void *site);

/* The calling thread is about to wait for lock (and will hold it), or
 * (FL_LOCKDEP_TRY) has just taken it without waiting.  */
void fl_lockdep_acquire(const void *lock, const char *kind, unsigned flags);

/* The calling thread releases lock (one acquisition of it).  Also the
 * undoing of an acquire whose wait failed (a timeout).  */
void fl_lockdep_release(const void *lock);

/* The calling thread destroys lock.  */
void fl_lockdep_destroy(const void *lock);

/* The calling thread is about to block in the kernel waiting for a
 * fastlock primitive.  */
void fl_lockdep_wait(void);

#endif /* FASTLOCK_LOCKDEP_LOCKDEP_H */
