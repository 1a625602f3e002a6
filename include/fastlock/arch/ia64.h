/* <fastlock/arch/ia64.h>: ia64 (Itanium).
 *
 * The CPU part (always): hint @pause and the interval time counter.
 * The atomics (FL_ATOMICS_ASM):
 *
 * Itanium orders memory weakly: a plain ld or st is "unordered" and may
 * become visible in any order with respect to other accesses (loads pass
 * loads and stores, stores pass stores).  Order comes from completers on
 * the access itself and from one fence:
 *
 *   .acq  ld4.acq, cmpxchg4.acq, fetchadd4.acq, and xchg4 always: the
 *         access becomes visible before every later access (acquire);
 *   .rel  st4.rel, cmpxchg4.rel, fetchadd4.rel: every earlier access
 *         becomes visible before this one (release);
 *   mf    every earlier access becomes visible before any later one.
 *
 * A release followed by an acquire is not ordered (a later ld4.acq may be
 * seen before an earlier st4.rel), so fl_smp_mb needs mf.  mf is the only
 * ordering fence there is (mf.a waits for I/O acceptance and orders
 * nothing), so fl_smp_rmb and fl_smp_wmb are mf as well.
 *
 * The semaphore instructions have no unordered form: cmpxchg4 and
 * fetchadd4 must name .acq or .rel, and xchg4 takes no completer and is
 * always an acquire.  So the relaxed operations use the .acq form (as
 * cheap as any, and stronger than asked); a release xchg4 is mf first;
 * and every acq_rel operation is mf followed by the .acq form.  That is
 * the mapping GCC itself uses for __atomic fetch-add and exchange on ia64.
 *
 * fetchadd4 takes its addend as an immediate, and only -16, -8, -4, -1,
 * 1, 4, 8 or 16.  fl_atomic_fetch_add_* uses it when the addend is a
 * compile-time constant in that set and a cmpxchg4 loop otherwise.
 * cmpxchg4 compares the word in memory, zero-extended, with all 64 bits
 * of ar.ccv, so the expected value goes into ar.ccv zero-extended.  ld4,
 * xchg4, cmpxchg4 and fetchadd4 all return the word zero-extended into a
 * 64-bit register, which is why the asm outputs are uint64_t.
 *
 * Operands: "S" is ia64's memory constraint for asm, a memory operand
 * without post-increment addressing (GCC prints it as [rN], and these
 * templates could not carry the increment); GCC's own semaphore patterns
 * use it.  "rO" is a register or the constant zero, printed with %r so
 * that zero comes out as r0.  "n" is a known integer constant, as in
 * GCC's fetchadd patterns.  GCC does not put stop bits (;;) around an
 * extended asm but inserts them from the asm's operands, so a template
 * needs stops only between its own instructions.
 *
 * There is no ia64 compiler to build this header with.  Every asm below
 * takes its template from an FL_IA64_ASM_* macro, and tools/check-ia64
 * preprocesses this file, takes those templates out of the expanded
 * functions, substitutes registers for the operands, assembles them with
 * the ia64 binutils as GCC runs them (gas -x: dependency violations are
 * reported, not repaired) and checks the disassembly.  */
#ifndef FASTLOCK_ARCH_IA64_H
#define FASTLOCK_ARCH_IA64_H

#if !defined(__ia64__)
# error "<fastlock/arch/ia64.h> is for ia64 only"
#endif

#include <stdint.h>

/* The addends fetchadd4's 3-bit inc3 field can encode.  */
#define FL_IA64_FETCHADD_INCREMENT(v)                                          \
 ((v) == -16 || (v) == -8 || (v) == -4 || (v) == -1 || (v) == 1 || (v) == 4    \
  || (v) == 8 || (v) == 16)

