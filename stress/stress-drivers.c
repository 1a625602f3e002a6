/* stress/stress-drivers.c: the implementations fastlock-stress can
 * torture: fastlock's primitives, their glibc peers, and the broken
 * negative controls.  */
#include "config.h"

#include "stress.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>

#include "sys/cpu.h"

const char *const stress_strategy_names[STRESS_NSTRATEGIES] = {
  "auto", "shared", "percpu-atomic", "perthread-sigsafe", "percpu-rseq",
};

/* --- glibc.  pthread_rwlock_t has no fair kind: its default prefers
 * readers, and the parser refuses --mode fair for it.  */
static int pt_rw_init(void *obj, int mode, int read_bias, int pshared)
{
  pthread_rwlockattr_t a;
  int rc;

  (void)read_bias;
  pthread_rwlockattr_init(&a);
  rc = pthread_rwlockattr_setkind_np(
      &a, mode == STRESS_PREFER_WRITER
              ? PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP
              : PTHREAD_RWLOCK_PREFER_READER_NP);
  if (rc == 0 && pshared)
    rc = pthread_rwlockattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
  if (rc == 0)
    rc = pthread_rwlock_init(obj, &a);
  pthread_rwlockattr_destroy(&a);
  return rc;
}

static int pt_rw_destroy(void *obj)
{
  return pthread_rwlock_destroy(obj);
}
static int pt_rdlock(void *obj)
{
  return pthread_rwlock_rdlock(obj);
}
static int pt_wrlock(void *obj)
{
  return pthread_rwlock_wrlock(obj);
}
static int pt_tryrdlock(void *obj)
{
  return pthread_rwlock_tryrdlock(obj);
}
static int pt_trywrlock(void *obj)
{
  return pthread_rwlock_trywrlock(obj);
}
static int pt_rw_unlock(void *obj)
{
  return pthread_rwlock_unlock(obj);
}

static int pt_timedrdlock(void *obj, clockid_t clock,
                          const struct timespec *abstime)
{
  return pthread_rwlock_clockrdlock(obj, clock, abstime);
}

static int pt_timedwrlock(void *obj, clockid_t clock,
                          const struct timespec *abstime)
{
  return pthread_rwlock_clockwrlock(obj, clock, abstime);
}

static int pt_spin_init(void *obj, int mode, int read_bias, int pshared)
{
  (void)mode;
  (void)read_bias;
  return pthread_spin_init(obj, pshared ? PTHREAD_PROCESS_SHARED
                                        : PTHREAD_PROCESS_PRIVATE);
}

static int pt_spin_destroy(void *obj)
{
  return pthread_spin_destroy(obj);
}
static int pt_spin_lock(void *obj)
{
  return pthread_spin_lock(obj);
}
static int pt_spin_trylock(void *obj)
{
  return pthread_spin_trylock(obj);
}
static int pt_spin_unlock(void *obj)
{
  return pthread_spin_unlock(obj);
}

/* --- The negative control: a lock that excludes nobody.  */
static int broken_init(void *obj, int mode, int read_bias, int pshared)
{
  (void)obj;
  (void)mode;
  (void)read_bias;
  (void)pshared;
  return 0;
}

static int broken_op(void *obj)
{
  (void)obj;
  return 0;
}

static int broken_timed(void *obj, clockid_t clock,
                        const struct timespec *abstime)
{
  (void)obj;
  (void)clock;
  (void)abstime;
  return 0;
}

#include "rwsem/rwsem-internal.h"

static int fl_rw_init(void *obj, int mode, int read_bias, int pshared)
{
  unsigned flags = mode == STRESS_PREFER_READER   ? FL_RWSEM_PREFER_READER
                   : mode == STRESS_PREFER_WRITER ? FL_RWSEM_PREFER_WRITER
                                                  : 0u;
  return fl_rwsem_init(obj, flags | (read_bias ? FL_RWSEM_READ_BIAS : 0u)
                                | (pshared ? FL_PSHARED : 0u)
                                | (pshared > 1 ? FL_ROBUST : 0u));
}

