/* src/spinlock/wait.c: the spinlocks' coarse clock.  */
#include "config.h"

#include <fastlock/arch/atomic.h>

#include "spinlock/wait.h"
#include "sys/annotate.h"
#include "sys/clock.h"
#include "sys/cpu.h"

int32_t fl_spin_patience = FL_SPIN_PATIENCE;

/* 1 + log2 of the fl_cycles ticks in one unit; 0 until calibrated.  */
static int32_t fl_spin_shift1;

/* Count ticks over 50 us of CLOCK_MONOTONIC, and pick the power of two
 * nearest below the ticks per microsecond as the unit.  Threads that race
 * here may measure units that differ by two times (a counter whose rate
 * is near a power of two per microsecond, as QEMU's PowerPC timebase is),
 * so the first result stored is everyone's: a unit that changed while
 * waiters compare times would make a beat from long ago look recent.  */
static int32_t fl_spin_calibrate(void)
{
  uint64_t c0 = fl_cycles();
  int64_t n0 = fl_clock_ns(CLOCK_MONOTONIC), n;
  uint64_t per_us;
  int32_t shift = 0, seen;

  do
    n = fl_clock_ns(CLOCK_MONOTONIC);
  while (n - n0 < 50000);
  per_us = (fl_cycles() - c0) * 1000 / (uint64_t)(n - n0);
  while (shift < 62 && (per_us >> (shift + 1)) != 0)
    shift++;
  /* Written once, read by all: synchronisation, not data.  */
  FL_VG_HIDE(&fl_spin_shift1, sizeof fl_spin_shift1);
  seen = fl_atomic_cmpxchg_relaxed(&fl_spin_shift1, 0, shift + 1);
  return seen == 0 ? shift + 1 : seen;
}

uint32_t fl_spin_now(void)
{
  int32_t shift1 = fl_load_relaxed(&fl_spin_shift1);

  if (shift1 == 0)
    shift1 = fl_spin_calibrate();
  return (uint32_t)(fl_cycles() >> (shift1 - 1));
}
