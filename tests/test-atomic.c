/* tests/test-atomic.c: every operation of the atomic shim against its
 * builtin twin, then under several threads at once.
 *
 * On an asm build fl_* are the arch header's hand-written asm and
 * fl_generic_* the compiler's builtins: the single-threaded cases check
 * that the two agree on value and return over the edge values, the
 * threaded ones that the asm really is atomic and really orders memory.
 * On a builtin build both sides are the builtins, and the threaded tests
 * still check the builtins.  */
#include "config.h"

#include <fastlock/arch/atomic.h>

#include "sys/annotate.h"
#include "sys/cpu.h"

#include "fl-check.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const int32_t edge[] = {
  0,
  1,
  -1,
  2,
  -2,
  INT32_MAX,
  INT32_MIN,
  INT32_MAX - 1,
  INT32_MIN + 1,
  0x10000,
  -0x10000,
  0x12345678,
  (int32_t)0x87654321,
};
#define NEDGE ((int)(sizeof edge / sizeof edge[0]))

typedef int32_t (*rmw_fn)(int32_t *, int32_t);
typedef int (*neg_fn)(int32_t *, int32_t);
typedef int32_t (*cas_fn)(int32_t *, int32_t, int32_t);

struct rmw_case {
  const char *name;
  rmw_fn op, twin;
};

static const struct rmw_case rmw_cases[] = {
  { "fetch_add_relaxed", fl_atomic_fetch_add_relaxed,
    fl_generic_fetch_add_relaxed },
  { "fetch_add_acquire", fl_atomic_fetch_add_acquire,
    fl_generic_fetch_add_acquire },
  { "fetch_add_release", fl_atomic_fetch_add_release,
    fl_generic_fetch_add_release },
  { "fetch_add_acq_rel", fl_atomic_fetch_add_acq_rel,
    fl_generic_fetch_add_acq_rel },
  { "xchg_relaxed", fl_atomic_xchg_relaxed, fl_generic_xchg_relaxed },
  { "xchg_acquire", fl_atomic_xchg_acquire, fl_generic_xchg_acquire },
  { "xchg_release", fl_atomic_xchg_release, fl_generic_xchg_release },
  { "xchg_acq_rel", fl_atomic_xchg_acq_rel, fl_generic_xchg_acq_rel },
  { "fetch_or_relaxed", fl_atomic_fetch_or_relaxed,
    fl_generic_fetch_or_relaxed },
  { "fetch_or_acquire", fl_atomic_fetch_or_acquire,
    fl_generic_fetch_or_acquire },
  { "fetch_or_release", fl_atomic_fetch_or_release,
    fl_generic_fetch_or_release },
  { "fetch_or_acq_rel", fl_atomic_fetch_or_acq_rel,
    fl_generic_fetch_or_acq_rel },
  { "fetch_and_relaxed", fl_atomic_fetch_and_relaxed,
    fl_generic_fetch_and_relaxed },
  { "fetch_and_acquire", fl_atomic_fetch_and_acquire,
    fl_generic_fetch_and_acquire },
  { "fetch_and_release", fl_atomic_fetch_and_release,
    fl_generic_fetch_and_release },
  { "fetch_and_acq_rel", fl_atomic_fetch_and_acq_rel,
    fl_generic_fetch_and_acq_rel },
};
#define NRMW ((int)(sizeof rmw_cases / sizeof rmw_cases[0]))

struct neg_case {
  const char *name;
  neg_fn op, twin;
};

static const struct neg_case neg_cases[] = {
  { "add_negative_acquire", fl_atomic_add_negative_acquire,
    fl_generic_add_negative_acquire },
  { "add_negative_release", fl_atomic_add_negative_release,
    fl_generic_add_negative_release },
#if FL_ATOMICS_ASM && FL_ARCH_X86
  /* Both x86 shapes, whichever --with-x86-release chose.  */
  { "x86 lock xadd", fl_x86_add_negative_xadd,
    fl_generic_add_negative_release },
  { "x86 lock sub; js", fl_x86_add_negative_sub,
    fl_generic_add_negative_release },
#endif
};
#define NNEG ((int)(sizeof neg_cases / sizeof neg_cases[0]))

struct cas_case {
  const char *name;
  cas_fn op, twin;
};