static int fl_rw_destroy(void *obj)
{
  return fl_rwsem_destroy(obj);
}
static int fl_down_read(void *obj)
{
  return fl_rwsem_down_read(obj);
}
static int fl_down_write(void *obj)
{
  return fl_rwsem_down_write(obj);
}
static int fl_down_read_try(void *obj)
{
  return fl_rwsem_down_read_trylock(obj);
}
static int fl_down_write_try(void *obj)
{
  return fl_rwsem_down_write_trylock(obj);
}
static int fl_up_read(void *obj)
{
  return fl_rwsem_up_read(obj);
}
static int fl_up_write(void *obj)
{
  return fl_rwsem_up_write(obj);
}
static int fl_downgrade(void *obj)
{
  return fl_rwsem_downgrade_write(obj);
}

/* The invariants of the count word (src/rwsem/rwsem.c), as the
 * library's own tortures check them.  */
static int fl_rw_check(void *obj)
{
  const fl_rwsem_t *s = obj;
  int32_t c = __atomic_load_n(&s->count, __ATOMIC_RELAXED);

  return fl_rwsem_check_invariants(s, c);
}

/* The read locks the count word holds (FL_PSHARED: no READ_BIAS table). */
static int fl_rw_read_locks(void *obj)
{
  const fl_rwsem_t *s = obj;

  return (int)FL_RWSEM_READERS(__atomic_load_n(&s->count, __ATOMIC_RELAXED));
}

static int fl_rw_reader_died(void *obj)
{
  return fl_rwsem_reader_died(obj);
}

/* The negative control of --kill-ms (--impl leaky, not listed): a dead
 * reader's lock is never released, as if the dead had left a count that
 * nobody can take off.  */
static int leaky_reader_died(void *obj)
{
  (void)obj;
  return 0;
}

static int fl_rw_consistent(void *obj)
{
  return fl_rwsem_consistent(obj);
}

/* Every state a dead writer leaves in the owner word names it and is
 * found (src/rwsem/robust.c), unless its thread ID is a live thread's
 * again and the stamps do not tell the two apart (STAMPS: none recorded,
 * none to be had, or the same one, once in 63).  */
static int fl_rw_holder_unfindable(void *obj)
{
  const fl_rwsem_t *s = obj;
  int32_t o = __atomic_load_n(&s->owner, __ATOMIC_RELAXED);
  int32_t tid = o & FL_RWSEM_OWNER_TID, stamp = o & FL_RWSEM_OWNER_STAMP, now;

  if (!(__atomic_load_n(&s->count, __ATOMIC_RELAXED) & FL_RWSEM_WRITER)
      || tid == 0 || kill((pid_t)tid, 0) != 0)
    return 0;
  now = fl_rwsem_stamp_of(tid);
  return stamp == 0 || now == 0 || now == stamp;
}

static int fl_down_read_timed(void *obj, clockid_t clock,
                              const struct timespec *abstime)
{
  return fl_rwsem_down_read_timed(obj, clock, abstime);
}

static int fl_down_write_timed(void *obj, clockid_t clock,
                               const struct timespec *abstime)
{
  return fl_rwsem_down_write_timed(obj, clock, abstime);
}

#include <fastlock/spinlock.h>

/* X(short name, type, enum stress_spin_type, process-shared allowed) */
#define FL_STRESS_SPINLOCKS(X)                                                 \
 X(spin, fl_spinlock_t, STRESS_TAS, 1)                                         \
 X(ticket, fl_ticketlock_t, STRESS_TICKET, 1)                                  \
 X(qspin, fl_qspinlock_t, STRESS_QUEUED, 0)

