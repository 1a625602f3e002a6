/* tests/test-pthread-mutex.c: pthread_mutex_* of the drop-in, every kind,
 * every error, static initializers, process-shared and robust mutexes
 * (with a real kill -9), and the kinds handed to glibc.  */
#define _GNU_SOURCE 1
#include "config.h"

#include "pthread-check.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const int kinds[] = {
  PTHREAD_MUTEX_NORMAL,
  PTHREAD_MUTEX_ERRORCHECK,
  PTHREAD_MUTEX_RECURSIVE,
  PTHREAD_MUTEX_ADAPTIVE_NP,
};

static void init_kind(pthread_mutex_t *m, int kind, int pshared, int robust)
{
  pthread_mutexattr_t a;
  ck_assert_int_eq(pthread_mutexattr_init(&a), 0);
  ck_assert_int_eq(pthread_mutexattr_settype(&a, kind), 0);
  ck_assert_int_eq(pthread_mutexattr_setpshared(&a, pshared), 0);
  ck_assert_int_eq(pthread_mutexattr_setrobust(&a, robust), 0);
  ck_assert_int_eq(pthread_mutex_init(m, &a), 0);
  pthread_mutexattr_destroy(&a);
}

START_TEST(every_function_is_the_drop_in)
{
  PT_ASSERT_OURS(pthread_mutex_init);
  PT_ASSERT_OURS(pthread_mutex_destroy);
  PT_ASSERT_OURS(pthread_mutex_lock);
  PT_ASSERT_OURS(pthread_mutex_trylock);
  PT_ASSERT_OURS(pthread_mutex_timedlock);
  PT_ASSERT_OURS(pthread_mutex_clocklock);
  PT_ASSERT_OURS(pthread_mutex_unlock);
  PT_ASSERT_OURS(pthread_mutex_consistent);
}
END_TEST

static void *trylock_in_thread(void *p)
{
  int rc = pthread_mutex_trylock(p);
  if (rc == 0)
    pthread_mutex_unlock(p);
  return (void *)(intptr_t)rc;
}

static void *unlock_in_thread(void *p)
{
  return (void *)(intptr_t)pthread_mutex_unlock(p);
}

static void *timedlock_in_thread(void *p)
{
  struct timespec d = pt_after_ms(CLOCK_REALTIME, 50);
  return (void *)(intptr_t)pthread_mutex_timedlock(p, &d);
}

static void *clocklock_mono_in_thread(void *p)
{
  struct timespec d = pt_after_ms(CLOCK_MONOTONIC, 50);
  return (void *)(intptr_t)pthread_mutex_clocklock(p, CLOCK_MONOTONIC, &d);
}

/* What every kind shares: lock, trylock from another thread is EBUSY,
 * timed locks time out on both clocks, destroy of a held mutex is EBUSY,
 * and after unlock everything succeeds.  */
START_TEST(every_kind_locks_and_excludes)
{
  pthread_mutex_t m;
  init_kind(&m, kinds[_i], PTHREAD_PROCESS_PRIVATE, PTHREAD_MUTEX_STALLED);
  ck_assert_int_eq(pthread_mutex_lock(&m), 0);
  ck_assert_int_eq(pt_in_thread(trylock_in_thread, &m), EBUSY);
  ck_assert_int_eq(pt_in_thread(timedlock_in_thread, &m), ETIMEDOUT);
  ck_assert_int_eq(pt_in_thread(clocklock_mono_in_thread, &m), ETIMEDOUT);
  ck_assert_int_eq(pthread_mutex_destroy(&m), EBUSY);
  ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
  ck_assert_int_eq(pt_in_thread(trylock_in_thread, &m), 0);
  ck_assert_int_eq(pthread_mutex_trylock(&m), 0);
  ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
  ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
}
END_TEST