static const struct cas_case cas_cases[] = {
  { "cmpxchg_relaxed", fl_atomic_cmpxchg_relaxed, fl_generic_cmpxchg_relaxed },
  { "cmpxchg_acquire", fl_atomic_cmpxchg_acquire, fl_generic_cmpxchg_acquire },
  { "cmpxchg_release", fl_atomic_cmpxchg_release, fl_generic_cmpxchg_release },
  { "cmpxchg_acq_rel", fl_atomic_cmpxchg_acq_rel, fl_generic_cmpxchg_acq_rel },
};
#define NCAS ((int)(sizeof cas_cases / sizeof cas_cases[0]))

/* ---- single-threaded: asm against builtin twin over edge values ---- */

/* On an asm build every operation is the arch header's asm or derived
 * from it by fallback.h, never the builtin itself: an arch header that
 * defined an operation but did not mark it would get the builtin, and
 * the comparisons below would compare the builtin with itself.  */
START_TEST(asm_build_uses_no_builtin)
{
  int i;

  if (!FL_ATOMICS_ASM)
    return;
  for (i = 0; i < NRMW; i++)
    ck_assert_msg(rmw_cases[i].op != rmw_cases[i].twin, "%s is the builtin",
                  rmw_cases[i].name);
  for (i = 0; i < NNEG; i++)
    ck_assert_msg(neg_cases[i].op != neg_cases[i].twin, "%s is the builtin",
                  neg_cases[i].name);
  for (i = 0; i < NCAS; i++)
    ck_assert_msg(cas_cases[i].op != cas_cases[i].twin, "%s is the builtin",
                  cas_cases[i].name);
  ck_assert(fl_load_relaxed != fl_generic_load_relaxed);
  ck_assert(fl_load_acquire != fl_generic_load_acquire);
  ck_assert(fl_store_relaxed != fl_generic_store_relaxed);
  ck_assert(fl_store_release != fl_generic_store_release);
  ck_assert(fl_smp_mb != fl_generic_smp_mb);
  ck_assert(fl_smp_rmb != fl_generic_smp_rmb);
  ck_assert(fl_smp_wmb != fl_generic_smp_wmb);
}
END_TEST

START_TEST(rmw_matches_twin)
{
  const struct rmw_case *c = &rmw_cases[_i];
  int a, b;

  for (a = 0; a < NEDGE; a++)
    for (b = 0; b < NEDGE; b++) {
      int32_t x = edge[a], y = edge[a];
      int32_t rx = c->op(&x, edge[b]);
      int32_t ry = c->twin(&y, edge[b]);
      ck_assert_msg(rx == ry && x == y,
                    "%s(%d, %d): returned %d, left %d; builtin %d, %d", c->name,
                    edge[a], edge[b], rx, x, ry, y);
    }
}
END_TEST

START_TEST(add_negative_matches_twin)
{
  const struct neg_case *c = &neg_cases[_i];
  int a, b;

  for (a = 0; a < NEDGE; a++)
    for (b = 0; b < NEDGE; b++) {
      int32_t x = edge[a], y = edge[a];
      int rx = c->op(&x, edge[b]) != 0;
      int ry = c->twin(&y, edge[b]) != 0;
      ck_assert_msg(rx == ry && x == y,
                    "%s(%d, %d): said %d, left %d; builtin %d, %d", c->name,
                    edge[a], edge[b], rx, x, ry, y);
    }
}
END_TEST

START_TEST(cmpxchg_matches_twin)
{
  const struct cas_case *c = &cas_cases[_i];
  int a, b, n;

  for (a = 0; a < NEDGE; a++)
    for (b = 0; b < NEDGE; b++)
      for (n = 0; n < NEDGE; n++) {
        /* b indexes the expected value: b == a is the success case.  */
        int32_t x = edge[a], y = edge[a];
        int32_t rx = c->op(&x, edge[b], edge[n]);
        int32_t ry = c->twin(&y, edge[b], edge[n]);
        ck_assert_msg(
            rx == ry && x == y,
            "%s(%d, expect %d, new %d): returned %d, left %d; builtin %d, %d",
            c->name, edge[a], edge[b], edge[n], rx, x, ry, y);
      }
}
END_TEST

START_TEST(loads_and_stores_match_twin)
{
  int a;

  for (a = 0; a < NEDGE; a++) {
    int32_t x = 0, y = 0;
    fl_store_relaxed(&x, edge[a]);
    fl_generic_store_relaxed(&y, edge[a]);
    ck_assert_int_eq(x, y);
    fl_store_release(&x, ~edge[a]);
    fl_generic_store_release(&y, ~edge[a]);
    ck_assert_int_eq(x, y);
    ck_assert_int_eq(fl_load_relaxed(&x), fl_generic_load_relaxed(&y));
    ck_assert_int_eq(fl_load_acquire(&x), fl_generic_load_acquire(&y));
  }
}
END_TEST

