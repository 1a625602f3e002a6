/* tests/test-atomic-mips.c: what the MIPS shim must get right beyond what
 * tests/test-atomic.c checks on every architecture.
 *
 * llsc and beql: an exception in the middle of a read-modify-write.  The
 * word sits on a read-only page, so the operation's store (the sc, or the
 * sw in the beql's delay slot) faults, and the SIGSEGV handler, standing
 * for whatever else runs on the CPU while the kernel has it, adds 1000 to
 * the word before making the page writable.  The interrupted operation
 * must then start over and see that update: sc fails because the
 * exception broke the link; beql annuls its store because k1 no longer
 * holds the cookie.  The handler writes 0 into the interrupted context's
 * k1, which is what the kernel must do on every exception return
 * (src/arch/mips.h); a real kernel leaves its own value there, QEMU's user
 * mode takes the one in the signal frame.  Each operation faults once, at
 * its store, which the handler checks: nothing here is left to timing.
 *
 * beql, interrupted at random: one thread and a fast interval timer whose
 * handler also adds to the word and clobbers k1, a uniprocessor with
 * interrupts in miniature; the sum must be exact.  QEMU's user mode
 * delivers signals only between translation blocks, and a beql sequence
 * is always inside one, so under QEMU no signal lands inside the sequence
 * (QEMU_SINGLESTEP=1 makes every instruction a block); the test counts the
 * signals that did and skips, saying why, when there were none.
 *
 * sysmips: the kernel's MIPS_ATOMIC_SET must hand back any old value, even
 * one that looks like an error number, and a store must wait for the
 * hashed lock that read-modify-writes hold.  QEMU's user mode has no
 * sysmips system call: there fl_check_run skips the whole program, saying
 * so (tests/fl-check.c).  */
#include "config.h"

#include <fastlock/arch/atomic.h>

#include "fl-check.h"

#if !(FL_ATOMICS_ASM && FL_ARCH_MIPS)
# error                                                                        \
     "tests/test-atomic-mips.c tests the MIPS asm shim: build it only for a MIPS asm configuration"
#endif

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#if FL_MIPS_SYSMIPS
# include <asm/sysmips.h>
# include <sys/syscall.h>
#endif

#if FL_MIPS_LLSC || FL_MIPS_BEQL

/* The instruction a fault in the operation's store reports: the sc
 * itself, or for a store in a delay slot the branch before it (EPC points
 * at the branch when Cause.BD is set, and the branch runs again).  */
static int is_the_store(uint32_t insn)
{
# if FL_MIPS_BEQL
  return insn >> 21 == (0x14u << 5 | 27); /* beql $27, rt, offset */
# elif defined(__mips_isa_rev) && __mips_isa_rev >= 6
  return insn >> 26 == 0x1f && (insn & 0x7f) == 0x26; /* R6 sc */
# else
  return insn >> 26 == 0x38; /* sc */
# endif
}

static int32_t *fault_word;
static long page_size;
static volatile sig_atomic_t faults, faults_at_store;

static void on_store_fault(int sig, siginfo_t *si, void *ctx)
{
  ucontext_t *uc = ctx;

  (void)sig;
  (void)si;
  faults++;
  if (is_the_store(*(const uint32_t *)(uintptr_t)uc->uc_mcontext.pc))
    faults_at_store++;
  if (mprotect(fault_word, (size_t)page_size, PROT_READ | PROT_WRITE) != 0)
    abort();
  fl_atomic_fetch_add_relaxed(fault_word, 1000);
# if FL_MIPS_BEQL
  uc->uc_mcontext.gregs[27] = 0;
# endif
}

/* Each case starts from 0 and faults once; the handler makes it 1000
 * before the operation's store can land.  */
struct fault_case {
  const char *name;
  int32_t (*run)(int32_t *p);
  int32_t returns, leaves;
};

static int32_t run_fetch_add_relaxed(int32_t *p)
{
  return fl_atomic_fetch_add_relaxed(p, 1);
}

static int32_t run_fetch_add_acq_rel(int32_t *p)
{
  return fl_atomic_fetch_add_acq_rel(p, 1);
}

/* Without the restart the sum would be -2000: negative too, so the word
 * tells the two apart.  */
static int32_t run_add_negative_release(int32_t *p)
{
  return fl_atomic_add_negative_release(p, -2000) != 0;
}

static int32_t run_xchg_relaxed(int32_t *p)
{
  return fl_atomic_xchg_relaxed(p, 5);
}

static int32_t run_xchg_acq_rel(int32_t *p)
{
  return fl_atomic_xchg_acq_rel(p, 5);
}

/* Expects the 0 it read before the fault: after the restart it reads
 * 1000 and must fail.  */
static int32_t run_cmpxchg_relaxed(int32_t *p)
{
  return fl_atomic_cmpxchg_relaxed(p, 0, 5);
}

