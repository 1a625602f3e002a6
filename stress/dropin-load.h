/* stress/dropin-load.h: the pthread drop-in (libfastlock-pthread), loaded
 * beside glibc into a benchmark that links glibc's own locks, so that the
 * two run the same workload in one process.
 *
 * The library is opened with dlopen(RTLD_LOCAL): its pthread_* and sem_*
 * definitions then interpose nothing, and each is reached only through
 * the table below.  */
#ifndef FASTLOCK_STRESS_DROPIN_LOAD_H
#define FASTLOCK_STRESS_DROPIN_LOAD_H

#include <pthread.h>
#include <semaphore.h>

/* The functions the benchmarks call, glibc's or the drop-in's.  */
struct pthread_fns {
  int (*mutex_init)(pthread_mutex_t *, const pthread_mutexattr_t *);
  int (*mutex_destroy)(pthread_mutex_t *);
  int (*mutex_lock)(pthread_mutex_t *);
  int (*mutex_unlock)(pthread_mutex_t *);
  int (*cond_init)(pthread_cond_t *, const pthread_condattr_t *);
  int (*cond_wait)(pthread_cond_t *, pthread_mutex_t *);
  int (*cond_signal)(pthread_cond_t *);
  int (*sem_init)(sem_t *, int, unsigned);
  int (*sem_wait)(sem_t *);
  int (*sem_post)(sem_t *);
  int (*rw_init)(pthread_rwlock_t *, const pthread_rwlockattr_t *);
  int (*rw_destroy)(pthread_rwlock_t *);
  int (*rw_rdlock)(pthread_rwlock_t *);
  int (*rw_wrlock)(pthread_rwlock_t *);
  int (*rw_unlock)(pthread_rwlock_t *);
};

/* The drop-in's functions, loaded on the first call (later calls return
 * the same table), or NULL with *why saying what failed.  Where it looks,
 * first to last: the file named by $FASTLOCK_PTHREAD_LIB; .libs/ beside
 * the running program (a build tree); the directory the library is
 * installed in; the dynamic linker's search path.  */
const struct pthread_fns *dropin_load(const char **why);

/* Where dropin_load found the library, once it has ("" before).  */
const char *dropin_path(void);

#endif /* FASTLOCK_STRESS_DROPIN_LOAD_H */
