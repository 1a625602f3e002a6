/* stress/bench-run.c: one run of one implementation in one test.
 *
 * Timed: the threads of both classes wait on a barrier, run their loops
 * through a warm-up (bench_warmup_s) that is not counted, and are
 * measured from then until the main thread, asleep for the test's
 * duration, says stop; the run lasts from the end of the warm-up to stop.
 * Each thread times one acquisition in BENCH_SAMPLE_EVERY at first with
 * fl_cycles (two counter reads around the lock call; the other
 * acquisitions run untouched), thinning its samples when its buffer
 * fills, so that the percentiles weigh every thread by the acquisitions
 * it made.
 *
 * Untimed: one thread calls one loop of the implementation for a count
 * of iterations found once (about target_s), timed by CLOCK_MONOTONIC
 * and fl_cycles.  The loop's own cost is included.  */
#include "config.h"

#include "bench-plan.h"

#include "sys/clock.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bench_thin_samples(struct bench_thread *t)
{
  size_t i;

  for (i = 0; 2 * i < t->nsamples; i++)
    t->samples[i] = t->samples[2 * i];
  t->nsamples = i;
  t->sample_mask = 2 * t->sample_mask + 1;
}

double bench_run_rate(const struct bench_run *r)
{
  return r->seconds > 0 ? (double)(r->cls[0].ops + r->cls[1].ops) / r->seconds
                        : 0.0;
}

static void *xaligned(size_t size)
{
  void *p;
  int rc = posix_memalign(&p, 128, (size + 127) / 128 * 128);

  if (rc != 0) {
    fprintf(stderr, "fastlock-bench: out of memory: %s\n", strerror(rc));
    exit(1);
  }
  memset(p, 0, (size + 127) / 128 * 128);
  return p;
}

static void *new_object(const struct bench_impl *impl)
{
  void *obj = xaligned(impl->size ? impl->size : 1);
  int rc = impl->init(obj);

  if (rc != 0) {
    fprintf(stderr, "fastlock-bench: %s: init failed: %s\n", impl->name,
            strerror(rc));
    exit(1);
  }
  return obj;
}

struct worker {
  struct bench_thread t; /* first: aligned, written by its thread */
  const struct bench_impl *impl;
  void *obj;
  int cls;
  pthread_barrier_t *start;
  pthread_t tid;
};

static void *worker_main(void *arg)
{
  struct worker *w = arg;

  pthread_barrier_wait(w->start);
  w->impl->thread[w->cls](w->obj, &w->t);
  return NULL;
}

struct weighted {
  uint64_t ticks, weight;
};

static int cmp_weighted(const void *a, const void *b)
{
  uint64_t x = ((const struct weighted *)a)->ticks;
  uint64_t y = ((const struct weighted *)b)->ticks;
  return (x > y) - (x < y);
}

/* Per-thread spread, starvation and latency percentiles of class cls.  */
static void class_stats(struct worker *w, int n, int cls,
                        struct bench_class_run *c)
{
  struct weighted *all;
  uint64_t total_weight = 0, cum = 0;
  size_t nall = 0, i;
  int k, first = 1, have_p50 = 0;

  memset(c, 0, sizeof *c);
  for (k = 0; k < n; k++) {
    if (w[k].cls != cls)
      continue;
    c->threads++;
    c->ops += w[k].t.ops;
    if (first || w[k].t.ops < c->min)
      c->min = w[k].t.ops;
    if (first || w[k].t.ops > c->max)
      c->max = w[k].t.ops;
    first = 0;
    nall += w[k].t.nsamples;
  }
  c->starved = c->threads > 1 && c->max / 2 > c->min;
  c->samples = nall;
  if (nall == 0)
    return;
  all = malloc(nall * sizeof *all);
  if (all == NULL) {
    perror("fastlock-bench");
    exit(1);
  }
  nall = 0;
  for (k = 0; k < n; k++) {
    if (w[k].cls != cls)
      continue;
    for (i = 0; i < w[k].t.nsamples; i++) {
      all[nall].ticks = w[k].t.samples[i];
      all[nall].weight = w[k].t.sample_mask + 1;
      total_weight += all[nall].weight;
      nall++;
    }
  }
  qsort(all, nall, sizeof *all, cmp_weighted);
  for (i = 0; i < nall; i++) {
    cum += all[i].weight;
    if (!have_p50 && 2 * cum >= total_weight) {
      c->p50 = all[i].ticks;
      have_p50 = 1;
    }
    if (100 * cum >= 99 * total_weight) {
      c->p99 = all[i].ticks;
      break;
    }
  }
  c->pmax = all[nall - 1].ticks;
  free(all);
}

double bench_warmup_s(double seconds)
{
  return bench_quarter(seconds, 0.02, 0.1);
}

