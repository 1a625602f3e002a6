/* tests/test-ipc-death.c: processes that die, for real: fork, SIGKILL.
 *
 * Each child opens the region by name (a client of its own), does what
 * the test needs, reports on a pipe and then sleeps until it is killed.
 * The parent checks what the others see: abandoned mutexes (EOWNERDEAD,
 * once, recursion reset), waits of the dead dropped, references freed,
 * the region lock taken over from a dead holder and its half-done section
 * undone, a pulse's waker killed mid-scan, the server's
 * fl_ipc_client_died (and its report kept while the region has other
 * slots to claim), a fork child's inherited handle refused, owners in
 * two PID namespaces told apart, and wait-all's mask of abandoned
 * mutexes.  Every wait has a generous deadline (30 s): a bug fails
 * the test instead of hanging it; how fast a death was found is printed,
 * not asserted (src/ipc/liveness.c states the bound).  */
#include "config.h"

#include <fastlock/config.h>
#include <fastlock/ipc.h>

#include "ipc/ipc-internal.h"
#include "sys/clock.h"

#include "fl-check.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define LONG_NS (30 * (int64_t)FL_NSEC_PER_SEC)

static char region_name[64];
static fl_ipc_t *r;

static void setup(void)
{
  snprintf(region_name, sizeof region_name, "/fl-test-ipcd-%d", (int)getpid());
  fl_ipc_unlink(region_name);
  ck_assert_int_eq(fl_ipc_create(region_name, 16, 4, &r), 0);
}

static void teardown(void)
{
  ck_assert_int_eq(fl_ipc_close(r), 0);
  fl_ipc_unlink(region_name);
}

/* The number of waiting threads, read as the library reads it.  */
static uint32_t waiting(void)
{
  uint32_t n;

  fl_ipc_lock(r);
  n = fl_ipc_hdr(r)->nwaiting;
  fl_ipc_unlock(r);
  return n;
}

static struct timespec later(int64_t ns)
{
  return fl_deadline_after_ns(CLOCK_MONOTONIC, ns);
}

/* What a child does before it reports: returns the word it reports.  */
typedef uint32_t (*child_fn)(fl_ipc_t *c);

struct child {
  pid_t pid;
  uint32_t word; /* what it reported */
};

/* Fork a child that opens the region, runs fn and reports fn's result,
 * then sleeps (or, if fn returns, exits with status fn's result % 256
 * when sleep is 0).  */
static struct child spawn(child_fn fn, int sleep_after)
{
  struct child ch;
  int p[2];

  ck_assert_int_eq(pipe(p), 0);
  ch.pid = fork();
  ck_assert_int_ge(ch.pid, 0);
  if (ch.pid == 0) {
    fl_ipc_t *c;
    uint32_t word;

    close(p[0]);
    if (fl_ipc_open(region_name, &c) != 0)
      _exit(99);
    word = fn(c);
    if (write(p[1], &word, sizeof word) != (ssize_t)sizeof word)
      _exit(98);
    if (!sleep_after)
      _exit((int)(word % 256));
    for (;;)
      pause();
  }
  close(p[1]);
  ck_assert_int_eq(read(p[0], &ch.word, sizeof ch.word),
                   (ssize_t)sizeof ch.word);
  close(p[0]);
  return ch;
}

