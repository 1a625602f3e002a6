/* <fastlock/arch/mips.h>: MIPS (written for o32 mipsel).
 *
 * The CPU part: nothing.  MIPS32 has no spin hint every core implements
 * (PAUSE is MIPS32r2 with the MT ASE only), and rdhwr $2 (CC) is readable
 * only where the kernel enables it and counts at half the pipeline clock
 * on many cores: the fallbacks (a compiler barrier, the clock) serve.
 * The atomics (FL_ATOMICS_ASM):
 *
 * MIPS has no atomic read-modify-write instruction; --with-mips-atomics
 * picks one of the three ways to build one that Kissell, Stezenbach et
 * al. compare (linux-mips, January-July 2002, "Mipsel libc with LL/SC
 * online anywhere?").
 *
 * llsc (FL_MIPS_LLSC), MIPS II and later: ll loads the word and links it;
 * sc stores only if nothing broke the link since (another CPU's store to
 * the line, an exception on this one) and leaves 1 or 0 in its register;
 * the loop retries until sc succeeds.  ll and sc order nothing by
 * themselves, so the barriers are sync: before the loop for release,
 * after it for acquire, both for acq_rel, none for relaxed.  A cmpxchg
 * whose compare fails leaves through a branch past the trailing sync, so
 * it is relaxed (the leading sync, already executed, only adds order).
 *
 * beql (FL_MIPS_BEQL), CPUs with branch-likely (MIPS II up to Release 5)
 * but without LL/SC (NEC VR41xx, the PlayStation 2's R5900), uniprocessor
 * only: Kevin Kissell's branch-likely restart trick.  The sequence puts
 * a cookie into k1 ($27, a register the kernel's exception handlers use
 * as scratch and compiled code never touches), does a plain lw and
 * computes the new value, and places the sw in the delay slot of
 * "beql $27, cookie": a branch-likely that is not taken annuls its delay
 * slot.  If an exception came in anywhere between the move to k1 and the
 * beql, or on the sw itself (its EPC is then the beql, which runs again),
 * k1 no longer holds the cookie, the store is annulled and the sequence
 * restarts from the load.
 *   What the kernel must guarantee: k1 != cookie on every return to user
 * mode (eret) after which other code may have run on this CPU in between:
 * an interrupt that preempted us, a page fault that slept, a signal
 * handler (which may itself have run this sequence and left the cookie in
 * k1).  Exceptions that run no other user code, a TLB refill, may leave k1
 * as they like.  Mainline Linux promises nothing of the kind: its handlers
 * leave whatever they last put in k1 (a kernel stack pointer, a TLB entry),
 * which should never equal the cookie but nothing keeps it so; the fix that
 * thread settles on is one "move k1, zero" before every eret.  The
 * cookie is the one Kissell proposed there as a value no sane exception
 * return leaves in k1.
 *   Why uniprocessor only: k1 tells us only that this CPU took an
 * exception.  A store by another CPU between our lw and sw is no exception
 * here and would be overwritten.  On one CPU every other writer (another
 * thread, a signal handler) can run only after an exception on this CPU,
 * which is exactly what k1 detects; configure refuses beql without
 * --enable-uniprocessor and this header refuses it too.
 *
 * sysmips (FL_MIPS_SYSMIPS), any MIPS, for CPUs with neither (MIPS I):
 * sysmips(MIPS_ATOMIC_SET, p, v) makes the kernel store v to *p and return
 * the old value, atomically against every other MIPS_ATOMIC_SET (Linux
 * uses LL/SC where the CPU has it, else a loop that preemption restarts).
 * That is an exchange and nothing else, so every other operation takes a
 * spinlock from a small table hashed on the word's address, acquired with
 * that exchange, as the parisc and sparc32 kernels build their atomics.
 * Everything that writes a word must then go through the lock, or a plain
 * store landing between a locked lw and sw would be lost: xchg and both
 * stores take it too; only loads, single aligned lw, do not.  Consequences
 * a user must know:
 *   - the table is per process: these operations are NOT atomic between
 *     processes, so FL_PSHARED objects in shared memory do not work;
 *   - not async-signal-safe: a handler that updates a word whose lock the
 *     thread it interrupted holds spins forever;
 *   - every read-modify-write and every store is a system call.
 * The kernel returns the old value in v0 with a3 = 0 even when it looks
 * like an error number, so success is read from a3 (syscall(2) would
 * return -1 both for an error and for an old value of -1).  Its errors,
 * EINVAL for an unaligned or non-user address, EFAULT, ENOSYS where the
 * call does not exist (QEMU's user mode does not implement it), cannot be
 * returned by an atomic operation, so they trap.
 *
 * --enable-uniprocessor (FL_UNIPROCESSOR) turns every sync into a compiler
 * barrier, whatever the variant: one CPU sees its own loads and stores in
 * program order, and every other thread runs on that same CPU after a
 * context switch, so there is no other observer to order against.  The
 * "memory" clobbers stay: they stop the compiler doing the reordering the
 * CPU does not.  MIPS I has no sync at all (Linux emulates it with a trap
 * per barrier), and no MIPS I machine has two CPUs: configure such builds
 * with --enable-uniprocessor.
 *
 * The barrier is always sync 0, the full completion barrier.  The
 * lightweight stypes (sync 0x4 wmb, 0x10 mb, 0x11 acquire, 0x12 release,
 * 0x13 rmb) cannot be trusted on every MIPS32 core: only later revisions
 * of the architecture define them (and oblige a core that lacks them to
 * run them as sync 0); before that a nonzero stype was the
 * implementation's to define.  Cavium Octeon did define its own (its
 * SYNCW is sync 4), and some Octeons need that one issued twice to take
 * effect.  Linux, for the same caution, issues sync 0 for every barrier
 * outside its Octeon build.
 *
 * add_negative is fallback.h's, from the fetch-add (MIPS has no condition
 * flags); so are fetch_or and fetch_and of the beql and sysmips variants,
 * as loops on their cmpxchg.
 *
 * The toolchain may add to what is written here: Debian's gas defaults to
 * -mfix-loongson3-llsc and puts a sync before every ll (and at branch
 * targets that leave an ll/sc loop) for the Loongson-3 LL/SC erratum.  */
