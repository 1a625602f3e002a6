/* <fastlock/arch/aarch64.h>: AArch64.
 *
 * The CPU part (always): YIELD, the virtual counter, the restartable
 * critical section.  The atomics (FL_ATOMICS_ASM):
 *
 * AArch64 is weakly ordered (loads and stores to different addresses may
 * be performed in any order), but the orders C11 names are built into the
 * instructions rather than added with barriers:
 *
 *   load-acquire  (LDAR, LDAXR, and the A forms of the LSE atomics): no
 *                 later load or store is performed before it;
 *   store-release (STLR, STLXR, and the L forms): every earlier load and
 *                 store is performed before it.  A store-release followed
 *                 by a load-acquire is also kept in order, which C11's
 *                 acquire and release do not need but do not mind.
 *
 * So no operation here carries a DMB; the barriers are the instruction
 * suffixes, and DMB serves only the standalone fences.  Every DMB is ISH,
 * the inner shareable domain, which holds every CPU that runs threads of
 * one process.
 *
 * FL_AARCH64_LSE chooses how a read-modify-write is made:
 *
 *   0 (LL/SC, ARMv8.0): a loop of a load-exclusive, which arms the
 *     exclusive monitor on the address, and a store-exclusive, which stores
 *     only if no other agent has written the location since and reports
 *     failure in a status register; the loop retries on failure.  The
 *     acquire goes on the load (LDAXR), the release on the store (STLXR).
 *   1 (LSE, ARMv8.1): single instructions LDADD, CAS and SWP, with A, L or
 *     AL suffixes.  No loop, and under contention the CPU may perform the
 *     operation at the cache or interconnect instead of moving the line.
 *     The asm carries ".arch_extension lse" (as Linux's arm64 LSE atomics
 *     do), so this header assembles whatever -march the program including
 *     it was compiled with; configure's -march=armv8.1-a for the library
 *     itself is then only for the compiler's own code.  ".arch armv8.1-a"
 *     would not do: it resets the architecture for the rest of the
 *     assembly file, taking away anything newer the compiler's -march had
 *     enabled.  An LSE build runs only on ARMv8.1 CPUs (SIGILL on an
 *     ARMv8.0 core such as the Cortex-A53, A57 or A72).
 *
 * add_negative has no flag-setting atomic to use on either path:
 * fallback.h derives it from the fetch-add.  */
#ifndef FASTLOCK_ARCH_AARCH64_H
#define FASTLOCK_ARCH_AARCH64_H

#if !defined(__aarch64__)
# error "<fastlock/arch/aarch64.h> is for AArch64 only"
#endif

#include <stdint.h>

/* ---- The CPU ---- */

/* YIELD: the spin-wait hint; the clobber makes the loop re-read memory.  */
static inline void fl_cpu_relax(void)
{
  __asm__ __volatile__("yield" : : : "memory");
}
#define fl_cpu_relax fl_cpu_relax

/* The virtual counter, at a fixed frequency lower than the core clock.
 * isb: the counter read does not run ahead of earlier instructions.  */