static void kill9(struct child *ch)
{
  int status;

  ck_assert_int_eq(kill(ch->pid, SIGKILL), 0);
  ck_assert_int_eq(waitpid(ch->pid, &status, 0), ch->pid);
  ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

static uint32_t take_mutex(fl_ipc_t *c)
{
  fl_ipc_obj_t m;
  struct timespec d = later(LONG_NS);
  uint32_t index;

  if (fl_ipc_obj_open(c, "m", &m) != 0
      || fl_ipc_wait_any(c, 1, &m, CLOCK_MONOTONIC, &d, &index) != 0
      || fl_ipc_wait_any(c, 1, &m, CLOCK_MONOTONIC, &d, &index) != 0)
    return 0;
  return fl_ipc_client_id(c); /* owns m twice */
}

/* Killed first, waited for after: found before the waiter sleeps.  */
START_TEST(abandoned_then_wait)
{
  fl_ipc_obj_t m, reported[4];
  struct timespec d = later(LONG_NS);
  uint32_t index, owner, rec, n, prev;
  struct child ch;

  ck_assert_int_eq(fl_ipc_mutex_create(r, "m", 0, &m), 0);
  ch = spawn(take_mutex, 1);
  ck_assert_uint_ne(ch.word, 0);
  ck_assert_int_eq(fl_ipc_mutex_read(r, m, &owner, NULL, &rec), 0);
  ck_assert_uint_eq(owner, ch.word);
  ck_assert_uint_eq(rec, 2);
  kill9(&ch);
  ck_assert_int_eq(fl_ipc_wait_any(r, 1, &m, CLOCK_MONOTONIC, &d, &index),
                   EOWNERDEAD);
  ck_assert_int_eq(fl_ipc_mutex_read(r, m, &owner, NULL, &rec), 0);
  ck_assert_uint_eq(owner, fl_ipc_client_id(r));
  ck_assert_uint_eq(rec, 1); /* reset */
  /* Reported once: the next acquisition is a plain one.  */
  ck_assert_int_eq(fl_ipc_mutex_release(r, m, &prev), 0);
  ck_assert_uint_eq(prev, 1);
  ck_assert_int_eq(fl_ipc_wait_any(r, 1, &m, CLOCK_MONOTONIC, &d, &index), 0);
  /* The server, told later, learns what the waiter's clean-up abandoned. */
  ck_assert_int_eq(fl_ipc_client_died(r, ch.word, reported, 4, &n), 0);
  ck_assert_uint_eq(n, 1);
  ck_assert_uint_eq(reported[0].id, m.id);
  ck_assert_uint_eq(reported[0].region, m.region);
}
END_TEST

struct waiter {
  fl_ipc_obj_t obj;
  int rc;
  int64_t done_ns;
};

static void *wait_thread(void *arg)
{
  struct waiter *w = arg;
  struct timespec d = later(LONG_NS);
  uint32_t index;

  w->rc = fl_ipc_wait_any(r, 1, &w->obj, CLOCK_MONOTONIC, &d, &index);
  w->done_ns = fl_clock_ns(CLOCK_MONOTONIC);
  return NULL;
}

/* Probe intervals slept out after a death (the dead process reaped, so
 * its file lock gone) before the death is acted on: one, the interval in
 * progress or the one begun after the last probe that saw it alive
 * (src/ipc/liveness.c); the test allows one more as a margin.  Counted,
 * not timed: a loaded machine stretches the intervals, not their number. */
#define PROBES_AFTER_A_DEATH 2

/* Waiting first, killed after: found by the waiter's own probes, with no
 * server, within the probe bound (asserted in probe intervals, the time
 * printed).  */
START_TEST(abandoned_while_waiting)
{
  struct waiter w;
  struct child ch;
  pthread_t t;
  int64_t killed;
  uint32_t naps;

  ck_assert_int_eq(fl_ipc_mutex_create(r, "m", 0, &w.obj), 0);
  ch = spawn(take_mutex, 1);
  ck_assert_int_eq(pthread_create(&t, NULL, wait_thread, &w), 0);
  while (waiting() == 0)
    usleep(1000);
  killed = fl_clock_ns(CLOCK_MONOTONIC);
  kill9(&ch);
  /* The child is reaped: its file lock is gone.  */
  naps = (uint32_t)fl_load_relaxed(&fl_ipc_probe_naps);
  pthread_join(t, NULL);
  ck_assert_int_eq(w.rc, EOWNERDEAD);
  ck_assert_uint_le((uint32_t)fl_load_relaxed(&fl_ipc_probe_naps) - naps,
                    PROBES_AFTER_A_DEATH);
  printf("abandoned_while_waiting: the death was acted on %.1f ms after "
         "SIGKILL, %u probe intervals after (bound: %d intervals of %d ms "
         "+ scheduling)\n",
         (double)(w.done_ns - killed) / 1e6,
         (unsigned)((uint32_t)fl_load_relaxed(&fl_ipc_probe_naps) - naps),
         PROBES_AFTER_A_DEATH, FL_IPC_PROBE_MS);
}
END_TEST

static uint32_t wait_sem_forever(fl_ipc_t *c)
{
  fl_ipc_obj_t s;
  uint32_t index;

  if (fl_ipc_obj_open(c, "s", &s) != 0)
    return 1;
  return (uint32_t)fl_ipc_wait_any(c, 1, &s, CLOCK_MONOTONIC, NULL, &index);
}

/* A child that dies while it waits takes nothing with it.  */
START_TEST(dead_waiter)
{
  fl_ipc_obj_t s;
  uint32_t count;
  pid_t pid;
  int status;

  ck_assert_int_eq(fl_ipc_sem_create(r, "s", 0, 4, &s), 0);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    fl_ipc_t *c;
    if (fl_ipc_open(region_name, &c) != 0)
      _exit(99);
    _exit((int)wait_sem_forever(c));
  }
  while (waiting() == 0)
    usleep(1000);
  ck_assert_int_eq(kill(pid, SIGKILL), 0);
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  /* The dead waiter's slot is dropped, not granted: the unit stays.  */
  ck_assert_int_eq(fl_ipc_sem_release(r, s, 1, NULL), 0);
  ck_assert_int_eq(fl_ipc_sem_read(r, s, &count, NULL), 0);
  ck_assert_uint_eq(count, 1);
  ck_assert_uint_eq(waiting(), 0);
}
END_TEST

