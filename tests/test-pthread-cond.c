/* tests/test-pthread-cond.c: pthread_cond_* of the drop-in: signal and
 * broadcast between threads, timeouts on both clocks, the errors, the
 * recursive mutex's depth across a wait, process-shared use.  */
#define _GNU_SOURCE 1
#include "config.h"

#include "pthread-check.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

START_TEST(every_function_is_the_drop_in)
{
  PT_ASSERT_OURS(pthread_cond_init);
  PT_ASSERT_OURS(pthread_cond_destroy);
  PT_ASSERT_OURS(pthread_cond_wait);
  PT_ASSERT_OURS(pthread_cond_timedwait);
  PT_ASSERT_OURS(pthread_cond_clockwait);
  PT_ASSERT_OURS(pthread_cond_signal);
  PT_ASSERT_OURS(pthread_cond_broadcast);
}
END_TEST

/* The timeouts: default clock (REALTIME), a MONOTONIC condattr, and
 * clockwait on each clock; the mutex is held again afterwards.  */
START_TEST(waits_time_out_on_both_clocks)
{
  pthread_mutex_t m = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
  pthread_cond_t c = PTHREAD_COND_INITIALIZER, cm;
  pthread_condattr_t a;
  struct timespec d;

  pthread_condattr_init(&a);
  ck_assert_int_eq(pthread_condattr_setclock(&a, CLOCK_MONOTONIC), 0);
  ck_assert_int_eq(pthread_cond_init(&cm, &a), 0);
  ck_assert_int_eq(pthread_mutex_lock(&m), 0);
  d = pt_after_ms(CLOCK_REALTIME, 20);
  ck_assert_int_eq(pthread_cond_timedwait(&c, &m, &d), ETIMEDOUT);
  ck_assert_int_eq(pthread_mutex_lock(&m), EDEADLK); /* held again */
  d = pt_after_ms(CLOCK_MONOTONIC, 20);
  ck_assert_int_eq(pthread_cond_timedwait(&cm, &m, &d), ETIMEDOUT);
  d = pt_after_ms(CLOCK_MONOTONIC, 20);
  ck_assert_int_eq(pthread_cond_clockwait(&c, &m, CLOCK_MONOTONIC, &d),
                   ETIMEDOUT);
  d = pt_after_ms(CLOCK_REALTIME, 20);
  ck_assert_int_eq(pthread_cond_clockwait(&cm, &m, CLOCK_REALTIME, &d),
                   ETIMEDOUT);
  /* A MONOTONIC deadline (the boot-relative clock, decades before the
   * wall clock's now) given to a REALTIME wait would be long past and
   * return at once; the condattr's clock is what makes this one wait:
   * the wait ends after its deadline on CLOCK_MONOTONIC.  */
  d = pt_after_ms(CLOCK_MONOTONIC, 20);
  ck_assert_int_eq(pthread_cond_timedwait(&cm, &m, &d), ETIMEDOUT);
  {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    ck_assert(now.tv_sec > d.tv_sec
              || (now.tv_sec == d.tv_sec && now.tv_nsec >= d.tv_nsec));
  }
  ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
  ck_assert_int_eq(pthread_cond_destroy(&cm), 0);
  ck_assert_int_eq(pthread_cond_destroy(&c), 0);
}
END_TEST

START_TEST(errors)
{
  pthread_mutex_t m = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
  pthread_cond_t c = PTHREAD_COND_INITIALIZER;
  struct timespec bad = { 0, -1 }, ok = pt_after_ms(CLOCK_REALTIME, 10);

  /* Waiting on an ERRORCHECK mutex the caller does not hold.  */
  ck_assert_int_eq(pthread_cond_wait(&c, &m), EPERM);
  ck_assert_int_eq(pthread_mutex_lock(&m), 0);
  ck_assert_int_eq(pthread_cond_timedwait(&c, &m, &bad), EINVAL);
  ck_assert_int_eq(pthread_cond_clockwait(&c, &m, CLOCK_THREAD_CPUTIME_ID, &ok),
                   EINVAL);
  ck_assert_int_eq(pthread_mutex_unlock(&m), 0);
  ck_assert_int_eq(pthread_cond_signal(&c), 0);
  ck_assert_int_eq(pthread_cond_broadcast(&c), 0);
}
END_TEST

