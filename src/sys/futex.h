/* src/sys/futex.h: the futex system call, as the locks' slowpaths need it.
 *
 * A futex word is a 32-bit integer that a waiter sleeps on while it holds
 * an expected value and a waker wakes.  Private futexes (the default) are
 * keyed by the process's virtual address and are cheaper; shared ones
 * (pshared != 0) are keyed by the underlying page, so they work between
 * processes that map the word at different addresses.
 *
 * Timeouts are absolute, on CLOCK_MONOTONIC or CLOCK_REALTIME, as the
 * pthread *_timed* calls take them: FUTEX_WAIT_BITSET is the one futex
 * operation that takes an absolute deadline, and FUTEX_CLOCK_REALTIME
 * makes it follow the wall clock (so a clock_settime moves the deadline,
 * as POSIX wants for CLOCK_REALTIME waits).  */
#ifndef FASTLOCK_SYS_FUTEX_H
#define FASTLOCK_SYS_FUTEX_H

#include <stdint.h>
#include <time.h>

/* Sleep while *word == expected, until woken, until abstime (NULL: no
 * deadline) on clock, or until a signal.  Returns 0 when woken (or
 * spuriously: callers re-check their condition), EAGAIN when *word was not
 * expected on entry, ETIMEDOUT once abstime has passed, EINTR on a signal,
 * EINVAL for a clock other than CLOCK_MONOTONIC/CLOCK_REALTIME or a
 * timespec whose tv_nsec is outside [0, 1e9).  */
int fl_futex_wait(const uint32_t *word, uint32_t expected, int pshared,
                  clockid_t clock, const struct timespec *abstime);

/* The same, with the sleep a cancellation point (asynchronous
 * cancellation during the system call only): for the waits POSIX makes
 * cancellation points, whose callers push a cleanup handler around it.
 * The code that can be unwound is built with unwind tables
 * (-fasynchronous-unwind-tables, Makefile.am).  */
int fl_futex_wait_cancellable(const uint32_t *word, uint32_t expected,
                              int pshared, clockid_t clock,
                              const struct timespec *abstime);

/* Wake up to count waiters on word (INT32_MAX: all).  Returns how many
 * were woken.  */
int fl_futex_wake(uint32_t *word, int count, int pshared);

#endif /* FASTLOCK_SYS_FUTEX_H */