static uint32_t own_then_wait(fl_ipc_t *c)
{
  fl_ipc_obj_t m, s;
  uint32_t index, id = fl_ipc_client_id(c);
  struct timespec d = later(LONG_NS);
  int rc;

  if (fl_ipc_obj_open(c, "m", &m) != 0 || fl_ipc_obj_open(c, "s", &s) != 0
      || fl_ipc_wait_any(c, 1, &m, CLOCK_MONOTONIC, &d, &index) != 0)
    _exit(97);
  /* Report the id on fd 3, then wait on the empty semaphore until the
   * server cuts this process off.  */
  if (write(3, &id, sizeof id) != (ssize_t)sizeof id)
    _exit(96);
  rc = fl_ipc_wait_any(c, 1, &s, CLOCK_MONOTONIC, &d, &index);
  /* Cut off: every later call fails too.  */
  if (rc == ENOTCONN && fl_ipc_sem_release(c, s, 1, NULL) == ENOTCONN
      && fl_ipc_close(c) == 0)
    _exit(42);
  _exit(rc);
}

/* The server cuts off a client that still runs (ntsync's mutex-kill).  */
START_TEST(client_died_live)
{
  fl_ipc_obj_t m, s, reported[2];
  struct timespec d = later(LONG_NS);
  uint32_t id, n = 0, index;
  int p[2], status;
  pid_t pid;

  ck_assert_int_eq(fl_ipc_mutex_create(r, "m", 0, &m), 0);
  ck_assert_int_eq(fl_ipc_sem_create(r, "s", 0, 1, &s), 0);
  ck_assert_int_eq(pipe(p), 0);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    fl_ipc_t *c;
    if (dup2(p[1], 3) != 3 || fl_ipc_open(region_name, &c) != 0)
      _exit(99);
    own_then_wait(c);
  }
  close(p[1]);
  ck_assert_int_eq(read(p[0], &id, sizeof id), (ssize_t)sizeof id);
  close(p[0]);
  while (waiting() == 0)
    usleep(1000);
  ck_assert_int_eq(fl_ipc_client_died(r, 0, NULL, 0, NULL), ESRCH);
  ck_assert_int_eq(fl_ipc_client_died(r, id ^ 0x10000u, NULL, 0, NULL), ESRCH);
  ck_assert_int_eq(fl_ipc_client_died(r, fl_ipc_client_id(r), NULL, 0, NULL),
                   EINVAL);
  ck_assert_int_eq(fl_ipc_client_died(r, id, NULL, 1, &n), EINVAL);
  ck_assert_int_eq(fl_ipc_client_died(r, id, reported, 2, &n), 0);
  ck_assert_uint_eq(n, 1);
  ck_assert_uint_eq(reported[0].id, m.id);
  ck_assert_uint_eq(waiting(), 0);
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status));
  ck_assert_int_eq(WEXITSTATUS(status), 42);
  ck_assert_int_eq(fl_ipc_wait_any(r, 1, &m, CLOCK_MONOTONIC, &d, &index),
                   EOWNERDEAD);
  /* Asked again: the same report.  */
  n = 0;
  ck_assert_int_eq(fl_ipc_client_died(r, id, NULL, 0, &n), 0);
  ck_assert_uint_eq(n, 1);
}
END_TEST

