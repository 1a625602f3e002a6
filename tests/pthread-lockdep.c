/* tests/pthread-lockdep.c: a program written against plain pthreads, for
 * tests/test-pthread-lockdep.sh to run on the drop-in with the lock-order
 * checker on (FASTLOCK_LOCKDEP=1, LD_PRELOAD).
 *
 * usage: pthread-lockdep ORDER KIND
 *   or:  pthread-lockdep ownerdead robust
 *   ORDER abba: one thread takes A then B, and after it has finished a
 *         second thread takes B then A (no deadlock happens);
 *         same: both take A then B;
 *         ownerdead: a thread dies holding the robust mutex A, and the
 *         main thread takes it (EOWNERDEAD), makes it consistent and
 *         unlocks it.
 *   KIND  the two locks: normal, errorcheck, recursive (each taken twice),
 *         robust, pi (handed to glibc), static (PTHREAD_MUTEX_INITIALIZER),
 *         rwlock (write, then read), rwstatic (the same, statically
 *         initialised with a glibc _NP kind), spin.
 * Each thread also makes a condition wait on A that times out and, with
 * the mutexes, a pthread_mutex_timedlock of a mutex the main thread holds
 * that times out: neither may leave anything behind in the checker.
 * Exits 0 when every call returned what it should.  */
#define _GNU_SOURCE 1
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MUTEX, RWLOCK, SPIN };

static int type;
static int twice;
static pthread_mutex_t ma, mb, held;
static pthread_mutex_t sa = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t sb = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t *pa = &ma, *pb = &mb;
static pthread_rwlock_t ra, rb;
static pthread_rwlock_t sra = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
static pthread_rwlock_t srb = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
static pthread_rwlock_t *pra = &ra, *prb = &rb;
static pthread_spinlock_t spa, spb;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;

static void must(int rc, int want, const char *what)
{
  if (rc != want) {
    fprintf(stderr, "pthread-lockdep: %s: %s\n", what, strerror(rc));
    exit(1);
  }
}

static void take(int which, int read)
{
  switch (type) {
    case MUTEX:
      must(pthread_mutex_lock(which ? pb : pa), 0, "pthread_mutex_lock");
      if (twice)
        must(pthread_mutex_lock(which ? pb : pa), 0,
             "pthread_mutex_lock again");
      break;
    case RWLOCK:
      must(read ? pthread_rwlock_rdlock(which ? prb : pra)
                : pthread_rwlock_wrlock(which ? prb : pra),
           0, "pthread_rwlock_*lock");
      break;
    default:
      must(pthread_spin_lock(which ? &spb : &spa), 0, "pthread_spin_lock");
  }
}

static void drop(int which)
{
  switch (type) {
    case MUTEX:
      if (twice)
        must(pthread_mutex_unlock(which ? pb : pa), 0,
             "pthread_mutex_unlock inner");
      must(pthread_mutex_unlock(which ? pb : pa), 0, "pthread_mutex_unlock");
      break;
    case RWLOCK:
      must(pthread_rwlock_unlock(which ? prb : pra), 0,
           "pthread_rwlock_unlock");
      break;
    default:
      must(pthread_spin_unlock(which ? &spb : &spa), 0, "pthread_spin_unlock");
  }
}

static void in_a_moment(struct timespec *ts)
{
  clock_gettime(CLOCK_REALTIME, ts);
  ts->tv_nsec += 1000000;
  if (ts->tv_nsec >= 1000000000) {
    ts->tv_sec++;
    ts->tv_nsec -= 1000000000;
  }
}

/* arg: the first lock to take (0: A, 1: B).  */
static void *worker(void *arg)
{
  int first = arg != NULL;
  struct timespec ts;

  take(first, 0);
  take(!first, 1);
  drop(!first);
  drop(first);
  if (type == MUTEX) {
    /* The mutex is released for the wait and taken again.  */
    must(pthread_mutex_lock(pa), 0, "pthread_mutex_lock for the wait");
    in_a_moment(&ts);
    must(pthread_cond_timedwait(&cond, pa, &ts), ETIMEDOUT,
         "pthread_cond_timedwait");
    must(pthread_mutex_unlock(pa), 0, "pthread_mutex_unlock after the wait");
    /* A timed wait that fails takes nothing.  */
    in_a_moment(&ts);
    must(pthread_mutex_timedlock(&held, &ts), ETIMEDOUT,
         "pthread_mutex_timedlock");
  }
  return NULL;
}