START_TEST(errorcheck_reports_misuse)
{
  pthread_mutex_t m;
  init_kind(&m, PTHREAD_MUTEX_ERRORCHECK, PTHREAD_PROCESS_PRIVATE,
            PTHREAD_MUTEX_STALLED);
  ck_assert_int_eq(pthread_mutex_unlock(&m), EPERM);
  ck_assert_int_eq(pthread_mutex_lock(&m), 0);
  ck_assert_int_eq(pthread_mutex_lock(&m), EDEADLK);
  ck_assert_int_eq(pthread_mutex_trylock(&m), EBUSY);
  ck_assert_int_eq(pt_in_thread(unlock_in_thread, &m), EPERM);
  ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
  ck_assert_int_eq(pthread_mutex_unlock(&m), EPERM);
}
END_TEST

START_TEST(recursive_counts_and_overflows)
{
  pthread_mutex_t m;
  init_kind(&m, PTHREAD_MUTEX_RECURSIVE, PTHREAD_PROCESS_PRIVATE,
            PTHREAD_MUTEX_STALLED);
  ck_assert_int_eq(pthread_mutex_lock(&m), 0);
  ck_assert_int_eq(pthread_mutex_lock(&m), 0);
  ck_assert_int_eq(pthread_mutex_trylock(&m), 0);
  ck_assert_int_eq(pt_in_thread(unlock_in_thread, &m), EPERM);
  ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
  ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
  ck_assert_int_eq(pt_in_thread(trylock_in_thread, &m), EBUSY);
  ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
  ck_assert_int_eq(pt_in_thread(trylock_in_thread, &m), 0);
  ck_assert_int_eq(pthread_mutex_unlock(&m), EPERM);
  /* The recursion count lives in glibc's __count: the last step fails. */
  ck_assert_int_eq(pthread_mutex_lock(&m), 0);
  m.__data.__count = UINT32_MAX;
  ck_assert_int_eq(pthread_mutex_lock(&m), EAGAIN);
  m.__data.__count = 0;
  ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
}
END_TEST

START_TEST(bad_arguments_are_einval)
{
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  struct timespec bad = { 0, 1000000000L };
  struct timespec ok = pt_after_ms(CLOCK_REALTIME, 10);

  ck_assert_int_eq(pthread_mutex_clocklock(&m, CLOCK_PROCESS_CPUTIME_ID, &ok),
                   EINVAL);
  ck_assert_int_eq(pthread_mutex_lock(&m), 0);
  /* A bad timeout matters once the caller would wait.  */
  ck_assert_int_eq(pt_in_thread(timedlock_in_thread, &m), ETIMEDOUT);
  ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
  ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
  /* A destroyed mutex is refused, as by glibc.  */
  ck_assert_int_eq(pthread_mutex_lock(&m), EINVAL);
  ck_assert_int_eq(pthread_mutex_consistent(&m), EINVAL);
  pthread_mutex_init(&m, NULL);
  ck_assert_int_eq(pthread_mutex_consistent(&m), EINVAL);
  ck_assert_int_eq(pthread_mutex_lock(&m), 0);
  ck_assert_int_eq(pthread_mutex_timedlock(&m, &bad), EINVAL);
  ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
}
END_TEST

START_TEST(static_initializers_need_no_init)
{
  pthread_mutex_t normal = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_t rec = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
  pthread_mutex_t err = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
  pthread_mutex_t adaptive = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;

  ck_assert_int_eq(pthread_mutex_lock(&normal), 0);
  ck_assert_int_eq(pthread_mutex_trylock(&normal), EBUSY);
  ck_assert_int_eq(pthread_mutex_unlock(&normal), 0);
  ck_assert_int_eq(pthread_mutex_lock(&rec), 0);
  ck_assert_int_eq(pthread_mutex_lock(&rec), 0);
  ck_assert_int_eq(pthread_mutex_unlock(&rec), 0);
  ck_assert_int_eq(pthread_mutex_unlock(&rec), 0);
  ck_assert_int_eq(pthread_mutex_unlock(&rec), EPERM);
  ck_assert_int_eq(pthread_mutex_lock(&err), 0);
  ck_assert_int_eq(pthread_mutex_lock(&err), EDEADLK);
  ck_assert_int_eq(pthread_mutex_unlock(&err), 0);
  ck_assert_int_eq(pthread_mutex_lock(&adaptive), 0);
  ck_assert_int_eq(pt_in_thread(trylock_in_thread, &adaptive), EBUSY);
  ck_assert_int_eq(pthread_mutex_unlock(&adaptive), 0);
}
END_TEST

