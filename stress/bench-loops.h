/* stress/bench-loops.h: the loops every implementation runs, generated
 * from its operations so that they are inlined (a fastpath measured
 * through a function pointer would be measuring the call).
 *
 * In each macro, T is the object's type and obj the pointer to it that
 * the operation expressions use; setup declares what a thread needs
 * besides the object (an MCS queue node) and may be empty.  */
#ifndef FASTLOCK_STRESS_BENCH_LOOPS_H
#define FASTLOCK_STRESS_BENCH_LOOPS_H

#include "bench.h"

/* The critical sections: readers load the protected value, writers and
 * spin-lock holders increment it.  Relaxed atomics only keep the loop
 * defined while a lock under test is broken; on every machine here they
 * are plain loads and stores.  */
#define BENCH_READ_CS                                                          \
 (t->sink += __atomic_load_n(&t->data->value, __ATOMIC_RELAXED))
#define BENCH_WRITE_CS                                                         \
 __atomic_store_n(&t->data->value,                                             \
                  __atomic_load_n(&t->data->value, __ATOMIC_RELAXED) + 1,      \
                  __ATOMIC_RELAXED)

/* A timed thread loop: lock, critical section, unlock until told to stop;
 * one acquisition in (sample_mask + 1) is timed, lock call only.  */
#define BENCH_TIMED_LOOP(fn, T, setup, lock, cs, unlock)                       \
 static void fn(void *obj_, struct bench_thread *t)                            \
 {                                                                             \
  T *obj = obj_;                                                               \
  uint64_t n = 0;                                                              \
  int phase = BENCH_WARMUP;                                                    \
  setup;                                                                       \
  while ((phase = bench_phase(t, phase, n)) != BENCH_STOP) {                   \
   if ((n & t->sample_mask) == 0) {                                            \
    uint64_t c0 = fl_cycles();                                                 \
    lock;                                                                      \
    bench_sample(t, fl_cycles() - c0);                                         \
   } else {                                                                    \
    lock;                                                                      \
   }                                                                           \
   cs;                                                                         \
   unlock;                                                                     \
   n++;                                                                        \
  }                                                                            \
  t->ops = n - t->warm_ops;                                                    \
 }

/* A timed loop of one operation with no acquisition to time (counters). */
#define BENCH_TIMED_OPS(fn, T, op)                                             \
 static void fn(void *obj_, struct bench_thread *t)                            \
 {                                                                             \
  T *obj = obj_;                                                               \
  uint64_t n = 0;                                                              \
  int phase = BENCH_WARMUP;                                                    \
  (void)obj;                                                                   \
  while ((phase = bench_phase(t, phase, n)) != BENCH_STOP) {                   \
   op;                                                                         \
   n++;                                                                        \
  }                                                                            \
  t->ops = n - t->warm_ops;                                                    \
 }

/* n uncontended lock/unlock pairs.  */
#define BENCH_PAIR_LOOP(fn, T, setup, lock, unlock)                            \
 static void fn(void *obj_, long n)                                            \
 {                                                                             \
  T *obj = obj_;                                                               \
  long i;                                                                      \
  setup;                                                                       \
  for (i = 0; i < n; i++) {                                                    \
   lock;                                                                       \
   unlock;                                                                     \
  }                                                                            \
 }

/* n calls of an expression yielding an int64_t, kept alive by summing. */
#define BENCH_VALUE_LOOP(fn, T, expr)                                          \
 static void fn(void *obj_, long n)                                            \
 {                                                                             \
  T *obj = obj_;                                                               \
  int64_t acc = 0;                                                             \
  long i;                                                                      \
  for (i = 0; i < n; i++)                                                      \
   acc += (expr);                                                              \
  bench_loop_sink = acc;                                                       \
 }

/* n calls of a statement.  */
#define BENCH_OP_LOOP(fn, T, op)                                               \
 static void fn(void *obj_, long n)                                            \
 {                                                                             \
  T *obj = obj_;                                                               \
  long i;                                                                      \
  (void)obj;                                                                   \
  for (i = 0; i < n; i++)                                                      \
   op;                                                                         \
 }

