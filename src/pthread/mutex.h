/* src/pthread/mutex.h: the drop-in's mutex, laid over pthread_mutex_t.
 *
 * The words, at glibc's offsets where glibc gives them a meaning a static
 * initializer or the kernel relies on:
 *
 *   lock   (glibc __lock)   the futex word: 0 when free, else the owner's
 *                           TID | FL_PM_WAITERS when a thread may sleep on
 *                           it; FL_PM_OWNER_DIED is set by the kernel when
 *                           a robust mutex's owner dies (the robust-futex
 *                           ABI, which is why the TID is in the word)
 *   depth  (glibc __count)  a recursive mutex's extra lock count
 *   state  (glibc __owner)  0, or FL_PM_INCONSISTENT / FL_PM_UNRECOVERABLE
 *                           for a robust mutex whose owner died
 *   kind   (glibc __kind)   glibc's kind encoding, which the static
 *                           initializers (_NP kinds) write: type in the
 *                           low two bits, FL_PM_ROBUST, FL_PM_PI,
 *                           FL_PM_PP, FL_PM_PSHARED
 *   next, prev (glibc __list) a robust mutex's link in its owner thread's
 *                           robust list (robust.c): pointers, because the
 *                           kernel's robust-list ABI is made of them
 *
 * The states of the lock word and their transitions:
 *   0 --lock (CAS)--> tid                         uncontended acquire
 *   tid --a waiter (CAS)--> tid|WAITERS           before it sleeps
 *   tid[|WAITERS] --unlock (XCHG)--> 0            wakes one if WAITERS
 *   0 --a thread that slept (CAS)--> tid|WAITERS  it cannot know whether
 *                                                 others still sleep
 *   tid[|WAITERS] --owner dies (kernel)--> OWNER_DIED[|WAITERS]
 *   OWNER_DIED[|WAITERS] --lock (CAS)--> tid|WAITERS, EOWNERDEAD
 * Invariant: a thread sleeps only on a word with WAITERS set; whoever
 * clears WAITERS (an unlock) wakes one sleeper, and a woken thread takes
 * the word back with WAITERS set, so every sleeper is woken by some
 * unlock.  Any woken thread may claim the free word: no hand-over is
 * addressed to a particular waiter.  */
#ifndef FASTLOCK_PTHREAD_MUTEX_H
#define FASTLOCK_PTHREAD_MUTEX_H

#include "pthread/internal.h"

#include <stddef.h>

struct fl_pmutex {
  uint32_t lock;
  uint32_t depth;
  int32_t state;
#if __SIZEOF_POINTER__ == 8
  uint32_t spare0; /* glibc __nusers */
  int32_t kind;
  int32_t spare1; /* glibc __spins, __elision */
  uintptr_t prev;
  uintptr_t next;
#else
  int32_t kind;
  uint32_t spare0; /* glibc __nusers */
  uintptr_t next;  /* glibc's singly linked list */
#endif
};

_Static_assert(sizeof(struct fl_pmutex) <= sizeof(pthread_mutex_t),
               "the mutex fits in pthread_mutex_t");
_Static_assert(_Alignof(struct fl_pmutex) <= _Alignof(pthread_mutex_t),
               "the mutex needs no more alignment than pthread_mutex_t");
_Static_assert(offsetof(struct fl_pmutex, lock)
                   == offsetof(pthread_mutex_t, __data.__lock),
               "lock is __lock");
_Static_assert(offsetof(struct fl_pmutex, kind)
                   == offsetof(pthread_mutex_t, __data.__kind),
               "kind is where the _NP static initializers write it");
_Static_assert(offsetof(struct fl_pmutex, next)
                   == offsetof(pthread_mutex_t, __data.__list.__next),
               "the robust-list link is glibc's");
#if __SIZEOF_POINTER__ == 8
_Static_assert(offsetof(struct fl_pmutex, prev)
                   == offsetof(pthread_mutex_t, __data.__list.__prev),
               "the robust-list back link is glibc's");
#endif

/* The lock word (the kernel's FUTEX_WAITERS, FUTEX_OWNER_DIED,
 * FUTEX_TID_MASK).  */
#define FL_PM_WAITERS 0x80000000u
#define FL_PM_OWNER_DIED 0x40000000u
#define FL_PM_TID_MASK 0x3fffffffu

/* The kind word: glibc's values.  */
#define FL_PM_TYPE_MASK 3
#define FL_PM_ROBUST 16
#define FL_PM_PI 32
#define FL_PM_PP 64
#define FL_PM_PSHARED 128

/* The state word of a robust mutex (the values glibc keeps in __owner). */
#define FL_PM_INCONSISTENT 0x7fffffff
#define FL_PM_UNRECOVERABLE 0x7ffffffe

static inline struct fl_pmutex *fl_pm(pthread_mutex_t *m)
{
  return (struct fl_pmutex *)(void *)m;
}

/* Robust-list bookkeeping (robust.c).  fl_pt_robust_head returns the
 * calling thread's robust-list head, NULL if none is registered.  */
void *fl_pt_robust_head(void);
void fl_pt_robust_pending(void *head, struct fl_pmutex *pm);
void fl_pt_robust_link(void *head, struct fl_pmutex *pm);
void fl_pt_robust_unlink(void *head, struct fl_pmutex *pm);

#endif /* FASTLOCK_PTHREAD_MUTEX_H */
