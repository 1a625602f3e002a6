/* stress/bench-peers.c: what a user would pick instead of fastlock, as
 * benchmark entries: glibc's pthread locks, Concurrency Kit's (when
 * configure found its headers; they are all inline, no -lck needed), and
 * counter baselines.  */
#include "config.h"

#include "bench-loops.h"

#include <errno.h>
#include <pthread.h>

/* Concurrency Kit's headers are configured for one architecture
 * (ck_md.h).  A cross build can find the build machine's: on a weakly
 * ordered target, headers configured for a TSO machine (x86) leave out
 * fences its locks need there, so they are not used.  */
#if HAVE_CK
# include <ck_md.h>
# if defined(CK_MD_TSO) && !(defined(__x86_64__) || defined(__i386__))
#  define BENCH_CK 0
#  define BENCH_NO_CK                                                          \
   "the Concurrency Kit headers found are configured for a TSO machine, "      \
   "not for this target"
# else
#  define BENCH_CK 1
#  include <ck_rwlock.h>
#  include <ck_spinlock.h>
# endif
#else
# define BENCH_CK 0
# define BENCH_NO_CK                                                           \
  "Concurrency Kit's headers were not found by configure (Debian: libck-dev)"
#endif

/* --- glibc pthread_rwlock: default kind (prefers readers) and
 * PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP.  */
static int glibc_rwlock_init(void *obj)
{
  return pthread_rwlock_init(obj, NULL);
}

