/* src/counters/counter.c: the counter API, the per-CPU strategies and the
 * slowpaths of the inline fl_counter_add().  The per-thread strategy's
 * tables are in perthread.c.  */
#include "config.h"

#include <fastlock/counter.h>

#include "counters/counter-internal.h"
#include "sys/annotate.h"
#include "sys/cpu.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if FL_COUNTER_RSEQ_ASM
/* The critical sections in <fastlock/counter.h> read cpu_id at offset 4
 * and write rseq_cs at offset 8 of glibc's area; they also rely on the
 * area being at least that long, which fl_counter_rseq_usable() checks. */
_Static_assert(offsetof(struct rseq, cpu_id) == 4, "rseq cpu_id offset");
_Static_assert(offsetof(struct rseq, rseq_cs) == 8, "rseq rseq_cs offset");
# define FL_COUNTER_RSEQ_NEEDED (offsetof(struct rseq, rseq_cs) + 8)
#endif

/* What the machine and the process allow, found once.  */
static struct {
  uint32_t possible;  /* slots of a per-CPU counter */
  int possible_known; /* possible came from the kernel's mask */
  int rseq;           /* PERCPU_RSEQ runs its critical sections */
  int auto_strategy;  /* what FL_COUNTER_AUTO becomes */
} fl_counter_host;
static pthread_once_t fl_counter_host_once = PTHREAD_ONCE_INIT;

/* The highest CPU number in /sys/devices/system/cpu/possible ("0-3,8-11")
 * plus one, or 0 if it cannot be read.  */
static uint32_t fl_counter_read_possible(void)
{
  char buf[512], *p, *end;
  uint32_t n = 0;
  ssize_t len;
  int fd = open("/sys/devices/system/cpu/possible", O_RDONLY | O_CLOEXEC);

  if (fd < 0)
    return 0;
  len = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (len <= 0)
    return 0;
  buf[len] = '\0';
  for (p = buf; *p != '\0'; p = end) {
    unsigned long cpu;
    if (*p < '0' || *p > '9') {
      end = p + 1;
      continue;
    }
    cpu = strtoul(p, &end, 10);
    if (cpu >= n && cpu < UINT32_MAX)
      n = (uint32_t)cpu + 1;
  }
  return n;
}

static void fl_counter_host_init(void)
{
  uint32_t n = fl_counter_read_possible();

  fl_counter_host.possible_known = n > 0;
  if (n == 0) {
    long conf = sysconf(_SC_NPROCESSORS_CONF);
    n = conf > 0 ? (uint32_t)conf : 1;
  }
  fl_counter_host.possible = n;

#if FL_COUNTER_RSEQ_ASM
  /* glibc leaves __rseq_size at 0 when it did not register (kernel
   * without rseq, the tunable off, QEMU user mode, valgrind) and cpu_id
   * negative.  cpu_id must also index the slots: only a mask read from
   * the kernel bounds it.  */
  if (fl_counter_host.possible_known && __rseq_size >= FL_COUNTER_RSEQ_NEEDED) {
    uint32_t cpu =
        __atomic_load_n(&fl_counter_rseq_area()->cpu_id, __ATOMIC_RELAXED);
    fl_counter_host.rseq = cpu < n;
  }
#endif

  if (fl_counter_host.rseq)
    fl_counter_host.auto_strategy = FL_COUNTER_PERCPU_RSEQ;
  else if (n > 1)
    fl_counter_host.auto_strategy = FL_COUNTER_PERCPU_ATOMIC;
  else
    fl_counter_host.auto_strategy = FL_COUNTER_SHARED;
}

static void fl_counter_host_get(void)
{
  pthread_once(&fl_counter_host_once, fl_counter_host_init);
}

uint32_t fl_counter_possible_cpus(void)
{
  fl_counter_host_get();
  return fl_counter_host.possible;
}

int fl_counter_rseq_usable(void)
{
  fl_counter_host_get();
  return fl_counter_host.rseq;
}