static int32_t run_cmpxchg_acq_rel(int32_t *p)
{
  return fl_atomic_cmpxchg_acq_rel(p, 0, 5);
}

static const struct fault_case fault_cases[] = {
  { "fetch_add_relaxed(+1)", run_fetch_add_relaxed, 1000, 1001 },
  { "fetch_add_acq_rel(+1)", run_fetch_add_acq_rel, 1000, 1001 },
  { "add_negative_release(-2000)", run_add_negative_release, 1, -1000 },
  { "xchg_relaxed(5)", run_xchg_relaxed, 1000, 5 },
  { "xchg_acq_rel(5)", run_xchg_acq_rel, 1000, 5 },
  { "cmpxchg_relaxed(0, 5)", run_cmpxchg_relaxed, 1000, 1000 },
  { "cmpxchg_acq_rel(0, 5)", run_cmpxchg_acq_rel, 1000, 1000 },
};
# define NFAULT ((int)(sizeof fault_cases / sizeof fault_cases[0]))

START_TEST(store_fault_restarts_the_operation)
{
  const struct fault_case *c = &fault_cases[_i];
  struct sigaction sa, old;
  int round, rounds = 50;

  page_size = sysconf(_SC_PAGESIZE);
  fault_word = mmap(NULL, (size_t)page_size, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ck_assert_ptr_ne(fault_word, MAP_FAILED);
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_store_fault;
  sa.sa_flags = SA_SIGINFO;
  ck_assert_int_eq(sigaction(SIGSEGV, &sa, &old), 0);
  faults = faults_at_store = 0;

  for (round = 0; round < rounds; round++) {
    int32_t r;

    *fault_word = 0;
    ck_assert_int_eq(mprotect(fault_word, (size_t)page_size, PROT_READ), 0);
    r = c->run(fault_word);
    ck_assert_msg(r == c->returns && *fault_word == c->leaves,
                  "%s interrupted at its store by an update of +1000: "
                  "returned %d and left %d, expected %d and %d",
                  c->name, r, *fault_word, c->returns, c->leaves);
  }
  ck_assert_msg(faults == rounds && faults_at_store == rounds,
                "%s: %d faults, %d of them at the store, in %d rounds", c->name,
                (int)faults, (int)faults_at_store, rounds);
  sigaction(SIGSEGV, &old, NULL);
  munmap(fault_word, (size_t)page_size);
}
END_TEST

#endif /* FL_MIPS_LLSC || FL_MIPS_BEQL */

#if FL_MIPS_BEQL

static int32_t tick_word;
static volatile long ticks, ticks_inside;

static int is_beql_k1(uint32_t insn)
{
  return insn >> 21 == (0x14u << 5 | 27);
}

/* A tick landed inside a fetch_add sequence, where an unguarded load and
 * store would lose its update, when k1 holds the cookie and the beql is
 * at most two instructions ahead (the lw, the addu, or the beql itself,
 * to which a store in its delay slot also reports).  The move to k1 is
 * three instructions ahead and not counted: a tick there loses nothing.  */
static void on_tick(int sig, siginfo_t *si, void *ctx)
{
  ucontext_t *uc = ctx;
  const uint32_t *pc = (const uint32_t *)(uintptr_t)uc->uc_mcontext.pc;

  (void)sig;
  (void)si;
  ticks++;
  if ((uint32_t)uc->uc_mcontext.gregs[27] == FL_MIPS_BEQL_COOKIE
      && (is_beql_k1(pc[0]) || is_beql_k1(pc[1]) || is_beql_k1(pc[2])))
    ticks_inside++;
  fl_atomic_fetch_add_relaxed(&tick_word, 1);
  uc->uc_mcontext.gregs[27] = 0;
}

START_TEST(timer_interrupts_lose_no_update)
{
  struct itimerval every_20us = { { 0, 20 }, { 0, 20 } };
  struct itimerval stop = { { 0, 0 }, { 0, 0 } };
  struct sigaction sa, old;
  long i, n = fl_test_iterations(1000000);

  tick_word = 0;
  ticks = ticks_inside = 0;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_tick;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  ck_assert_int_eq(sigaction(SIGALRM, &sa, &old), 0);
  ck_assert_int_eq(setitimer(ITIMER_REAL, &every_20us, NULL), 0);
  for (i = 0; i < n; i++)
    fl_atomic_fetch_add_relaxed(&tick_word, 1);
  ck_assert_int_eq(setitimer(ITIMER_REAL, &stop, NULL), 0);
  sigaction(SIGALRM, &old, NULL);

  ck_assert_msg(tick_word == (int32_t)(n + ticks),
                "%ld increments and one from each of %ld ticks (%ld inside "
                "a sequence) left %d: updates were lost",
                n, ticks, ticks_inside, tick_word);
  if (ticks_inside == 0) {
    printf("test-atomic-mips: skipped timer_interrupts_lose_no_update: "
           "none of %ld timer signals landed inside a beql sequence "
           "(QEMU user mode delivers signals only between translation "
           "blocks; QEMU_SINGLESTEP=1 lets them land anywhere)\n",
           ticks);
    fflush(stdout);
  }
}
END_TEST

#endif /* FL_MIPS_BEQL */

#if FL_MIPS_SYSMIPS

/* The kernel returns the old value with a3 = 0 whatever it is; an old
 * value in the errno range must not read as a failure.  */
START_TEST(atomic_set_returns_any_old_value)
{
  static const int32_t olds[] = {
    0, 1, -1, -22, -4095, -4096, INT32_MIN, INT32_MAX,
  };
  unsigned i;

  for (i = 0; i < sizeof olds / sizeof olds[0]; i++) {
    int32_t w = olds[i];
    int32_t r = fl_mips_atomic_set(&w, 7);
    ck_assert_msg(r == olds[i] && w == 7,
                  "MIPS_ATOMIC_SET on %d returned %d and left %d", olds[i], r,
                  w);
  }
}
END_TEST

/* A store must take the word's lock, or it could land between a locked
 * load and store and be overwritten.  */
struct store_arg {
  int32_t *word;
  int32_t done;
};

static void *store_five(void *p)
{
  struct store_arg *a = p;

  fl_store_release(a->word, 5);
  fl_store_release(&a->done, 1);
  return NULL;
}

START_TEST(store_waits_for_the_lock)
{
  static int32_t word;
  struct store_arg arg = { &word, 0 };
  struct timespec pause = { 0, 50 * 1000 * 1000 };
  int32_t *lock;
  pthread_t t;

  word = 0;
  lock = fl_mips_sysmips_lock(&word);
  ck_assert_int_eq(pthread_create(&t, NULL, store_five, &arg), 0);
  nanosleep(&pause, NULL);
  ck_assert_msg(fl_load_acquire(&arg.done) == 0 && fl_load_relaxed(&word) == 0,
                "a store went through while the word's lock was held");
  fl_mips_sysmips_unlock(lock);
  pthread_join(t, NULL);
  ck_assert_int_eq(word, 5);
}
END_TEST

/* Words FL_MIPS_SYSMIPS_NLOCKS words apart share a lock: updates of the
 * one must neither block the other for good nor disturb it.  */
# define SHARE_THREADS 4

struct share_arg {
  int32_t *word;
  long iters;
};

static void *add_twice(void *p)
{
  struct share_arg *a = p;
  long i;

  for (i = 0; i < a->iters; i++) {
    int32_t old = fl_load_relaxed(a->word);

    fl_atomic_fetch_add_relaxed(a->word, 1);
    while (fl_atomic_cmpxchg_acq_rel(a->word, old, old + 1) != old)
      old = fl_load_relaxed(a->word);
  }
  return NULL;
}

START_TEST(words_sharing_a_lock)
{
  static int32_t words[FL_MIPS_SYSMIPS_NLOCKS + 1];
  struct share_arg args[SHARE_THREADS];
  long n = fl_test_iterations(20000);
  int i;

  memset(words, 0, sizeof words);
  for (i = 0; i < SHARE_THREADS; i++) {
    args[i].word = &words[i % 2 * FL_MIPS_SYSMIPS_NLOCKS];
    args[i].iters = n;
  }
  fl_test_threads(SHARE_THREADS, add_twice, args, sizeof args[0]);
  ck_assert_int_eq(words[0], (int32_t)(SHARE_THREADS * n));
  ck_assert_int_eq(words[FL_MIPS_SYSMIPS_NLOCKS], (int32_t)(SHARE_THREADS * n));
}
END_TEST

#endif /* FL_MIPS_SYSMIPS */

static Suite *atomic_mips_suite(void)
{
  Suite *s = suite_create("atomic, MIPS (" FL_ARCH_ATOMICS_NAME ")");
  TCase *tc = tcase_create("mips");

#if FL_MIPS_LLSC || FL_MIPS_BEQL
  tcase_add_loop_test(tc, store_fault_restarts_the_operation, 0, NFAULT);
#endif
#if FL_MIPS_BEQL
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, timer_interrupts_lose_no_update);
#endif
#if FL_MIPS_SYSMIPS
  tcase_add_test(tc, atomic_set_returns_any_old_value);
  tcase_add_test(tc, store_waits_for_the_lock);
  tcase_add_test(tc, words_sharing_a_lock);
#endif
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  printf("fastlock MIPS shim under test: %s (%s)\n", FL_ARCH_ATOMICS_NAME,
         FL_CONFIG_SUMMARY);
  return fl_check_run(atomic_mips_suite());
}
