/* tests/tools-program.c PRIMITIVE [race]: what a user runs under
 * helgrind, drd or ThreadSanitizer.
 *
 * A correct program: WORKERS threads bump one plain int, guarded by the
 * fastlock primitive PRIMITIVE (each lock type and mode, every way of
 * taking it), or add to a fastlock counter of each strategy while
 * another thread reads it, or wait for an IPC object (a mutex, a
 * semaphore of one, an auto-reset event, or a mutex and a semaphore at
 * once) in a region of its own.  Compiled against the public headers only and
 * linked with libfastlock as installed, it must draw no report from any
 * of the three tools (tools/check-valgrind, tools/check-tsan).
 *
 * With "race", every worker first makes one access to the guarded int
 * without the lock, on the line marked SEEDED RACE, before any lock
 * operation could order the workers: the tools must report it, at that
 * line.  Exit status 0 unless the program itself saw a wrong total.  */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <fastlock/counter.h>
#include <fastlock/ipc.h>
#include <fastlock/rwsem.h>
#include <fastlock/spinlock.h>
#include <unistd.h>

#define WORKERS 2
#define ROUNDS 200

static const char *primitive;
static int race;
static int guarded;

static fl_rwsem_t rwsem;
static fl_spinlock_t spin = FL_SPINLOCK_INITIALIZER;
static fl_ticketlock_t ticket;
static fl_qspinlock_t qspin;
static fl_counter_t counter;
/* The IPC rows: one region in this process, one object (and a second
 * for ipc-wait-all), waited for by the workers as threads of one client. */
static fl_ipc_t *region;
static char region_name[64];
static fl_ipc_obj_t ipc_obj[2];

static void fail(const char *what, int rc)
{
  fprintf(stderr, "tools-program %s: %s: %s\n", primitive, what, strerror(rc));
  exit(1);
}

static void check(const char *what, int rc)
{
  if (rc != 0)
    fail(what, rc);
}

/* A deadline one second from now.  */
static struct timespec soon(void)
{
  struct timespec t;

  clock_gettime(CLOCK_MONOTONIC, &t);
  t.tv_sec += 1;
  return t;
}

/* One guarded increment with the rwsem, taken in the way round r picks:
 * blocking, try (until it succeeds), timed, or downgraded to a read lock
 * for a read of the value afterwards.  */
static void rwsem_round(int r)
{
  struct timespec t;
  int rc, seen;

  switch (r % 5) {
    case 0:
      check("down_write", fl_rwsem_down_write(&rwsem));
      guarded++;
      check("up_write", fl_rwsem_up_write(&rwsem));
      break;
    case 1:
      while ((rc = fl_rwsem_down_write_trylock(&rwsem)) == EBUSY)
        sched_yield();
      check("down_write_trylock", rc);
      guarded++;
      check("up_write", fl_rwsem_up_write(&rwsem));
      break;
    case 2:
      t = soon();
      while ((rc = fl_rwsem_down_write_timed(&rwsem, CLOCK_MONOTONIC, &t))
             == ETIMEDOUT)
        t = soon();
      check("down_write_timed", rc);
      guarded++;
      check("up_write", fl_rwsem_up_write(&rwsem));
      break;
    case 3:
      check("down_write", fl_rwsem_down_write(&rwsem));
      guarded++;
      check("downgrade_write", fl_rwsem_downgrade_write(&rwsem));
      seen = guarded;
      check("up_read", fl_rwsem_up_read(&rwsem));
      if (seen <= 0)
        fail("downgrade", EINVAL);
      break;
    default:
      /* Readers only read: the increment for this round is made under the
     * write lock, after a read under each kind of read lock.  */
      check("down_read", fl_rwsem_down_read(&rwsem));
      seen = guarded;
      check("up_read", fl_rwsem_up_read(&rwsem));
      while ((rc = fl_rwsem_down_read_trylock(&rwsem)) == EBUSY)
        sched_yield();
      check("down_read_trylock", rc);
      seen += guarded;
      check("up_read", fl_rwsem_up_read(&rwsem));
      t = soon();
      while ((rc = fl_rwsem_down_read_timed(&rwsem, CLOCK_MONOTONIC, &t))
             == ETIMEDOUT)
        t = soon();
      check("down_read_timed", rc);
      seen += guarded;
      check("up_read", fl_rwsem_up_read(&rwsem));
      if (seen < 0)
        fail("read", EINVAL);
      check("down_write", fl_rwsem_down_write(&rwsem));
      guarded++;
      check("up_write", fl_rwsem_up_write(&rwsem));
      break;
  }
}