int fl_counter_init(fl_counter_t *c, int strategy)
{
  void *slots;
  size_t size;
  int rc;

  if (strategy < FL_COUNTER_AUTO || strategy > FL_COUNTER_PERCPU_RSEQ)
    return EINVAL;
  fl_counter_host_get();
  if (strategy == FL_COUNTER_AUTO)
    strategy = fl_counter_host.auto_strategy;
  if (strategy == FL_COUNTER_PERCPU_RSEQ && !fl_counter_host.rseq)
    strategy = FL_COUNTER_PERCPU_ATOMIC;

  memset(c, 0, sizeof *c);
  switch (strategy) {
    case FL_COUNTER_PERCPU_ATOMIC:
    case FL_COUNTER_PERCPU_RSEQ:
      /* A slot per possible CPU, then the core.  */
      size = ((size_t)fl_counter_host.possible + 1) << FL_COUNTER_SLOT_SHIFT;
      if (posix_memalign(&slots, (size_t)1 << FL_COUNTER_SLOT_SHIFT, size) != 0)
        return ENOMEM;
      memset(slots, 0, size);
      /* The slots are read by fl_counter_sum() while other threads add to
     * them with atomics or restartable sections that the Valgrind tools
     * cannot see as synchronisation: they count, they order nothing.  */
      FL_VG_HIDE(slots, size);
      c->slots = (uintptr_t)slots;
      c->nslots = fl_counter_host.possible;
      break;
    case FL_COUNTER_PERTHREAD_SIGSAFE:
      rc = fl_counter_perthread_init(c);
      if (rc != 0)
        return rc;
      break;
    default:
      break;
  }
  c->strategy = (uint32_t)strategy;
  FL_VG_HIDE(c, sizeof *c);
  return 0;
}

static int fl_counter_valid(const fl_counter_t *c)
{
  return c->strategy <= FL_COUNTER_PERCPU_RSEQ;
}

int fl_counter_destroy(fl_counter_t *c)
{
  if (!fl_counter_valid(c))
    return EINVAL;
  switch (c->strategy) {
    case FL_COUNTER_PERCPU_ATOMIC:
    case FL_COUNTER_PERCPU_RSEQ:
      free((void *)(uintptr_t)c->slots);
      break;
    case FL_COUNTER_PERTHREAD_SIGSAFE:
      fl_counter_perthread_destroy(c);
      break;
    default:
      break;
  }
  memset(c, 0, sizeof *c);
  return 0;
}

/* A reader waiting for a writer between write_begin and write_end: that
 * is a few instructions, unless the writer was preempted there.  */
static void fl_counter_wait(unsigned *spins)
{
  if (++*spins < 100)
    fl_cpu_relax();
  else
    sched_yield();
}

int64_t fl_counter_snapshot(const fl_counter_t *c, int with_slots)
{
  const struct fl_counter_core *k = fl_counter_core(c);
  unsigned spins = 0;

  for (;;) {
    uint64_t v;
    int32_t gen;
    uint32_t i;

    /* Acquire: what a finished writer changed is visible from here.  */
    if (fl_load_acquire(&k->busy) != 0) {
      fl_counter_wait(&spins);
      continue;
    }
    /* Acquire: gen is read before everything the check below covers.  */
    gen = fl_load_acquire(&k->gen);
    v = (uint64_t)fl_counter_count_load(k);
    for (i = 0; with_slots && i < c->nslots; i++)
      v += (uint64_t)(int64_t)fl_load_relaxed(fl_counter_slot(c, i));
    /* The reads above happen before the check below.  */
    fl_smp_rmb();
    /* Acquire on busy: a writer that dropped it has moved gen, and the
     * read of gen must not pass this one.  */
    if (fl_load_acquire(&k->busy) == 0 && fl_load_relaxed(&k->gen) == gen)
      return (int64_t)v;
    fl_counter_wait(&spins);
  }
}

