/* tests/test-rwsem-process.c: what processes do to an FL_PSHARED rwsem
 * (and fork to a private one): waiters killed or stopped in the middle of
 * a wait, owners in two PID namespaces, the pthread_atfork idiom.
 *
 * The lock lives in a MAP_SHARED anonymous mapping made before fork.  A
 * waiter is known to be queued when the count word's sign bit (SLOW: a
 * waiter's flag is up) is set; tests poll for that, never sleep a fixed
 * time.  A call that should return but hangs fails through the test
 * case's timeout; deadlines given to the lock are generous (seconds), so
 * a loaded machine does not fail them.  */
#include "config.h"

#include <fastlock/rwsem.h>

#include "rwsem/rwsem-internal.h"
#include "sys/clock.h"

#include "fl-check.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static const unsigned pshared_modes[] = {
  FL_PSHARED,
  FL_PSHARED | FL_RWSEM_PREFER_READER,
  FL_PSHARED | FL_RWSEM_PREFER_WRITER,
};
#define NPMODES ((int)(sizeof pshared_modes / sizeof pshared_modes[0]))

/* What the processes of one test share.  */
struct shared {
  fl_rwsem_t lock;
  int32_t step;      /* handshakes between the processes */
  int32_t result[4]; /* what the children saw */
};

static struct shared *shared_new(unsigned mode)
{
  struct shared *g = mmap(NULL, sizeof *g, PROT_READ | PROT_WRITE,
                          MAP_SHARED | MAP_ANONYMOUS, -1, 0);

  ck_assert(g != MAP_FAILED);
  ck_assert_int_eq(fl_rwsem_init(&g->lock, mode), 0);
  return g;
}

static void shared_free(struct shared *g)
{
  ck_assert_int_eq(fl_rwsem_destroy(&g->lock), 0);
  munmap(g, sizeof *g);
}

static int32_t get(int32_t *p)
{
  return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static void set(int32_t *p, int32_t v)
{
  __atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}

/* Poll (without a time limit a slow run could hit) until ok(g).  */
static void wait_until(struct shared *g, int (*ok)(struct shared *),
                       const char *what)
{
  long tries;

  for (tries = 0; !ok(g); tries++) {
    ck_assert_msg(tries < 2000000, "%s: not after 2000000 polls", what);
    usleep(100);
  }
}

static int someone_waits(struct shared *g)
{
  return get(&g->lock.count) < 0;
}

static struct timespec in_seconds(int s)
{
  return fl_deadline_after_ns(CLOCK_MONOTONIC, (int64_t)s * 1000000000);
}

/* Defect: a process killed while queued (blocking or timed, reader or
 * writer, every mode) was handed the lock after its death, and the lock
 * stayed held for ever.  Loop index: mode, then reader/writer, then
 * blocking/timed.  */
START_TEST(killed_waiter_blocks_nobody)
{
  unsigned mode = pshared_modes[_i % NPMODES];
  int write = (_i / NPMODES) % 2;
  int timed = _i / NPMODES / 2;
  struct shared *g = shared_new(mode);
  struct timespec t;
  pid_t pid;
  int status;

  ck_assert_int_eq(fl_rwsem_down_write(&g->lock), 0);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    struct timespec later = in_seconds(3600);
    if (write)
      _exit(timed ? fl_rwsem_down_write_timed(&g->lock, CLOCK_MONOTONIC, &later)
                  : fl_rwsem_down_write(&g->lock));
    _exit(timed ? fl_rwsem_down_read_timed(&g->lock, CLOCK_MONOTONIC, &later)
                : fl_rwsem_down_read(&g->lock));
  }
  wait_until(g, someone_waits, "the child never waited");
  ck_assert_int_eq(kill(pid, SIGKILL), 0);
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFSIGNALED(status));
  ck_assert_int_eq(fl_rwsem_up_write(&g->lock), 0);
  /* The dead waiter must not hold anything now.  */
  t = in_seconds(10);
  ck_assert_int_eq(fl_rwsem_down_write_timed(&g->lock, CLOCK_MONOTONIC, &t), 0);
  ck_assert_int_eq(fl_rwsem_up_write(&g->lock), 0);
  t = in_seconds(10);
  ck_assert_int_eq(fl_rwsem_down_read_timed(&g->lock, CLOCK_MONOTONIC, &t), 0);
  ck_assert_int_eq(fl_rwsem_up_read(&g->lock), 0);
  shared_free(g);
}
END_TEST

