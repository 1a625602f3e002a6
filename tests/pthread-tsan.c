/* tests/pthread-tsan.c [race]: a pthread program for
 * tests/test-pthread-tsan.sh, compiled there with clang -fsanitize=thread
 * and run with the drop-in preloaded.
 *
 * Two threads share counters through every kind of object the drop-in
 * replaces: a mutex and a condition variable (a token passed back and
 * forth, each side waiting for it in turn), an rwlock, a spinlock and a
 * semaphore.
 * TSan must report nothing.  With "race", each thread first makes one
 * unguarded increment, on the line marked SEEDED RACE, before anything
 * could order the threads: TSan must report it there.
 *
 * It first prints which library each function TSan will call is in
 * (what dlsym(RTLD_NEXT) finds from the program, as TSan's interceptors
 * look them up): the script checks that the rwlock, spinlock and
 * semaphore are the drop-in's.  Exits 0 unless a count is wrong.  */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>

#define ROUNDS 50

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t spin;
static sem_t sem;
static int ready, handed, by_rwlock, by_spin, by_sem, racy, race;

static void where(const char *name)
{
  Dl_info info;
  void *f = dlsym(RTLD_NEXT, name);

  printf("%s: %s\n", name,
         f != NULL && dladdr(f, &info) != 0 ? info.dli_fname : "?");
}

/* Each thread's share of the rwlock, spinlock and semaphore work.  */
static void guarded_rounds(void)
{
  int r;

  for (r = 0; r < ROUNDS; r++) {
    pthread_rwlock_wrlock(&rw);
    by_rwlock++;
    pthread_rwlock_unlock(&rw);
    pthread_rwlock_rdlock(&rw);
    (void)by_rwlock;
    pthread_rwlock_unlock(&rw);
    pthread_spin_lock(&spin);
    by_spin++;
    pthread_spin_unlock(&spin);
    sem_wait(&sem);
    by_sem++;
    sem_post(&sem);
  }
}

static void *signaller(void *unused)
{
  int r;

  if (race)
    racy++; /* SEEDED RACE */
  guarded_rounds();
  for (r = 0; r < ROUNDS; r++) {
    pthread_mutex_lock(&m);
    while (ready)
      pthread_cond_wait(&c, &m);
    handed++;
    ready = 1;
    pthread_cond_broadcast(&c);
    pthread_mutex_unlock(&m);
  }
  return unused;
}

int main(int argc, char **argv)
{
  pthread_t t;
  int r;

  race = argc > 1 && strcmp(argv[1], "race") == 0;
  where("pthread_mutex_lock");
  where("pthread_rwlock_wrlock");
  where("pthread_spin_lock");
  where("sem_post");
  fflush(stdout);
  pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
  sem_init(&sem, 0, 1);
  pthread_create(&t, NULL, signaller, NULL);
  if (race)
    racy++;
  guarded_rounds();
  for (r = 0; r < ROUNDS; r++) {
    pthread_mutex_lock(&m);
    while (!ready)
      pthread_cond_wait(&c, &m);
    ready = 0;
    handed++;
    pthread_cond_signal(&c);
    pthread_mutex_unlock(&m);
  }
  pthread_join(t, NULL);
  printf("%d %d %d %d\n", handed, by_rwlock, by_spin, by_sem);
  return handed == 2 * ROUNDS && by_rwlock == 2 * ROUNDS
                 && by_spin == 2 * ROUNDS && by_sem == 2 * ROUNDS
             ? 0
             : 1;
}