#define FL_STRESS_SPIN_ADAPTERS(s, T, type, pshared_ok)                        \
 static int st_##s##_init(void *obj, int mode, int read_bias, int pshared)     \
 {                                                                             \
  (void)mode;                                                                  \
  (void)read_bias;                                                             \
  return fl_##s##_init(obj, pshared ? FL_PSHARED : 0u);                        \
 }                                                                             \
 static int st_##s##_destroy(void *obj)                                        \
 {                                                                             \
  return fl_##s##_destroy(obj);                                                \
 }                                                                             \
 static int st_##s##_lock(void *obj)                                           \
 {                                                                             \
  return fl_##s##_lock(obj);                                                   \
 }                                                                             \
 static int st_##s##_trylock(void *obj)                                        \
 {                                                                             \
  return fl_##s##_trylock(obj);                                                \
 }                                                                             \
 static int st_##s##_unlock(void *obj)                                         \
 {                                                                             \
  return fl_##s##_unlock(obj);                                                 \
 }
FL_STRESS_SPINLOCKS(FL_STRESS_SPIN_ADAPTERS)

#define FL_STRESS_SPIN_ENTRY(s, T, type, pshared_ok)                           \
 { "fastlock",                                                                 \
   STRESS_SPIN,                                                                \
   type,                                                                       \
   #T,                                                                         \
   sizeof(T),                                                                  \
   pshared_ok,                                                                 \
   st_##s##_init,                                                              \
   st_##s##_destroy,                                                           \
   { NULL, st_##s##_lock },                                                    \
   { NULL, st_##s##_trylock },                                                 \
   { NULL, NULL },                                                             \
   { NULL, st_##s##_unlock },                                                  \
   NULL,                                                                       \
   NULL,                                                                       \
   NULL,                                                                       \
   NULL,                                                                       \
   NULL,                                                                       \
   NULL },

/* fastlock's rwsem, and the negative control of --kill-ms.  */
#define FL_STRESS_RWSEM(impl, what, reader_died)                               \
 {                                                                             \
  impl, STRESS_RWSEM, -1, what, sizeof(fl_rwsem_t), 1, fl_rw_init,             \
      fl_rw_destroy, { fl_down_read, fl_down_write },                          \
      { fl_down_read_try, fl_down_write_try },                                 \
      { fl_down_read_timed, fl_down_write_timed },                             \
      { fl_up_read, fl_up_write }, fl_downgrade, fl_rw_check,                  \
      fl_rw_read_locks, reader_died, fl_rw_consistent, fl_rw_holder_unfindable \
 }

static const struct stress_lock_ops locks[] = {
  FL_STRESS_RWSEM("fastlock", "fl_rwsem_t", fl_rw_reader_died),
  FL_STRESS_RWSEM("leaky", "fl_rwsem_t whose dead readers' locks stay",
                  leaky_reader_died),
  FL_STRESS_SPINLOCKS(FL_STRESS_SPIN_ENTRY){ "pthread",
                                             STRESS_RWSEM,
                                             -1,
                                             "pthread_rwlock_t",
                                             sizeof(pthread_rwlock_t),
                                             1,
                                             pt_rw_init,
                                             pt_rw_destroy,
                                             { pt_rdlock, pt_wrlock },
                                             { pt_tryrdlock, pt_trywrlock },
                                             { pt_timedrdlock, pt_timedwrlock },
                                             { pt_rw_unlock, pt_rw_unlock },
                                             NULL,
                                             NULL,
                                             NULL,
                                             NULL,
                                             NULL,
                                             NULL },
  { "pthread",
    STRESS_SPIN,
    -1,
    "pthread_spinlock_t",
    sizeof(pthread_spinlock_t),
    1,
    pt_spin_init,
    pt_spin_destroy,
    { NULL, pt_spin_lock },
    { NULL, pt_spin_trylock },
    { NULL, NULL },
    { NULL, pt_spin_unlock },
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL },
  { "broken",
    STRESS_RWSEM,
    -1,
    "a lock that excludes nobody",
    4,
    1,
    broken_init,
    broken_op,
    { broken_op, broken_op },
    { broken_op, broken_op },
    { broken_timed, broken_timed },
    { broken_op, broken_op },
    broken_op,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL },
  { "broken",
    STRESS_SPIN,
    -1,
    "a lock that excludes nobody",
    4,
    1,
    broken_init,
    broken_op,
    { NULL, broken_op },
    { NULL, broken_op },
    { NULL, NULL },
    { NULL, broken_op },
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL },
};

const struct stress_lock_ops *stress_find_lock(enum stress_prim prim,
                                               const char *impl, int type)
{
  size_t i;

  for (i = 0; i < sizeof locks / sizeof locks[0]; i++)
    if (locks[i].prim == prim && strcmp(locks[i].impl, impl) == 0
        && (locks[i].type < 0 || locks[i].type == type))
      return &locks[i];
  return NULL;
}

/* --- Counters.  */
#include <fastlock/counter.h>

static int flc_init(void *obj, int strategy)
{
  return fl_counter_init(obj, strategy);
}
static int flc_destroy(void *obj)
{
  return fl_counter_destroy(obj);
}
static void flc_add(void *obj, int64_t d)
{
  (void)fl_counter_add(obj, d);
}
static int64_t flc_read(void *obj)
{
  return fl_counter_read(obj);
}
static int64_t flc_sum(void *obj)
{
  return fl_counter_sum(obj);
}

static const char *flc_strategy(void *obj)
{
  return fl_counter_strategy_name(fl_counter_strategy(obj));
}

/* One int64_t, where 64-bit atomics are instructions (the compiler says
 * so); elsewhere they are libatomic calls behind a lock, which is neither
 * a baseline nor async-signal-safe.  */
#define STRESS_ATOMIC64 (__GCC_ATOMIC_LLONG_LOCK_FREE == 2)

static int plain_init(void *obj, int strategy)
{
  (void)strategy;
  *(int64_t *)obj = 0;
  return 0;
}

static int plain_destroy(void *obj)
{
  (void)obj;
  return 0;
}

#if STRESS_ATOMIC64
static void atomic_add(void *obj, int64_t d)
{
  __atomic_fetch_add((int64_t *)obj, d, __ATOMIC_RELAXED);
}

static int64_t atomic_read(void *obj)
{
  return __atomic_load_n((int64_t *)obj, __ATOMIC_RELAXED);
}

static int64_t atomic_sum(void *obj)
{
  return __atomic_load_n((int64_t *)obj, __ATOMIC_SEQ_CST);
}
#endif

/* The negative control: a load and a store with a pause between them, so
 * that concurrent adds and signal handlers lose updates.  Every 64th add
 * yields the CPU in the pause: on a loaded machine, or under an emulator
 * that runs the threads one after another, a spin alone may never
 * overlap another thread's add, and the control would pass.  */
static void broken_add(void *obj, int64_t d)
{
  static __thread unsigned calls;
  volatile int64_t *v = obj;
  int64_t old = *v;
  int i;

  for (i = 0; i < 8; i++)
    fl_cpu_relax();
  if ((++calls & 63) == 0)
    sched_yield();
  *v = old + d;
}

static int64_t broken_read(void *obj)
{
  return *(volatile int64_t *)obj;
}

static const struct stress_counter_ops counters[] = {
  { "fastlock", "fl_counter_t", sizeof(fl_counter_t), flc_init, flc_destroy,
    flc_add, flc_read, flc_sum, flc_strategy },
#if STRESS_ATOMIC64
  { "atomic", "one int64_t, __atomic_fetch_add", sizeof(int64_t), plain_init,
    plain_destroy, atomic_add, atomic_read, atomic_sum, NULL },
#endif
  { "broken", "an int64_t added without atomicity", sizeof(int64_t), plain_init,
    plain_destroy, broken_add, broken_read, broken_read, NULL },
};

const struct stress_counter_ops *stress_find_counter(const char *impl,
                                                     const char **why)
{
  size_t i;

  *why = NULL;
  for (i = 0; i < sizeof counters / sizeof counters[0]; i++)
    if (strcmp(counters[i].impl, impl) == 0)
      return &counters[i];
  if (strcmp(impl, "atomic") == 0)
    *why = "64-bit atomic operations are not lock-free on this target";
  return NULL;
}

const char *stress_impl_names(enum stress_prim prim)
{
  return prim == STRESS_COUNTER ? "fastlock atomic" : "fastlock pthread";
}