static uint32_t hold_region_lock(fl_ipc_t *c)
{
  fl_ipc_obj_t s;
  struct fl_ipc_object *o;

  if (fl_ipc_obj_open(c, "s", &s) != 0)
    return 0;
  o = &fl_ipc_objects(c)[FL_IPC_ID_INDEX(s.id)];
  fl_ipc_lock(c);
  /* Half a section: one undoable write, then death.  */
  fl_ipc_set(c, &o->a, 3);
  return 1;
}

/* The region lock's holder dies mid-section: the next process takes the
 * lock over within the probe bound and the write is undone.  */
START_TEST(lock_holder_killed)
{
  fl_ipc_obj_t s;
  struct child ch;
  uint32_t count, naps;
  int64_t t0;

  ck_assert_int_eq(fl_ipc_sem_create(r, "s", 1, 5, &s), 0);
  ch = spawn(hold_region_lock, 1);
  ck_assert_uint_eq(ch.word, 1);
  ck_assert_uint_ne(fl_ipc_hdr(r)->lock, 0);
  ck_assert_uint_eq(fl_ipc_hdr(r)->log_n, 1);
  kill9(&ch);
  t0 = fl_clock_ns(CLOCK_MONOTONIC);
  naps = (uint32_t)fl_load_relaxed(&fl_ipc_probe_naps);
  ck_assert_int_eq(fl_ipc_sem_read(r, s, &count, NULL), 0);
  ck_assert_uint_le((uint32_t)fl_load_relaxed(&fl_ipc_probe_naps) - naps,
                    PROBES_AFTER_A_DEATH);
  printf("lock_holder_killed: lock taken over %.1f ms after the kill, "
         "%u probe intervals after\n",
         (double)(fl_clock_ns(CLOCK_MONOTONIC) - t0) / 1e6,
         (unsigned)((uint32_t)fl_load_relaxed(&fl_ipc_probe_naps) - naps));
  ck_assert_uint_eq(count, 1);
  ck_assert_uint_eq(fl_ipc_hdr(r)->log_n, 0);
  /* The dead holder was cleaned up too: its reference on s is gone.  */
  ck_assert_uint_eq(fl_ipc_objects(r)[FL_IPC_ID_INDEX(s.id)].refs, 1);
}
END_TEST

static uint32_t open_sem(fl_ipc_t *c)
{
  fl_ipc_obj_t s;

  return fl_ipc_obj_open(c, "s", &s) == 0 ? fl_ipc_client_id(c) : 0;
}

/* A dead client's references go; its slot is claimed again.  */
START_TEST(dead_references_and_reuse)
{
  fl_ipc_obj_t s, s2;
  struct child ch[3];
  int i;

  ck_assert_int_eq(fl_ipc_sem_create(r, "s", 0, 1, &s), 0);
  struct child next[3];

  /* Three children fill the region's four client slots; killed, their
   * slots must be claimed again by the next three (the region is full
   * otherwise), and claiming a dead slot cleans it up.  */
  for (i = 0; i < 3; i++)
    ch[i] = spawn(open_sem, 1);
  ck_assert_uint_eq(fl_ipc_objects(r)[FL_IPC_ID_INDEX(s.id)].refs, 4);
  for (i = 0; i < 3; i++)
    kill9(&ch[i]);
  for (i = 0; i < 3; i++) {
    next[i] = spawn(open_sem, 1);
    ck_assert_uint_ne(next[i].word, 0);
  }
  ck_assert_uint_eq(fl_ipc_objects(r)[FL_IPC_ID_INDEX(s.id)].refs, 4);
  for (i = 0; i < 3; i++) {
    /* The old ids are stale now.  */
    ck_assert_int_eq(fl_ipc_client_died(r, ch[i].word, NULL, 0, NULL), ESRCH);
    kill9(&next[i]);
    /* The server's word drops the new ones' references.  */
    ck_assert_int_eq(fl_ipc_client_died(r, next[i].word, NULL, 0, NULL), 0);
  }
  ck_assert_uint_eq(fl_ipc_objects(r)[FL_IPC_ID_INDEX(s.id)].refs, 1);
  ck_assert_int_eq(fl_ipc_obj_close(r, s), 0);
  ck_assert_int_eq(fl_ipc_obj_open(r, "s", &s2), ENOENT);
}
END_TEST