/* Ping-pong: two threads hand a turn back and forth.  */
struct pingpong {
  pthread_mutex_t *m;
  pthread_cond_t *c;
  int *turn;
  int me;
  long n;
};

static void *play(void *p)
{
  struct pingpong *g = p;
  long i;
  for (i = 0; i < g->n; i++) {
    ck_assert_int_eq(pthread_mutex_lock(g->m), 0);
    while (*g->turn != g->me)
      ck_assert_int_eq(pthread_cond_wait(g->c, g->m), 0);
    *g->turn = 1 - g->me;
    ck_assert_int_eq(pthread_cond_signal(g->c), 0);
    ck_assert_int_eq(pthread_mutex_unlock(g->m), 0);
  }
  return NULL;
}

START_TEST(ping_pong_between_threads)
{
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t c = PTHREAD_COND_INITIALIZER;
  int turn = 0;
  long n = fl_test_iterations(20000);
  struct pingpong g[2] = { { &m, &c, &turn, 0, n }, { &m, &c, &turn, 1, n } };

  fl_test_threads(2, play, g, sizeof g[0]);
  ck_assert_int_eq(turn, 0);
}
END_TEST

/* Broadcast wakes every waiter; destroy then returns and the memory may
 * go.  A recursive mutex held twice is held twice again after the wait. */
struct gate {
  pthread_mutex_t m;
  pthread_cond_t c;
  int open, waiting;
};

static void *wait_at_gate(void *p)
{
  struct gate *g = p;
  ck_assert_int_eq(pthread_mutex_lock(&g->m), 0);
  ck_assert_int_eq(pthread_mutex_lock(&g->m), 0);
  g->waiting++;
  while (!g->open)
    ck_assert_int_eq(pthread_cond_wait(&g->c, &g->m), 0);
  ck_assert_int_eq(pthread_mutex_unlock(&g->m), 0);
  ck_assert_int_eq(pthread_mutex_unlock(&g->m), 0);
  ck_assert_int_eq(pthread_mutex_unlock(&g->m), EPERM);
  return NULL;
}

START_TEST(broadcast_wakes_all_and_destroy_waits_for_them)
{
  struct gate g = { PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP,
                    PTHREAD_COND_INITIALIZER, 0, 0 };
  pthread_t t[4];
  int i;

  for (i = 0; i < 4; i++)
    ck_assert_int_eq(pthread_create(&t[i], NULL, wait_at_gate, &g), 0);
  for (;;) {
    pthread_mutex_lock(&g.m);
    if (g.waiting == 4)
      break;
    pthread_mutex_unlock(&g.m);
    usleep(1000);
  }
  g.open = 1;
  ck_assert_int_eq(pthread_cond_broadcast(&g.c), 0);
  pthread_mutex_unlock(&g.m);
  ck_assert_int_eq(pthread_cond_destroy(&g.c), 0);
  for (i = 0; i < 4; i++)
    pthread_join(t[i], NULL);
}
END_TEST

/* Process-shared: a parent and a child ping-pong through a condition
 * variable and a mutex in a shared page.  */
struct shared_pp {
  pthread_mutex_t m;
  pthread_cond_t c;
  int turn;
  long n;
};

static int play_shared(struct shared_pp *s, int me)
{
  long i;
  for (i = 0; i < s->n; i++) {
    if (pthread_mutex_lock(&s->m) != 0)
      return 1;
    while (s->turn != me) {
      struct timespec d = pt_after_ms(CLOCK_REALTIME, 30000);
      if (pthread_cond_timedwait(&s->c, &s->m, &d) != 0)
        return 2;
    }
    s->turn = 1 - me;
    pthread_cond_signal(&s->c);
    pthread_mutex_unlock(&s->m);
  }
  return 0;
}

START_TEST(pshared_between_processes)
{
  struct shared_pp *s = pt_shared(sizeof *s);
  pthread_mutexattr_t ma;
  pthread_condattr_t ca;
  pid_t pid;
  int status;

  pthread_mutexattr_init(&ma);
  pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
  pthread_condattr_init(&ca);
  pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
  ck_assert_int_eq(pthread_mutex_init(&s->m, &ma), 0);
  ck_assert_int_eq(pthread_cond_init(&s->c, &ca), 0);
  s->n = fl_test_iterations(5000);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0)
    _exit(play_shared(s, 1));
  ck_assert_int_eq(play_shared(s, 0), 0);
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
END_TEST

