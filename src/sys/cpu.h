/* src/sys/cpu.h: the two things a spin loop and a benchmark ask of the
 * CPU itself: a hint that we are spinning, and a cheap cycle counter.
 * Both depend on the compiler's target, not on a configure choice, so they
 * are picked from the compiler's own macros.  */
#ifndef FASTLOCK_SYS_CPU_H
#define FASTLOCK_SYS_CPU_H

#include <stdint.h>

#include "sys/clock.h"

/* fl_cpu_relax: tell the core we are in a spin-wait loop, so that it gives
 * the pipeline to a sibling hyperthread, saves power and does not
 * speculate a flood of loads that would be cancelled when the lock word
 * changes.  It also is a compiler barrier, so the loop re-reads memory.  */
static inline void fl_cpu_relax(void)
{
#if defined(__i386__) || defined(__x86_64__)
  __asm__ __volatile__("pause" : : : "memory");
#elif defined(__aarch64__)
  __asm__ __volatile__("yield" : : : "memory");
#elif defined(__powerpc__)
  /* SMT priority low, then back to medium (no-ops on cores without SMT). */
  __asm__ __volatile__("or 1,1,1\n\tor 2,2,2" : : : "memory");
#elif defined(__ia64__)
  __asm__ __volatile__("hint @pause" : : : "memory");
#else
  /* MIPS32 has no spin hint every core implements (PAUSE is MIPS32r2 with
   * the MT ASE only): a compiler barrier is what is left.  */
  __asm__ __volatile__("" : : : "memory");
#endif
}

/* fl_cycles: a fast, monotonic tick counter for timing short intervals,
 * and FL_CYCLES_NAME, what it counts.  Ticks are CPU cycles only for
 * rdtsc on older x86 (modern TSCs tick at a constant nominal rate) and
 * ar.itc; the PowerPC timebase and the aarch64 virtual counter tick at a
 * fixed, lower frequency.  The benchmark calibrates against
 * CLOCK_MONOTONIC and prints the rate.  */
static inline uint64_t fl_cycles(void)
{
#if defined(__x86_64__) || defined(__i386__)
  uint32_t lo, hi;
  __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
  return ((uint64_t)hi << 32) | lo;
#elif defined(__aarch64__)
  uint64_t v;
  /* isb: do not let the counter read run ahead of earlier instructions. */
  __asm__ __volatile__("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
  return v;
#elif defined(__powerpc64__)
  uint64_t v;
  __asm__ __volatile__("mfspr %0, 268" : "=r"(v));
  return v;
#elif defined(__powerpc__)
  /* 32-bit: read upper, lower, upper again; retry if the lower half
   * wrapped between the two reads of the upper half.  */
  uint32_t hi, lo, hi2;
  do {
    __asm__ __volatile__("mfspr %0, 269\n\tmfspr %1, 268\n\tmfspr %2, 269"
                         : "=r"(hi), "=r"(lo), "=r"(hi2));
  } while (hi != hi2);
  return ((uint64_t)hi << 32) | lo;
#elif defined(__ia64__)
  uint64_t v;
  __asm__ __volatile__("mov %0=ar.itc" : "=r"(v) : : "memory");
  return v;
#else
  /* MIPS: rdhwr $2 (CC) is only readable where the kernel enables it and
   * counts at half the pipeline clock on many cores: use the clock.  */
  return (uint64_t)fl_clock_ns(CLOCK_MONOTONIC);
#endif
}

#if defined(__x86_64__) || defined(__i386__)
# define FL_CYCLES_NAME "rdtsc"
#elif defined(__aarch64__)
# define FL_CYCLES_NAME "cntvct_el0"
#elif defined(__powerpc__)
# define FL_CYCLES_NAME "timebase"
#elif defined(__ia64__)
# define FL_CYCLES_NAME "ar.itc"
#else
# define FL_CYCLES_NAME "CLOCK_MONOTONIC ns"
#endif

#endif /* FASTLOCK_SYS_CPU_H */