/* A fork child must not act as its parent's client.  */
START_TEST(fork_child_handle)
{
  fl_ipc_obj_t s;
  pid_t pid;
  int status;

  ck_assert_int_eq(fl_ipc_sem_create(r, "s", 0, 1, &s), 0);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    fl_ipc_t *c;
    fl_ipc_obj_t s2;
    if (fl_ipc_sem_release(r, s, 1, NULL) != ENOTCONN || fl_ipc_close(r) != 0)
      _exit(1);
    if (fl_ipc_open(region_name, &c) != 0 || fl_ipc_obj_open(c, "s", &s2) != 0
        || fl_ipc_sem_release(c, s2, 1, NULL) != 0)
      _exit(2);
    _exit(0);
  }
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status));
  ck_assert_int_eq(WEXITSTATUS(status), 0);
  ck_assert_int_eq(fl_ipc_sem_release(r, s, 1, NULL), EOVERFLOW);
}
END_TEST

static void die(void)
{
  raise(SIGKILL);
}

/* A pulse's waker killed right after its first grant, the worst moment
 * (fl_ipc_grant_hook): the grant stands, the other waiter still waits,
 * and the event is not left signalled.  */
START_TEST(pulse_killed_mid_scan)
{
  struct waiter w[2];
  pthread_t t[2];
  int i, status, sig;
  pid_t pid;

  ck_assert_int_eq(fl_ipc_event_create(r, "e", 1, 0, &w[0].obj), 0);
  for (i = 0; i < 2; i++) {
    w[i].obj = w[0].obj;
    ck_assert_int_eq(pthread_create(&t[i], NULL, wait_thread, &w[i]), 0);
    while (waiting() != (uint32_t)i + 1)
      usleep(1000);
  }
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    fl_ipc_t *c;
    fl_ipc_obj_t e;
    if (fl_ipc_open(region_name, &c) != 0 || fl_ipc_obj_open(c, "e", &e) != 0)
      _exit(99);
    fl_ipc_grant_hook = die;
    fl_ipc_event_pulse(c, e, NULL);
    _exit(98); /* granted nobody */
  }
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  /* Taking the lock over undoes nothing: the grant was checkpointed.  */
  ck_assert_int_eq(fl_ipc_event_read(r, w[0].obj, &sig), 0);
  ck_assert_int_eq(sig, 0);
  pthread_join(t[0], NULL);
  ck_assert_int_eq(w[0].rc, 0);
  ck_assert_uint_eq(waiting(), 1);
  ck_assert_int_eq(fl_ipc_event_pulse(r, w[0].obj, NULL), 0);
  pthread_join(t[1], NULL);
  ck_assert_int_eq(w[1].rc, 0);
  ck_assert_int_eq(fl_ipc_event_read(r, w[0].obj, &sig), 0);
  ck_assert_int_eq(sig, 0);
}
END_TEST

static uint32_t client_id(fl_ipc_t *c)
{
  return fl_ipc_client_id(c);
}

/* Take the mutex called name once: the client id, or 0.  */
static uint32_t take_named(fl_ipc_t *c, const char *name)
{
  fl_ipc_obj_t m;
  struct timespec d = later(LONG_NS);
  uint32_t index;

  if (fl_ipc_obj_open(c, name, &m) != 0
      || fl_ipc_wait_any(c, 1, &m, CLOCK_MONOTONIC, &d, &index) != 0)
    return 0;
  return fl_ipc_client_id(c);
}

static uint32_t take_m2(fl_ipc_t *c)
{
  return take_named(c, "m2");
}

/* Kill ch, which owns m, and find the death by acquiring m: a clean-up
 * whose report the server has not read.  */
