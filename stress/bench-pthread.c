/* stress/bench-pthread.c: fastlock-bench pthread, libfastlock-pthread's
 * mutexes, condition variables and semaphores against glibc's, side by
 * side in one run.
 *
 * The drop-in is opened beside glibc (dropin-load.h); both run the same
 * workload code through one table of function pointers each, interleaved
 * (glibc, drop-in, glibc, ...), repeated, the median reported with the
 * drop-in's ratio to glibc (> 1: faster).  The rwsem table through
 * pthread_rwlock_*, and the mutex's contention tests, are in
 * fastlock-bench's own tables (stress/bench-dropin.c), where every
 * implementation gets the per-thread spread and the latencies.
 *
 * Rows:
 *   mutex-pair-1t       lock+unlock of a free mutex in a process that
 *                       has never had a second thread (glibc then uses
 *                       plain stores; so does the drop-in)
 *   mutex-pair          the same once the process has had threads
 *   cond-pingpong       two threads handing a turn back and forth through
 *                       a mutex and a condition variable
 *   sem-pingpong        the same through two semaphores
 *   prodcons-cond       a 16-slot bounded buffer on a mutex and two
 *                       condition variables, one producer, one consumer
 *   prodcons-sem        the same buffer on two counting semaphores
 *     (the producer/consumer examples of glibc's LinuxThreads, as timed
 *     by J. Stezenbach on linux-mips, July 2002); both check that every
 *     item arrived, and the run fails if one did not.  */
#define _GNU_SOURCE 1
#include "config.h"

#include "bench.h"
#include "context.h"
#include "dropin-load.h"
#include "sys/clock.h"

#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct pthread_fns glibc = {
  pthread_mutex_init,
  pthread_mutex_destroy,
  pthread_mutex_lock,
  pthread_mutex_unlock,
  pthread_cond_init,
  pthread_cond_wait,
  pthread_cond_signal,
  sem_init,
  sem_wait,
  sem_post,
  pthread_rwlock_init,
  pthread_rwlock_destroy,
  pthread_rwlock_rdlock,
  pthread_rwlock_wrlock,
  pthread_rwlock_unlock,
};

/* ------------------------------------------------------------------ */
/* Workloads: each returns operations per second and may fill notes.   */
/* ------------------------------------------------------------------ */

/* The rounds of every row are multiplied by this (--scale): below 1 for a
 * quick correctness run (tests/test-tools.sh).  */
static double scale = 1;

/* Items lost in a producer/consumer row: the run's exit status.  */
static int lost;

static long rounds(long n)
{
  long r = (long)((double)n * scale);
  return r > 1 ? r : 2;
}

static double since(int64_t t0)
{
  return (double)(fl_clock_ns(CLOCK_MONOTONIC) - t0) / 1e9;
}

struct shared {
  const struct pthread_fns *im;
  pthread_mutex_t m;
  pthread_cond_t c[2];
  sem_t s[2];
  long counter;
  int turn;
  long n;
  /* bounded buffer */
  int buf[16];
  int head, tail, count;
};

struct worker {
  struct shared *g;
  int id;
};

static double mutex_pair(const struct pthread_fns *im, char *note)
{
  pthread_mutex_t m;
  long i, n = rounds(2000000);
  int64_t t0;

  (void)note;
  im->mutex_init(&m, NULL);
  t0 = fl_clock_ns(CLOCK_MONOTONIC);
  for (i = 0; i < n; i++) {
    im->mutex_lock(&m);
    im->mutex_unlock(&m);
  }
  return (double)n / since(t0);
}

static void *cond_player(void *p)
{
  struct worker *w = p;
  struct shared *g = w->g;
  long i;
  for (i = 0; i < g->n; i++) {
    g->im->mutex_lock(&g->m);
    while (g->turn != w->id)
      g->im->cond_wait(&g->c[w->id], &g->m);
    g->turn = 1 - w->id;
    g->im->cond_signal(&g->c[1 - w->id]);
    g->im->mutex_unlock(&g->m);
  }
  return NULL;
}