/* Contention: threads add to a plain counter under the mutex; a lost
 * update shows in the total.  */
struct counting {
  pthread_mutex_t *m;
  long *counter;
  long n;
};

static void *count_under_lock(void *p)
{
  struct counting *c = p;
  long i;
  for (i = 0; i < c->n; i++) {
    if (i % 3 == 0) {
      struct timespec d = pt_after_ms(CLOCK_MONOTONIC, 10000);
      ck_assert_int_eq(pthread_mutex_clocklock(c->m, CLOCK_MONOTONIC, &d), 0);
    } else if (i % 3 == 1) {
      while (pthread_mutex_trylock(c->m) != 0)
        ;
    } else {
      ck_assert_int_eq(pthread_mutex_lock(c->m), 0);
    }
    (*c->counter)++;
    ck_assert_int_eq(pthread_mutex_unlock(c->m), 0);
  }
  return NULL;
}

START_TEST(contention_loses_no_update)
{
  pthread_mutex_t m;
  long counter = 0, n = fl_test_iterations(50000);
  struct counting c[4];
  int i;

  init_kind(&m, kinds[_i], PTHREAD_PROCESS_PRIVATE, PTHREAD_MUTEX_STALLED);
  for (i = 0; i < 4; i++)
    c[i] = (struct counting){ &m, &counter, n };
  fl_test_threads(4, count_under_lock, c, sizeof c[0]);
  ck_assert_int_eq(counter, 4 * n);
}
END_TEST

/* Process-shared: two processes add under one mutex in a shared page. */
struct shared_count {
  pthread_mutex_t m;
  long counter;
  long n;
};

static int count_in_process(void *p)
{
  struct shared_count *s = p;
  long i;
  for (i = 0; i < s->n; i++) {
    if (pthread_mutex_lock(&s->m) != 0)
      return 1;
    s->counter++;
    if (pthread_mutex_unlock(&s->m) != 0)
      return 2;
  }
  return 0;
}

START_TEST(pshared_works_across_processes)
{
  struct shared_count *s = pt_shared(sizeof *s);
  pid_t pid;
  int status;

  init_kind(&s->m, kinds[_i], PTHREAD_PROCESS_SHARED, PTHREAD_MUTEX_STALLED);
  s->n = fl_test_iterations(50000);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0)
    _exit(count_in_process(s));
  ck_assert_int_eq(count_in_process(s), 0);
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ck_assert_int_eq(s->counter, 2 * s->n);
}
END_TEST

/* Robust: a holder killed with SIGKILL; the next owner gets EOWNERDEAD.  */
struct robust_page {
  pthread_mutex_t m;
  int ready;
};

static void kill_holder(struct robust_page *r)
{
  pid_t pid = fork();
  int status;

  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    if (pthread_mutex_lock(&r->m) != 0)
      _exit(1);
    __atomic_store_n(&r->ready, 1, __ATOMIC_RELEASE);
    for (;;)
      pause();
  }
  while (__atomic_load_n(&r->ready, __ATOMIC_ACQUIRE) == 0)
    usleep(1000);
  ck_assert_int_eq(kill(pid, SIGKILL), 0);
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFSIGNALED(status));
}

START_TEST(robust_owner_killed_gives_eownerdead)
{
  struct robust_page *r = pt_shared(sizeof *r);

  init_kind(&r->m, kinds[_i], PTHREAD_PROCESS_SHARED, PTHREAD_MUTEX_ROBUST);
  kill_holder(r);
  ck_assert_int_eq(pthread_mutex_lock(&r->m), EOWNERDEAD);
  ck_assert_int_eq(pthread_mutex_consistent(&r->m), 0);
  ck_assert_int_eq(pthread_mutex_consistent(&r->m), EINVAL);
  ck_assert_int_eq(pthread_mutex_unlock(&r->m), 0);
  ck_assert_int_eq(pthread_mutex_lock(&r->m), 0);
  ck_assert_int_eq(pthread_mutex_unlock(&r->m), 0);
}
END_TEST