static void kill_and_reap(struct child *ch, fl_ipc_obj_t m)
{
  struct timespec d = later(LONG_NS);
  uint32_t index;

  kill9(ch);
  ck_assert_int_eq(fl_ipc_wait_any(r, 1, &m, CLOCK_MONOTONIC, &d, &index),
                   EOWNERDEAD);
}

#define SLOT(id) FL_IPC_TAG_INDEX(id)

/* A dead client's slot with an unread report is claimed only when no
 * other slot is left: the server asks late and still learns what it
 * abandoned.  */
START_TEST(report_kept_while_slots_free)
{
  fl_ipc_obj_t m, reported[4];
  struct child a, b, c, d;
  uint32_t n = 0;

  ck_assert_int_eq(fl_ipc_mutex_create(r, "m", 0, &m), 0);
  a = spawn(take_mutex, 1);
  ck_assert_uint_ne(a.word, 0);
  kill_and_reap(&a, m);
  b = spawn(client_id, 1);
  ck_assert_uint_ne(SLOT(b.word), SLOT(a.word)); /* a free one was left */
  ck_assert_int_eq(fl_ipc_client_died(r, a.word, reported, 4, &n), 0);
  ck_assert_uint_eq(n, 1);
  ck_assert_uint_eq(reported[0].id, m.id);
  /* Read now, a's slot still goes after the free one, and then it is
   * the only one.  */
  c = spawn(client_id, 1);
  ck_assert_uint_ne(SLOT(c.word), SLOT(a.word));
  d = spawn(client_id, 1);
  ck_assert_uint_eq(SLOT(d.word), SLOT(a.word));
  ck_assert_int_eq(fl_ipc_client_died(r, a.word, NULL, 0, NULL), ESRCH);
  kill9(&b);
  kill9(&c);
  kill9(&d);
}
END_TEST

/* A full region: the slot of the oldest unread report goes, and the
 * server's call on it fails with ESRCH.  */
START_TEST(report_lost_when_full)
{
  fl_ipc_obj_t m, m2, reported[4];
  struct child a, b, c, d;
  uint32_t n = 0;

  ck_assert_int_eq(fl_ipc_mutex_create(r, "m", 0, &m), 0);
  ck_assert_int_eq(fl_ipc_mutex_create(r, "m2", 0, &m2), 0);
  a = spawn(take_mutex, 1);
  b = spawn(take_m2, 1);
  c = spawn(client_id, 1); /* the region's four slots are taken */
  ck_assert_uint_ne(a.word, 0);
  ck_assert_uint_ne(b.word, 0);
  /* b dies first, though its slot comes after a's.  */
  kill_and_reap(&b, m2);
  kill_and_reap(&a, m);
  d = spawn(client_id, 1);
  ck_assert_uint_eq(SLOT(d.word), SLOT(b.word));
  ck_assert_int_eq(fl_ipc_client_died(r, b.word, NULL, 0, NULL), ESRCH);
  ck_assert_int_eq(fl_ipc_client_died(r, a.word, reported, 4, &n), 0);
  ck_assert_uint_eq(n, 1);
  ck_assert_uint_eq(reported[0].id, m.id);
  kill9(&c);
  kill9(&d);
}
END_TEST

static uint32_t write_rwsem(fl_ipc_t *c)
{
  fl_ipc_obj_t rw;
  fl_rwsem_t *p;

  if (fl_ipc_obj_open(c, "rw", &rw) != 0 || fl_ipc_rwsem(c, rw, &p) != 0
      || fl_rwsem_down_write(p) != 0)
    return 0;
  return 1;
}

/* The rwsem object is FL_ROBUST: a writer killed holding it is found by
 * the next writer, which gets it with EOWNERDEAD.  */
START_TEST(rwsem_writer_killed)
{
  fl_ipc_obj_t rw;
  fl_rwsem_t *p;
  struct child ch;

  ck_assert_int_eq(fl_ipc_rwsem_create(r, "rw", &rw), 0);
  ck_assert_int_eq(fl_ipc_rwsem(r, rw, &p), 0);
  ch = spawn(write_rwsem, 1);
  ck_assert_uint_eq(ch.word, 1);
  ck_assert_int_eq(fl_rwsem_down_write_trylock(p), EBUSY);
  kill9(&ch);
  ck_assert_int_eq(fl_rwsem_down_write(p), EOWNERDEAD);
  ck_assert_int_eq(fl_rwsem_consistent(p), 0);
  ck_assert_int_eq(fl_rwsem_up_write(p), 0);
  ck_assert_int_eq(fl_rwsem_down_write(p), 0);
  ck_assert_int_eq(fl_rwsem_up_write(p), 0);
}
END_TEST