int bench_rwlock_writer_init(bench_rwlock_init_fn *init, void *obj)
{
  pthread_rwlockattr_t a;
  int rc;

  pthread_rwlockattr_init(&a);
  rc = pthread_rwlockattr_setkind_np(
      &a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
  if (rc == 0)
    rc = init(obj, &a);
  pthread_rwlockattr_destroy(&a);
  return rc;
}

static int glibc_rwlock_writer_init(void *obj)
{
  return bench_rwlock_writer_init(pthread_rwlock_init, obj);
}

static void glibc_rwlock_destroy(void *obj)
{
  BENCH_OK(pthread_rwlock_destroy(obj));
}

BENCH_RWSEM_LOOPS(glibc_rwlock, pthread_rwlock_t, ,
                  BENCH_OK(pthread_rwlock_rdlock(obj)),
                  BENCH_OK(pthread_rwlock_unlock(obj)),
                  BENCH_OK(pthread_rwlock_wrlock(obj)),
                  BENCH_OK(pthread_rwlock_unlock(obj)))

/* --- glibc pthread_spin and pthread_mutex (default kind).  */
static int glibc_spin_init(void *obj)
{
  return pthread_spin_init(obj, PTHREAD_PROCESS_PRIVATE);
}

static void glibc_spin_destroy(void *obj)
{
  BENCH_OK(pthread_spin_destroy(obj));
}

BENCH_SPIN_LOOPS(glibc_spin, pthread_spinlock_t, ,
                 BENCH_OK(pthread_spin_lock(obj)),
                 BENCH_OK(pthread_spin_unlock(obj)))

static int glibc_mutex_init(void *obj)
{
  return pthread_mutex_init(obj, NULL);
}

static void glibc_mutex_destroy(void *obj)
{
  BENCH_OK(pthread_mutex_destroy(obj));
}

BENCH_SPIN_LOOPS(glibc_mutex, pthread_mutex_t, ,
                 BENCH_OK(pthread_mutex_lock(obj)),
                 BENCH_OK(pthread_mutex_unlock(obj)))

/* --- Counters.  What people write today: one shared atomic (the
 * reference), a mutex around a plain add; and the floor every per-thread
 * or per-CPU scheme is measured against, a plain increment of a
 * thread-local variable (the compiler barrier makes each one a load, add
 * and store, as in a real program where the increment is not hoisted out
 * of the loop).  */
struct mutex_counter {
  pthread_mutex_t mutex;
  int64_t value;
};

static int mutex_counter_init(void *obj)
{
  struct mutex_counter *c = obj;
  c->value = 0;
  return pthread_mutex_init(&c->mutex, NULL);
}

static void mutex_counter_destroy(void *obj)
{
  BENCH_OK(pthread_mutex_destroy(&((struct mutex_counter *)obj)->mutex));
}

static inline void mutex_add(struct mutex_counter *c, int64_t d)
{
  BENCH_OK(pthread_mutex_lock(&c->mutex));
  c->value += d;
  BENCH_OK(pthread_mutex_unlock(&c->mutex));
}

static inline int64_t mutex_read(struct mutex_counter *c)
{
  int64_t v;
  BENCH_OK(pthread_mutex_lock(&c->mutex));
  v = c->value;
  BENCH_OK(pthread_mutex_unlock(&c->mutex));
  return v;
}

BENCH_COUNTER_LOOPS(mutex_counter, struct mutex_counter, mutex_add(obj, 1),
                    mutex_read(obj), mutex_read(obj))

static int zero_init(void *obj)
{
  *(int64_t *)obj = 0;
  return 0;
}

static void nothing_to_destroy(void *obj)
{
  (void)obj;
}

/* 64-bit atomics are instructions only where the compiler says they are
 * lock-free; elsewhere (ppc32, mipsel) they would be libatomic calls
 * behind a lock, no baseline at all.  */
#define BENCH_ATOMIC64 (__GCC_ATOMIC_LLONG_LOCK_FREE == 2)

#if BENCH_ATOMIC64
BENCH_COUNTER_LOOPS(atomic_counter, int64_t,
                    __atomic_fetch_add(obj, 1, __ATOMIC_RELAXED),
                    __atomic_load_n(obj, __ATOMIC_RELAXED),
                    __atomic_load_n(obj, __ATOMIC_RELAXED))
#else
static const char *no_atomic64(void)
{
  return "64-bit atomic operations are not lock-free on this target";
}
#endif

static __thread int64_t tls_value;

#define TLS_INCREMENT                                                          \
 do {                                                                          \
  tls_value++;                                                                 \
  __asm__ __volatile__("" : : : "memory");                                     \
 } while (0)

/* No read or sum: nothing can add up the other threads' variables.  */
BENCH_TIMED_OPS(tls_counter_adder, int64_t, TLS_INCREMENT)
BENCH_OP_LOOP(tls_counter_add, int64_t, TLS_INCREMENT)

#if BENCH_CK
/* --- Concurrency Kit: its rwlock (writer-preferring, spinning) and its
 * fetch-and-store, ticket and MCS spinlocks.  */
static int ck_rwlock_bench_init(void *obj)
{
  ck_rwlock_init(obj);
  return 0;
}

BENCH_RWSEM_LOOPS(ck_rw, ck_rwlock_t, , ck_rwlock_read_lock(obj),
                  ck_rwlock_read_unlock(obj), ck_rwlock_write_lock(obj),
                  ck_rwlock_write_unlock(obj))

static int ck_fas_init(void *obj)
{
  ck_spinlock_fas_init(obj);
  return 0;
}

BENCH_SPIN_LOOPS(ck_fas, ck_spinlock_fas_t, , ck_spinlock_fas_lock(obj),
                 ck_spinlock_fas_unlock(obj))

static int ck_ticket_init(void *obj)
{
  ck_spinlock_ticket_init(obj);
  return 0;
}

BENCH_SPIN_LOOPS(ck_ticket, ck_spinlock_ticket_t, ,
                 ck_spinlock_ticket_lock(obj), ck_spinlock_ticket_unlock(obj))

static int ck_mcs_init(void *obj)
{
  ck_spinlock_mcs_init(obj);
  return 0;
}

/* Each thread queues its own node, on its stack for the whole loop.  */
BENCH_SPIN_LOOPS(ck_mcs, ck_spinlock_mcs_t, ck_spinlock_mcs_context_t node,
                 ck_spinlock_mcs_lock(obj, &node),
                 ck_spinlock_mcs_unlock(obj, &node))
#else
static const char *no_ck(void)
{
  return BENCH_NO_CK;
}
#endif

const struct bench_impl bench_peer_impls[] = {
  BENCH_RWSEM_ENTRY(glibc_rwlock, "glibc-rwlock", "glibc",
                    "pthread_rwlock_t, default kind (prefers readers)", 1, NULL,
                    pthread_rwlock_t, glibc_rwlock_init, glibc_rwlock_destroy)
      BENCH_RWSEM_ENTRY(glibc_rwlock, "glibc-rwlock-pw", "glibc",
                        "pthread_rwlock_t, PREFER_WRITER_NONRECURSIVE_NP", 0,
                        NULL, pthread_rwlock_t, glibc_rwlock_writer_init,
                        glibc_rwlock_destroy)
#if BENCH_CK
          BENCH_RWSEM_ENTRY(ck_rw, "ck-rwlock", "ck", "ck_rwlock_t", 0, NULL,
                            ck_rwlock_t, ck_rwlock_bench_init,
                            nothing_to_destroy)
#else
          BENCH_MISSING_ENTRY("ck-rwlock", "ck", "ck_rwlock_t", BENCH_RWSEM,
                              no_ck)
#endif
              BENCH_SPIN_ENTRY(
                  glibc_spin, "glibc-spin", "glibc", "pthread_spinlock_t", 1,
                  NULL, pthread_spinlock_t, glibc_spin_init, glibc_spin_destroy)
                  BENCH_SPIN_ENTRY(glibc_mutex, "glibc-mutex", "glibc",
                                   "pthread_mutex_t, default kind", 0, NULL,
                                   pthread_mutex_t, glibc_mutex_init,
                                   glibc_mutex_destroy)
#if BENCH_CK
                      BENCH_SPIN_ENTRY(ck_fas, "ck-fas", "ck",
                                       "ck_spinlock_fas_t (fetch-and-store)", 0,
                                       NULL, ck_spinlock_fas_t, ck_fas_init,
                                       nothing_to_destroy)
                          BENCH_SPIN_ENTRY(ck_ticket, "ck-ticket", "ck",
                                           "ck_spinlock_ticket_t", 0, NULL,
                                           ck_spinlock_ticket_t, ck_ticket_init,
                                           nothing_to_destroy)
                              BENCH_SPIN_ENTRY(ck_mcs, "ck-mcs", "ck",
                                               "ck_spinlock_mcs_t (MCS queue)",
                                               0, NULL, ck_spinlock_mcs_t,
                                               ck_mcs_init, nothing_to_destroy)
#else
                      BENCH_MISSING_ENTRY(
                          "ck-fas", "ck", "ck_spinlock_fas_t", BENCH_SPIN,
                          no_ck) BENCH_MISSING_ENTRY("ck-ticket", "ck",
                                                     "ck_spinlock_ticket_t",
                                                     BENCH_SPIN, no_ck)
                          BENCH_MISSING_ENTRY("ck-mcs", "ck",
                                              "ck_spinlock_mcs_t", BENCH_SPIN,
                                              no_ck)
#endif
#if BENCH_ATOMIC64
                                  BENCH_COUNTER_ENTRY(
                                      atomic_counter, "atomic", "baseline",
                                      "one shared int64_t, __atomic_fetch_add",
                                      1, NULL, int64_t, zero_init,
                                      nothing_to_destroy, NULL)
#else
                              BENCH_MISSING_ENTRY(
                                  "atomic", "baseline",
                                  "one shared int64_t, __atomic_fetch_add",
                                  BENCH_COUNTER, no_atomic64)
#endif
                                      BENCH_COUNTER_ENTRY(
                                          mutex_counter, "glibc-mutex-counter",
                                          "glibc",
                                          "int64_t behind a pthread_mutex_t", 0,
                                          NULL, struct mutex_counter,
                                          mutex_counter_init,
                                          mutex_counter_destroy, NULL){
                                          "tls-plain",
                                          "baseline",
                                          "plain increment of a thread-local int64_t "
                                          "(the floor; cannot be read as a total)",
                                          BENCH_COUNTER,
                                          0,
                                          sizeof(int64_t),
                                          NULL,
                                          zero_init,
                                          nothing_to_destroy,
                                          { tls_counter_adder, NULL },
                                          { tls_counter_add, NULL, NULL },
                                          NULL },
  { .name = NULL },
};