static void *die_holding(void *arg)
{
  must(pthread_mutex_lock(pa), 0, "pthread_mutex_lock, to die holding it");
  return arg;
}

static void run(int first)
{
  pthread_t t;

  must(pthread_create(&t, NULL, worker, first ? &t : NULL), 0,
       "pthread_create");
  must(pthread_join(t, NULL), 0, "pthread_join");
}

int main(int argc, char **argv)
{
  pthread_mutexattr_t attr;
  const char *kind;
  int abba;

  if (argc != 3
      || (strcmp(argv[1], "abba") != 0 && strcmp(argv[1], "same") != 0
          && strcmp(argv[1], "ownerdead") != 0)) {
    fprintf(stderr, "usage: pthread-lockdep abba|same|ownerdead KIND\n");
    return 2;
  }
  abba = strcmp(argv[1], "abba") == 0;
  kind = argv[2];
  must(pthread_mutexattr_init(&attr), 0, "pthread_mutexattr_init");
  if (strcmp(kind, "errorcheck") == 0) {
    must(pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK), 0,
         "settype");
  } else if (strcmp(kind, "recursive") == 0) {
    must(pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE), 0,
         "settype");
    twice = 1;
  } else if (strcmp(kind, "robust") == 0) {
    must(pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST), 0,
         "setrobust");
  } else if (strcmp(kind, "pi") == 0) {
    must(pthread_mutexattr_setprotocol(&attr, PTHREAD_PRIO_INHERIT), 0,
         "setprotocol");
  } else if (strcmp(kind, "static") == 0) {
    pa = &sa;
    pb = &sb;
  } else if (strcmp(kind, "rwlock") == 0) {
    type = RWLOCK;
  } else if (strcmp(kind, "rwstatic") == 0) {
    type = RWLOCK;
    pra = &sra;
    prb = &srb;
  } else if (strcmp(kind, "spin") == 0) {
    type = SPIN;
  } else if (strcmp(kind, "normal") != 0) {
    fprintf(stderr, "pthread-lockdep: unknown kind %s\n", kind);
    return 2;
  }
  /* Two call sites: two classes.  */
  must(pthread_mutex_init(&ma, &attr), 0, "pthread_mutex_init A");
  must(pthread_mutex_init(&mb, &attr), 0, "pthread_mutex_init B");
  must(pthread_mutex_init(&held, NULL), 0, "pthread_mutex_init held");
  must(pthread_rwlock_init(&ra, NULL), 0, "pthread_rwlock_init A");
  must(pthread_rwlock_init(&rb, NULL), 0, "pthread_rwlock_init B");
  must(pthread_spin_init(&spa, PTHREAD_PROCESS_PRIVATE), 0,
       "pthread_spin_init A");
  must(pthread_spin_init(&spb, PTHREAD_PROCESS_PRIVATE), 0,
       "pthread_spin_init B");

  if (strcmp(argv[1], "ownerdead") == 0) {
    pthread_t t;

    must(pthread_create(&t, NULL, die_holding, NULL), 0, "pthread_create");
    must(pthread_join(t, NULL), 0, "pthread_join");
    must(pthread_mutex_lock(pa), EOWNERDEAD,
         "pthread_mutex_lock of a dead owner's");
    must(pthread_mutex_consistent(pa), 0, "pthread_mutex_consistent");
    must(pthread_mutex_unlock(pa), 0, "pthread_mutex_unlock");
    return 0;
  }
  must(pthread_mutex_lock(&held), 0, "pthread_mutex_lock held");
  run(0);
  run(abba);
  must(pthread_mutex_unlock(&held), 0, "pthread_mutex_unlock held");

  must(pthread_mutex_destroy(&held), 0, "pthread_mutex_destroy held");
  must(pthread_mutex_destroy(&mb), 0, "pthread_mutex_destroy B");
  must(pthread_mutex_destroy(&ma), 0, "pthread_mutex_destroy A");
  must(pthread_mutexattr_destroy(&attr), 0, "pthread_mutexattr_destroy");
  return 0;
}