int64_t fl_counter_read(const fl_counter_t *c)
{
#if FL_COUNTER_WIDE
  return fl_counter_count_load(fl_counter_core(c));
#else
  return fl_counter_snapshot(c, 0);
#endif
}

int64_t fl_counter_sum(fl_counter_t *c)
{
  struct fl_counter_core *k = fl_counter_core(c);
  int64_t v;

  switch (c->strategy) {
    case FL_COUNTER_PERCPU_ATOMIC:
    case FL_COUNTER_PERCPU_RSEQ:
      /* Folds below FL_COUNTER_FORCE_FOLD wait while this is raised, so
     * that a busy counter cannot make the snapshot retry forever.  */
      fl_atomic_fetch_add_relaxed(&k->summing, 1);
      v = fl_counter_snapshot(c, 1);
      fl_atomic_fetch_add_relaxed(&k->summing, -1);
      return v;
    case FL_COUNTER_PERTHREAD_SIGSAFE:
      return fl_counter_perthread_sum(c);
    default:
      return fl_counter_read(c);
  }
}

int fl_counter_reset(fl_counter_t *c)
{
  if (!fl_counter_valid(c))
    return EINVAL;
  fl_counter_count_add_direct(fl_counter_core(c),
                              (int64_t)(0 - (uint64_t)fl_counter_sum(c)));
  return 0;
}

int fl_counter_strategy(const fl_counter_t *c)
{
  return c->strategy == FL_COUNTER_AUTO ? FL_COUNTER_SHARED : (int)c->strategy;
}

const char *fl_counter_strategy_name(int strategy)
{
  switch (strategy) {
    case FL_COUNTER_AUTO:
      return "auto";
    case FL_COUNTER_SHARED:
      return "shared";
    case FL_COUNTER_PERCPU_ATOMIC:
      return "percpu-atomic";
    case FL_COUNTER_PERTHREAD_SIGSAFE:
      return "perthread-sigsafe";
    case FL_COUNTER_PERCPU_RSEQ:
      return "percpu-rseq";
    default:
      return "unknown";
  }
}

void fl_counter_add_slowpath(fl_counter_t *c, int64_t delta)
{
  if (c->strategy == FL_COUNTER_PERTHREAD_SIGSAFE && fl_counter_in_batch(delta))
    fl_counter_perthread_add(c, (int32_t)delta);
  else
    fl_counter_count_add_direct(fl_counter_core(c), delta);
}

/* Move a per-CPU slot into the count.  PERCPU_ATOMIC moves the slot the
 * add used, with an atomic exchange, since other CPUs' threads may be
 * adding to it.  PERCPU_RSEQ may only touch the slot of the CPU it runs
 * on, and does so with a restartable load and store of zero: usually the
 * same slot; after a migration another, and the first stays below twice
 * the batch until its CPU's next add folds it.  */
void fl_counter_fold_slowpath(fl_counter_t *c, uint32_t cpu, int32_t seen)
{
  struct fl_counter_core *k = fl_counter_core(c);
  int32_t x;

  if (fl_load_relaxed(&k->summing) != 0 && seen > -FL_COUNTER_FORCE_FOLD
      && seen < FL_COUNTER_FORCE_FOLD)
    return;
  fl_counter_write_begin(k);
#if FL_COUNTER_RSEQ_ASM
  if (c->strategy == FL_COUNTER_PERCPU_RSEQ)
    x = fl_counter_rseq_take(fl_counter_rseq_area(), c->slots);
  else
#endif
    x = fl_atomic_xchg_relaxed(fl_counter_slot(c, cpu), 0);
  fl_counter_count_add(k, x);
  fl_counter_write_end(k);
}

uint32_t fl_counter_cpu_slowpath(const fl_counter_t *c)
{
  int cpu = sched_getcpu();

  return cpu >= 0 ? (uint32_t)cpu % c->nslots : 0;
}
