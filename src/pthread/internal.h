/* src/pthread/internal.h: what the drop-in's files share.
 *
 * libfastlock-pthread defines pthread_mutex_*, pthread_cond_*,
 * pthread_rwlock_*, pthread_rwlockattr_*, pthread_spin_* and sem_* with
 * fastlock's primitives underneath, in the caller's own glibc-typed
 * objects.  Each object's fastlock state is laid over glibc's type; the
 * layouts are asserted against glibc's at compile time beside each
 * definition.  The mutex and condition-variable attribute objects stay
 * glibc's: we read them through glibc's own getters, so that a kind we
 * hand to glibc (priority inheritance or protection) is initialised by
 * glibc from glibc's attribute object.  */
#ifndef FASTLOCK_PTHREAD_INTERNAL_H
#define FASTLOCK_PTHREAD_INTERNAL_H

#include <fastlock/config.h>
#include <fastlock/arch/atomic.h>

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* The drop-in's entry points: the only symbols the library exports.  */
#define FL_PT_API __attribute__((visibility("default")))

/* ------------------------------------------------------------------ */
/* The calling thread.                                                 */
/* ------------------------------------------------------------------ */

/* The kernel TID of the calling thread: what the mutex word holds while
 * the thread owns it (the robust-futex ABI wants exactly that).  Cached
 * per thread; the first call of a thread makes one gettid system call
 * and nothing else (no allocation: malloc's own locks may be ours).  A
 * fork() child's thread has a new TID: an atfork handler, registered by
 * the library's constructor, forgets the cache (self.c).  */
extern __thread int32_t fl_pt_tid_cache
    __attribute__((tls_model("initial-exec")));
int32_t fl_pt_tid_slowpath(void);

static inline int32_t fl_pt_tid(void)
{
  int32_t t = fl_pt_tid_cache;
  return __builtin_expect(t != 0, 1) ? t : fl_pt_tid_slowpath();
}

/* The cleanup handler of a wait that is a cancellation point, registered
 * the way glibc's own waits register theirs (its sem_wait, for one): a
 * buffer on the waiter's stack chained into the thread's list, which the
 * cancellation unwinder runs as it leaves the buffer's frame, in order
 * with the caller's handlers, even through frames without unwind tables.
 * pthread_cleanup_push, in C built without -fexceptions, costs a
 * __sigsetjmp and two calls to register and unregister it, on every
 * wait that sleeps (README, Known gaps: the semaphore ping-pong, from
 * 0.85 to 0.91 of glibc's).  -fexceptions instead (a cleanup
 * attribute, no cost until an unwind) runs the handler only where the
 * unwinder can reach the landing pad before glibc longjmps to the
 * caller's setjmp-style handler: not on powerpc64le or mipsel, whose
 * cancelled condition waiters then ran the caller's handler without the
 * mutex.  glibc exports these two on every arch (at its first version
 * there, and at GLIBC_2.34, which a build against glibc 2.34 or later
 * binds) and declares only their buffer in <pthread.h>.  */
void _pthread_cleanup_push(struct _pthread_cleanup_buffer *buffer,
                           void (*routine)(void *), void *arg);
void _pthread_cleanup_pop(struct _pthread_cleanup_buffer *buffer, int execute);

/* A full barrier after an atomic read-modify-write, where a store must be
 * ordered before a later load of another word (the waiter-count
 * handshakes of sem and cond).  A locked x86 instruction already is one;
 * elsewhere an acquire/release RMW is not, so fl_smp_mb supplies it.  */
static inline void fl_pt_mb_after_rmw(void)
{
#if defined(__i386__) || defined(__x86_64__)
  __asm__ __volatile__("" : : : "memory");
#else
  fl_smp_mb();
#endif
}

/* Retrying futex wait: returns 0 after a wake-up (or a spurious return:
 * callers re-check), ETIMEDOUT, EINVAL; EINTR and EAGAIN become 0.
 * cancellable: the sleep is a cancellation point (the caller has a
 * cleanup handler pushed).  */