#define FL_IA64_ASM_PAUSE "hint @pause"
#define FL_IA64_ASM_ITC "mov %[out] = ar.itc"
#define FL_IA64_ASM_LD4 "ld4 %[out] = %[mem]"
#define FL_IA64_ASM_LD4_ACQ "ld4.acq %[out] = %[mem]"
#define FL_IA64_ASM_ST4 "st4 %[mem] = %r[in]"
#define FL_IA64_ASM_ST4_REL "st4.rel %[mem] = %r[in]"
#define FL_IA64_ASM_FETCHADD_ACQ "fetchadd4.acq %[out] = %[mem], %[inc]"
#define FL_IA64_ASM_FETCHADD_REL "fetchadd4.rel %[out] = %[mem], %[inc]"
/* cmpxchg4 reads ar.ccv, and a register may not be written and read in
 * one instruction group: the stop after the mov is required.  */
/* clang-format off */
#define FL_IA64_ASM_CMPXCHG_ACQ                                             \
  "mov ar.ccv = %r[ccv];;\n\t"                                              \
  "cmpxchg4.acq %[out] = %[mem], %r[in], ar.ccv"
#define FL_IA64_ASM_CMPXCHG_REL                                             \
  "mov ar.ccv = %r[ccv];;\n\t"                                              \
  "cmpxchg4.rel %[out] = %[mem], %r[in], ar.ccv"
/* clang-format on */
#define FL_IA64_ASM_XCHG "xchg4 %[out] = %[mem], %r[in]"
#define FL_IA64_ASM_MF "mf"
/* The 64-bit forms, for the count of <fastlock/counter.h>.  */
#define FL_IA64_ASM_LD8 "ld8 %[out] = %[mem]"
#define FL_IA64_ASM_FETCHADD8_ACQ "fetchadd8.acq %[out] = %[mem], %[inc]"
/* clang-format off */
#define FL_IA64_ASM_CMPXCHG8_ACQ                                            \
  "mov ar.ccv = %r[ccv];;\n\t"                                              \
  "cmpxchg8.acq %[out] = %[mem], %r[in], ar.ccv"
/* clang-format on */

/* ---- The CPU ---- */

/* The spin-wait hint; the clobber makes the loop re-read memory.  */
static inline void fl_cpu_relax(void)
{
  __asm__ __volatile__(FL_IA64_ASM_PAUSE : : : "memory");
}
#define fl_cpu_relax fl_cpu_relax

/* ar.itc, the interval time counter: CPU cycles.  */
static inline uint64_t fl_cycles(void)
{
  uint64_t v;
  __asm__ __volatile__(FL_IA64_ASM_ITC : [out] "=r"(v) : : "memory");
  return v;
}
#define fl_cycles fl_cycles
#define FL_CYCLES_NAME "ar.itc"

/* ---- The atomics ---- */
#if FL_ATOMICS_ASM

static inline int32_t fl_load_relaxed(const int32_t *p)
{
  uint64_t v;
  __asm__ __volatile__(FL_IA64_ASM_LD4 : [out] "=r"(v) : [mem] "S"(*p));
  return (int32_t)v;
}

/* .acq: no later access becomes visible before this load; the clobber
 * stops the compiler hoisting later accesses above it.  */
static inline int32_t fl_load_acquire(const int32_t *p)
{
  uint64_t v;
  __asm__ __volatile__(FL_IA64_ASM_LD4_ACQ
                       : [out] "=r"(v)
                       : [mem] "S"(*p)
                       : "memory");
  return (int32_t)v;
}

static inline void fl_store_relaxed(int32_t *p, int32_t v)
{
  __asm__ __volatile__(FL_IA64_ASM_ST4 : [mem] "=S"(*p) : [in] "rO"(v));
}

/* .rel: every earlier access is visible before this store; the clobber
 * stops the compiler sinking earlier accesses below it.  */
static inline void fl_store_release(int32_t *p, int32_t v)
{
  __asm__ __volatile__(FL_IA64_ASM_ST4_REL
                       : [mem] "=S"(*p)
                       : [in] "rO"(v)
                       : "memory");
}

/* mf: every earlier load and store is visible before any later one,
 * store->load included, which no completer gives.  */
static inline void fl_smp_mb(void)
{
  __asm__ __volatile__(FL_IA64_ASM_MF : : : "memory");
}

/* Itanium has no load-load or store-store fence: mf is the only one.  */
# define fl_smp_rmb fl_smp_mb
# define fl_smp_wmb fl_smp_mb

