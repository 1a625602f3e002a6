/* stress/bench-fl.h: fastlock's benchmark entries, compiled once per
 * variant of the atomic shim by the bench-fl-N.c units, which define
 * FL_BENCH_SLOT (see bench-variant.h) and FL_BENCH_TABLE, the name of the
 * table this unit fills.  */
#ifndef FASTLOCK_STRESS_BENCH_FL_H
#define FASTLOCK_STRESS_BENCH_FL_H

#include "config.h"

#include "bench-variant.h"

#include "bench-loops.h"

#if FL_BENCH_SLOT_BUILT
# include <fastlock/rwsem.h>

static int rwsem_fair_init(void *obj)
{
  return fl_rwsem_init(obj, 0);
}

static int rwsem_bias_init(void *obj)
{
  return fl_rwsem_init(obj, FL_RWSEM_READ_BIAS);
}

static void rwsem_destroy(void *obj)
{
  BENCH_OK(fl_rwsem_destroy(obj));
}

BENCH_RWSEM_LOOPS(flb_rwsem, fl_rwsem_t, , BENCH_OK(fl_rwsem_down_read(obj)),
                  BENCH_OK(fl_rwsem_up_read(obj)),
                  BENCH_OK(fl_rwsem_down_write(obj)),
                  BENCH_OK(fl_rwsem_up_write(obj)))

# define FL_BENCH_RWSEM_ENTRIES                                                \
  BENCH_RWSEM_ENTRY(flb_rwsem, "fl-rwsem-" FL_BENCH_RWSEM_VARIANT, "fastlock", \
                    "fl_rwsem_t, fair (" FL_ARCH_ATOMICS_NAME ")", 0, NULL,    \
                    fl_rwsem_t, rwsem_fair_init, rwsem_destroy)                \
  BENCH_RWSEM_ENTRY(                                                           \
      flb_rwsem, "fl-rwsem-" FL_BENCH_RWSEM_VARIANT "-bias", "fastlock",       \
      "fl_rwsem_t, fair, FL_RWSEM_READ_BIAS (" FL_ARCH_ATOMICS_NAME ")", 0,    \
      NULL, fl_rwsem_t, rwsem_bias_init, rwsem_destroy)
#else
# define FL_BENCH_RWSEM_ENTRIES
#endif

#if FL_BENCH_SLOT_BUILT && FL_BENCH_ALL_KINDS
# include <fastlock/spinlock.h>

/* X(short name, type): the three spinlocks share their API's shape.  */
# define FL_BENCH_SPINLOCKS(X)                                                 \
  X(spin, fl_spinlock_t, "test-and-test-and-set with backoff")                 \
  X(ticket, fl_ticketlock_t, "ticket lock")                                    \
  X(qspin, fl_qspinlock_t, "queued lock")

# define FL_BENCH_SPIN_ADAPTERS(s, T, about)                                   \
  static int flb_##s##_init(void *obj)                                         \
  {                                                                            \
   return fl_##s##_init(obj, 0);                                               \
  }                                                                            \
  static void flb_##s##_destroy(void *obj)                                     \
  {                                                                            \
   BENCH_OK(fl_##s##_destroy(obj));                                            \
  }                                                                            \
  BENCH_SPIN_LOOPS(flb_##s, T, , BENCH_OK(fl_##s##_lock(obj)),                 \
                   BENCH_OK(fl_##s##_unlock(obj)))
FL_BENCH_SPINLOCKS(FL_BENCH_SPIN_ADAPTERS)

# define FL_BENCH_SPIN_ENTRY(s, T, about)                                      \
  BENCH_SPIN_ENTRY(flb_##s, "fl-" #s "-" FL_BENCH_VARIANT, "fastlock",         \
                   #T ", " about " (" FL_ARCH_ATOMICS_NAME ")", 0, NULL, T,    \
                   flb_##s##_init, flb_##s##_destroy)
# define FL_BENCH_SPIN_ENTRIES FL_BENCH_SPINLOCKS(FL_BENCH_SPIN_ENTRY)
#else
# define FL_BENCH_SPIN_ENTRIES
#endif

#if FL_BENCH_SLOT_BUILT && FL_BENCH_ALL_KINDS
# include <fastlock/counter.h>

static void counter_destroy(void *obj)
{
  BENCH_OK(fl_counter_destroy(obj));
}

static const char *counter_actual(void *obj)
{
  return fl_counter_strategy_name(fl_counter_strategy(obj));
}

BENCH_COUNTER_LOOPS(flb_counter, fl_counter_t, (void)fl_counter_add(obj, 1),
                    fl_counter_read(obj), fl_counter_sum(obj))

/* X(short name, strategy, what it is): the strategies whose add is an
 * operation of the shim, named with the variant ...  */
# define FL_BENCH_SHIM_COUNTERS(X)                                             \
  X(shared, FL_COUNTER_SHARED, "one atomic word")                              \
  X(percpu, FL_COUNTER_PERCPU_ATOMIC, "per-CPU slots, atomic add")
/* ... and those no shim variant changes (a plain increment; rseq has its
 * own asm), entries of the primary slot only.  */
# if FL_BENCH_PRIMARY
#  define FL_BENCH_OWN_COUNTERS(X)                                             \
   X(sigsafe, FL_COUNTER_PERTHREAD_SIGSAFE,                                    \
     "per-thread slot, signals blocked")                                       \
   X(rseq, FL_COUNTER_PERCPU_RSEQ, "per-CPU slots, restartable sequence")
# else
#  define FL_BENCH_OWN_COUNTERS(X)
# endif

# define FL_BENCH_COUNTER_INIT(s, strategy, about)                             \
  static int flb_counter_##s##_init(void *obj)                                 \
  {                                                                            \
   return fl_counter_init(obj, strategy);                                      \
  }
FL_BENCH_SHIM_COUNTERS(FL_BENCH_COUNTER_INIT)
FL_BENCH_OWN_COUNTERS(FL_BENCH_COUNTER_INIT)

# define FL_BENCH_COUNTER_ENTRY(name, s, strategy, about)                      \
  BENCH_COUNTER_ENTRY(flb_counter, name, "fastlock",                           \
                      "fl_counter_t, " #strategy ": " about, 0, NULL,          \
                      fl_counter_t, flb_counter_##s##_init, counter_destroy,   \
                      counter_actual)
# define FL_BENCH_SHIM_COUNTER_ENTRY(s, strategy, about)                       \
  FL_BENCH_COUNTER_ENTRY("fl-counter-" #s "-" FL_BENCH_VARIANT, s, strategy,   \
                         about)
# define FL_BENCH_OWN_COUNTER_ENTRY(s, strategy, about)                        \
  FL_BENCH_COUNTER_ENTRY("fl-counter-" #s, s, strategy, about)
# define FL_BENCH_COUNTER_ENTRIES                                              \
  FL_BENCH_SHIM_COUNTERS(FL_BENCH_SHIM_COUNTER_ENTRY)                          \
  FL_BENCH_OWN_COUNTERS(FL_BENCH_OWN_COUNTER_ENTRY)
#else
# define FL_BENCH_COUNTER_ENTRIES
#endif

const struct bench_impl FL_BENCH_TABLE[] = {
  FL_BENCH_RWSEM_ENTRIES FL_BENCH_SPIN_ENTRIES FL_BENCH_COUNTER_ENTRIES{
      .name = NULL },
};

#endif /* FASTLOCK_STRESS_BENCH_FL_H */
