/* tests/test-counter.c: every counter function under every strategy, the
 * rseq fallback, the folding and the limits of the per-slot deltas, and
 * thread exit.  The threaded torture with signal handlers is in
 * tests/test-counter-torture.c.
 *
 * The loop tests run over strategies[]: the four real ones and AUTO.  */
#include "config.h"

#include <fastlock/counter.h>

#include "counters/counter-internal.h"
#include "sys/annotate.h"

#include "fl-check.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define B FL_COUNTER_BATCH

static const int strategies[] = {
  FL_COUNTER_SHARED,
  FL_COUNTER_PERCPU_ATOMIC,
  FL_COUNTER_PERTHREAD_SIGSAFE,
  FL_COUNTER_PERCPU_RSEQ,
  FL_COUNTER_AUTO,
};
#define NSTRATEGIES ((int)(sizeof strategies / sizeof strategies[0]))

/* What init(strategy) must turn into on this host.  */
static int expected_strategy(int strategy)
{
  switch (strategy) {
    case FL_COUNTER_AUTO:
      if (fl_counter_rseq_usable())
        return FL_COUNTER_PERCPU_RSEQ;
      return fl_counter_possible_cpus() > 1 ? FL_COUNTER_PERCPU_ATOMIC
                                            : FL_COUNTER_SHARED;
    case FL_COUNTER_PERCPU_RSEQ:
      return fl_counter_rseq_usable() ? FL_COUNTER_PERCPU_RSEQ
                                      : FL_COUNTER_PERCPU_ATOMIC;
    default:
      return strategy;
  }
}

static int is_percpu(const fl_counter_t *c)
{
  return fl_counter_strategy(c) == FL_COUNTER_PERCPU_ATOMIC
         || fl_counter_strategy(c) == FL_COUNTER_PERCPU_RSEQ;
}

static void init_ok(fl_counter_t *c, int strategy)
{
  ck_assert_int_eq(fl_counter_init(c, strategy), 0);
  ck_assert_int_eq(fl_counter_strategy(c), expected_strategy(strategy));
}

static int64_t slot_value(const fl_counter_t *c, uint32_t i)
{
  return __atomic_load_n(fl_counter_slot(c, i), __ATOMIC_RELAXED);
}

/* The sum of the per-CPU or the calling thread's slots.  */
static int64_t slots_total(const fl_counter_t *c)
{
  int64_t t = 0;
  uint32_t i;
  int32_t *self;

  if (is_percpu(c)) {
    for (i = 0; i < c->nslots; i++)
      t += slot_value(c, i);
  } else if (fl_counter_strategy(c) == FL_COUNTER_PERTHREAD_SIGSAFE) {
    self = fl_counter_perthread_slot_of_self(c);
    if (self != NULL)
      t = *self;
  }
  return t;
}

/* fl_counter_read()'s documented error bound (<fastlock/counter.h>) once
 * every add has returned and no sum is running: the slots left over,
 * each below the batch; for PERCPU_RSEQ below twice the batch, since a
 * fold after a migration takes the slot of the CPU it runs on (repeated
 * migrations between add and fold could leave more, never seen here);
 * for PERTHREAD_SIGSAFE one slot per live thread that has added.  */
static int64_t read_error_bound(const fl_counter_t *c, int live_threads)
{
  switch (fl_counter_strategy(c)) {
    case FL_COUNTER_PERCPU_ATOMIC:
      return (B - 1) * (int64_t)c->nslots;
    case FL_COUNTER_PERCPU_RSEQ:
      return (2 * B - 2) * (int64_t)c->nslots;
    case FL_COUNTER_PERTHREAD_SIGSAFE:
      return (B - 1) * (int64_t)live_threads;
    default:
      return 0;
  }
}

static void read_within_bound(fl_counter_t *c, int live_threads)
{
  int64_t sum = fl_counter_sum(c), read = fl_counter_read(c);

  ck_assert_msg(llabs(sum - read) <= read_error_bound(c, live_threads),
                "%s: read %" PRId64 ", sum %" PRId64 ", bound %" PRId64,
                fl_counter_strategy_name(fl_counter_strategy(c)), read, sum,
                read_error_bound(c, live_threads));
}