/* The same with a reader holding the lock and a writer queued behind it
 * killed: a reader that comes later must get in once the holder leaves,
 * without waiting for the dead writer.  */
START_TEST(killed_writer_does_not_stop_readers)
{
  struct shared *g = shared_new(pshared_modes[_i]);
  struct timespec t;
  pid_t pid, reader;
  int status;

  ck_assert_int_eq(fl_rwsem_down_read(&g->lock), 0);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0)
    _exit(fl_rwsem_down_write(&g->lock));
  wait_until(g, someone_waits, "the writer never waited");
  ck_assert_int_eq(kill(pid, SIGKILL), 0);
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  reader = fork();
  ck_assert_int_ge(reader, 0);
  if (reader == 0) {
    struct timespec later = in_seconds(10);
    int rc = fl_rwsem_down_read_timed(&g->lock, CLOCK_MONOTONIC, &later);
    _exit(rc == 0 ? fl_rwsem_up_read(&g->lock) : rc);
  }
  ck_assert_int_eq(fl_rwsem_up_read(&g->lock), 0);
  ck_assert_int_eq(waitpid(reader, &status, 0), reader);
  ck_assert(WIFEXITED(status));
  ck_assert_int_eq(WEXITSTATUS(status), 0);
  t = in_seconds(10);
  ck_assert_int_eq(fl_rwsem_down_write_timed(&g->lock, CLOCK_MONOTONIC, &t), 0);
  ck_assert_int_eq(fl_rwsem_up_write(&g->lock), 0);
  shared_free(g);
}
END_TEST

/* Defect: timed calls waited without a deadline for the lock's internal
 * queue lock, so a process stopped (or killed) inside it made them hang.
 * Two children hammer the lock with every kind of call; the parent stops
 * one of them at arbitrary moments (often inside a slowpath) and each
 * time makes a timed call, which must return (0 or ETIMEDOUT) instead of
 * hanging: a hang fails through the test case's timeout.  */
static void hammer(struct shared *g, unsigned seed)
{
  for (;;) {
    struct timespec t =
        fl_deadline_after_ns(CLOCK_MONOTONIC, rand_r(&seed) % 200000);
    int rc;

    switch (rand_r(&seed) % 4) {
      case 0:
        if (fl_rwsem_down_write(&g->lock) == 0)
          fl_rwsem_up_write(&g->lock);
        break;
      case 1:
        if (fl_rwsem_down_read(&g->lock) == 0)
          fl_rwsem_up_read(&g->lock);
        break;
      case 2:
        rc = fl_rwsem_down_write_timed(&g->lock, CLOCK_MONOTONIC, &t);
        if (rc == 0)
          fl_rwsem_up_write(&g->lock);
        break;
      default:
        rc = fl_rwsem_down_read_timed(&g->lock, CLOCK_MONOTONIC, &t);
        if (rc == 0)
          fl_rwsem_up_read(&g->lock);
        break;
    }
  }
}

START_TEST(timed_calls_survive_a_stopped_process)
{
  struct shared *g = shared_new(pshared_modes[_i]);
  long rounds = fl_test_iterations(200);
  pid_t pid[2];
  long i;
  int k, status;

  for (k = 0; k < 2; k++) {
    pid[k] = fork();
    ck_assert_int_ge(pid[k], 0);
    if (pid[k] == 0)
      hammer(g, 7u + (unsigned)k);
  }
  for (i = 0; i < rounds; i++) {
    struct timespec t = fl_deadline_after_ns(CLOCK_MONOTONIC, 2000000);
    int rc;

    usleep((useconds_t)(i % 7) * 50);
    ck_assert_int_eq(kill(pid[i % 2], SIGSTOP), 0);
    ck_assert_int_eq(waitpid(pid[i % 2], &status, WUNTRACED), pid[i % 2]);
    rc = i % 2 ? fl_rwsem_down_read_timed(&g->lock, CLOCK_MONOTONIC, &t)
               : fl_rwsem_down_write_timed(&g->lock, CLOCK_MONOTONIC, &t);
    ck_assert_msg(rc == 0 || rc == ETIMEDOUT, "timed call: %d", rc);
    if (rc == 0)
      ck_assert_int_eq(
          i % 2 ? fl_rwsem_up_read(&g->lock) : fl_rwsem_up_write(&g->lock), 0);
    ck_assert_int_eq(kill(pid[i % 2], SIGCONT), 0);
  }
  for (k = 0; k < 2; k++) {
    ck_assert_int_eq(kill(pid[k], SIGKILL), 0);
    ck_assert_int_eq(waitpid(pid[k], &status, 0), pid[k]);
  }
  /* The children died holding what they held: the lock cannot be
   * destroyed or reused in general (FL_ROBUST is about that), so only
   * the mapping goes.  */
  munmap(g, sizeof *g);
}
END_TEST