extern volatile int64_t bench_loop_sink;

/* All loops of an rwsem: id_reader, id_writer, id_read_pair,
 * id_write_pair.  */
#define BENCH_RWSEM_LOOPS(id, T, setup, rdlock, rdunlock, wrlock, wrunlock)    \
 BENCH_TIMED_LOOP(id##_reader, T, setup, rdlock, BENCH_READ_CS, rdunlock)      \
 BENCH_TIMED_LOOP(id##_writer, T, setup, wrlock, BENCH_WRITE_CS, wrunlock)     \
 BENCH_PAIR_LOOP(id##_read_pair, T, setup, rdlock, rdunlock)                   \
 BENCH_PAIR_LOOP(id##_write_pair, T, setup, wrlock, wrunlock)

#define BENCH_RWSEM_ENTRY(id, name, family, about, ref, unavail, T, init,      \
                          destroy)                                             \
 { name,                                                                       \
   family,                                                                     \
   about,                                                                      \
   BENCH_RWSEM,                                                                \
   ref,                                                                        \
   sizeof(T),                                                                  \
   unavail,                                                                    \
   init,                                                                       \
   destroy,                                                                    \
   { id##_reader, id##_writer },                                               \
   { id##_read_pair, id##_write_pair, NULL },                                  \
   NULL },

/* All loops of a spinlock or mutex: id_locker, id_pair.  */
#define BENCH_SPIN_LOOPS(id, T, setup, lock, unlock)                           \
 BENCH_TIMED_LOOP(id##_locker, T, setup, lock, BENCH_WRITE_CS, unlock)         \
 BENCH_PAIR_LOOP(id##_pair, T, setup, lock, unlock)

#define BENCH_SPIN_ENTRY(id, name, family, about, ref, unavail, T, init,       \
                         destroy)                                              \
 { name,                                                                       \
   family,                                                                     \
   about,                                                                      \
   BENCH_SPIN,                                                                 \
   ref,                                                                        \
   sizeof(T),                                                                  \
   unavail,                                                                    \
   init,                                                                       \
   destroy,                                                                    \
   { id##_locker, NULL },                                                      \
   { id##_pair, NULL, NULL },                                                  \
   NULL },

/* All loops of a counter: id_adder, id_add, id_read, id_sum.  */
#define BENCH_COUNTER_LOOPS(id, T, add, read, sum)                             \
 BENCH_TIMED_OPS(id##_adder, T, add)                                           \
 BENCH_OP_LOOP(id##_add, T, add)                                               \
 BENCH_VALUE_LOOP(id##_read, T, read)                                          \
 BENCH_VALUE_LOOP(id##_sum, T, sum)

#define BENCH_COUNTER_ENTRY(id, name, family, about, ref, unavail, T, init,    \
                            destroy, actual)                                   \
 { name,                                                                       \
   family,                                                                     \
   about,                                                                      \
   BENCH_COUNTER,                                                              \
   ref,                                                                        \
   sizeof(T),                                                                  \
   unavail,                                                                    \
   init,                                                                       \
   destroy,                                                                    \
   { id##_adder, NULL },                                                       \
   { id##_add, id##_read, id##_sum },                                          \
   actual },

/* The entry of an implementation this build does not have: it is listed,
 * and asking for it says why it is missing.  */
#define BENCH_MISSING_ENTRY(name, family, about, kind, unavail)                \
 { name,                                                                       \
   family,                                                                     \
   about,                                                                      \
   kind,                                                                       \
   0,                                                                          \
   0,                                                                          \
   unavail,                                                                    \
   NULL,                                                                       \
   NULL,                                                                       \
   { NULL, NULL },                                                             \
   { NULL, NULL, NULL },                                                       \
   NULL },

#endif /* FASTLOCK_STRESS_BENCH_LOOPS_H */
