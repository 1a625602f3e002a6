/* stress/bench-ipc.c: fastlock-bench ipc, the figures of <fastlock/ipc.h>
 * beside what a Wine-style module would use instead.
 *
 *   uncontended   one thread, one acquire + release pair of an fl_ipc
 *                 semaphore and mutex (one compare-and-swap each way on
 *                 the object's word, src/ipc/fastpath.c: no system call,
 *                 no region lock), beside an FL_PSHARED fl_rwsem write
 *                 pair and a process-shared POSIX semaphore;
 *   ping-pong     two processes alternate through two auto-reset events,
 *                 beside POSIX process-shared semaphores (sem_post and
 *                 sem_wait), eventfd (esync's mechanism) and a pipe:
 *                 round trips per second;
 *   wait-any      one wait over 1, 8 and 64 manual-reset events of which
 *                 only the last is set: the cost of a wait as the set
 *                 grows.
 * Each figure is the median of 5 runs; the machine's context comes first
 * (a figure without it means nothing).  */
#include "config.h"

#include "bench.h"
#include "cli.h"
#include "context.h"

#include <fastlock/ipc.h>
#include <fastlock/rwsem.h>

#include <errno.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sys/clock.h"

#define RUNS 5

static fl_ipc_t *region;
static char region_name[64];

static void die(const char *what, int rc)
{
  fprintf(stderr, "fastlock-bench ipc: %s: %s\n", what, strerror(rc));
  if (region_name[0] != '\0')
    fl_ipc_unlink(region_name);
  exit(1);
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v)
{
  qsort(v, RUNS, sizeof *v, cmp_double);
  return v[RUNS / 2];
}

/* ------------------------------------------------------------------ */
/* Uncontended pairs: nanoseconds per pair.                            */

enum pair_kind { PAIR_SEM, PAIR_MUTEX, PAIR_RWSEM, PAIR_POSIX };

struct pair_objs {
  fl_ipc_obj_t sem, mutex;
  fl_rwsem_t *rw;
  sem_t *psem;
};

static double time_pairs(enum pair_kind k, struct pair_objs *o, long n)
{
  int64_t t0 = fl_clock_ns(CLOCK_MONOTONIC);
  uint32_t index;
  long i;

  for (i = 0; i < n; i++) {
    switch (k) {
      case PAIR_SEM:
        if (fl_ipc_wait_any(region, 1, &o->sem, CLOCK_MONOTONIC, NULL, &index)
                != 0
            || fl_ipc_sem_release(region, o->sem, 1, NULL) != 0)
          die("semaphore pair", EPROTO);
        break;
      case PAIR_MUTEX:
        if (fl_ipc_wait_any(region, 1, &o->mutex, CLOCK_MONOTONIC, NULL, &index)
                != 0
            || fl_ipc_mutex_release(region, o->mutex, NULL) != 0)
          die("mutex pair", EPROTO);
        break;
      case PAIR_RWSEM:
        fl_rwsem_down_write(o->rw);
        fl_rwsem_up_write(o->rw);
        break;
      case PAIR_POSIX:
        sem_wait(o->psem);
        sem_post(o->psem);
        break;
    }
  }
  return (double)(fl_clock_ns(CLOCK_MONOTONIC) - t0) / (double)n;
}

/* ------------------------------------------------------------------ */
/* Ping-pong between two processes: round trips per second.            */

enum pp_kind { PP_IPC, PP_POSIX, PP_EVENTFD, PP_PIPE };

struct pp_shared {
  sem_t a, b;
};

/* One side's step: wait for the ball on its own channel, send it on the
 * other.  */
static void pp_step(enum pp_kind k, int side, fl_ipc_obj_t *ev,
                    struct pp_shared *sh, int fds[2][2])
{
  uint64_t v = 1;
  uint32_t index;
  char c = 0;

  switch (k) {
    case PP_IPC:
      if (fl_ipc_wait_any(region, 1, &ev[side], CLOCK_MONOTONIC, NULL, &index)
              != 0
          || fl_ipc_event_set(region, ev[!side], NULL) != 0)
        _exit(3);
      break;
    case PP_POSIX:
      sem_wait(side ? &sh->b : &sh->a);
      sem_post(side ? &sh->a : &sh->b);
      break;
    case PP_EVENTFD:
      if (read(fds[side][0], &v, sizeof v) != (ssize_t)sizeof v
          || write(fds[!side][0], &v, sizeof v) != (ssize_t)sizeof v)
        _exit(3);
      break;
    case PP_PIPE:
      if (read(fds[side][0], &c, 1) != 1 || write(fds[!side][1], &c, 1) != 1)
        _exit(3);
      break;
  }
}

