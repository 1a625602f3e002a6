/* tests/test-pthread-rwlock.c: pthread_rwlock_* and pthread_rwlockattr_*
 * of the drop-in: the errors, the kinds and their mapping onto the
 * rwsem's modes, the static initializers, contention, pshared.  */
#define _GNU_SOURCE 1
#include "config.h"

#include "pthread-check.h"

#include <fastlock/rwsem.h>

#include <errno.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

START_TEST(every_function_is_the_drop_in)
{
  PT_ASSERT_OURS(pthread_rwlock_init);
  PT_ASSERT_OURS(pthread_rwlock_destroy);
  PT_ASSERT_OURS(pthread_rwlock_rdlock);
  PT_ASSERT_OURS(pthread_rwlock_tryrdlock);
  PT_ASSERT_OURS(pthread_rwlock_timedrdlock);
  PT_ASSERT_OURS(pthread_rwlock_clockrdlock);
  PT_ASSERT_OURS(pthread_rwlock_wrlock);
  PT_ASSERT_OURS(pthread_rwlock_trywrlock);
  PT_ASSERT_OURS(pthread_rwlock_timedwrlock);
  PT_ASSERT_OURS(pthread_rwlock_clockwrlock);
  PT_ASSERT_OURS(pthread_rwlock_unlock);
  PT_ASSERT_OURS(pthread_rwlockattr_setkind_np);
  PT_ASSERT_OURS(pthread_rwlockattr_setpshared);
}
END_TEST

/* Take p for writing and release it: the trylock's error, or the
 * unlock's result (so a write lock the unlock does not release shows).  */
static void *trywr(void *p)
{
  int rc = pthread_rwlock_trywrlock(p);
  if (rc == 0)
    rc = pthread_rwlock_unlock(p);
  return (void *)(intptr_t)rc;
}

static void *tryrd(void *p)
{
  int rc = pthread_rwlock_tryrdlock(p);
  if (rc == 0)
    pthread_rwlock_unlock(p);
  return (void *)(intptr_t)rc;
}

static void *timedwr_both_clocks(void *p)
{
  struct timespec d = pt_after_ms(CLOCK_REALTIME, 30);
  int rc = pthread_rwlock_timedwrlock(p, &d);
  if (rc != ETIMEDOUT)
    return (void *)(intptr_t)rc;
  d = pt_after_ms(CLOCK_MONOTONIC, 30);
  return (void *)(intptr_t)pthread_rwlock_clockwrlock(p, CLOCK_MONOTONIC, &d);
}

static void *timedrd_both_clocks(void *p)
{
  struct timespec d = pt_after_ms(CLOCK_REALTIME, 30);
  int rc = pthread_rwlock_timedrdlock(p, &d);
  if (rc != ETIMEDOUT)
    return (void *)(intptr_t)rc;
  d = pt_after_ms(CLOCK_MONOTONIC, 30);
  return (void *)(intptr_t)pthread_rwlock_clockrdlock(p, CLOCK_MONOTONIC, &d);
}

START_TEST(readers_share_writers_exclude)
{
  pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;

  ck_assert_int_eq(pthread_rwlock_rdlock(&l), 0);
  ck_assert_int_eq(pt_in_thread(tryrd, &l), 0);
  ck_assert_int_eq(pt_in_thread(trywr, &l), EBUSY);
  ck_assert_int_eq(pt_in_thread(timedwr_both_clocks, &l), ETIMEDOUT);
  ck_assert_int_eq(pthread_rwlock_destroy(&l), EBUSY);
  ck_assert_int_eq(pthread_rwlock_unlock(&l), 0);
  ck_assert_int_eq(pthread_rwlock_wrlock(&l), 0);
  ck_assert_int_eq(pt_in_thread(tryrd, &l), EBUSY);
  ck_assert_int_eq(pt_in_thread(timedrd_both_clocks, &l), ETIMEDOUT);
  ck_assert_int_eq(pthread_rwlock_unlock(&l), 0);
  ck_assert_int_eq(pt_in_thread(trywr, &l), 0);
  ck_assert_int_eq(pthread_rwlock_destroy(&l), 0);
}
END_TEST