/* Two processes that are each PID 1, with TID 1, in a PID namespace of
 * their own (containers sharing /dev/shm): the second must not be taken
 * for the owner of the first's mutex (no release: EPERM; its wait times
 * out while the owner lives), and the first's death must still be found
 * (EOWNERDEAD to the next acquirer).  The identities are the region's
 * client slots and each process's byte lock on the region's file, which
 * no PID enters.  Skipped where unshare(CLONE_NEWPID) is not allowed.  */
struct ns_shared {
  int32_t step;     /* 1: init 0 owns m; 2: init 1 is done */
  int32_t init_pid; /* init 0's PID in the test's namespace */
  int32_t result[5];
};

static void ns_step_wait(struct ns_shared *g, int32_t step)
{
  int i;

  for (i = 0; i < 30000 && fl_load_acquire(&g->step) < step; i++)
    usleep(1000);
}

struct ns_init_arg {
  struct ns_shared *g;
  int me;
};

/* The init of namespace me: 0 takes m and sleeps; 1 tries it.  */
static int ns_init(void *p)
{
  const struct ns_init_arg *a = p;
  struct ns_shared *g = a->g;
  int me = a->me;
  struct timespec d = later(200 * (int64_t)1000000);
  fl_ipc_obj_t m;
  fl_ipc_t *c;
  uint32_t index, owner, tid;

  if (me == 1)
    ns_step_wait(g, 1);
  if (fl_ipc_open(region_name, &c) != 0 || fl_ipc_obj_open(c, "m", &m) != 0)
    return 4;
  if (me == 0) {
    g->result[0] = fl_ipc_wait_any(c, 1, &m, CLOCK_MONOTONIC, &d, &index);
    fl_store_release(&g->step, 1);
    for (;;)
      pause();
  }
  g->result[1] = fl_ipc_mutex_release(c, m, NULL);
  g->result[2] = fl_ipc_wait_any(c, 1, &m, CLOCK_MONOTONIC, &d, &index);
  if (fl_ipc_mutex_read(c, m, &owner, &tid, NULL) != 0)
    return 5;
  g->result[3] = (int32_t)tid; /* the owner's TID */
  g->result[4] = owner != 0 && owner != fl_ipc_client_id(c); /* not us */
  fl_store_release(&g->step, 2);
  return 0;
}