static int writer_flag_up(struct shared *g)
{
  return (get(&g->lock.count) & FL_RWSEM_WPEND) != 0;
}

/* Defect (found by check-cross under qemu-ppc: fastlock-bench's destroy
 * said EBUSY after its threads had joined): a reader's lease (T9) took
 * WPEND down but left its own RWAIT up, so it got in under it; a writer
 * that came while it was inside kept it, and that writer's release
 * turned it into a readers' turn nobody entered.  The lock, unused, kept
 * RTURN: destroy said EBUSY and the next writer waited out a lease.  The
 * writer here is a child stopped (SIGSTOP) while the reader's lease runs
 * out, so the interleaving is forced, not hoped for.  Fair mode only:
 * the preferences take other paths (no lease for a reader that prefers
 * itself; no readers' turn while a writer that is preferred waits).  */
START_TEST(reader_lease_leaves_no_stale_turn)
{
  struct shared *g = shared_new(FL_PSHARED);
  pid_t pid;
  int status;

  ck_assert_int_eq(fl_rwsem_down_read(&g->lock), 0);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    if (fl_rwsem_down_write(&g->lock) != 0 || fl_rwsem_up_write(&g->lock) != 0)
      _exit(1);
    _exit(0);
  }
  wait_until(g, writer_flag_up, "the writer never waited");
  ck_assert_int_eq(kill(pid, SIGSTOP), 0);
  ck_assert_int_eq(waitpid(pid, &status, WUNTRACED), pid);
  /* The last reader leaves: WPEND stays, the stopped writer's claim.  */
  ck_assert_int_eq(fl_rwsem_up_read(&g->lock), 0);
  /* Blocked by WPEND alone, this reader sleeps on its lease, takes the
   * flags down (T9) and gets in: with its RWAIT gone too.  */
  ck_assert_int_eq(fl_rwsem_down_read(&g->lock), 0);
  ck_assert_int_eq(get(&g->lock.count) & FL_RWSEM_RWAIT, 0);
  ck_assert_int_eq(kill(pid, SIGCONT), 0);
  wait_until(g, writer_flag_up, "the writer never waited again");
  ck_assert_int_eq(fl_rwsem_up_read(&g->lock), 0);
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ck_assert_int_eq(get(&g->lock.count), FL_RWSEM_SHARED);
  shared_free(g);
}
END_TEST

/* Defect: owners were told apart by TID alone, and TIDs repeat across PID
 * namespaces.  Two children each unshare a PID namespace and fork its
 * init (PID 1 in both); the first takes the write lock, the second must
 * not be taken for its owner.  Skipped where unshare(CLONE_NEWPID) is not
 * allowed.  */
struct ns_init_arg {
  struct shared *g;
  int me;
};

/* The init of namespace me: 0 takes the write lock, 1 must not pass as
 * its owner.  */
static int namespace_init(void *p)
{
  struct ns_init_arg *a = p;
  struct shared *g = a->g;
  struct timespec t = in_seconds(1);

  if (a->me == 0) {
    g->result[0] = fl_rwsem_down_write(&g->lock);
    set(&g->step, 1);
    while (get(&g->step) != 2)
      usleep(100);
    g->result[1] = fl_rwsem_up_write(&g->lock);
    return 0;
  }
  while (get(&g->step) != 1)
    usleep(100);
  g->result[2] = fl_rwsem_down_write_timed(&g->lock, CLOCK_MONOTONIC, &t);
  g->result[3] = fl_rwsem_up_write(&g->lock);
  set(&g->step, 2);
  return 0;
}

