/* src/pthread/rwlock.c: pthread_rwlock_* on fastlock's rwsem (layout and
 * kinds: rwlock.h, attrs.c).  Under helgrind or drd the rwsem takes its
 * own watched paths (fl_tools_active), which tell the tool what the lock
 * does: nothing is annotated here, or the tool would see each lock taken
 * twice.  */
#include "config.h"

#include "lockdep/lockdep.h"
#include "pthread/rwlock.h"
#include "rwsem/rwsem-internal.h"
#include "sys/cpu.h"

#include <errno.h>
#include <string.h>

static struct fl_prwlock *fl_prw(pthread_rwlock_t *l)
{
  return (struct fl_prwlock *)(void *)l;
}

/* How many drop-in rwlocks this thread holds for writing.  While it is 0
 * an unlock can only be a read unlock (or an error up_read reports), and
 * takes the read path without looking at the lock first: under
 * contention, a load of the lock's line just before the release's locked
 * instruction can cost the line a second trip between CPUs (the rwsem
 * table's rwsem-rw, README).  Only this thread reads or writes it.  A
 * child of fork inherits the forking thread's count, and with it the
 * write locks that thread held (FORK in fl_rwsem(3)).  */
static __thread uint32_t write_locks_held
    __attribute__((tls_model("initial-exec")));

static int counted_write(int rc)
{
  if (rc == 0)
    write_locks_held++;
  return rc;
}

#if FL_PRW_HAS_KIND
/* First use of a statically initialised lock: give the rwsem the kind
 * the _NP initializer wrote.  One thread sets the mode while the others
 * wait for it, all before any of them touches the rwsem, so the mode is
 * never changed under a user (fl_rwsem_init's rule).
 *
 * Under helgrind or drd the words of the lock are hidden from the tool
 * before the first store to them: READY is published by a release store
 * the tools cannot see as one, so a thread that then reads it on its way
 * to the rwsem would be reported as racing with the thread that set it
 * (a false report that depended on which thread came first).  */
static void apply_static_kind(struct fl_prwlock *pl)
{
  unsigned mode;

  if (fl_pt_under_vg())
    fl_pt_vg_hide(pl, sizeof *pl);
  mode = fl_pt_rwlock_mode((int32_t)fl_load_relaxed((int32_t *)&pl->np_kind));

  if (mode == 0) {
    /* The zero rwsem already is the default mode.  */
    fl_store_release(&pl->ready, FL_PRW_READY);
    return;
  }
  if (fl_atomic_cmpxchg_acquire(&pl->ready, 0, FL_PRW_SETTING) == 0) {
    fl_rwsem_init(&pl->sem, mode);
    /* fl_rwsem_init gave it the class of its call site, here for every
     * such lock: the checker is to see a statically initialised lock, a
     * class by itself (made at its first acquisition).  */
    fl_lockdep_destroy(&pl->sem);
    /* Release: the mode is set before anyone sees READY.  */
    fl_store_release(&pl->ready, FL_PRW_READY);
    return;
  }
  while (fl_load_acquire(&pl->ready) != FL_PRW_READY)
    fl_cpu_relax();
}
#endif

/* Whether this CPU has PREFETCHW (fl_cpu_has_prefetch_write), found as
 * the library loads, before the program's threads exist.  A lock taken
 * in an earlier constructor goes without the hint: it is only a hint.  */
static int prefetch_ok;

__attribute__((constructor)) static void probe_prefetch(void)
{
  prefetch_ok = fl_cpu_has_prefetch_write();
}

/* Every entry point comes here first, and goes on to read the lock's
 * words (READY, the bias word) before its locked instruction on the count
 * word: so the line is asked for, for writing, before those reads
 * (fl_cpu_prefetch_write; measured on x86-64 in README's drop-in
 * section).  */