START_TEST(strategy_names)
{
  ck_assert_str_eq(fl_counter_strategy_name(FL_COUNTER_AUTO), "auto");
  ck_assert_str_eq(fl_counter_strategy_name(FL_COUNTER_SHARED), "shared");
  ck_assert_str_eq(fl_counter_strategy_name(FL_COUNTER_PERCPU_ATOMIC),
                   "percpu-atomic");
  ck_assert_str_eq(fl_counter_strategy_name(FL_COUNTER_PERTHREAD_SIGSAFE),
                   "perthread-sigsafe");
  ck_assert_str_eq(fl_counter_strategy_name(FL_COUNTER_PERCPU_RSEQ),
                   "percpu-rseq");
  ck_assert_str_eq(fl_counter_strategy_name(-1), "unknown");
  ck_assert_str_eq(fl_counter_strategy_name(5), "unknown");
}
END_TEST

START_TEST(bad_arguments_are_einval)
{
  fl_counter_t c = FL_COUNTER_INITIALIZER;

  ck_assert_int_eq(fl_counter_init(&c, -1), EINVAL);
  ck_assert_int_eq(fl_counter_init(&c, FL_COUNTER_PERCPU_RSEQ + 1), EINVAL);
  c.strategy = 77;
  ck_assert_int_eq(fl_counter_destroy(&c), EINVAL);
  ck_assert_int_eq(fl_counter_reset(&c), EINVAL);
  ck_assert_uint_eq(c.strategy, 77);
}
END_TEST

/* An all-zero counter is a SHARED counter at 0, and destroy leaves one. */
START_TEST(zero_filled_counter_is_shared)
{
  fl_counter_t c;

  memset(&c, 0, sizeof c);
  ck_assert_int_eq(fl_counter_strategy(&c), FL_COUNTER_SHARED);
  fl_counter_add(&c, 5);
  fl_counter_add(&c, -7);
  fl_counter_add(&c, (int64_t)1 << 40);
  ck_assert_int_eq(fl_counter_read(&c), ((int64_t)1 << 40) - 2);
  ck_assert_int_eq(fl_counter_sum(&c), ((int64_t)1 << 40) - 2);
  ck_assert_int_eq(fl_counter_reset(&c), 0);
  ck_assert_int_eq(fl_counter_sum(&c), 0);
  ck_assert_int_eq(fl_counter_destroy(&c), 0);

  init_ok(&c, FL_COUNTER_PERCPU_ATOMIC);
  fl_counter_add(&c, 3);
  ck_assert_int_eq(fl_counter_destroy(&c), 0);
  ck_assert_int_eq(fl_counter_strategy(&c), FL_COUNTER_SHARED);
  ck_assert_int_eq(fl_counter_sum(&c), 0);
}
END_TEST

/* The host facts the rest relies on.  */
START_TEST(host_possible_cpus)
{
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  fl_counter_t c;

  ck_assert_uint_ge(fl_counter_possible_cpus(), 1);
  ck_assert_int_ge((long)fl_counter_possible_cpus(), online);
  init_ok(&c, FL_COUNTER_PERCPU_ATOMIC);
  ck_assert_uint_eq(c.nslots, fl_counter_possible_cpus());
  ck_assert_uint_eq(c.slots % (1u << FL_COUNTER_SLOT_SHIFT), 0);
  ck_assert_int_eq(fl_counter_destroy(&c), 0);
}
END_TEST

/* Where the count is: in the counter, or for the per-CPU strategies in
 * the stretch after the last slot, never on the counter's own line,
 * which every add reads (<fastlock/counter.h>).  */