static inline uint64_t fl_cycles(void)
{
  uint64_t v;
  __asm__ __volatile__("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
  return v;
}
#define fl_cycles fl_cycles
#define FL_CYCLES_NAME "cntvct_el0"

/* The restartable critical section (the protocol: doc/porting.md).
 * adrp/add: position-independent.  The signature is emitted as the
 * instruction it encodes (BRK #0x45e0), which is the registered data word
 * on little-endian and its byte swap, as glibc registers it, on
 * big-endian.  */
/* clang-format off */
#define FL_ARCH_RSEQ_CS(body, shift)                                        \
  ".pushsection __rseq_cs, \"aw\"\n\t"                                      \
  ".balign 32\n"                                                            \
  "3:\t.long 0, 0\n\t"                                                      \
  ".quad 1f, 2f - 1f, 4f\n\t"                                               \
  ".popsection\n"                                                           \
  "6:\tadrp %[off], 3b\n\t"                                                 \
  "add %[off], %[off], :lo12:3b\n\t"                                        \
  "str %[off], [%[rs], #8]\n"                                               \
  "1:\tldr %w[off], [%[rs], #4]\n\t"                                        \
  "add %[off], %[base], %[off], lsl #" FL_ARCH_STR(shift) "\n\t"            \
  body                                                                      \
  "2:\tstr xzr, [%[rs], #8]\n\t"                                            \
  ".pushsection __rseq_failure, \"ax\"\n\t"                                 \
  ".inst " FL_ARCH_STR(RSEQ_SIG_CODE) "\n"                                  \
  "4:\tb 6b\n\t"                                                            \
  ".popsection"
#define FL_ARCH_RSEQ_ADD_BODY                                               \
  "ldr %w[v], [%[off]]\n\t"                                                 \
  "add %w[v], %w[v], %w[d]\n\t"                                             \
  "str %w[v], [%[off]]\n"
#define FL_ARCH_RSEQ_TAKE_BODY                                              \
  "ldr %w[v], [%[off]]\n\t"                                                 \
  "str %w[d], [%[off]]\n"
#define FL_ARCH_RSEQ_CONSTRAINTS(v_, off_, rs_, base_, d_)                  \
  : [v] "=&r"(v_), [off] "=&r"(off_)                                        \
  : [rs] "r"(rs_), [base] "r"(base_), [d] "rZ"(d_)                          \
  : "memory"
/* clang-format on */

/* ---- The atomics ---- */
#if FL_ATOMICS_ASM

static inline int32_t fl_load_relaxed(const int32_t *p)
{
  int32_t v;
  __asm__ __volatile__("ldr %w0, %1" : "=r"(v) : "m"(*p));
  return v;
}

/* LDAR is the acquire; the clobber keeps the compiler from hoisting later
 * accesses above it.  LDAR takes only a bare base register: "Q".  */
static inline int32_t fl_load_acquire(const int32_t *p)
{
  int32_t v;
  __asm__ __volatile__("ldar %w0, %1" : "=r"(v) : "Q"(*p) : "memory");
  return v;
}

/* "rZ": a constant 0 is stored from WZR, the usual unlock.  */
static inline void fl_store_relaxed(int32_t *p, int32_t v)
{
  __asm__ __volatile__("str %w1, %0" : "=m"(*p) : "rZ"(v));
}

/* STLR is the release; the clobber keeps the compiler from sinking earlier
 * accesses below it.  */
static inline void fl_store_release(int32_t *p, int32_t v)
{
  __asm__ __volatile__("stlr %w1, %0" : "=Q"(*p) : "rZ"(v) : "memory");
}

# if FL_AARCH64_LSE

#  define FL_ARCH_ATOMICS_NAME "aarch64 asm, LSE ldadd/cas/swp"

/* Lets the assembler accept the ARMv8.1 instructions whatever -march the
 * includer uses (see the top comment).  */
#  define FL_AARCH64_LSE_INSN(insn) ".arch_extension lse\n\t" insn

/* LDADD, LDSET, LDCLR Ws, Wt, [Xn]: Wt = *Xn; then *Xn += Ws, *Xn |= Ws,
 * *Xn &= ~Ws.  So fetch_and hands LDCLR the complement of its mask.  */
/* clang-format off */
# define FL_AARCH64_FETCH_OP(op, order, insn, operand)                       \
  static inline int32_t fl_atomic_##op##_##order(int32_t *p, int32_t v)     \
  {                                                                         \
    int32_t old;                                                            \
    __asm__ __volatile__(FL_AARCH64_LSE_INSN(insn " %w2, %w0, %1")          \
                         : "=&r"(old), "+Q"(*p)                             \
                         : "r"(operand)                                     \
                         : "memory");                                       \
    return old;                                                             \
  }
/* clang-format on */

/* CAS Ws, Wt, [Xn]: if *Xn == Ws then *Xn = Wt; Ws = the old *Xn either
 * way.  The A forms load with acquire even when the compare fails, more
 * than a failed cmpxchg needs; the L forms release only the store, which a
 * failed compare does not make.  */
/* clang-format off */
# define FL_AARCH64_CMPXCHG(order, insn)                                     \
  static inline int32_t fl_atomic_cmpxchg_##order(int32_t *p, int32_t old,  \
                                                  int32_t new_value)        \
  {                                                                         \
    __asm__ __volatile__(FL_AARCH64_LSE_INSN(insn " %w0, %w2, %1")          \
                         : "+r"(old), "+Q"(*p)                              \
                         : "r"(new_value)                                   \
                         : "memory");                                       \
    return old;                                                             \
  }
/* clang-format on */

