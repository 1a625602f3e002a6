/* stress/bench-variant.h: which variant of the atomic shim fastlock's
 * inline fastpaths are compiled with in one translation unit, so that one
 * fastlock-bench binary holds every variant this host can run side by side
 * (xadd against sub, as Howells and Arcangeli compared them on
 * linux-kernel in April 2001; asm against the compiler, as in Boessenkool
 * and Leroy's linuxppc-dev thread of October 2019 on the PowerPC VDSO).
 *
 * How: <fastlock/config.h> is included first and the macros that select
 * the shim (FL_ATOMICS_ASM and the arch's knob) are redefined before the
 * public headers include <fastlock/arch/atomic.h>, whose include guard
 * <fastlock/config.h> does not reopen.  Only the inline fastpaths change;
 * the slowpaths are the library's, built with the configured variant.
 * That mix is sound only where both variants are atomic instructions on
 * the same word: lock-prefixed x86 operations; lwarx/stwcx. with either
 * acquire barrier; LL/SC or LSE on aarch64; LL/SC in asm or from the
 * compiler on MIPS.  A library built for sysmips (a lock table in the
 * process) or the BEQL trick (uniprocessor only) gets its own variant and
 * nothing else.
 *
 * The includer defines FL_BENCH_SLOT: 1 and 2, the arch's asm with its
 * knob at its first and second value; 3, the compiler's __atomic builtins.
 * This header defines:
 *   FL_BENCH_SLOT_BUILT     1 if the slot exists on this host and build
 *   FL_BENCH_RWSEM_VARIANT  the variant's name in rwsem entries ("sub")
 *   FL_BENCH_VARIANT        its name in spinlock and counter entries
 *   FL_BENCH_ALL_KINDS      1 if the variant changes spinlocks and counters
 *                           too; the x86 knob changes only the add-and-test-
 *                           sign of the rwsem's unlock fastpath
 *   FL_BENCH_PRIMARY        1 for the one slot that also carries the
 *                           entries no shim variant changes (the per-thread
 *                           and rseq counters)  */
#ifndef FASTLOCK_STRESS_BENCH_VARIANT_H
#define FASTLOCK_STRESS_BENCH_VARIANT_H

#include <fastlock/config.h>

/* A MIPS library built for sysmips or the BEQL trick.  */
#if FL_ARCH_MIPS && FL_ATOMICS_ASM && !FL_MIPS_LLSC
# define FL_BENCH_MIPS_ONLY_OWN 1
#else
# define FL_BENCH_MIPS_ONLY_OWN 0
#endif

#if FL_BENCH_SLOT == 3
# define FL_BENCH_SLOT_BUILT (!FL_BENCH_MIPS_ONLY_OWN)
# define FL_BENCH_PRIMARY                                                      \
  (!(FL_ARCH_X86 || FL_ARCH_PPC || FL_ARCH_AARCH64 || FL_ARCH_MIPS             \
     || FL_ARCH_IA64))
# define FL_BENCH_RWSEM_VARIANT "builtin"
# define FL_BENCH_VARIANT "builtin"
# define FL_BENCH_ALL_KINDS 1
# undef FL_ATOMICS_ASM
# define FL_ATOMICS_ASM 0

#elif FL_ARCH_X86
# define FL_BENCH_SLOT_BUILT 1
# define FL_BENCH_PRIMARY (FL_BENCH_SLOT == 1)
# define FL_BENCH_ALL_KINDS (FL_BENCH_SLOT == 1)
# define FL_BENCH_VARIANT "asm"
# undef FL_ATOMICS_ASM
# define FL_ATOMICS_ASM 1
# undef FL_X86_RELEASE_SUB
# if FL_BENCH_SLOT == 1
#  define FL_BENCH_RWSEM_VARIANT "xadd"
#  define FL_X86_RELEASE_SUB 0
# else
#  define FL_BENCH_RWSEM_VARIANT "sub"
#  define FL_X86_RELEASE_SUB 1
# endif

