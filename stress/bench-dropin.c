/* stress/bench-dropin.c: the pthread drop-in (libfastlock-pthread) as
 * fastlock-bench entries, beside glibc's pthread_rwlock_t and
 * pthread_mutex_t in the same tables: the rwsem table through
 * pthread_rwlock_* as a program under fastlock-run runs it, and the
 * spinlock tests through pthread_mutex_*.
 *
 * This program's own pthread_* calls bind to glibc, so the drop-in is
 * opened beside it (dropin-load.h) and called through its function
 * table: one indirect call per operation, where glibc's entries make one
 * call through the PLT.  An entry is unavailable, and says why, when the
 * library cannot be found.  */
#include "config.h"

#include "bench-loops.h"
#include "dropin-load.h"

#include <errno.h>

static const struct pthread_fns *fns;

static const char *dropin_unavailable(void)
{
  const char *why = NULL;

  fns = dropin_load(&why);
  return fns == NULL ? why : NULL;
}

/* The default kind (the drop-in's fair mode), and
 * PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP (its prefer-writer mode),
 * as glibc-rwlock and glibc-rwlock-pw are.  */
static int dropin_rwlock_init(void *obj)
{
  return fns->rw_init(obj, NULL);
}

/* The attribute object is glibc's: the drop-in reads it as glibc lays it
 * out (src/pthread/attrs.c).  */
static int dropin_rwlock_writer_init(void *obj)
{
  return bench_rwlock_writer_init(fns->rw_init, obj);
}

static void dropin_rwlock_destroy(void *obj)
{
  BENCH_OK(fns->rw_destroy(obj));
}

BENCH_RWSEM_LOOPS(dropin_rwlock, pthread_rwlock_t, ,
                  BENCH_OK(fns->rw_rdlock(obj)), BENCH_OK(fns->rw_unlock(obj)),
                  BENCH_OK(fns->rw_wrlock(obj)), BENCH_OK(fns->rw_unlock(obj)))

static int dropin_mutex_init(void *obj)
{
  return fns->mutex_init(obj, NULL);
}

static void dropin_mutex_destroy(void *obj)
{
  BENCH_OK(fns->mutex_destroy(obj));
}

BENCH_SPIN_LOOPS(dropin_mutex, pthread_mutex_t, ,
                 BENCH_OK(fns->mutex_lock(obj)),
                 BENCH_OK(fns->mutex_unlock(obj)))

const struct bench_impl bench_dropin_impls[] = {
  BENCH_RWSEM_ENTRY(dropin_rwlock, "dropin-rwlock", "dropin",
                    "libfastlock-pthread's pthread_rwlock_t, default kind "
                    "(fair)",
                    0, dropin_unavailable, pthread_rwlock_t, dropin_rwlock_init,
                    dropin_rwlock_destroy)
      BENCH_RWSEM_ENTRY(dropin_rwlock, "dropin-rwlock-pw", "dropin",
                        "libfastlock-pthread's pthread_rwlock_t, "
                        "PREFER_WRITER_NONRECURSIVE_NP",
                        0, dropin_unavailable, pthread_rwlock_t,
                        dropin_rwlock_writer_init, dropin_rwlock_destroy)
          BENCH_SPIN_ENTRY(
              dropin_mutex, "dropin-mutex", "dropin",
              "libfastlock-pthread's pthread_mutex_t, default kind", 0,
              dropin_unavailable, pthread_mutex_t, dropin_mutex_init,
              dropin_mutex_destroy){ .name = NULL },
};
