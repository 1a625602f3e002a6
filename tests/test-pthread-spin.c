/* tests/test-pthread-spin.c: pthread_spin_* of the drop-in.  */
#define _GNU_SOURCE 1
#include "config.h"

#include "pthread-check.h"

#include <errno.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

START_TEST(every_function_is_the_drop_in)
{
  PT_ASSERT_OURS(pthread_spin_init);
  PT_ASSERT_OURS(pthread_spin_destroy);
  PT_ASSERT_OURS(pthread_spin_lock);
  PT_ASSERT_OURS(pthread_spin_trylock);
  PT_ASSERT_OURS(pthread_spin_unlock);
}
END_TEST

static void *trylock_other(void *p)
{
  int rc = pthread_spin_trylock(p);
  if (rc == 0)
    pthread_spin_unlock(p);
  return (void *)(intptr_t)rc;
}

START_TEST(locks_and_errors)
{
  pthread_spinlock_t l;

  ck_assert_int_eq(pthread_spin_init(&l, 42), EINVAL);
  ck_assert_int_eq(pthread_spin_init(&l, PTHREAD_PROCESS_PRIVATE), 0);
  ck_assert_int_eq(pthread_spin_lock(&l), 0);
  ck_assert_int_eq(pthread_spin_trylock(&l), EBUSY);
  ck_assert_int_eq(pt_in_thread(trylock_other, (void *)&l), EBUSY);
  ck_assert_int_eq(pthread_spin_unlock(&l), 0);
  ck_assert_int_eq(pt_in_thread(trylock_other, (void *)&l), 0);
  ck_assert_int_eq(pthread_spin_destroy(&l), 0);
}
END_TEST

struct shared_spin {
  pthread_spinlock_t l;
  long counter, n;
};

static int add(struct shared_spin *s)
{
  long i;
  for (i = 0; i < s->n; i++) {
    if (pthread_spin_lock(&s->l) != 0)
      return 1;
    s->counter++;
    pthread_spin_unlock(&s->l);
  }
  return 0;
}

static void *add_thread(void *p)
{
  return (void *)(intptr_t)add(p);
}

START_TEST(contention_in_threads_and_processes)
{
  struct shared_spin *s = pt_shared(sizeof *s);
  pid_t pid;
  int status;

  ck_assert_int_eq(pthread_spin_init(&s->l, PTHREAD_PROCESS_SHARED), 0);
  s->n = fl_test_iterations(50000);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0)
    _exit(add(s));
  ck_assert_int_eq(pt_in_thread(add_thread, s), 0);
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ck_assert_int_eq(s->counter, 2 * s->n);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("pthread-spin");
  TCase *tc = tcase_create("api");
  TCase *th = tcase_create("threads");

  tcase_add_test(tc, every_function_is_the_drop_in);
  tcase_add_test(tc, locks_and_errors);
  suite_add_tcase(s, tc);
  tcase_set_tags(th, FL_TAG_THREADS);
  tcase_set_timeout(th, 120);
  tcase_add_test(th, contention_in_threads_and_processes);
  suite_add_tcase(s, th);
  return s;
}

int main(void)
{
  return fl_check_run(suite());
}