#ifndef FASTLOCK_ARCH_MIPS_H
#define FASTLOCK_ARCH_MIPS_H

#if !defined(__mips__)
# error "<fastlock/arch/mips.h> is for MIPS only"
#endif

#include <stdint.h>

/* ---- The atomics ---- */
#if FL_ATOMICS_ASM

/* The asm is in the standard 32-bit encoding: keep these functions out of
 * MIPS16 and microMIPS code, where it would be assembled compressed.  */
# define FL_MIPS_INLINE static inline __attribute__((nomips16, nomicromips))

/* ll, sc, sync and beql are MIPS II.  A toolchain defaulting to MIPS I can
 * still build the llsc and beql variants for a MIPS II CPU: raise the
 * assembler's ISA inside the blocks that use them (the CPU being MIPS II,
 * its loads interlock, so no load-delay nops are owed inside them).  */
# if __mips == 1
#  define FL_MIPS_SET_ISA ".set mips2\n\t"
# else
#  define FL_MIPS_SET_ISA ""
# endif

/* Blocks with branches are written with their delay slots filled by hand.  */
# define FL_MIPS_ASM_BEGIN ".set push\n\t" FL_MIPS_SET_ISA ".set noreorder\n\t"
# define FL_MIPS_ASM_END ".set pop"

# if FL_UNIPROCESSOR
#  define FL_MIPS_SYNC ""
#  define FL_MIPS_BARRIER_NAME "uniprocessor, compiler barriers"
# else
#  define FL_MIPS_SYNC ".set push\n\t" FL_MIPS_SET_ISA "sync\n\t.set pop\n\t"
#  define FL_MIPS_BARRIER_NAME "barriers sync"
# endif

FL_MIPS_INLINE int32_t fl_load_relaxed(const int32_t *p)
{
  int32_t v;
  __asm__ __volatile__("lw %0, %1" : "=r"(v) : "m"(*p));
  return v;
}

