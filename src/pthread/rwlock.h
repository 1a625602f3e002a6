/* src/pthread/rwlock.h: the drop-in's rwlock, laid over pthread_rwlock_t,
 * and the rwlock attribute object, laid over pthread_rwlockattr_t.
 *
 * The lock is fastlock's rwsem, at the start of the object.  On 64-bit
 * ABIs the rest of glibc's 56 bytes holds:
 *   ready     FL_PRW_READY once the rwsem has its mode; 0 in a statically
 *             initialised lock until its first use applies the kind
 *   np_kind   glibc's __flags, where PTHREAD_RWLOCK_WRITER_NONRECURSIVE_
 *             INITIALIZER_NP writes the kind
 * On 32-bit ABIs the rwsem fills glibc's 32 bytes: there a statically
 * initialised lock always has the default (fair) kind, glibc's _NP
 * initializer included (a gap the man page lists).
 *
 * The attribute object: kind (glibc's PTHREAD_RWLOCK_*_NP value, plus
 * FL_PRWA_SET once pthread_rwlockattr_setkind_np chose it: glibc's
 * default kind and PREFER_READER_NP are the same number, and we map the
 * default to the fair mode but an explicit PREFER_READER_NP to the
 * reader-preferring one) and pshared.  */
#ifndef FASTLOCK_PTHREAD_RWLOCK_H
#define FASTLOCK_PTHREAD_RWLOCK_H

#include "pthread/internal.h"

#include <fastlock/rwsem.h>
#include <stddef.h>

struct fl_prwlock {
  fl_rwsem_t sem;
#if __SIZEOF_POINTER__ == 8
  int32_t ready;
  int32_t spare[3];
  uint32_t np_kind;
#endif
};

_Static_assert(sizeof(struct fl_prwlock) <= sizeof(pthread_rwlock_t),
               "the rwlock fits in pthread_rwlock_t");
_Static_assert(_Alignof(struct fl_prwlock) <= _Alignof(pthread_rwlock_t),
               "no more alignment than pthread_rwlock_t");
#if __SIZEOF_POINTER__ == 8
_Static_assert(offsetof(struct fl_prwlock, np_kind)
                   == offsetof(pthread_rwlock_t, __data.__flags),
               "np_kind is where the _NP static initializer writes the kind");
# define FL_PRW_HAS_KIND 1
#else
# define FL_PRW_HAS_KIND 0
#endif

#define FL_PRW_READY 1
#define FL_PRW_SETTING 2

struct fl_prwlockattr {
  int32_t kind;
  int32_t pshared;
};
_Static_assert(sizeof(struct fl_prwlockattr) <= sizeof(pthread_rwlockattr_t),
               "the attribute object fits in pthread_rwlockattr_t");

#define FL_PRWA_SET 0x100

/* The fastlock flags for a kind (glibc's value, FL_PRWA_SET or not). */
unsigned fl_pt_rwlock_mode(int32_t kind);

#endif /* FASTLOCK_PTHREAD_RWLOCK_H */