START_TEST(owners_in_two_pid_namespaces)
{
  struct ns_shared *g = mmap(NULL, sizeof *g, PROT_READ | PROT_WRITE,
                             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  struct timespec d = later(LONG_NS);
  fl_ipc_obj_t m;
  pid_t pid[2];
  int k, status[2];
  uint32_t index;

  ck_assert_ptr_ne(g, MAP_FAILED);
  memset(g, 0, sizeof *g);
  ck_assert_int_eq(fl_ipc_mutex_create(r, "m", 0, &m), 0);
  for (k = 0; k < 2; k++) {
    pid[k] = fork();
    ck_assert_int_ge(pid[k], 0);
    if (pid[k] == 0) {
      struct ns_init_arg a = { g, k };
      fl_test_namespace_init(ns_init, &a, k == 0 ? &g->init_pid : NULL);
    }
  }
  ck_assert_int_eq(waitpid(pid[1], &status[1], 0), pid[1]);
  if (WIFEXITED(status[1]) && WEXITSTATUS(status[1]) == 77) {
    printf("test-ipc-death: unshare(CLONE_NEWPID) not permitted here; "
           "owners_in_two_pid_namespaces checked nothing\n");
    kill(pid[0], SIGKILL);
    waitpid(pid[0], &status[0], 0);
    munmap(g, sizeof *g);
    return;
  }
  ck_assert_msg(WIFEXITED(status[1]) && WEXITSTATUS(status[1]) == 0,
                "namespace 1: status %#x", status[1]);
  ck_assert_int_eq(fl_load_acquire(&g->step), 2);
  ck_assert_int_eq(g->result[0], 0);
  ck_assert_int_eq(g->result[1], EPERM);     /* not the owner */
  ck_assert_int_eq(g->result[2], ETIMEDOUT); /* the owner lives */
  ck_assert_int_eq(g->result[3], 1);         /* TID 1, as the tester's */
  ck_assert_int_eq(g->result[4], 1);
  /* Init 0 dies (its namespace with it): its mutex is abandoned.  */
  ck_assert_int_gt(fl_load_acquire(&g->init_pid), 0);
  ck_assert_int_eq(kill(fl_load_acquire(&g->init_pid), SIGKILL), 0);
  ck_assert_int_eq(waitpid(pid[0], &status[0], 0), pid[0]);
  ck_assert_int_eq(fl_ipc_wait_any(r, 1, &m, CLOCK_MONOTONIC, &d, &index),
                   EOWNERDEAD);
  munmap(g, sizeof *g);
}
END_TEST

static uint32_t take_m1(fl_ipc_t *c)
{
  return take_named(c, "m1");
}

/* fl_ipc_wait_all's mask names exactly the abandoned mutexes among what
 * it acquired: here the second of three objects, whose owner was killed
 * (the first, a semaphore, and the third, a free mutex, are not).  */
START_TEST(wait_all_abandoned_mask)
{
  fl_ipc_obj_t o[3];
  struct timespec d = later(LONG_NS);
  uint64_t mask = ~(uint64_t)0;
  struct child ch;

  ck_assert_int_eq(fl_ipc_sem_create(r, "s", 1, 1, &o[0]), 0);
  ck_assert_int_eq(fl_ipc_mutex_create(r, "m1", 0, &o[1]), 0);
  ck_assert_int_eq(fl_ipc_mutex_create(r, "m2", 0, &o[2]), 0);
  ch = spawn(take_m1, 1);
  ck_assert_uint_ne(ch.word, 0);
  kill9(&ch);
  ck_assert_int_eq(fl_ipc_wait_all(r, 3, o, CLOCK_MONOTONIC, &d, &mask),
                   EOWNERDEAD);
  ck_assert_uint_eq(mask, (uint64_t)1 << 1);
  /* Held all the same, and reported once.  */
  ck_assert_int_eq(fl_ipc_mutex_release(r, o[1], NULL), 0);
  ck_assert_int_eq(fl_ipc_mutex_release(r, o[2], NULL), 0);
  ck_assert_int_eq(fl_ipc_sem_release(r, o[0], 1, NULL), 0);
  mask = ~(uint64_t)0;
  ck_assert_int_eq(fl_ipc_wait_all(r, 3, o, CLOCK_MONOTONIC, &d, &mask), 0);
  ck_assert_uint_eq(mask, 0);
}
END_TEST

static Suite *death_suite(void)
{
  Suite *s = suite_create("ipc-death");
  TCase *tc = tcase_create("kill");

  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  /* Several processes at once: what a uniprocessor build cannot have.  */
  tcase_set_tags(tc, FL_TAG_THREADS);
  tcase_add_test(tc, abandoned_then_wait);
  tcase_add_test(tc, abandoned_while_waiting);
  tcase_add_test(tc, dead_waiter);
  tcase_add_test(tc, client_died_live);
  tcase_add_test(tc, lock_holder_killed);
  tcase_add_test(tc, dead_references_and_reuse);
  tcase_add_test(tc, pulse_killed_mid_scan);
  tcase_add_test(tc, report_kept_while_slots_free);
  tcase_add_test(tc, report_lost_when_full);
  tcase_add_test(tc, fork_child_handle);
  tcase_add_test(tc, rwsem_writer_killed);
  tcase_add_test(tc, owners_in_two_pid_namespaces);
  tcase_add_test(tc, wait_all_abandoned_mask);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  if (FL_ATOMICS_ASM && FL_ARCH_MIPS && FL_MIPS_SYSMIPS) {
    puts("SKIP: test-ipc-death: the sysmips shim is atomic within one "
         "process only");
    return 77;
  }
  return fl_check_run(death_suite());
}