static void *unlock_other(void *p)
{
  return (void *)(intptr_t)pthread_rwlock_unlock(p);
}

START_TEST(errors)
{
  pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
  pthread_rwlockattr_t a;
  struct timespec bad = { 0, 1000000000L },
                  ok = pt_after_ms(CLOCK_REALTIME, 10);
  int kind;

  ck_assert_int_eq(pthread_rwlock_unlock(&l), EPERM);
  ck_assert_int_eq(pthread_rwlock_wrlock(&l), 0);
  ck_assert_int_eq(pthread_rwlock_wrlock(&l), EDEADLK);
  ck_assert_int_eq(pthread_rwlock_rdlock(&l), EDEADLK);
  ck_assert_int_eq(pthread_rwlock_trywrlock(&l), EBUSY);
  ck_assert_int_eq(pt_in_thread(unlock_other, &l), EPERM);
  ck_assert_int_eq(pthread_rwlock_unlock(&l), 0);
  ck_assert_int_eq(pthread_rwlock_timedwrlock(&l, &bad), EINVAL);
  ck_assert_int_eq(pthread_rwlock_timedrdlock(&l, &bad), EINVAL);
  ck_assert_int_eq(
      pthread_rwlock_clockrdlock(&l, CLOCK_PROCESS_CPUTIME_ID, &ok), EINVAL);
  ck_assert_int_eq(
      pthread_rwlock_clockwrlock(&l, CLOCK_PROCESS_CPUTIME_ID, &ok), EINVAL);

  ck_assert_int_eq(pthread_rwlockattr_init(&a), 0);
  ck_assert_int_eq(pthread_rwlockattr_setkind_np(&a, 42), EINVAL);
  ck_assert_int_eq(pthread_rwlockattr_setpshared(&a, 42), EINVAL);
  ck_assert_int_eq(pthread_rwlockattr_getkind_np(&a, &kind), 0);
  ck_assert_int_eq(kind, PTHREAD_RWLOCK_DEFAULT_NP);
  ck_assert_int_eq(pthread_rwlockattr_setkind_np(
                       &a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP),
                   0);
  ck_assert_int_eq(pthread_rwlockattr_getkind_np(&a, &kind), 0);
  ck_assert_int_eq(kind, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
  ck_assert_int_eq(pthread_rwlockattr_destroy(&a), 0);
}
END_TEST

/* Write-lock a with the call numbered how, read-lock and release b in
 * between, release a; each release must be the one the thread made, so
 * that another thread can then take either lock for writing.  */
static void write_around_a_read(pthread_rwlock_t *a, pthread_rwlock_t *b,
                                int how)
{
  struct timespec d = pt_after_ms(CLOCK_MONOTONIC, 1000);
  struct timespec r = pt_after_ms(CLOCK_REALTIME, 1000);
  int rc = how == 0   ? pthread_rwlock_wrlock(a)
           : how == 1 ? pthread_rwlock_trywrlock(a)
           : how == 2 ? pthread_rwlock_timedwrlock(a, &r)
                      : pthread_rwlock_clockwrlock(a, CLOCK_MONOTONIC, &d);

  ck_assert_int_eq(rc, 0);
  ck_assert_int_eq(pthread_rwlock_rdlock(b), 0);
  ck_assert_int_eq(pthread_rwlock_unlock(b), 0);
  ck_assert_int_eq(pt_in_thread(trywr, b), 0);
  ck_assert_int_eq(pt_in_thread(trywr, a), EBUSY);
  ck_assert_int_eq(pthread_rwlock_unlock(a), 0);
  ck_assert_int_eq(pt_in_thread(trywr, a), 0);
}

/* pthread_rwlock_unlock tells a read unlock from a write unlock by what
 * the thread holds (rwlock.c counts its write locks): after each of the
 * four write-acquiring calls, with a read lock on another lock taken and
 * released inside, in either order, and in a child of fork (the
 * pthread_atfork idiom: the write lock held across fork is released in
 * parent and child).  */
START_TEST(unlock_tells_read_from_write)
{
  pthread_rwlock_t a = PTHREAD_RWLOCK_INITIALIZER,
                   b = PTHREAD_RWLOCK_INITIALIZER;
  pid_t pid;
  int how, status;

  for (how = 0; how < 4; how++) {
    write_around_a_read(&a, &b, how);
    write_around_a_read(&b, &a, how);
  }
  ck_assert_int_eq(pthread_rwlock_rdlock(&b), 0);
  ck_assert_int_eq(pthread_rwlock_wrlock(&a), 0);
  ck_assert_int_eq(pthread_rwlock_unlock(&a), 0);
  ck_assert_int_eq(pthread_rwlock_unlock(&b), 0);
  ck_assert_int_eq(pthread_rwlock_unlock(&b), EPERM);
  ck_assert_int_eq(pt_in_thread(trywr, &a), 0);
  ck_assert_int_eq(pt_in_thread(trywr, &b), 0);

  ck_assert_int_eq(pthread_rwlock_wrlock(&a), 0);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0)
    _exit(pthread_rwlock_unlock(&a) != 0 || pthread_rwlock_trywrlock(&a) != 0
          || pthread_rwlock_unlock(&a) != 0);
  ck_assert_int_eq(pthread_rwlock_unlock(&a), 0);
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ck_assert_int_eq(pt_in_thread(trywr, &a), 0);
}
END_TEST

