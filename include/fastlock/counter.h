/* <fastlock/counter.h>: 64-bit counters that many threads bump at once.
 *
 * Z. Menyhart and C. Lameter (linux-ia64, "Re: light weight counters:
 * race free through local_t?") asked what a per-CPU counter increment
 * costs on ia64 done three ways: fetchadd on the CPU's slot, a plain increment with interrupts off,
 * a plain increment with preemption off.  In user space on Linux those are
 * three of the strategies here, with a shared atomic word as the baseline:
 *
 *   FL_COUNTER_SHARED            one atomic 64-bit word: every add is an
 *                                atomic instruction on one cache line that
 *                                all CPUs fight over.  Exact read.
 *   FL_COUNTER_PERCPU_ATOMIC     one slot per possible CPU, an atomic add
 *                                into the current CPU's slot (their case 1:
 *                                fetchadd4 on ia64, lock xadd on x86).
 *                                The CPU number comes from the rseq area
 *                                when glibc registered one, else from
 *                                sched_getcpu(); a thread that migrates
 *                                between reading it and adding only costs
 *                                a cache miss, never a lost update.
 *   FL_COUNTER_PERTHREAD_SIGSAFE one slot per thread, a plain load, add and
 *                                store with every signal blocked around it
 *                                (their case 2, the irq-save analog: two
 *                                rt_sigprocmask system calls per add).
 *   FL_COUNTER_PERCPU_RSEQ       one slot per possible CPU, a plain load,
 *                                add and store inside a Linux restartable
 *                                sequence (their case 3, the preempt-off
 *                                analog, and the heir of K. Kissell's BEQL
 *                                trick): if the thread is preempted,
 *                                migrated or signalled inside the sequence
 *                                the kernel restarts it, so no atomic
 *                                instruction is needed.  Uses the rseq area
 *                                glibc 2.35+ registers (__rseq_offset,
 *                                __rseq_size) and never registers its own.
 *                                Where there is none (kernel < 4.18,
 *                                GLIBC_TUNABLES=glibc.pthread.rseq=0, QEMU
 *                                user mode, valgrind) or this architecture
 *                                has no critical section below (x86_64,
 *                                i386, aarch64 and ppc64 have one), the
 *                                counter runs FL_COUNTER_PERCPU_ATOMIC, and
 *                                fl_counter_strategy() says so.
 *   FL_COUNTER_AUTO              the fastest that works here, decided once
 *                                per process: PERCPU_RSEQ where it runs,
 *                                else PERCPU_ATOMIC, or SHARED on a machine
 *                                with one possible CPU.
 *
 * Slots hold int32_t deltas, folded into the 64-bit count in the manner of
 * the kernel's percpu_counter: an add whose slot ends at or beyond
 * +-FL_COUNTER_BATCH moves the slot into the count.  fl_counter_read()
 * returns the count alone (fast, approximate); fl_counter_sum() adds every
 * slot to it (exact).  Deltas of FL_COUNTER_BATCH or more in magnitude go
 * straight into the count.  So 64-bit values need no 64-bit operation on a
 * slot, on any architecture; the count is one atomic int64_t where the
 * compiler has lock-free 64-bit atomics (x86_64, i386 with cmpxchg8b,
 * aarch64, ppc64, ia64), and on 32-bit PowerPC and MIPS, which have none,
 * two 32-bit halves updated with 32-bit atomics and read under the busy/gen
 * protocol below.  Values wrap modulo 2^64.
 *
 * Where the count lives: in the counter for SHARED and PERTHREAD_SIGSAFE,
 * and for the per-CPU strategies in a line of its own after the slots
 * (struct fl_counter_core).  Every per-CPU add reads the counter's
 * strategy and slot address, and a fold writes the count and its guards
 * with four atomic operations: on one line, every fold costs the adds of
 * the other CPUs a cache miss, and its own operations one each that
 * they take the line back in between: the core has a line of its own
 * (the measurement is in the ChangeLog).
 *
 * The error of fl_counter_read() is the sum of the slots, each of which
 * is left below FL_COUNTER_BATCH in magnitude by every completed add:
 * PERCPU_ATOMIC has a slot per possible CPU (the count of
 * /sys/devices/system/cpu/possible), PERTHREAD_SIGSAFE one per live thread
 * that has added, SHARED none.  Two exceptions, both per-CPU: a fold that
 * finds an fl_counter_sum() in progress is skipped, so that folds cannot
 * starve the sum (unless the slot has reached 2^30), and PERCPU_RSEQ folds
 * the slot of the CPU the thread is on when it folds, which after a
 * migration since its add is not the one that crossed the batch.  Either
 * way the slot stays as it is until the next add to it, of any delta,
 * zero included, folds it; for PERCPU_RSEQ without a sum in progress that
 * is below 2 * FL_COUNTER_BATCH unless threads migrate between add and
 * fold on that slot several times in a row.
 *
 * fl_counter_sum() is exact for every add that happened before it; adds
 * that run concurrently are counted or not, each as a whole.  A thread's
 * per-thread slot is folded into the count when the thread exits, so
 * nothing is lost to thread exit.
 *
 * fl_counter_add() never fails and is async-signal-safe: a signal handler
 * may add to a counter that the thread it interrupted is adding to.  It
 * never waits, but for a PERTHREAD_SIGSAFE fold or first add in a thread,
 * which takes a mutex that is only ever held briefly, by another thread,
 * with its signals blocked.  fl_counter_read() is async-signal-safe where
 * the count is one atomic word; the other functions are not.
 *
 * An all-zero fl_counter_t (FL_COUNTER_INITIALIZER) is a valid SHARED
 * counter holding 0.  fl_counter_init() may choose any strategy; the
 * per-CPU and per-thread strategies allocate, so they need
 * fl_counter_destroy(), hold the address of process-private memory and
 * cannot be shared between processes.  A counter must not be moved or
 * copied once initialised.  */
