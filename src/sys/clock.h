/* src/sys/clock.h: time arithmetic for deadlines and measurements.  */
#ifndef FASTLOCK_SYS_CLOCK_H
#define FASTLOCK_SYS_CLOCK_H

#include <stdint.h>
#include <time.h>

#define FL_NSEC_PER_SEC 1000000000L

/* A timespec the kernel would accept: tv_nsec in [0, 1e9).  */
static inline int fl_timespec_valid(const struct timespec *ts)
{
  return ts->tv_nsec >= 0 && ts->tv_nsec < FL_NSEC_PER_SEC;
}

/* Nanoseconds on clock (CLOCK_MONOTONIC for measurements).  */
static inline int64_t fl_clock_ns(clockid_t clock)
{
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (int64_t)ts.tv_sec * FL_NSEC_PER_SEC + ts.tv_nsec;
}

/* The absolute deadline ns nanoseconds from now on clock.  */
static inline struct timespec fl_deadline_after_ns(clockid_t clock, int64_t ns)
{
  int64_t t = fl_clock_ns(clock) + ns;
  struct timespec ts;
  ts.tv_sec = (time_t)(t / FL_NSEC_PER_SEC);
  ts.tv_nsec = (long)(t % FL_NSEC_PER_SEC);
  return ts;
}

#endif /* FASTLOCK_SYS_CLOCK_H */