START_TEST(owners_in_two_pid_namespaces_differ)
{
  struct shared *g = shared_new(FL_PSHARED);
  pid_t pid[2];
  int k, status[2];

  for (k = 0; k < 2; k++) {
    pid[k] = fork();
    ck_assert_int_ge(pid[k], 0);
    if (pid[k] == 0) {
      struct ns_init_arg a = { g, k };
      fl_test_namespace_init(namespace_init, &a, NULL);
    }
  }
  for (k = 0; k < 2; k++)
    ck_assert_int_eq(waitpid(pid[k], &status[k], 0), pid[k]);
  if (WIFEXITED(status[0]) && WEXITSTATUS(status[0]) == 77) {
    printf("test-rwsem-process: unshare(CLONE_NEWPID) not permitted here; "
           "owners_in_two_pid_namespaces_differ checked nothing\n");
    kill(pid[1], SIGKILL);
    munmap(g, sizeof *g);
    return;
  }
  for (k = 0; k < 2; k++)
    ck_assert_msg(WIFEXITED(status[k]) && WEXITSTATUS(status[k]) == 0,
                  "namespace %d: status %#x", k, status[k]);
  ck_assert_int_eq(g->result[0], 0);
  ck_assert_int_eq(g->result[2], ETIMEDOUT); /* not EDEADLK */
  ck_assert_int_eq(g->result[3], EPERM);     /* not the owner */
  ck_assert_int_eq(g->result[1], 0);
  /* A holder of another namespace than the lock's maker's: nobody probes
   * holders any more (src/rwsem/robust.c, NAMESPACES).  */
  ck_assert(get(&g->lock.mode) & (int32_t)FL_RWSEM_NS_MIXED);
  shared_free(g);
}
END_TEST

/* FL_ROBUST: a write holder killed with the lock.  The next writer (or
 * reader: then it holds the lock for writing) gets EOWNERDEAD within its
 * deadline; with fl_rwsem_consistent the lock is usable again (loop index
 * 0, 1), without it ENOTRECOVERABLE for everybody (2, 3).  */
START_TEST(robust_dead_writer_is_detected)
{
  struct shared *g = shared_new(FL_PSHARED | FL_ROBUST);
  int by_reader = _i % 2, repair = _i < 2;
  struct timespec t = in_seconds(30);
  pid_t pid;
  int status, rc;

  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    if (fl_rwsem_down_write(&g->lock) != 0)
      _exit(1);
    set(&g->step, 1);
    for (;;)
      pause();
  }
  while (get(&g->step) != 1)
    usleep(100);
  ck_assert_int_eq(kill(pid, SIGKILL), 0);
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_int_eq(fl_rwsem_consistent(&g->lock), EINVAL); /* not ours */
  rc = by_reader ? fl_rwsem_down_read_timed(&g->lock, CLOCK_MONOTONIC, &t)
                 : fl_rwsem_down_write_timed(&g->lock, CLOCK_MONOTONIC, &t);
  ck_assert_int_eq(rc, EOWNERDEAD);
  ck_assert_int_eq(fl_rwsem_downgrade_write(&g->lock), EPERM);
  if (repair) {
    ck_assert_int_eq(fl_rwsem_consistent(&g->lock), 0);
    ck_assert_int_eq(fl_rwsem_consistent(&g->lock), EINVAL); /* once */
    ck_assert_int_eq(fl_rwsem_up_write(&g->lock), 0);
    ck_assert_int_eq(fl_rwsem_down_write(&g->lock), 0);
    ck_assert_int_eq(fl_rwsem_up_write(&g->lock), 0);
    ck_assert_int_eq(fl_rwsem_down_read(&g->lock), 0);
    ck_assert_int_eq(fl_rwsem_up_read(&g->lock), 0);
  } else {
    ck_assert_int_eq(fl_rwsem_up_write(&g->lock), 0);
    ck_assert_int_eq(fl_rwsem_down_write(&g->lock), ENOTRECOVERABLE);
    ck_assert_int_eq(fl_rwsem_down_read(&g->lock), ENOTRECOVERABLE);
    ck_assert_int_eq(fl_rwsem_down_write_trylock(&g->lock), ENOTRECOVERABLE);
  }
  shared_free(g);
}
END_TEST

/* FL_ROBUST: a writer killed in passing, in each state of the owner
 * word that names it while its critical section is not running
 * (src/rwsem/robust.c): claimed before T5 (PEND, WRITER down), claimed
 * and past T5 (PEND, WRITER up: until 2026-12-07 WRITER up with nobody
 * recorded, a lock wedged for good), releasing before the count word
 * lets WRITER go (REL, WRITER up) and after (REL, WRITER down).  The
 * child walks the library's own steps (the claim, the count word's T5 or
 * release as the library makes them with nobody waiting) and is killed
 * there.  Then a reader (odd loop index) or a writer gets in within its
 * deadline, with 0, not EOWNERDEAD (nobody died inside), and after it a
 * writer and a reader, and the lock is free at the end.  */
