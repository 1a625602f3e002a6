/* stress/bench-pthread.c: fastlock-bench-pthread, libfastlock-pthread
 * against glibc's pthread locks, side by side in one run.
 *
 * The program is linked against glibc only; it loads the drop-in with
 * dlopen(RTLD_LOCAL) and takes each function from it with dlsym, so the
 * two implementations run the same workload code through one table of
 * function pointers, interleaved (glibc, drop-in, glibc, ...), repeated,
 * the median reported with the drop-in's ratio to glibc (> 1: faster).
 *
 * Rows:
 *   mutex-pair-1t       lock+unlock of a free mutex in a process that
 *                       has never had a second thread (glibc then uses
 *                       plain stores; so does the drop-in)
 *   mutex-pair          the same once the process has had threads
 *   mutex-2t, mutex-4t  threads incrementing a counter under one mutex
 *   cond-pingpong       two threads handing a turn back and forth through
 *                       a mutex and a condition variable
 *   sem-pingpong        the same through two semaphores
 *   prodcons-cond       a 16-slot bounded buffer on a mutex and two
 *                       condition variables, one producer, one consumer
 *   prodcons-sem        the same buffer on two counting semaphores
 *     (the producer/consumer examples of glibc's LinuxThreads, as timed
 *     by J. Stezenbach on linux-mips, July 2002)
 *   rwsem-r1 ... rwsem-xx  the rwsem table (D. Howells and A. Arcangeli,
 *     linux-kernel, April 2001, rwsem-opt4 vs 00_rwsem-9) through
 *     pthread_rwlock_*: readers and writers looping for a fixed time;
 *     operations by each class, per-thread min/max, and a starvation
 *     flag (a class whose max/2 > min, or a class with a thread that got
 *     nothing).  */
#define _GNU_SOURCE 1
#include "config.h"

#include "context.h"
#include "sys/clock.h"

#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct impl {
  const char *name;
  int (*mutex_init)(pthread_mutex_t *, const pthread_mutexattr_t *);
  int (*mutex_lock)(pthread_mutex_t *);
  int (*mutex_unlock)(pthread_mutex_t *);
  int (*cond_init)(pthread_cond_t *, const pthread_condattr_t *);
  int (*cond_wait)(pthread_cond_t *, pthread_mutex_t *);
  int (*cond_signal)(pthread_cond_t *);
  int (*sem_init)(sem_t *, int, unsigned);
  int (*sem_wait)(sem_t *);
  int (*sem_post)(sem_t *);
  int (*rw_init)(pthread_rwlock_t *, const pthread_rwlockattr_t *);
  int (*rw_rdlock)(pthread_rwlock_t *);
  int (*rw_wrlock)(pthread_rwlock_t *);
  int (*rw_unlock)(pthread_rwlock_t *);
};

static const struct impl glibc = {
  "glibc",
  pthread_mutex_init,
  pthread_mutex_lock,
  pthread_mutex_unlock,
  pthread_cond_init,
  pthread_cond_wait,
  pthread_cond_signal,
  sem_init,
  sem_wait,
  sem_post,
  pthread_rwlock_init,
  pthread_rwlock_rdlock,
  pthread_rwlock_wrlock,
  pthread_rwlock_unlock,
};

static void *must_sym(void *lib, const char *name)
{
  void *p = dlsym(lib, name);
  if (p == NULL) {
    fprintf(stderr, "fastlock-bench-pthread: %s: %s\n", name, dlerror());
    exit(1);
  }
  return p;
}

#define SYM(field, name)                                                       \
 __builtin_memcpy(&d->field, &(void *){ must_sym(lib, name) }, sizeof(void *))

static void load_dropin(struct impl *d, const char *path)
{
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "fastlock-bench-pthread: %s\n", dlerror());
    exit(1);
  }
  d->name = "fastlock";
  SYM(mutex_init, "pthread_mutex_init");
  SYM(mutex_lock, "pthread_mutex_lock");
  SYM(mutex_unlock, "pthread_mutex_unlock");
  SYM(cond_init, "pthread_cond_init");
  SYM(cond_wait, "pthread_cond_wait");
  SYM(cond_signal, "pthread_cond_signal");
  SYM(sem_init, "sem_init");
  SYM(sem_wait, "sem_wait");
  SYM(sem_post, "sem_post");
  SYM(rw_init, "pthread_rwlock_init");
  SYM(rw_rdlock, "pthread_rwlock_rdlock");
  SYM(rw_wrlock, "pthread_rwlock_wrlock");
  SYM(rw_unlock, "pthread_rwlock_unlock");
}

