/* <fastlock/arch/ppc.h>: 32-bit PowerPC and ppc64(le).
 *
 * The CPU part (always): the SMT priority hint, the timebase, the thread
 * pointer (r2 or r13), and on ppc64 the restartable critical section.
 * The atomics (FL_ATOMICS_ASM):
 *
 * PowerPC is weakly ordered: any two accesses to different addresses may
 * be performed out of order, and the barriers say which pairs may not:
 *
 *   sync    orders everything before it against everything after it,
 *           store->load included.  The only full barrier.
 *   lwsync  ("sync 1") orders load->load, load->store and store->store,
 *           not store->load.  That is exactly release, and also acquire
 *           when placed after the load that acquires.
 *   isync   orders nothing by itself.  It keeps every later instruction
 *           from starting until all earlier ones have completed, so after
 *           a conditional branch that depends on a load, no later load or
 *           store is performed before that load has returned its value:
 *           an acquire, for the loads the branch depends on.
 *   eieio   orders stores to ordinary cacheable memory against later such
 *           stores.  It was made for I/O, and does not order loads from
 *           ordinary memory.
 *
 * An atomic read-modify-write is a lwarx/stwcx. loop: lwarx loads the word
 * and sets a reservation, stwcx. stores only if no other CPU has stored to
 * the reservation granule since, and sets CR0.EQ if it did store; the loop
 * branches back while it did not.  Every op is on a 32-bit word, so ppc64
 * uses the same lwarx/stwcx. and one header serves both.  A bare loop is a
 * relaxed RMW; the orders add barriers around it:
 *
 *   release  FL_PPC_LWSYNC before the loop: earlier loads and stores are
 *            performed before the stwcx. can be.
 *   acquire  FL_PPC_ACQUIRE after the loop's closing bne-.  Both choices
 *            are correct (Piggin, Mackerras et al., linuxppc-dev,
 *            November 2008, "powerpc: smp_wmb lwsync optimisation fix"):
 *            - isync: the bne- depends on the stwcx., which cannot succeed
 *              before the lwarx has read the word, so the isync holds every
 *              later access until the RMW is done.
 *            - lwsync: orders the lwarx before later loads and stores and
 *              the stwcx. before later stores; a later load may be
 *              performed before the stwcx. is visible, which acquire
 *              allows: what was acquired is the value lwarx read, and the
 *              reservation made the pair atomic.
 *            isync holds later instructions until the branch resolves;
 *            lwsync instead constrains the store queue.  Piggin measured
 *            lwsync faster on a G5 (same thread); on a core without lwsync the
 *            choice is isync or a full sync, and isync is far cheaper.
 *   acq_rel  both.
 * A failed cmpxchg branches out past the acquire barrier: the API makes a
 * failed cmpxchg relaxed.  (The release barrier comes before the compare
 * can know, so it runs either way.)
 *
 * Which barrier each knob gives:
 *
 *   FL_PPC_ACQUIRE_LWSYNC  1: lwsync after an acquire, 0: isync.
 *   FL_PPC_WMB_LWSYNC      1: fl_smp_wmb is lwsync, 0: eieio.  eieio is
 *                          enough for stores to cacheable memory, and is the
 *                          cheaper one where lwsync runs as a full sync.
 *   FL_PPC_LWSYNC          (derived, not a knob) the barrier for release
 *                          and fl_smp_rmb: lwsync where the build may assume
 *                          the CPU has it, sync where it may not.
 *
 * Which CPUs have lwsync.  Every 64-bit one: Linux uses it on every
 * 64-bit build, glibc from POWER4 and the 970 on (_ARCH_PWR4).  On the
 * older 32-bit cores the L bit that makes sync into lwsync is a reserved
 * field:
 *   - the classic (AIM) 6xx/7xx/74xx cores (603, 604, 750, 7400, 7450) run
 *     lwsync as a plain sync (jemalloc #1352: "nearly all 32-bit powerpc
 *     hardware treats lwsync as sync"; Concurrency Kit #125: lwsync is
 *     "indistinguishable on AIM cores");
 *   - the 405 documents a sync with reserved bits set as an invalid form
 *     (PPC405 core manual, "sync"), and the MPC8xx faults on it (GCC added
 *     the 8xx to TARGET_NO_LWSYNC after an illegal instruction in
 *     libstdc++'s atomics on an MPC860);
 *   - the Freescale e500v1/v2 (MPC85xx, P10xx/P20xx) takes an illegal
 *     instruction exception (Linux commit "powerpc: Fixup lwsync at
 *     runtime", which patches sync into lwsync only on e500mc and later;
 *     GCC: "E500 cores only support plain sync, not lwsync", and it
 *     defines __NO_LWSYNC__ for -mcpu=8540/8548).  Linux emulates the
 *     trapped instruction as a sync, so the program runs, at the price of a
 *     trap per barrier (jemalloc #1352 measured 20% on a P1022 by avoiding
 *     it; Concurrency Kit #121/#125 made ppc32 use sync by default).
 *   - e500mc, e5500, e6500 have it.
 * So lwsync on ppc32 buys nothing on most cores and costs a trap or a
 * SIGILL on some.  configure's ppc32 defaults, isync and eieio, are the
 * cheapest correct barriers on a core without lwsync, and a ppc32 build
 * with neither knob set to lwsync uses sync where lwsync would go: free on
 * the 6xx/7xx (it is what they run anyway), no trap on the e500 and 8xx.
 * A ppc32 build that names lwsync for either knob states that its CPUs have
 * it, and gets lwsync everywhere; if the compiler knows it targets an e500
 * (__NO_LWSYNC__), such a build is refused below.  ppc64 always uses
 * lwsync.
 *
 * eieio is safe on every subarch: on Book E cores (e500, 4xx) its encoding
 * is mbar 0, which Linux uses as smp_wmb there, and the 405 runs it as a
 * full sync.
 *
 * Every RMW asm clobbers "memory", the relaxed ones too: one macro body
 * per op, and a compiler barrier costs a relaxed RMW little.  The plain
 * relaxed load and store do not.  */