/* sync after the lw: no later load or store is performed before it.  */
FL_MIPS_INLINE int32_t fl_load_acquire(const int32_t *p)
{
  int32_t v;
  __asm__ __volatile__("lw %0, %1\n\t" FL_MIPS_SYNC
                       : "=r"(v)
                       : "m"(*p)
                       : "memory");
  return v;
}

/* sync 0 orders everything in both directions, so the three fences are
 * the same instruction.  */
FL_MIPS_INLINE void fl_smp_mb(void)
{
  __asm__ __volatile__(FL_MIPS_SYNC : : : "memory");
}

FL_MIPS_INLINE void fl_smp_rmb(void)
{
  __asm__ __volatile__(FL_MIPS_SYNC : : : "memory");
}

FL_MIPS_INLINE void fl_smp_wmb(void)
{
  __asm__ __volatile__(FL_MIPS_SYNC : : : "memory");
}

# define fl_load_relaxed fl_load_relaxed
# define fl_load_acquire fl_load_acquire
# define fl_smp_mb fl_smp_mb
# define fl_smp_rmb fl_smp_rmb
# define fl_smp_wmb fl_smp_wmb

# if FL_MIPS_LLSC

/* A plain sw breaks any other thread's ll/sc link, so stores need no
 * loop.  */
FL_MIPS_INLINE void fl_store_relaxed(int32_t *p, int32_t v)
{
  __asm__ __volatile__("sw %1, %0" : "=m"(*p) : "r"(v));
}

/* sync before the sw: every earlier load and store has completed before
 * the new value can be seen.  */
FL_MIPS_INLINE void fl_store_release(int32_t *p, int32_t v)
{
  __asm__ __volatile__(FL_MIPS_SYNC "sw %1, %0" : "=m"(*p) : "r"(v) : "memory");
}

/* Each ll/sc operation takes its barriers as two strings: BEFORE, a sync
 * for release (every earlier access completes before sc can publish the
 * new value), and AFTER, a sync for acquire (no later access is performed
 * before the ll/sc pair has).  "ZC" is the memory constraint for ll and
 * sc: base register plus an offset they can encode.  */
/* old = *p; *p = old OP v (insn: addu, or, and).  */
/* clang-format off */
# define FL_MIPS_FETCH_OP(op, insn, order, before, after)                   \
  FL_MIPS_INLINE int32_t fl_atomic_##op##_##order(int32_t *p, int32_t v)    \
  {                                                                         \
    int32_t old, tmp;                                                       \
    __asm__ __volatile__(FL_MIPS_ASM_BEGIN before                           \
                         "1: ll %0, %2\n\t"                                 \
                         insn " %1, %0, %3\n\t"                             \
                         "sc %1, %2\n\t"                                    \
                         "beqz %1, 1b\n\t"                                  \
                         " nop\n\t" after FL_MIPS_ASM_END                   \
                         : "=&r"(old), "=&r"(tmp), "+ZC"(*p)                \
                         : "r"(v)                                           \
                         : "memory");                                       \
    return old;                                                             \
  }
/* clang-format on */

/* On a mismatch bne leaves the loop past AFTER: a failed cmpxchg is
 * relaxed.  Its delay slot loads the new value, harmless when taken.  */
/* clang-format off */
# define FL_MIPS_CMPXCHG(order, before, after)                              \
  FL_MIPS_INLINE int32_t fl_atomic_cmpxchg_##order(int32_t *p, int32_t old, \
                                                   int32_t new_value)       \
  {                                                                         \
    int32_t prev, tmp;                                                      \
    __asm__ __volatile__(FL_MIPS_ASM_BEGIN before                           \
                         "1: ll %0, %2\n\t"                                 \
                         "bne %0, %3, 2f\n\t"                               \
                         " move %1, %4\n\t"                                 \
                         "sc %1, %2\n\t"                                    \
                         "beqz %1, 1b\n\t"                                  \
                         " nop\n\t" after                                   \
                         "2:\n\t" FL_MIPS_ASM_END                           \
                         : "=&r"(prev), "=&r"(tmp), "+ZC"(*p)               \
                         : "r"(old), "r"(new_value)                         \
                         : "memory");                                       \
    return prev;                                                            \
  }
/* clang-format on */

