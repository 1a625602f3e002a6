/* src/arch/atomic.h: the one entry point of the atomic shim.
 *
 * Installed as <fastlock/arch/atomic.h>, because the rwsem and counter
 * fastpaths are inline in the public headers.  It includes the generic
 * builtins (always: they are the twins the tests compare against) and then
 * either the arch header configure chose, which must define every fl_*
 * operation listed in generic.h in hand-written asm, or, for a builtin
 * build, maps every fl_* name onto its generic twin.  */
#ifndef FASTLOCK_ARCH_ATOMIC_H
#define FASTLOCK_ARCH_ATOMIC_H

#include <fastlock/config.h>
#include "generic.h"

#if FL_ATOMICS_ASM
# if FL_ARCH_X86
#  include "x86.h"
# elif FL_ARCH_PPC
#  include "ppc.h"
# elif FL_ARCH_MIPS
#  include "mips.h"
# elif FL_ARCH_AARCH64
#  include "aarch64.h"
# elif FL_ARCH_IA64
#  include "ia64.h"
# else
#  error "FL_ATOMICS_ASM is set but no FL_ARCH_* is: regenerate <fastlock/config.h>"
# endif
#else
# define FL_ARCH_ATOMICS_NAME "builtin"
# define fl_load_relaxed fl_generic_load_relaxed
# define fl_load_acquire fl_generic_load_acquire
# define fl_store_relaxed fl_generic_store_relaxed
# define fl_store_release fl_generic_store_release
# define fl_atomic_fetch_add_relaxed fl_generic_fetch_add_relaxed
# define fl_atomic_fetch_add_acquire fl_generic_fetch_add_acquire
# define fl_atomic_fetch_add_release fl_generic_fetch_add_release
# define fl_atomic_fetch_add_acq_rel fl_generic_fetch_add_acq_rel
# define fl_atomic_add_negative_acquire fl_generic_add_negative_acquire
# define fl_atomic_add_negative_release fl_generic_add_negative_release
# define fl_atomic_cmpxchg_relaxed fl_generic_cmpxchg_relaxed
# define fl_atomic_cmpxchg_acquire fl_generic_cmpxchg_acquire
# define fl_atomic_cmpxchg_release fl_generic_cmpxchg_release
# define fl_atomic_cmpxchg_acq_rel fl_generic_cmpxchg_acq_rel
# define fl_atomic_xchg_relaxed fl_generic_xchg_relaxed
# define fl_atomic_xchg_acquire fl_generic_xchg_acquire
# define fl_atomic_xchg_release fl_generic_xchg_release
# define fl_atomic_xchg_acq_rel fl_generic_xchg_acq_rel
# define fl_smp_mb fl_generic_smp_mb
# define fl_smp_rmb fl_generic_smp_rmb
# define fl_smp_wmb fl_generic_smp_wmb
#endif

#endif /* FASTLOCK_ARCH_ATOMIC_H */
