/* tests/test-rwsem-pshared.c: one FL_PSHARED rwsem, several processes.
 *
 * PROCS children each map the same memfd anew, so at an address of their
 * own, and hammer the lock in the segment with random reads and writes
 * (blocking, trylock, timed).  Inside the critical section they check the
 * invariant (atomic counters in the segment); writers add one to a plain
 * counter in the segment.  At the end the invariant was never broken and
 * the counter is exactly the number of writes the children made: a lost
 * update would show there.
 *
 * Not for the sysmips shim, which is atomic within one process only
 * (src/arch/mips.h says why).  */
#include "config.h"

#include <fastlock/rwsem.h>

#include "sys/annotate.h"
#include "sys/clock.h"

#include "fl-check.h"

#include <errno.h>
#include <stdio.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROCS 4
#define ITERATIONS 10000L

struct segment {
  fl_rwsem_t lock;
  int32_t readers_in, writers_in, violations;
  uint64_t counter;      /* plain: protected by the lock */
  int64_t writes[PROCS]; /* each child's own count */
  uint64_t where[PROCS]; /* where each child mapped it */
};

static int32_t add(int32_t *p, int32_t v)
{
  return __atomic_add_fetch(p, v, __ATOMIC_SEQ_CST);
}

static int32_t get(int32_t *p)
{
  return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static int acquire(struct segment *g, int write, unsigned *seed)
{
  unsigned r = (unsigned)rand_r(seed);
  struct timespec deadline =
      fl_deadline_after_ns(CLOCK_MONOTONIC, (long)(r >> 4) % 1000000L);

  switch (r % 4) {
    case 0:
      return write ? fl_rwsem_down_write_trylock(&g->lock)
                   : fl_rwsem_down_read_trylock(&g->lock);
    case 1:
      return write ? fl_rwsem_down_write_timed(&g->lock, CLOCK_MONOTONIC,
                                               &deadline)
                   : fl_rwsem_down_read_timed(&g->lock, CLOCK_MONOTONIC,
                                              &deadline);
    default:
      return write ? fl_rwsem_down_write(&g->lock)
                   : fl_rwsem_down_read(&g->lock);
  }
}

/* A child: map the segment again and hammer it.  Exit status 0 if every
 * call returned what it may.  */
static void child(int fd, int me, long iterations)
{
  /* A few pages of padding first, different in each child, so that the
   * children's mappings differ from each other's too.  */
  void *pad = mmap(NULL, (size_t)(me + 1) * 4096, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  struct segment *g =
      mmap(NULL, sizeof *g, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  unsigned seed = 0x2545f491u * (unsigned)(me + 1);
  int bad = 0;
  long i;

  if (pad == MAP_FAILED || g == MAP_FAILED)
    _exit(2);
  FL_VG_HIDE(&g->readers_in, 3 * sizeof(int32_t));
  g->where[me] = (uint64_t)(uintptr_t)g;
  for (i = 0; i < iterations; i++) {
    int write = rand_r(&seed) % 3 == 0;
    int rc = acquire(g, write, &seed);

    if (rc == EBUSY || rc == ETIMEDOUT)
      continue;
    if (rc != 0) {
      bad = 1;
      continue;
    }
    if (write) {
      if (add(&g->writers_in, 1) != 1 || get(&g->readers_in) != 0)
        add(&g->violations, 1);
      g->counter++;
      g->writes[me]++;
      if (rand_r(&seed) % 8 == 0)
        sched_yield();
      add(&g->writers_in, -1);
      bad |= fl_rwsem_up_write(&g->lock) != 0;
    } else {
      add(&g->readers_in, 1);
      if (get(&g->writers_in) != 0)
        add(&g->violations, 1);
      if (rand_r(&seed) % 8 == 0)
        sched_yield();
      add(&g->readers_in, -1);
      bad |= fl_rwsem_up_read(&g->lock) != 0;
    }
  }
  _exit(bad);
}

START_TEST(processes_share_one_lock)
{
  static const unsigned modes[] = { FL_PSHARED,
                                    FL_PSHARED | FL_RWSEM_PREFER_WRITER };
  int fd = memfd_create("fl-rwsem-pshared", 0);
  long iterations = fl_test_iterations(ITERATIONS);
  struct segment *g;
  pid_t pid[PROCS];
  int64_t writes = 0;
  int i, status;

  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(ftruncate(fd, sizeof *g), 0);
  g = mmap(NULL, sizeof *g, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ck_assert(g != MAP_FAILED);
  ck_assert_int_eq(fl_rwsem_init(&g->lock, modes[_i]), 0);
  for (i = 0; i < PROCS; i++) {
    pid[i] = fork();
    ck_assert_int_ge(pid[i], 0);
    if (pid[i] == 0)
      child(fd, i, iterations);
  }
  for (i = 0; i < PROCS; i++) {
    ck_assert_int_eq(waitpid(pid[i], &status, 0), pid[i]);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "child %d: status %#x", i, status);
    writes += g->writes[i];
  }
  /* Each child used a mapping of its own, at another address than the
   * parent's (which was still there when it made it).  */
  for (i = 0; i < PROCS; i++)
    ck_assert(g->where[i] != 0 && g->where[i] != (uint64_t)(uintptr_t)g);
  ck_assert_int_eq(g->violations, 0);
  ck_assert_int_gt(writes, 0);
  ck_assert_uint_eq(g->counter, (uint64_t)writes);
  ck_assert_int_eq(fl_rwsem_destroy(&g->lock), 0);
  munmap(g, sizeof *g);
  close(fd);
}
END_TEST

static Suite *pshared_suite(void)
{
  Suite *s = suite_create("rwsem-pshared");
  TCase *tc = tcase_create("processes");

  tcase_set_tags(tc, FL_TAG_THREADS);
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, processes_share_one_lock, 0, 2);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  if (FL_ATOMICS_ASM && FL_ARCH_MIPS && FL_MIPS_SYSMIPS) {
    puts("SKIP: test-rwsem-pshared: the sysmips shim is atomic within one "
         "process only");
    return 77;
  }
  return fl_check_run(pshared_suite());
}
