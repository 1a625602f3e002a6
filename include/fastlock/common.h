/* <fastlock/common.h>: what every fastlock primitive shares.
 *
 * Conventions: names start with fl_; an all-zero object is a
 * valid, unlocked, default-mode lock; functions return 0 or a positive
 * errno value, pthread style; objects hold only fixed-width integers, so
 * that 32- and 64-bit processes agree on their layout in shared memory.  */
#ifndef FASTLOCK_COMMON_H
#define FASTLOCK_COMMON_H

#include <fastlock/config.h>

/* Flag for every *_init: the object lives in memory shared between
 * processes (futex operations without FUTEX_PRIVATE_FLAG).  Bit 0 of every
 * primitive's flags; the primitives number their own flags from bit 8.  */
#define FL_PSHARED 0x1u

/* Nonzero while something watches this process's locks at run time: a
 * race tool (helgrind or drd, found by the library as it loads) or the
 * lock-order checker.  The inline fastpaths test it and, when set, call
 * the library's watched paths instead, so that a program built against
 * the installed headers is checked without rebuilding anything.  Written
 * only at start-up and by the checker's switch; read relaxed.  */
FL_EXPORT extern int fl_tools_active;

/* The one switch, as every inline fastpath reads it.
 *
 * FL_TOOLS_TSAN: this translation unit is compiled with -fsanitize=thread.
 * ThreadSanitizer instruments the program, not the library, and cannot
 * see the library's atomics: every lock operation must go to the
 * library's watched paths, which call the __tsan_mutex_* interface that
 * the program's TSan runtime provides, through weak symbols.
 *
 * FL_TOOLS_ALWAYS: the fastpaths are left out at compile time (TSan, or a
 * build configured --enable-annotations): each inline function calls the
 * library's watched path first thing.
 *
 * FL_TOOLS_ACTIVE: otherwise, fl_tools_active: 0, or FL_TOOLS_ON while
 * something watches.  A fastpath folds it into the test it makes anyway
 * (the old value of its atomic, the word it is about to release): a
 * nonzero result sends it to its slowpath, which tells a watched
 * operation from a contended one.  FL_TOOLS_ON is bit 1, which no
 * spinlock word's fastpath value ever has, so a fastpath may OR the
 * switch into the old word it passes on, and its slowpath take it out
 * again.  That keeps the switch's cost to two instructions or fewer per
 * lock and unlock pair (the README gives `make count-instructions`
 * figures).  */
#if defined(__SANITIZE_THREAD__)
# define FL_TOOLS_TSAN 1
#elif defined(__has_feature)
# if __has_feature(thread_sanitizer)
#  define FL_TOOLS_TSAN 1
# endif
#endif
#ifndef FL_TOOLS_TSAN
# define FL_TOOLS_TSAN 0
#endif

#if FL_ANNOTATIONS || FL_TOOLS_TSAN
# define FL_TOOLS_ALWAYS 1
#else
# define FL_TOOLS_ALWAYS 0
#endif

/* A plain read, so that the compiler can fold it into an instruction of
 * the fastpath's test (an atomic load it would not): the switch changes
 * only before the threads that take locks start, or by
 * fl_lockdep_enable(), and every fastpath reads it again after its
 * atomic (a compiler barrier).  TSan programs never read it.  */
#define FL_TOOLS_ACTIVE fl_tools_active
#define FL_TOOLS_ON 0x2

#endif /* FASTLOCK_COMMON_H */