/* EAGAIN: the rwsem's reader limit.  */
START_TEST(too_many_readers_is_eagain)
{
  pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
  long i;
  int rc = 0;

  for (i = 0; i <= FL_RWSEM_READERS_MAX && rc == 0; i++)
    rc = pthread_rwlock_tryrdlock(&l);
  ck_assert_int_eq(rc, EAGAIN);
  ck_assert_int_eq(i, FL_RWSEM_READERS_MAX + 1);
  ck_assert_int_eq(pthread_rwlock_rdlock(&l), EAGAIN);
}
END_TEST

/* Each kind, given by attribute or by the _NP static initializer, gives
 * the rwsem the mode attrs.c documents.  */
static unsigned mode_of(pthread_rwlock_t *l)
{
  /* The first operation applies a static initializer's kind.  */
  ck_assert_int_eq(pthread_rwlock_rdlock(l), 0);
  ck_assert_int_eq(pthread_rwlock_unlock(l), 0);
  return (unsigned)((fl_rwsem_t *)(void *)l)->mode
         & (FL_RWSEM_PREFER_READER | FL_RWSEM_PREFER_WRITER | FL_PSHARED);
}

START_TEST(kinds_map_to_rwsem_modes)
{
  static const struct {
    int kind;
    unsigned mode;
  } map[] = {
    { PTHREAD_RWLOCK_PREFER_READER_NP, FL_RWSEM_PREFER_READER },
    { PTHREAD_RWLOCK_PREFER_WRITER_NP, FL_RWSEM_PREFER_WRITER },
    { PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP, FL_RWSEM_PREFER_WRITER },
  };
  pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
  pthread_rwlockattr_t a;
  size_t i;

  ck_assert_uint_eq(mode_of(&l), 0);
  ck_assert_int_eq(pthread_rwlock_init(&l, NULL), 0);
  ck_assert_uint_eq(mode_of(&l), 0);
  pthread_rwlockattr_init(&a);
  ck_assert_int_eq(pthread_rwlock_init(&l, &a), 0);
  ck_assert_uint_eq(mode_of(&l), 0);
  for (i = 0; i < sizeof map / sizeof map[0]; i++) {
    ck_assert_int_eq(pthread_rwlockattr_setkind_np(&a, map[i].kind), 0);
    ck_assert_int_eq(pthread_rwlock_init(&l, &a), 0);
    ck_assert_uint_eq(mode_of(&l), map[i].mode);
  }
  ck_assert_int_eq(pthread_rwlockattr_setpshared(&a, PTHREAD_PROCESS_SHARED),
                   0);
  ck_assert_int_eq(pthread_rwlock_init(&l, &a), 0);
  ck_assert_uint_eq(mode_of(&l), FL_RWSEM_PREFER_WRITER | FL_PSHARED);
}
END_TEST

