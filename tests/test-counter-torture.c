/* tests/test-counter-torture.c: many threads add known amounts to one
 * counter while a signaller interrupts them with SIGUSR1, whose handler
 * adds too, and a summer calls fl_counter_sum() and fl_counter_read()
 * throughout.  For each strategy, in two rounds of threads that exit:
 *
 *   - the final sum is exactly what the loops and the handlers added;
 *   - the summer's sums never go down (every delta is positive), each read
 *     is at most the sum that follows it, and the last is at most the
 *     final total;
 *   - every adder was interrupted by at least MIN_SIGNALS handlers, so
 *     the handlers' adds are not a vacuous part of the total.
 *
 * The deltas cover the slot path, the direct path (at least a batch) and
 * carries across 2^32.
 *
 * One runtime cannot take part with signals: qemu-i386 user mode (see
 * stress/tls-probe.h).  main() probes for it and, where it finds it,
 * runs the torture without the signaller and says so in a "SKIP: " line,
 * as tests/fl-check.c does for what it leaves out.
 * The other checks still run, and the adders' sum must still be exact.  */
#include "config.h"

#include <fastlock/counter.h>

#include "sys/annotate.h"

#include "../stress/tls-probe.h"
#include "fl-check.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define NADDERS 4
#define ROUNDS 2
#define MIN_SIGNALS 10

static const int strategies[] = {
  FL_COUNTER_SHARED,
  FL_COUNTER_PERCPU_ATOMIC,
  FL_COUNTER_PERTHREAD_SIGSAFE,
  FL_COUNTER_PERCPU_RSEQ,
  FL_COUNTER_AUTO,
};
#define NSTRATEGIES ((int)(sizeof strategies / sizeof strategies[0]))

struct adder {
  pthread_t tid;
  int index;
  long iterations;
  uint64_t added;       /* by the loop */
  int32_t handled;      /* handler runs, written by the handler only */
  uint64_t handled_sum; /* what the handler added */
  int32_t ready, done;  /* for the signaller */
};

static fl_counter_t counter;
static struct adder adders[NADDERS];
static __thread struct adder *self;
static int use_signals;

/* The loop's i-th delta: mostly inside the batch, now and then a large
 * one, and rarely one past 2^32.  */
static int64_t loop_delta(const struct adder *a, long i)
{
  if (i % 16384 == 16383)
    return ((int64_t)1 << 32) + a->index;
  if (i % 4096 == 4095)
    return 3 * FL_COUNTER_BATCH + (i & 63);
  return 1 + (i * 7 + a->index) % 64;
}

static void on_sigusr1(int sig)
{
  struct adder *a = self;
  int saved = errno;
  int64_t d;

  (void)sig;
  if (a != NULL) {
    d = a->handled % 8 == 7 ? FL_COUNTER_BATCH + 5 : 2 + a->index;
    fl_counter_add(&counter, d);
#if FL_COUNTER_WIDE
    /* Async-signal-safe where the count is one word.  */
    (void)fl_counter_read(&counter);
#endif
    a->handled_sum += (uint64_t)d;
    a->handled++;
  }
  errno = saved;
}

static void *adder_main(void *p)
{
  const struct timespec pause = { 0, 200 * 1000 };
  struct adder *a = p;
  sigset_t usr1;
  long i;

  self = a;
  __atomic_store_n(&a->ready, 1, __ATOMIC_RELEASE);
  for (i = 0; i < a->iterations; i++) {
    int64_t d = loop_delta(a, i);
    fl_counter_add(&counter, d);
    a->added += (uint64_t)d;
  }
  /* Stay until the signaller has got through MIN_SIGNALS times (the
   * other threads may still be adding).  */
  while (use_signals
         && __atomic_load_n(&a->handled, __ATOMIC_RELAXED) < MIN_SIGNALS)
    nanosleep(&pause, NULL);
  /* No handler past this point: one in the exit path would add after
   * the thread's last word on its totals.  */
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &usr1, NULL);
  __atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
  return NULL;
}

static int all_done(void)
{
  int i;

  for (i = 0; i < NADDERS; i++)
    if (!__atomic_load_n(&adders[i].done, __ATOMIC_ACQUIRE))
      return 0;
  return 1;
}

static void *signaller_main(void *unused)
{
  const struct timespec pause = { 0, 100 * 1000 };
  int i;

  (void)unused;
  while (!all_done()) {
    for (i = 0; i < NADDERS; i++)
      if (__atomic_load_n(&adders[i].ready, __ATOMIC_ACQUIRE)
          && !__atomic_load_n(&adders[i].done, __ATOMIC_ACQUIRE))
        pthread_kill(adders[i].tid, SIGUSR1);
    nanosleep(&pause, NULL);
  }
  return NULL;
}

