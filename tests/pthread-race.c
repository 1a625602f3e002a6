/* tests/pthread-race.c: a program for helgrind and drd running on the
 * drop-in.  "pthread-race clean" shares data correctly through every kind
 * of object the drop-in replaces (mutex, condition variable, rwlock,
 * spinlock, semaphore): the tools must report nothing.  "pthread-race
 * race" adds one unprotected increment in each thread: the tools must
 * report it.  Exits 2 if the lock functions are not the drop-in's.
 *
 * Before anything else, thread 0 takes a statically initialised rwlock
 * for the first time and the other threads take it after it, ordered by
 * a flag hidden from the tools: nothing the tools can see orders their
 * first uses, as when a program's threads happen to reach a lock one
 * after another.  (The drop-in's first use of such a lock once wrote a
 * word the others then read, and the tools reported that as a race
 * whenever the threads' first uses fell in this order.)  */
#define _GNU_SOURCE 1
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>

#if HAVE_VALGRIND_HELGRIND_H && HAVE_VALGRIND_DRD_H
# include <valgrind/helgrind.h>
# include <valgrind/drd.h>
/* drd's ANNOTATE_BENIGN_RACE_SIZED clashes with helgrind's: name its
 * request directly, as src/sys/annotate.h does.  */
# define HIDE(var)                                                             \
  do {                                                                         \
   VALGRIND_HG_DISABLE_CHECKING(&(var), sizeof(var));                          \
   VALGRIND_DO_CLIENT_REQUEST_STMT(VG_USERREQ__DRD_START_SUPPRESSION, &(var),  \
                                   sizeof(var), 0, 0, 0);                      \
  } while (0)
#else
# define HIDE(var) ((void)0)
#endif

#define THREADS 3
#define ROUNDS 200

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t rmutex = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_rwlock_t rwlock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_rwlock_t first_use = PTHREAD_RWLOCK_INITIALIZER;
static int first_used;
static pthread_spinlock_t spin;
static sem_t sem;

static long by_mutex, by_rmutex, by_rwlock, by_spin, by_sem, racy;
static int turn;
static int seed_race;

/* Thread 0 uses first_use first; the others wait for it on a flag the
 * tools do not see, then use it too.  */
static void take_first_use(int me)
{
  if (me != 0) {
    while (__atomic_load_n(&first_used, __ATOMIC_ACQUIRE) == 0)
      sched_yield();
  }
  pthread_rwlock_rdlock(&first_use);
  pthread_rwlock_unlock(&first_use);
  if (me == 0)
    __atomic_store_n(&first_used, 1, __ATOMIC_RELEASE);
}

static void *worker(void *p)
{
  int me = (int)(long)p, i;

  /* Before any lock: nothing orders the threads' increments.  */
  if (seed_race)
    racy++;
  take_first_use(me);

  for (i = 0; i < ROUNDS; i++) {
    pthread_mutex_lock(&mutex);
    by_mutex++;
    pthread_mutex_unlock(&mutex);

    pthread_mutex_lock(&rmutex);
    pthread_mutex_lock(&rmutex);
    by_rmutex++;
    pthread_mutex_unlock(&rmutex);
    pthread_mutex_unlock(&rmutex);

    if (i % 4 == 0) {
      pthread_rwlock_wrlock(&rwlock);
      by_rwlock++;
    } else {
      long seen;
      pthread_rwlock_rdlock(&rwlock);
      seen = by_rwlock;
      (void)seen;
    }
    pthread_rwlock_unlock(&rwlock);

    pthread_spin_lock(&spin);
    by_spin++;
    pthread_spin_unlock(&spin);

    sem_wait(&sem);
    by_sem++;
    sem_post(&sem);
  }
  /* Hand a turn around through the condition variable.  */
  pthread_mutex_lock(&mutex);
  while (turn != me)
    pthread_cond_wait(&cond, &mutex);
  turn++;
  pthread_cond_broadcast(&cond);
  pthread_mutex_unlock(&mutex);
  return NULL;
}

static int ours(void *fn)
{
  Dl_info info;
  return dladdr(fn, &info) != 0
         && strstr(info.dli_fname, "libfastlock-pthread") != NULL;
}

int main(int argc, char **argv)
{
  pthread_t t[THREADS];
  long i;

  seed_race = argc > 1 && strcmp(argv[1], "race") == 0;
  HIDE(first_used);
  if (!ours((void *)pthread_mutex_lock) || !ours((void *)sem_post)) {
    fprintf(stderr, "pthread-race: the lock functions are not the drop-in's\n");
    return 2;
  }
  pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
  sem_init(&sem, 0, 1);
  for (i = 0; i < THREADS; i++)
    pthread_create(&t[i], NULL, worker, (void *)i);
  for (i = 0; i < THREADS; i++)
    pthread_join(t[i], NULL);
  printf("%ld %ld %ld %ld %ld\n", by_mutex, by_rmutex, by_rwlock, by_spin,
         by_sem);
  return by_mutex == THREADS * ROUNDS && by_sem == THREADS * ROUNDS ? 0 : 1;
}