/* The ops must leave the neighbouring words alone (a 32-bit op done
 * with a wider store, or at the wrong offset, would not).  */
START_TEST(neighbours_untouched)
{
  int32_t w[3] = { 0x5a5a5a5a, 7, (int32_t)0xa5a5a5a5 };

  fl_atomic_fetch_add_acq_rel(&w[1], -8);
  fl_atomic_xchg_acq_rel(&w[1], INT32_MIN);
  fl_atomic_cmpxchg_acq_rel(&w[1], INT32_MIN, INT32_MAX);
  fl_atomic_add_negative_release(&w[1], 1);
  fl_atomic_fetch_or_acq_rel(&w[1], -1);
  fl_atomic_fetch_and_acq_rel(&w[1], 0);
  fl_store_release(&w[1], -1);
  ck_assert_int_eq(w[0], 0x5a5a5a5a);
  ck_assert_int_eq(w[1], -1);
  ck_assert_int_eq(w[2], (int32_t)0xa5a5a5a5);
}
END_TEST

/* ---- threaded: atomicity and ordering ---- */

#define NTHREADS 4

struct torture {
  int32_t counter;    /* updated only with the shim's RMWs */
  int32_t lock;       /* an xchg test-and-set lock ... */
  int64_t plain;      /* ... protecting this plain counter */
  int32_t balance;    /* add_negative -1 then +1: ends at 0 */
  int32_t bits;       /* each thread sets and clears its own bit */
  int32_t next_bit;   /* hands out those bits */
  int32_t bit_errors; /* a bit found in the wrong state */
  long iters;
};

/* The test-and-set lock, annotated like a real primitive so that the
 * tools see the plain counter as protected.  */
static void torture_lock(struct torture *t, int32_t (*xchg)(int32_t *, int32_t))
{
  FL_TSAN_PRE_LOCK(&t->lock, 0);
  while (xchg(&t->lock, 1) != 0)
    while (fl_load_relaxed(&t->lock) != 0)
      fl_cpu_relax();
  FL_TSAN_POST_LOCK(&t->lock, 0);
  FL_VG_RWLOCK_ACQUIRED(&t->lock, 1);
}

/* Release by store_release, or by xchg_release when by_xchg.  */
static void torture_unlock(struct torture *t, int by_xchg)
{
  FL_VG_RWLOCK_RELEASED(&t->lock, 1);
  FL_TSAN_PRE_UNLOCK(&t->lock, 0);
  if (by_xchg)
    fl_atomic_xchg_release(&t->lock, 0);
  else
    fl_store_release(&t->lock, 0);
  FL_TSAN_POST_UNLOCK(&t->lock, 0);
}

/* Set this thread's bit with fetch_or, clear it with fetch_and: each
 * must find it in the state the thread left it in, whatever the other
 * threads do to their bits of the same word.  */
static void torture_bit(struct torture *t, int32_t bit,
                        int32_t (*or_op)(int32_t *, int32_t),
                        int32_t (*and_op)(int32_t *, int32_t))
{
  if (or_op(&t->bits, bit) & bit)
    fl_atomic_fetch_add_relaxed(&t->bit_errors, 1);
  if (!(and_op(&t->bits, ~bit) & bit))
    fl_atomic_fetch_add_relaxed(&t->bit_errors, 1);
}