/* clang-format off */
# define FL_MIPS_XCHG(order, before, after)                                 \
  FL_MIPS_INLINE int32_t fl_atomic_xchg_##order(int32_t *p, int32_t v)      \
  {                                                                         \
    int32_t old, tmp;                                                       \
    __asm__ __volatile__(FL_MIPS_ASM_BEGIN before                           \
                         "1: ll %0, %2\n\t"                                 \
                         "move %1, %3\n\t"                                  \
                         "sc %1, %2\n\t"                                    \
                         "beqz %1, 1b\n\t"                                  \
                         " nop\n\t" after FL_MIPS_ASM_END                   \
                         : "=&r"(old), "=&r"(tmp), "+ZC"(*p)                \
                         : "r"(v)                                           \
                         : "memory");                                       \
    return old;                                                             \
  }
/* clang-format on */

FL_MIPS_FETCH_OP(fetch_add, "addu", relaxed, "", "")
FL_MIPS_FETCH_OP(fetch_add, "addu", acquire, "", FL_MIPS_SYNC)
FL_MIPS_FETCH_OP(fetch_add, "addu", release, FL_MIPS_SYNC, "")
FL_MIPS_FETCH_OP(fetch_add, "addu", acq_rel, FL_MIPS_SYNC, FL_MIPS_SYNC)
FL_MIPS_FETCH_OP(fetch_or, "or", relaxed, "", "")
FL_MIPS_FETCH_OP(fetch_or, "or", acquire, "", FL_MIPS_SYNC)
FL_MIPS_FETCH_OP(fetch_or, "or", release, FL_MIPS_SYNC, "")
FL_MIPS_FETCH_OP(fetch_or, "or", acq_rel, FL_MIPS_SYNC, FL_MIPS_SYNC)
FL_MIPS_FETCH_OP(fetch_and, "and", relaxed, "", "")
FL_MIPS_FETCH_OP(fetch_and, "and", acquire, "", FL_MIPS_SYNC)
FL_MIPS_FETCH_OP(fetch_and, "and", release, FL_MIPS_SYNC, "")
FL_MIPS_FETCH_OP(fetch_and, "and", acq_rel, FL_MIPS_SYNC, FL_MIPS_SYNC)
FL_MIPS_CMPXCHG(relaxed, "", "")
FL_MIPS_CMPXCHG(acquire, "", FL_MIPS_SYNC)
FL_MIPS_CMPXCHG(release, FL_MIPS_SYNC, "")
FL_MIPS_CMPXCHG(acq_rel, FL_MIPS_SYNC, FL_MIPS_SYNC)
FL_MIPS_XCHG(relaxed, "", "")
FL_MIPS_XCHG(acquire, "", FL_MIPS_SYNC)
FL_MIPS_XCHG(release, FL_MIPS_SYNC, "")
FL_MIPS_XCHG(acq_rel, FL_MIPS_SYNC, FL_MIPS_SYNC)

#  undef FL_MIPS_FETCH_OP
#  undef FL_MIPS_CMPXCHG
#  undef FL_MIPS_XCHG

#  define fl_store_relaxed fl_store_relaxed
#  define fl_store_release fl_store_release
#  define fl_atomic_fetch_add_relaxed fl_atomic_fetch_add_relaxed
#  define fl_atomic_fetch_add_acquire fl_atomic_fetch_add_acquire
#  define fl_atomic_fetch_add_release fl_atomic_fetch_add_release
#  define fl_atomic_fetch_add_acq_rel fl_atomic_fetch_add_acq_rel
#  define fl_atomic_fetch_or_relaxed fl_atomic_fetch_or_relaxed
#  define fl_atomic_fetch_or_acquire fl_atomic_fetch_or_acquire
#  define fl_atomic_fetch_or_release fl_atomic_fetch_or_release
#  define fl_atomic_fetch_or_acq_rel fl_atomic_fetch_or_acq_rel
#  define fl_atomic_fetch_and_relaxed fl_atomic_fetch_and_relaxed
#  define fl_atomic_fetch_and_acquire fl_atomic_fetch_and_acquire
#  define fl_atomic_fetch_and_release fl_atomic_fetch_and_release
#  define fl_atomic_fetch_and_acq_rel fl_atomic_fetch_and_acq_rel
#  define fl_atomic_cmpxchg_relaxed fl_atomic_cmpxchg_relaxed
#  define fl_atomic_cmpxchg_acquire fl_atomic_cmpxchg_acquire
#  define fl_atomic_cmpxchg_release fl_atomic_cmpxchg_release
#  define fl_atomic_cmpxchg_acq_rel fl_atomic_cmpxchg_acq_rel
#  define fl_atomic_xchg_relaxed fl_atomic_xchg_relaxed
#  define fl_atomic_xchg_acquire fl_atomic_xchg_acquire
#  define fl_atomic_xchg_release fl_atomic_xchg_release
#  define fl_atomic_xchg_acq_rel fl_atomic_xchg_acq_rel

