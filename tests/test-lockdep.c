/* tests/test-lockdep.c: the lock-order checker, run in the default build.
 *
 * Each test runs in a forked child (Check's default) with the checker
 * enabled and its standard error sent to a file, then looks at what the
 * checker said: the seeded ABBA and ABC cycles and each misuse must be
 * reported, consistent nesting and a 4-thread torture must not.  The
 * same for the IPC mutexes, taken by fl_ipc_wait_any and _all.  */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <fastlock/ipc.h>
#include <fastlock/lockdep.h>
#include <fastlock/rwsem.h>
#include <fastlock/spinlock.h>

#include "fl-check.h"

static char errfile[] = "/tmp/fl-lockdep-XXXXXX";
static char said[65536];

/* Send standard error to a fresh file, and turn the checker on.  */
static void setup(void)
{
  int fd = mkstemp(errfile);

  ck_assert_int_ge(fd, 0);
  ck_assert_int_ge(dup2(fd, STDERR_FILENO), 0);
  close(fd);
  ck_assert_int_eq(fl_lockdep_enable(), 0);
  ck_assert(fl_lockdep_enabled());
  ck_assert_int_eq(fl_tools_active, FL_TOOLS_ON);
}

/* What the checker has written so far.  */
static const char *checker_said(void)
{
  FILE *f = fopen(errfile, "r");
  size_t n;

  ck_assert_ptr_nonnull(f);
  n = fread(said, 1, sizeof said - 1, f);
  said[n] = '\0';
  fclose(f);
  unlink(errfile);
  return said;
}

/* IPC: a region of this process's own, with two mutexes, A and B.  */
static fl_ipc_t *region;
static fl_ipc_obj_t ma, mb;

static void ipc_setup(void)
{
  char name[64];

  snprintf(name, sizeof name, "/fl-test-lockdep-%ld", (long)getpid());
  ck_assert_int_eq(fl_ipc_create(name, 4, 2, &region), 0);
  ck_assert_int_eq(fl_ipc_unlink(name), 0);
  ck_assert_int_eq(fl_ipc_mutex_create(region, NULL, 0, &ma), 0);
  ck_assert_int_eq(fl_ipc_mutex_create(region, NULL, 0, &mb), 0);
}

static void ipc_take(fl_ipc_obj_t m)
{
  uint32_t index;

  ck_assert_int_eq(
      fl_ipc_wait_any(region, 1, &m, CLOCK_MONOTONIC, NULL, &index), 0);
}

/* Take x then y (each waited for alone), and give them back.  */
static void ipc_nest(fl_ipc_obj_t x, fl_ipc_obj_t y)
{
  ipc_take(x);
  ipc_take(y);
  ck_assert_int_eq(fl_ipc_mutex_release(region, y, NULL), 0);
  ck_assert_int_eq(fl_ipc_mutex_release(region, x, NULL), 0);
}

static void *ipc_nest_ba(void *unused)
{
  (void)unused;
  ipc_nest(mb, ma);
  return NULL;
}

static int count(const char *text, const char *what)
{
  int n = 0;

  for (; (text = strstr(text, what)) != NULL; text += strlen(what))
    n++;
  return n;
}

static fl_spinlock_t a, b;
static fl_ticketlock_t tb;
static fl_qspinlock_t qc;

static void init3(void)
{
  ck_assert_int_eq(fl_spin_init(&a, 0), 0);
  ck_assert_int_eq(fl_ticket_init(&tb, 0), 0);
  ck_assert_int_eq(fl_qspin_init(&qc, 0), 0);
}

/* Take x then y, in this thread.  */
static void nest(fl_spinlock_t *x, fl_spinlock_t *y)
{
  ck_assert_int_eq(fl_spin_lock(x), 0);
  ck_assert_int_eq(fl_spin_lock(y), 0);
  ck_assert_int_eq(fl_spin_unlock(y), 0);
  ck_assert_int_eq(fl_spin_unlock(x), 0);
}

static void *nest_ba(void *unused)
{
  (void)unused;
  nest(&b, &a);
  return NULL;
}