static void *torture_thread(void *p)
{
  struct torture *t = *(struct torture **)p;
  int32_t bit = (int32_t)1 << fl_atomic_fetch_add_relaxed(&t->next_bit, 1);
  long i;

  for (i = 0; i < t->iters; i++) {
    int32_t old;

    fl_atomic_fetch_add_relaxed(&t->counter, 1);
    fl_atomic_fetch_add_acquire(&t->counter, 1);
    fl_atomic_fetch_add_release(&t->counter, 1);
    fl_atomic_fetch_add_acq_rel(&t->counter, 1);

    /* cmpxchg increment loops, one per order.  */
    old = fl_load_relaxed(&t->counter);
    while (fl_atomic_cmpxchg_relaxed(&t->counter, old, old + 1) != old)
      old = fl_load_relaxed(&t->counter);
    old = fl_load_relaxed(&t->counter);
    while (fl_atomic_cmpxchg_acquire(&t->counter, old, old + 1) != old)
      old = fl_load_relaxed(&t->counter);
    old = fl_load_relaxed(&t->counter);
    while (fl_atomic_cmpxchg_release(&t->counter, old, old + 1) != old)
      old = fl_load_relaxed(&t->counter);
    old = fl_load_relaxed(&t->counter);
    while (fl_atomic_cmpxchg_acq_rel(&t->counter, old, old + 1) != old)
      old = fl_load_relaxed(&t->counter);

    /* add_negative: -1 then +1, so the word swings around zero (the
     * sign flag's edge) and must end at zero.  */
    fl_atomic_add_negative_acquire(&t->balance, -1);
    fl_atomic_add_negative_release(&t->balance, 1);

    torture_bit(t, bit, fl_atomic_fetch_or_relaxed,
                fl_atomic_fetch_and_relaxed);
    torture_bit(t, bit, fl_atomic_fetch_or_acquire,
                fl_atomic_fetch_and_release);
    torture_bit(t, bit, fl_atomic_fetch_or_acq_rel,
                fl_atomic_fetch_and_acq_rel);
    torture_bit(t, bit, fl_atomic_fetch_or_release,
                fl_atomic_fetch_and_acquire);

    /* Mutual exclusion from an xchg test-and-set lock: a lost update of
     * the plain counter means the lock failed to exclude or to order. */
    torture_lock(t, fl_atomic_xchg_acquire);
    t->plain++;
    torture_unlock(t, 0);

    torture_lock(t, fl_atomic_xchg_acq_rel);
    t->plain++;
    torture_unlock(t, 1);
  }
  return NULL;
}

START_TEST(threads_lose_no_update)
{
  static struct torture t;
  struct torture *args[NTHREADS];
  int i;

  t.counter = 0;
  t.lock = 0;
  t.plain = 0;
  t.balance = 0;
  t.bits = t.next_bit = t.bit_errors = 0;
  t.iters = fl_test_iterations(100000);
  /* The words updated only by the shim's atomics are synchronisation,
   * not data: hide them from the Valgrind tools.  */
  FL_VG_HIDE(&t.counter, sizeof t.counter);
  FL_VG_HIDE(&t.balance, sizeof t.balance);
  FL_VG_HIDE(&t.bits, sizeof t.bits);
  FL_VG_HIDE(&t.next_bit, sizeof t.next_bit);
  FL_VG_HIDE(&t.bit_errors, sizeof t.bit_errors);
  FL_VG_HIDE(&t.lock, sizeof t.lock);
  FL_VG_RWLOCK_CREATE(&t.lock);
  FL_TSAN_CREATE(&t.lock);
  for (i = 0; i < NTHREADS; i++)
    args[i] = &t;
  fl_test_threads(NTHREADS, torture_thread, args, sizeof args[0]);
  ck_assert_int_eq(t.counter, (int32_t)(8 * NTHREADS * t.iters));
  ck_assert_int_eq(t.plain, 2 * NTHREADS * t.iters);
  ck_assert_int_eq(t.balance, 0);
  ck_assert_int_eq(t.bits, 0);
  ck_assert_int_eq(t.bit_errors, 0);
  ck_assert_int_eq(t.lock, 0);
}
END_TEST

/* Store buffering: each thread stores to its own flag, fences, and
 * loads the other's.  Without a store->load barrier both may read the old
 * values (x86 does this for real, through its store buffer); fl_smp_mb
 * must forbid it.  The two threads meet at a barrier before each round so
 * that their stores race.  */
struct sb {
  int32_t flag[2];
  int32_t seen[2];
  int32_t arrived; /* barrier: 2 per round */
  long rounds;
  long both_missed;
};

static void sb_meet(struct sb *s, int32_t target)
{
  fl_atomic_fetch_add_acq_rel(&s->arrived, 1);
  while (fl_load_acquire(&s->arrived) < target)
    fl_cpu_relax();
}

static void *sb_thread(void *p)
{
  struct sb *s = ((struct sb **)p)[0];
  int me = ((struct sb **)p)[1] != NULL;
  long round;

  for (round = 1; round <= s->rounds; round++) {
    sb_meet(s, (int32_t)(4 * round - 2));
    fl_store_relaxed(&s->flag[me], (int32_t)round);
    fl_smp_mb();
    fl_store_relaxed(&s->seen[me], fl_load_relaxed(&s->flag[!me]));
    sb_meet(s, (int32_t)(4 * round));
    /* Each thread loaded the other's flag after storing its own: at
     * least one of them must have seen this round's store.  */
    if (me == 0 && fl_load_relaxed(&s->seen[0]) != (int32_t)round
        && fl_load_relaxed(&s->seen[1]) != (int32_t)round)
      s->both_missed++;
  }
  return NULL;
}