static double ping_pong(enum pp_kind k, double seconds)
{
  struct pp_shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
                              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  volatile uint32_t *stop = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                                 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  fl_ipc_obj_t ev[2];
  int fds[2][2], i;
  int64_t t0, t1;
  long trips = 0;
  pid_t pid;
  uint64_t v = 1;
  char c = 0, names[2][32];
  static int run;

  /* A child killed at the end keeps its references until its client
   * slot is claimed again: new names each run.  */
  snprintf(names[0], sizeof names[0], "ping-%d", run);
  snprintf(names[1], sizeof names[1], "pong-%d", run++);
  if (sh == MAP_FAILED || stop == MAP_FAILED)
    die("mmap", errno);
  sem_init(&sh->a, 1, 0);
  sem_init(&sh->b, 1, 0);
  for (i = 0; i < 2; i++) {
    if (k == PP_IPC) {
      int rc = fl_ipc_event_create(region, names[i], 0, 0, &ev[i]);
      if (rc != 0)
        die("event", rc);
    } else if (k == PP_EVENTFD) {
      fds[i][0] = eventfd(0, EFD_CLOEXEC);
    } else if (k == PP_PIPE && pipe(fds[i]) != 0) {
      die("pipe", errno);
    }
  }
  fflush(NULL);
  pid = fork();
  if (pid == 0) {
    /* The child is a client of its own: it opens the region anew.  */
    if (k == PP_IPC
        && (fl_ipc_open(region_name, &region) != 0
            || fl_ipc_obj_open(region, names[0], &ev[0]) != 0
            || fl_ipc_obj_open(region, names[1], &ev[1]) != 0))
      _exit(2);
    while (!*stop)
      pp_step(k, 1, ev, sh, fds);
    _exit(0);
  }
  t0 = fl_clock_ns(CLOCK_MONOTONIC);
  t1 = t0 + (int64_t)(seconds * 1e9);
  while (fl_clock_ns(CLOCK_MONOTONIC) < t1) {
    /* Serve, then wait for the return: one round trip.  */
    switch (k) {
      case PP_IPC:
        if (fl_ipc_event_set(region, ev[1], NULL) != 0)
          die("set", EPROTO);
        break;
      case PP_POSIX:
        sem_post(&sh->b);
        break;
      case PP_EVENTFD:
        if (write(fds[1][0], &v, sizeof v) != (ssize_t)sizeof v)
          die("eventfd", errno);
        break;
      case PP_PIPE:
        if (write(fds[1][1], &c, 1) != 1)
          die("pipe", errno);
        break;
    }
    switch (k) {
      case PP_IPC: {
        uint32_t index;
        if (fl_ipc_wait_any(region, 1, &ev[0], CLOCK_MONOTONIC, NULL, &index)
            != 0)
          die("wait", EPROTO);
        break;
      }
      case PP_POSIX:
        sem_wait(&sh->a);
        break;
      case PP_EVENTFD:
        if (read(fds[0][0], &v, sizeof v) != (ssize_t)sizeof v)
          die("eventfd", errno);
        break;
      case PP_PIPE:
        if (read(fds[0][0], &c, 1) != 1)
          die("pipe", errno);
        break;
    }
    trips++;
  }
  t1 = fl_clock_ns(CLOCK_MONOTONIC);
  *stop = 1;
  /* The child may be waiting for one more ball.  */
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  for (i = 0; i < 2; i++) {
    if (k == PP_IPC)
      fl_ipc_obj_close(region, ev[i]);
    else if (k == PP_EVENTFD)
      close(fds[i][0]);
    else if (k == PP_PIPE) {
      close(fds[i][0]);
      close(fds[i][1]);
    }
  }
  sem_destroy(&sh->a);
  sem_destroy(&sh->b);
  munmap(sh, sizeof *sh);
  munmap((void *)stop, 4096);
  return (double)trips / ((double)(t1 - t0) / 1e9);
}

/* ------------------------------------------------------------------ */