START_TEST(abba_is_reported_once)
{
  pthread_t t;
  const char *out;

  ck_assert_int_eq(fl_spin_init(&a, 0), 0);
  ck_assert_int_eq(fl_spin_init(&b, 0), 0);
  nest(&a, &b);
  /* The reverse order in another thread, which never deadlocks here: the
   * first thread is done.  */
  ck_assert_int_eq(pthread_create(&t, NULL, nest_ba, NULL), 0);
  ck_assert_int_eq(pthread_join(t, NULL), 0);
  nest(&b, &a);
  nest(&a, &b);
  out = checker_said();
  ck_assert_int_eq(count(out, "fastlock: possible deadlock"), 1);
  ck_assert_int_eq((int)fl_lockdep_reports(), 1);
  ck_assert_ptr_nonnull(strstr(out, "fl_spinlock_t"));
  /* Both acquisitions' stacks, each with frames in this program.  */
  ck_assert_int_eq(count(out, "while holding"), 2);
  ck_assert_int_ge(count(out, "test-lockdep("), 2);
}
END_TEST

START_TEST(abc_cycle_is_reported)
{
  fl_spinlock_t x = FL_SPINLOCK_INITIALIZER, y = FL_SPINLOCK_INITIALIZER,
                z = FL_SPINLOCK_INITIALIZER;
  const char *out;

  nest(&x, &y);
  nest(&y, &z);
  ck_assert_int_eq((int)fl_lockdep_reports(), 0);
  nest(&z, &x);
  out = checker_said();
  ck_assert_int_eq(count(out, "fastlock: possible deadlock"), 1);
  /* Statically initialised: classes by address.  */
  ck_assert_int_eq(count(out, "statically initialised"), 3);
}
END_TEST

START_TEST(consistent_nesting_is_not_reported)
{
  int i;

  init3();
  for (i = 0; i < 100; i++) {
    ck_assert_int_eq(fl_spin_lock(&a), 0);
    ck_assert_int_eq(fl_ticket_lock(&tb), 0);
    ck_assert_int_eq(fl_qspin_lock(&qc), 0);
    ck_assert_int_eq(fl_qspin_unlock(&qc), 0);
    ck_assert_int_eq(fl_ticket_unlock(&tb), 0);
    /* A trylock orders nothing: taking a after c by trylock is fine.  */
    ck_assert_int_eq(fl_qspin_lock(&qc), 0);
    ck_assert_int_eq(fl_spin_unlock(&a), 0);
    ck_assert_int_eq(fl_spin_trylock(&a), 0);
    ck_assert_int_eq(fl_spin_unlock(&a), 0);
    ck_assert_int_eq(fl_qspin_unlock(&qc), 0);
  }
  ck_assert_str_eq(checker_said(), "");
  ck_assert_int_eq((int)fl_lockdep_reports(), 0);
}
END_TEST

START_TEST(misuse_is_reported)
{
  const char *out;

  init3();
  /* Destroying the lock it holds, then releasing it twice.  */
  ck_assert_int_eq(fl_spin_lock(&a), 0);
  ck_assert_int_eq(fl_spin_destroy(&a), EBUSY);
  ck_assert_int_eq(fl_spin_unlock(&a), 0);
  ck_assert_int_eq(fl_spin_unlock(&a), EPERM);
  out = checker_said();
  ck_assert_int_eq(count(out, "fastlock: destroying a held lock"), 1);
  ck_assert_int_eq(count(out, "fastlock: release of a lock not held"), 1);
}
END_TEST

static fl_rwsem_t r;

static void *write_then_spin(void *unused)
{
  (void)unused;
  ck_assert_int_eq(fl_rwsem_down_write(&r), 0);
  ck_assert_int_eq(fl_spin_lock(&a), 0);
  ck_assert_int_eq(fl_spin_unlock(&a), 0);
  ck_assert_int_eq(fl_rwsem_up_write(&r), 0);
  return NULL;
}

START_TEST(rwsem_abba_is_reported)
{
  pthread_t t;
  const char *out;

  ck_assert_int_eq(fl_rwsem_init(&r, 0), 0);
  ck_assert_int_eq(fl_spin_init(&a, 0), 0);
  ck_assert_int_eq(pthread_create(&t, NULL, write_then_spin, NULL), 0);
  ck_assert_int_eq(pthread_join(t, NULL), 0);
  /* The other order, in this thread: a read lock waits too.  */
  ck_assert_int_eq(fl_spin_lock(&a), 0);
  ck_assert_int_eq(fl_rwsem_down_read(&r), 0);
  ck_assert_int_eq(fl_rwsem_up_read(&r), 0);
  ck_assert_int_eq(fl_spin_unlock(&a), 0);
  out = checker_said();
  ck_assert_int_eq(count(out, "fastlock: possible deadlock"), 1);
  ck_assert_ptr_nonnull(strstr(out, "fl_rwsem_t"));
}
END_TEST

static void *write_once(void *unused)
{
  (void)unused;
  ck_assert_int_eq(fl_rwsem_down_write(&r), 0);
  ck_assert_int_eq(fl_rwsem_up_write(&r), 0);
  return NULL;
}