int fl_pt_wait(uint32_t *word, uint32_t expected, int pshared, clockid_t clock,
               const struct timespec *abstime, int cancellable);

/* ------------------------------------------------------------------ */
/* Delegation to glibc (delegate.c).                                   */
/* ------------------------------------------------------------------ */

/* glibc's own mutex functions, for the kinds we hand to glibc on the
 * same object.  Resolved by fl_pt_glibc_resolve (dlsym(RTLD_NEXT), which
 * may allocate) when such a mutex is initialised, never on a lock path;
 * the lock paths only load the pointers.  */
struct fl_pt_glibc {
  int (*mutex_init)(pthread_mutex_t *, const pthread_mutexattr_t *);
  int (*mutex_destroy)(pthread_mutex_t *);
  int (*mutex_lock)(pthread_mutex_t *);
  int (*mutex_trylock)(pthread_mutex_t *);
  int (*mutex_timedlock)(pthread_mutex_t *, const struct timespec *);
  int (*mutex_clocklock)(pthread_mutex_t *, clockid_t, const struct timespec *);
  int (*mutex_unlock)(pthread_mutex_t *);
  int (*mutex_consistent)(pthread_mutex_t *);
  int (*mutex_getprioceiling)(const pthread_mutex_t *, int *);
  int (*mutex_setprioceiling)(pthread_mutex_t *, int, int *);
  int (*cond_init)(pthread_cond_t *, const pthread_condattr_t *);
  int (*cond_destroy)(pthread_cond_t *);
  int (*cond_wait)(pthread_cond_t *, pthread_mutex_t *);
  int (*cond_timedwait)(pthread_cond_t *, pthread_mutex_t *,
                        const struct timespec *);
  int (*cond_clockwait)(pthread_cond_t *, pthread_mutex_t *, clockid_t,
                        const struct timespec *);
  int (*cond_signal)(pthread_cond_t *);
  int (*cond_broadcast)(pthread_cond_t *);
};
extern struct fl_pt_glibc fl_pt_glibc;
/* 0, or ENOSYS when glibc's functions cannot be found.  */
int fl_pt_glibc_resolve(void);

/* Nonzero in a ThreadSanitizer program (tsan.c): there every mutex and
 * condition variable is glibc's, through fl_pt_glibc.  Set once, by a
 * constructor, before the program runs.  */
extern int fl_pt_tsan;

/* ------------------------------------------------------------------ */
/* Race tools (annotate.c).                                            */
/* ------------------------------------------------------------------ */

/* Valgrind intercepts pthread functions by the soname of the library
 * that defines them; ours are not among them, so each out-of-line entry
 * point tells helgrind and drd what it did through client requests,
 * which cost a few instructions outside Valgrind.  fl_pt_vg is nonzero
 * when running under Valgrind or while the lock-order checker is on (set
 * once, lazily): the mutex's inline paths then step aside.  */
extern int fl_pt_vg;
int fl_pt_vg_probe(void);
static inline int fl_pt_under_vg(void)
{
  int v = fl_pt_vg;
  return __builtin_expect(v == 0, 1) ? 0 : v > 0 ? 1 : fl_pt_vg_probe();
}
void fl_pt_vg_hide(void *addr, unsigned long size);
void fl_pt_vg_acquired(void *lock, int writer);
void fl_pt_vg_released(void *lock, int writer);
void fl_pt_vg_destroyed(void *lock);
void fl_pt_vg_happens_before(void *obj);
void fl_pt_vg_happens_after(void *obj);

/* ------------------------------------------------------------------ */
/* The mutex, as the condition variable needs it (mutex.c).            */
/* ------------------------------------------------------------------ */

/* Release m for a condition wait; returns 0 or EPERM.  *depth receives
 * the recursion depth the wait must restore.  */
int fl_pt_mutex_release_for_wait(pthread_mutex_t *m, uint32_t *depth);
/* Take m back after the wait (0 or EOWNERDEAD/ENOTRECOVERABLE).  */
int fl_pt_mutex_reacquire(pthread_mutex_t *m, uint32_t depth);

#endif /* FASTLOCK_PTHREAD_INTERNAL_H */
