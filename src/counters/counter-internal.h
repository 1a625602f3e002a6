/* src/counters/counter-internal.h: what the counter's library files share
 * with each other and with tests/test-counter*.c, which look inside.
 *
 * The count and the busy/gen protocol (the fields of struct
 * fl_counter_core are described in <fastlock/counter.h>; k is the core of
 * counter c, fl_counter_core(c)):
 *
 *   writer:  fl_counter_write_begin(k)   busy += 1, then a store barrier
 *            ... change slots and count ...
 *            fl_counter_write_end(k)     gen += 1, busy -= 1, both release
 *   reader:  wait for busy == 0; g = gen; read; read barrier;
 *            accept if busy == 0 and gen == g still, else read again.
 *
 * A reader that saw any store of a writer sees that writer's busy += 1
 * afterwards (store barrier against read barrier), so either busy is
 * still nonzero or the writer finished and gen moved: in both cases it
 * reads again.  Writers never wait for each other or for readers, so an
 * add (and a signal handler's add) never waits; only readers do.
 * Several writers may be between begin and end at once: the slot moves
 * are atomic exchanges or per-CPU restartable sections, and each writer
 * adds its own carry between the count's halves.  */
#ifndef FASTLOCK_COUNTERS_COUNTER_INTERNAL_H
#define FASTLOCK_COUNTERS_COUNTER_INTERNAL_H

#include <fastlock/counter.h>

#include <stdint.h>

/* While fl_counter_sum() runs, a per-CPU fold waits unless its slot has
 * reached this.  From there to INT32_MAX is room for 2^18 more adds of
 * up to FL_COUNTER_BATCH - 1, each by a different thread stopped between
 * its add and its fold: a slot cannot overflow.  */
#define FL_COUNTER_FORCE_FOLD (1 << 30)

static inline void fl_counter_write_begin(struct fl_counter_core *k)
{
  fl_atomic_fetch_add_relaxed(&k->busy, 1);
  /* A reader that sees any store of this change must see busy raised.  */
  fl_smp_wmb();
}

static inline void fl_counter_write_end(struct fl_counter_core *k)
{
  /* Release: the change is visible before gen moves, and gen moves before
   * busy drops, so a reader that sees busy back at 0 sees the new gen.  */
  fl_atomic_fetch_add_release(&k->gen, 1);
  fl_atomic_fetch_add_release(&k->busy, -1);
}

/* count += x.  FL_COUNTER_WIDE: one atomic add, visible whole.  Otherwise
 * only between write_begin and write_end: the low half first, then the
 * high half plus the carry out of the low one.  Each writer's carry comes
 * from its own atomic add, so concurrent writers lose none.  */
static inline void fl_counter_count_add(struct fl_counter_core *k, int64_t x)
{
#if FL_COUNTER_WIDE
  fl_counter_count_add_wide(k, x);
#else
  uint32_t lo = (uint32_t)(uint64_t)x;
  uint32_t hi = (uint32_t)((uint64_t)x >> 32);
  uint32_t old = (uint32_t)fl_atomic_fetch_add_relaxed(
      &k->count.half[FL_COUNTER_LO], (int32_t)lo);

  hi += old + lo < old;
  if (hi != 0)
    fl_atomic_fetch_add_relaxed(&k->count.half[FL_COUNTER_HI], (int32_t)hi);
#endif
}

/* The count as it is now; for !FL_COUNTER_WIDE only meaningful inside a
 * reader's busy/gen check.  */
static inline int64_t fl_counter_count_load(const struct fl_counter_core *k)
{
#if FL_COUNTER_WIDE
  return __atomic_load_n(&k->count.value, __ATOMIC_RELAXED);
#else
  uint32_t lo = (uint32_t)fl_load_relaxed(&k->count.half[FL_COUNTER_LO]);
  uint32_t hi = (uint32_t)fl_load_relaxed(&k->count.half[FL_COUNTER_HI]);
  return (int64_t)(((uint64_t)hi << 32) | lo);
#endif
}

/* count += x for an add that moves nothing out of a slot.  */
static inline void fl_counter_count_add_direct(struct fl_counter_core *k,
                                               int64_t x)
{
#if FL_COUNTER_WIDE
  fl_counter_count_add(k, x);
#else
  fl_counter_write_begin(k);
  fl_counter_count_add(k, x);
  fl_counter_write_end(k);
#endif
}

/* Reads count (and, with slots, every per-CPU slot) under busy/gen.  */
int64_t fl_counter_snapshot(const fl_counter_t *c, int with_slots);

/* FL_COUNTER_PERTHREAD_SIGSAFE, in src/counters/perthread.c.  */
int fl_counter_perthread_init(fl_counter_t *c);
void fl_counter_perthread_destroy(fl_counter_t *c);
void fl_counter_perthread_add(fl_counter_t *c, int32_t delta);
int64_t fl_counter_perthread_sum(fl_counter_t *c);

/* For the tests: threads holding a table of per-thread slots, and the
 * slot of counter c in the calling thread's table (NULL if it has none). */
int fl_counter_perthread_threads(void);
int32_t *fl_counter_perthread_slot_of_self(const fl_counter_t *c);

/* For the tests: the number of slots of a per-CPU counter, and whether a
 * PERCPU_RSEQ counter would run its restartable sections here.  */
uint32_t fl_counter_possible_cpus(void);
int fl_counter_rseq_usable(void);

#endif /* FASTLOCK_COUNTERS_COUNTER_INTERNAL_H */
