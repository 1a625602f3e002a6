/* tests/test-spinlock-torture.c: the spinlock torture (see the header).  */
#include "config.h"

#include "test-spinlock-torture.h"

#include <fastlock/arch/atomic.h>
#include <fastlock/common.h>

#include "sys/annotate.h"
#include "sys/cpu.h"

#include "fl-check.h"

#include "../stress/tls-probe.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

struct torture_shared {
  const struct fl_torture_lock *t;
  long iterations;
  int threads;
  int32_t inside;  /* threads in the critical section (atomics only) */
  int32_t running; /* threads not finished yet (atomics only) */
  /* Protected by the lock under test.  */
  long plain;
  uint32_t last_served;
  int served_before;
  long order_errors;
};

struct torture_thread {
  struct torture_shared *s;
  uint32_t seed;
  long acquired, window, violations, call_errors;
};

static uint32_t xorshift32(uint32_t *state)
{
  uint32_t x = *state;

  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return *state = x;
}

/* Inside the critical section: the checks, then a random hold.  */
static void torture_critical(struct torture_thread *me, uint32_t r)
{
  struct torture_shared *s = me->s;
  const struct fl_torture_lock *t = s->t;
  uint32_t j;

  if (fl_atomic_fetch_add_acq_rel(&s->inside, 1) != 0)
    me->violations++;
  if (t->plain)
    s->plain++;
  if (t->serving_fn != NULL) {
    uint32_t now = t->serving_fn(t->lock);
    uint32_t step = (now - s->last_served) & t->order_mask;

    if (s->served_before
        && (t->strict_order ? step != 1
                            : step == 0 || step > t->order_mask / 2))
      s->order_errors++;
    s->last_served = now;
    s->served_before = 1;
  }
  if ((r >> 8) % (uint32_t)t->yield_every == 0)
    sched_yield();
  else
    for (j = (r >> 16) & 15; j > 0; j--)
      fl_cpu_relax();
  fl_atomic_fetch_add_acq_rel(&s->inside, -1);
}

static void *torture_thread(void *p)
{
  struct torture_thread *me = p;
  struct torture_shared *s = me->s;
  const struct fl_torture_lock *t = s->t;
  long i;
  uint32_t j;

  for (i = 0; i < s->iterations; i++) {
    uint32_t r = xorshift32(&me->seed);
    int rc;

    if (r % 8 == 0) {
      rc = t->trylock_fn(t->lock);
      if (rc == EBUSY)
        rc = t->lock_fn(t->lock);
    } else {
      rc = t->lock_fn(t->lock);
    }
    if (rc != 0) {
      me->call_errors++;
      continue;
    }
    torture_critical(me, r);
    if (t->unlock_fn(t->lock) != 0)
      me->call_errors++;
    me->acquired++;
    if (fl_load_relaxed(&s->running) == s->threads)
      me->window++;
    for (j = (r >> 20) & 31; j > 0; j--)
      fl_cpu_relax();
  }
  fl_atomic_fetch_add_acq_rel(&s->running, -1);
  return NULL;
}

void fl_torture(const struct fl_torture_lock *t, int threads, long iterations,
                struct fl_torture_report *r)
{
  static struct torture_shared s;
  struct torture_thread th[threads];
  int i, ok;

  memset(&s, 0, sizeof s);
  memset(th, 0, sizeof th);
  s.t = t;
  s.iterations = iterations;
  s.threads = threads;
  s.running = threads;
  FL_VG_HIDE(&s.inside, sizeof s.inside);
  FL_VG_HIDE(&s.running, sizeof s.running);
  for (i = 0; i < threads; i++) {
    th[i].s = &s;
    th[i].seed = 0x9e3779b9u * (uint32_t)(i + 1);
  }
  fl_test_threads(threads, torture_thread, th, sizeof th[0]);

  memset(r, 0, sizeof *r);
  r->min = th[0].window;
  for (i = 0; i < threads; i++) {
    r->acquisitions += th[i].acquired;
    r->violations += th[i].violations;
    r->call_errors += th[i].call_errors;
    if (th[i].window < r->min)
      r->min = th[i].window;
    if (th[i].window > r->max)
      r->max = th[i].window;
  }
  r->lost_updates = t->plain ? r->acquisitions - s.plain : 0;
  r->order_errors = s.order_errors;
  r->starved = r->max / 2 > r->min;
  ok = r->violations == 0 && r->lost_updates == 0 && r->order_errors == 0
       && r->call_errors == 0;
  printf("torture %s: %d threads x %ld: %ld acquisitions; per thread while "
         "all ran: min %ld, max %ld%s; violations %ld, lost updates %ld, "
         "order errors %ld, call errors %ld\nEnd of test: %s\n",
         t->name, threads, iterations, r->acquisitions, r->min, r->max,
         r->starved ? " (starvation: max / 2 > min)" : "", r->violations,
         r->lost_updates, r->order_errors, r->call_errors,
         ok ? "SUCCESS" : "FAILURE");
  fflush(stdout);
}

void fl_torture_assert_clean(const struct fl_torture_report *r, long expected)
{
  ck_assert_int_eq(r->call_errors, 0);
  ck_assert_int_eq(r->acquisitions, expected);
  ck_assert_msg(r->violations == 0, "%ld times a thread found another inside",
                r->violations);
  ck_assert_msg(r->lost_updates == 0, "%ld updates of the plain counter lost",
                r->lost_updates);
  ck_assert_msg(r->order_errors == 0, "%ld tickets served out of order",
                r->order_errors);
}

/* Test, yield, set: two threads that both find the word 0 before either
 * sets it both go in.  Every waiter retests as soon as the holder lets
 * go, so this happens at nearly every contended release.  */
