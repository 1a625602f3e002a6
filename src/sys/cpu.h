/* src/sys/cpu.h: what a spin loop and a benchmark ask of the CPU itself.
 *
 * fl_cpu_relax() (the spin-wait hint, also a compiler barrier) and
 * fl_cycles() (a cheap monotonic tick counter, FL_CYCLES_NAME saying what
 * it counts) come from the arch header of the CPU the compiler targets,
 * through <fastlock/arch/atomic.h>.  Where the arch has no cycle counter
 * a program may read, it is the monotonic clock in nanoseconds.  Ticks
 * are CPU cycles only on older x86 and ia64; the benchmark calibrates
 * them against CLOCK_MONOTONIC and prints the rate.  */
#ifndef FASTLOCK_SYS_CPU_H
#define FASTLOCK_SYS_CPU_H

#include <fastlock/arch/atomic.h>

#include <stdint.h>

#include "sys/clock.h"

#ifndef fl_cycles
static inline uint64_t fl_cycles(void)
{
  return (uint64_t)fl_clock_ns(CLOCK_MONOTONIC);
}
# define fl_cycles fl_cycles
# define FL_CYCLES_NAME "CLOCK_MONOTONIC ns"
#endif

#endif /* FASTLOCK_SYS_CPU_H */