static void sleep_ns(int64_t ns)
{
  struct timespec deadline = fl_deadline_after_ns(CLOCK_MONOTONIC, ns);

  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL)
         == EINTR)
    ;
}

void bench_run_timed(const struct bench_impl *impl,
                     const struct bench_test *test, struct bench_run *out)
{
  int n = test->threads[0] + test->threads[1], k, rc;
  void *obj = new_object(impl);
  struct bench_data *data = xaligned(sizeof *data);
  int *phase = xaligned(sizeof *phase);
  struct worker *w = xaligned((size_t)n * sizeof *w);
  pthread_barrier_t start;
  pthread_attr_t attr;
  int64_t t0, t1;

  pthread_barrier_init(&start, NULL, (unsigned)n + 1);
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  for (k = 0; k < n; k++) {
    w[k].impl = impl;
    w[k].obj = obj;
    w[k].cls = k < test->threads[0] ? 0 : 1;
    w[k].start = &start;
    w[k].t.phase = phase;
    w[k].t.data = data;
    w[k].t.sample_mask = BENCH_SAMPLE_EVERY - 1;
    w[k].t.samples = malloc(BENCH_SAMPLES_MAX * sizeof *w[k].t.samples);
    if (w[k].t.samples == NULL) {
      perror("fastlock-bench");
      exit(1);
    }
    rc = pthread_create(&w[k].tid, &attr, worker_main, &w[k]);
    if (rc != 0) {
      fprintf(stderr, "fastlock-bench: %s: cannot start thread %d of %d: %s\n",
              test->name, k + 1, n, strerror(rc));
      exit(1);
    }
  }
  pthread_attr_destroy(&attr);

  pthread_barrier_wait(&start);
  sleep_ns((int64_t)(bench_warmup_s(test->seconds) * 1e9));
  __atomic_store_n(phase, BENCH_MEASURE, __ATOMIC_RELAXED);
  t0 = fl_clock_ns(CLOCK_MONOTONIC);
  sleep_ns((int64_t)(test->seconds * 1e9));
  __atomic_store_n(phase, BENCH_STOP, __ATOMIC_RELAXED);
  t1 = fl_clock_ns(CLOCK_MONOTONIC);
  for (k = 0; k < n; k++)
    pthread_join(w[k].tid, NULL);
  pthread_barrier_destroy(&start);

  memset(out, 0, sizeof *out);
  out->seconds = (double)(t1 - t0) / 1e9;
  class_stats(w, n, 0, &out->cls[0]);
  class_stats(w, n, 1, &out->cls[1]);
  out->actual = impl->actual != NULL ? impl->actual(obj) : NULL;

  for (k = 0; k < n; k++)
    free(w[k].t.samples);
  free(w);
  free(phase);
  free(data);
  impl->destroy(obj);
  free(obj);
}

struct loop_time {
  int64_t ns;
  uint64_t ticks;
};

static struct loop_time time_loop(const struct bench_impl *impl, int loop,
                                  void *obj, long n)
{
  struct loop_time lt;
  int64_t t0 = fl_clock_ns(CLOCK_MONOTONIC);
  uint64_t c0 = fl_cycles();

  impl->loop[loop](obj, n);
  lt.ticks = fl_cycles() - c0;
  lt.ns = fl_clock_ns(CLOCK_MONOTONIC) - t0;
  return lt;
}

void bench_run_loop(const struct bench_impl *impl,
                    const struct bench_test *test, long *iterations,
                    double target_s, struct bench_run *out)
{
  void *obj = new_object(impl);
  int64_t target_ns = (int64_t)(target_s * 1e9);
  struct loop_time lt;

  if (*iterations == 0) {
    long n = 1000;
    double scaled;
    /* Grow until a loop takes a tenth of the target, then scale.  */
    for (;;) {
      lt = time_loop(impl, test->loop, obj, n);
      if (lt.ns * 10 >= target_ns || n > LONG_MAX / 8)
        break;
      n *= 4;
    }
    scaled =
        lt.ns > 0 ? (double)n * (double)target_ns / (double)lt.ns : (double)n;
    *iterations = scaled < 1                        ? 1
                  : scaled > (double)(LONG_MAX / 2) ? LONG_MAX / 2
                                                    : (long)scaled;
  }
  lt = time_loop(impl, test->loop, obj, *iterations);
  memset(out, 0, sizeof *out);
  out->iterations = *iterations;
  out->ns_per_op = (double)lt.ns / (double)*iterations;
  out->ticks_per_op = (double)lt.ticks / (double)*iterations;
  out->actual = impl->actual != NULL ? impl->actual(obj) : NULL;
  impl->destroy(obj);
  free(obj);
}
