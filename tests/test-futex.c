/* tests/test-futex.c: the futex wrapper in src/sys.  */
#include "config.h"

#include "sys/annotate.h"
#include "sys/clock.h"
#include "sys/futex.h"

#include "fl-check.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

START_TEST(wait_on_changed_word_is_eagain)
{
  uint32_t w = 1;
  ck_assert_int_eq(fl_futex_wait(&w, 0, 0, CLOCK_MONOTONIC, NULL), EAGAIN);
  ck_assert_int_eq(fl_futex_wait(&w, 0, 1, CLOCK_REALTIME, NULL), EAGAIN);
}
END_TEST

static const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_REALTIME };

START_TEST(deadline_in_past_times_out)
{
  uint32_t w = 0;
  struct timespec past = { 1, 0 };
  struct timespec negative = { -5, 0 };

  ck_assert_int_eq(fl_futex_wait(&w, 0, _i, clocks[_i], &past), ETIMEDOUT);
  ck_assert_int_eq(fl_futex_wait(&w, 0, _i, clocks[_i], &negative), ETIMEDOUT);
}
END_TEST

/* The wait must not end before its deadline (no timing upper bound is
 * asserted: the machine may be loaded).  */
START_TEST(deadline_ahead_times_out_not_early)
{
  uint32_t w = 0;
  struct timespec deadline = fl_deadline_after_ns(clocks[_i], 20 * 1000000L);
  int rc;
  int64_t now, due;

  do
    rc = fl_futex_wait(&w, 0, 0, clocks[_i], &deadline);
  while (rc == 0 || rc == EINTR); /* spurious wake-ups: wait again */
  ck_assert_int_eq(rc, ETIMEDOUT);
  now = fl_clock_ns(clocks[_i]);
  due = (int64_t)deadline.tv_sec * FL_NSEC_PER_SEC + deadline.tv_nsec;
  ck_assert_msg(now >= due, "woke %lld ns before the deadline",
                (long long)(due - now));
}
END_TEST

START_TEST(bad_arguments_are_einval)
{
  uint32_t w = 0;
  struct timespec minus = { 0, -1 };
  struct timespec billion = { 0, FL_NSEC_PER_SEC };
  struct timespec fine = { 0, 0 };

  /* Even though the word does not match: arguments are checked first. */
  ck_assert_int_eq(fl_futex_wait(&w, 1, 0, CLOCK_MONOTONIC, &minus), EINVAL);
  ck_assert_int_eq(fl_futex_wait(&w, 1, 0, CLOCK_REALTIME, &billion), EINVAL);
  ck_assert_int_eq(fl_futex_wait(&w, 1, 0, CLOCK_PROCESS_CPUTIME_ID, &fine),
                   EINVAL);
  ck_assert_int_eq(fl_futex_wait(&w, 1, 0, CLOCK_THREAD_CPUTIME_ID, NULL),
                   EINVAL);
}
END_TEST

START_TEST(wake_without_waiters_wakes_none)
{
  uint32_t w = 0;
  ck_assert_int_eq(fl_futex_wake(&w, 1, 0), 0);
  ck_assert_int_eq(fl_futex_wake(&w, INT32_MAX, 1), 0);
}
END_TEST

struct waiter {
  uint32_t *word;
  int pshared;
  int result;
};

static void *wait_for_one(void *p)
{
  struct waiter *w = p;
  int rc = 0;

  while (__atomic_load_n(w->word, __ATOMIC_ACQUIRE) == 0) {
    rc = fl_futex_wait(w->word, 0, w->pshared, CLOCK_MONOTONIC, NULL);
    if (rc != 0 && rc != EAGAIN && rc != EINTR)
      break;
  }
  w->result = rc;
  return NULL;
}

/* Wake through wake_at until one sleeper on the word has been woken: the
 * waiter may not be asleep yet when we first try.  */
static int wake_one_eventually(uint32_t *wake_at, int pshared)
{
  int tries;

  for (tries = 0; tries < 10000; tries++) {
    if (fl_futex_wake(wake_at, 1, pshared) == 1)
      return 1;
    usleep(1000);
  }
  return 0;
}

