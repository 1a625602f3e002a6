/* tests/test-pthread-nomalloc.c: the drop-in's lock paths never allocate.
 *
 * malloc's own locks may be the drop-in's (a program's malloc, or a
 * library's, calls pthread_mutex_lock), so a lock path that allocated
 * could recurse into itself.  This program interposes malloc, calloc,
 * realloc and aligned allocation, counts the calls a thread makes while
 * it uses every kind of object for the first time (static initializers,
 * objects made by init with attributes, robust and process-shared
 * mutexes, a condition wait that times out, semaphores, spinlocks), and
 * requires none; once more after 40 keys were created, since glibc's
 * thread-specific data allocates past its first 32 keys.  */
#define _GNU_SOURCE 1
#include "config.h"

#include "pthread-check.h"

#include <errno.h>
#include <malloc.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t n);
void *__libc_memalign(size_t align, size_t n);

/* Exported (the build hides symbols by default), so that they interpose
 * the C library's for every library in the process.  */
#define INTERPOSE __attribute__((visibility("default")))

/* volatile: the stores that open and close a window are kept.  */
static __thread volatile int counting;
static int allocations;

static void count(void)
{
  if (counting)
    __atomic_add_fetch(&allocations, 1, __ATOMIC_RELAXED);
}

INTERPOSE void *malloc(size_t n)
{
  count();
  return __libc_malloc(n);
}

INTERPOSE void *calloc(size_t n, size_t size)
{
  count();
  return __libc_calloc(n, size);
}

INTERPOSE void *realloc(void *p, size_t n)
{
  count();
  return __libc_realloc(p, n);
}

INTERPOSE void *memalign(size_t align, size_t n)
{
  count();
  return __libc_memalign(align, n);
}

struct objects {
  pthread_mutex_t normal, recursive, errorcheck, adaptive, robust, shared;
  pthread_rwlock_t rw, rw_writer;
  pthread_cond_t c;
  pthread_spinlock_t spin;
  sem_t sem;
};

/* The first thing that failed in the thread (Check's own asserts
 * allocate as they record where they are, so the thread checks by hand
 * and the test asserts after it).  */
static const char *failed;

#define EXPECT(call, want)                                                     \
 do {                                                                          \
  if ((call) != (want) && failed == NULL)                                      \
   failed = #call;                                                             \
 } while (0)

static void lock_pair(pthread_mutex_t *m)
{
  EXPECT(pthread_mutex_lock(m), 0);
  EXPECT(pthread_mutex_unlock(m), 0);
}

/* Every operation of a thread's first use, counted.  */
static void *first_use(void *p)
{
  struct objects *o = p;
  struct timespec d = pt_after_ms(CLOCK_REALTIME, 1);

  counting = 1;
  lock_pair(&o->normal);
  lock_pair(&o->recursive);
  lock_pair(&o->errorcheck);
  lock_pair(&o->adaptive);
  lock_pair(&o->robust);
  lock_pair(&o->shared);
  EXPECT(pthread_rwlock_rdlock(&o->rw), 0);
  EXPECT(pthread_rwlock_unlock(&o->rw), 0);
  EXPECT(pthread_rwlock_wrlock(&o->rw), 0);
  EXPECT(pthread_rwlock_unlock(&o->rw), 0);
  EXPECT(pthread_rwlock_rdlock(&o->rw_writer), 0);
  EXPECT(pthread_rwlock_unlock(&o->rw_writer), 0);
  EXPECT(pthread_mutex_lock(&o->normal), 0);
  EXPECT(pthread_cond_timedwait(&o->c, &o->normal, &d), ETIMEDOUT);
  EXPECT(pthread_mutex_unlock(&o->normal), 0);
  EXPECT(pthread_cond_signal(&o->c), 0);
  EXPECT(pthread_spin_lock(&o->spin), 0);
  EXPECT(pthread_spin_unlock(&o->spin), 0);
  EXPECT(sem_post(&o->sem), 0);
  EXPECT(sem_wait(&o->sem), 0);
  counting = 0;
  return NULL;
}

static void init_mutex(pthread_mutex_t *m, int robust, int pshared)
{
  pthread_mutexattr_t a;

  ck_assert_int_eq(pthread_mutexattr_init(&a), 0);
  ck_assert_int_eq(pthread_mutexattr_setrobust(&a, robust), 0);
  ck_assert_int_eq(pthread_mutexattr_setpshared(&a, pshared), 0);
  ck_assert_int_eq(pthread_mutex_init(m, &a), 0);
  ck_assert_int_eq(pthread_mutexattr_destroy(&a), 0);
}

/* _i: 1 to create 40 keys first.  */
START_TEST(first_use_in_a_thread_allocates_nothing)
{
  static struct objects o = {
    .normal = PTHREAD_MUTEX_INITIALIZER,
    .recursive = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP,
    .errorcheck = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP,
    .adaptive = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP,
    .rw = PTHREAD_RWLOCK_INITIALIZER,
    .rw_writer = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP,
    .c = PTHREAD_COND_INITIALIZER,
  };
  pthread_key_t keys[40];
  pthread_t t;
  int i;

  PT_ASSERT_OURS(pthread_mutex_lock);
  PT_ASSERT_OURS(pthread_rwlock_rdlock);
  PT_ASSERT_OURS(pthread_cond_timedwait);
  PT_ASSERT_OURS(sem_wait);
  if (_i)
    for (i = 0; i < 40; i++)
      ck_assert_int_eq(pthread_key_create(&keys[i], NULL), 0);
  init_mutex(&o.robust, PTHREAD_MUTEX_ROBUST, PTHREAD_PROCESS_PRIVATE);
  init_mutex(&o.shared, PTHREAD_MUTEX_STALLED, PTHREAD_PROCESS_SHARED);
  ck_assert_int_eq(pthread_spin_init(&o.spin, PTHREAD_PROCESS_PRIVATE), 0);
  ck_assert_int_eq(sem_init(&o.sem, 0, 0), 0);
  allocations = 0;
  failed = NULL;
  ck_assert_int_eq(pthread_create(&t, NULL, first_use, &o), 0);
  ck_assert_int_eq(pthread_join(t, NULL), 0);
  ck_assert_msg(failed == NULL, "%s failed", failed);
  ck_assert_int_eq(allocations, 0);
  /* The counter counts: an allocation in the window is seen.  */
  counting = 1;
  {
    void *volatile q = malloc(16); /* volatile: not optimised away */
    free(q);
  }
  counting = 0;
  ck_assert_int_eq(allocations, 1);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("pthread-nomalloc");
  TCase *tc = tcase_create("first use");

  tcase_set_tags(tc, FL_TAG_THREADS);
  tcase_add_loop_test(tc, first_use_in_a_thread_allocates_nothing, 0, 2);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  return fl_check_run(suite());
}