#  define FL_ARCH_ATOMICS_NAME "mips asm, ll/sc, " FL_MIPS_BARRIER_NAME

# elif FL_MIPS_BEQL

#  if !FL_UNIPROCESSOR
#   error                                                                      \
       "the MIPS BEQL restart trick is correct only on a uniprocessor: configure --enable-uniprocessor"
#  endif
#  if defined(__mips_isa_rev) && __mips_isa_rev >= 6
#   error "MIPS Release 6 removed beql; use --with-mips-atomics=llsc"
#  endif

/* Kissell's cookie from that thread; see the top of this file for what the
 * kernel must promise about it.  */
#  define FL_MIPS_BEQL_COOKIE 0xffdadaffu

/* A plain sw: a beql sequence preempted between its load and store so
 * that this one could run comes back with k1 clobbered and reloads.  No
 * sync on one CPU: the "memory" clobber is the release.  */
FL_MIPS_INLINE void fl_store_relaxed(int32_t *p, int32_t v)
{
  __asm__ __volatile__("sw %1, %0" : "=m"(*p) : "r"(v));
}

FL_MIPS_INLINE void fl_store_release(int32_t *p, int32_t v)
{
  __asm__ __volatile__("sw %1, %0" : "=m"(*p) : "r"(v) : "memory");
}

/* The cookie is passed in a register and copied to k1 in one instruction:
 * loading k1 with lui/ori could be interrupted half way and leave it equal
 * to the cookie after all.  The store in the delay slot must be one
 * instruction too, which "ZC" (base register plus offset) ensures.  With
 * one CPU there is no barrier to place: the "memory" clobber is the
 * acquire and the release for every order.  */
FL_MIPS_INLINE int32_t fl_mips_beql_fetch_add(int32_t *p, int32_t v)
{
  int32_t old, tmp;
  __asm__ __volatile__(FL_MIPS_ASM_BEGIN "1: move $27, %4\n\t"
                                         "lw %0, %2\n\t"
                                         "addu %1, %0, %3\n\t"
                                         "beql $27, %4, 2f\n\t"
                                         " sw %1, %2\n\t"
                                         "b 1b\n\t"
                                         " nop\n"
                                         "2:\n\t" FL_MIPS_ASM_END
                       : "=&r"(old), "=&r"(tmp), "+ZC"(*p)
                       : "r"(v), "r"(FL_MIPS_BEQL_COOKIE)
                       : "memory", "$27");
  return old;
}

/* A mismatch leaves before the beql and stores nothing.  */
FL_MIPS_INLINE int32_t fl_mips_beql_cmpxchg(int32_t *p, int32_t old,
                                            int32_t new_value)
{
  int32_t prev;
  __asm__ __volatile__(FL_MIPS_ASM_BEGIN "1: move $27, %4\n\t"
                                         "lw %0, %1\n\t"
                                         "bne %0, %2, 2f\n\t"
                                         " nop\n\t"
                                         "beql $27, %4, 2f\n\t"
                                         " sw %3, %1\n\t"
                                         "b 1b\n\t"
                                         " nop\n"
                                         "2:\n\t" FL_MIPS_ASM_END
                       : "=&r"(prev), "+ZC"(*p)
                       : "r"(old), "r"(new_value), "r"(FL_MIPS_BEQL_COOKIE)
                       : "memory", "$27");
  return prev;
}

