/* stress/stress.c: fastlock-stress, the torture test as a command,
 * in the manner of the kernel's locktorture.
 *
 * Locks (rwsem, spin).  Every thread loops until the end of the run:
 * acquire (blocking, try or timed at random, as the implementation has
 * them), check the invariant, hold for a random time (now and then a
 * long sleep holding the lock, so that the others pile up behind it),
 * release, pause.  The invariant is kept by two counters beside the lock,
 * write_held and read_held, which every holder raises on entry and lowers
 * before leaving: a writer must find both at 0, a reader write_held at 0.
 * Writers also store a sequence number into two words, one before its
 * hold and one after, which readers compare: a torn pair is a reader that
 * ran beside a writer.  Inside every critical section the holder also
 * checks the lock's own state where the driver can (check: fastlock's
 * rwsem, fl_rwsem_check_invariants).  A writer sometimes downgrades to a
 * reader.  Each error return that the operation does not document for
 * the case (a timed wait that fails with anything but ETIMEDOUT, an
 * unlock that fails) counts as a failure too.
 *
 * With --pshared the lock and the counters live in a memfd; with
 * --processes P each of P child processes maps it at its own address and
 * runs all the threads asked for, while the parent only reports.
 *
 * Counters.  Threads add random amounts (some large, to cross 32 bits and
 * the strategies' per-slot deltas), each keeping its own exact tally;
 * the main thread interrupts random threads with a signal whose handler
 * adds too (unless the runtime loses a thread's TLS in a handler:
 * stress/tls-probe.h), and replaces threads as they exit after a random
 * number of adds, so that values left by exited threads are counted.  At the end
 * the exact sum must equal the tallies.
 *
 * The final report: per class the total, per-thread max/min with "???"
 * when one thread did less than half of another's work, failures with
 * "!!!", then "End of test: SUCCESS" or "FAILURE" (exit status 0 or 1).
 * A thread or process that has not finished 10 s after the end is a
 * failure (deadlock or lost wake-up).  */
#include "config.h"

#include "context.h"
#include "stress.h"
#include "tls-probe.h"

#include <fastlock/fastlock.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sys/clock.h"
#include "sys/cpu.h"

/* How long after the end threads may take to finish.  */
#define GRACE_NS ((int64_t)10 * FL_NSEC_PER_SEC)
/* Failures printed as they happen, per process; the rest are counted.  */
#define MAX_PRINTED 10
/* What a signal handler adds to a counter.  */
#define HANDLER_DELTA 7

/* Counts a thread writes while the reporter may read them: relaxed
 * atomics where 64-bit ones are instructions; elsewhere (ppc32, mipsel)
 * volatile accesses, whose tearing can only garble a progress line --
 * the final report reads them after the threads are gone.  */
#if __GCC_ATOMIC_LLONG_LOCK_FREE == 2
static inline void stat_add(uint64_t *p, uint64_t v)
{
  __atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + v,
                   __ATOMIC_RELAXED);
}

static inline uint64_t stat_get(const uint64_t *p)
{
  return __atomic_load_n(p, __ATOMIC_RELAXED);
}
#else
static inline void stat_add(uint64_t *p, uint64_t v)
{
  *(volatile uint64_t *)p += v;
}

static inline uint64_t stat_get(const uint64_t *p)
{
  return *(const volatile uint64_t *)p;
}
#endif

struct stats {
  uint64_t ops, busy, timeouts, downgrades, long_holds, fails;
  uint64_t abandoned;           /* --kill-ms: taken with EOWNERDEAD */
  int32_t phase;                /* --kill-ms: enum phase */
  int32_t paused;               /* --kill-ms: at a quiescent point */
  uint32_t gen;                 /* --kill-ms: processes started in its place */
  uint64_t signals, threads;    /* counter */
  int64_t added, handler_added; /* counter: read after the join */
  int cls;
  int done; /* counter: the thread has finished */
} __attribute__((aligned(128)));

/* Everything the threads of all processes share.  */
struct shared {
  unsigned char obj[256] __attribute__((aligned(128)));
  int32_t write_held __attribute__((aligned(128)));
  int32_t read_held;
  uint32_t data[2] __attribute__((aligned(128)));
  int stop __attribute__((aligned(128)));
  int pause; /* --kill-ms: a quiescent point is asked for */
  uint32_t printed;
  struct stats w[];
};

struct worker {
  struct shared *sh;
  void *obj;
  const struct stress_cfg *cfg;
  struct stats *st;
  int index;
  uint64_t rng;
  pthread_t tid;
};

static const char *class_label(enum stress_prim prim, int cls)
{
  if (prim == STRESS_COUNTER)
    return "Adds  ";
  if (prim == STRESS_SPIN)
    return "Locks ";
  return cls ? "Writes" : "Reads ";
}

static uint64_t rnd(uint64_t *s)
{
  /* xorshift64*: enough for choosing operations and hold times.  */
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ull;
}

/* The start of thread index's sequence: never 0, which xorshift would
 * never leave.  */
static uint64_t rng_seed(uint64_t seed, int index)
{
  uint64_t s =
      seed * 0x9e3779b97f4a7c15ull ^ (uint64_t)index * 0xbf58476d1ce4e5b9ull;
  return s != 0 ? s : 1;
}

static int stopped(const struct shared *sh)
{
  return __atomic_load_n(&sh->stop, __ATOMIC_RELAXED);
}

