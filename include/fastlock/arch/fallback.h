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
 * belongs to the library, not to an inline API.  */

/* ---- Atomics: loads, stores and fences ---- */

#ifndef fl_load_relaxed
# define fl_load_relaxed fl_generic_load_relaxed
#endif
#ifndef fl_load_acquire
# define fl_load_acquire fl_generic_load_acquire
#endif
#ifndef fl_store_relaxed
# define fl_store_relaxed fl_generic_store_relaxed
#endif
#ifndef fl_store_release
# define fl_store_release fl_generic_store_release
#endif
#ifndef fl_smp_mb
# define fl_smp_mb fl_generic_smp_mb
#endif
#ifndef fl_smp_rmb
# define fl_smp_rmb fl_generic_smp_rmb
#endif
#ifndef fl_smp_wmb
# define fl_smp_wmb fl_generic_smp_wmb
#endif

/* ---- Atomics derived from the arch's own ---- */

/* fetch_or and fetch_and from the arch's cmpxchg of the same order: a
 * loop whose first load is plain, since only the exchange that succeeds
 * needs the order (a failed cmpxchg is relaxed).  It runs only where the
 * arch header has a cmpxchg in asm and no better form of the operation
 * (x86, whose lock or/and cannot return the old value; ia64; MIPS without
 * LL/SC).  */
#define FL_FALLBACK_CMPXCHG_LOOP(op, order, expr)                              \
 static inline int32_t fl_atomic_##op##_##order(int32_t *p, int32_t v)         \
 {                                                                             \
  int32_t old, seen = fl_load_relaxed(p);                                      \
  do {                                                                         \
   old = seen;                                                                 \
   seen = fl_atomic_cmpxchg_##order(p, old, expr);                             \
  } while (seen != old);                                                       \
  return old;                                                                  \
 }

#if !defined(fl_atomic_fetch_or_relaxed) && defined(fl_atomic_cmpxchg_relaxed)
FL_FALLBACK_CMPXCHG_LOOP(fetch_or, relaxed, old | v)
# define fl_atomic_fetch_or_relaxed fl_atomic_fetch_or_relaxed
#endif
#if !defined(fl_atomic_fetch_or_acquire) && defined(fl_atomic_cmpxchg_acquire)
FL_FALLBACK_CMPXCHG_LOOP(fetch_or, acquire, old | v)
# define fl_atomic_fetch_or_acquire fl_atomic_fetch_or_acquire
#endif
#if !defined(fl_atomic_fetch_or_release) && defined(fl_atomic_cmpxchg_release)
FL_FALLBACK_CMPXCHG_LOOP(fetch_or, release, old | v)
# define fl_atomic_fetch_or_release fl_atomic_fetch_or_release
#endif
#if !defined(fl_atomic_fetch_or_acq_rel) && defined(fl_atomic_cmpxchg_acq_rel)
FL_FALLBACK_CMPXCHG_LOOP(fetch_or, acq_rel, old | v)
# define fl_atomic_fetch_or_acq_rel fl_atomic_fetch_or_acq_rel
#endif
#if !defined(fl_atomic_fetch_and_relaxed) && defined(fl_atomic_cmpxchg_relaxed)
FL_FALLBACK_CMPXCHG_LOOP(fetch_and, relaxed, old &v)
# define fl_atomic_fetch_and_relaxed fl_atomic_fetch_and_relaxed
#endif
#if !defined(fl_atomic_fetch_and_acquire) && defined(fl_atomic_cmpxchg_acquire)
FL_FALLBACK_CMPXCHG_LOOP(fetch_and, acquire, old &v)
# define fl_atomic_fetch_and_acquire fl_atomic_fetch_and_acquire
#endif
#if !defined(fl_atomic_fetch_and_release) && defined(fl_atomic_cmpxchg_release)
FL_FALLBACK_CMPXCHG_LOOP(fetch_and, release, old &v)
# define fl_atomic_fetch_and_release fl_atomic_fetch_and_release
#endif
#if !defined(fl_atomic_fetch_and_acq_rel) && defined(fl_atomic_cmpxchg_acq_rel)
FL_FALLBACK_CMPXCHG_LOOP(fetch_and, acq_rel, old &v)
# define fl_atomic_fetch_and_acq_rel fl_atomic_fetch_and_acq_rel
#endif

#undef FL_FALLBACK_CMPXCHG_LOOP

/* ---- Atomics the arch header has not: the builtins ---- */