#ifndef FASTLOCK_COUNTER_H
#define FASTLOCK_COUNTER_H

#include <fastlock/common.h>

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum fl_counter_strategy {
  FL_COUNTER_AUTO = 0,
  FL_COUNTER_SHARED,
  FL_COUNTER_PERCPU_ATOMIC,
  FL_COUNTER_PERTHREAD_SIGSAFE,
  FL_COUNTER_PERCPU_RSEQ
};

/* A slot is folded into the count once it reaches +-FL_COUNTER_BATCH, and
 * a delta at least this large in magnitude bypasses the slots.  */
#define FL_COUNTER_BATCH 4096

/* Each slot has 1 << FL_COUNTER_SLOT_SHIFT bytes to itself: 128 is the
 * coherence granule of POWER and of Itanium's L2, and two 64-byte lines on
 * x86 and arm64 cores, whose spatial prefetchers fetch lines in adjacent
 * pairs: two CPUs' slots never share what the hardware moves as a unit.  */
#define FL_COUNTER_SLOT_SHIFT 7

/* The fields are the library's, documented for the inline fastpath only.
 *
 * struct fl_counter_core: the folded count and its guards, in the counter
 * (core) or after a per-CPU counter's slots (fl_counter_core()).
 *
 * count     the folded value.  FL_COUNTER_WIDE: value, one atomic int64_t.
 *           Otherwise half[FL_COUNTER_LO] and half[FL_COUNTER_HI], each
 *           updated with a 32-bit atomic add; a writer that carries out of
 *           the low half adds the carry to the high half itself.
 * busy      number of writers between the start and end of a change that
 *           a reader must not see half done: moving a slot into count (on
 *           every architecture) or adding to the two halves.
 * gen       number of such changes finished.  A reader that saw busy == 0
 *           and the same gen before and after reading saw no change half
 *           done (a seqcount that several writers may hold at once).
 * summing   fl_counter_sum() calls in progress: while it is nonzero,
 *           per-CPU folds are skipped unless the slot has reached 2^30,
 *           so that a sum is not starved by folds.
 *
 * fl_counter_t:
 *
 * core      SHARED, PERTHREAD_SIGSAFE: the count.  Per-CPU: unused, 0.
 * strategy  the enum fl_counter_strategy value the counter runs; 0 only
 *           in a zero-filled counter, which runs FL_COUNTER_SHARED.
 * nslots    per-CPU strategies: slots in the array (possible CPUs).
 * id        FL_COUNTER_PERTHREAD_SIGSAFE: this counter's index in every
 *           thread's table of slots.
 * slots     per-CPU strategies: address of the slot array, an int32_t at
 *           the start of each 1 << FL_COUNTER_SLOT_SHIFT bytes, and after
 *           the last slot, in the next such stretch, the core.  */
struct fl_counter_core {
  union {
    int64_t value;
    int32_t half[2];
  } count __attribute__((aligned(8)));
  int32_t busy;
  int32_t gen;
  int32_t summing;
};

typedef struct {
  struct fl_counter_core core;
  uint32_t strategy;
  uint32_t nslots;
  uint32_t id;
  uint64_t slots;
} fl_counter_t;

#define FL_COUNTER_INITIALIZER                                                 \
 {                                                                             \
  { { 0 }, 0, 0, 0 }, 0, 0, 0, 0                                               \
 }

/* Make c a counter of the given strategy holding 0.  Returns 0, EINVAL
 * for an unknown strategy, ENOMEM, or EAGAIN when 2^16 PERTHREAD_SIGSAFE
 * counters already exist (more with pages over 4 KiB).  */
FL_EXPORT int fl_counter_init(fl_counter_t *c, int strategy);

/* Free what fl_counter_init() allocated and leave c all zero.  Returns 0,
 * or EINVAL if c holds no strategy this library knows.  No add may run
 * concurrently.  */
FL_EXPORT int fl_counter_destroy(fl_counter_t *c);

/* The folded count, without the slots: see the error bound above.  */
FL_EXPORT int64_t fl_counter_read(const fl_counter_t *c);

/* The exact value: count plus every slot.  */
FL_EXPORT int64_t fl_counter_sum(fl_counter_t *c);

/* Subtract what fl_counter_sum() sees, leaving 0 plus whatever concurrent
 * adds it did not see.  Returns 0, or EINVAL as fl_counter_destroy().  */
FL_EXPORT int fl_counter_reset(fl_counter_t *c);

/* The strategy c actually runs (never FL_COUNTER_AUTO).  */
FL_EXPORT int fl_counter_strategy(const fl_counter_t *c);

/* "auto", "shared", "percpu-atomic", "perthread-sigsafe", "percpu-rseq",
 * or "unknown".  */
FL_EXPORT const char *fl_counter_strategy_name(int strategy);

/* *c += delta.  Never fails; async-signal-safe (see above).  No order
 * with other memory is implied: a counter counts, it does not publish.
 * Inline (<fastlock/bits/counter.h>).  */
static inline void fl_counter_add(fl_counter_t *c, int64_t delta);

#ifdef __cplusplus
}
#endif

/* The inline fastpath behind fl_counter_add().  */
#include <fastlock/bits/counter.h>

#endif /* FASTLOCK_COUNTER_H */