static void failure(struct worker *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void failure(struct worker *w, const char *fmt, ...)
{
  char msg[256];
  va_list ap;

  stat_add(&w->st->fails, 1);
  if (__atomic_fetch_add(&w->sh->printed, 1, __ATOMIC_RELAXED) >= MAX_PRINTED)
    return;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  printf("fastlock-stress: !!! %s %d: %s\n",
         w->cfg->prim == STRESS_SPIN ? "thread"
         : w->st->cls                ? "writer"
                                     : "reader",
         w->index, msg);
}

static void spin_for(uint64_t n)
{
  while (n-- > 0)
    fl_cpu_relax();
}

static void sleep_ns(int64_t ns)
{
  struct timespec ts = { (time_t)(ns / FL_NSEC_PER_SEC),
                         (long)(ns % FL_NSEC_PER_SEC) };
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
    ;
}

/* A random hold: mostly short, sometimes longer, one in a thousand a
 * sleep of 1 to 3 ms with the lock held.  */
static void hold(struct worker *w)
{
  uint64_t r = rnd(&w->rng) % 1000;

  if (r == 0) {
    stat_add(&w->st->long_holds, 1);
    sleep_ns(1000000 + (int64_t)(rnd(&w->rng) % 2000000));
  } else if (r < 100) {
    spin_for(rnd(&w->rng) % 2000);
  } else {
    spin_for(rnd(&w->rng) % 64);
  }
}

static const char *errname(int rc)
{
  static __thread char buf[64];
  snprintf(buf, sizeof buf, "%d (%s)", rc, strerror(rc));
  return buf;
}

/* The run's verdict: the first reason it failed, if any.  */
static char verdict[256];
static int run_failed;

static void fail_run(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static void fail_run(const char *fmt, ...)
{
  va_list ap;

  if (!run_failed) {
    va_start(ap, fmt);
    vsnprintf(verdict, sizeof verdict, fmt, ap);
    va_end(ap);
  }
  run_failed = 1;
}

/* What acquire did.  */
enum { NOT_TAKEN, TAKEN, TAKEN_DEAD /* for writing, EOWNERDEAD */ };

/* Take the lock in class cls, by a random one of the ways it has; with
 * --kill-ms never without a deadline (a dead reader's lock stays until
 * the next quiescent point, which a thread blocked behind it would never
 * reach).  A failure that the operation does not document is counted.  */
static int acquire(struct worker *w, int cls)
{
  const struct stress_lock_ops *ops = w->cfg->lock;
  uint64_t r = rnd(&w->rng) % 100;
  int killing = w->cfg->kill_ms > 0;
  int rc;

  if (r < 15) {
    rc = ops->trylock[cls](w->obj);
    if (rc == EBUSY) {
      stat_add(&w->st->busy, 1);
      return NOT_TAKEN;
    }
  } else if ((r < 30 || killing) && ops->timedlock[cls] != NULL) {
    clockid_t clock = rnd(&w->rng) & 1 ? CLOCK_MONOTONIC : CLOCK_REALTIME;
    int64_t most = r < 30 ? 300000 : 50000000;
    struct timespec deadline =
        fl_deadline_after_ns(clock, (int64_t)(rnd(&w->rng) % (uint64_t)most));
    rc = ops->timedlock[cls](w->obj, clock, &deadline);
    if (rc == ETIMEDOUT) {
      stat_add(&w->st->timeouts, 1);
      return NOT_TAKEN;
    }
  } else {
    rc = ops->lock[cls](w->obj);
  }
  if (rc == EOWNERDEAD && killing)
    return TAKEN_DEAD;
  if (rc != 0)
    failure(w, "%s returned %s",
            r < 15              ? "trylock"
            : r < 30 || killing ? "timed lock"
                                : "lock",
            errname(rc));
  return rc == 0 ? TAKEN : NOT_TAKEN;
}

static void release(struct worker *w, int cls)
{
  int rc = w->cfg->lock->unlock[cls](w->obj);
  if (rc != 0)
    failure(w, "unlock returned %s", errname(rc));
}

/* Inside a critical section: the lock's own state is legal.  */
static void check_state(struct worker *w)
{
  const struct stress_lock_ops *ops = w->cfg->lock;
  int broken = ops->check != NULL ? ops->check(w->obj) : 0;

  if (broken != 0)
    failure(w, "the lock's state breaks its invariant I%d", broken);
}

/* As a reader: no writer may be inside, and the pair must not be torn. */
static void read_section(struct worker *w)
{
  struct shared *sh = w->sh;
  uint32_t a, b;
  int32_t writers;

  __atomic_fetch_add(&sh->read_held, 1, __ATOMIC_SEQ_CST);
  writers = __atomic_load_n(&sh->write_held, __ATOMIC_SEQ_CST);
  if (writers != 0)
    failure(w, "%d writer(s) inside with a reader", writers);
  check_state(w);
  a = __atomic_load_n(&sh->data[0], __ATOMIC_RELAXED);
  hold(w);
  b = __atomic_load_n(&sh->data[1], __ATOMIC_RELAXED);
  if (a != b)
    failure(w, "saw a write in progress (%u then %u)", a, b);
  __atomic_fetch_sub(&sh->read_held, 1, __ATOMIC_SEQ_CST);
}

/* As a writer: alone, and finding the last writer's pair complete.
 * Leaves with write_held raised.  */
static void write_section(struct worker *w)
{
  struct shared *sh = w->sh;
  int32_t others = __atomic_fetch_add(&sh->write_held, 1, __ATOMIC_SEQ_CST);
  int32_t readers = __atomic_load_n(&sh->read_held, __ATOMIC_SEQ_CST);
  uint32_t a = __atomic_load_n(&sh->data[0], __ATOMIC_RELAXED);

  if (others != 0)
    failure(w, "%d other writer(s) inside", others);
  if (readers != 0)
    failure(w, "%d reader(s) inside with a writer", readers);
  if (__atomic_load_n(&sh->data[1], __ATOMIC_RELAXED) != a)
    failure(w, "found a write half done");
  check_state(w);
  __atomic_store_n(&sh->data[0], a + 1, __ATOMIC_RELAXED);
  hold(w);
  __atomic_store_n(&sh->data[1], a + 1, __ATOMIC_RELAXED);
}

/* --kill-ms: what each thread is doing, in its slot, for the supervisor
 * that kills its process.  Each is set before a call and after it
 * returns, so a thread killed inside a call is known to be inside it,
 * not whether the call took or released the lock: WANT_READ may hold a
 * read lock (or, having found the write holder dead, the write lock),
 * WANT_WRITE the write lock, READ a read lock, WRITE the write lock,
 * DOWNGRADE either.  */
enum phase {
  PH_NONE,
  PH_WANT_READ,
  PH_READ,
  PH_WANT_WRITE,
  PH_WRITE,
  PH_DOWNGRADE
};

static void set_phase(struct worker *w, enum phase ph)
{
  if (w->cfg->kill_ms > 0)
    __atomic_store_n(&w->st->phase, (int32_t)ph, __ATOMIC_SEQ_CST);
}

/* The counters and the pair as a dead writer may have left them
 * (nobody else inside): zero and whole.  */
static void repair(struct shared *sh)
{
  __atomic_store_n(&sh->write_held, 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&sh->read_held, 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&sh->data[1],
                   __atomic_load_n(&sh->data[0], __ATOMIC_RELAXED),
                   __ATOMIC_RELAXED);
}

/* Taken for writing with EOWNERDEAD: a writer died holding the lock.
 * Repair what it may have left half done, then say so.  */
static void recover(struct worker *w)
{
  int rc;

  repair(w->sh);
  rc = w->cfg->lock->consistent(w->obj);
  if (rc != 0)
    failure(w, "consistent returned %s", errname(rc));
  stat_add(&w->st->abandoned, 1);
}

/* --kill-ms: at the top of the loop, holding nothing, wait while the
 * supervisor accounts for the dead.  */
static void pause_point(struct worker *w)
{
  if (!__atomic_load_n(&w->sh->pause, __ATOMIC_ACQUIRE))
    return;
  __atomic_store_n(&w->st->paused, 1, __ATOMIC_RELEASE);
  while (__atomic_load_n(&w->sh->pause, __ATOMIC_ACQUIRE))
    sleep_ns(100000);
  __atomic_store_n(&w->st->paused, 0, __ATOMIC_RELEASE);
}

/* Holding the write lock: the section, then up_write or (now and then,
 * if may_downgrade) a downgrade and a read section.  */
static void write_and_release(struct worker *w, int may_downgrade)
{
  const struct stress_lock_ops *ops = w->cfg->lock;

  write_section(w);
  /* Downgrade: leave the writers' count while no one else can be inside
   * to see it change, and join the readers' once the lock says so (a
   * writer killed in its downgrade before the lock let it read has left
   * a lock that the next writer takes with 0: its section was whole).  */
  if (may_downgrade && ops->downgrade != NULL && rnd(&w->rng) % 8 == 0) {
    int rc;
    __atomic_fetch_sub(&w->sh->write_held, 1, __ATOMIC_SEQ_CST);
    set_phase(w, PH_DOWNGRADE);
    rc = ops->downgrade(w->obj);
    if (rc != 0)
      failure(w, "downgrade returned %s", errname(rc));
    __atomic_fetch_add(&w->sh->read_held, 1, __ATOMIC_SEQ_CST);
    set_phase(w, PH_READ);
    stat_add(&w->st->downgrades, 1);
    hold(w);
    if (__atomic_load_n(&w->sh->write_held, __ATOMIC_SEQ_CST) != 0)
      failure(w, "a writer came in after a downgrade");
    __atomic_fetch_sub(&w->sh->read_held, 1, __ATOMIC_SEQ_CST);
    release(w, 0);
  } else {
    __atomic_fetch_sub(&w->sh->write_held, 1, __ATOMIC_SEQ_CST);
    release(w, 1);
  }
}

static void *lock_worker(void *arg)
{
  struct worker *w = arg;
  int cls = w->st->cls;

  while (!stopped(w->sh)) {
    int got;

    if (w->cfg->kill_ms > 0) {
      pause_point(w);
      if (stopped(w->sh))
        break;
    }
    set_phase(w, cls ? PH_WANT_WRITE : PH_WANT_READ);
    got = acquire(w, cls);
    if (got == TAKEN_DEAD) {
      /* A reader too: it took the lock over for writing.  */
      set_phase(w, PH_WRITE);
      recover(w);
      write_and_release(w, 0);
    } else if (got == TAKEN && cls == 0) {
      set_phase(w, PH_READ);
      read_section(w);
      release(w, 0);
    } else if (got == TAKEN) {
      set_phase(w, PH_WRITE);
      write_and_release(w, 1);
    }
    set_phase(w, PH_NONE);
    if (got != NOT_TAKEN)
      stat_add(&w->st->ops, 1);
    spin_for(rnd(&w->rng) % 128);
    if (rnd(&w->rng) % 256 == 0)
      sched_yield();
  }
  return NULL;
}

/* --- Counters.  */
static __thread struct worker *self;

static void on_signal(int sig)
{
  struct worker *w = self;
  (void)sig;
  if (w == NULL)
    return;
  w->cfg->counter->add(w->obj, HANDLER_DELTA);
  w->st->handler_added += HANDLER_DELTA;
  w->st->signals++;
}

static void *counter_worker(void *arg)
{
  struct worker *w = arg;
  const struct stress_counter_ops *c = w->cfg->counter;
  uint64_t lifetime = 2000 + rnd(&w->rng) % 200000, n;
  sigset_t usr1;

  self = w;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
  for (n = 0; n < lifetime && !stopped(w->sh); n++) {
    uint64_t r = rnd(&w->rng);
    int64_t d = r % 4096 == 0 ? (int64_t)1 << 33 : (int64_t)(r >> 32) % 1001;
    if (r & (1u << 20))
      d = -d;
    c->add(w->obj, d);
    w->st->added += d;
    stat_add(&w->st->ops, 1);
    if (r % 1024 == 1)
      (void)c->read(w->obj);
  }
  pthread_sigmask(SIG_BLOCK, &usr1, NULL);
  self = NULL;
  __atomic_store_n(&w->st->done, 1, __ATOMIC_RELEASE);
  return NULL;
}

/* --- Running.  */
static int64_t now_ns(void)
{
  return fl_clock_ns(CLOCK_MONOTONIC);
}

static void start_thread(struct worker *w, void *(*fn)(void *))
{
  int rc = pthread_create(&w->tid, NULL, fn, w);
  if (rc != 0) {
    fprintf(stderr, "fastlock-stress: cannot start a thread: %s\n",
            strerror(rc));
    exit(1);
  }
}

/* Join every worker within the grace period; 0 or how many are stuck. */
static int join_all(struct worker *w, int n, int64_t deadline_mono)
{
  int k, stuck = 0;

  for (k = 0; k < n; k++) {
    int64_t left = deadline_mono - now_ns();
    struct timespec abs =
        fl_deadline_after_ns(CLOCK_REALTIME, left > 0 ? left : 0);
    if (pthread_timedjoin_np(w[k].tid, NULL, &abs) != 0)
      stuck++;
  }
  return stuck;
}

struct summary {
  uint64_t total, max, min, fails;
  int threads;
};

static struct summary summarize(const struct shared *sh, int nw, int cls)
{
  struct summary s = { 0, 0, 0, 0, 0 };
  int k;

  for (k = 0; k < nw; k++) {
    uint64_t ops = stat_get(&sh->w[k].ops);
    if (sh->w[k].cls != cls)
      continue;
    s.total += ops;
    s.fails += stat_get(&sh->w[k].fails);
    s.max = s.threads == 0 || ops > s.max ? ops : s.max;
    s.min = s.threads == 0 || ops < s.min ? ops : s.min;
    s.threads++;
  }
  return s;
}

static int starved(const struct stress_cfg *cfg, const struct summary *s)
{
  return cfg->prim != STRESS_COUNTER && s->threads > 1 && s->max / 2 > s->min;
}

static void print_class(const struct stress_cfg *cfg, const struct summary *s,
                        int cls, const char *prefix)
{
  printf("%s%s:  Total: %llu  Max/Min: %llu/%llu %s  Fail: %llu %s\n", prefix,
         class_label(cfg->prim, cls), (unsigned long long)s->total,
         (unsigned long long)s->max, (unsigned long long)s->min,
         starved(cfg, s) ? "???" : "", (unsigned long long)s->fails,
         s->fails ? "!!!" : "");
}

static void progress(const struct stress_cfg *cfg, const struct shared *sh,
                     int nw, double t)
{
  char prefix[64];
  int cls;

  snprintf(prefix, sizeof prefix, "fastlock-stress: %6.1fs ", t);
  for (cls = 0; cls < 2; cls++) {
    struct summary s = summarize(sh, nw, cls);
    if (s.threads > 0)
      print_class(cfg, &s, cls, prefix);
  }
  fflush(stdout);
}

/* Sleep until the end of the run, printing progress lines on the way;
 * between lines, call tick (if any) every millisecond.  A line is due
 * every interval, at each such time before the end.  One that fell due
 * while we were not running (a loaded machine, an emulator) is printed
 * when we wake, even past the end, and the times we slept through are
 * skipped: a run longer than its interval always prints a line, and
 * never a burst of them.  */
static void run_clock(const struct stress_cfg *cfg, struct shared *sh, int nw,
                      int64_t t0, void (*tick)(void *), void *arg)
{
  int64_t end = t0 + (int64_t)(cfg->duration * 1e9);
  int64_t step = cfg->interval * 1e9 >= 1 ? (int64_t)(cfg->interval * 1e9) : 1;
  int64_t next = cfg->interval > 0 ? t0 + step : end;

  for (;;) {
    int64_t t = now_ns(), wake = next < end ? next : end;
    if (next < end && t >= next) {
      progress(cfg, sh, nw, (double)(t - t0) / 1e9);
      next += ((t - next) / step + 1) * step;
      continue;
    }
    if (t >= end)
      break;
    if (tick != NULL) {
      tick(arg);
      t = now_ns();
      wake = t + 1000000 < wake ? t + 1000000 : wake;
    }
    if (wake > t)
      sleep_ns(wake - t);
  }
}

static int threads_per_process(const struct stress_cfg *cfg)
{
  return cfg->prim == STRESS_RWSEM ? cfg->readers + cfg->writers : cfg->threads;
}

static struct shared *map_shared(int fd, size_t size)
{
  void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
                 fd >= 0 ? MAP_SHARED : MAP_SHARED | MAP_ANONYMOUS, fd, 0);
  if (p == MAP_FAILED) {
    perror("fastlock-stress: mmap");
    exit(1);
  }
  return p;
}

/* The threads of one process, on the mapping sh; returns how many did
 * not finish in time.  */
static int run_lock_threads(const struct stress_cfg *cfg, struct shared *sh,
                            int proc, int report)
{
  int per = threads_per_process(cfg), k, stuck;
  struct worker *w = calloc((size_t)per, sizeof *w);
  int64_t t0;

  if (w == NULL) {
    perror("fastlock-stress");
    exit(1);
  }
  for (k = 0; k < per; k++) {
    w[k].sh = sh;
    w[k].obj = sh->obj;
    w[k].cfg = cfg;
    w[k].index = proc * per + k;
    w[k].st = &sh->w[w[k].index];
    /* A process started in a killed one's place draws anew.  */
    w[k].rng = rng_seed(cfg->seed + ((uint64_t)w[k].st->gen << 32), w[k].index);
    start_thread(&w[k], lock_worker);
  }
  t0 = now_ns();
  if (report) {
    run_clock(cfg, sh, per * cfg->processes, t0, NULL, NULL);
    __atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
  }
  stuck = join_all(w, per,
                   (report ? now_ns() : t0 + (int64_t)(cfg->duration * 1e9))
                       + GRACE_NS);
  free(w);
  return stuck;
}

/* Process p of a --processes run: its own mapping of fd, at an address
 * of its own, and its threads.  */
static pid_t start_process(const struct stress_cfg *cfg, int fd, size_t size,
                           int p)
{
  pid_t pid;

  fflush(NULL);
  pid = fork();
  if (pid < 0) {
    perror("fastlock-stress: fork");
    exit(1);
  }
  if (pid == 0) {
    struct shared *mine = map_shared(fd, size);
    _exit(run_lock_threads(cfg, mine, p, 0) != 0);
  }
  return pid;
}

/* --- Killing (rwsem --kill-ms).  The main process SIGKILLs a random
 * worker process every kill_ms and starts another in its place, noting
 * from the dead threads' phases how many of them may have held a read
 * lock and the write lock.  Every QUIET_NS it makes a quiescent point:
 * every thread pauses at the top of its loop, holding nothing, so the
 * read locks the lock counts are exactly the dead's, and must number no
 * more than the dead that may have held one (more: a waiter's death left
 * a count behind); it releases them (fl_rwsem_reader_died), takes the
 * write lock itself, which a dead write holder's leaves to it with
 * EOWNERDEAD (repaired, made consistent), checks the invariants, and
 * takes a read lock: the deaths must have left the lock usable.  The
 * kill interval pauses meanwhile.  A write holder whose thread ID a new
 * thread already has is not found (fl_rwsem(3)): the lock stays held,
 * and if a dead thread may have held it the lock is made anew and the
 * run goes on, reporting it; if none may have, that is a failure.  */
#define QUIET_NS ((int64_t)200000000)

struct killer {
  const struct stress_cfg *cfg;
  struct shared *sh;
  pid_t *pids;
  int fd, per, nw;
  size_t size;
  uint64_t rng;
  int64_t next_kill, next_quiet;
  int may_read, may_write; /* dead since the last quiescent point */
  uint64_t kills, quiet_points, readers_released, owner_dead, not_found;
  int stuck; /* a thread did not pause: no more kills */
};

static void kill_one(struct killer *k)
{
  int p = (int)(rnd(&k->rng) % (uint64_t)k->cfg->processes), t, status;

  kill(k->pids[p], SIGKILL);
  if (waitpid(k->pids[p], &status, 0) != k->pids[p] || !WIFSIGNALED(status)
      || WTERMSIG(status) != SIGKILL) {
    printf("fastlock-stress: !!! process %d ended before its kill\n", p);
    fail_run("a process failed");
  }
  for (t = 0; t < k->per; t++) {
    struct stats *st = &k->sh->w[p * k->per + t];
    int32_t ph = __atomic_load_n(&st->phase, __ATOMIC_SEQ_CST);

    k->may_read += ph == PH_WANT_READ || ph == PH_READ || ph == PH_DOWNGRADE;
    k->may_write += ph == PH_WANT_READ || ph == PH_WANT_WRITE || ph == PH_WRITE
                    || ph == PH_DOWNGRADE;
    st->phase = PH_NONE;
    st->paused = 0;
    st->gen++;
  }
  k->kills++;
  k->pids[p] = start_process(k->cfg, k->fd, k->size, p);
}

/* Wait until every thread's paused flag is want; 0, or -1 after the
 * grace period.  */
static int wait_paused(struct killer *k, int32_t want)
{
  int64_t deadline = now_ns() + GRACE_NS;
  int t;

  for (t = 0; t < k->nw; t++)
    while (__atomic_load_n(&k->sh->w[t].paused, __ATOMIC_ACQUIRE) != want) {
      if (now_ns() > deadline)
        return -1;
      sleep_ns(100000);
    }
  return 0;
}

static struct timespec in_one_second(void)
{
  return fl_deadline_after_ns(CLOCK_MONOTONIC, FL_NSEC_PER_SEC);
}

/* Everyone paused: account for the dead, and leave the lock free.  */
static void settle_dead(struct killer *k)
{
  const struct stress_lock_ops *ops = k->cfg->lock;
  void *obj = k->sh->obj;
  struct timespec dl;
  int n = ops->read_locks(obj), rc, i;

  if (n > k->may_read) {
    printf("fastlock-stress: !!! the lock counts %d read locks, only %d of "
           "the dead may have held one\n",
           n, k->may_read);
    fail_run("a dead process left read locks it did not hold");
  }
  for (i = 0; i < n; i++) {
    rc = ops->reader_died(obj);
    if (rc != 0) {
      printf("fastlock-stress: !!! reader_died returned %s\n", errname(rc));
      fail_run("a dead reader's lock could not be released");
      break;
    }
  }
  k->readers_released += (uint64_t)n;
  dl = in_one_second();
  rc = ops->timedlock[1](obj, CLOCK_MONOTONIC, &dl);
  if (rc == EOWNERDEAD && k->may_write > 0) {
    k->owner_dead++;
    rc = ops->consistent(obj);
  } else if (rc == ETIMEDOUT && k->may_write > 0
             && ops->holder_unfindable(obj)) {
    /* Not found (above): make the lock anew, nobody being inside.  */
    k->not_found++;
    rc = ops->init(obj, k->cfg->mode, 0, 2);
    if (rc == 0)
      rc = ops->timedlock[1](obj, CLOCK_MONOTONIC, &dl);
  }
  if (rc != 0) {
    printf("fastlock-stress: !!! after the deaths the write lock: %s\n",
           errname(rc));
    fail_run("the deaths left the lock unusable");
    k->stuck = 1;
    return;
  }
  rc = ops->check(obj);
  if (rc != 0) {
    printf("fastlock-stress: !!! after the deaths the lock breaks its "
           "invariant I%d\n",
           rc);
    fail_run("the deaths left the lock in an illegal state");
  }
  repair(k->sh);
  rc = ops->unlock[1](obj);
  dl = in_one_second();
  if (rc == 0)
    rc = ops->timedlock[0](obj, CLOCK_MONOTONIC, &dl);
  if (rc == 0)
    rc = ops->unlock[0](obj);
  if (rc != 0) {
    printf("fastlock-stress: !!! after the deaths, read: %s\n", errname(rc));
    fail_run("the deaths left the lock unusable");
    k->stuck = 1;
  }
  k->may_read = k->may_write = 0;
}

/* A quiescent point; the last one (end) leaves the threads to stop.  */
static void quiesce(struct killer *k, int end)
{
  __atomic_store_n(&k->sh->pause, 1, __ATOMIC_SEQ_CST);
  if (wait_paused(k, 1) != 0) {
    fail_run("a thread did not pause within 10 s (deadlock or lost "
             "wake-up?)");
    k->stuck = 1;
  } else {
    settle_dead(k);
    k->quiet_points++;
  }
  if (end)
    __atomic_store_n(&k->sh->stop, 1, __ATOMIC_RELAXED);
  __atomic_store_n(&k->sh->pause, 0, __ATOMIC_SEQ_CST);
  if (!end && !k->stuck && wait_paused(k, 0) != 0) {
    fail_run("a thread did not leave its pause");
    k->stuck = 1;
  }
}

/* Every millisecond of the run: a kill when one is due, a quiescent
 * point when one is; the pause does not count in the kill interval.  */
static void kill_tick(void *arg)
{
  struct killer *k = arg;
  int64_t t = now_ns();

  if (k->stuck)
    return;
  if (t >= k->next_quiet) {
    quiesce(k, 0);
    k->next_kill += now_ns() - t;
    k->next_quiet = now_ns() + QUIET_NS;
  } else if (t >= k->next_kill) {
    kill_one(k);
    k->next_kill = now_ns() + (int64_t)k->cfg->kill_ms * 1000000;
  }
}

static uint64_t stat_total_abandoned(const struct shared *sh, int nw)
{
  uint64_t n = 0;
  int t;

  for (t = 0; t < nw; t++)
    n += stat_get(&sh->w[t].abandoned);
  return n;
}

static void kill_report(const struct killer *k)
{
  printf("  kills: %llu  quiescent points: %llu  read locks released for "
         "the dead: %llu\n"
         "  dead write holders found: %llu by the threads, %llu at quiescent "
         "points; not found (made anew): %llu\n",
         (unsigned long long)k->kills, (unsigned long long)k->quiet_points,
         (unsigned long long)k->readers_released,
         (unsigned long long)stat_total_abandoned(k->sh, k->nw),
         (unsigned long long)k->owner_dead, (unsigned long long)k->not_found);
  if (k->kills == 0 && k->cfg->duration * 1000 >= 4.0 * k->cfg->kill_ms)
    fail_run("no process was killed");
}

struct counter_run {
  const struct stress_cfg *cfg;
  struct worker *w;
  uint64_t rng;
  int signals; /* 0: this runtime loses TLS in a handler */
};

/* Every millisecond: replace the threads that finished (their tallies
 * stay in the slot, which the next thread goes on adding to), and signal
 * one that runs.  */
static void counter_tick(void *arg)
{
  struct counter_run *cr = arg;
  int n = cr->cfg->threads, k = (int)(rnd(&cr->rng) % (uint64_t)n), i;

  for (i = 0; i < n; i++) {
    struct worker *w = &cr->w[i];
    if (!__atomic_load_n(&w->st->done, __ATOMIC_ACQUIRE))
      continue;
    pthread_join(w->tid, NULL);
    w->st->threads++;
    w->st->done = 0;
    start_thread(w, counter_worker);
  }
  if (cr->signals && !__atomic_load_n(&cr->w[k].st->done, __ATOMIC_ACQUIRE))
    pthread_kill(cr->w[k].tid, SIGUSR1);
}

static void run_counter(const struct stress_cfg *cfg, struct shared *sh)
{
  const struct stress_counter_ops *c = cfg->counter;
  struct counter_run cr;
  struct sigaction sa;
  sigset_t usr1;
  void *obj;
  int n = cfg->threads, k, rc, stuck, fails = 0;
  int64_t expected = 0, sum, approx;
  uint64_t ops = 0, signals = 0, threads = 0, maxops = 0, minops = 0;

  if (posix_memalign(&obj, 128, (c->size + 127) / 128 * 128) != 0) {
    perror("fastlock-stress");
    exit(1);
  }
  memset(obj, 0, (c->size + 127) / 128 * 128);
  rc = c->init(obj, cfg->strategy);
  if (rc != 0) {
    fail_run("init returned %s", errname(rc));
    return;
  }
  if (c->strategy != NULL)
    printf("fastlock-stress: strategy in use: %s\n", c->strategy(obj));
  cr.signals = fl_signals_keep_tls(SIGUSR1);
  if (!cr.signals)
    printf("fastlock-stress: no signals: " FL_TLS_LOST_WHY "\n");

  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR1, &sa, NULL);
  /* Only the workers take the signal, and only while they add.  */
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &usr1, NULL);

  cr.cfg = cfg;
  cr.rng = cfg->seed + 1;
  cr.w = calloc((size_t)n, sizeof *cr.w);
  if (cr.w == NULL) {
    perror("fastlock-stress");
    exit(1);
  }
  for (k = 0; k < n; k++) {
    cr.w[k].sh = sh;
    cr.w[k].obj = obj;
    cr.w[k].cfg = cfg;
    cr.w[k].index = k;
    cr.w[k].st = &sh->w[k];
    cr.w[k].rng = rng_seed(cfg->seed, k);
    start_thread(&cr.w[k], counter_worker);
  }
  run_clock(cfg, sh, n, now_ns(), counter_tick, &cr);
  __atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
  stuck = join_all(cr.w, n, now_ns() + GRACE_NS);
  if (stuck != 0) {
    fail_run("%d thread(s) did not finish 10 s after the end", stuck);
    return;
  }
  for (k = 0; k < n; k++) {
    const struct stats *st = &sh->w[k];
    expected += st->added + st->handler_added;
    ops += st->ops;
    signals += st->signals;
    threads += st->threads + 1;
    maxops = k == 0 || st->ops > maxops ? st->ops : maxops;
    minops = k == 0 || st->ops < minops ? st->ops : minops;
  }
  sum = c->sum(obj);
  approx = c->read(obj);
  if (sum != expected) {
    printf("fastlock-stress: !!! sum %lld, expected %lld (off by %lld)\n",
           (long long)sum, (long long)expected, (long long)(sum - expected));
    fails++;
  }
  printf("%s:  Total: %llu  Max/Min: %llu/%llu  Fail: %d %s\n",
         class_label(cfg->prim, 0), (unsigned long long)ops,
         (unsigned long long)maxops, (unsigned long long)minops, fails,
         fails ? "!!!" : "");
  printf(
      "  threads run: %llu (each exits after a random number of adds), signal "
      "handler adds: %llu\n"
      "  exact sum: %lld, expected: %lld, approximate read: %lld\n",
      (unsigned long long)threads, (unsigned long long)signals, (long long)sum,
      (long long)expected, (long long)approx);
  rc = c->destroy(obj);
  if (rc != 0) {
    printf("fastlock-stress: !!! destroy returned %s\n", errname(rc));
    fails++;
  }
  free(obj);
  free(cr.w);
  if (fails)
    fail_run("the counter lost or invented updates");
}

