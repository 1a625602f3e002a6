/* src/pthread/sem.h: the drop-in's semaphore, laid over sem_t.
 *
 *   value     the futex word: the semaphore's count (0 .. SEM_VALUE_MAX)
 *   nwaiters  threads between their check-in and check-out in a wait
 *   flags     FL_PS_SHARED
 *
 * A waiter checks in (nwaiters + 1) before it looks at value and sleeps
 * on value == 0; a poster raises value before it looks at nwaiters.  Each
 * side's read-modify-write is followed by a full barrier, so at least one
 * of them sees the other (the store-buffering pattern): either the waiter
 * finds the new value, or the poster finds the waiter and wakes one.  Any
 * woken waiter may take the unit; one that loses it to a trywait sleeps
 * again, the unit having gone to someone.  */
#ifndef FASTLOCK_PTHREAD_SEM_H
#define FASTLOCK_PTHREAD_SEM_H

#include "pthread/internal.h"

#include <limits.h>
#include <semaphore.h>

struct fl_psem {
  uint32_t value;
  uint32_t nwaiters;
  int32_t flags;
};

_Static_assert(sizeof(struct fl_psem) <= sizeof(sem_t),
               "the semaphore fits in sem_t");
_Static_assert(_Alignof(struct fl_psem) <= _Alignof(sem_t),
               "no more alignment than sem_t");

#define FL_PS_SHARED 0x1

/* Make s a semaphore of value (sem_init without the checks).  */
void fl_pt_sem_setup(sem_t *s, int shared, unsigned value);

#endif /* FASTLOCK_PTHREAD_SEM_H */
