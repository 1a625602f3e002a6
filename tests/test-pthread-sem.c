/* tests/test-pthread-sem.c: sem_* of the drop-in: the errors, timeouts
 * on both clocks, EINTR, ping-pong between threads, process-shared and
 * named semaphores across processes.  */
#define _GNU_SOURCE 1
#include "config.h"

#include "pthread-check.h"
#include "pthread/sem.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

START_TEST(every_function_is_the_drop_in)
{
  PT_ASSERT_OURS(sem_init);
  PT_ASSERT_OURS(sem_destroy);
  PT_ASSERT_OURS(sem_wait);
  PT_ASSERT_OURS(sem_trywait);
  PT_ASSERT_OURS(sem_timedwait);
  PT_ASSERT_OURS(sem_clockwait);
  PT_ASSERT_OURS(sem_post);
  PT_ASSERT_OURS(sem_getvalue);
  PT_ASSERT_OURS(sem_open);
  PT_ASSERT_OURS(sem_close);
  PT_ASSERT_OURS(sem_unlink);
}
END_TEST

START_TEST(counts_and_errors)
{
  sem_t s;
  struct timespec bad = { 0, 1000000000L }, d;
  int v;

  ck_assert_int_eq(sem_init(&s, 0, (unsigned)SEM_VALUE_MAX + 1u), -1);
  ck_assert_int_eq(errno, EINVAL);
  ck_assert_int_eq(sem_init(&s, 0, 2), 0);
  ck_assert_int_eq(sem_getvalue(&s, &v), 0);
  ck_assert_int_eq(v, 2);
  ck_assert_int_eq(sem_trywait(&s), 0);
  ck_assert_int_eq(sem_wait(&s), 0);
  ck_assert_int_eq(sem_trywait(&s), -1);
  ck_assert_int_eq(errno, EAGAIN);
  d = pt_after_ms(CLOCK_REALTIME, 20);
  ck_assert_int_eq(sem_timedwait(&s, &d), -1);
  ck_assert_int_eq(errno, ETIMEDOUT);
  d = pt_after_ms(CLOCK_MONOTONIC, 20);
  ck_assert_int_eq(sem_clockwait(&s, CLOCK_MONOTONIC, &d), -1);
  ck_assert_int_eq(errno, ETIMEDOUT);
  ck_assert_int_eq(sem_clockwait(&s, CLOCK_PROCESS_CPUTIME_ID, &d), -1);
  ck_assert_int_eq(errno, EINVAL);
  ck_assert_int_eq(sem_timedwait(&s, &bad), -1);
  ck_assert_int_eq(errno, EINVAL);
  ck_assert_int_eq(sem_post(&s), 0);
  /* A unit is there: the bad deadline is not even looked at.  */
  ck_assert_int_eq(sem_timedwait(&s, &bad), 0);
  ck_assert_int_eq(sem_destroy(&s), 0);
  ck_assert_int_eq(sem_init(&s, 0, SEM_VALUE_MAX), 0);
  ck_assert_int_eq(sem_post(&s), -1);
  ck_assert_int_eq(errno, EOVERFLOW);
}
END_TEST

static void on_alarm(int sig)
{
  (void)sig;
}

START_TEST(a_signal_interrupts_the_wait)
{
  sem_t s;
  struct sigaction sa;

  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sa.sa_flags = 0; /* with SA_RESTART it would go on, as glibc's */
  sigaction(SIGALRM, &sa, NULL);
  ck_assert_int_eq(sem_init(&s, 0, 0), 0);
  alarm(1);
  ck_assert_int_eq(sem_wait(&s), -1);
  ck_assert_int_eq(errno, EINTR);
}
END_TEST

struct pp {
  sem_t *mine, *theirs;
  long n;
};

static void *bounce(void *p)
{
  struct pp *g = p;
  long i;
  for (i = 0; i < g->n; i++) {
    ck_assert_int_eq(sem_wait(g->mine), 0);
    ck_assert_int_eq(sem_post(g->theirs), 0);
  }
  return NULL;
}

