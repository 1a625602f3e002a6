/* src/spinlock/wait.h: how the spinlock slowpaths wait, and the clock that
 * times them.
 *
 * A waiter spins with fl_cpu_relax while the lock makes progress.  Two
 * things can stop a spinlock with more threads than CPUs, and both are
 * timed here rather than counted in loop iterations, since fl_cpu_relax
 * takes anything from nothing (QEMU) to 140 cycles (Skylake's pause):
 *
 *   - the holder is not running: nothing changes in the word for
 *     FL_SPIN_YIELD_AFTER, and the waiter yields its CPU, which may be the
 *     one the holder needs;
 *   - a FIFO lock's next waiter is not running: it does not show itself
 *     for fl_spin_patience, and the fair locks pass it over.
 *
 * A running waiter notices a grant within a few hundred nanoseconds, and
 * the scheduler preempts in milliseconds: patience sits between, at 8 to
 * 16 microseconds, so that a running waiter is seldom taken for a
 * preempted one (which costs it only its place in the queue), and a
 * preempted one costs the others little.  On a uniprocessor build a
 * waiter yields at once: whoever it waits for cannot run until it
 * stops.  */
#ifndef FASTLOCK_SPINLOCK_WAIT_H
#define FASTLOCK_SPINLOCK_WAIT_H

#include <stdint.h>

#include <fastlock/config.h>

#include "sys/cpu.h"

/* A coarse clock: fl_cycles divided down to units of between half and one
 * microsecond, calibrated against CLOCK_MONOTONIC by the first call (which
 * takes about 50 us).  It wraps: compare the signed difference of two
 * readings, never the readings.  */
uint32_t fl_spin_now(void);

/* Units of fl_spin_now after which a waiter that should be spinning, but
 * has not shown itself, is taken to be preempted.  A variable, so that the
 * tests can make it infinite (INT32_MAX) and see exact FIFO order even
 * where threads do not all run at once (valgrind, QEMU); read and written
 * with the shim's relaxed accesses.  */
#define FL_SPIN_PATIENCE 16
extern int32_t fl_spin_patience;

/* Units without progress after which a waiter yields its CPU (-1: at
 * once).  */
#if FL_UNIPROCESSOR
# define FL_SPIN_YIELD_AFTER (-1)
#else
# define FL_SPIN_YIELD_AFTER 48
#endif

/* (int32_t)(later - earlier) > units, in fl_spin_now's wrapping units.  */
static inline int fl_spin_elapsed(uint32_t earlier, uint32_t later,
                                  int32_t units)
{
  return (int32_t)(later - earlier) > units;
}

/* What a waiter watches for progress: a value taken from the lock word,
 * and when it last changed.  */
struct fl_spin_watch {
  uint32_t value;
  uint32_t since;
};

/* Start watching value as of now.  A value the word can never give (say
 * UINT32_MAX for a masked one) makes the first one read start the clock.  */
static inline void fl_spin_watch_start(struct fl_spin_watch *w, uint32_t value)
{
  w->value = value;
  w->since = fl_spin_now();
}

/* The units since the watched value last changed, given its value now
 * (0 if it just did).  */
static inline int32_t fl_spin_watch(struct fl_spin_watch *w, uint32_t value,
                                    uint32_t now)
{
  if (value != w->value) {
    w->value = value;
    w->since = now;
  }
  return (int32_t)(now - w->since);
}

/* n fl_cpu_relax in a row: a waiter's pause between two reads.  */
static inline void fl_spin_relax(uint32_t n)
{
  while (n-- > 0)
    fl_cpu_relax();
}

#endif /* FASTLOCK_SPINLOCK_WAIT_H */