#elif FL_ARCH_PPC
/* e500v1/v2 have no lwsync (configure refuses it there too).  */
# if FL_BENCH_SLOT == 2 && defined(__NO_LWSYNC__)
#  define FL_BENCH_SLOT_BUILT 0
# else
#  define FL_BENCH_SLOT_BUILT 1
# endif
# define FL_BENCH_PRIMARY (FL_BENCH_SLOT == 1)
# define FL_BENCH_ALL_KINDS 1
# undef FL_ATOMICS_ASM
# define FL_ATOMICS_ASM 1
# undef FL_PPC_ACQUIRE_LWSYNC
# if FL_BENCH_SLOT == 1
#  define FL_BENCH_RWSEM_VARIANT "isync"
#  define FL_PPC_ACQUIRE_LWSYNC 0
# else
#  define FL_BENCH_RWSEM_VARIANT "lwsync"
#  define FL_PPC_ACQUIRE_LWSYNC 1
# endif
# define FL_BENCH_VARIANT FL_BENCH_RWSEM_VARIANT

#elif FL_ARCH_AARCH64
/* LSE only where the library was configured for it: that build is the
 * one compiled for, and meant to run on, an ARMv8.1 core.  (Decided here,
 * before FL_AARCH64_LSE is redefined below.)  */
# if FL_BENCH_SLOT == 1 || FL_AARCH64_LSE
#  define FL_BENCH_SLOT_BUILT 1
# else
#  define FL_BENCH_SLOT_BUILT 0
# endif
# define FL_BENCH_PRIMARY (FL_BENCH_SLOT == 1)
# define FL_BENCH_ALL_KINDS 1
# undef FL_ATOMICS_ASM
# define FL_ATOMICS_ASM 1
# undef FL_AARCH64_LSE
# if FL_BENCH_SLOT == 1
#  define FL_BENCH_RWSEM_VARIANT "llsc"
#  define FL_AARCH64_LSE 0
# else
#  define FL_BENCH_RWSEM_VARIANT "lse"
#  define FL_AARCH64_LSE 1
# endif
# define FL_BENCH_VARIANT FL_BENCH_RWSEM_VARIANT

#elif FL_ARCH_MIPS
# define FL_BENCH_SLOT_BUILT (FL_BENCH_SLOT == 1)
# define FL_BENCH_PRIMARY 1
# define FL_BENCH_ALL_KINDS 1
# if FL_BENCH_MIPS_ONLY_OWN && FL_MIPS_SYSMIPS
#  define FL_BENCH_RWSEM_VARIANT "sysmips"
# elif FL_BENCH_MIPS_ONLY_OWN
#  define FL_BENCH_RWSEM_VARIANT "beql"
# else
#  define FL_BENCH_RWSEM_VARIANT "llsc"
#  undef FL_ATOMICS_ASM
#  define FL_ATOMICS_ASM 1
#  undef FL_MIPS_LLSC
#  define FL_MIPS_LLSC 1
#  undef FL_MIPS_BEQL
#  define FL_MIPS_BEQL 0
#  undef FL_MIPS_SYSMIPS
#  define FL_MIPS_SYSMIPS 0
# endif
# define FL_BENCH_VARIANT FL_BENCH_RWSEM_VARIANT

#elif FL_ARCH_IA64
# define FL_BENCH_SLOT_BUILT (FL_BENCH_SLOT == 1)
# define FL_BENCH_PRIMARY 1
# define FL_BENCH_ALL_KINDS 1
# define FL_BENCH_RWSEM_VARIANT "asm"
# define FL_BENCH_VARIANT "asm"
# undef FL_ATOMICS_ASM
# define FL_ATOMICS_ASM 1

#else
/* No hand-written asm for this architecture: builtins only.  */
# define FL_BENCH_SLOT_BUILT 0
#endif

#endif /* FASTLOCK_STRESS_BENCH_VARIANT_H */