static void *sem_player(void *p)
{
  struct worker *w = p;
  struct shared *g = w->g;
  long i;
  for (i = 0; i < g->n; i++) {
    g->im->sem_wait(&g->s[w->id]);
    g->im->sem_post(&g->s[1 - w->id]);
  }
  return NULL;
}

static void *cond_producer(void *p)
{
  struct shared *g = ((struct worker *)p)->g;
  long i;
  for (i = 0; i < g->n; i++) {
    g->im->mutex_lock(&g->m);
    while (g->count == 16)
      g->im->cond_wait(&g->c[0], &g->m); /* not full */
    g->buf[g->head] = (int)i;
    g->head = (g->head + 1) % 16;
    g->count++;
    g->im->cond_signal(&g->c[1]);
    g->im->mutex_unlock(&g->m);
  }
  return NULL;
}

static void *cond_consumer(void *p)
{
  struct shared *g = ((struct worker *)p)->g;
  long i;
  for (i = 0; i < g->n; i++) {
    g->im->mutex_lock(&g->m);
    while (g->count == 0)
      g->im->cond_wait(&g->c[1], &g->m); /* not empty */
    g->counter += g->buf[g->tail];
    g->tail = (g->tail + 1) % 16;
    g->count--;
    g->im->cond_signal(&g->c[0]);
    g->im->mutex_unlock(&g->m);
  }
  return NULL;
}

static void *sem_producer(void *p)
{
  struct shared *g = ((struct worker *)p)->g;
  long i;
  for (i = 0; i < g->n; i++) {
    g->im->sem_wait(&g->s[0]); /* free slots */
    g->buf[g->head] = (int)i;
    g->head = (g->head + 1) % 16;
    g->im->sem_post(&g->s[1]); /* full slots */
  }
  return NULL;
}

static void *sem_consumer(void *p)
{
  struct shared *g = ((struct worker *)p)->g;
  long i;
  for (i = 0; i < g->n; i++) {
    g->im->sem_wait(&g->s[1]);
    g->counter += g->buf[g->tail];
    g->tail = (g->tail + 1) % 16;
    g->im->sem_post(&g->s[0]);
  }
  return NULL;
}

/* Two threads, n rounds each of a or b; returns rounds per second.  */
static double pair(const struct pthread_fns *im, void *(*a)(void *),
                   void *(*b)(void *), unsigned s0, unsigned s1, long n,
                   char *note)
{
  struct shared *g = calloc(1, sizeof *g);
  struct worker w[2];
  pthread_t t[2];
  int64_t t0;
  double r;
  long expect = n * (n - 1) / 2;

  g->im = im;
  g->n = n;
  im->mutex_init(&g->m, NULL);
  im->cond_init(&g->c[0], NULL);
  im->cond_init(&g->c[1], NULL);
  im->sem_init(&g->s[0], 0, s0);
  im->sem_init(&g->s[1], 0, s1);
  w[0] = (struct worker){ g, 0 };
  w[1] = (struct worker){ g, 1 };
  t0 = fl_clock_ns(CLOCK_MONOTONIC);
  pthread_create(&t[0], NULL, a, &w[0]);
  pthread_create(&t[1], NULL, b, &w[1]);
  pthread_join(t[0], NULL);
  pthread_join(t[1], NULL);
  r = (double)n / since(t0);
  if (a == cond_producer || a == sem_producer) {
    lost |= g->counter != expect;
    sprintf(note, "%s",
            g->counter == expect ? "all items arrived" : "ITEMS LOST");
  }
  free(g);
  return r;
}

static double cond_pingpong(const struct pthread_fns *im, char *note)
{
  return pair(im, cond_player, cond_player, 0, 0, rounds(100000), note);
}

static double sem_pingpong(const struct pthread_fns *im, char *note)
{
  return pair(im, sem_player, sem_player, 1, 0, rounds(100000), note);
}

static double prodcons_cond(const struct pthread_fns *im, char *note)
{
  return pair(im, cond_producer, cond_consumer, 0, 0, rounds(300000), note);
}

