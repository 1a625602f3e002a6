/* src/pthread/attrs.c: pthread_rwlockattr_*, and the mapping of glibc's
 * rwlock kinds onto the rwsem's modes.
 *
 *   default (no setkind_np; PTHREAD_RWLOCK_INITIALIZER)  fair (the rwsem's
 *       default: a writer waits only for the readers already in; readers
 *       arriving after a waiting writer queue behind it; phase-fair)
 *   PTHREAD_RWLOCK_PREFER_READER_NP, set explicitly  FL_RWSEM_PREFER_READER
 *       (glibc's default: writers may starve)
 *   PTHREAD_RWLOCK_PREFER_WRITER_NP  FL_RWSEM_PREFER_WRITER (glibc treats
 *       it as PREFER_READER; we give what the name says)
 *   PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP  FL_RWSEM_PREFER_WRITER
 * Under the fair and writer-preferring modes a thread that read-locks a
 * lock it already read-holds waits behind a queued writer (deadlock):
 * the man page says so.
 *
 * The mutex and condition-variable attribute objects stay glibc's.  */
#include "config.h"

#include "pthread/rwlock.h"

#include <errno.h>

static struct fl_prwlockattr *fl_pra(pthread_rwlockattr_t *a)
{
  return (struct fl_prwlockattr *)(void *)a;
}

unsigned fl_pt_rwlock_mode(int32_t kind)
{
  switch (kind) {
    case FL_PRWA_SET | PTHREAD_RWLOCK_PREFER_READER_NP:
      return FL_RWSEM_PREFER_READER;
    case PTHREAD_RWLOCK_PREFER_WRITER_NP:
    case FL_PRWA_SET | PTHREAD_RWLOCK_PREFER_WRITER_NP:
    case PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP:
    case FL_PRWA_SET | PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP:
      return FL_RWSEM_PREFER_WRITER;
    default:
      return 0;
  }
}

FL_PT_API int pthread_rwlockattr_init(pthread_rwlockattr_t *a)
{
  fl_pra(a)->kind = PTHREAD_RWLOCK_DEFAULT_NP;
  fl_pra(a)->pshared = PTHREAD_PROCESS_PRIVATE;
  return 0;
}

FL_PT_API int pthread_rwlockattr_destroy(pthread_rwlockattr_t *a)
{
  (void)a;
  return 0;
}

FL_PT_API int pthread_rwlockattr_getpshared(const pthread_rwlockattr_t *a,
                                            int *pshared)
{
  *pshared = ((const struct fl_prwlockattr *)(const void *)a)->pshared;
  return 0;
}

FL_PT_API int pthread_rwlockattr_setpshared(pthread_rwlockattr_t *a,
                                            int pshared)
{
  if (pshared != PTHREAD_PROCESS_PRIVATE && pshared != PTHREAD_PROCESS_SHARED)
    return EINVAL;
  fl_pra(a)->pshared = pshared;
  return 0;
}

FL_PT_API int pthread_rwlockattr_getkind_np(const pthread_rwlockattr_t *a,
                                            int *kind)
{
  *kind = ((const struct fl_prwlockattr *)(const void *)a)->kind & ~FL_PRWA_SET;
  return 0;
}

FL_PT_API int pthread_rwlockattr_setkind_np(pthread_rwlockattr_t *a, int kind)
{
  if (kind != PTHREAD_RWLOCK_PREFER_READER_NP
      && kind != PTHREAD_RWLOCK_PREFER_WRITER_NP
      && kind != PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP)
    return EINVAL;
  fl_pra(a)->kind = kind | FL_PRWA_SET;
  return 0;
}