FL_MIPS_INLINE int32_t fl_mips_beql_xchg(int32_t *p, int32_t v)
{
  int32_t old;
  __asm__ __volatile__(FL_MIPS_ASM_BEGIN "1: move $27, %3\n\t"
                                         "lw %0, %1\n\t"
                                         "beql $27, %3, 2f\n\t"
                                         " sw %2, %1\n\t"
                                         "b 1b\n\t"
                                         " nop\n"
                                         "2:\n\t" FL_MIPS_ASM_END
                       : "=&r"(old), "+ZC"(*p)
                       : "r"(v), "r"(FL_MIPS_BEQL_COOKIE)
                       : "memory", "$27");
  return old;
}

#  define fl_store_relaxed fl_store_relaxed
#  define fl_store_release fl_store_release
#  define fl_atomic_fetch_add_relaxed fl_mips_beql_fetch_add
#  define fl_atomic_fetch_add_acquire fl_mips_beql_fetch_add
#  define fl_atomic_fetch_add_release fl_mips_beql_fetch_add
#  define fl_atomic_fetch_add_acq_rel fl_mips_beql_fetch_add
#  define fl_atomic_cmpxchg_relaxed fl_mips_beql_cmpxchg
#  define fl_atomic_cmpxchg_acquire fl_mips_beql_cmpxchg
#  define fl_atomic_cmpxchg_release fl_mips_beql_cmpxchg
#  define fl_atomic_cmpxchg_acq_rel fl_mips_beql_cmpxchg
#  define fl_atomic_xchg_relaxed fl_mips_beql_xchg
#  define fl_atomic_xchg_acquire fl_mips_beql_xchg
#  define fl_atomic_xchg_release fl_mips_beql_xchg
#  define fl_atomic_xchg_acq_rel fl_mips_beql_xchg

/* clang-format off */
# define FL_ARCH_ATOMICS_NAME                                               \
  "mips asm, beql restart on k1 cookie, " FL_MIPS_BARRIER_NAME
/* clang-format on */

# elif FL_MIPS_SYSMIPS

#  include <asm/sysmips.h>
#  include <asm/unistd.h>
#  include <sched.h>

#  define FL_MIPS_SYSMIPS_NLOCKS 16

/* One table per program, not one per translation unit: the definition is
 * weak, so every object that includes this header agrees on a single copy
 * at link time, and default visibility (the library is otherwise built
 * -fvisibility=hidden) lets the dynamic linker bind the library's and the
 * program's references to the same one.  */
int32_t fl_mips_sysmips_locks[FL_MIPS_SYSMIPS_NLOCKS]
    __attribute__((weak, visibility("default")));

/* sysmips(MIPS_ATOMIC_SET, p, v): the o32 system call convention, number
 * in v0, arguments in a0-a2, result in v0, error flag in a3; the kernel
 * may clobber at, v1, t0-t9, hi and lo.  */
FL_MIPS_INLINE int32_t fl_mips_atomic_set(int32_t *p, int32_t v)
{
  register long v0 __asm__("$2");
  register long a0 __asm__("$4") = MIPS_ATOMIC_SET;
  register int32_t *a1 __asm__("$5") = p;
  register long a2 __asm__("$6") = v;
  register long a3 __asm__("$7");
  __asm__ __volatile__("li $2, %2\n\t"
                       "syscall"
                       : "=r"(v0), "=r"(a3)
                       : "i"(__NR_sysmips), "r"(a0), "r"(a1), "r"(a2)
                       : "$1", "$3", "$8", "$9", "$10", "$11", "$12", "$13",
                         "$14", "$15", "$24", "$25", "hi", "lo", "memory");
  if (__builtin_expect(a3 != 0, 0))
    __builtin_trap();
  return (int32_t)v0;
}

/* The holder keeps the lock for a few instructions, but on one CPU a
 * holder that was preempted cannot let go until we stop running: yield
 * rather than spin out the time slice.  The sync after taking it keeps the
 * critical section's accesses after the acquisition, and orders every
 * access before the operation before its store: each locked operation is
 * acq_rel whatever its name says.  */