enum window { CLAIMED, CLAIMED_PAST_T5, LEAVING, LEFT, NWINDOWS };

static void die_in_passing(struct shared *g, enum window where)
{
  struct fl_rwsem_wait w = FL_RWSEM_NO_DEADLINE(FL_RWSEM_BLOCK);
  int32_t id = fl_rwsem_self_get() | FL_RWSEM_OWNER_SLOW;
  int ok;

  if (where == CLAIMED || where == CLAIMED_PAST_T5) {
    ok = fl_rwsem_owner_claim(&g->lock, id, fl_rwsem_self_ns(), &w) == 0;
    if (where == CLAIMED_PAST_T5)
      __atomic_fetch_or(&g->lock.count, FL_RWSEM_WRITER, __ATOMIC_ACQ_REL);
  } else {
    ok = fl_rwsem_down_write(&g->lock) == 0;
    fl_rwsem_owner_leaving(&g->lock, id);
    if (where == LEFT)
      __atomic_fetch_and(&g->lock.count, ~FL_RWSEM_WRITER, __ATOMIC_RELEASE);
  }
  if (!ok)
    _exit(1);
  set(&g->step, 1);
  for (;;)
    pause();
}

START_TEST(robust_writer_killed_in_passing)
{
  struct shared *g = shared_new(FL_PSHARED | FL_ROBUST);
  enum window where = (enum window)(_i / 2);
  int by_reader = _i % 2;
  struct timespec t = in_seconds(30);
  pid_t pid;
  int status, rc;

  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0)
    die_in_passing(g, where);
  while (get(&g->step) != 1)
    usleep(100);
  ck_assert_int_eq(kill(pid, SIGKILL), 0);
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_int_eq(get(&g->lock.owner) & FL_RWSEM_OWNER_TID, pid);
  if (by_reader) {
    ck_assert_int_eq(fl_rwsem_down_read_timed(&g->lock, CLOCK_MONOTONIC, &t),
                     0);
    ck_assert_int_eq(fl_rwsem_up_read(&g->lock), 0);
  } else {
    ck_assert_int_eq(fl_rwsem_down_write_timed(&g->lock, CLOCK_MONOTONIC, &t),
                     0);
    ck_assert_int_eq(fl_rwsem_up_write(&g->lock), 0);
  }
  rc = fl_rwsem_down_write_timed(&g->lock, CLOCK_MONOTONIC, &t);
  ck_assert_int_eq(rc, 0);
  ck_assert_int_eq(fl_rwsem_up_write(&g->lock), 0);
  ck_assert_int_eq(fl_rwsem_down_read(&g->lock), 0);
  ck_assert_int_eq(fl_rwsem_up_read(&g->lock), 0);
  ck_assert_int_eq(get(&g->lock.owner), 0);
  shared_free(g);
}
END_TEST

/* Fork a child that records its stamp in result[0] (after taking the
 * write lock, if lock), sets step to 1 and waits to be killed; return
 * once it has.  */
static pid_t stamped_child(struct shared *g, int lock)
{
  pid_t pid = fork();

  if (pid == 0) {
    if (lock && fl_rwsem_down_write(&g->lock) != 0)
      _exit(1);
    set(&g->result[0], fl_rwsem_self_stamp());
    set(&g->step, 1);
    for (;;)
      pause();
  }
  while (pid > 0 && get(&g->step) != 1)
    usleep(100);
  return pid;
}

/* FL_ROBUST, STAMPS (src/rwsem/robust.c): the owner word names a live
 * thread's TID with another thread's stamp, as a write holder that died
 * leaves it once its TID is taken by a new thread.  The prober must find
 * the holder dead (loop index 0: a writer, 1: a reader, each with
 * EOWNERDEAD); with the live thread's own stamp (2) it must not (J3: a
 * live holder is never taken over), and the waiter's deadline passes.  */
