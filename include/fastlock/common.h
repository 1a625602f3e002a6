/* <fastlock/common.h>: what every fastlock primitive shares.
 *
 * Conventions (DESIGN.md): names start with fl_; an all-zero object is a
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

#endif /* FASTLOCK_COMMON_H */