START_TEST(robust_not_made_consistent_is_unrecoverable)
{
  struct robust_page *r = pt_shared(sizeof *r);
  struct timespec d = pt_after_ms(CLOCK_REALTIME, 1000);

  init_kind(&r->m, PTHREAD_MUTEX_NORMAL, PTHREAD_PROCESS_SHARED,
            PTHREAD_MUTEX_ROBUST);
  kill_holder(r);
  ck_assert_int_eq(pthread_mutex_timedlock(&r->m, &d), EOWNERDEAD);
  ck_assert_int_eq(pthread_mutex_unlock(&r->m), 0);
  ck_assert_int_eq(pthread_mutex_lock(&r->m), ENOTRECOVERABLE);
  ck_assert_int_eq(pthread_mutex_trylock(&r->m), ENOTRECOVERABLE);
  ck_assert_int_eq(pthread_mutex_destroy(&r->m), 0);
}
END_TEST

/* A robust owner that is killed while another process sleeps on the
 * mutex: the kernel wakes the sleeper.  */
static int lock_expect_ownerdead(void *p)
{
  struct robust_page *r = p;
  return pthread_mutex_lock(&r->m) == EOWNERDEAD ? 0 : 1;
}

START_TEST(robust_sleeper_is_woken_by_the_kernel)
{
  struct robust_page *r = pt_shared(sizeof *r);
  pid_t holder;
  int status;

  init_kind(&r->m, PTHREAD_MUTEX_NORMAL, PTHREAD_PROCESS_SHARED,
            PTHREAD_MUTEX_ROBUST);
  holder = fork();
  ck_assert_int_ge(holder, 0);
  if (holder == 0) {
    pthread_mutex_lock(&r->m);
    __atomic_store_n(&r->ready, 1, __ATOMIC_RELEASE);
    /* Long enough for the sleeper to be asleep, then die holding it.  */
    usleep(200000);
    raise(SIGKILL);
  }
  while (__atomic_load_n(&r->ready, __ATOMIC_ACQUIRE) == 0)
    usleep(1000);
  ck_assert_int_eq(pt_in_child(lock_expect_ownerdead, r), 0);
  ck_assert_int_eq(waitpid(holder, &status, 0), holder);
}
END_TEST

/* A thread that exits holding a private robust mutex.  */
static void *lock_and_exit(void *p)
{
  pthread_mutex_lock(p);
  return NULL;
}

START_TEST(robust_thread_exit_gives_eownerdead)
{
  pthread_mutex_t m;
  init_kind(&m, PTHREAD_MUTEX_ERRORCHECK, PTHREAD_PROCESS_PRIVATE,
            PTHREAD_MUTEX_ROBUST);
  pt_in_thread(lock_and_exit, &m);
  ck_assert_int_eq(pthread_mutex_trylock(&m), EOWNERDEAD);
  ck_assert_int_eq(pthread_mutex_lock(&m), EDEADLK);
  ck_assert_int_eq(pthread_mutex_consistent(&m), 0);
  ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
  ck_assert_int_eq(pthread_mutex_unlock(&m), EPERM);
}
END_TEST

/* Robust mutexes taken and released in any order keep the thread's
 * robust list whole: after a kill the ones still held are reported.  */
struct robust_three {
  pthread_mutex_t m[3];
  int ready;
};

START_TEST(robust_list_survives_out_of_order_unlocks)
{
  struct robust_three *r = pt_shared(sizeof *r);
  pid_t pid;
  int i, status;

  for (i = 0; i < 3; i++)
    init_kind(&r->m[i], PTHREAD_MUTEX_NORMAL, PTHREAD_PROCESS_SHARED,
              PTHREAD_MUTEX_ROBUST);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    for (i = 0; i < 3; i++)
      pthread_mutex_lock(&r->m[i]);
    pthread_mutex_unlock(&r->m[1]);
    __atomic_store_n(&r->ready, 1, __ATOMIC_RELEASE);
    for (;;)
      pause();
  }
  while (__atomic_load_n(&r->ready, __ATOMIC_ACQUIRE) == 0)
    usleep(1000);
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  ck_assert_int_eq(pthread_mutex_trylock(&r->m[0]), EOWNERDEAD);
  ck_assert_int_eq(pthread_mutex_trylock(&r->m[1]), 0);
  ck_assert_int_eq(pthread_mutex_trylock(&r->m[2]), EOWNERDEAD);
}
END_TEST