START_TEST(core_placement)
{
  fl_counter_t c;

  init_ok(&c, strategies[_i]);
  if (is_percpu(&c))
    ck_assert_uint_eq((uintptr_t)fl_counter_core(&c),
                      c.slots + ((uint64_t)c.nslots << FL_COUNTER_SLOT_SHIFT));
  else
    ck_assert_ptr_eq(fl_counter_core(&c), &c.core);
  fl_counter_add(&c, 3 * B);
  ck_assert_int_eq(fl_counter_count_load(fl_counter_core(&c)), 3 * B);
  ck_assert_int_eq(fl_counter_destroy(&c), 0);
}
END_TEST

START_TEST(init_reports_what_runs)
{
  fl_counter_t c;

  init_ok(&c, strategies[_i]);
  ck_assert_int_ne(fl_counter_strategy(&c), FL_COUNTER_AUTO);
  ck_assert_int_eq(fl_counter_sum(&c), 0);
  ck_assert_int_eq(fl_counter_read(&c), 0);
  ck_assert_int_eq(fl_counter_destroy(&c), 0);
}
END_TEST

/* Deltas across every path: inside the batch, at its edges, large ones
 * that go straight to the count, and ones that carry between the count's
 * 32-bit halves and wrap at 2^64.  */
static const int64_t edge_deltas[] = {
  0,
  1,
  -1,
  B - 1,
  -(B - 1),
  B,
  -B,
  B + 1,
  -(B + 1),
  INT32_MAX,
  INT32_MIN,
  (int64_t)UINT32_MAX,
  -(int64_t)UINT32_MAX,
  (int64_t)1 << 32,
  -((int64_t)1 << 32),
  ((int64_t)1 << 32) - 1,
  INT64_MAX,
  INT64_MIN,
  INT64_MAX,
  12345,
  -54321,
  (int64_t)1 << 62,
  (int64_t)0x7fffffff00000001,
  -(int64_t)0x7fffffff00000001,
  2,
};
#define NEDGE ((int)(sizeof edge_deltas / sizeof edge_deltas[0]))

START_TEST(edge_deltas_sum_exactly)
{
  fl_counter_t c;
  uint64_t want = 0;
  int i, round;

  init_ok(&c, strategies[_i]);
  for (round = 0; round < 3; round++)
    for (i = 0; i < NEDGE; i++) {
      fl_counter_add(&c, edge_deltas[i]);
      want += (uint64_t)edge_deltas[i];
      ck_assert_msg(fl_counter_sum(&c) == (int64_t)want,
                    "after %" PRId64 ": sum %" PRId64 ", want %" PRId64,
                    edge_deltas[i], fl_counter_sum(&c), (int64_t)want);
      ck_assert_int_eq(fl_counter_read(&c) + slots_total(&c), (int64_t)want);
    }
  ck_assert_int_eq(fl_counter_reset(&c), 0);
  ck_assert_int_eq(fl_counter_sum(&c), 0);
  ck_assert_int_eq(fl_counter_destroy(&c), 0);
}
END_TEST

/* Small adds fold every batch: read() follows sum() within the slots, and
 * the slots stay inside the batch.  */
START_TEST(small_adds_fold_into_the_count)
{
  fl_counter_t c;
  long i, n = 5 * B + 17;
  int64_t sum, read;

  init_ok(&c, strategies[_i]);
  for (i = 0; i < n; i++)
    fl_counter_add(&c, 1);
  sum = fl_counter_sum(&c);
  read = fl_counter_read(&c);
  ck_assert_int_eq(sum, n);
  ck_assert_int_eq(read + slots_total(&c), n);
  /* Folds happened (but for SHARED, which has no slots), and what they
   * left is under the bound.  */
  if (fl_counter_strategy(&c) != FL_COUNTER_SHARED)
    ck_assert_int_ge(read, B);
  read_within_bound(&c, 1);
  for (i = 0; i < n; i++)
    fl_counter_add(&c, -3);
  ck_assert_int_eq(fl_counter_sum(&c), -2 * n);
  ck_assert_int_eq(fl_counter_read(&c) + slots_total(&c), -2 * n);
  read_within_bound(&c, 1);
  ck_assert_int_eq(fl_counter_destroy(&c), 0);
}
END_TEST

