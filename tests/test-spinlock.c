/* tests/test-spinlock.c: fl_spinlock_t, the test-and-test-and-set lock.
 *
 * Every function is tested twice where it has two forms: through the
 * header's macros (the inline fastpath, or the library on an annotated
 * build) and through the library's exported function by name.  */
#include "config.h"

#include <fastlock/spinlock.h>

#include "spinlock/internal.h"

#include "fl-check.h"
#include "test-spinlock-torture.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* The two ways in: _i == 0 the macros, _i == 1 the library by name.  */
static int spin_lock(fl_spinlock_t *l, int by_name)
{
  return by_name ? (fl_spin_lock)(l) : fl_spin_lock(l);
}

static int spin_trylock(fl_spinlock_t *l, int by_name)
{
  return by_name ? (fl_spin_trylock)(l) : fl_spin_trylock(l);
}

static int spin_unlock(fl_spinlock_t *l, int by_name)
{
  return by_name ? (fl_spin_unlock)(l) : fl_spin_unlock(l);
}

START_TEST(size_and_zero_init)
{
  fl_spinlock_t l = FL_SPINLOCK_INITIALIZER;

  ck_assert_uint_eq(sizeof(fl_spinlock_t), 4);
  ck_assert_int_eq(l.word, 0);
  ck_assert_int_eq(spin_lock(&l, _i), 0);
  ck_assert_int_eq(l.word, 1);
  ck_assert_int_eq(spin_unlock(&l, _i), 0);
  ck_assert_int_eq(l.word, 0);
  ck_assert_int_eq(fl_spin_destroy(&l), 0);
}
END_TEST

START_TEST(init_flags)
{
  fl_spinlock_t l;

  ck_assert_int_eq(fl_spin_init(&l, 0), 0);
  ck_assert_int_eq(fl_spin_destroy(&l), 0);
  ck_assert_int_eq(fl_spin_init(&l, FL_PSHARED),
                   FL_SPIN_PSHARED_WORKS ? 0 : ENOTSUP);
  if (!FL_SPIN_PSHARED_WORKS)
    ck_assert_int_eq(fl_spin_init(&l, 0), 0);
  /* A bad flag is refused before the lock is touched.  */
  ck_assert_int_eq(spin_lock(&l, 0), 0);
  ck_assert_int_eq(fl_spin_init(&l, 0x2), EINVAL);
  ck_assert_int_eq(fl_spin_init(&l, 0x100 | FL_PSHARED), EINVAL);
  ck_assert_int_eq(fl_spin_init(&l, 0x80000000u), EINVAL);
  ck_assert_int_eq(l.word, 1);
  ck_assert_int_eq(spin_unlock(&l, 0), 0);
  ck_assert_int_eq(fl_spin_destroy(&l), 0);
}
END_TEST

START_TEST(trylock_and_bad_unlock)
{
  fl_spinlock_t l;

  ck_assert_int_eq(fl_spin_init(&l, 0), 0);
  ck_assert_int_eq(spin_unlock(&l, _i), EPERM);
  ck_assert_int_eq(l.word, 0);
  ck_assert_int_eq(spin_trylock(&l, _i), 0);
  ck_assert_int_eq(spin_trylock(&l, _i), EBUSY);
  ck_assert_int_eq(fl_spin_destroy(&l), EBUSY);
  ck_assert_int_eq(l.word, 1);
  ck_assert_int_eq(spin_unlock(&l, _i), 0);
  ck_assert_int_eq(spin_unlock(&l, _i), EPERM);
  ck_assert_int_eq(l.word, 0);
  ck_assert_int_eq(fl_spin_destroy(&l), 0);
}
END_TEST

/* ---- another thread holds it ---------------------------------------- */

struct holder {
  fl_spinlock_t *l;
  int by_name;
  int32_t phase;     /* 1: holds it; 2: told to let go */
  int rc_lock, rc_unlock;
};

static int holder_holds(void *p)
{
  return fl_load_acquire(&((struct holder *)p)->phase) == 1;
}

static void *hold_until_told(void *p)
{
  struct holder *h = p;

  h->rc_lock = spin_lock(h->l, h->by_name);
  fl_store_release(&h->phase, 1);
  while (fl_load_acquire(&h->phase) != 2)
    sched_yield();
  h->rc_unlock = spin_unlock(h->l, h->by_name);
  return NULL;
}