/* cmpxchg4.acq / .rel: if the word at p equals ar.ccv, store new_value;
 * either way return what the word held.  The ordering is the completer's
 * (sem); the clobber keeps the compiler's accesses on the same side.  */
/* clang-format off */
#define FL_IA64_CMPXCHG(sem, SEM)                                           \
  static inline int32_t fl_ia64_cmpxchg_##sem(int32_t *p, int32_t old,      \
                                              int32_t new_value)            \
  {                                                                         \
    uint64_t seen;                                                          \
    __asm__ __volatile__(FL_IA64_ASM_CMPXCHG_##SEM                          \
                         : [out] "=r"(seen), [mem] "+S"(*p)                 \
                         : [ccv] "rO"((uint64_t)(uint32_t)old),             \
                           [in] "rO"(new_value)                             \
                         : "ar.ccv", "memory");                             \
    return (int32_t)seen;                                                   \
  }
/* clang-format on */

FL_IA64_CMPXCHG(acq, ACQ)
FL_IA64_CMPXCHG(rel, REL)

/* No unordered cmpxchg4: relaxed takes the .acq form.  */
# define fl_atomic_cmpxchg_relaxed fl_ia64_cmpxchg_acq
# define fl_atomic_cmpxchg_acquire fl_ia64_cmpxchg_acq
# define fl_atomic_cmpxchg_release fl_ia64_cmpxchg_rel

/* mf makes every earlier access visible before the cmpxchg4 (release);
 * .acq keeps every later one after it (acquire).  */
static inline int32_t fl_atomic_cmpxchg_acq_rel(int32_t *p, int32_t old,
                                                int32_t new_value)
{
  fl_smp_mb();
  return fl_ia64_cmpxchg_acq(p, old, new_value);
}

/* fetchadd4.acq / .rel when v is a constant it can encode, else a
 * cmpxchg4 loop of the same order (only the exchange that succeeds needs
 * the ordering, so the first load is plain).  */
/* clang-format off */
#define FL_IA64_FETCH_ADD(sem, SEM)                                         \
  static inline int32_t fl_ia64_fetch_add_##sem(int32_t *p, int32_t v)      \
  {                                                                         \
    int32_t old, seen;                                                      \
                                                                            \
    if (__builtin_constant_p(v) && FL_IA64_FETCHADD_INCREMENT(v))           \
      {                                                                     \
        uint64_t out;                                                       \
        __asm__ __volatile__(FL_IA64_ASM_FETCHADD_##SEM                     \
                             : [out] "=r"(out), [mem] "+S"(*p)              \
                             : [inc] "n"(v)                                 \
                             : "memory");                                   \
        return (int32_t)out;                                                \
      }                                                                     \
    seen = fl_load_relaxed(p);                                              \
    do                                                                      \
      {                                                                     \
        old = seen;                                                         \
        seen = fl_ia64_cmpxchg_##sem(p, old,                                \
                                     (int32_t)((uint32_t)old + (uint32_t)v)); \
      }                                                                     \
    while (seen != old);                                                    \
    return old;                                                             \
  }

/* clang-format on */

FL_IA64_FETCH_ADD(acq, ACQ)
FL_IA64_FETCH_ADD(rel, REL)

/* No unordered fetchadd4: relaxed takes the .acq form.  */
# define fl_atomic_fetch_add_relaxed fl_ia64_fetch_add_acq
# define fl_atomic_fetch_add_acquire fl_ia64_fetch_add_acq
# define fl_atomic_fetch_add_release fl_ia64_fetch_add_rel

/* mf for the release half, .acq for the acquire half.  */
static inline int32_t fl_atomic_fetch_add_acq_rel(int32_t *p, int32_t v)
{
  fl_smp_mb();
  return fl_ia64_fetch_add_acq(p, v);
}

# undef FL_IA64_CMPXCHG
# undef FL_IA64_FETCH_ADD

