/* <fastlock/arch/fallback.h>: what the arch header left out.
 *
 * Included by <fastlock/arch/atomic.h> after the arch header.  Every
 * operation below is defined only if its name is not a macro yet: an
 * arch header marks what it provides by defining the name (to itself or
 * to an alias), and this file fills in the rest, in the manner of
 * liburcu's uatomic/generic.h and the kernel's atomic fallbacks.  */
#ifndef FASTLOCK_ARCH_FALLBACK_H
#define FASTLOCK_ARCH_FALLBACK_H

#include <stdint.h>

/* ---- The CPU ---- */

/* No spin hint: a compiler barrier, so that the loop re-reads memory.  */
#ifndef fl_cpu_relax
static inline void fl_cpu_relax(void)
{
  __asm__ __volatile__("" : : : "memory");
}
# define fl_cpu_relax fl_cpu_relax
#endif

/* The compiler knows the thread pointer on most targets.  */
#ifndef fl_arch_thread_pointer
static inline void *fl_arch_thread_pointer(void)
{
  return __builtin_thread_pointer();
}
# define fl_arch_thread_pointer fl_arch_thread_pointer
#endif

/* fl_cycles has no fallback here: the one there is, the monotonic clock,
 * is the library's own (src/sys/cpu.h), not an inline API.  */

/* ---- 64-bit, for the count of <fastlock/counter.h> ---- */

/* Only where the compiler's 64-bit atomics are lock-free: elsewhere the
 * counter keeps its count in two 32-bit halves.  */
#if !defined(fl_atomic_fetch_add64_relaxed)                                 \
    && defined(__GCC_ATOMIC_LLONG_LOCK_FREE) && __GCC_ATOMIC_LLONG_LOCK_FREE == 2
static inline int64_t fl_atomic_fetch_add64_relaxed(int64_t *p, int64_t v)
{
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
# define fl_atomic_fetch_add64_relaxed fl_atomic_fetch_add64_relaxed
#endif

#endif /* FASTLOCK_ARCH_FALLBACK_H */
