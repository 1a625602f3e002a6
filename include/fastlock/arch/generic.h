/* <fastlock/arch/generic.h>: the arch layer on GCC/clang __atomic builtins.
 *
 * This is the reference every hand-written arch header is tested against
 * (the "builtin twin" of each operation), and the whole shim on a build
 * configured --with-atomics=builtin or on an architecture without asm
 * (fallback.h maps every operation an arch header leaves out onto these).
 *
 * The API, for every arch:
 *
 *   int32_t fl_load_relaxed(const int32_t *p), fl_load_acquire(p)
 *   void    fl_store_relaxed(int32_t *p, v), fl_store_release(p, v)
 *   int32_t fl_atomic_fetch_add_ORDER(int32_t *p, int32_t v)
 *           ORDER: relaxed, acquire, release, acq_rel; returns the old
 *           value; wraps modulo 2^32 (no undefined signed overflow).
 *   int     fl_atomic_add_negative_ORDER(int32_t *p, int32_t v)
 *           ORDER: acquire, release.  *p += v; nonzero iff the new value
 *           is negative.  The i386 "lock subl; js" shape (Howells and
 *           Arcangeli, linux-kernel, April 2001, rwsem-opt4 against
 *           00_rwsem-9).
 *   int32_t fl_atomic_cmpxchg_ORDER(int32_t *p, int32_t old, int32_t new)
 *           ORDER: relaxed, acquire, release, acq_rel; stores new if *p
 *           was old; returns what *p held (== old on success).  The
 *           ordering applies on success; a failed cmpxchg is relaxed.
 *   int32_t fl_atomic_xchg_ORDER(int32_t *p, int32_t v)
 *           ORDER: relaxed, acquire, release, acq_rel; returns the old value.
 *   int32_t fl_atomic_fetch_or_ORDER(int32_t *p, int32_t v)
 *   int32_t fl_atomic_fetch_and_ORDER(int32_t *p, int32_t v)
 *           ORDER: relaxed, acquire, release, acq_rel; *p |= v or *p &= v;
 *           returns the old value.
 *   void    fl_smp_mb(void)   orders all earlier loads and stores before
 *                             all later ones (store->load included);
 *           fl_smp_rmb(void)  earlier loads before later loads;
 *           fl_smp_wmb(void)  earlier stores before later stores.
 *
 * Memory orders mean what C11 means by them: an acquire operation keeps
 * every later load and store after it; a release operation keeps every
 * earlier load and store before it; acq_rel is both.
 *
 * Here every operation is named fl_generic_* (without the fl_atomic_ or
 * fl_ part).  <fastlock/arch/atomic.h> gives the public fl_* names the
 * arch header's asm where it has some, and these where it has none.  */
#ifndef FASTLOCK_ARCH_GENERIC_H
#define FASTLOCK_ARCH_GENERIC_H

#include <stdint.h>

