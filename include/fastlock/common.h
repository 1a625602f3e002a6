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

#endif /* FASTLOCK_COMMON_H */