#ifndef FASTLOCK_ARCH_PPC_H
#define FASTLOCK_ARCH_PPC_H

#if !defined(__powerpc__) && !defined(__powerpc64__)
# error "<fastlock/arch/ppc.h> is for PowerPC only"
#endif

#include <stdint.h>

/* ---- The CPU ---- */

/* SMT priority low, then back to medium: the spin-wait hint (no-ops on
 * cores without SMT).  The clobber makes the loop re-read memory.  */
static inline void fl_cpu_relax(void)
{
  __asm__ __volatile__("or 1,1,1\n\tor 2,2,2" : : : "memory");
}
#define fl_cpu_relax fl_cpu_relax

/* The timebase: a fixed frequency, lower than the core clock.  */
static inline uint64_t fl_cycles(void)
{
#if defined(__powerpc64__)
  uint64_t v;
  __asm__ __volatile__("mfspr %0, 268" : "=r"(v));
  return v;
#else
  /* 32-bit: read upper, lower, upper again; retry if the lower half
   * wrapped between the two reads of the upper half.  */
  uint32_t hi, lo, hi2;
  do {
    __asm__ __volatile__("mfspr %0, 269\n\tmfspr %1, 268\n\tmfspr %2, 269"
                         : "=r"(hi), "=r"(lo), "=r"(hi2));
  } while (hi != hi2);
  return ((uint64_t)hi << 32) | lo;
#endif
}
#define fl_cycles fl_cycles
#define FL_CYCLES_NAME "timebase"

/* The thread pointer is a register the ABI names: r13 on ppc64, r2 on
 * ppc32.  */
static inline void *fl_arch_thread_pointer(void)
{
  char *tp;
#if defined(__powerpc64__)
  __asm__("mr %0, 13" : "=r"(tp));
#else
  __asm__("mr %0, 2" : "=r"(tp));
#endif
  return tp;
}
#define fl_arch_thread_pointer fl_arch_thread_pointer

/* The restartable critical section (the protocol: doc/porting.md), ppc64
 * only.  bcl 20,31 to the next instruction is the "get the address" form
 * that leaves the link-stack predictor alone; the distance to the
 * descriptor is a link-time constant.  A TOC-relative address would need
 * r2, which a function that uses no TOC of its own does not set up.
 * Registers used as a base must not be r0 (read as zero there): the "b"
 * constraint.  */
#if defined(__powerpc64__)
/* clang-format off */
# define FL_ARCH_RSEQ_CS(body, shift)                                       \
  ".pushsection __rseq_cs, \"aw\"\n\t"                                      \
  ".balign 32\n"                                                            \
  "3:\t.long 0, 0\n\t"                                                      \
  ".quad 1f, 2f - 1f, 4f\n\t"                                               \
  ".popsection\n"                                                           \
  "6:\tbcl 20, 31, 5f\n"                                                    \
  "5:\tmflr %[off]\n\t"                                                     \
  "addis %[off], %[off], (3b - 5b)@ha\n\t"                                  \
  "addi %[off], %[off], (3b - 5b)@l\n\t"                                    \
  "std %[off], 8(%[rs])\n"                                                  \
  "1:\tlwz %[off], 4(%[rs])\n\t"                                            \
  "sldi %[off], %[off], " FL_ARCH_STR(shift) "\n\t"                         \
  body                                                                      \
  "2:\tli %[off], 0\n\t"                                                    \
  "std %[off], 8(%[rs])\n\t"                                                \
  ".pushsection __rseq_failure, \"ax\"\n\t"                                 \
  ".long " FL_ARCH_STR(RSEQ_SIG) "\n"                                       \
  "4:\tb 6b\n\t"                                                            \
  ".popsection"
