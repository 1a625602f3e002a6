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

FL_TORTURE_ADAPTERS(spin, fl_spinlock_t)

static const struct fl_torture_lock way[2] = FL_TORTURE_WAYS(spin);

START_TEST(size_and_zero_init)
{
  fl_spinlock_t l = FL_SPINLOCK_INITIALIZER;

  ck_assert_uint_eq(sizeof(fl_spinlock_t), 4);
  ck_assert_int_eq(l.word, 0);
  ck_assert_int_eq(way[_i].lock_fn(&l), 0);
  ck_assert_int_eq(l.word, 1);
  ck_assert_int_eq(way[_i].unlock_fn(&l), 0);
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
  ck_assert_int_eq(way[0].lock_fn(&l), 0);
  ck_assert_int_eq(fl_spin_init(&l, 0x2), EINVAL);
  ck_assert_int_eq(fl_spin_init(&l, 0x100 | FL_PSHARED), EINVAL);
  ck_assert_int_eq(fl_spin_init(&l, 0x80000000u), EINVAL);
  ck_assert_int_eq(l.word, 1);
  ck_assert_int_eq(way[0].unlock_fn(&l), 0);
  ck_assert_int_eq(fl_spin_destroy(&l), 0);
}
END_TEST

START_TEST(trylock_and_bad_unlock)
{
  fl_spinlock_t l;

  ck_assert_int_eq(fl_spin_init(&l, 0), 0);
  fl_test_misuse(&way[_i], &l);
  ck_assert_int_eq(l.word, 0);
  ck_assert_int_eq(way[_i].trylock_fn(&l), 0);
  ck_assert_int_eq(l.word, 1);
  ck_assert_int_eq(way[_i].unlock_fn(&l), 0);
  ck_assert_int_eq(fl_spin_destroy(&l), 0);
}
END_TEST

/* ---- another thread holds it ---------------------------------------- */

struct holder {
  fl_spinlock_t *l;
  int by_name;
  int32_t phase; /* 1: holds it; 2: told to let go */
  int rc_lock, rc_unlock;
};

static int holder_holds(void *p)
{
  return fl_load_acquire(&((struct holder *)p)->phase) == 1;
}

static void *hold_until_told(void *p)
{
  struct holder *h = p;

  h->rc_lock = way[h->by_name].lock_fn(h->l);
  fl_store_release(&h->phase, 1);
  while (fl_load_acquire(&h->phase) != 2)
    sched_yield();
  h->rc_unlock = way[h->by_name].unlock_fn(h->l);
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
  ck_assert_int_eq(way[_i].trylock_fn(&l), EBUSY);
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

/* ---- FL_PSHARED, torture ------------------------------------------- */

/* Two processes, one lock in shared memory.  */
START_TEST(pshared_between_processes)
{
  struct fl_torture_lock t = { .name = "fl_spinlock_t", FL_TORTURE_OPS(spin) };

  if (FL_SPIN_PSHARED_WORKS)
    fl_test_pshared(&t, fl_test_iterations(100000));
}
END_TEST

START_TEST(torture)
{
  static fl_spinlock_t l;
  struct fl_torture_lock t = {
    .name = "fl_spinlock_t",
    .lock = &l,
    FL_TORTURE_OPS(spin),
    .plain = 1,
    .yield_every = 64,
  };

  ck_assert_int_eq(fl_spin_init(&l, 0), 0);
  fl_torture_check(&t, 4, fl_test_iterations(20000));
}
END_TEST

static Suite *spinlock_suite(void)
{
  TCase *single, *threads;
  Suite *s = fl_spin_suite("fl_spinlock_t (" FL_ARCH_ATOMICS_NAME ")", &single,
                           &threads);

  tcase_add_loop_test(single, size_and_zero_init, 0, 2);
  tcase_add_test(single, init_flags);
  tcase_add_loop_test(single, trylock_and_bad_unlock, 0, 2);

  tcase_add_loop_test(threads, held_by_another_thread, 0, 2);
  tcase_add_test(threads, pshared_between_processes);
  tcase_add_test(threads, torture);
  return s;
}

int main(void)
{
  return fl_check_run(spinlock_suite());
}