static int broken_lock(void *p)
{
  int32_t *w = p;

  while (fl_load_acquire(w) != 0)
    sched_yield();
  sched_yield();
  fl_store_relaxed(w, 1);
  return 0;
}

static int broken_unlock(void *p)
{
  fl_store_release(p, 0);
  return 0;
}

void fl_torture_check(const struct fl_torture_lock *t, int threads,
                      long iterations)
{
  struct fl_torture_report r;

  fl_torture(t, threads, iterations, &r);
  fl_torture_assert_clean(&r, threads * iterations);
  ck_assert_int_eq(t->destroy_fn(t->lock), 0);
}

static void torture_negative_control(int threads, long iterations)
{
  static int32_t word;
  struct fl_torture_lock t = {
    .name = "negative control (test, yield, set)",
    .lock = &word,
    .lock_fn = broken_lock,
    .trylock_fn = broken_lock,
    .unlock_fn = broken_unlock,
    .yield_every = 8,
  };
  struct fl_torture_report r;
  int run;

  word = 0;
  FL_VG_HIDE(&word, sizeof word);
  /* Up to three runs: on a loaded machine, or under an emulator, the
   * threads of one run may happen to run one after another and never
   * meet; three such runs in a row mean the check is blind.  */
  for (run = 0; run < 3; run++) {
    printf("the next torture must report violations and FAILURE:\n");
    fl_torture(&t, threads, iterations, &r);
    if (r.violations > 0)
      break;
  }
  ck_assert_msg(r.violations > 0,
                "the negative control's threads never overlapped: the "
                "torture's exclusion check cannot be trusted");
}

static int32_t word_of(void *l)
{
  return fl_load_relaxed((int32_t *)l);
}

void fl_test_misuse(const struct fl_torture_lock *t, void *l)
{
  int32_t free_word = word_of(l), held_word;

  ck_assert_int_eq(t->unlock_fn(l), EPERM);
  ck_assert_int_eq(word_of(l), free_word);
  ck_assert_int_eq(t->lock_fn(l), 0);
  held_word = word_of(l);
  ck_assert_int_eq(t->trylock_fn(l), EBUSY);
  ck_assert_int_eq(t->destroy_fn(l), EBUSY);
  ck_assert_int_eq(word_of(l), held_word);
  ck_assert_int_eq(t->unlock_fn(l), 0);
  free_word = word_of(l);
  ck_assert_int_eq(t->unlock_fn(l), EPERM);
  ck_assert_int_eq(word_of(l), free_word);
}

START_TEST(negative_control)
{
  torture_negative_control(4, fl_test_iterations(3000));
}
END_TEST

Suite *fl_spin_suite(const char *name, TCase **single, TCase **threads)
{
  Suite *s = suite_create(name);

  *single = tcase_create("one thread");
  *threads = tcase_create("threads");
  tcase_set_tags(*threads, FL_TAG_THREADS);
  tcase_set_timeout(*threads, 120);
  tcase_add_test(*threads, negative_control);
  suite_add_tcase(s, *single);
  suite_add_tcase(s, *threads);
  return s;
}

/* The lock and the counter, a cache line apart.  */
struct pshared_page {
  int32_t lock;
  char pad[60];
  long counter;
};

static void count_under_lock(const struct fl_torture_lock *t,
                             struct pshared_page *p, long iterations)
{
  long i;

  for (i = 0; i < iterations; i++) {
    t->lock_fn(&p->lock);
    p->counter++;
    t->unlock_fn(&p->lock);
  }
}

void fl_test_pshared(const struct fl_torture_lock *t, long iterations)
{
  struct pshared_page *p;
  int status;
  pid_t pid;

  p = mmap(NULL, sizeof *p, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
           -1, 0);
  ck_assert(p != MAP_FAILED);
  ck_assert_int_eq(t->init_fn(&p->lock, FL_PSHARED), 0);
  p->counter = 0;
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    count_under_lock(t, p, iterations);
    _exit(0);
  }
  count_under_lock(t, p, iterations);
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ck_assert_int_eq(p->counter, 2 * iterations);
  ck_assert_int_eq(t->destroy_fn(&p->lock), 0);
  munmap(p, sizeof *p);
}

void fl_test_wait_until(int (*cond)(void *), void *arg)
{
  while (!cond(arg))
    sched_yield();
}

int fl_test_flag_set(void *flag)
{
  return fl_load_acquire((int32_t *)flag) != 0;
}

static int32_t parked, unpark;

static void park(int sig)
{
  (void)sig;
  fl_store_release(&parked, 1);
  while (!fl_load_acquire(&unpark))
    usleep(1000);
}

void fl_test_park(pthread_t t)
{
  struct sigaction sa;

  memset(&sa, 0, sizeof sa);
  sa.sa_handler = park;
  ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
  fl_store_relaxed(&parked, 0);
  fl_store_relaxed(&unpark, 0);
  FL_VG_HIDE(&parked, sizeof parked);
  FL_VG_HIDE(&unpark, sizeof unpark);
  ck_assert_int_eq(pthread_kill(t, SIGUSR1), 0);
  fl_test_wait_until(fl_test_flag_set, &parked);
}

void fl_test_unpark(void)
{
  fl_store_release(&unpark, 1);
  signal(SIGUSR1, SIG_DFL);
}

int fl_test_signals_reach_waiters(const char *what)
{
  if (FL_TOOLS_TSAN) {
    printf("ThreadSanitizer: %s left out (see fl_test_park)\n", what);
    return 0;
  }
  if (!fl_signals_keep_tls(SIGUSR1)) {
    printf("%s left out: " FL_TLS_LOST_WHY "\n", what);
    return 0;
  }
  return 1;
}
