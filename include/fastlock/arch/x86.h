/* <fastlock/arch/x86.h>: i386 and x86_64.
 *
 * The CPU part (always): PAUSE, RDTSC, the restartable critical section.
 * The atomics (FL_ATOMICS_ASM):
 *
 * x86 is TSO: loads are not reordered with loads, stores not with stores,
 * and a store is not reordered with an earlier load.  Every LOCK-prefixed
 * instruction (and XCHG with memory, which locks implicitly) is a full
 * barrier.  So acquire, release and acq_rel all come for free with the
 * locked instruction, plain MOVs are acquire loads and release stores, and
 * the only reordering the hardware does, a later load passing an earlier
 * store through the store buffer, is what fl_smp_mb must forbid.  The
 * "memory" clobber on each asm is the compiler barrier that keeps the
 * compiler from doing the reordering the CPU does not.
 *
 * fl_atomic_add_negative_* has two shapes, chosen by --with-x86-release
 * (Howells and Arcangeli, linux-kernel, April 2001, rwsem-opt4 against
 * 00_rwsem-9): "lock xadd" returns the old value and the sign is tested on
 * old + v in a register (Howells); "lock add; js" lets the locked
 * instruction's own sign flag decide (Arcangeli), one instruction and no
 * register for the result.  Both are always defined here, under
 * fl_x86_add_negative_xadd and fl_x86_add_negative_sub, so that the tests
 * check both whatever the build chose.  */
#ifndef FASTLOCK_ARCH_X86_H
#define FASTLOCK_ARCH_X86_H

#if !defined(__i386__) && !defined(__x86_64__)
# error "<fastlock/arch/x86.h> is for i386 and x86_64 only"
#endif

#include <stdint.h>

/* ---- The CPU ---- */

/* PAUSE: the spin-wait hint.  It gives the pipeline to a sibling
 * hyperthread and keeps the loop from flooding the core with speculative
 * loads that the lock word's change would cancel; the clobber makes the
 * loop re-read memory.  */
static inline void fl_cpu_relax(void)
{
  __asm__ __volatile__("pause" : : : "memory");
}
#define fl_cpu_relax fl_cpu_relax

/* RDTSC: cycles on old cores; on modern ones the TSC ticks at a constant
 * nominal rate.  Not serialising: fine for intervals of many
 * instructions, which is what the benchmark times.  */
static inline uint64_t fl_cycles(void)
{
  uint32_t lo, hi;
  __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
  return ((uint64_t)hi << 32) | lo;
}
#define fl_cycles fl_cycles
#define FL_CYCLES_NAME "rdtsc"

/* The restartable critical section (the protocol: doc/porting.md).  x32
 * is left out: its pointers are 32 bits and the asm stores 64.  The abort
 * signature is the 32-bit displacement of a "ud1 sig, %edi", so that
 * disassemblers see an instruction, not garbage.  */
#if (defined(__x86_64__) && defined(__LP64__)) || defined(__i386__)
/* clang-format off */
# define FL_ARCH_RSEQ_ABORT                                                 \
  ".pushsection __rseq_failure, \"ax\"\n\t"                                 \
  ".byte 0x0f, 0xb9, 0x3d\n\t"                                              \
  ".long " FL_ARCH_STR(RSEQ_SIG) "\n"                                       \
  "4:\tjmp 6b\n\t"                                                          \
  ".popsection"
# define FL_ARCH_RSEQ_ADD_BODY                                              \
  "movl (%[base], %[off]), %[v]\n\t"                                        \
  "addl %[d], %[v]\n\t"                                                     \
  "movl %[v], (%[base], %[off])\n"
# define FL_ARCH_RSEQ_TAKE_BODY                                             \
  "movl (%[base], %[off]), %[v]\n\t"                                        \
  "movl %[d], (%[base], %[off])\n"