#define FL_GENERIC_LOAD(name, order)                                           \
 static inline int32_t fl_generic_load_##name(const int32_t *p)                \
 {                                                                             \
  return __atomic_load_n(p, __ATOMIC_##order);                                 \
 }

#define FL_GENERIC_STORE(name, order)                                          \
 static inline void fl_generic_store_##name(int32_t *p, int32_t v)             \
 {                                                                             \
  __atomic_store_n(p, v, __ATOMIC_##order);                                    \
 }

#define FL_GENERIC_FETCH_ADD(name, order)                                      \
 static inline int32_t fl_generic_fetch_add_##name(int32_t *p, int32_t v)      \
 {                                                                             \
  return __atomic_fetch_add(p, v, __ATOMIC_##order);                           \
 }

/* The sign of old + v, as the CPU's sign flag gives it: the sum is
 * formed in uint32_t so that wrapping past INT32_MAX is defined.  What an
 * add_negative made of a fetch-add returns (x86's lock xadd shape, and
 * every derived one in fallback.h).  */
static inline int fl_sum_negative(int32_t old, int32_t v)
{
  return (int32_t)((uint32_t)old + (uint32_t)v) < 0;
}

/* The twin takes the other road: the new value from add-fetch (the
 * builtins wrap, as C11 atomics do), then its sign.  */
#define FL_GENERIC_ADD_NEGATIVE(name, order)                                   \
 static inline int fl_generic_add_negative_##name(int32_t *p, int32_t v)       \
 {                                                                             \
  return __atomic_add_fetch(p, v, __ATOMIC_##order) < 0;                       \
 }

#define FL_GENERIC_FETCH_OR(name, order)                                       \
 static inline int32_t fl_generic_fetch_or_##name(int32_t *p, int32_t v)       \
 {                                                                             \
  return __atomic_fetch_or(p, v, __ATOMIC_##order);                            \
 }

#define FL_GENERIC_FETCH_AND(name, order)                                      \
 static inline int32_t fl_generic_fetch_and_##name(int32_t *p, int32_t v)      \
 {                                                                             \
  return __atomic_fetch_and(p, v, __ATOMIC_##order);                           \
 }

#define FL_GENERIC_CMPXCHG(name, order)                                        \
 static inline int32_t fl_generic_cmpxchg_##name(int32_t *p, int32_t old,      \
                                                 int32_t new_value)            \
 {                                                                             \
  __atomic_compare_exchange_n(p, &old, new_value, 0, __ATOMIC_##order,         \
                              __ATOMIC_RELAXED);                               \
  return old;                                                                  \
 }

#define FL_GENERIC_XCHG(name, order)                                           \
 static inline int32_t fl_generic_xchg_##name(int32_t *p, int32_t v)           \
 {                                                                             \
  return __atomic_exchange_n(p, v, __ATOMIC_##order);                          \
 }

FL_GENERIC_LOAD(relaxed, RELAXED)
FL_GENERIC_LOAD(acquire, ACQUIRE)
FL_GENERIC_STORE(relaxed, RELAXED)
FL_GENERIC_STORE(release, RELEASE)
FL_GENERIC_FETCH_ADD(relaxed, RELAXED)
FL_GENERIC_FETCH_ADD(acquire, ACQUIRE)
FL_GENERIC_FETCH_ADD(release, RELEASE)
FL_GENERIC_FETCH_ADD(acq_rel, ACQ_REL)
FL_GENERIC_ADD_NEGATIVE(acquire, ACQUIRE)
FL_GENERIC_ADD_NEGATIVE(release, RELEASE)
FL_GENERIC_CMPXCHG(relaxed, RELAXED)
FL_GENERIC_CMPXCHG(acquire, ACQUIRE)
FL_GENERIC_CMPXCHG(release, RELEASE)
FL_GENERIC_CMPXCHG(acq_rel, ACQ_REL)
FL_GENERIC_XCHG(relaxed, RELAXED)
FL_GENERIC_XCHG(acquire, ACQUIRE)
FL_GENERIC_XCHG(release, RELEASE)
FL_GENERIC_XCHG(acq_rel, ACQ_REL)
FL_GENERIC_FETCH_OR(relaxed, RELAXED)
FL_GENERIC_FETCH_OR(acquire, ACQUIRE)
FL_GENERIC_FETCH_OR(release, RELEASE)
FL_GENERIC_FETCH_OR(acq_rel, ACQ_REL)
FL_GENERIC_FETCH_AND(relaxed, RELAXED)
FL_GENERIC_FETCH_AND(acquire, ACQUIRE)
FL_GENERIC_FETCH_AND(release, RELEASE)
FL_GENERIC_FETCH_AND(acq_rel, ACQ_REL)

#undef FL_GENERIC_LOAD
#undef FL_GENERIC_STORE
#undef FL_GENERIC_FETCH_ADD
#undef FL_GENERIC_ADD_NEGATIVE
#undef FL_GENERIC_CMPXCHG
#undef FL_GENERIC_XCHG
#undef FL_GENERIC_FETCH_OR
#undef FL_GENERIC_FETCH_AND

static inline void fl_generic_smp_mb(void)
{
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* C11 has no load-load or store-store fence: an acquire fence is the
 * weakest one that orders earlier loads before later loads, a release
 * fence the weakest that orders earlier stores before later stores.  */
static inline void fl_generic_smp_rmb(void)
{
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
}

static inline void fl_generic_smp_wmb(void)
{
  __atomic_thread_fence(__ATOMIC_RELEASE);
}

#endif /* FASTLOCK_ARCH_GENERIC_H */