/* ------------------------------------------------------------------ */
/* Workloads: each returns operations per second and may fill notes.   */
/* ------------------------------------------------------------------ */

static double duration_s = 0.3;

static double since(int64_t t0)
{
  return (double)(fl_clock_ns(CLOCK_MONOTONIC) - t0) / 1e9;
}

struct shared {
  const struct impl *im;
  pthread_mutex_t m;
  pthread_cond_t c[2];
  sem_t s[2];
  pthread_rwlock_t rw;
  volatile int stop;
  long counter;
  int turn;
  long n;
  /* bounded buffer */
  int buf[16];
  int head, tail, count;
};

struct worker {
  struct shared *g;
  int id, writer;
  long ops;
};

static double mutex_pair(const struct impl *im, char *note)
{
  pthread_mutex_t m;
  long i, n = 2000000;
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

static void *contend(void *p)
{
  struct worker *w = p;
  struct shared *g = w->g;
  while (!g->stop) {
    g->im->mutex_lock(&g->m);
    g->counter++;
    g->im->mutex_unlock(&g->m);
    w->ops++;
  }
  return NULL;
}

/* Run fn in n threads for duration_s; returns total ops per second and
 * writes per-thread min/max into note.  */
static double timed_threads(struct shared *g, int n, void *(*fn)(void *),
                            struct worker *w, char *note)
{
  pthread_t t[64];
  int64_t t0;
  double secs, total = 0;
  long mn = -1, mx = 0;
  int i;

  t0 = fl_clock_ns(CLOCK_MONOTONIC);
  for (i = 0; i < n; i++)
    pthread_create(&t[i], NULL, fn, &w[i]);
  while (since(t0) < duration_s) {
    struct timespec tick = { 0, 10000000 };
    nanosleep(&tick, NULL);
  }
  g->stop = 1;
  for (i = 0; i < n; i++)
    pthread_join(t[i], NULL);
  secs = since(t0);
  for (i = 0; i < n; i++) {
    total += (double)w[i].ops;
    if (mn < 0 || w[i].ops < mn)
      mn = w[i].ops;
    if (w[i].ops > mx)
      mx = w[i].ops;
  }
  if (note != NULL)
    sprintf(note, "per-thread min/max %ld/%ld%s", mn, mx,
            mx / 2 > mn ? " STARVED" : "");
  return total / secs;
}

static double mutex_threads(const struct impl *im, int n, char *note)
{
  struct shared *g = calloc(1, sizeof *g);
  struct worker w[4];
  double r;
  int i;

  g->im = im;
  im->mutex_init(&g->m, NULL);
  for (i = 0; i < n; i++)
    w[i] = (struct worker){ g, i, 0, 0 };
  r = timed_threads(g, n, contend, w, note);
  free(g);
  return r;
}

static double mutex_2t(const struct impl *im, char *note)
{
  return mutex_threads(im, 2, note);
}
static double mutex_4t(const struct impl *im, char *note)
{
  return mutex_threads(im, 4, note);
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
static double pair(const struct impl *im, void *(*a)(void *),
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
  w[0] = (struct worker){ g, 0, 0, 0 };
  w[1] = (struct worker){ g, 1, 0, 0 };
  t0 = fl_clock_ns(CLOCK_MONOTONIC);
  pthread_create(&t[0], NULL, a, &w[0]);
  pthread_create(&t[1], NULL, b, &w[1]);
  pthread_join(t[0], NULL);
  pthread_join(t[1], NULL);
  r = (double)n / since(t0);
  if (note != NULL && (a == cond_producer || a == sem_producer))
    sprintf(note, "%s",
            g->counter == expect ? "all items arrived" : "ITEMS LOST");
  free(g);
  return r;
}

static double cond_pingpong(const struct impl *im, char *note)
{
  return pair(im, cond_player, cond_player, 0, 0, 100000, note);
}

static double sem_pingpong(const struct impl *im, char *note)
{
  return pair(im, sem_player, sem_player, 1, 0, 100000, note);
}

static double prodcons_cond(const struct impl *im, char *note)
{
  return pair(im, cond_producer, cond_consumer, 0, 0, 300000, note);
}

static double prodcons_sem(const struct impl *im, char *note)
{
  return pair(im, sem_producer, sem_consumer, 16, 0, 300000, note);
}

/* The rwsem table.  */
static void *rw_worker(void *p)
{
  struct worker *w = p;
  struct shared *g = w->g;
  while (!g->stop) {
    if (w->writer) {
      g->im->rw_wrlock(&g->rw);
      g->counter++;
    } else {
      g->im->rw_rdlock(&g->rw);
      (void)*(volatile long *)&g->counter;
    }
    g->im->rw_unlock(&g->rw);
    w->ops++;
  }
  return NULL;
}

static const struct rw_row {
  const char *name;
  int readers, writers;
} rw_rows[] = {
  { "rwsem-r1", 1, 0 },    { "rwsem-r2", 2, 0 },   { "rwsem-ro", 4, 0 },
  { "rwsem-w1", 0, 1 },    { "rwsem-wo", 0, 4 },   { "rwsem-rw", 4, 2 },
  { "rwsem-worm", 30, 1 }, { "rwsem-xx", 30, 15 },
};

static double rw_run(const struct impl *im, const struct rw_row *row,
                     char *note)
{
  struct shared *g = calloc(1, sizeof *g);
  struct worker w[64];
  int n = row->readers + row->writers, i;
  double r;
  long rmin = -1, rmax = 0, wmin = -1, wmax = 0, rsum = 0, wsum = 0;

  g->im = im;
  im->rw_init(&g->rw, NULL);
  for (i = 0; i < n; i++)
    w[i] = (struct worker){ g, i, i >= row->readers, 0 };
  r = timed_threads(g, n, rw_worker, w, NULL);
  for (i = 0; i < n; i++) {
    long o = w[i].ops;
    if (w[i].writer) {
      wsum += o;
      wmin = wmin < 0 || o < wmin ? o : wmin;
      wmax = o > wmax ? o : wmax;
    } else {
      rsum += o;
      rmin = rmin < 0 || o < rmin ? o : rmin;
      rmax = o > rmax ? o : rmax;
    }
  }
  sprintf(note, "R %ld (min/max %ld/%ld) W %ld (min/max %ld/%ld)%s", rsum,
          rmin < 0 ? 0 : rmin, rmax, wsum, wmin < 0 ? 0 : wmin, wmax,
          (row->readers > 0 && (rmax / 2 > rmin || rmin == 0))
                  || (row->writers > 0 && (wmax / 2 > wmin || wmin == 0))
              ? " STARVED"
              : "");
  free(g);
  return r;
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

typedef double (*workload_fn)(const struct impl *, char *);

static void *nothing(void *p)
{
  return p;
}

int main(int argc, char **argv)
{
  static const struct {
    const char *name;
    workload_fn fn;
  } rows[] = {
    { "mutex-pair-1t", mutex_pair },    { "mutex-pair", mutex_pair },
    { "mutex-2t", mutex_2t },           { "mutex-4t", mutex_4t },
    { "cond-pingpong", cond_pingpong }, { "sem-pingpong", sem_pingpong },
    { "prodcons-cond", prodcons_cond }, { "prodcons-sem", prodcons_sem },
  };
  const char *lib = "libfastlock-pthread.so.0";
  struct impl dropin;
  struct fl_context ctx;
  int reps = 3, i, k;
  Dl_info info;

  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--lib") == 0 && i + 1 < argc)
      lib = argv[++i];
    else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--duration") == 0 && i + 1 < argc)
      duration_s = atof(argv[++i]);
    else {
      fprintf(
          stderr,
          "usage: fastlock-bench-pthread [--lib PATH] [--reps N] [--duration S]\n");
      return 2;
    }
  }
  if (reps < 1 || reps > REPS_MAX)
    reps = 3;
  if (dladdr((void *)pthread_mutex_lock, &info) != 0
      && strstr(info.dli_fname, "fastlock") != NULL) {
    fprintf(stderr,
            "fastlock-bench-pthread: glibc's pthread_mutex_lock is "
            "interposed (%s): run it without LD_PRELOAD\n",
            info.dli_fname);
    return 2;
  }
  load_dropin(&dropin, lib);
  fl_context_probe(&ctx);
  fl_context_print(stdout, &ctx, "# ");
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
      f[i] = rows[k].fn(&dropin, fnote);
    }
    report(rows[k].name, g, f, reps, gnote, fnote);
  }
  for (k = 0; k < (int)(sizeof rw_rows / sizeof rw_rows[0]); k++) {
    double g[REPS_MAX], f[REPS_MAX];
    char gnote[160] = "", fnote[160] = "";
    for (i = 0; i < reps; i++) {
      g[i] = rw_run(&glibc, &rw_rows[k], gnote);
      f[i] = rw_run(&dropin, &rw_rows[k], fnote);
    }
    report(rw_rows[k].name, g, f, reps, gnote, fnote);
  }
  return 0;
}