/* White-box: the per-slot deltas near their limits.  While a sum is in
 * progress (summing raised by hand here) per-CPU folds are skipped and a
 * slot grows past the batch; at FL_COUNTER_FORCE_FOLD the fold happens
 * regardless, so no slot can overflow its int32_t.  Afterwards an add of
 * zero folds a slot left over the batch.  Loop: PERCPU_ATOMIC, then
 * PERCPU_RSEQ, each with positive and negative deltas.  */
START_TEST(percpu_slot_limits)
{
  const int32_t sign = _i % 2 == 0 ? 1 : -1;
  const int32_t preset = sign * (FL_COUNTER_FORCE_FOLD - 2);
  fl_counter_t c;
  int64_t want, before;
  uint32_t i;
  int k;

  init_ok(&c, _i < 2 ? FL_COUNTER_PERCPU_ATOMIC : FL_COUNTER_PERCPU_RSEQ);
  __atomic_store_n(&fl_counter_core(&c)->summing, 1, __ATOMIC_RELAXED);
  for (k = 0; k < 3; k++)
    fl_counter_add(&c, sign * (B - 1));
  /* Nearly three batches, and no fold: all of it is in the slots.  */
  ck_assert_int_eq(fl_counter_read(&c), 0);
  ck_assert_int_eq(slots_total(&c), 3 * sign * (B - 1));

  /* Every slot two short of the limit (replacing what was there).  */
  want = 0;
  for (i = 0; i < c.nslots; i++) {
    __atomic_store_n(fl_counter_slot(&c, i), preset, __ATOMIC_RELAXED);
    want += preset;
  }
  fl_counter_add(&c, sign * (B - 1));
  want += sign * (B - 1);
  /* That add crossed FL_COUNTER_FORCE_FOLD: folded despite the sum.  */
  ck_assert_int_ne(fl_counter_read(&c), 0);
  for (i = 0; i < c.nslots; i++)
    ck_assert_int_lt(sign * slot_value(&c, i), FL_COUNTER_FORCE_FOLD);
  ck_assert_int_eq(fl_counter_read(&c) + slots_total(&c), want);
  __atomic_store_n(&fl_counter_core(&c)->summing, 0, __ATOMIC_RELAXED);
  ck_assert_int_eq(fl_counter_sum(&c), want);

  /* No sum in progress: an add of zero folds the slot it lands on when
   * that is over the batch, as every slot is again now.  */
  for (i = 0; i < c.nslots; i++) {
    want += preset - slot_value(&c, i);
    __atomic_store_n(fl_counter_slot(&c, i), preset, __ATOMIC_RELAXED);
  }
  before = fl_counter_read(&c);
  fl_counter_add(&c, 0);
  ck_assert_int_ne(fl_counter_read(&c), before);
  ck_assert_int_eq(fl_counter_read(&c) + slots_total(&c), want);
  ck_assert_int_eq(fl_counter_sum(&c), want);
  ck_assert_int_eq(fl_counter_destroy(&c), 0);
}
END_TEST

/* A per-thread slot never leaves the batch: its folds never wait.  */
START_TEST(perthread_slot_limits)
{
  fl_counter_t c;
  int32_t *slot;
  int64_t want = 0;
  int k;

  init_ok(&c, FL_COUNTER_PERTHREAD_SIGSAFE);
  for (k = 0; k < 100; k++) {
    int64_t d = (k % 3 == 2 ? -1 : 1) * (B - 1);
    fl_counter_add(&c, d);
    want += d;
    slot = fl_counter_perthread_slot_of_self(&c);
    ck_assert_ptr_nonnull(slot);
    ck_assert_int_lt(*slot < 0 ? -*slot : *slot, B);
  }
  ck_assert_int_eq(fl_counter_sum(&c), want);
  ck_assert_int_eq(fl_counter_read(&c) + *slot, want);
  ck_assert_int_eq(fl_counter_destroy(&c), 0);
}
END_TEST