# define FL_ARCH_RSEQ_ADD_BODY                                              \
  "lwzx %[v], %[base], %[off]\n\t"                                          \
  "add %[v], %[v], %[d]\n\t"                                                \
  "stwx %[v], %[base], %[off]\n"
# define FL_ARCH_RSEQ_TAKE_BODY                                             \
  "lwzx %[v], %[base], %[off]\n\t"                                          \
  "stwx %[d], %[base], %[off]\n"
# define FL_ARCH_RSEQ_CONSTRAINTS(v_, off_, rs_, base_, d_)                 \
  : [v] "=&r"(v_), [off] "=&b"(off_)                                        \
  : [rs] "b"(rs_), [base] "b"(base_), [d] "r"(d_)                           \
  : "memory", "lr"
/* clang-format on */
#endif

/* ---- The atomics ---- */
#if FL_ATOMICS_ASM

# if defined(__NO_LWSYNC__) && (FL_PPC_ACQUIRE_LWSYNC || FL_PPC_WMB_LWSYNC)
#  error                                                                       \
      "the target CPU has no lwsync (e500v1/v2): configure --with-ppc-acquire=isync --with-ppc-wmb=eieio"
# endif

# if defined(__powerpc64__) || FL_PPC_ACQUIRE_LWSYNC || FL_PPC_WMB_LWSYNC
#  define FL_PPC_LWSYNC "lwsync"
# else
#  define FL_PPC_LWSYNC "sync"
# endif

# if FL_PPC_ACQUIRE_LWSYNC
#  define FL_PPC_ACQUIRE "lwsync"
# else
#  define FL_PPC_ACQUIRE "isync"
# endif

# if FL_PPC_WMB_LWSYNC
#  define FL_PPC_WMB "lwsync"
# else
#  define FL_PPC_WMB "eieio"
# endif

/* clang-format off */
#define FL_ARCH_ATOMICS_NAME                                                \
  "ppc asm, acquire " FL_PPC_ACQUIRE ", release " FL_PPC_LWSYNC             \
  ", wmb " FL_PPC_WMB
/* clang-format on */

/* The barrier strings spliced around each loop: before (release) and
 * after (acquire).  */
# define FL_PPC_NONE ""
# define FL_PPC_RELEASE FL_PPC_LWSYNC "\n"
# define FL_PPC_ACQUIRE_AFTER "\n\t" FL_PPC_ACQUIRE

/* %U/%X add the "u" or "x" the compiler's choice of address form needs
 * (update, indexed).  */
static inline int32_t fl_load_relaxed(const int32_t *p)
{
  int32_t v;
  __asm__ __volatile__("lwz%U1%X1 %0,%1" : "=r"(v) : "m"(*p));
  return v;
}

# if FL_PPC_ACQUIRE_LWSYNC
/* lwsync: the load is performed before every later load and store.  */
static inline int32_t fl_load_acquire(const int32_t *p)
{
  int32_t v;
  __asm__ __volatile__("lwz%U1%X1 %0,%1\n\t"
                       "lwsync"
                       : "=r"(v)
                       : "m"(*p)
                       : "memory");
  return v;
}
# else
/* isync orders only what a branch before it depends on, and a plain lwz
 * feeds no branch.  Comparing the value with itself and branching on the
 * result (never taken: both ways lead to the next instruction) makes one
 * that cannot resolve before the load has returned, and the isync then
 * holds every later access behind the load (the idiom of the 32-bit
 * Programming Environments Manual; GCC emits the same for an acquire
 * load).  */
static inline int32_t fl_load_acquire(const int32_t *p)
{
  int32_t v;
  __asm__ __volatile__("lwz%U1%X1 %0,%1\n\t"
                       "cmpw %0,%0\n\t"
                       "bne- 1f\n"
                       "1:\tisync"
                       : "=r"(v)
                       : "m"(*p)
                       : "cc", "memory");
  return v;
}
# endif

static inline void fl_store_relaxed(int32_t *p, int32_t v)
{
  __asm__ __volatile__("stw%U0%X0 %1,%0" : "=m"(*p) : "r"(v));
}