/* PRIO_INHERIT is glibc's, on the same object: glibc's kind bits are in
 * the mutex after init, and it locks and excludes.  */
START_TEST(prio_inherit_is_handed_to_glibc)
{
  pthread_mutexattr_t a;
  pthread_mutex_t m;

  pthread_mutexattr_init(&a);
  ck_assert_int_eq(pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT), 0);
  ck_assert_int_eq(pthread_mutex_init(&m, &a), 0);
  ck_assert_int_ne(m.__data.__kind & 32, 0); /* glibc's PRIO_INHERIT_NP */
  ck_assert_int_eq(pthread_mutex_lock(&m), 0);
  ck_assert_int_eq(pt_in_thread(trylock_in_thread, &m), EBUSY);
  ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
  ck_assert_int_eq(pt_in_thread(trylock_in_thread, &m), 0);
  ck_assert_int_eq(pthread_mutex_destroy(&m), 0);
  pthread_mutexattr_destroy(&a);
}
END_TEST

/* Why this machine cannot run the robust cases, or NULL.  A dead owner
 * is found by the kernel, walking the robust list the dead thread
 * registered (src/pthread/robust.c); QEMU user mode does not emulate that
 * list (get_robust_list and set_robust_list fail with ENOSYS), so under
 * it a robust mutex of the drop-in, as one of glibc, outlives its owner
 * locked.  */
static const char *no_robust_list(void)
{
  void *head;
  size_t len;

  if (syscall(SYS_get_robust_list, 0, &head, &len) != 0 && errno == ENOSYS)
    return "get_robust_list fails with ENOSYS: no kernel robust list here "
           "(QEMU user mode does not emulate it), so no dead owner can be "
           "detected";
  return NULL;
}

static Suite *suite(int robust)
{
  Suite *s = suite_create("pthread-mutex");
  TCase *tc = tcase_create("api");
  TCase *th = tcase_create("threads");
  int nk = (int)(sizeof kinds / sizeof kinds[0]);

  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, every_function_is_the_drop_in);
  tcase_add_loop_test(tc, every_kind_locks_and_excludes, 0, nk);
  tcase_add_test(tc, errorcheck_reports_misuse);
  tcase_add_test(tc, recursive_counts_and_overflows);
  tcase_add_test(tc, bad_arguments_are_einval);
  tcase_add_test(tc, static_initializers_need_no_init);
  tcase_add_test(tc, prio_inherit_is_handed_to_glibc);
  suite_add_tcase(s, tc);
  if (robust) {
    TCase *tr = tcase_create("robust");

    tcase_set_timeout(tr, 60);
    tcase_add_loop_test(tr, robust_owner_killed_gives_eownerdead, 0, nk);
    tcase_add_test(tr, robust_not_made_consistent_is_unrecoverable);
    tcase_add_test(tr, robust_sleeper_is_woken_by_the_kernel);
    tcase_add_test(tr, robust_thread_exit_gives_eownerdead);
    tcase_add_test(tr, robust_list_survives_out_of_order_unlocks);
    suite_add_tcase(s, tr);
  }
  tcase_set_tags(th, FL_TAG_THREADS);
  tcase_set_timeout(th, 120);
  tcase_add_loop_test(th, contention_loses_no_update, 0, nk);
  tcase_add_loop_test(th, pshared_works_across_processes, 0, nk);
  suite_add_tcase(s, th);
  return s;
}

int main(void)
{
  return fl_check_run(suite(pt_cases_run("robust", no_robust_list())));
}
