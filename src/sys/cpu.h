/* src/sys/cpu.h: what a spin loop and a benchmark ask of the CPU itself.
 *
 * fl_cpu_relax() (the spin-wait hint, also a compiler barrier) and
 * fl_cycles() (a cheap monotonic tick counter, FL_CYCLES_NAME saying what
 * it counts) come from the arch header of the CPU the compiler targets,
 * through <fastlock/arch/atomic.h>; fl_cpu_prefetch_write() (a hint
 * before a locked instruction, x86-64 only) is here, internal.  Where
 * the arch has no cycle counter a program may read, it is the monotonic
 * clock in nanoseconds.  Ticks
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

/* fl_cpu_prefetch_write(p): ask for the cache line of p for writing
 * (PREFETCHW).  For a path that reads a lock's line and then makes a
 * locked read-modify-write on it: under contention the read alone
 * fetches the line shared and the locked instruction then fetches it
 * again, for ownership; asking for ownership first makes it one trip.  A
 * hint: it changes no value and orders nothing.  Only where
 * fl_cpu_has_prefetch_write() said yes (CPUID 0x80000001, ECX bit 8,
 * PRFCHW: AMD's 3DNowPrefetch, Intel's since Broadwell; older 64-bit
 * Intel CPUs lack it, and the manuals do not say they ignore it); a
 * CPUID, so ask once.  Not for a spin loop, where it would take the line
 * from its holder.  x86-64 only (elsewhere unmeasured):
 * FL_CPU_PREFETCH_WRITE is 0 elsewhere, so that a caller's test of what
 * it asked compiles away.  */
#if defined(__x86_64__)
# include <cpuid.h>
# define FL_CPU_PREFETCH_WRITE 1

static inline void fl_cpu_prefetch_write(const void *p)
{
  __asm__ __volatile__("prefetchw %0" : : "m"(*(const char *)p));
}

static inline int fl_cpu_has_prefetch_write(void)
{
  unsigned a, b, c, d;

  return __get_cpuid(0x80000001u, &a, &b, &c, &d) && (c & bit_PRFCHW) != 0;
}
#else
# define FL_CPU_PREFETCH_WRITE 0

static inline void fl_cpu_prefetch_write(const void *p)
{
  (void)p;
}

static inline int fl_cpu_has_prefetch_write(void)
{
  return 0;
}
#endif

#endif /* FASTLOCK_SYS_CPU_H */
