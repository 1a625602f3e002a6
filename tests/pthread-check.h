/* tests/pthread-check.h: what the drop-in's tests share.  */
#ifndef FASTLOCK_TESTS_PTHREAD_CHECK_H
#define FASTLOCK_TESTS_PTHREAD_CHECK_H

#include "fl-check.h"

#include <pthread.h>
#include <stddef.h>
#include <time.h>

/* Fail unless the function at fn was bound to libfastlock-pthread (the
 * test would otherwise be testing glibc).  */
void pt_assert_ours(void *fn, const char *name);
#define PT_ASSERT_OURS(f) pt_assert_ours((void *)(f), #f)

/* Run fn(arg) in a new thread and return what it returned, cast to int. */
int pt_in_thread(void *(*fn)(void *), void *arg);

/* A fresh MAP_SHARED | MAP_ANONYMOUS mapping of size bytes, zero-filled. */
void *pt_shared(size_t size);

/* Fork a child that runs fn(arg) and exits with its result; wait for it
 * (at most 30 s, then kill it) and return its exit status, or -1 when it
 * did not exit normally.  */
int pt_in_child(int (*fn)(void *), void *arg);

/* Why a cancelled thread cannot be unwound on this machine, or NULL.
 * Probed with glibc's own cancellation point (a read of an empty pipe),
 * in a child: under qemu-ppc (32-bit PowerPC) glibc's pthread_cancel
 * aborts the process, the unwinder not finding its way out of the
 * signal frame QEMU builds.  */
const char *pt_no_cancel_unwind(void);

/* Whether a program runs its cases of a kind (e.g. "robust"): 1 where
 * why is NULL, else 0 after a "SKIP: " line saying that it leaves them
 * out, and why.  */
int pt_cases_run(const char *cases, const char *why);

/* A deadline ms milliseconds from now on clock.  */
struct timespec pt_after_ms(clockid_t clock, long ms);

#endif /* FASTLOCK_TESTS_PTHREAD_CHECK_H */
