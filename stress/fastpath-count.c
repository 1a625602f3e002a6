/* stress/fastpath-count.c [N]: N uncontended operation pairs of every
 * primitive, each primitive's loop in a function of its own, for
 * tools/count-instructions to count under callgrind (exact and
 * repeatable where wall time is not).  Run alone it only runs the pairs.
 *
 * Each pair_* loop is what a caller in a loop pays: fastlock's inline
 * fastpaths expand into it; the peers' locks are calls into their
 * library (glibc) or inline too (Concurrency Kit's headers).  The count
 * script runs this twice, with N and 2N, so that everything done once
 * (a thread's first-use set-up, the function's frame) cancels, and
 * subtracts the loop's own instructions, measured on pair_empty.
 *
 * The IPC pairs (a wait for one object and its release, in a region on
 * an anonymous memfd) stand beside an FL_PSHARED rwsem write pair, the
 * yardstick of <fastlock/ipc.h>'s cost.  */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <fastlock/counter.h>
#include <fastlock/ipc.h>
#include <fastlock/rwsem.h>
#include <fastlock/spinlock.h>

#if HAVE_CK
# include <ck_rwlock.h>
# include <ck_spinlock.h>
#endif

static fl_rwsem_t rwsem, rwsem_bias, rwsem_pshared;
static fl_ipc_t *region;
static fl_ipc_obj_t ipc_sem, ipc_mutex;
static uint32_t ipc_index;
static fl_spinlock_t spin;
static fl_ticketlock_t ticket;
static fl_qspinlock_t qspin;
static fl_counter_t shared, percpu, rseq, sigsafe;
static pthread_rwlock_t glibc_rwlock;
static pthread_spinlock_t glibc_spin;
static pthread_mutex_t glibc_mutex = PTHREAD_MUTEX_INITIALIZER;
#if HAVE_CK
static ck_rwlock_t ck_rw = CK_RWLOCK_INITIALIZER;
static ck_spinlock_fas_t ck_fas = CK_SPINLOCK_FAS_INITIALIZER;
static ck_spinlock_ticket_t ck_ticket = CK_SPINLOCK_TICKET_INITIALIZER;
static ck_spinlock_mcs_t ck_mcs = CK_SPINLOCK_MCS_INITIALIZER;
#endif

/* Every pair checks nothing: the results are checked by the tests, and a
 * check here would be counted with the fastpath.  GCC's noipa also stops
 * identical pairs from being folded into one function.  */
#if defined(__clang__)
# define PAIR_ATTR __attribute__((noinline))
#else
# define PAIR_ATTR __attribute__((noipa))
#endif
#define PAIR(name, body)                                                       \
 static PAIR_ATTR void pair_##name(long n)                                     \
 {                                                                             \
  long i;                                                                      \
  for (i = 0; i < n; i++) {                                                    \
   body;                                                                       \
  }                                                                            \
 }

PAIR(empty, __asm__ volatile("" ::: "memory"))
PAIR(fl_rwsem_read, (fl_rwsem_down_read(&rwsem), fl_rwsem_up_read(&rwsem)))
PAIR(fl_rwsem_write, (fl_rwsem_down_write(&rwsem), fl_rwsem_up_write(&rwsem)))
PAIR(fl_rwsem_bias_read,
     (fl_rwsem_down_read(&rwsem_bias), fl_rwsem_up_read(&rwsem_bias)))
PAIR(fl_rwsem_bias_write,
     (fl_rwsem_down_write(&rwsem_bias), fl_rwsem_up_write(&rwsem_bias)))
PAIR(fl_rwsem_pshared_write,
     (fl_rwsem_down_write(&rwsem_pshared), fl_rwsem_up_write(&rwsem_pshared)))
PAIR(fl_ipc_sem,
     (fl_ipc_wait_any(region, 1, &ipc_sem, CLOCK_MONOTONIC, NULL, &ipc_index),
      fl_ipc_sem_release(region, ipc_sem, 1, NULL)))
PAIR(fl_ipc_mutex,
     (fl_ipc_wait_any(region, 1, &ipc_mutex, CLOCK_MONOTONIC, NULL, &ipc_index),
      fl_ipc_mutex_release(region, ipc_mutex, NULL)))
PAIR(fl_spin, (fl_spin_lock(&spin), fl_spin_unlock(&spin)))
PAIR(fl_ticket, (fl_ticket_lock(&ticket), fl_ticket_unlock(&ticket)))
PAIR(fl_qspin, (fl_qspin_lock(&qspin), fl_qspin_unlock(&qspin)))
PAIR(fl_counter_shared, fl_counter_add(&shared, 1))
PAIR(fl_counter_percpu, fl_counter_add(&percpu, 1))
PAIR(fl_counter_rseq, fl_counter_add(&rseq, 1))
PAIR(fl_counter_sigsafe, fl_counter_add(&sigsafe, 1))
PAIR(glibc_rwlock_read, (pthread_rwlock_rdlock(&glibc_rwlock),
                         pthread_rwlock_unlock(&glibc_rwlock)))