static double prodcons_sem(const struct pthread_fns *im, char *note)
{
  return pair(im, sem_producer, sem_consumer, 16, 0, rounds(300000), note);
}

/* ------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

#define REPS_MAX 15

static void report(const char *name, double g[], double f[], int reps,
                   const char *gnote, const char *fnote)
{
  qsort(g, (size_t)reps, sizeof g[0], cmp_double);
  qsort(f, (size_t)reps, sizeof f[0], cmp_double);
  printf("%-16s %14.0f %14.0f %7.2f   glibc: %s | fastlock: %s\n", name,
         g[reps / 2], f[reps / 2], f[reps / 2] / g[reps / 2], gnote, fnote);
  fflush(stdout);
}

typedef double (*workload_fn)(const struct pthread_fns *, char *);

static void *nothing(void *p)
{
  return p;
}

int bench_pthread_main(int argc, char **argv)
{
  static const struct {
    const char *name;
    workload_fn fn;
  } rows[] = {
    { "mutex-pair-1t", mutex_pair },    { "mutex-pair", mutex_pair },
    { "cond-pingpong", cond_pingpong }, { "sem-pingpong", sem_pingpong },
    { "prodcons-cond", prodcons_cond }, { "prodcons-sem", prodcons_sem },
  };
  static const char usage[] =
      "usage: fastlock-bench pthread [--lib PATH] [--reps N] [--scale F]\n";
  const struct pthread_fns *dropin;
  const char *why = NULL;
  struct fl_context ctx;
  int reps = 3, i, k;
  Dl_info info;

  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0) {
      printf("%s", usage);
      return 0;
    }
    if (strcmp(argv[i], "--lib") == 0 && i + 1 < argc)
      setenv("FASTLOCK_PTHREAD_LIB", argv[++i], 1);
    else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--scale") == 0 && i + 1 < argc)
      scale = atof(argv[++i]);
    else {
      fprintf(stderr, "%s", usage);
      return 2;
    }
  }
  if (reps < 1 || reps > REPS_MAX || !(scale > 0 && scale <= 100)) {
    fprintf(stderr,
            "fastlock-bench pthread: --reps takes 1 to %d, --scale "
            "more than 0 and at most 100\n",
            REPS_MAX);
    return 2;
  }
  if (dladdr((void *)pthread_mutex_lock, &info) != 0
      && strstr(info.dli_fname, "fastlock") != NULL) {
    fprintf(stderr,
            "fastlock-bench pthread: glibc's pthread_mutex_lock is "
            "interposed (%s): run it without LD_PRELOAD\n",
            info.dli_fname);
    return 2;
  }
  dropin = dropin_load(&why);
  if (dropin == NULL) {
    fprintf(stderr, "fastlock-bench pthread: the drop-in: %s\n", why);
    return 1;
  }
  fl_context_probe(&ctx);
  fl_context_print(stdout, &ctx, "# ");
  printf("# drop-in: %s\n", dropin_path());
  printf("# %d repetitions, interleaved, median; ratio = fastlock/glibc "
         "(throughput: > 1 is faster)\n",
         reps);
  printf("%-16s %14s %14s %7s\n", "test", "glibc op/s", "fastlock op/s",
         "ratio");
  for (k = 0; k < (int)(sizeof rows / sizeof rows[0]); k++) {
    double g[REPS_MAX], f[REPS_MAX];
    char gnote[160] = "", fnote[160] = "";
    if (k == 1) {
      /* From here on the process has had a second thread.  */
      pthread_t t;
      pthread_create(&t, NULL, nothing, NULL);
      pthread_join(t, NULL);
    }
    for (i = 0; i < reps; i++) {
      g[i] = rows[k].fn(&glibc, gnote);
      f[i] = rows[k].fn(dropin, fnote);
    }
    report(rows[k].name, g, f, reps, gnote, fnote);
  }
  if (lost)
    fprintf(stderr, "fastlock-bench pthread: items lost\n");
  return lost ? 1 : 0;
}