/* clang-format on */
# if defined(__x86_64__)
/* %rip-relative lea: position-independent, no relocation in .text.  */
/* clang-format off */
#  define FL_ARCH_RSEQ_CS(body, shift)                                      \
  ".pushsection __rseq_cs, \"aw\"\n\t"                                      \
  ".balign 32\n"                                                            \
  "3:\t.long 0, 0\n\t"                                                      \
  ".quad 1f, 2f - 1f, 4f\n\t"                                               \
  ".popsection\n"                                                           \
  "6:\tleaq 3b(%%rip), %[off]\n\t"                                          \
  "movq %[off], 8(%[rs])\n"                                                 \
  "1:\tmovl 4(%[rs]), %k[off]\n\t"                                          \
  "shlq $" FL_ARCH_STR(shift) ", %[off]\n\t"                                \
  body                                                                      \
  "2:\tmovq $0, 8(%[rs])\n\t"                                               \
  FL_ARCH_RSEQ_ABORT
/* clang-format on */
# else
/* i386 has no %eip-relative addressing: the address comes from a call to
 * the next instruction and a pop (costing at worst one mispredicted
 * return later), plus the link-time distance to the descriptor, so a PIE
 * needs no relocation in .text, as an absolute address would.  rseq_cs is
 * 64 bits: the descriptor's address goes in the low word, the high word
 * stays the zero glibc put there.  */
/* clang-format off */
#  define FL_ARCH_RSEQ_CS(body, shift)                                      \
  ".pushsection __rseq_cs, \"aw\"\n\t"                                      \
  ".balign 32\n"                                                            \
  "3:\t.long 0, 0\n\t"                                                      \
  ".long 1f, 0, 2f - 1f, 0, 4f, 0\n\t"                                      \
  ".popsection\n"                                                           \
  "6:\tcall 5f\n"                                                           \
  "5:\tpopl %[off]\n\t"                                                     \
  "addl $(3b - 5b), %[off]\n\t"                                             \
  "movl %[off], 8(%[rs])\n"                                                 \
  "1:\tmovl 4(%[rs]), %[off]\n\t"                                           \
  "shll $" FL_ARCH_STR(shift) ", %[off]\n\t"                                \
  body                                                                      \
  "2:\tmovl $0, 8(%[rs])\n\t"                                               \
  FL_ARCH_RSEQ_ABORT
/* clang-format on */
# endif
/* clang-format off */
# define FL_ARCH_RSEQ_CONSTRAINTS(v_, off_, rs_, base_, d_)                 \
  : [v] "=&r"(v_), [off] "=&r"(off_)                                        \
  : [rs] "r"(rs_), [base] "r"(base_), [d] "ri"(d_)                          \
  : "memory", "cc"
/* clang-format on */
#endif

/* ---- The atomics ---- */
#if FL_ATOMICS_ASM
static inline int32_t fl_load_relaxed(const int32_t *p)
{
  int32_t v;
  __asm__ __volatile__("movl %1, %0" : "=r"(v) : "m"(*p));
  return v;
}

/* TSO: no later access can pass this load; the clobber stops the compiler
 * moving later accesses above it.  */
static inline int32_t fl_load_acquire(const int32_t *p)
{
  int32_t v;
  __asm__ __volatile__("movl %1, %0" : "=r"(v) : "m"(*p) : "memory");
  return v;
}

static inline void fl_store_relaxed(int32_t *p, int32_t v)
{
  __asm__ __volatile__("movl %1, %0" : "=m"(*p) : "ir"(v));
}

/* TSO: no earlier access can pass this store; the clobber stops the
 * compiler sinking earlier accesses below it.  */
static inline void fl_store_release(int32_t *p, int32_t v)
{
  __asm__ __volatile__("movl %1, %0" : "=m"(*p) : "ir"(v) : "memory");
}

/* LOCK XADD: atomically *p += v, v = old *p.  Full barrier in hardware,
 * so one body serves every order.  */
static inline int32_t fl_x86_xadd(int32_t *p, int32_t v)
{
  __asm__ __volatile__("lock xaddl %0, %1"
                       : "+r"(v), "+m"(*p)
                       :
                       : "memory", "cc");
  return v;
}

# define fl_atomic_fetch_add_relaxed fl_x86_xadd
# define fl_atomic_fetch_add_acquire fl_x86_xadd
# define fl_atomic_fetch_add_release fl_x86_xadd
# define fl_atomic_fetch_add_acq_rel fl_x86_xadd

/* Howells: LOCK XADD, then the sign of old + v (the flag the CPU would
 * set).  */