START_TEST(held_by_another_thread)
{
  fl_spinlock_t l;
  struct holder h = { &l, _i, 0, -1, -1 };
  pthread_t t;

  ck_assert_int_eq(fl_spin_init(&l, 0), 0);
  FL_VG_HIDE(&h.phase, sizeof h.phase);
  ck_assert_int_eq(pthread_create(&t, NULL, hold_until_told, &h), 0);
  fl_test_wait_until(holder_holds, &h);
  ck_assert_int_eq(spin_trylock(&l, _i), EBUSY);
  ck_assert_int_eq(fl_spin_destroy(&l), EBUSY);
  ck_assert_int_eq(fl_load_relaxed(&l.word), 1);
  fl_store_release(&h.phase, 2);
  pthread_join(t, NULL);
  ck_assert_int_eq(h.rc_lock, 0);
  ck_assert_int_eq(h.rc_unlock, 0);
  ck_assert_int_eq(l.word, 0);
  ck_assert_int_eq(fl_spin_destroy(&l), 0);
}
END_TEST

/* ---- FL_PSHARED ------------------------------------------------------ */

struct shared_count {
  fl_spinlock_t lock;
  long counter;
};

static void count_under_lock(struct shared_count *s, long n)
{
  long i;

  for (i = 0; i < n; i++) {
    fl_spin_lock(&s->lock);
    s->counter++;
    fl_spin_unlock(&s->lock);
  }
}

/* Two processes, one lock in shared memory.  */
START_TEST(pshared_between_processes)
{
  struct shared_count *s;
  long n = fl_test_iterations(100000);
  int status;
  pid_t pid;

  if (!FL_SPIN_PSHARED_WORKS)
    return;
  s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
           -1, 0);
  ck_assert(s != MAP_FAILED);
  ck_assert_int_eq(fl_spin_init(&s->lock, FL_PSHARED), 0);
  s->counter = 0;
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    count_under_lock(s, n);
    _exit(0);
  }
  count_under_lock(s, n);
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ck_assert_int_eq(s->counter, 2 * n);
  ck_assert_int_eq(s->lock.word, 0);
  ck_assert_int_eq(fl_spin_destroy(&s->lock), 0);
  munmap(s, sizeof *s);
}
END_TEST

/* ---- torture --------------------------------------------------------- */

static int t_lock(void *l) { return fl_spin_lock((fl_spinlock_t *)l); }
static int t_trylock(void *l) { return fl_spin_trylock((fl_spinlock_t *)l); }
static int t_unlock(void *l) { return fl_spin_unlock((fl_spinlock_t *)l); }

START_TEST(torture)
{
  static fl_spinlock_t l;
  struct fl_torture_lock t = {
    .name = "fl_spinlock_t",
    .lock = &l,
    .lock_fn = t_lock,
    .trylock_fn = t_trylock,
    .unlock_fn = t_unlock,
    .plain = 1,
    .yield_every = 64,
  };
  struct fl_torture_report r;
  long n = fl_test_iterations(20000);

  ck_assert_int_eq(fl_spin_init(&l, 0), 0);
  fl_torture(&t, 4, n, &r);
  fl_torture_assert_clean(&r, 4 * n);
  ck_assert_int_eq(l.word, 0);
  ck_assert_int_eq(fl_spin_destroy(&l), 0);
}
END_TEST

START_TEST(negative_control)
{
  fl_torture_negative_control(4, fl_test_iterations(3000));
}
END_TEST

static Suite *spinlock_suite(void)
{
  Suite *s = suite_create("fl_spinlock_t (" FL_ARCH_ATOMICS_NAME ")");
  TCase *single = tcase_create("one thread");
  TCase *threads = tcase_create("threads");

  tcase_add_loop_test(single, size_and_zero_init, 0, 2);
  tcase_add_test(single, init_flags);
  tcase_add_loop_test(single, trylock_and_bad_unlock, 0, 2);
  suite_add_tcase(s, single);

  tcase_set_tags(threads, FL_TAG_THREADS);
  tcase_set_timeout(threads, 120);
  tcase_add_loop_test(threads, held_by_another_thread, 0, 2);
  tcase_add_test(threads, pshared_between_processes);
  tcase_add_test(threads, torture);
  tcase_add_test(threads, negative_control);
  suite_add_tcase(s, threads);
  return s;
}

int main(void)
{
  return fl_check_run(spinlock_suite());
}