static inline fl_rwsem_t *sem_of(pthread_rwlock_t *l)
{
  struct fl_prwlock *pl = fl_prw(l);

  if (FL_CPU_PREFETCH_WRITE && prefetch_ok)
    fl_cpu_prefetch_write(pl);
#if FL_PRW_HAS_KIND
  /* Acquire: pairs with the release of READY.  */
  if (__builtin_expect(fl_load_acquire(&pl->ready) != FL_PRW_READY, 0))
    apply_static_kind(pl);
#endif
  return &pl->sem;
}

FL_PT_API int pthread_rwlock_init(pthread_rwlock_t *l,
                                  const pthread_rwlockattr_t *a)
{
  struct fl_prwlock *pl = fl_prw(l);
  int32_t kind = PTHREAD_RWLOCK_DEFAULT_NP;
  unsigned flags = 0;
  int rc;

  if (a != NULL) {
    const struct fl_prwlockattr *pa =
        (const struct fl_prwlockattr *)(const void *)a;
    kind = pa->kind;
    if (pa->pshared == PTHREAD_PROCESS_SHARED)
      flags |= FL_PSHARED;
  }
  memset(l, 0, sizeof *l);
  rc = fl_rwsem_init(&pl->sem, flags | fl_pt_rwlock_mode(kind));
  if (rc != 0)
    return rc;
  /* fl_rwsem_init gave the lock the class of its call site, which is
   * here for every rwlock: the checker's class is our caller's.  */
  fl_lockdep_init(&pl->sem, "pthread_rwlock_t", 0, __builtin_return_address(0));
#if FL_PRW_HAS_KIND
  pl->np_kind = (uint32_t)kind & ~(uint32_t)FL_PRWA_SET;
  pl->ready = FL_PRW_READY;
#endif
  return 0;
}

FL_PT_API int pthread_rwlock_destroy(pthread_rwlock_t *l)
{
  return fl_rwsem_destroy(sem_of(l));
}

FL_PT_API int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
  return fl_rwsem_down_read(sem_of(l));
}

FL_PT_API int pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
  return fl_rwsem_down_read_trylock(sem_of(l));
}

FL_PT_API int pthread_rwlock_timedrdlock(pthread_rwlock_t *l,
                                         const struct timespec *abstime)
{
  return fl_rwsem_down_read_timed(sem_of(l), CLOCK_REALTIME, abstime);
}

FL_PT_API int pthread_rwlock_clockrdlock(pthread_rwlock_t *l, clockid_t clock,
                                         const struct timespec *abstime)
{
  return fl_rwsem_down_read_timed(sem_of(l), clock, abstime);
}

FL_PT_API int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
  return counted_write(fl_rwsem_down_write(sem_of(l)));
}

FL_PT_API int pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
  return counted_write(fl_rwsem_down_write_trylock(sem_of(l)));
}

FL_PT_API int pthread_rwlock_timedwrlock(pthread_rwlock_t *l,
                                         const struct timespec *abstime)
{
  return counted_write(
      fl_rwsem_down_write_timed(sem_of(l), CLOCK_REALTIME, abstime));
}

FL_PT_API int pthread_rwlock_clockwrlock(pthread_rwlock_t *l, clockid_t clock,
                                         const struct timespec *abstime)
{
  return counted_write(fl_rwsem_down_write_timed(sem_of(l), clock, abstime));
}

/* Read or write unlock?  A thread that holds no drop-in rwlock for
 * writing can only be read-unlocking (write_locks_held, above): no look at
 * the lock, no call.  Otherwise, without WRITER in the count word nobody
 * holds the lock for writing, so this is a read unlock (fl_rwsem_up_read
 * says EPERM if we hold nothing).  With WRITER, ask whose it is: a reader
 * can see it too (a writer took WRITER and waits for the READ_BIAS table
 * to drain).  Relaxed: a thread that holds the write lock set WRITER
 * itself, and nobody else clears it while it holds.  */
FL_PT_API int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
  fl_rwsem_t *s = sem_of(l);

  if (write_locks_held == 0 || !(fl_load_relaxed(&s->count) & FL_RWSEM_WRITER)
      || !fl_rwsem_write_held_by_me(s))
    return fl_rwsem_up_read(s);
  write_locks_held--;
  return fl_rwsem_up_write(s);
}