struct adder {
  fl_counter_t *c;
  long n;
  int64_t delta;
  pthread_barrier_t *hold; /* if set: wait twice before exiting */
};

static void *add_n(void *p)
{
  struct adder *a = p;
  long i;

  for (i = 0; i < a->n; i++)
    fl_counter_add(a->c, a->delta + (i & 7));
  if (a->hold != NULL) {
    pthread_barrier_wait(a->hold);
    pthread_barrier_wait(a->hold);
  }
  return NULL;
}

static int64_t adder_total(const struct adder *a)
{
  int64_t t = a->delta * a->n;
  long i;

  for (i = 0; i < a->n; i++)
    t += i & 7;
  return t;
}

/* Threads add at once; everything they added is in the sum once they
 * have exited.  */
START_TEST(threads_sum_exactly)
{
  enum { N = 4 };
  fl_counter_t c;
  struct adder a[N];
  int64_t want = 0;
  int t;

  init_ok(&c, strategies[_i]);
  for (t = 0; t < N; t++) {
    a[t].c = &c;
    a[t].n = fl_test_iterations(
        strategies[_i] == FL_COUNTER_PERTHREAD_SIGSAFE ? 4000 : 20000);
    a[t].delta = t == 3 ? 3 * B : t - 1;
    a[t].hold = NULL;
    want += adder_total(&a[t]);
  }
  fl_test_threads(N, add_n, a, sizeof a[0]);
  ck_assert_int_eq(fl_counter_sum(&c), want);
  /* The adders have exited: a per-thread slot was folded at exit.  */
  read_within_bound(&c, 0);
  ck_assert_int_eq(fl_counter_reset(&c), 0);
  ck_assert_int_eq(fl_counter_sum(&c), 0);
  fl_test_threads(N, add_n, a, sizeof a[0]);
  ck_assert_int_eq(fl_counter_sum(&c), want);
  read_within_bound(&c, 0);
  ck_assert_int_eq(fl_counter_destroy(&c), 0);
}
END_TEST

/* PERTHREAD_SIGSAFE: what a thread leaves in its slot (less than a batch,
 * so not folded while it lives) is moved into the count when it exits,
 * and its table goes away.  */
START_TEST(thread_exit_folds_its_slot)
{
  enum { N = 3 };
  fl_counter_t c;
  struct adder a[N];
  pthread_t tid[N];
  pthread_barrier_t hold;
  int64_t want = 0;
  int t, base;

  init_ok(&c, FL_COUNTER_PERTHREAD_SIGSAFE);
  base = fl_counter_perthread_threads();
  ck_assert_int_eq(pthread_barrier_init(&hold, NULL, N + 1), 0);
  for (t = 0; t < N; t++) {
    a[t] = (struct adder){ &c, 10 + t, 100 * (t + 1), &hold };
    want += adder_total(&a[t]);
    ck_assert_int_eq(pthread_create(&tid[t], NULL, add_n, &a[t]), 0);
  }
  pthread_barrier_wait(&hold);
  /* All added, none folded yet, none exited.  */
  ck_assert_int_eq(fl_counter_perthread_threads(), base + N);
  ck_assert_int_eq(fl_counter_read(&c), 0);
  ck_assert_int_eq(fl_counter_sum(&c), want);
  read_within_bound(&c, N);
  pthread_barrier_wait(&hold);
  for (t = 0; t < N; t++)
    pthread_join(tid[t], NULL);
  pthread_barrier_destroy(&hold);
  ck_assert_int_eq(fl_counter_perthread_threads(), base);
  ck_assert_int_eq(fl_counter_read(&c), want);
  ck_assert_int_eq(fl_counter_sum(&c), want);
  ck_assert_int_eq(fl_counter_destroy(&c), 0);
}
END_TEST

/* Per-CPU strategies: nothing is per thread, so exiting loses nothing
 * either; checked here with threads that each add less than a batch.  */