START_TEST(ping_pong_between_threads)
{
  sem_t a, b;
  long n = fl_test_iterations(20000);
  struct pp g[2] = { { &a, &b, n }, { &b, &a, n } };
  int v;

  sem_init(&a, 0, 1);
  sem_init(&b, 0, 0);
  fl_test_threads(2, bounce, g, sizeof g[0]);
  sem_getvalue(&a, &v);
  ck_assert_int_eq(v, 1);
  sem_getvalue(&b, &v);
  ck_assert_int_eq(v, 0);
}
END_TEST

static int bounce_in_process(sem_t *mine, sem_t *theirs, long n)
{
  long i;
  for (i = 0; i < n; i++) {
    struct timespec d = pt_after_ms(CLOCK_REALTIME, 30000);
    if (sem_timedwait(mine, &d) != 0)
      return 1;
    if (sem_post(theirs) != 0)
      return 2;
  }
  return 0;
}

START_TEST(pshared_between_processes)
{
  sem_t *s = pt_shared(2 * sizeof(sem_t));
  long n = fl_test_iterations(5000);
  pid_t pid;
  int status;

  ck_assert_int_eq(sem_init(&s[0], 1, 1), 0);
  ck_assert_int_eq(sem_init(&s[1], 1, 0), 0);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0)
    _exit(bounce_in_process(&s[1], &s[0], n));
  ck_assert_int_eq(bounce_in_process(&s[0], &s[1], n), 0);
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
END_TEST

static char name_a[64], name_b[64];

static int bounce_named(void *p)
{
  sem_t *a = sem_open(name_a, 0), *b = sem_open(name_b, 0);
  int rc;
  if (a == SEM_FAILED || b == SEM_FAILED)
    return 10;
  rc = bounce_in_process(b, a, *(long *)p);
  sem_close(a);
  sem_close(b);
  return rc;
}