START_TEST(smp_mb_orders_store_then_load)
{
  static struct sb s;
  struct sb *args[2][2] = { { &s, NULL }, { &s, &s } };

  memset(&s, 0, sizeof s);
  s.rounds = fl_test_iterations(100000);
  FL_VG_HIDE(s.flag, sizeof s.flag);
  FL_VG_HIDE(s.seen, sizeof s.seen);
  FL_VG_HIDE(&s.arrived, sizeof s.arrived);
  fl_test_threads(2, sb_thread, args, sizeof args[0]);
  ck_assert_msg(
      s.both_missed == 0,
      "fl_smp_mb let both loads pass both stores in %ld of %ld rounds",
      s.both_missed, s.rounds);
}
END_TEST

/* Message passing: data, then (wmb or release) a flag; the reader sees
 * the flag, then (rmb or acquire) must see the data.  */
struct mp {
  int32_t data, flag;
  long rounds;
  long stale;
};

static void *mp_writer(struct mp *m)
{
  long i;

  for (i = 1; i <= m->rounds; i++) {
    while (fl_load_acquire(&m->flag) != 0)
      fl_cpu_relax();
    fl_store_relaxed(&m->data, (int32_t)i);
    if (i & 1)
      fl_store_release(&m->flag, 1);
    else {
      fl_smp_wmb();
      fl_store_relaxed(&m->flag, 1);
    }
  }
  return NULL;
}

static void *mp_reader(struct mp *m)
{
  long i;

  for (i = 1; i <= m->rounds; i++) {
    int32_t d;
    if (i & 1)
      while (fl_load_acquire(&m->flag) == 0)
        fl_cpu_relax();
    else {
      while (fl_load_relaxed(&m->flag) == 0)
        fl_cpu_relax();
      fl_smp_rmb();
    }
    d = fl_load_relaxed(&m->data);
    if (d != (int32_t)i)
      m->stale++;
    fl_store_release(&m->flag, 0);
  }
  return NULL;
}

static void *mp_dispatch(void *p)
{
  struct mp **a = p;
  return a[1] != NULL ? mp_writer(a[0]) : mp_reader(a[0]);
}

START_TEST(release_acquire_and_wmb_rmb_pass_messages)
{
  static struct mp m;
  struct mp *args[2][2] = { { &m, &m }, { &m, NULL } };

  m.data = m.flag = 0;
  m.stale = 0;
  m.rounds = fl_test_iterations(50000);
  FL_VG_HIDE(&m.data, sizeof m.data);
  FL_VG_HIDE(&m.flag, sizeof m.flag);
  fl_test_threads(2, mp_dispatch, args, sizeof args[0]);
  ck_assert_msg(m.stale == 0, "%ld of %ld messages read stale data", m.stale,
                m.rounds);
}
END_TEST

static Suite *atomic_suite(void)
{
  Suite *s = suite_create("atomic (" FL_ARCH_ATOMICS_NAME ")");
  TCase *single = tcase_create("against builtin twin");
  TCase *threads = tcase_create("threads");

  tcase_add_test(single, asm_build_uses_no_builtin);
  tcase_add_loop_test(single, rmw_matches_twin, 0, NRMW);
  tcase_add_loop_test(single, add_negative_matches_twin, 0, NNEG);
  tcase_add_loop_test(single, cmpxchg_matches_twin, 0, NCAS);
  tcase_add_test(single, loads_and_stores_match_twin);
  tcase_add_test(single, neighbours_untouched);
  suite_add_tcase(s, single);

  tcase_set_tags(threads, FL_TAG_THREADS);
  tcase_set_timeout(threads, 120);
  tcase_add_test(threads, threads_lose_no_update);
  tcase_add_test(threads, smp_mb_orders_store_then_load);
  tcase_add_test(threads, release_acquire_and_wmb_rmb_pass_messages);
  suite_add_tcase(s, threads);
  return s;
}

int main(void)
{
  printf("fastlock shim under test: %s (%s)\n", FL_ARCH_ATOMICS_NAME,
         FL_CONFIG_SUMMARY);
  return fl_check_run(atomic_suite());
}