START_TEST(thread_exit_loses_nothing)
{
  enum { N = 6 };
  fl_counter_t c;
  struct adder a[N];
  int64_t want = 0;
  int t;

  init_ok(&c, strategies[_i]);
  for (t = 0; t < N; t++) {
    a[t] = (struct adder){ &c, 5, t + 1, NULL };
    want += adder_total(&a[t]);
  }
  fl_test_threads(N, add_n, a, sizeof a[0]);
  ck_assert_int_eq(fl_counter_sum(&c), want);
  ck_assert_int_eq(fl_counter_destroy(&c), 0);
}
END_TEST

/* PERTHREAD_SIGSAFE: destroy clears the id in live threads' tables, so
 * the next counter given that id starts at 0.  */
START_TEST(destroyed_id_is_clean_when_reused)
{
  fl_counter_t first, second;
  struct adder a;
  pthread_t tid;
  pthread_barrier_t hold;
  uint32_t id;

  init_ok(&first, FL_COUNTER_PERTHREAD_SIGSAFE);
  id = first.id;
  ck_assert_int_eq(pthread_barrier_init(&hold, NULL, 2), 0);
  a = (struct adder){ &first, 3, 11, &hold };
  ck_assert_int_eq(pthread_create(&tid, NULL, add_n, &a), 0);
  pthread_barrier_wait(&hold);
  ck_assert_int_eq(fl_counter_sum(&first), adder_total(&a));
  ck_assert_int_eq(fl_counter_destroy(&first), 0);
  init_ok(&second, FL_COUNTER_PERTHREAD_SIGSAFE);
  ck_assert_uint_eq(second.id, id);
  ck_assert_int_eq(fl_counter_sum(&second), 0);
  pthread_barrier_wait(&hold);
  pthread_join(tid, NULL);
  pthread_barrier_destroy(&hold);
  ck_assert_int_eq(fl_counter_sum(&second), 0);
  ck_assert_int_eq(fl_counter_read(&second), 0);
  ck_assert_int_eq(fl_counter_destroy(&second), 0);
}
END_TEST

/* ---- the rseq fallback ---- */

/* The checks a process without rseq must pass; returns the number of
 * failures, printing each.  Run in this process where rseq is not
 * available, else in a child exec()ed with the glibc tunable off.  One
 * thread only: this also runs on uniprocessor builds, and the threaded
 * tests cover PERCPU_ATOMIC under contention.  */
