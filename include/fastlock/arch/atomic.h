/* <fastlock/arch/atomic.h>: the one entry point of the arch layer.
 *
 * Installed, because the rwsem and counter fastpaths are inline in the
 * public headers.  It includes, in this order:
 *
 *   generic.h   the operations on GCC/clang __atomic builtins, named
 *               fl_generic_*: the "builtin twins" the tests compare every
 *               hand-written operation against;
 *   ARCH.h      the header of the CPU the compiler targets (picked from
 *               the compiler's own macros, as the CPU part is needed by a
 *               builtin build too): its spin hint, cycle counter, thread
 *               pointer and restartable-sequence asm always, and its
 *               atomic operations in asm when configure chose asm
 *               (FL_ATOMICS_ASM);
 *   fallback.h  everything the arch header left out, derived from what it
 *               defined or taken from generic.h.
 *
 * An arch header marks each operation it provides by defining its name
 * as a macro (#define fl_atomic_x fl_atomic_x, or an alias); fallback.h
 * fills in exactly the names that are still undefined.  What an arch
 * header must and may define is listed in doc/porting.md.  */
#ifndef FASTLOCK_ARCH_ATOMIC_H
#define FASTLOCK_ARCH_ATOMIC_H

#include <fastlock/config.h>
#include <fastlock/arch/generic.h>

/* For asm templates that splice in a number.  */
#define FL_ARCH_STR_(x) #x
#define FL_ARCH_STR(x) FL_ARCH_STR_(x)

#if defined(__i386__) || defined(__x86_64__)
# include <fastlock/arch/x86.h>
#elif defined(__powerpc__) || defined(__powerpc64__)
# include <fastlock/arch/ppc.h>
#elif defined(__mips__)
# include <fastlock/arch/mips.h>
#elif defined(__aarch64__)
# include <fastlock/arch/aarch64.h>
#elif defined(__ia64__)
# include <fastlock/arch/ia64.h>
#elif FL_ATOMICS_ASM
# error "FL_ATOMICS_ASM, but no arch header for this CPU: rerun configure"
#endif

#include <fastlock/arch/fallback.h>

#endif /* FASTLOCK_ARCH_ATOMIC_H */