PAIR(glibc_rwlock_write, (pthread_rwlock_wrlock(&glibc_rwlock),
                          pthread_rwlock_unlock(&glibc_rwlock)))
PAIR(glibc_spin,
     (pthread_spin_lock(&glibc_spin), pthread_spin_unlock(&glibc_spin)))
PAIR(glibc_mutex,
     (pthread_mutex_lock(&glibc_mutex), pthread_mutex_unlock(&glibc_mutex)))
#if HAVE_CK
PAIR(ck_rwlock_read,
     (ck_rwlock_read_lock(&ck_rw), ck_rwlock_read_unlock(&ck_rw)))
PAIR(ck_rwlock_write,
     (ck_rwlock_write_lock(&ck_rw), ck_rwlock_write_unlock(&ck_rw)))
PAIR(ck_fas, (ck_spinlock_fas_lock(&ck_fas), ck_spinlock_fas_unlock(&ck_fas)))
PAIR(ck_ticket, (ck_spinlock_ticket_lock(&ck_ticket),
                 ck_spinlock_ticket_unlock(&ck_ticket)))
static ck_spinlock_mcs_context_t ck_mcs_node;
PAIR(ck_mcs, (ck_spinlock_mcs_lock(&ck_mcs, &ck_mcs_node),
              ck_spinlock_mcs_unlock(&ck_mcs, &ck_mcs_node)))
#endif

static void (*const pairs[])(long) = {
  pair_empty,
  pair_fl_rwsem_read,
  pair_fl_rwsem_write,
  pair_fl_rwsem_bias_read,
  pair_fl_rwsem_bias_write,
  pair_fl_rwsem_pshared_write,
  pair_fl_ipc_sem,
  pair_fl_ipc_mutex,
  pair_fl_spin,
  pair_fl_ticket,
  pair_fl_qspin,
  pair_fl_counter_shared,
  pair_fl_counter_percpu,
  pair_fl_counter_rseq,
  pair_fl_counter_sigsafe,
  pair_glibc_rwlock_read,
  pair_glibc_rwlock_write,
  pair_glibc_spin,
  pair_glibc_mutex,
#if HAVE_CK
  pair_ck_rwlock_read,
  pair_ck_rwlock_write,
  pair_ck_fas,
  pair_ck_ticket,
  pair_ck_mcs,
#endif
};

static void must(int rc, const char *what)
{
  if (rc != 0) {
    fprintf(stderr, "fastpath-count: %s: error %d\n", what, rc);
    exit(1);
  }
}

/* A small region on a memfd, with one semaphore and one mutex.  */
static void ipc_setup(void)
{
  size_t size;
  void *mem;
  int fd;

  must(fl_ipc_region_size(4, 2, &size), "fl_ipc_region_size");
  fd = memfd_create("fastpath-count", 0);
  if (fd < 0 || ftruncate(fd, (off_t)size) != 0
      || (mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0))
             == MAP_FAILED) {
    perror("fastpath-count: memfd");
    exit(1);
  }
  must(fl_ipc_format(mem, size, 4, 2), "fl_ipc_format");
  must(fl_ipc_attach(mem, size, fd, &region), "fl_ipc_attach");
  must(fl_ipc_sem_create(region, NULL, 1, 1, &ipc_sem), "fl_ipc_sem_create");
  must(fl_ipc_mutex_create(region, NULL, 0, &ipc_mutex), "fl_ipc_mutex_create");
}

int main(int argc, char **argv)
{
  long n = argc > 1 ? atol(argv[1]) : 100000;
  size_t i;

  if (n <= 0) {
    fprintf(stderr, "usage: fastpath-count [PAIRS]\n");
    return 2;
  }
  must(fl_rwsem_init(&rwsem, 0), "fl_rwsem_init");
  must(fl_rwsem_init(&rwsem_bias, FL_RWSEM_READ_BIAS), "fl_rwsem_init");
  must(fl_rwsem_init(&rwsem_pshared, FL_PSHARED), "fl_rwsem_init");
  ipc_setup();
  must(fl_spin_init(&spin, 0), "fl_spin_init");
  must(fl_ticket_init(&ticket, 0), "fl_ticket_init");
  must(fl_qspin_init(&qspin, 0), "fl_qspin_init");
  must(fl_counter_init(&shared, FL_COUNTER_SHARED), "fl_counter_init");
  must(fl_counter_init(&percpu, FL_COUNTER_PERCPU_ATOMIC), "fl_counter_init");
  must(fl_counter_init(&rseq, FL_COUNTER_PERCPU_RSEQ), "fl_counter_init");
  must(fl_counter_init(&sigsafe, FL_COUNTER_PERTHREAD_SIGSAFE),
       "fl_counter_init");
  must(pthread_rwlock_init(&glibc_rwlock, NULL), "pthread_rwlock_init");
  must(pthread_spin_init(&glibc_spin, PTHREAD_PROCESS_PRIVATE),
       "pthread_spin_init");

  for (i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
    pairs[i](n);
  printf("pairs %ld\nrseq %s\n", n,
         fl_counter_strategy_name(fl_counter_strategy(&rseq)));
  return 0;
}