struct summer {
  int64_t last; /* the last sum, the largest */
  long sums;
  long violations;
  char first[160];
};

static void summer_fail(struct summer *s, const char *what, int64_t a,
                        int64_t b)
{
  if (s->violations++ == 0)
    snprintf(s->first, sizeof s->first, "%s: %" PRId64 " then %" PRId64, what,
             a, b);
}

static void *summer_main(void *p)
{
  struct summer *s = p;
  int64_t last = fl_counter_sum(&counter);

  s->last = last;
  while (!all_done()) {
    int64_t read = fl_counter_read(&counter);
    int64_t sum = fl_counter_sum(&counter);
    if (sum < last)
      summer_fail(s, "sum went down", last, sum);
    if (read > sum)
      summer_fail(s, "read above the following sum", read, sum);
    last = sum;
    s->last = sum;
    s->sums++;
    /* Leave the CPUs to the adders now and then (2 cores, QEMU).  */
    sched_yield();
  }
  return NULL;
}

START_TEST(torture)
{
  struct sigaction sa;
  pthread_t signaller, summer_tid;
  struct summer summer;
  uint64_t total = 0;
  long handled = 0;
  int r, i;

  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigusr1;
  sigemptyset(&sa.sa_mask);
  ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
  ck_assert_int_eq(fl_counter_init(&counter, strategies[_i]), 0);

  for (r = 0; r < ROUNDS; r++) {
    memset(adders, 0, sizeof adders);
    /* The flags are polled with atomics, which the Valgrind tools do not
     * take for synchronisation.  */
    for (i = 0; i < NADDERS; i++) {
      FL_VG_HIDE(&adders[i].ready, sizeof adders[i].ready);
      FL_VG_HIDE(&adders[i].done, sizeof adders[i].done);
      FL_VG_HIDE(&adders[i].handled, sizeof adders[i].handled);
    }
    for (i = 0; i < NADDERS; i++) {
      adders[i].index = i;
      /* Two system calls per add make PERTHREAD_SIGSAFE a hundred times
       * slower than the others: fewer of them.  */
      adders[i].iterations = fl_test_iterations(
          strategies[_i] == FL_COUNTER_PERTHREAD_SIGSAFE ? 3000 : 15000);
    }
    memset(&summer, 0, sizeof summer);

    for (i = 0; i < NADDERS; i++)
      ck_assert_int_eq(
          pthread_create(&adders[i].tid, NULL, adder_main, &adders[i]), 0);
    if (use_signals)
      ck_assert_int_eq(pthread_create(&signaller, NULL, signaller_main, NULL),
                       0);
    ck_assert_int_eq(pthread_create(&summer_tid, NULL, summer_main, &summer),
                     0);
    if (use_signals)
      pthread_join(signaller, NULL);
    pthread_join(summer_tid, NULL);
    for (i = 0; i < NADDERS; i++) {
      pthread_join(adders[i].tid, NULL);
      total += adders[i].added + adders[i].handled_sum;
      handled += adders[i].handled;
      ck_assert_int_ge(adders[i].handled, use_signals ? MIN_SIGNALS : 0);
    }
    ck_assert_msg(summer.violations == 0,
                  "%ld violations in %ld sums; first: %s", summer.violations,
                  summer.sums, summer.first);
    ck_assert_int_le(summer.last, (int64_t)total);
    ck_assert_msg(fl_counter_sum(&counter) == (int64_t)total,
                  "round %d (%s): sum %" PRId64 ", want %" PRIu64
                  " (%ld handler adds)",
                  r, fl_counter_strategy_name(fl_counter_strategy(&counter)),
                  fl_counter_sum(&counter), total, handled);
    ck_assert_int_le(fl_counter_read(&counter), (int64_t)total);
    /* Every adder has exited: a per-thread slot was folded at exit, and
     * this thread never added.  */
    if (fl_counter_strategy(&counter) == FL_COUNTER_SHARED
        || fl_counter_strategy(&counter) == FL_COUNTER_PERTHREAD_SIGSAFE)
      ck_assert_int_eq(fl_counter_read(&counter), (int64_t)total);
  }
  ck_assert_int_eq(fl_counter_destroy(&counter), 0);
  sa.sa_handler = SIG_DFL;
  ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
}
END_TEST

static Suite *torture_suite(void)
{
  Suite *s = suite_create("counter-torture");
  TCase *tc = tcase_create("torture");

  tcase_set_tags(tc, FL_TAG_THREADS);
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, torture, 0, NSTRATEGIES);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  use_signals = fl_signals_keep_tls(SIGUSR1);
  if (!use_signals)
    printf("SKIP: %s: the signal handlers' adds: " FL_TLS_LOST_WHY
           ", so the torture runs without the signaller\n",
           program_invocation_short_name);
  return fl_check_run(torture_suite());
}