START_TEST(robust_holder_with_another_stamp_is_dead)
{
  struct shared *g = shared_new(FL_PSHARED | FL_ROBUST);
  int by_reader = _i == 1, control = _i == 2;
  struct timespec t;
  int32_t real, stamp;
  pid_t pid;
  int rc;

  pid = stamped_child(g, 0);
  ck_assert_int_ge(pid, 0);
  real = get(&g->result[0]);
  if (real == 0) {
    printf("test-rwsem-process: pidfd_open(PIDFD_THREAD) refused here "
           "(Linux before 6.9, or an emulator): no stamps, "
           "robust_holder_with_another_stamp_is_dead checked nothing\n");
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    shared_free(g);
    return;
  }
  /* 1..STAMPS in STAMP's place; another one is (k mod STAMPS) + 1.  */
  stamp =
      control
          ? real
          : ((real >> FL_RWSEM_OWNER_STAMP_SHIFT) % FL_RWSEM_OWNER_STAMPS + 1)
                << FL_RWSEM_OWNER_STAMP_SHIFT;
  __atomic_fetch_or(&g->lock.count, FL_RWSEM_WRITER, __ATOMIC_ACQ_REL);
  set(&g->lock.owner, pid | FL_RWSEM_OWNER_SLOW | stamp);
  if (control) {
    t = fl_deadline_after_ns(CLOCK_MONOTONIC, 300000000); /* 6 probes */
    ck_assert_int_eq(fl_rwsem_down_write_timed(&g->lock, CLOCK_MONOTONIC, &t),
                     ETIMEDOUT);
    ck_assert_int_eq(fl_rwsem_down_read_trylock(&g->lock), EBUSY);
    ck_assert_int_eq(get(&g->lock.owner), pid | FL_RWSEM_OWNER_SLOW | stamp);
    set(&g->lock.owner, 0); /* the live holder's release, by hand */
    __atomic_fetch_and(&g->lock.count, ~FL_RWSEM_WRITER, __ATOMIC_RELEASE);
  } else {
    t = in_seconds(30);
    rc = by_reader ? fl_rwsem_down_read_timed(&g->lock, CLOCK_MONOTONIC, &t)
                   : fl_rwsem_down_write_timed(&g->lock, CLOCK_MONOTONIC, &t);
    ck_assert_int_eq(rc, EOWNERDEAD);
    ck_assert_int_eq(fl_rwsem_consistent(&g->lock), 0);
    ck_assert_int_eq(fl_rwsem_up_write(&g->lock), 0);
  }
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  ck_assert_int_eq(fl_rwsem_down_write(&g->lock), 0);
  ck_assert_int_eq(fl_rwsem_up_write(&g->lock), 0);
  shared_free(g);
}
END_TEST

/* The same with a real reuse: in a PID namespace of its own (where
 * nobody else forks), a write holder A is killed, ns_last_pid is set so
 * that the next child B gets A's TID, and B, not A's thread for all its
 * TID, must not pass for the holder: its up_write is EPERM (before
 * stamps, 0: it released a dead thread's lock as its own) and its
 * down_write finds A dead (before, EDEADLK: the lock wedged for good).
 * Should B's stamp equal A's (one time in 63), B is killed and another
 * B made.  Exit codes: 0 done, 78 no stamps here, 79 ns_last_pid not
 * writable, 80 the TID was not reused (each: nothing checked), others a
 * failure; results 1..3 B's.  */
static pid_t reuse_child(struct shared *g)
{
  pid_t b = fork();

  if (b != 0)
    return b;
  set(&g->result[0], fl_rwsem_self_stamp());
  set(&g->step, 2);
  while (get(&g->step) != 3)
    usleep(100);
  {
    struct timespec t = in_seconds(30);

    set(&g->result[1], fl_rwsem_up_write(&g->lock));
    set(&g->result[2],
        fl_rwsem_down_write_timed(&g->lock, CLOCK_MONOTONIC, &t));
    if (get(&g->result[2]) == EOWNERDEAD) {
      fl_rwsem_consistent(&g->lock);
      set(&g->result[3], fl_rwsem_up_write(&g->lock));
    }
  }
  set(&g->step, 4);
  for (;;)
    pause();
}