/* The release barrier performs every earlier load and store before the
 * store.  */
static inline void fl_store_release(int32_t *p, int32_t v)
{
  __asm__ __volatile__(FL_PPC_RELEASE "\tstw%U0%X0 %1,%0"
                       : "=m"(*p)
                       : "r"(v)
                       : "memory");
}

/* old = *p; *p = old OP v (insn: add, or, and); retried until the
 * stwcx. keeps the reservation.  */
/* clang-format off */
#define FL_PPC_FETCH_OP(op, insn, order, before, after)                      \
  static inline int32_t fl_atomic_##op##_##order(int32_t *p, int32_t v)     \
  {                                                                         \
    int32_t old, sum;                                                       \
    __asm__ __volatile__(before                                             \
                         "1:\tlwarx %0,0,%3\n\t"                            \
                         insn " %1,%0,%4\n\t"                               \
                         "stwcx. %1,0,%3\n\t"                               \
                         "bne- 1b"                                          \
                         after                                              \
                         : "=&r"(old), "=&r"(sum), "+m"(*p)                 \
                         : "r"(p), "r"(v)                                   \
                         : "cc", "memory");                                 \
    return old;                                                             \
  }
/* clang-format on */

/* A mismatch leaves by 2: without a stwcx., and past the acquire barrier.
 * The reservation it leaves behind is harmless: every stwcx. here follows
 * its own lwarx, and the kernel clears reservations on a context switch.  */
/* clang-format off */
#define FL_PPC_CMPXCHG(order, before, after)                                 \
  static inline int32_t fl_atomic_cmpxchg_##order(int32_t *p, int32_t old,  \
                                                  int32_t new_value)        \
  {                                                                         \
    int32_t prev;                                                           \
    __asm__ __volatile__(before                                             \
                         "1:\tlwarx %0,0,%2\n\t"                            \
                         "cmpw %0,%3\n\t"                                   \
                         "bne- 2f\n\t"                                      \
                         "stwcx. %4,0,%2\n\t"                               \
                         "bne- 1b"                                          \
                         after                                              \
                         "\n2:"                                             \
                         : "=&r"(prev), "+m"(*p)                            \
                         : "r"(p), "r"(old), "r"(new_value)                 \
                         : "cc", "memory");                                 \
    return prev;                                                            \
  }
/* clang-format on */

/* clang-format off */
#define FL_PPC_XCHG(order, before, after)                                    \
  static inline int32_t fl_atomic_xchg_##order(int32_t *p, int32_t v)      \
  {                                                                         \
    int32_t old;                                                            \
    __asm__ __volatile__(before                                             \
                         "1:\tlwarx %0,0,%2\n\t"                            \
                         "stwcx. %3,0,%2\n\t"                               \
                         "bne- 1b"                                          \
                         after                                              \
                         : "=&r"(old), "+m"(*p)                             \
                         : "r"(p), "r"(v)                                   \
                         : "cc", "memory");                                 \
    return old;                                                             \
  }
/* clang-format on */

/* relaxed: no barrier.  acquire: FL_PPC_ACQUIRE after the loop, so no later
 * load or store is performed before the RMW.  release: FL_PPC_LWSYNC before
 * the loop, so every earlier load and store is performed before the
 * stwcx.  acq_rel: both.  (Why each barrier suffices: the top comment.)  */