#ifndef fl_atomic_fetch_add_relaxed
# define fl_atomic_fetch_add_relaxed fl_generic_fetch_add_relaxed
#endif
#ifndef fl_atomic_fetch_add_acquire
# define fl_atomic_fetch_add_acquire fl_generic_fetch_add_acquire
#endif
#ifndef fl_atomic_fetch_add_release
# define fl_atomic_fetch_add_release fl_generic_fetch_add_release
#endif
#ifndef fl_atomic_fetch_add_acq_rel
# define fl_atomic_fetch_add_acq_rel fl_generic_fetch_add_acq_rel
#endif
#ifndef fl_atomic_cmpxchg_relaxed
# define fl_atomic_cmpxchg_relaxed fl_generic_cmpxchg_relaxed
#endif
#ifndef fl_atomic_cmpxchg_acquire
# define fl_atomic_cmpxchg_acquire fl_generic_cmpxchg_acquire
#endif
#ifndef fl_atomic_cmpxchg_release
# define fl_atomic_cmpxchg_release fl_generic_cmpxchg_release
#endif
#ifndef fl_atomic_cmpxchg_acq_rel
# define fl_atomic_cmpxchg_acq_rel fl_generic_cmpxchg_acq_rel
#endif
#ifndef fl_atomic_xchg_relaxed
# define fl_atomic_xchg_relaxed fl_generic_xchg_relaxed
#endif
#ifndef fl_atomic_xchg_acquire
# define fl_atomic_xchg_acquire fl_generic_xchg_acquire
#endif
#ifndef fl_atomic_xchg_release
# define fl_atomic_xchg_release fl_generic_xchg_release
#endif
#ifndef fl_atomic_xchg_acq_rel
# define fl_atomic_xchg_acq_rel fl_generic_xchg_acq_rel
#endif
#ifndef fl_atomic_fetch_or_relaxed
# define fl_atomic_fetch_or_relaxed fl_generic_fetch_or_relaxed
#endif
#ifndef fl_atomic_fetch_or_acquire
# define fl_atomic_fetch_or_acquire fl_generic_fetch_or_acquire
#endif
#ifndef fl_atomic_fetch_or_release
# define fl_atomic_fetch_or_release fl_generic_fetch_or_release
#endif
#ifndef fl_atomic_fetch_or_acq_rel
# define fl_atomic_fetch_or_acq_rel fl_generic_fetch_or_acq_rel
#endif
#ifndef fl_atomic_fetch_and_relaxed
# define fl_atomic_fetch_and_relaxed fl_generic_fetch_and_relaxed
#endif
#ifndef fl_atomic_fetch_and_acquire
# define fl_atomic_fetch_and_acquire fl_generic_fetch_and_acquire
#endif
#ifndef fl_atomic_fetch_and_release
# define fl_atomic_fetch_and_release fl_generic_fetch_and_release
#endif
#ifndef fl_atomic_fetch_and_acq_rel
# define fl_atomic_fetch_and_acq_rel fl_generic_fetch_and_acq_rel
#endif

/* add_negative from whichever fetch_add of the same order is now
 * defined: the sign of old + v.  */
#ifndef fl_atomic_add_negative_acquire
static inline int fl_atomic_add_negative_acquire(int32_t *p, int32_t v)
{
  return fl_sum_negative(fl_atomic_fetch_add_acquire(p, v), v);
}
# define fl_atomic_add_negative_acquire fl_atomic_add_negative_acquire
#endif
#ifndef fl_atomic_add_negative_release
static inline int fl_atomic_add_negative_release(int32_t *p, int32_t v)
{
  return fl_sum_negative(fl_atomic_fetch_add_release(p, v), v);
}
# define fl_atomic_add_negative_release fl_atomic_add_negative_release
#endif

#ifndef FL_ARCH_ATOMICS_NAME
# define FL_ARCH_ATOMICS_NAME "builtin"
#endif

/* ---- 64-bit, for the count of <fastlock/counter.h> ---- */

/* Only where the compiler's 64-bit atomics are lock-free: elsewhere the
 * counter keeps its count in two 32-bit halves.  */
#if !defined(fl_atomic_fetch_add64_relaxed)                                    \
    && defined(__GCC_ATOMIC_LLONG_LOCK_FREE)                                   \
    && __GCC_ATOMIC_LLONG_LOCK_FREE == 2
static inline int64_t fl_atomic_fetch_add64_relaxed(int64_t *p, int64_t v)
{
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
# define fl_atomic_fetch_add64_relaxed fl_atomic_fetch_add64_relaxed
#endif

#endif /* FASTLOCK_ARCH_FALLBACK_H */