/* SWP Ws, Wt, [Xn]: Wt = *Xn; *Xn = Ws.  */
/* clang-format off */
# define FL_AARCH64_XCHG(order, insn)                                        \
  static inline int32_t fl_atomic_xchg_##order(int32_t *p, int32_t v)      \
  {                                                                         \
    int32_t old;                                                            \
    __asm__ __volatile__(FL_AARCH64_LSE_INSN(insn " %w2, %w0, %1")          \
                         : "=&r"(old), "+Q"(*p)                             \
                         : "r"(v)                                           \
                         : "memory");                                       \
    return old;                                                             \
  }
/* clang-format on */

/* The suffix is the barrier: none for relaxed; A makes the load half an
 * acquire, L the store half a release, AL both.  */
FL_AARCH64_FETCH_OP(fetch_add, relaxed, "ldadd", v)
FL_AARCH64_FETCH_OP(fetch_add, acquire, "ldadda", v)
FL_AARCH64_FETCH_OP(fetch_add, release, "ldaddl", v)
FL_AARCH64_FETCH_OP(fetch_add, acq_rel, "ldaddal", v)
FL_AARCH64_FETCH_OP(fetch_or, relaxed, "ldset", v)
FL_AARCH64_FETCH_OP(fetch_or, acquire, "ldseta", v)
FL_AARCH64_FETCH_OP(fetch_or, release, "ldsetl", v)
FL_AARCH64_FETCH_OP(fetch_or, acq_rel, "ldsetal", v)
FL_AARCH64_FETCH_OP(fetch_and, relaxed, "ldclr", ~v)
FL_AARCH64_FETCH_OP(fetch_and, acquire, "ldclra", ~v)
FL_AARCH64_FETCH_OP(fetch_and, release, "ldclrl", ~v)
FL_AARCH64_FETCH_OP(fetch_and, acq_rel, "ldclral", ~v)
FL_AARCH64_CMPXCHG(relaxed, "cas")
FL_AARCH64_CMPXCHG(acquire, "casa")
FL_AARCH64_CMPXCHG(release, "casl")
FL_AARCH64_CMPXCHG(acq_rel, "casal")
FL_AARCH64_XCHG(relaxed, "swp")
FL_AARCH64_XCHG(acquire, "swpa")
FL_AARCH64_XCHG(release, "swpl")
FL_AARCH64_XCHG(acq_rel, "swpal")

#  undef FL_AARCH64_LSE_INSN

# else /* !FL_AARCH64_LSE */

#  define FL_ARCH_ATOMICS_NAME "aarch64 asm, LL/SC ldaxr/stlxr"

/* In every loop the store-exclusive's status register (0: stored) is an
 * early-clobber output, so that it is never the data or the address
 * register: the architecture leaves that case unpredictable.  */

/* old = *p; *p = old OP v (insn: add, orr, and).  */
/* clang-format off */
# define FL_AARCH64_FETCH_OP(op, insn, order, ld, st)                        \
  static inline int32_t fl_atomic_##op##_##order(int32_t *p, int32_t v)     \
  {                                                                         \
    int32_t old, sum;                                                       \
    uint32_t failed;                                                        \
    __asm__ __volatile__("1:\t" ld " %w0, %3\n\t"                           \
                         insn " %w1, %w0, %w4\n\t"                          \
                         st " %w2, %w1, %3\n\t"                             \
                         "cbnz %w2, 1b"                                     \
                         : "=&r"(old), "=&r"(sum), "=&r"(failed), "+Q"(*p)  \
                         : "r"(v)                                           \
                         : "memory");                                       \
    return old;                                                             \
  }
/* clang-format on */

/* On a mismatch the loop leaves by 2 without a store-exclusive, leaving
 * the monitor armed, and does not CLREX it.  That is harmless: every
 * store-exclusive here follows its own load-exclusive of the same address,
 * which re-arms the monitor, and an exception return (so every context
 * switch) clears it on ARMv8, so no other thread inherits it.  CLREX would
 * cost an instruction on the path a contended cmpxchg loop spins on.  The
 * LDAXR of the acquire forms applies its acquire on a mismatch too, more
 * than a failed cmpxchg needs.  */