static double wait_any_cost(uint32_t n, long iters)
{
  fl_ipc_obj_t ev[FL_IPC_WAIT_MAX];
  uint32_t i, index;
  int64_t t0;
  long k;
  double ns;

  for (i = 0; i < n; i++) {
    int rc = fl_ipc_event_create(region, NULL, 1, i == n - 1, &ev[i]);
    if (rc != 0)
      die("event", rc);
  }
  t0 = fl_clock_ns(CLOCK_MONOTONIC);
  for (k = 0; k < iters; k++)
    if (fl_ipc_wait_any(region, n, ev, CLOCK_MONOTONIC, NULL, &index) != 0
        || index != n - 1)
      die("wait-any", EPROTO);
  ns = (double)(fl_clock_ns(CLOCK_MONOTONIC) - t0) / (double)iters;
  for (i = 0; i < n; i++)
    fl_ipc_obj_close(region, ev[i]);
  return ns;
}

int bench_ipc_main(int argc, char **argv)
{
  static const char *const pair_names[] = {
    "fl_ipc semaphore wait + release",
    "fl_ipc mutex wait + release",
    "fl_rwsem (FL_PSHARED) down_write + up_write",
    "POSIX pshared sem_wait + sem_post",
  };
  static const char *const pp_names[] = {
    "fl_ipc auto-reset events",
    "POSIX pshared semaphores",
    "eventfd",
    "pipe",
  };
  static const uint32_t sets[] = { 1, 8, 64 };
  struct fl_context ctx;
  struct pair_objs o;
  fl_ipc_obj_t rw;
  double v[RUNS], seconds = 1.0, rwsem_ns = 0;
  long n = 200000, iters;
  int i, k, rc;

  if (argc == 2 && strcmp(argv[1], "--help") == 0) {
    printf("usage: fastlock-bench ipc [--duration SEC]\n");
    return 0;
  }
  if (argc == 3 && strcmp(argv[1], "--duration") == 0) {
    if (cli_seconds(argv[2], 0, 3600, &seconds) != 0) {
      fprintf(stderr, "fastlock-bench ipc: --duration: seconds, > 0\n");
      return 2;
    }
  } else if (argc != 1) {
    fprintf(stderr, "usage: fastlock-bench ipc [--duration SEC]\n");
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  fl_context_probe(&ctx);
  fl_context_print(stdout, &ctx, "# ");
  snprintf(region_name, sizeof region_name, "/fl-bench-ipc-%d", (int)getpid());
  fl_ipc_unlink(region_name);
  rc = fl_ipc_create(region_name, 128, 4, &region);
  if (rc != 0)
    die("fl_ipc_create", rc);
  if ((rc = fl_ipc_sem_create(region, NULL, 1, 1, &o.sem)) != 0
      || (rc = fl_ipc_mutex_create(region, NULL, 0, &o.mutex)) != 0
      || (rc = fl_ipc_rwsem_create(region, NULL, &rw)) != 0
      || (rc = fl_ipc_rwsem(region, rw, &o.rw)) != 0)
    die("objects", rc);
  o.psem = mmap(NULL, sizeof *o.psem, PROT_READ | PROT_WRITE,
                MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (o.psem == MAP_FAILED)
    die("mmap", errno);
  sem_init(o.psem, 1, 1);

  printf(
      "\nuncontended acquire + release (one thread; ns per pair, median of %d)\n",
      RUNS);
  for (k = 0; k < 4; k++) {
    for (i = 0; i < RUNS; i++)
      v[i] = time_pairs((enum pair_kind)k, &o, n);
    v[0] = median(v);
    if (k == PAIR_RWSEM)
      rwsem_ns = v[0];
    printf("  %-46s %8.1f ns\n", pair_names[k], v[0]);
  }
  printf(
      "  (ratio to the rwsem write pair: semaphore and mutex as above / %.1f ns)\n",
      rwsem_ns);

  printf("\ncross-process ping-pong (two processes; round trips per second, "
         "median of %d runs of %gs)\n",
         RUNS, seconds / RUNS);
  for (k = 0; k < 4; k++) {
    for (i = 0; i < RUNS; i++)
      v[i] = ping_pong((enum pp_kind)k, seconds / RUNS);
    printf("  %-46s %10.0f /s\n", pp_names[k], median(v));
  }

  printf("\nwait-any over n manual-reset events, only the last set "
         "(ns per wait, median of %d)\n",
         RUNS);
  for (k = 0; k < 3; k++) {
    iters = n / (long)sets[k] + 1000;
    for (i = 0; i < RUNS; i++)
      v[i] = wait_any_cost(sets[k], iters);
    printf("  n = %-2u %50.1f ns\n", sets[k], median(v));
  }
  fl_ipc_close(region);
  fl_ipc_unlink(region_name);
  return 0;
}