FL_MIPS_INLINE int32_t *fl_mips_sysmips_lock(const int32_t *p)
{
  int32_t *lock = &fl_mips_sysmips_locks[((uintptr_t)p >> 2)
                                         & (FL_MIPS_SYSMIPS_NLOCKS - 1)];
  while (fl_mips_atomic_set(lock, 1) != 0)
    sched_yield();
  __asm__ __volatile__(FL_MIPS_SYNC : : : "memory");
  return lock;
}

/* sync before the releasing store: the critical section completes before
 * the lock is seen free.  A plain sw suffices: only MIPS_ATOMIC_SET and
 * this store ever write a lock word, and the kernel's set is atomic
 * against it.  */
FL_MIPS_INLINE void fl_mips_sysmips_unlock(int32_t *lock)
{
  __asm__ __volatile__(FL_MIPS_SYNC "sw $0, %0" : "=m"(*lock) : : "memory");
}

/* Inside the lock the word is read and written once each, through
 * volatile so that the compiler neither splits nor repeats the accesses
 * that concurrent lock-free loads see.  */
FL_MIPS_INLINE void fl_mips_sysmips_store(int32_t *p, int32_t v)
{
  int32_t *lock = fl_mips_sysmips_lock(p);
  *(volatile int32_t *)p = v;
  fl_mips_sysmips_unlock(lock);
}

FL_MIPS_INLINE int32_t fl_mips_sysmips_fetch_add(int32_t *p, int32_t v)
{
  int32_t *lock = fl_mips_sysmips_lock(p);
  uint32_t old = (uint32_t) * (volatile int32_t *)p;
  *(volatile int32_t *)p = (int32_t)(old + (uint32_t)v);
  fl_mips_sysmips_unlock(lock);
  return (int32_t)old;
}

FL_MIPS_INLINE int32_t fl_mips_sysmips_cmpxchg(int32_t *p, int32_t old,
                                               int32_t new_value)
{
  int32_t *lock = fl_mips_sysmips_lock(p);
  int32_t prev = *(volatile int32_t *)p;
  if (prev == old)
    *(volatile int32_t *)p = new_value;
  fl_mips_sysmips_unlock(lock);
  return prev;
}

FL_MIPS_INLINE int32_t fl_mips_sysmips_xchg(int32_t *p, int32_t v)
{
  int32_t *lock = fl_mips_sysmips_lock(p);
  int32_t old = *(volatile int32_t *)p;
  *(volatile int32_t *)p = v;
  fl_mips_sysmips_unlock(lock);
  return old;
}

#  define fl_store_relaxed fl_mips_sysmips_store
#  define fl_store_release fl_mips_sysmips_store
#  define fl_atomic_fetch_add_relaxed fl_mips_sysmips_fetch_add
#  define fl_atomic_fetch_add_acquire fl_mips_sysmips_fetch_add
#  define fl_atomic_fetch_add_release fl_mips_sysmips_fetch_add
#  define fl_atomic_fetch_add_acq_rel fl_mips_sysmips_fetch_add
#  define fl_atomic_cmpxchg_relaxed fl_mips_sysmips_cmpxchg
#  define fl_atomic_cmpxchg_acquire fl_mips_sysmips_cmpxchg
#  define fl_atomic_cmpxchg_release fl_mips_sysmips_cmpxchg
#  define fl_atomic_cmpxchg_acq_rel fl_mips_sysmips_cmpxchg
#  define fl_atomic_xchg_relaxed fl_mips_sysmips_xchg
#  define fl_atomic_xchg_acquire fl_mips_sysmips_xchg
#  define fl_atomic_xchg_release fl_mips_sysmips_xchg
#  define fl_atomic_xchg_acq_rel fl_mips_sysmips_xchg

/* clang-format off */
# define FL_ARCH_ATOMICS_NAME                                               \
  "mips asm, sysmips hashed spinlocks (one process only), " FL_MIPS_BARRIER_NAME
/* clang-format on */

# else
#  error                                                                       \
      "FL_ARCH_MIPS is set but none of FL_MIPS_LLSC, FL_MIPS_BEQL, FL_MIPS_SYSMIPS is: regenerate <fastlock/config.h>"
# endif

#endif /* FL_ATOMICS_ASM */

#endif /* FASTLOCK_ARCH_MIPS_H */
