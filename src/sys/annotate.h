/* src/sys/annotate.h: telling helgrind, drd and ThreadSanitizer what a
 * fastlock primitive is.
 *
 * None of the three tools can see a lock built from atomic instructions
 * and futexes: they know pthread's functions, not ours.  Without help they
 * report every access the lock protects as a race, and every access to
 * the lock word itself.  Each primitive therefore says, through these
 * macros, when it is created and destroyed and when it is acquired and
 * released (shared or exclusive, tried or not), and hides its own words
 * from the Valgrind tools, whose happens-before view of them is wrong.
 *
 * Valgrind (helgrind, drd): only on a build configured with
 * --enable-annotations (FL_ANNOTATIONS), since each client request costs a
 * few instructions on the fastpath even outside Valgrind.  drd.h
 * understands helgrind's rwlock requests when helgrind.h is included
 * first, so one set of requests serves both tools.
 *
 * ThreadSanitizer: whenever the compiler builds with -fsanitize=thread;
 * the __tsan_mutex_* calls then exist in the runtime.  Otherwise every
 * macro here compiles to nothing.  */
#ifndef FASTLOCK_SYS_ANNOTATE_H
#define FASTLOCK_SYS_ANNOTATE_H

#include <fastlock/config.h>

#if defined(__SANITIZE_THREAD__)
# define FL_TSAN 1
#elif defined(__has_feature)
# if __has_feature(thread_sanitizer)
#  define FL_TSAN 1
# endif
#endif
#ifndef FL_TSAN
# define FL_TSAN 0
#endif

#if FL_ANNOTATIONS
# include <valgrind/helgrind.h>
# include <valgrind/drd.h>
# define FL_VG_RWLOCK_CREATE(l) ANNOTATE_RWLOCK_CREATE(l)
# define FL_VG_RWLOCK_DESTROY(l) ANNOTATE_RWLOCK_DESTROY(l)
# define FL_VG_RWLOCK_ACQUIRED(l, is_w) ANNOTATE_RWLOCK_ACQUIRED(l, is_w)
# define FL_VG_RWLOCK_RELEASED(l, is_w) ANNOTATE_RWLOCK_RELEASED(l, is_w)
/* Accesses to the lock's own words are synchronised by the atomics the
 * tools cannot model: hide them from both.  (drd's request is named
 * directly: its ANNOTATE_BENIGN_RACE_SIZED clashes with helgrind's.)  */
# define FL_VG_HIDE(addr, size)                                             \
  do {                                                                      \
    VALGRIND_HG_DISABLE_CHECKING(addr, size);                               \
    VALGRIND_DO_CLIENT_REQUEST_STMT(VG_USERREQ__DRD_START_SUPPRESSION,      \
                                    addr, size, 0, 0, 0);                   \
  } while (0)
#else
# define FL_VG_RWLOCK_CREATE(l) ((void)0)
# define FL_VG_RWLOCK_DESTROY(l) ((void)0)
# define FL_VG_RWLOCK_ACQUIRED(l, is_w) ((void)0)
# define FL_VG_RWLOCK_RELEASED(l, is_w) ((void)0)
# define FL_VG_HIDE(addr, size) ((void)0)
#endif

#if FL_TSAN
# include <sanitizer/tsan_interface.h>
# define FL_TSAN_READ __tsan_mutex_read_lock
# define FL_TSAN_TRY __tsan_mutex_try_lock
# define FL_TSAN_TRY_FAILED __tsan_mutex_try_lock_failed
/* A zero-filled lock is valid without a constructor, like a static
 * pthread initializer: tell TSan so it accepts a first use with no create. */
# define FL_TSAN_CREATE(l) __tsan_mutex_create((void *)(l), __tsan_mutex_linker_init)
# define FL_TSAN_DESTROY(l) __tsan_mutex_destroy((void *)(l), 0)
# define FL_TSAN_PRE_LOCK(l, f) __tsan_mutex_pre_lock((void *)(l), f)
# define FL_TSAN_POST_LOCK(l, f) __tsan_mutex_post_lock((void *)(l), f, 0)
# define FL_TSAN_PRE_UNLOCK(l, f) __tsan_mutex_pre_unlock((void *)(l), f)
# define FL_TSAN_POST_UNLOCK(l, f) __tsan_mutex_post_unlock((void *)(l), f)
#else
# define FL_TSAN_READ 0u
# define FL_TSAN_TRY 0u
# define FL_TSAN_TRY_FAILED 0u
# define FL_TSAN_CREATE(l) ((void)0)
# define FL_TSAN_DESTROY(l) ((void)0)
# define FL_TSAN_PRE_LOCK(l, f) ((void)0)
# define FL_TSAN_POST_LOCK(l, f) ((void)0)
# define FL_TSAN_PRE_UNLOCK(l, f) ((void)0)
# define FL_TSAN_POST_UNLOCK(l, f) ((void)0)
#endif

#endif /* FASTLOCK_SYS_ANNOTATE_H */