START_TEST(named_between_processes)
{
  long n = fl_test_iterations(2000);
  sem_t *a, *b;
  char longname[NAME_MAX + 8];

  snprintf(name_a, sizeof name_a, "/fastlock-test-a-%d", (int)getpid());
  snprintf(name_b, sizeof name_b, "/fastlock-test-b-%d", (int)getpid());
  ck_assert_ptr_eq(sem_open(name_a, 0), SEM_FAILED);
  ck_assert_int_eq(errno, ENOENT);
  a = sem_open(name_a, O_CREAT | O_EXCL, 0600, 1);
  ck_assert_ptr_ne(a, SEM_FAILED);
  ck_assert_ptr_eq(sem_open(name_a, O_CREAT | O_EXCL, 0600, 1), SEM_FAILED);
  ck_assert_int_eq(errno, EEXIST);
  b = sem_open(name_b, O_CREAT, 0600, 0);
  ck_assert_ptr_ne(b, SEM_FAILED);
  ck_assert_ptr_eq(
      sem_open(name_b, O_CREAT, 0600, (unsigned)SEM_VALUE_MAX + 1u),
      SEM_FAILED);
  ck_assert_int_eq(errno, EINVAL);
  ck_assert_ptr_eq(sem_open("/", O_CREAT, 0600, 0), SEM_FAILED);
  ck_assert_int_eq(errno, EINVAL);
  memset(longname, 'x', sizeof longname - 1);
  longname[0] = '/';
  longname[sizeof longname - 1] = '\0';
  ck_assert_ptr_eq(sem_open(longname, O_CREAT, 0600, 0), SEM_FAILED);
  ck_assert_int_eq(errno, ENAMETOOLONG);

  {
    pid_t pid = fork();
    int status;
    ck_assert_int_ge(pid, 0);
    if (pid == 0)
      _exit(bounce_named(&n));
    ck_assert_int_eq(bounce_in_process(a, b, n), 0);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  /* The child's last post is ours to take.  */
  {
    struct timespec d = pt_after_ms(CLOCK_REALTIME, 30000);
    ck_assert_int_eq(sem_timedwait(a, &d), 0);
  }
  ck_assert_int_eq(sem_close(a), 0);
  ck_assert_int_eq(sem_close(b), 0);
  ck_assert_int_eq(sem_unlink(name_a), 0);
  ck_assert_int_eq(sem_unlink(name_b), 0);
  ck_assert_int_eq(sem_unlink(name_b), -1);
  ck_assert_int_eq(errno, ENOENT);
}
END_TEST

/* sem_open applies the umask to the mode, as open(2) and glibc do: a
 * semaphore asked for 0666 under umask 077 is not world-writable.  */
START_TEST(named_creation_applies_the_umask)
{
  char name[64], path[96];
  struct stat st;
  mode_t old = umask(077);
  sem_t *a;

  snprintf(name, sizeof name, "/fastlock-test-umask-%d", (int)getpid());
  snprintf(path, sizeof path, "/dev/shm/sem.%s", name + 1);
  a = sem_open(name, O_CREAT | O_EXCL, 0666, 0);
  umask(old);
  ck_assert_ptr_ne(a, SEM_FAILED);
  ck_assert_int_eq(stat(path, &st), 0);
  ck_assert_uint_eq(st.st_mode & 0777, 0600);
  ck_assert_int_eq(sem_close(a), 0);
  ck_assert_int_eq(sem_unlink(name), 0);
}
END_TEST

/* sem_wait's and sem_timedwait's sleeps are cancellation points: a
 * thread cancelled while it waits ends (pthread_join returns), takes no
 * unit, counts itself out of the waiters, and leaves the semaphore
 * working: a post then reaches the waiter left.  Before, the sleep
 * ignored the cancel and pthread_join hung.  */
struct cancel_sem {
  sem_t s;
  int timed;
};

static void *sem_wait_to_be_cancelled(void *p)
{
  struct cancel_sem *g = p;
  struct timespec d = pt_after_ms(CLOCK_REALTIME, 60000);

  if (g->timed)
    sem_timedwait(&g->s, &d);
  else
    sem_wait(&g->s);
  return NULL;
}

static void *sem_wait_once(void *p)
{
  struct cancel_sem *g = p;

  return (void *)(intptr_t)sem_wait(&g->s);
}

START_TEST(a_cancelled_waiter_takes_nothing)
{
  struct cancel_sem g = { .timed = _i };
  pthread_t victim, other;
  void *ret;
  int v;

  ck_assert_int_eq(sem_init(&g.s, 0, 0), 0);
  ck_assert_int_eq(pthread_create(&victim, NULL, sem_wait_to_be_cancelled, &g),
                   0);
  ck_assert_int_eq(pthread_create(&other, NULL, sem_wait_once, &g), 0);
  usleep(20000); /* most likely asleep by now; if not, cancelled on entry */
  ck_assert_int_eq(pthread_cancel(victim), 0);
  ck_assert_int_eq(pthread_join(victim, &ret), 0);
  ck_assert_ptr_eq(ret, PTHREAD_CANCELED);
  /* The victim's cleanup ran: it counts itself out (sem.h).  */
  ck_assert_uint_le(((struct fl_psem *)(void *)&g.s)->nwaiters, 1);
  ck_assert_int_eq(sem_post(&g.s), 0);
  ck_assert_int_eq(pthread_join(other, &ret), 0);
  ck_assert_ptr_eq(ret, NULL); /* sem_wait returned 0 */
  ck_assert_uint_eq(((struct fl_psem *)(void *)&g.s)->nwaiters, 0);
  ck_assert_int_eq(sem_getvalue(&g.s, &v), 0);
  ck_assert_int_eq(v, 0);
  ck_assert_int_eq(sem_destroy(&g.s), 0);
}
END_TEST

static Suite *suite(int cancel)
{
  Suite *s = suite_create("pthread-sem");
  TCase *tc = tcase_create("api");
  TCase *th = tcase_create("threads");

  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, every_function_is_the_drop_in);
  tcase_add_test(tc, counts_and_errors);
  tcase_add_test(tc, a_signal_interrupts_the_wait);
  tcase_add_test(tc, named_creation_applies_the_umask);
  suite_add_tcase(s, tc);
  tcase_set_tags(th, FL_TAG_THREADS);
  tcase_set_timeout(th, 120);
  tcase_add_test(th, ping_pong_between_threads);
  tcase_add_test(th, pshared_between_processes);
  tcase_add_test(th, named_between_processes);
  if (cancel)
    tcase_add_loop_test(th, a_cancelled_waiter_takes_nothing, 0, 2);
  suite_add_tcase(s, th);
  return s;
}

int main(void)
{
  return fl_check_run(
      suite(pt_cases_run("cancellation", pt_no_cancel_unwind())));
}