#if __SIZEOF_POINTER__ == 8
START_TEST(writer_nonrecursive_initializer_prefers_writers)
{
  pthread_rwlock_t l = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
  ck_assert_uint_eq(mode_of(&l), FL_RWSEM_PREFER_WRITER);
}
END_TEST
#endif

/* Contention: readers check that no writer is inside, writers that
 * nobody is.  */
struct rw_torture {
  pthread_rwlock_t *l;
  int *readers, *writers, *violations;
  long n;
  int writer;
};

static void *torture(void *p)
{
  struct rw_torture *t = p;
  long i;
  for (i = 0; i < t->n; i++) {
    if (t->writer) {
      ck_assert_int_eq(pthread_rwlock_wrlock(t->l), 0);
      if (__atomic_add_fetch(t->writers, 1, __ATOMIC_SEQ_CST) != 1
          || __atomic_load_n(t->readers, __ATOMIC_SEQ_CST) != 0)
        __atomic_add_fetch(t->violations, 1, __ATOMIC_SEQ_CST);
      __atomic_sub_fetch(t->writers, 1, __ATOMIC_SEQ_CST);
    } else {
      ck_assert_int_eq(pthread_rwlock_rdlock(t->l), 0);
      __atomic_add_fetch(t->readers, 1, __ATOMIC_SEQ_CST);
      if (__atomic_load_n(t->writers, __ATOMIC_SEQ_CST) != 0)
        __atomic_add_fetch(t->violations, 1, __ATOMIC_SEQ_CST);
      __atomic_sub_fetch(t->readers, 1, __ATOMIC_SEQ_CST);
    }
    ck_assert_int_eq(pthread_rwlock_unlock(t->l), 0);
  }
  return NULL;
}

START_TEST(contention_keeps_exclusion)
{
  pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
  int readers = 0, writers = 0, violations = 0, i;
  struct rw_torture t[4];

  for (i = 0; i < 4; i++)
    t[i] = (struct rw_torture){
      &l, &readers, &writers, &violations, fl_test_iterations(20000), i < 2
    };
  fl_test_threads(4, torture, t, sizeof t[0]);
  ck_assert_int_eq(violations, 0);
}
END_TEST

struct shared_rw {
  pthread_rwlock_t l;
  long counter, n;
};

static int add_shared(struct shared_rw *s)
{
  long i;
  for (i = 0; i < s->n; i++) {
    if (pthread_rwlock_wrlock(&s->l) != 0)
      return 1;
    s->counter++;
    pthread_rwlock_unlock(&s->l);
    if (pthread_rwlock_rdlock(&s->l) != 0)
      return 2;
    pthread_rwlock_unlock(&s->l);
  }
  return 0;
}

START_TEST(pshared_between_processes)
{
  struct shared_rw *s = pt_shared(sizeof *s);
  pthread_rwlockattr_t a;
  pid_t pid;
  int status;

  pthread_rwlockattr_init(&a);
  pthread_rwlockattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
  ck_assert_int_eq(pthread_rwlock_init(&s->l, &a), 0);
  s->n = fl_test_iterations(20000);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0)
    _exit(add_shared(s));
  ck_assert_int_eq(add_shared(s), 0);
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ck_assert_int_eq(s->counter, 2 * s->n);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("pthread-rwlock");
  TCase *tc = tcase_create("api");
  TCase *th = tcase_create("threads");

  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, every_function_is_the_drop_in);
  tcase_add_test(tc, readers_share_writers_exclude);
  tcase_add_test(tc, errors);
  tcase_add_test(tc, unlock_tells_read_from_write);
  tcase_add_test(tc, too_many_readers_is_eagain);
  tcase_add_test(tc, kinds_map_to_rwsem_modes);
#if __SIZEOF_POINTER__ == 8
  tcase_add_test(tc, writer_nonrecursive_initializer_prefers_writers);
#endif
  suite_add_tcase(s, tc);
  tcase_set_tags(th, FL_TAG_THREADS);
  tcase_set_timeout(th, 120);
  tcase_add_test(th, contention_keeps_exclusion);
  tcase_add_test(th, pshared_between_processes);
  suite_add_tcase(s, th);
  return s;
}

int main(void)
{
  return fl_check_run(suite());
}