static const char *mode_name(int mode)
{
  static const char *const names[] = { "fair", "prefer-reader",
                                       "prefer-writer" };
  return names[mode];
}

int main(int argc, char **argv)
{
  struct stress_cfg cfg;
  struct killer killer = { 0 };
  char err[1024];
  struct shared *sh;
  uint64_t fails = 0;
  size_t size;
  int per, nw, rc, fd = -1, cls, stuck = 0, any_starved = 0;

  if (argc > 1 && strcmp(argv[1], "ipc") == 0)
    return stress_ipc_main(argc - 1, argv + 1);
  switch (stress_parse(argc, argv, &cfg, err, sizeof err)) {
    case STRESS_PARSE_RUN:
      break;
    case STRESS_PARSE_HELP:
      stress_usage(stdout);
      return 0;
    case STRESS_PARSE_VERSION:
      printf("fastlock-stress %s (%s)\n", fl_version(), fl_build_config());
      return 0;
    case STRESS_PARSE_ERROR:
      fprintf(stderr, "fastlock-stress: %s\n", err);
      return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);

  per = threads_per_process(&cfg);
  nw = per * cfg.processes;
  printf("fastlock-stress: %s impl=%s (%s)", cfg.prim_name, cfg.impl,
         cfg.prim == STRESS_COUNTER ? cfg.counter->what : cfg.lock->what);
  if (cfg.prim == STRESS_RWSEM)
    printf(" mode=%s%s readers=%d writers=%d", mode_name(cfg.mode),
           cfg.read_bias ? " read-bias" : "", cfg.readers, cfg.writers);
  else
    printf(" threads=%d", cfg.threads);
  if (cfg.prim == STRESS_COUNTER && strcmp(cfg.impl, "fastlock") == 0)
    printf(" strategy=%s", stress_strategy_names[cfg.strategy]);
  printf(" duration=%gs pshared=%s processes=%d seed=%llu\n", cfg.duration,
         cfg.pshared ? "yes" : "no", cfg.processes,
         (unsigned long long)cfg.seed);
  printf("fastlock-stress: fastlock %s (%s), %ld online CPUs\n", fl_version(),
         fl_build_config(), sysconf(_SC_NPROCESSORS_ONLN));
  rc = fl_context_pin_uniprocessor();
  if (rc >= 0)
    printf("fastlock-stress: uniprocessor build: every thread kept on CPU %d\n",
           rc);

  size = sizeof *sh + (size_t)nw * sizeof sh->w[0];
  if (cfg.processes > 1) {
    fd = memfd_create("fastlock-stress", 0);
    if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
      perror("fastlock-stress: memfd");
      return 1;
    }
  }
  sh = map_shared(fd, size);
  for (rc = 0; rc < nw; rc++)
    sh->w[rc].cls = cfg.prim == STRESS_RWSEM ? rc % per >= cfg.readers
                                             : cfg.prim == STRESS_SPIN;

  if (cfg.prim == STRESS_COUNTER) {
    run_counter(&cfg, sh);
    goto end;
  }

  if (cfg.lock->size > sizeof sh->obj) {
    fprintf(stderr, "fastlock-stress: %s is larger than its room (%zu bytes)\n",
            cfg.lock->what, sizeof sh->obj);
    return 1;
  }
  rc = cfg.lock->init(sh->obj, cfg.mode, cfg.read_bias,
                      cfg.pshared + (cfg.kill_ms > 0));
  if (rc != 0) {
    fail_run("init returned %s", errname(rc));
    goto end;
  }

  if (cfg.processes == 1) {
    stuck = run_lock_threads(&cfg, sh, 0, 1);
  } else {
    pid_t pids[STRESS_MAX_PROCESSES];
    int64_t deadline;
    int p, left;

    for (p = 0; p < cfg.processes; p++)
      pids[p] = start_process(&cfg, fd, size, p);
    if (cfg.kill_ms > 0) {
      int64_t t0 = now_ns();
      killer =
          (struct killer){ .cfg = &cfg,
                           .sh = sh,
                           .pids = pids,
                           .fd = fd,
                           .per = per,
                           .nw = nw,
                           .size = size,
                           .rng = cfg.seed + 2,
                           .next_kill = t0 + (int64_t)cfg.kill_ms * 1000000,
                           .next_quiet = t0 + QUIET_NS };
      run_clock(&cfg, sh, nw, t0, kill_tick, &killer);
      if (!killer.stuck)
        quiesce(&killer, 1);
    } else {
      run_clock(&cfg, sh, nw, now_ns(), NULL, NULL);
    }
    __atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
    deadline = now_ns() + GRACE_NS;
    for (left = cfg.processes; left > 0 && now_ns() < deadline;) {
      int status;
      for (p = 0; p < cfg.processes; p++) {
        if (pids[p] <= 0 || waitpid(pids[p], &status, WNOHANG) != pids[p])
          continue;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
          printf("fastlock-stress: !!! process %d %s\n", p,
                 WIFSIGNALED(status) ? strsignal(WTERMSIG(status))
                                     : "had threads that did not finish");
          fail_run("a process failed");
        }
        pids[p] = 0;
        left--;
      }
      if (left > 0)
        sleep_ns(10000000);
    }
    for (p = 0; p < cfg.processes; p++)
      if (pids[p] > 0) {
        kill(pids[p], SIGKILL);
        waitpid(pids[p], NULL, 0);
        stuck++;
      }
  }
  if (stuck != 0) {
    fail_run(
        "%d %s did not finish 10 s after the end (deadlock or lost wake-up?)",
        stuck, cfg.processes > 1 ? "process(es)" : "thread(s)");
  }

  for (cls = 0; cls < 2; cls++) {
    struct summary s = summarize(sh, nw, cls);
    uint64_t busy = 0, timeouts = 0, downgrades = 0, long_holds = 0;
    int k;
    if (s.threads == 0)
      continue;
    for (k = 0; k < nw; k++)
      if (sh->w[k].cls == cls) {
        busy += sh->w[k].busy;
        timeouts += sh->w[k].timeouts;
        downgrades += sh->w[k].downgrades;
        long_holds += sh->w[k].long_holds;
      }
    print_class(&cfg, &s, cls, "");
    printf(
        "  trylock busy: %llu  timed out: %llu  downgrades: %llu  long holds: %llu\n",
        (unsigned long long)busy, (unsigned long long)timeouts,
        (unsigned long long)downgrades, (unsigned long long)long_holds);
    fails += s.fails;
    any_starved |= starved(&cfg, &s);
  }
  if (cfg.kill_ms > 0)
    kill_report(&killer);
  if (fails != 0)
    fail_run("%llu failure(s) (!!!)%s", (unsigned long long)fails,
             fails > MAX_PRINTED ? "; the first ones are printed above" : "");
  if (any_starved && cfg.fail_on_starvation)
    fail_run("a thread starved (?\?\?) and --fail-on-starvation");
  if (stuck == 0) {
    rc = cfg.lock->destroy(sh->obj);
    if (rc != 0) {
      printf("fastlock-stress: !!! destroy returned %s\n", errname(rc));
      fail_run("the lock was left held");
    }
  }

end:
  if (run_failed)
    printf("fastlock-stress: %s\n", verdict);
  printf("End of test: %s\n", run_failed ? "FAILURE" : "SUCCESS");
  fflush(stdout);
  /* Threads that never finished still hold the lock: leave at once.  */
  if (stuck != 0 && cfg.processes == 1)
    _exit(1);
  return run_failed;
}
