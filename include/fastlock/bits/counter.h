/* <fastlock/bits/counter.h>: the machinery behind <fastlock/counter.h>:
 * what the build and the C library offer (rseq, 64-bit atomics), the
 * restartable critical sections, the inline fl_counter_add() and the
 * library's slowpaths it calls.  Not API: include <fastlock/counter.h>.  */
#ifndef FASTLOCK_BITS_COUNTER_H
#define FASTLOCK_BITS_COUNTER_H

#include <fastlock/common.h>
#include <fastlock/config.h>
#include <fastlock/arch/atomic.h>

#include <stdint.h>

#if defined(__GLIBC__) && defined(__has_include)
# if __GLIBC_PREREQ(2, 35) && __has_include(<sys/rseq.h>)
#  include <sys/rseq.h>
#  define FL_COUNTER_RSEQ_AREA 1
# endif
#endif
#ifndef FL_COUNTER_RSEQ_AREA
# define FL_COUNTER_RSEQ_AREA 0
#endif

/* Architectures whose arch header has a restartable critical section.  */
#if FL_COUNTER_RSEQ_AREA && defined(FL_ARCH_RSEQ_CS)
# define FL_COUNTER_RSEQ_ASM 1
#else
# define FL_COUNTER_RSEQ_ASM 0
#endif

/* 1: the count is one lock-free atomic int64_t; 0: two 32-bit halves.  */
#if defined(__GCC_ATOMIC_LLONG_LOCK_FREE) && __GCC_ATOMIC_LLONG_LOCK_FREE == 2
# define FL_COUNTER_WIDE 1
#else
# define FL_COUNTER_WIDE 0
#endif