/* pthread_cond_wait's sleep is a cancellation point: a thread cancelled
 * while it waits runs its cleanup handler holding the mutex (POSIX), and
 * the condition variable goes on working for the others: a signal
 * reaches the waiter left, and destroy does not wait for the cancelled
 * one.  Before, the sleep ignored the cancel and pthread_join hung.  */
struct cancel_wait {
  pthread_mutex_t m;
  pthread_cond_t c;
  int waiting, go, cleanup_unlock;
};

static void unlock_in_cleanup(void *p)
{
  struct cancel_wait *g = p;

  /* An error-checking mutex: EPERM unless this thread holds it.  */
  g->cleanup_unlock = pthread_mutex_unlock(&g->m);
}

static void *wait_to_be_cancelled(void *p)
{
  struct cancel_wait *g = p;

  ck_assert_int_eq(pthread_mutex_lock(&g->m), 0);
  g->waiting++;
  pthread_cleanup_push(unlock_in_cleanup, g);
  while (!g->go)
    pthread_cond_wait(&g->c, &g->m);
  pthread_cleanup_pop(0);
  g->waiting--;
  ck_assert_int_eq(pthread_mutex_unlock(&g->m), 0);
  return NULL;
}

START_TEST(a_cancelled_waiter_leaves_holding_the_mutex)
{
  struct cancel_wait g;
  pthread_mutexattr_t a;
  pthread_t victim, other;
  void *ret;

  memset(&g, 0, sizeof g);
  g.cleanup_unlock = -1;
  ck_assert_int_eq(pthread_mutexattr_init(&a), 0);
  ck_assert_int_eq(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK), 0);
  ck_assert_int_eq(pthread_mutex_init(&g.m, &a), 0);
  ck_assert_int_eq(pthread_cond_init(&g.c, NULL), 0);
  ck_assert_int_eq(pthread_create(&victim, NULL, wait_to_be_cancelled, &g), 0);
  ck_assert_int_eq(pthread_create(&other, NULL, wait_to_be_cancelled, &g), 0);
  for (;;) {
    int n;
    ck_assert_int_eq(pthread_mutex_lock(&g.m), 0);
    n = g.waiting;
    ck_assert_int_eq(pthread_mutex_unlock(&g.m), 0);
    if (n == 2)
      break;
    usleep(1000);
  }
  usleep(20000); /* most likely asleep by now; if not, cancelled on entry */
  ck_assert_int_eq(pthread_cancel(victim), 0);
  ck_assert_int_eq(pthread_join(victim, &ret), 0);
  ck_assert_ptr_eq(ret, PTHREAD_CANCELED);
  ck_assert_int_eq(g.cleanup_unlock, 0);
  ck_assert_int_eq(pthread_mutex_lock(&g.m), 0);
  g.waiting--; /* the victim's */
  g.go = 1;
  ck_assert_int_eq(pthread_cond_signal(&g.c), 0);
  ck_assert_int_eq(pthread_mutex_unlock(&g.m), 0);
  ck_assert_int_eq(pthread_join(other, NULL), 0);
  ck_assert_int_eq(g.waiting, 0);
  ck_assert_int_eq(pthread_cond_destroy(&g.c), 0);
  ck_assert_int_eq(pthread_mutex_destroy(&g.m), 0);
  ck_assert_int_eq(pthread_mutexattr_destroy(&a), 0);
}
END_TEST

static Suite *suite(int cancel)
{
  Suite *s = suite_create("pthread-cond");
  TCase *tc = tcase_create("api");
  TCase *th = tcase_create("threads");

  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, every_function_is_the_drop_in);
  tcase_add_test(tc, waits_time_out_on_both_clocks);
  tcase_add_test(tc, errors);
  suite_add_tcase(s, tc);
  tcase_set_tags(th, FL_TAG_THREADS);
  tcase_set_timeout(th, 120);
  tcase_add_test(th, ping_pong_between_threads);
  tcase_add_test(th, broadcast_wakes_all_and_destroy_waits_for_them);
  tcase_add_test(th, pshared_between_processes);
  if (cancel)
    tcase_add_test(th, a_cancelled_waiter_leaves_holding_the_mutex);
  suite_add_tcase(s, th);
  return s;
}

int main(void)
{
  return fl_check_run(
      suite(pt_cases_run("cancellation", pt_no_cancel_unwind())));
}