/* clang-format off */
# define FL_AARCH64_CMPXCHG(order, ld, st)                                   \
  static inline int32_t fl_atomic_cmpxchg_##order(int32_t *p, int32_t old,  \
                                                  int32_t new_value)        \
  {                                                                         \
    int32_t prev;                                                           \
    uint32_t failed;                                                        \
    __asm__ __volatile__("1:\t" ld " %w0, %2\n\t"                           \
                         "cmp %w0, %w3\n\t"                                 \
                         "b.ne 2f\n\t"                                      \
                         st " %w1, %w4, %2\n\t"                             \
                         "cbnz %w1, 1b\n"                                   \
                         "2:"                                               \
                         : "=&r"(prev), "=&r"(failed), "+Q"(*p)             \
                         : "r"(old), "r"(new_value)                         \
                         : "cc", "memory");                                 \
    return prev;                                                            \
  }
/* clang-format on */

/* clang-format off */
# define FL_AARCH64_XCHG(order, ld, st)                                      \
  static inline int32_t fl_atomic_xchg_##order(int32_t *p, int32_t v)      \
  {                                                                         \
    int32_t old;                                                            \
    uint32_t failed;                                                        \
    __asm__ __volatile__("1:\t" ld " %w0, %2\n\t"                           \
                         st " %w1, %w3, %2\n\t"                             \
                         "cbnz %w1, 1b"                                     \
                         : "=&r"(old), "=&r"(failed), "+Q"(*p)              \
                         : "r"(v)                                           \
                         : "memory");                                       \
    return old;                                                             \
  }
/* clang-format on */

/* The barriers are the exclusives' forms: LDAXR for an acquire (no later
 * access before the load), STLXR for a release (no earlier access after
 * the store), the plain LDXR/STXR where the order asks for neither.  */
FL_AARCH64_FETCH_OP(fetch_add, "add", relaxed, "ldxr", "stxr")
FL_AARCH64_FETCH_OP(fetch_add, "add", acquire, "ldaxr", "stxr")
FL_AARCH64_FETCH_OP(fetch_add, "add", release, "ldxr", "stlxr")
FL_AARCH64_FETCH_OP(fetch_add, "add", acq_rel, "ldaxr", "stlxr")
FL_AARCH64_FETCH_OP(fetch_or, "orr", relaxed, "ldxr", "stxr")
FL_AARCH64_FETCH_OP(fetch_or, "orr", acquire, "ldaxr", "stxr")
FL_AARCH64_FETCH_OP(fetch_or, "orr", release, "ldxr", "stlxr")
FL_AARCH64_FETCH_OP(fetch_or, "orr", acq_rel, "ldaxr", "stlxr")
FL_AARCH64_FETCH_OP(fetch_and, "and", relaxed, "ldxr", "stxr")
FL_AARCH64_FETCH_OP(fetch_and, "and", acquire, "ldaxr", "stxr")
FL_AARCH64_FETCH_OP(fetch_and, "and", release, "ldxr", "stlxr")
FL_AARCH64_FETCH_OP(fetch_and, "and", acq_rel, "ldaxr", "stlxr")
FL_AARCH64_CMPXCHG(relaxed, "ldxr", "stxr")
FL_AARCH64_CMPXCHG(acquire, "ldaxr", "stxr")
FL_AARCH64_CMPXCHG(release, "ldxr", "stlxr")
FL_AARCH64_CMPXCHG(acq_rel, "ldaxr", "stlxr")
FL_AARCH64_XCHG(relaxed, "ldxr", "stxr")
FL_AARCH64_XCHG(acquire, "ldaxr", "stxr")
FL_AARCH64_XCHG(release, "ldxr", "stlxr")
FL_AARCH64_XCHG(acq_rel, "ldaxr", "stlxr")

# endif /* FL_AARCH64_LSE */

# undef FL_AARCH64_FETCH_OP
# undef FL_AARCH64_CMPXCHG
# undef FL_AARCH64_XCHG

/* The full barrier: every earlier load and store before every later one,
 * store->load included.  */
static inline void fl_smp_mb(void)
{
  __asm__ __volatile__("dmb ish" : : : "memory");
}

/* DMB ISHLD: earlier loads before later loads (and stores).  */
static inline void fl_smp_rmb(void)
{
  __asm__ __volatile__("dmb ishld" : : : "memory");
}

/* DMB ISHST: earlier stores before later stores.  */
static inline void fl_smp_wmb(void)
{
  __asm__ __volatile__("dmb ishst" : : : "memory");
}

/* What this header provides.  */
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

#endif /* FASTLOCK_ARCH_AARCH64_H */