static int reuse_init(void *p)
{
  struct shared *g = p;
  int32_t dead_stamp;
  pid_t a, b = 0;
  int tries;

  if (fl_rwsem_init(&g->lock, FL_PSHARED | FL_ROBUST) != 0)
    return 10; /* owner_ns: this namespace */
  a = stamped_child(g, 1);
  if (a < 0)
    return 11;
  kill(a, SIGKILL);
  waitpid(a, NULL, 0);
  dead_stamp = get(&g->result[0]);
  if (dead_stamp == 0)
    return 78;
  for (tries = 0; tries < 20; tries++) {
    char buf[16];
    int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
    int n = snprintf(buf, sizeof buf, "%d", (int)a - 1);
    int ok = fd >= 0 && write(fd, buf, (size_t)n) == n;

    if (fd >= 0)
      close(fd);
    if (!ok)
      return 79;
    set(&g->step, 1);
    b = reuse_child(g);
    if (b != a)
      return 80;
    while (get(&g->step) != 2)
      usleep(100);
    if (get(&g->result[0]) != dead_stamp)
      break;
    kill(b, SIGKILL);
    waitpid(b, NULL, 0);
  }
  if (tries == 20)
    return 81; /* twenty Bs with A's stamp: the stamps are not A's own */
  set(&g->step, 3);
  while (get(&g->step) != 4)
    usleep(100);
  kill(b, SIGKILL);
  waitpid(b, NULL, 0);
  return 0;
}

START_TEST(robust_holder_tid_reused)
{
  struct shared *g = shared_new(FL_PSHARED | FL_ROBUST);
  pid_t pid;
  int status, code;

  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0)
    fl_test_namespace_init(reuse_init, g, NULL);
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFEXITED(status), "status %#x", status);
  code = WEXITSTATUS(status);
  if (code >= 77 && code <= 80) {
    static const char *const why[] = {
      "unshare(CLONE_NEWPID) not permitted",
      "pidfd_open(PIDFD_THREAD) refused (no stamps)",
      "ns_last_pid not writable", "the TID was not given again"
    };
    printf("test-rwsem-process: %s here; robust_holder_tid_reused checked "
           "nothing\n",
           why[code - 77]);
    munmap(g, sizeof *g);
    return;
  }
  ck_assert_int_eq(code, 0);
  ck_assert_int_eq(g->result[1], EPERM);      /* not the holder */
  ck_assert_int_eq(g->result[2], EOWNERDEAD); /* not EDEADLK */
  ck_assert_int_eq(g->result[3], 0);
  shared_free(g);
}
END_TEST

/* A read holder killed with the lock: its count stays (read locks are
 * counted, not named) until a supervisor that knows of the death says so
 * with fl_rwsem_reader_died; then writers get in.  */
START_TEST(dead_reader_released_by_its_supervisor)
{
  struct shared *g = shared_new(pshared_modes[_i] | (_i == 0 ? FL_ROBUST : 0u));
  struct timespec t;
  pid_t pid;
  int status;

  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    if (fl_rwsem_down_read(&g->lock) != 0)
      _exit(1);
    set(&g->step, 1);
    for (;;)
      pause();
  }
  while (get(&g->step) != 1)
    usleep(100);
  ck_assert_int_eq(kill(pid, SIGKILL), 0);
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_int_eq(fl_rwsem_down_write_trylock(&g->lock), EBUSY);
  ck_assert_int_eq(fl_rwsem_reader_died(&g->lock), 0);
  t = in_seconds(10);
  ck_assert_int_eq(fl_rwsem_down_write_timed(&g->lock, CLOCK_MONOTONIC, &t), 0);
  ck_assert_int_eq(fl_rwsem_up_write(&g->lock), 0);
  ck_assert_int_eq(fl_rwsem_reader_died(&g->lock), EPERM);
  shared_free(g);
}
END_TEST

/* The pthread_atfork idiom: the forking thread holds a private lock for
 * writing across fork, and both parent and child release it.  In the
 * child the lock is the child's own copy, held by its only thread, which
 * is the forking thread's copy: it may release it and use the lock.
 * parents_waiters: flags of the parent's other threads, put into the word
 * by hand before fork (and taken out again in the parent); nobody in the
 * child will ever take them off, so its release must.  */
static void atfork_idiom(int32_t parents_waiters)
{
  fl_rwsem_t s = FL_RWSEM_INITIALIZER;
  pid_t pid;
  int status;

  ck_assert_int_eq(fl_rwsem_down_write(&s), 0);
  fl_store_relaxed(&s.count, fl_load_relaxed(&s.count) | parents_waiters);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    int ok = fl_rwsem_up_write(&s) == 0 && fl_load_relaxed(&s.count) == 0
             && fl_rwsem_down_write(&s) == 0 && fl_rwsem_up_write(&s) == 0
             && fl_rwsem_down_read(&s) == 0 && fl_rwsem_up_read(&s) == 0
             && fl_rwsem_destroy(&s) == 0;
    _exit(ok ? 0 : 1);
  }
  fl_store_relaxed(&s.count, fl_load_relaxed(&s.count) & ~parents_waiters);
  ck_assert_int_eq(fl_rwsem_up_write(&s), 0);
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status));
  ck_assert_int_eq(WEXITSTATUS(status), 0);
  ck_assert_int_eq(fl_rwsem_destroy(&s), 0);
}