FL_PPC_FETCH_OP(fetch_add, "add", relaxed, FL_PPC_NONE, FL_PPC_NONE)
FL_PPC_FETCH_OP(fetch_add, "add", acquire, FL_PPC_NONE, FL_PPC_ACQUIRE_AFTER)
FL_PPC_FETCH_OP(fetch_add, "add", release, FL_PPC_RELEASE, FL_PPC_NONE)
FL_PPC_FETCH_OP(fetch_add, "add", acq_rel, FL_PPC_RELEASE, FL_PPC_ACQUIRE_AFTER)
FL_PPC_FETCH_OP(fetch_or, "or", relaxed, FL_PPC_NONE, FL_PPC_NONE)
FL_PPC_FETCH_OP(fetch_or, "or", acquire, FL_PPC_NONE, FL_PPC_ACQUIRE_AFTER)
FL_PPC_FETCH_OP(fetch_or, "or", release, FL_PPC_RELEASE, FL_PPC_NONE)
FL_PPC_FETCH_OP(fetch_or, "or", acq_rel, FL_PPC_RELEASE, FL_PPC_ACQUIRE_AFTER)
FL_PPC_FETCH_OP(fetch_and, "and", relaxed, FL_PPC_NONE, FL_PPC_NONE)
FL_PPC_FETCH_OP(fetch_and, "and", acquire, FL_PPC_NONE, FL_PPC_ACQUIRE_AFTER)
FL_PPC_FETCH_OP(fetch_and, "and", release, FL_PPC_RELEASE, FL_PPC_NONE)
FL_PPC_FETCH_OP(fetch_and, "and", acq_rel, FL_PPC_RELEASE, FL_PPC_ACQUIRE_AFTER)
FL_PPC_CMPXCHG(relaxed, FL_PPC_NONE, FL_PPC_NONE)
FL_PPC_CMPXCHG(acquire, FL_PPC_NONE, FL_PPC_ACQUIRE_AFTER)
FL_PPC_CMPXCHG(release, FL_PPC_RELEASE, FL_PPC_NONE)
FL_PPC_CMPXCHG(acq_rel, FL_PPC_RELEASE, FL_PPC_ACQUIRE_AFTER)
FL_PPC_XCHG(relaxed, FL_PPC_NONE, FL_PPC_NONE)
FL_PPC_XCHG(acquire, FL_PPC_NONE, FL_PPC_ACQUIRE_AFTER)
FL_PPC_XCHG(release, FL_PPC_RELEASE, FL_PPC_NONE)
FL_PPC_XCHG(acq_rel, FL_PPC_RELEASE, FL_PPC_ACQUIRE_AFTER)

# undef FL_PPC_FETCH_OP
# undef FL_PPC_CMPXCHG
# undef FL_PPC_XCHG
# undef FL_PPC_NONE
# undef FL_PPC_RELEASE
# undef FL_PPC_ACQUIRE_AFTER

/* lwsync leaves store->load unordered: only sync forbids it.  */
static inline void fl_smp_mb(void)
{
  __asm__ __volatile__("sync" : : : "memory");
}

/* lwsync orders load->load (sync where lwsync may be missing).  */
static inline void fl_smp_rmb(void)
{
  __asm__ __volatile__(FL_PPC_LWSYNC : : : "memory");
}

/* Store->store: eieio or lwsync, as configured (see the top comment).  */
static inline void fl_smp_wmb(void)
{
  __asm__ __volatile__(FL_PPC_WMB : : : "memory");
}

/* What this header provides (fallback.h derives add_negative from the
 * fetch-add: PowerPC has no flags from the loop to test).  */
# define fl_load_relaxed fl_load_relaxed
# define fl_load_acquire fl_load_acquire
# define fl_store_relaxed fl_store_relaxed
# define fl_store_release fl_store_release
# define fl_atomic_fetch_add_relaxed fl_atomic_fetch_add_relaxed
# define fl_atomic_fetch_add_acquire fl_atomic_fetch_add_acquire
# define fl_atomic_fetch_add_release fl_atomic_fetch_add_release
# define fl_atomic_fetch_add_acq_rel fl_atomic_fetch_add_acq_rel
# define fl_atomic_fetch_or_relaxed fl_atomic_fetch_or_relaxed
# define fl_atomic_fetch_or_acquire fl_atomic_fetch_or_acquire
# define fl_atomic_fetch_or_release fl_atomic_fetch_or_release
# define fl_atomic_fetch_or_acq_rel fl_atomic_fetch_or_acq_rel
# define fl_atomic_fetch_and_relaxed fl_atomic_fetch_and_relaxed
# define fl_atomic_fetch_and_acquire fl_atomic_fetch_and_acquire
# define fl_atomic_fetch_and_release fl_atomic_fetch_and_release
# define fl_atomic_fetch_and_acq_rel fl_atomic_fetch_and_acq_rel
# define fl_atomic_cmpxchg_relaxed fl_atomic_cmpxchg_relaxed
# define fl_atomic_cmpxchg_acquire fl_atomic_cmpxchg_acquire
# define fl_atomic_cmpxchg_release fl_atomic_cmpxchg_release
# define fl_atomic_cmpxchg_acq_rel fl_atomic_cmpxchg_acq_rel
# define fl_atomic_xchg_relaxed fl_atomic_xchg_relaxed
# define fl_atomic_xchg_acquire fl_atomic_xchg_acquire
# define fl_atomic_xchg_release fl_atomic_xchg_release
# define fl_atomic_xchg_acq_rel fl_atomic_xchg_acq_rel
# define fl_smp_mb fl_smp_mb
# define fl_smp_rmb fl_smp_rmb
# define fl_smp_wmb fl_smp_wmb

#endif /* FL_ATOMICS_ASM */

#endif /* FASTLOCK_ARCH_PPC_H */