static inline int fl_x86_add_negative_xadd(int32_t *p, int32_t v)
{
  return fl_sum_negative(fl_x86_xadd(p, v), v);
}

/* Arcangeli: LOCK ADD and branch on the sign flag it sets ("=@ccs" hands
 * SF to the compiler, which emits the js/jns directly).  */
static inline int fl_x86_add_negative_sub(int32_t *p, int32_t v)
{
  int negative;
  __asm__ __volatile__("lock addl %2, %0"
                       : "+m"(*p), "=@ccs"(negative)
                       : "ir"(v)
                       : "memory");
  return negative;
}

# if FL_X86_RELEASE_SUB
#  define fl_atomic_add_negative_acquire fl_x86_add_negative_sub
#  define fl_atomic_add_negative_release fl_x86_add_negative_sub
#  define FL_ARCH_ATOMICS_NAME "x86 asm, release lock sub; js"
# else
#  define fl_atomic_add_negative_acquire fl_x86_add_negative_xadd
#  define fl_atomic_add_negative_release fl_x86_add_negative_xadd
#  define FL_ARCH_ATOMICS_NAME "x86 asm, release lock xadd"
# endif

/* LOCK CMPXCHG: compares EAX with *p; on a match stores new_value, else
 * loads *p into EAX.  Either way EAX ends up holding what *p held.  Full
 * barrier, success or failure.  */
static inline int32_t fl_x86_cmpxchg(int32_t *p, int32_t old, int32_t new_value)
{
  __asm__ __volatile__("lock cmpxchgl %2, %1"
                       : "+a"(old), "+m"(*p)
                       : "r"(new_value)
                       : "memory", "cc");
  return old;
}

# define fl_atomic_cmpxchg_relaxed fl_x86_cmpxchg
# define fl_atomic_cmpxchg_acquire fl_x86_cmpxchg
# define fl_atomic_cmpxchg_release fl_x86_cmpxchg
# define fl_atomic_cmpxchg_acq_rel fl_x86_cmpxchg

/* XCHG with a memory operand is locked without a prefix: full barrier.  */
static inline int32_t fl_x86_xchg(int32_t *p, int32_t v)
{
  __asm__ __volatile__("xchgl %0, %1" : "+r"(v), "+m"(*p) : : "memory");
  return v;
}

# define fl_atomic_xchg_relaxed fl_x86_xchg
# define fl_atomic_xchg_acquire fl_x86_xchg
# define fl_atomic_xchg_release fl_x86_xchg
# define fl_atomic_xchg_acq_rel fl_x86_xchg

/* Store->load ordering needs a serialising instruction.  A locked add of
 * zero to the top of the stack is one, and is cheaper than MFENCE on most
 * cores (Linux does the same).  Adding zero leaves the word, even in the
 * x86_64 red zone, as it was.  */
static inline void fl_smp_mb(void)
{
# if defined(__x86_64__)
  __asm__ __volatile__("lock addl $0, -4(%%rsp)" : : : "memory", "cc");
# else
  __asm__ __volatile__("lock addl $0, -4(%%esp)" : : : "memory", "cc");
# endif
}

/* TSO already keeps loads in order and stores in order: only the compiler
 * must be stopped.  (Non-temporal stores would need SFENCE; the locks never
 * issue any.)  */
static inline void fl_smp_rmb(void)
{
  __asm__ __volatile__("" : : : "memory");
}

static inline void fl_smp_wmb(void)
{
  __asm__ __volatile__("" : : : "memory");
}

/* What this header provides besides the aliases above.  fetch_or and
 * fetch_and are fallback.h's loops on LOCK CMPXCHG: LOCK OR and LOCK AND
 * cannot return the old value, and LOCK BTS sets one bit only.  */
# define fl_load_relaxed fl_load_relaxed
# define fl_load_acquire fl_load_acquire
# define fl_store_relaxed fl_store_relaxed
# define fl_store_release fl_store_release
# define fl_smp_mb fl_smp_mb
# define fl_smp_rmb fl_smp_rmb
# define fl_smp_wmb fl_smp_wmb

#endif /* FL_ATOMICS_ASM */

#endif /* FASTLOCK_ARCH_X86_H */