static int check_fallback(void)
{
  fl_counter_t c;
  int64_t want = 0;
  long i, n = 3 * B;
  int failures = 0;

#define FALLBACK_EXPECT(cond)                                                  \
 do {                                                                          \
  if (!(cond)) {                                                               \
   fprintf(stderr, "fallback: %s:%d: %s\n", __FILE__, __LINE__, #cond);        \
   failures++;                                                                 \
  }                                                                            \
 } while (0)

  FALLBACK_EXPECT(!fl_counter_rseq_usable());
  FALLBACK_EXPECT(fl_counter_init(&c, FL_COUNTER_PERCPU_RSEQ) == 0);
  FALLBACK_EXPECT(fl_counter_strategy(&c) == FL_COUNTER_PERCPU_ATOMIC);
  for (i = 0; i < n; i++) {
    fl_counter_add(&c, 1 + (i & 7));
    want += 1 + (i & 7);
  }
  FALLBACK_EXPECT(fl_counter_sum(&c) == want);
  FALLBACK_EXPECT(fl_counter_read(&c) >= B);
  FALLBACK_EXPECT(fl_counter_read(&c) + slots_total(&c) == want);
  FALLBACK_EXPECT(fl_counter_destroy(&c) == 0);

  FALLBACK_EXPECT(fl_counter_init(&c, FL_COUNTER_AUTO) == 0);
  FALLBACK_EXPECT(fl_counter_strategy(&c)
                  == (fl_counter_possible_cpus() > 1 ? FL_COUNTER_PERCPU_ATOMIC
                                                     : FL_COUNTER_SHARED));
  FALLBACK_EXPECT(fl_counter_destroy(&c) == 0);
  return failures;
#undef FALLBACK_EXPECT
}

#define FALLBACK_CHILD_ENV "FL_TEST_COUNTER_FALLBACK_CHILD"

/* Re-run this process's own command line (/proc/self/cmdline, which also
 * holds the runner, such as ld.so, when there is one) with rseq turned off
 * in glibc and the child mode on.  */
static void exec_self_without_rseq(void)
{
  static char cmdline[8192];
  char *argv[64], *p, tunables[512];
  const char *old = getenv("GLIBC_TUNABLES");
  ssize_t len;
  int fd, n = 0;

  fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    _exit(126);
  len = read(fd, cmdline, sizeof cmdline - 1);
  close(fd);
  if (len <= 0)
    _exit(126);
  cmdline[len] = '\0';
  for (p = cmdline; p < cmdline + len && n < 63; p += strlen(p) + 1)
    argv[n++] = p;
  argv[n] = NULL;
  snprintf(tunables, sizeof tunables, "%s%sglibc.pthread.rseq=0",
           old != NULL ? old : "", old != NULL ? ":" : "");
  setenv("GLIBC_TUNABLES", tunables, 1);
  setenv(FALLBACK_CHILD_ENV, "1", 1);
  execv("/proc/self/exe", argv);
  _exit(127);
}

START_TEST(rseq_falls_back_to_percpu_atomic)
{
  fl_counter_t c;
  pid_t pid;
  int status;

  if (!fl_counter_rseq_usable()) {
    /* No rseq here (QEMU, valgrind, an old kernel, no asm for this
     * architecture): the fallback is what runs; check it directly.  */
    ck_assert_int_eq(check_fallback(), 0);
    return;
  }
  /* rseq runs here, so a PERCPU_RSEQ counter must really be one...  */
  init_ok(&c, FL_COUNTER_PERCPU_RSEQ);
  ck_assert_int_eq(fl_counter_strategy(&c), FL_COUNTER_PERCPU_RSEQ);
  ck_assert_int_eq(fl_counter_destroy(&c), 0);
  /* ... and one in a process with rseq turned off must not be.  */
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0)
    exec_self_without_rseq();
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                "the child with glibc.pthread.rseq=0 failed (status %#x)",
                status);
}
END_TEST

static Suite *counter_suite(void)
{
  Suite *s = suite_create("counter");
  TCase *tc = tcase_create("api");
  TCase *threads = tcase_create("threads");

  tcase_add_test(tc, strategy_names);
  tcase_add_test(tc, bad_arguments_are_einval);
  tcase_add_test(tc, zero_filled_counter_is_shared);
  tcase_add_test(tc, host_possible_cpus);
  tcase_add_loop_test(tc, init_reports_what_runs, 0, NSTRATEGIES);
  tcase_add_loop_test(tc, core_placement, 0, NSTRATEGIES);
  tcase_add_loop_test(tc, edge_deltas_sum_exactly, 0, NSTRATEGIES);
  tcase_add_loop_test(tc, small_adds_fold_into_the_count, 0, NSTRATEGIES);
  tcase_add_loop_test(tc, percpu_slot_limits, 0, 4);
  tcase_add_test(tc, perthread_slot_limits);
  tcase_add_test(tc, rseq_falls_back_to_percpu_atomic);
  suite_add_tcase(s, tc);

  tcase_set_tags(threads, FL_TAG_THREADS);
  tcase_set_timeout(threads, 60);
  tcase_add_loop_test(threads, threads_sum_exactly, 0, NSTRATEGIES);
  tcase_add_test(threads, thread_exit_folds_its_slot);
  tcase_add_loop_test(threads, thread_exit_loses_nothing, 0, NSTRATEGIES);
  tcase_add_test(threads, destroyed_id_is_clean_when_reused);
  suite_add_tcase(s, threads);
  return s;
}

int main(void)
{
  if (getenv(FALLBACK_CHILD_ENV) != NULL)
    return check_fallback() == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
  return fl_check_run(counter_suite());
}