START_TEST(recursive_read_while_a_writer_waits_is_reported)
{
  struct timespec soon;
  pthread_t t;
  int i;

  ck_assert_int_eq(fl_rwsem_init(&r, 0), 0);
  ck_assert_int_eq(fl_rwsem_down_read(&r), 0);
  ck_assert_int_eq(pthread_create(&t, NULL, write_once, NULL), 0);
  /* Until the writer has said it waits (bounded: a bug fails, never
   * hangs).  */
  for (i = 0; i < 20000 && !(fl_load_relaxed(&r.count) & FL_RWSEM_WPEND); i++)
    usleep(100);
  ck_assert(fl_load_relaxed(&r.count) & FL_RWSEM_WPEND);
  /* The second read lock would wait for the writer, which waits for the
   * first: timed, so that the test ends.  */
  clock_gettime(CLOCK_MONOTONIC, &soon);
  soon.tv_nsec += 50000000;
  if (soon.tv_nsec >= 1000000000) {
    soon.tv_sec++;
    soon.tv_nsec -= 1000000000;
  }
  ck_assert_int_eq(fl_rwsem_down_read_timed(&r, CLOCK_MONOTONIC, &soon),
                   ETIMEDOUT);
  ck_assert_int_eq(fl_rwsem_up_read(&r), 0);
  ck_assert_int_eq(pthread_join(t, NULL), 0);
  ck_assert_int_eq(
      count(checker_said(), "asked for again while a writer waits"), 1);
}
END_TEST

static void *exit_holding(void *unused)
{
  (void)unused;
  ck_assert_int_eq(fl_spin_lock(&a), 0);
  return NULL;
}

START_TEST(held_at_exit_is_reported)
{
  pthread_t t;

  ck_assert_int_eq(fl_spin_init(&a, 0), 0);
  ck_assert_int_eq(pthread_create(&t, NULL, exit_holding, NULL), 0);
  ck_assert_int_eq(pthread_join(t, NULL), 0);
  ck_assert_int_eq(count(checker_said(), "fastlock: lock held at thread exit"),
                   1);
}
END_TEST

static fl_rwsem_t rw;

/* Hold rw for writing until the checker has reported (at most a minute,
 * so that a checker that stays silent fails the test instead of hanging
 * it).  */
static void *hold_until_reported(void *arg)
{
  struct timespec ms = { 0, 1000000 };
  int i;

  ck_assert_int_eq(fl_rwsem_down_write(&rw), 0);
  __atomic_store_n((int *)arg, 1, __ATOMIC_RELEASE);
  for (i = 0; i < 60000 && fl_lockdep_reports() == 0; i++)
    nanosleep(&ms, NULL);
  ck_assert_int_eq(fl_rwsem_up_write(&rw), 0);
  return NULL;
}

START_TEST(spinlock_across_blocking_wait_is_reported)
{
  struct timespec ms = { 0, 1000000 };
  pthread_t t;
  int holding = 0;

  ck_assert_int_eq(fl_spin_init(&a, 0), 0);
  ck_assert_int_eq(pthread_create(&t, NULL, hold_until_reported, &holding), 0);
  while (!__atomic_load_n(&holding, __ATOMIC_ACQUIRE))
    nanosleep(&ms, NULL);
  /* Sleeps in the kernel until the holder sees the report.  */
  ck_assert_int_eq(fl_spin_lock(&a), 0);
  ck_assert_int_eq(fl_rwsem_down_write(&rw), 0);
  ck_assert_int_eq(fl_rwsem_up_write(&rw), 0);
  ck_assert_int_eq(fl_spin_unlock(&a), 0);
  ck_assert_int_eq(pthread_join(t, NULL), 0);
  ck_assert_int_eq(
      count(checker_said(), "fastlock: spinlock held across a blocking wait"),
      1);
}
END_TEST

/* Four threads, each taking a, tb, qc in order (or a subset, some by
 * trylock) many times: contention, and nothing to report.  */