/* xchg4 has no completer and is always an acquire.  */
static inline int32_t fl_ia64_xchg(int32_t *p, int32_t v)
{
  uint64_t out;
  __asm__ __volatile__(FL_IA64_ASM_XCHG
                       : [out] "=r"(out), [mem] "+S"(*p)
                       : [in] "rO"(v)
                       : "memory");
  return (int32_t)out;
}

/* Release needs every earlier access visible before the exchange, and
 * xchg4 cannot say so: mf first.  With xchg4's own acquire that is
 * acq_rel too.  */
static inline int32_t fl_ia64_xchg_mf(int32_t *p, int32_t v)
{
  fl_smp_mb();
  return fl_ia64_xchg(p, v);
}

# define fl_atomic_xchg_relaxed fl_ia64_xchg
# define fl_atomic_xchg_acquire fl_ia64_xchg
# define fl_atomic_xchg_release fl_ia64_xchg_mf
# define fl_atomic_xchg_acq_rel fl_ia64_xchg_mf

/* 64 bits, outside the shim's int32_t API: what the 64-bit count of
 * <fastlock/counter.h> needs, and only that (the SHARED strategy's add,
 * large deltas, and the folds of the per-CPU slots into the count).
 * fetchadd8 has fetchadd4's addends (the inc3 field is the same), so
 * fl_ia64_fetch_add8_acq takes it for a compile-time constant in
 * FL_IA64_FETCHADD_INCREMENT (an fl_counter_add(c, 1) after inlining)
 * and a cmpxchg8.acq loop for every other addend: cmpxchg8 compares all
 * 64 bits of ar.ccv, so nothing is extended.  .acq for the same reason
 * as the relaxed 32-bit operations: there is no unordered form.  An
 * aligned ld8 is single-copy atomic.  */
static inline int64_t fl_ia64_load8_relaxed(const int64_t *p)
{
  int64_t v;
  __asm__ __volatile__(FL_IA64_ASM_LD8 : [out] "=r"(v) : [mem] "S"(*p));
  return v;
}

static inline int64_t fl_ia64_cmpxchg8_acq(int64_t *p, int64_t old,
                                           int64_t new_value)
{
  int64_t seen;
  __asm__ __volatile__(FL_IA64_ASM_CMPXCHG8_ACQ
                       : [out] "=r"(seen), [mem] "+S"(*p)
                       : [ccv] "rO"(old), [in] "rO"(new_value)
                       : "ar.ccv", "memory");
  return seen;
}

static inline int64_t fl_ia64_fetch_add8_acq(int64_t *p, int64_t v)
{
  int64_t old, seen;

  if (__builtin_constant_p(v) && FL_IA64_FETCHADD_INCREMENT(v)) {
    int64_t out;
    __asm__ __volatile__(FL_IA64_ASM_FETCHADD8_ACQ
                         : [out] "=r"(out), [mem] "+S"(*p)
                         : [inc] "n"(v)
                         : "memory");
    return out;
  }
  seen = fl_ia64_load8_relaxed(p);
  do {
    old = seen;
    seen = fl_ia64_cmpxchg8_acq(p, old, (int64_t)((uint64_t)old + (uint64_t)v));
  } while (seen != old);
  return old;
}

# define fl_atomic_fetch_add64_relaxed fl_ia64_fetch_add8_acq

/* What this header provides besides the aliases above.  add_negative,
 * fetch_or and fetch_and are fallback.h's: from the fetch-add, and loops
 * on cmpxchg4 (ia64 has no fetch-or).  */
# define fl_load_relaxed fl_load_relaxed
# define fl_load_acquire fl_load_acquire
# define fl_store_relaxed fl_store_relaxed
# define fl_store_release fl_store_release
# define fl_smp_mb fl_smp_mb
# define fl_atomic_cmpxchg_acq_rel fl_atomic_cmpxchg_acq_rel
# define fl_atomic_fetch_add_acq_rel fl_atomic_fetch_add_acq_rel

# define FL_ARCH_ATOMICS_NAME "ia64 asm, fetchadd4/cmpxchg4 .acq/.rel, mf"

#endif /* FL_ATOMICS_ASM */

#endif /* FASTLOCK_ARCH_IA64_H */