START_TEST(wake_reaches_a_sleeping_thread)
{
  uint32_t word = 0;
  struct waiter w = { &word, _i, -1 };
  pthread_t t;

  /* The futex word is synchronisation the Valgrind tools cannot see.  */
  FL_VG_HIDE(&word, sizeof word);
  ck_assert_int_eq(pthread_create(&t, NULL, wait_for_one, &w), 0);
  /* Leave the word at 0 so the waiter must really be woken, then let it
   * leave its loop.  */
  ck_assert(wake_one_eventually(&word, _i));
  __atomic_store_n(&word, 1, __ATOMIC_RELEASE);
  fl_futex_wake(&word, INT32_MAX, _i);
  pthread_join(t, NULL);
  ck_assert(w.result == 0 || w.result == EAGAIN);
}
END_TEST

/* A shared futex is keyed by the page, not the address: a word mapped
 * twice is one futex for pshared operations and two private ones.  */
START_TEST(shared_futex_works_across_mappings)
{
  int fd = memfd_create("fl-futex-test", 0);
  uint32_t *a, *b;
  struct waiter w;
  pthread_t t;
  int tries, woken = 0;

  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(ftruncate(fd, 4096), 0);
  a = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  b = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ck_assert(a != MAP_FAILED && b != MAP_FAILED && a != b);
  FL_VG_HIDE(a, sizeof *a);
  FL_VG_HIDE(b, sizeof *b);
  *a = 0;
  w.word = a;
  w.pshared = 1;
  w.result = -1;
  ck_assert_int_eq(pthread_create(&t, NULL, wait_for_one, &w), 0);
  for (tries = 0; tries < 10000 && !woken; tries++) {
    /* A private wake through the other mapping must never reach it.  */
    ck_assert_int_eq(fl_futex_wake(b, 1, 0), 0);
    woken = fl_futex_wake(b, 1, 1);
    if (!woken)
      usleep(1000);
  }
  ck_assert_int_eq(woken, 1);
  __atomic_store_n(b, 1, __ATOMIC_RELEASE);
  fl_futex_wake(b, INT32_MAX, 1);
  pthread_join(t, NULL);
  munmap(a, 4096);
  munmap(b, 4096);
  close(fd);
}
END_TEST

/* The same between processes: the child maps the segment anew, so at its
 * own address, and sleeps; the parent wakes it through its mapping.  */
START_TEST(shared_futex_works_across_processes)
{
  int fd = memfd_create("fl-futex-proc", 0);
  uint32_t *a;
  pid_t pid;
  int status;

  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(ftruncate(fd, 4096), 0);
  a = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ck_assert(a != MAP_FAILED);
  FL_VG_HIDE(a, 2 * sizeof *a);
  a[0] = 0;
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    uint32_t *c = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (c == MAP_FAILED)
      _exit(2);
    __atomic_store_n(&c[1], 1, __ATOMIC_RELEASE); /* "I am about to sleep" */
    while (__atomic_load_n(&c[0], __ATOMIC_ACQUIRE) == 0)
      fl_futex_wait(&c[0], 0, 1, CLOCK_MONOTONIC, NULL);
    _exit(0);
  }
  while (__atomic_load_n(&a[1], __ATOMIC_ACQUIRE) == 0)
    usleep(1000);
  ck_assert(wake_one_eventually(&a[0], 1));
  __atomic_store_n(&a[0], 1, __ATOMIC_RELEASE);
  fl_futex_wake(&a[0], INT32_MAX, 1);
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  munmap(a, 4096);
  close(fd);
}
END_TEST

static Suite *futex_suite(void)
{
  Suite *s = suite_create("futex");
  TCase *tc = tcase_create("futex");

  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, wait_on_changed_word_is_eagain);
  tcase_add_loop_test(tc, deadline_in_past_times_out, 0, 2);
  tcase_add_loop_test(tc, deadline_ahead_times_out_not_early, 0, 2);
  tcase_add_test(tc, bad_arguments_are_einval);
  tcase_add_test(tc, wake_without_waiters_wakes_none);
  tcase_add_loop_test(tc, wake_reaches_a_sleeping_thread, 0, 2);
  tcase_add_test(tc, shared_futex_works_across_mappings);
  tcase_add_test(tc, shared_futex_works_across_processes);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  return fl_check_run_no_shim(futex_suite());
}