START_TEST(atfork_idiom_releases_in_both)
{
  atfork_idiom(0);
}
END_TEST

/* A reader of the parent's late and asleep (its RWAIT and its one in L,
 * rwsem.c's LATE READERS): left in the child's word, its lock is never
 * idle again (destroy says EBUSY for a late count, and every readers'
 * turn waits out a writer's lease).  */
START_TEST(atfork_child_forgets_the_parents_waiters)
{
  atfork_idiom(
      (int32_t)((uint32_t)FL_RWSEM_SLOW | FL_RWSEM_RWAIT | FL_RWSEM_LATE));
}
END_TEST

/* A lease (T9) on an FL_PSHARED lock clears L, the late readers' count,
 * since a late reader may have died, and advances E, the epoch of L, in
 * the same CAS: a live late reader whose one went sees E moved and
 * counts itself again (rwsem.c, LATE READERS; counting itself again only
 * when it found L empty, it starved beside another late reader in the
 * model).  The late one here is a dead reader's, with the WPEND of a dead
 * writer, put into the word by hand: a reader blocked by WPEND alone
 * waits out its lease and runs T9.  E has two bits and comes round after
 * four clears; an unused lock may keep any E.  */
START_TEST(lease_that_clears_late_readers_advances_their_epoch)
{
  struct shared *g = shared_new(FL_PSHARED);
  const int32_t stale =
      (int32_t)((uint32_t)FL_RWSEM_SLOW | FL_RWSEM_WPEND | FL_RWSEM_LATE);
  int i;

  for (i = 1; i <= 4; i++) {
    int32_t epoch = (i % 4) * FL_RWSEM_EPOCH;
    int32_t c;

    set(&g->lock.count, get(&g->lock.count) | stale);
    ck_assert_int_eq(fl_rwsem_down_read(&g->lock), 0);
    c = get(&g->lock.count);
    ck_assert_int_eq(c & (FL_RWSEM_LATE_MASK | FL_RWSEM_EPOCH_MASK), epoch);
    ck_assert_int_eq(fl_rwsem_check_invariants(&g->lock, c), 0);
    ck_assert_int_eq(fl_rwsem_up_read(&g->lock), 0);
    ck_assert_int_eq(get(&g->lock.count), FL_RWSEM_SHARED | epoch);
    ck_assert_int_eq(fl_rwsem_destroy(&g->lock), 0);
  }
  shared_free(g);
}
END_TEST

static Suite *process_suite(void)
{
  Suite *s = suite_create("rwsem-process");
  TCase *tc = tcase_create("processes");

  tcase_set_tags(tc, FL_TAG_THREADS);
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, killed_waiter_blocks_nobody, 0, 4 * NPMODES);
  tcase_add_loop_test(tc, killed_writer_does_not_stop_readers, 0, NPMODES);
  tcase_add_loop_test(tc, timed_calls_survive_a_stopped_process, 0, NPMODES);
  tcase_add_test(tc, reader_lease_leaves_no_stale_turn);
  tcase_add_test(tc, lease_that_clears_late_readers_advances_their_epoch);
  tcase_add_test(tc, owners_in_two_pid_namespaces_differ);
  tcase_add_test(tc, atfork_idiom_releases_in_both);
  tcase_add_test(tc, atfork_child_forgets_the_parents_waiters);
  tcase_add_loop_test(tc, robust_dead_writer_is_detected, 0, 4);
  tcase_add_loop_test(tc, robust_writer_killed_in_passing, 0, 2 * NWINDOWS);
  tcase_add_loop_test(tc, robust_holder_with_another_stamp_is_dead, 0, 3);
  tcase_add_test(tc, robust_holder_tid_reused);
  tcase_add_loop_test(tc, dead_reader_released_by_its_supervisor, 0, NPMODES);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  if (FL_ATOMICS_ASM && FL_ARCH_MIPS && FL_MIPS_SYSMIPS) {
    puts("SKIP: test-rwsem-process: the sysmips shim is atomic within one "
         "process only");
    return 77;
  }
  return fl_check_run(process_suite());
}
