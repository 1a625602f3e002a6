/* src/sys/annotate.h: telling helgrind, drd and ThreadSanitizer what a
 * fastlock primitive is.
 *
 * None of the three tools can see a lock built from atomic instructions
 * and futexes: they know pthread's functions, not ours.  Without help they
 * report every access the lock protects as a race, and every access to
 * the lock word itself.  Each primitive's watched paths (the ones the
 * inline fastpaths send their callers to while fl_tools_active is set, or
 * always in a TSan program: <fastlock/common.h>) therefore say, through
 * these macros, when a lock is created and destroyed and when it is
 * acquired and released (shared or exclusive, tried or not), and hide its
 * own words from the Valgrind tools, whose happens-before view of them is
 * wrong.  Only watched paths use them: the fastpaths carry no request.
 *
 * Valgrind (helgrind, drd): in every build made where Valgrind's headers
 * are installed.  A client request is a few instructions that do nothing
 * outside Valgrind, and runs only on a watched path.  drd.h understands
 * helgrind's rwlock requests when helgrind.h is included first, so one
 * set of requests serves both tools.
 *
 * ThreadSanitizer: the library is not instrumented, and need not be.  The
 * __tsan_mutex_* functions are declared weak here: in a program built with
 * -fsanitize=thread the TSan runtime linked into it defines them (and
 * exports them, for shared libraries such as this one), so the library's
 * calls reach it; anywhere else they are null and skipped.  Flags and
 * signatures are those of the runtime's <sanitizer/tsan_interface.h>,
 * which the compiler building the library need not have.  */
#ifndef FASTLOCK_SYS_ANNOTATE_H
#define FASTLOCK_SYS_ANNOTATE_H

#include <fastlock/config.h>

#if HAVE_VALGRIND_HELGRIND_H && HAVE_VALGRIND_DRD_H
# define FL_VALGRIND 1
# include <valgrind/helgrind.h>
# include <valgrind/drd.h>
# define FL_VG_RWLOCK_CREATE(l) ANNOTATE_RWLOCK_CREATE(l)
# define FL_VG_RWLOCK_DESTROY(l) ANNOTATE_RWLOCK_DESTROY(l)
# define FL_VG_RWLOCK_ACQUIRED(l, is_w) ANNOTATE_RWLOCK_ACQUIRED(l, is_w)
# define FL_VG_RWLOCK_RELEASED(l, is_w) ANNOTATE_RWLOCK_RELEASED(l, is_w)
/* Accesses to the lock's own words are synchronised by the atomics the
 * tools cannot model: hide them from both.  (drd's request is named
 * directly: its ANNOTATE_BENIGN_RACE_SIZED clashes with helgrind's.)  */
# define FL_VG_HIDE(addr, size)                                                \
  do {                                                                         \
   VALGRIND_HG_DISABLE_CHECKING(addr, size);                                   \
   VALGRIND_DO_CLIENT_REQUEST_STMT(VG_USERREQ__DRD_START_SUPPRESSION, addr,    \
                                   size, 0, 0, 0);                             \
  } while (0)
#else
# define FL_VALGRIND 0
# define FL_VG_RWLOCK_CREATE(l) ((void)0)
# define FL_VG_RWLOCK_DESTROY(l) ((void)0)
# define FL_VG_RWLOCK_ACQUIRED(l, is_w) ((void)0)
# define FL_VG_RWLOCK_RELEASED(l, is_w) ((void)0)
# define FL_VG_HIDE(addr, size) ((void)0)
#endif

/* The runtime's flags (tsan_interface.h).  */
#define FL_TSAN_LINKER_INIT (1u << 0)
#define FL_TSAN_READ (1u << 3)
#define FL_TSAN_TRY (1u << 4)
#define FL_TSAN_TRY_FAILED (1u << 5)

void __tsan_mutex_create(void *addr, unsigned flags) __attribute__((weak));
void __tsan_mutex_destroy(void *addr, unsigned flags) __attribute__((weak));
void __tsan_mutex_pre_lock(void *addr, unsigned flags) __attribute__((weak));
void __tsan_mutex_post_lock(void *addr, unsigned flags, int recursion)
    __attribute__((weak));
int __tsan_mutex_pre_unlock(void *addr, unsigned flags) __attribute__((weak));
void __tsan_mutex_post_unlock(void *addr, unsigned flags, int recursion)
    __attribute__((weak));

/* Nonzero in a process whose program has the TSan runtime.  */
#define FL_TSAN_PRESENT (__tsan_mutex_post_lock != 0)

/* A zero-filled lock is valid without a constructor, like a static
 * pthread initializer: tell TSan so it accepts a first use with no create. */
#define FL_TSAN_CREATE(l)                                                      \
 do {                                                                          \
  if (FL_TSAN_PRESENT)                                                         \
   __tsan_mutex_create((void *)(l), FL_TSAN_LINKER_INIT);                      \
 } while (0)
#define FL_TSAN_DESTROY(l)                                                     \
 do {                                                                          \
  if (FL_TSAN_PRESENT)                                                         \
   __tsan_mutex_destroy((void *)(l), 0);                                       \
 } while (0)
#define FL_TSAN_PRE_LOCK(l, f)                                                 \
 do {                                                                          \
  if (FL_TSAN_PRESENT)                                                         \
   __tsan_mutex_pre_lock((void *)(l), f);                                      \
 } while (0)
#define FL_TSAN_POST_LOCK(l, f)                                                \
 do {                                                                          \
  if (FL_TSAN_PRESENT)                                                         \
   __tsan_mutex_post_lock((void *)(l), f, 0);                                  \
 } while (0)
#define FL_TSAN_PRE_UNLOCK(l, f)                                               \
 do {                                                                          \
  if (FL_TSAN_PRESENT)                                                         \
   (void)__tsan_mutex_pre_unlock((void *)(l), f);                              \
 } while (0)
#define FL_TSAN_POST_UNLOCK(l, f)                                              \
 do {                                                                          \
  if (FL_TSAN_PRESENT)                                                         \
   __tsan_mutex_post_unlock((void *)(l), f, 0);                                \
 } while (0)

#endif /* FASTLOCK_SYS_ANNOTATE_H */