/* One guarded increment with a spinlock, blocking on even rounds and by
 * trylock on odd ones.  */
#define SPIN_ROUND(lock, trylock, unlock, l, r)                                \
 do {                                                                          \
  int rc_;                                                                     \
  if ((r) % 2 == 0) {                                                          \
   check(#lock, lock(l));                                                      \
  } else {                                                                     \
   while ((rc_ = trylock(l)) == EBUSY)                                         \
    sched_yield();                                                             \
   check(#trylock, rc_);                                                       \
  }                                                                            \
  guarded++;                                                                   \
  check(#unlock, unlock(l));                                                   \
 } while (0)

static int is(const char *name)
{
  return strcmp(primitive, name) == 0;
}

static int is_counter(void)
{
  return strncmp(primitive, "counter-", 8) == 0;
}

/* Take the IPC object(s), as fl_ipc_wait_any or _all does, and give
 * them back as their type is given back.  */
static void ipc_release(fl_ipc_obj_t obj)
{
  int type;

  check("fl_ipc_obj_type", fl_ipc_obj_type(region, obj, &type));
  if (type == FL_IPC_MUTEX)
    check("fl_ipc_mutex_release", fl_ipc_mutex_release(region, obj, NULL));
  else if (type == FL_IPC_SEM)
    check("fl_ipc_sem_release", fl_ipc_sem_release(region, obj, 1, NULL));
  else
    check("fl_ipc_event_set", fl_ipc_event_set(region, obj, NULL));
}

static void ipc_round(int r)
{
  struct timespec t = soon();
  uint32_t index;

  if (is("ipc-wait-all")) {
    check("fl_ipc_wait_all",
          fl_ipc_wait_all(region, 2, ipc_obj, CLOCK_MONOTONIC, NULL, NULL));
    guarded++;
    if (r % 8 == 0)
      sched_yield();
    ipc_release(ipc_obj[1]);
    ipc_release(ipc_obj[0]);
    return;
  }
  /* Every other round with a deadline, the others without; now and then
   * the holder lets the other worker run, which then sleeps on the
   * object until it is given back (the grant path).  */
  check("fl_ipc_wait_any", fl_ipc_wait_any(region, 1, ipc_obj, CLOCK_MONOTONIC,
                                           r % 2 ? &t : NULL, &index));
  guarded++;
  if (r % 8 == 0)
    sched_yield();
  ipc_release(ipc_obj[0]);
}

static void guarded_round(int r)
{
  if (strncmp(primitive, "ipc-", 4) == 0)
    ipc_round(r);
  else if (strncmp(primitive, "rwsem", 5) == 0)
    rwsem_round(r);
  else if (is("spin"))
    SPIN_ROUND(fl_spin_lock, fl_spin_trylock, fl_spin_unlock, &spin, r);
  else if (is("ticket"))
    SPIN_ROUND(fl_ticket_lock, fl_ticket_trylock, fl_ticket_unlock, &ticket, r);
  else
    SPIN_ROUND(fl_qspin_lock, fl_qspin_trylock, fl_qspin_unlock, &qspin, r);
}

static void *worker(void *arg)
{
  int r;

  (void)arg;
  for (r = 0; r < ROUNDS; r++) {
    if (race && r == 0)
      guarded++; /* SEEDED RACE */
    if (is_counter())
      fl_counter_add(&counter, 1);
    else
      guarded_round(r);
  }
  return NULL;
}

/* While the workers add, read the counter both ways.  */
static void *reader(void *unused)
{
  int64_t v = 0;
  int r;

  (void)unused;
  for (r = 0; r < ROUNDS; r++) {
    v += fl_counter_read(&counter);
    v += fl_counter_sum(&counter);
    sched_yield();
  }
  return v < 0 ? &counter : NULL;
}

/* A region of our own, its name unlinked at once (the mapping stays),
 * and the row's object(s).  */
static void set_up_ipc(void)
{
  snprintf(region_name, sizeof region_name, "/fl-tools-program-%ld",
           (long)getpid());
  check("fl_ipc_create", fl_ipc_create(region_name, 4, 2, &region));
  check("fl_ipc_unlink", fl_ipc_unlink(region_name));
  if (is("ipc-mutex") || is("ipc-wait-all"))
    check("fl_ipc_mutex_create",
          fl_ipc_mutex_create(region, NULL, 0, &ipc_obj[0]));
  else if (is("ipc-sem"))
    check("fl_ipc_sem_create",
          fl_ipc_sem_create(region, NULL, 1, 1, &ipc_obj[0]));
  else if (is("ipc-event"))
    check("fl_ipc_event_create",
          fl_ipc_event_create(region, NULL, 0, 1, &ipc_obj[0]));
  else
    fail("unknown IPC row", EINVAL);
  if (is("ipc-wait-all"))
    check("fl_ipc_sem_create",
          fl_ipc_sem_create(region, NULL, 1, 1, &ipc_obj[1]));
}

static void set_up(void)
{
  static const struct {
    const char *name;
    unsigned flags;
  } rwsems[] = {
    { "rwsem", 0 },
    { "rwsem-reader", FL_RWSEM_PREFER_READER },
    { "rwsem-writer", FL_RWSEM_PREFER_WRITER },
    { "rwsem-bias", FL_RWSEM_READ_BIAS },
  };
  static const struct {
    const char *name;
    int strategy;
  } counters[] = {
    { "counter-shared", FL_COUNTER_SHARED },
    { "counter-percpu", FL_COUNTER_PERCPU_ATOMIC },
    { "counter-rseq", FL_COUNTER_PERCPU_RSEQ },
    { "counter-sigsafe", FL_COUNTER_PERTHREAD_SIGSAFE },
  };
  size_t i;

  if (strncmp(primitive, "ipc-", 4) == 0) {
    set_up_ipc();
    return;
  }
  for (i = 0; i < sizeof rwsems / sizeof rwsems[0]; i++)
    if (is(rwsems[i].name)) {
      check("fl_rwsem_init", fl_rwsem_init(&rwsem, rwsems[i].flags));
      return;
    }
  for (i = 0; i < sizeof counters / sizeof counters[0]; i++)
    if (is(counters[i].name)) {
      check("fl_counter_init", fl_counter_init(&counter, counters[i].strategy));
      return;
    }
  /* spin stays statically initialised: the tools must cope with a lock
   * that never went through _init.  */
  if (is("spin"))
    return;
  if (is("ticket")) {
    check("fl_ticket_init", fl_ticket_init(&ticket, 0));
    return;
  }
  if (is("qspin")) {
    check("fl_qspin_init", fl_qspin_init(&qspin, 0));
    return;
  }
  fprintf(stderr, "usage: tools-program rwsem|rwsem-reader|rwsem-writer|"
                  "rwsem-bias|spin|ticket|qspin|counter-shared|counter-percpu|"
                  "counter-rseq|counter-sigsafe|ipc-mutex|ipc-sem|ipc-event|"
                  "ipc-wait-all [race]\n");
  exit(2);
}

int main(int argc, char **argv)
{
  pthread_t t[WORKERS], r;
  int64_t want = (int64_t)WORKERS * ROUNDS;
  int i;

  if (argc < 2)
    primitive = "";
  else
    primitive = argv[1];
  race = argc > 2 && strcmp(argv[2], "race") == 0;
  set_up();

  if (is_counter())
    check("pthread_create", pthread_create(&r, NULL, reader, NULL));
  for (i = 0; i < WORKERS; i++)
    check("pthread_create",
          pthread_create(&t[i], NULL, worker, (void *)(long)i));
  for (i = 0; i < WORKERS; i++)
    check("pthread_join", pthread_join(t[i], NULL));

  if (is_counter()) {
    void *bad;
    check("pthread_join", pthread_join(r, &bad));
    if (bad != NULL || fl_counter_sum(&counter) != want)
      fail("counter total", EINVAL);
    check("fl_counter_destroy", fl_counter_destroy(&counter));
    return 0;
  }
  if (!race && guarded != want)
    fail("guarded total", EINVAL);
  if (region != NULL) {
    check("fl_ipc_close", fl_ipc_close(region));
    return 0;
  }
  if (strncmp(primitive, "rwsem", 5) == 0)
    check("fl_rwsem_destroy", fl_rwsem_destroy(&rwsem));
  else if (is("ticket"))
    check("fl_ticket_destroy", fl_ticket_destroy(&ticket));
  else if (is("qspin"))
    check("fl_qspin_destroy", fl_qspin_destroy(&qspin));
  else
    check("fl_spin_destroy", fl_spin_destroy(&spin));
  return 0;
}