#ifdef __cplusplus
extern "C" {
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
# define FL_COUNTER_LO 0
# define FL_COUNTER_HI 1
#else
# define FL_COUNTER_LO 1
# define FL_COUNTER_HI 0
#endif

/* The slowpaths of fl_counter_add(), exported for the inline code only.
 * add_slowpath: a delta the inline code does not handle (PERTHREAD_SIGSAFE,
 * and on 32-bit PowerPC and MIPS also SHARED and large deltas).
 * fold_slowpath: a per-CPU slot reached +-FL_COUNTER_BATCH; cpu is the slot
 * an atomic add used, seen the value it left there.  cpu_slowpath: the
 * current CPU when the rseq area cannot say.  */
FL_EXPORT void fl_counter_add_slowpath(fl_counter_t *c, int64_t delta);
FL_EXPORT void fl_counter_fold_slowpath(fl_counter_t *c, uint32_t cpu,
                                        int32_t seen);
FL_EXPORT uint32_t fl_counter_cpu_slowpath(const fl_counter_t *c);

/* Nonzero iff -FL_COUNTER_BATCH < x < FL_COUNTER_BATCH: for a delta, and
 * in 32 bits for a slot.  */
static inline int fl_counter_in_batch(int64_t x)
{
  return (uint64_t)x + (FL_COUNTER_BATCH - 1) < 2 * FL_COUNTER_BATCH - 1;
}

static inline int fl_counter_slot_in_batch(int32_t v)
{
  return (uint32_t)v + (FL_COUNTER_BATCH - 1) < 2 * FL_COUNTER_BATCH - 1;
}

static inline int32_t *fl_counter_slot(const fl_counter_t *c, uint32_t cpu)
{
  return (int32_t *)(uintptr_t)(c->slots
                                + ((uint64_t)cpu << FL_COUNTER_SLOT_SHIFT));
}

/* Where c's count and its guards are: writable even from a const c,
 * since every thread's adds and folds change them.  */
static inline struct fl_counter_core *fl_counter_core(const fl_counter_t *c)
{
  if (c->strategy == FL_COUNTER_PERCPU_ATOMIC
      || c->strategy == FL_COUNTER_PERCPU_RSEQ)
    return (struct fl_counter_core *)(uintptr_t)(c->slots
                                                 + ((uint64_t)c->nslots
                                                    << FL_COUNTER_SLOT_SHIFT));
  return (struct fl_counter_core *)(uintptr_t)&c->core;
}

#if FL_COUNTER_RSEQ_AREA
/* glibc's rseq area sits __rseq_offset bytes from the thread pointer.  */
static inline struct rseq *fl_counter_rseq_area(void)
{
  char *tp = (char *)fl_arch_thread_pointer();
  return (struct rseq *)(void *)(tp + __rseq_offset);
}
#endif

/* The slot of the CPU this thread runs on.  The kernel keeps cpu_id
 * current while rseq is registered, and sets it negative (huge as
 * uint32_t) where registration failed or was turned off.  */
static inline uint32_t fl_counter_cpu(const fl_counter_t *c)
{
#if FL_COUNTER_RSEQ_AREA
  uint32_t cpu =
      __atomic_load_n(&fl_counter_rseq_area()->cpu_id, __ATOMIC_RELAXED);
  if (cpu < c->nslots)
    return cpu;
#endif
  return fl_counter_cpu_slowpath(c);
}

#if FL_COUNTER_RSEQ_ASM
/* The restartable critical sections, from the arch header's
 * FL_ARCH_RSEQ_* macros.
 *
 * Each asm is one critical section described by a struct rseq_cs (version
 * 0, flags 0: restart on preemption, signal delivery and migration) that
 * it emits into section __rseq_cs, 32-byte aligned as the ABI requires:
 * start_ip is label 1, post_commit_ip label 2, abort_ip label 4.  Steps:
 *
 *   6: store the descriptor's address into rseq->rseq_cs.  It must be the
 *      last instruction before label 1: the kernel clears rseq_cs whenever
 *      it finds the thread outside the section, so a preemption between
 *      this store and the section would otherwise leave it unprotected;
 *      one at label 1 is inside and restarts it.
 *   1: read rseq->cpu_id (inside the section, so it cannot go stale) and
 *      form the offset of that CPU's slot.
 *      BODY: load the slot, compute, and store it back.  That store is the
 *      commit: the last instruction before label 2.  Interrupted anywhere
 *      before it, the kernel sends the thread to label 4 and nothing was
 *      written; after it, the section is done.
 *   2: clear rseq->rseq_cs.  Not needed for correctness (the kernel clears
 *      it lazily), but the descriptor lives in the caller's object: left
 *      set, it would be read by the kernel after a dlclose() unmapped it.
 *   4: the abort handler, in section __rseq_failure, preceded by the
 *      32-bit signature glibc registered (RSEQ_SIG), which the kernel
 *      checks before jumping there.  It restarts at 6, since the kernel
 *      cleared rseq_cs on the way.
 *
 * No barrier anywhere: the slot is this CPU's, other CPUs only read it
 * (fl_counter_sum), and an aligned 32-bit store is single-copy atomic on
 * every architecture here, so they see it before or after.  The "memory"
 * clobber is for the compiler, which cannot see which slot is written.
 * Operands: v, the slot's new value (add) or old value (take); off,
 * scratch; rs, the rseq area; base, the slot array; d, the delta (take:
 * zero, stored as the new value).  */
/* In the current CPU's slot: *slot += delta; returns the new value.  */
static inline int32_t fl_counter_rseq_add(struct rseq *rs, uint64_t slots,
                                          int32_t delta)
{
  char *base = (char *)(uintptr_t)slots;
  int32_t v;
  uintptr_t off;

  __asm__ __volatile__(
      FL_ARCH_RSEQ_CS(FL_ARCH_RSEQ_ADD_BODY, FL_COUNTER_SLOT_SHIFT)
          FL_ARCH_RSEQ_CONSTRAINTS(v, off, rs, base, delta));
  return v;
}

/* In the current CPU's slot: returns *slot and sets it to 0.  */
static inline int32_t fl_counter_rseq_take(struct rseq *rs, uint64_t slots)
{
  char *base = (char *)(uintptr_t)slots;
  int32_t v, zero = 0;
  uintptr_t off;

  __asm__ __volatile__(
      FL_ARCH_RSEQ_CS(FL_ARCH_RSEQ_TAKE_BODY, FL_COUNTER_SLOT_SHIFT)
          FL_ARCH_RSEQ_CONSTRAINTS(v, off, rs, base, zero));
  return v;
}
#endif /* FL_COUNTER_RSEQ_ASM */

#if FL_COUNTER_WIDE
/* count += x, relaxed: the atomic add of SHARED, of large deltas and of
 * folds.  On ia64 it is the arch header's asm, fetchadd8.acq for a
 * constant addend fetchadd encodes (-16, -8, -4, -1, 1, 4, 8, 16) and a
 * cmpxchg8 loop for any other, as the slots' adds are fetchadd4 or
 * cmpxchg4 (tools/check-ia64 checks both); elsewhere the compiler's.  */
static inline void fl_counter_count_add_wide(struct fl_counter_core *k,
                                             int64_t x)
{
  (void)fl_atomic_fetch_add64_relaxed(&k->count.value, x);
}
#endif

/* *c += delta.  Per-CPU strategies with a delta inside the batch: one
 * restartable load-add-store, or one atomic add, into the current CPU's
 * slot, and a fold when the slot reaches the batch.  Where the count is
 * one atomic word, SHARED and large deltas of every strategy: one atomic
 * add to it.  The rest (PERTHREAD_SIGSAFE, and the count's two halves)
 * goes out of line.  No order with other memory is implied: a counter
 * counts, it does not publish.  */
static inline void fl_counter_add(fl_counter_t *c, int64_t delta)
{
  uint32_t strategy = c->strategy;

  if (fl_counter_in_batch(delta)) {
#if FL_COUNTER_RSEQ_ASM
    if (strategy == FL_COUNTER_PERCPU_RSEQ) {
      int32_t v =
          fl_counter_rseq_add(fl_counter_rseq_area(), c->slots, (int32_t)delta);
      if (!fl_counter_slot_in_batch(v))
        fl_counter_fold_slowpath(c, 0, v);
      return;
    }
#endif
    if (strategy == FL_COUNTER_PERCPU_ATOMIC) {
      uint32_t cpu = fl_counter_cpu(c);
      int32_t old =
          fl_atomic_fetch_add_relaxed(fl_counter_slot(c, cpu), (int32_t)delta);
      int32_t v = (int32_t)((uint32_t)old + (uint32_t)delta);
      if (!fl_counter_slot_in_batch(v))
        fl_counter_fold_slowpath(c, cpu, v);
      return;
    }
  }
#if FL_COUNTER_WIDE
  if (strategy != FL_COUNTER_PERTHREAD_SIGSAFE || !fl_counter_in_batch(delta)) {
    fl_counter_count_add_wide(fl_counter_core(c), delta);
    return;
  }
#endif
  fl_counter_add_slowpath(c, delta);
}

#ifdef __cplusplus
}
#endif

#endif /* FASTLOCK_BITS_COUNTER_H */