static void *torture(void *arg)
{
  long id = (long)arg;
  int i;

  for (i = 0; i < fl_test_iterations(2000); i++) {
    if ((i + id) % 3 != 0)
      ck_assert_int_eq(fl_spin_lock(&a), 0);
    else
      while (fl_spin_trylock(&a) != 0)
        sched_yield();
    if (i % 2 == 0)
      ck_assert_int_eq(fl_ticket_lock(&tb), 0);
    ck_assert_int_eq(fl_qspin_lock(&qc), 0);
    ck_assert_int_eq(fl_qspin_unlock(&qc), 0);
    if (i % 2 == 0)
      ck_assert_int_eq(fl_ticket_unlock(&tb), 0);
    ck_assert_int_eq(fl_spin_unlock(&a), 0);
    ck_assert_int_eq(fl_ticket_lock(&tb), 0);
    ck_assert_int_eq(fl_qspin_lock(&qc), 0);
    ck_assert_int_eq(fl_qspin_unlock(&qc), 0);
    ck_assert_int_eq(fl_ticket_unlock(&tb), 0);
  }
  return NULL;
}

START_TEST(ipc_abba_is_reported)
{
  pthread_t t;
  const char *out;

  ipc_setup();
  ipc_nest(ma, mb);
  ck_assert_int_eq(pthread_create(&t, NULL, ipc_nest_ba, NULL), 0);
  ck_assert_int_eq(pthread_join(t, NULL), 0);
  ck_assert_int_eq(fl_ipc_close(region), 0);
  out = checker_said();
  ck_assert_int_eq(count(out, "fastlock: possible deadlock"), 1);
  ck_assert_ptr_nonnull(strstr(out, "fl_ipc mutex"));
}
END_TEST

START_TEST(ipc_consistent_use_is_not_reported)
{
  fl_ipc_obj_t both[2];
  uint64_t abandoned;

  ipc_setup();
  both[0] = ma;
  both[1] = mb;
  /* A then B, twice, one of them with A taken recursively; then both at
   * once (no order between them); then B alone.  */
  ipc_nest(ma, mb);
  ipc_take(ma);
  ipc_nest(ma, mb);
  ck_assert_int_eq(fl_ipc_mutex_release(region, ma, NULL), 0);
  ck_assert_int_eq(
      fl_ipc_wait_all(region, 2, both, CLOCK_MONOTONIC, NULL, &abandoned), 0);
  ck_assert_int_eq(fl_ipc_mutex_release(region, ma, NULL), 0);
  ck_assert_int_eq(fl_ipc_mutex_release(region, mb, NULL), 0);
  ipc_take(mb);
  ck_assert_int_eq(fl_ipc_mutex_release(region, mb, NULL), 0);
  ck_assert_int_eq(fl_ipc_close(region), 0);
  ck_assert_str_eq(checker_said(), "");
  ck_assert_int_eq((int)fl_lockdep_reports(), 0);
}
END_TEST

START_TEST(ipc_release_not_held_is_reported)
{
  ipc_setup();
  /* Once taken and given back (the checker knows a lock it saw taken),
   * then given back again.  */
  ipc_take(ma);
  ck_assert_int_eq(fl_ipc_mutex_release(region, ma, NULL), 0);
  ck_assert_int_eq(fl_ipc_mutex_release(region, ma, NULL), EPERM);
  ck_assert_int_eq(fl_ipc_close(region), 0);
  ck_assert_int_eq(
      count(checker_said(), "fastlock: release of a lock not held"), 1);
}
END_TEST

START_TEST(torture_reports_nothing)
{
  pthread_t t[4];
  long i;

  init3();
  for (i = 0; i < 4; i++)
    ck_assert_int_eq(pthread_create(&t[i], NULL, torture, (void *)i), 0);
  for (i = 0; i < 4; i++)
    ck_assert_int_eq(pthread_join(t[i], NULL), 0);
  ck_assert_str_eq(checker_said(), "");
}
END_TEST

int main(void)
{
  Suite *s = suite_create("lockdep");
  TCase *tc = tcase_create("lockdep");

  tcase_add_checked_fixture(tc, setup, NULL);
  tcase_set_timeout(tc, 120);
  tcase_set_tags(tc, FL_TAG_THREADS);
  tcase_add_test(tc, abba_is_reported_once);
  tcase_add_test(tc, abc_cycle_is_reported);
  tcase_add_test(tc, consistent_nesting_is_not_reported);
  tcase_add_test(tc, misuse_is_reported);
  tcase_add_test(tc, held_at_exit_is_reported);
  tcase_add_test(tc, spinlock_across_blocking_wait_is_reported);
  tcase_add_test(tc, torture_reports_nothing);
  tcase_add_test(tc, rwsem_abba_is_reported);
  tcase_add_test(tc, recursive_read_while_a_writer_waits_is_reported);
  tcase_add_test(tc, ipc_abba_is_reported);
  tcase_add_test(tc, ipc_consistent_use_is_not_reported);
  tcase_add_test(tc, ipc_release_not_held_is_reported);
  suite_add_tcase(s, tc);
  return fl_check_run(s);
}
