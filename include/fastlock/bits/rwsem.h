/* <fastlock/bits/rwsem.h>: the inline fastpaths of <fastlock/rwsem.h>
 * and what they share with the library.  Not an interface: everything
 * here may change between versions together with the library.  Include
 * <fastlock/rwsem.h> instead.
 *
 * The words of fl_rwsem_t:
 *   count     the state word: readers, WRITER, waiters' flags (below; the
 *             library's slowpath documents the legal states and the
 *             transitions between them)
 *   bias      READ_BIAS: bit 31 (the sign, so that down_read's test of it
 *             is the branch on the flags its dispatch set) readers may use
 *             the table now, bit 1 this is a READ_BIAS lock, bit 2 a tool
 *             watches the lock's readers; bits 30..3, when the bias may
 *             come back; bit 0 unused
 *   owner     the write holder's TID, 0 if none; OWNER_SLOW (bit 30) set
 *             when its up_write must go through the library (FL_PSHARED,
 *             FL_ROBUST, a race tool)
 *   mode      the flags given to fl_rwsem_init (and FL_ROBUST's state)
 *   owner_ns  FL_PSHARED: the write holder's PID namespace
 *   rseq      readers sleep here (futex); bumped by whoever admits them
 *   wseq      writers sleep here (futex); bumped by whoever wakes them
 *   bias_id   READ_BIAS: the lock's name in the readers' table
 *
 * The fastpaths (one atomic each):
 *   down_read   fetch_add(count, READER); slow if the old value had
 *               WRITER, WPEND or 0x8000 readers or more
 *   up_read     fetch_add(count, -READER); slow if the old value was
 *               below READER as a signed number (SLOW, or no reader)
 *   down_write  cmpxchg(count, free_count, WRITER); slow unless it was
 *               free_count (0 once the thread knows its TID)
 *   up_write    if owner is not the caller's TID, the library; else
 *               owner = 0 and add_negative(count, -WRITER): slow if
 *               the result is negative (SLOW: someone waits)
 * Race tools (fl_tools_active, <fastlock/common.h>), at no cost to the
 * uncontended pairs: down_read ORs fl_tools_active into the bias word it
 * loads anyway ("mov; or; jne" where "mov; test; jne" was), so a watched
 * process's readers all take the bias branch, which calls the library.
 * down_write's cmpxchg expects the thread's free_count, which the library
 * sets to FL_RWSEM_NO_TID (never matches) when the thread learns its TID
 * while fl_tools_active is set: so fl_tools_active must be set before a
 * thread's first down_write (the library sets it as it loads).  Their
 * releases: a watched write lock has OWNER_SLOW in owner, so up_write's
 * owner check fails into the library; a watched read lock has
 * BIAS_WATCHED in the bias word, so up_read takes its bias branch, where
 * a thread has no READ_BIAS row while a tool watches (the library gives
 * none out), so that branch goes to the library too.  */
#ifndef FASTLOCK_BITS_RWSEM_H
#define FASTLOCK_BITS_RWSEM_H

#ifndef FASTLOCK_RWSEM_H
# error "include <fastlock/rwsem.h>, not <fastlock/bits/rwsem.h>"
#endif

#include <errno.h>
#include <stddef.h>

#include <fastlock/arch/atomic.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The count word, as far as the fastpaths need it.  */
#define FL_RWSEM_WRITER 0x1 /* a writer holds the lock */
#define FL_RWSEM_WPEND 0x2  /* a writer waits: new readers wait */
#define FL_RWSEM_READER_SHIFT 14
#define FL_RWSEM_READER (1 << FL_RWSEM_READER_SHIFT)
#define FL_RWSEM_SLOW INT32_MIN /* a waiter's flag is up */
/* down_read leaves its fastpath if the word it added to had a writer, a
 * waiting writer, or 0x8000 readers or more (bits 29 and 30: the library
 * tells a full field from a busy one).  */
#define FL_RWSEM_READ_FAILED (0x60000000 | FL_RWSEM_WPEND | FL_RWSEM_WRITER)
/* A bit no count word ever has: what down_write expects of a free lock
 * until the thread knows its TID.  */
#define FL_RWSEM_NO_TID 0x40
/* In owner: the holder's up_write goes through the library.  */
#define FL_RWSEM_OWNER_SLOW 0x40000000

/* The bias word.  */
#define FL_RWSEM_BIAS_ON INT32_MIN
#define FL_RWSEM_BIAS_MODE 0x2
#define FL_RWSEM_BIAS_WATCHED 0x4

/* How a slowpath may wait.  */
#define FL_RWSEM_BLOCK 0
#define FL_RWSEM_TRY 1

/* READ_BIAS: a thread owns a row of FL_RWSEM_BIAS_SLOTS slots in a
 * process-wide table, one cache line that only it writes.  A slot is one
 * word: the id of a lock the thread holds through the table (bias_id,
 * below 2^24) in bits 0..23 and how many times, minus one, in bits
 * 24..30; 0 is a free slot; the sign bit is set by a writer that sleeps
 * until the slot changes.  The fastpaths use slot 0 only, at depth 1:
 * no index to compute, so the read pair stays short; a thread that reads
 * a second READ_BIAS lock while it holds one through slot 0 gets another
 * slot from the library, and so does recursion.  */
#define FL_RWSEM_BIAS_SLOTS 16
#define FL_RWSEM_BIAS_ID_MASK 0xffffff
/* Two words no slot ever holds, as both have bits 0..23 clear: the slot
 * of a thread that has no row (below), and the bias_id of a lock
 * fl_rwsem_init made without READ_BIAS, so that up_read's "slot 0 names
 * this lock" is never true for it, whatever the bias word says (a tool
 * may have set BIAS_WATCHED in it, in another process).  */
#define FL_RWSEM_BIAS_NO_ROW 0x01000000
#define FL_RWSEM_BIAS_NO_ID 0x02000000

/* What the fastpaths know of the calling thread, in one TLS block.
 * free_count: what down_write's cmpxchg expects of a free lock (0 once
 * tid is known, FL_RWSEM_NO_TID before).  tid: the kernel TID, -1 until
 * needed.  bias_row: the thread's READ_BIAS slots; until the thread's
 * first read of a READ_BIAS lock, and for good while a tool watches,
 * a one-slot row of the library's that holds FL_RWSEM_BIAS_NO_ROW: never
 * free, naming no lock, so both inline paths go to the library with no
 * test for a missing row.  */
struct fl_rwsem_thread {
  int32_t free_count;
  int32_t tid;
  int32_t *bias_row;
};
FL_EXPORT extern __thread struct fl_rwsem_thread fl_rwsem_thread
    __attribute__((tls_model("initial-exec")));

/* old: the count word before the fastpath's atomic.  */
FL_EXPORT int fl_rwsem_down_read_slowpath(fl_rwsem_t *s, int32_t old, int how);
FL_EXPORT int fl_rwsem_up_read_slowpath(fl_rwsem_t *s, int32_t old);
FL_EXPORT int fl_rwsem_down_write_slowpath(fl_rwsem_t *s, int how);
FL_EXPORT int fl_rwsem_up_write_slowpath(fl_rwsem_t *s);
FL_EXPORT int fl_rwsem_up_write_checked(fl_rwsem_t *s);
FL_EXPORT int fl_rwsem_biased_down_read(fl_rwsem_t *s, int how);
FL_EXPORT int fl_rwsem_biased_retreat(fl_rwsem_t *s, int how);
FL_EXPORT int fl_rwsem_biased_up_read(fl_rwsem_t *s);
FL_EXPORT int fl_rwsem_tool_down_read(fl_rwsem_t *s, int how);
FL_EXPORT int fl_rwsem_tool_up_read(fl_rwsem_t *s);
FL_EXPORT int fl_rwsem_tool_down_write(fl_rwsem_t *s, int how);
FL_EXPORT int fl_rwsem_tool_up_write(fl_rwsem_t *s);

/* down_read and up_read through the count word.  */
static inline int fl_rwsem_count_down_read_fast(fl_rwsem_t *s, int how)
{
  /* Acquire: the critical section may not start before the reader is
   * counted, and must see what the last writer released.  */
  int32_t old = fl_atomic_fetch_add_acquire(&s->count, FL_RWSEM_READER);

  if (__builtin_expect((old & FL_RWSEM_READ_FAILED) != 0, 0))
    return fl_rwsem_down_read_slowpath(s, old, how);
  return 0;
}

static inline int fl_rwsem_count_up_read_fast(fl_rwsem_t *s)
{
  /* Release: the critical section stays before it.  old < READER (signed)
   * is both "a waiter's flag is up" (SLOW, the sign) and "no reader to
   * release": the library tells them apart.  */
  int32_t old = fl_atomic_fetch_add_release(&s->count, -FL_RWSEM_READER);

  if (__builtin_expect(old < FL_RWSEM_READER, 0))
    return fl_rwsem_up_read_slowpath(s, old);
  return 0;
}

/* down_read of a READ_BIAS lock (BRAVO, Dice and Kogan, USENIX ATC 2019):
 * bias is the bias word ORed with fl_tools_active (whose FL_TOOLS_ON is
 * not BIAS_ON).  While the bias is on, announce the read lock in slot 0
 * of our row, then check that the bias is still on.  Half of a Dekker
 * handshake with a writer, which turns the bias off, fences and scans the
 * slots:
 *   reader: store slot = id;  fence;  load bias  (on: we hold the lock)
 *   writer: bias = off;       fence;  load slots (id: wait for it)
 * One of the two loads sees the other's store.  The fence is the pair's
 * only locked instruction on x86; the slot's line is written by nobody
 * else.  Anything else (bias off, slot 0 taken: recursion, another lock,
 * no row, which a watched process's threads never get) goes to the
 * library.  */
static inline int fl_rwsem_bias_down_read(fl_rwsem_t *s, int32_t bias, int how)
{
  int32_t *e = fl_rwsem_thread.bias_row; /* slot 0 */

  if (!(bias & FL_RWSEM_BIAS_ON) || fl_load_relaxed(e) != 0)
    return fl_rwsem_biased_down_read(s, how);
  /* Release: a writer that finds our id here after another lock's
   * (acquire) has seen that lock's release.  */
  fl_store_release(e, fl_load_relaxed(&s->bias_id));
  /* Store->load: the slot before the look at the bias.  */
  fl_smp_mb();
  /* Acquire: the critical section sees what the writers before the bias
   * came back released (the restorer's release of the bias word).  */
  if (__builtin_expect((fl_load_acquire(&s->bias) & FL_RWSEM_BIAS_ON) != 0, 1))
    return 0;
  return fl_rwsem_biased_retreat(s, how); /* it clears the slot */
}

/* up_read of a lock whose bias word is not 0: if slot 0 names the lock
 * (held once, through the table, and no writer sleeps on the slot), a
 * plain release store empties it; the library does the rest (and the
 * count word, for a read lock taken there).  A writer that marks the
 * slot between our load and our store is not woken: it polls (bias.c),
 * so it waits a little longer, never for ever.  */
static inline int fl_rwsem_bias_up_read(fl_rwsem_t *s)
{
  int32_t *e = fl_rwsem_thread.bias_row;

  if (__builtin_expect(fl_load_relaxed(e) == fl_load_relaxed(&s->bias_id), 1)) {
    fl_store_release(e, 0);
    return 0;
  }
  return fl_rwsem_biased_up_read(s);
}

static inline int fl_rwsem_raw_down_read(fl_rwsem_t *s, int how)
{
  /* The bias word is non-zero only for a READ_BIAS or a watched lock.
   * Relaxed: the bias path orders itself.  fl_tools_active: see the top
   * of this file (a plain load: it changes only at start-up).  */
  int32_t bias = fl_load_relaxed(&s->bias) | fl_tools_active;

  if (bias != 0)
    return fl_rwsem_bias_down_read(s, bias, how);
  return fl_rwsem_count_down_read_fast(s, how);
}

static inline int fl_rwsem_raw_up_read(fl_rwsem_t *s)
{
  if (fl_load_relaxed(&s->bias) != 0)
    return fl_rwsem_bias_up_read(s);
  return fl_rwsem_count_up_read_fast(s);
}

static inline int fl_rwsem_raw_down_write(fl_rwsem_t *s, int how)
{
  /* Acquire, as down_read.  Any count but a free private lock's fails
   * here into the library (readers, a writer, waiters' flags, BIASED, the
   * SHARED bit of an FL_PSHARED lock), and so does every count while the
   * thread does not know its TID (free_count is FL_RWSEM_NO_TID then).  */
  if (__builtin_expect(fl_atomic_cmpxchg_acquire(&s->count,
                                                 fl_rwsem_thread.free_count,
                                                 FL_RWSEM_WRITER)
                           != fl_rwsem_thread.free_count,
                       0))
    return fl_rwsem_down_write_slowpath(s, how);
  /* Only the holder writes owner; others read it only to compare it with
   * their own TID, so a plain store does.  */
  fl_store_relaxed(&s->owner, fl_rwsem_thread.tid);
  return 0;
}

static inline int fl_rwsem_raw_up_write(fl_rwsem_t *s)
{
  /* owner is our TID only while we hold the write lock through the
   * fastpaths: we set it after taking the lock and clear it before
   * releasing it.  Anything else (not ours, OWNER_SLOW) is the library's
   * to check.  */
  if (__builtin_expect(fl_load_relaxed(&s->owner) != fl_rwsem_thread.tid, 0))
    return fl_rwsem_up_write_checked(s);
  fl_store_relaxed(&s->owner, 0);
  /* Release (it also keeps the owner store before the unlock).  Negative:
   * SLOW, a waiter's flag is up.  */
  if (__builtin_expect(
          fl_atomic_add_negative_release(&s->count, -FL_RWSEM_WRITER), 0))
    return fl_rwsem_up_write_slowpath(s);
  return 0;
}

#if defined(__SANITIZE_THREAD__)
# define FL_RWSEM_TOOLS 1
#elif defined(__has_feature)
# if __has_feature(thread_sanitizer)
#  define FL_RWSEM_TOOLS 1
# endif
#endif
#ifndef FL_RWSEM_TOOLS
# if FL_ANNOTATIONS
#  define FL_RWSEM_TOOLS 1
# else
#  define FL_RWSEM_TOOLS 0
# endif
#endif

#if FL_RWSEM_TOOLS

static inline int fl_rwsem_down_read(fl_rwsem_t *s)
{
  return fl_rwsem_tool_down_read(s, FL_RWSEM_BLOCK);
}

static inline int fl_rwsem_down_read_trylock(fl_rwsem_t *s)
{
  return fl_rwsem_tool_down_read(s, FL_RWSEM_TRY);
}

static inline int fl_rwsem_up_read(fl_rwsem_t *s)
{
  return fl_rwsem_tool_up_read(s);
}

static inline int fl_rwsem_down_write(fl_rwsem_t *s)
{
  return fl_rwsem_tool_down_write(s, FL_RWSEM_BLOCK);
}

static inline int fl_rwsem_down_write_trylock(fl_rwsem_t *s)
{
  return fl_rwsem_tool_down_write(s, FL_RWSEM_TRY);
}

static inline int fl_rwsem_up_write(fl_rwsem_t *s)
{
  return fl_rwsem_tool_up_write(s);
}

#else /* !FL_RWSEM_TOOLS */

static inline int fl_rwsem_down_read(fl_rwsem_t *s)
{
  return fl_rwsem_raw_down_read(s, FL_RWSEM_BLOCK);
}

static inline int fl_rwsem_down_read_trylock(fl_rwsem_t *s)
{
  return fl_rwsem_raw_down_read(s, FL_RWSEM_TRY);
}

static inline int fl_rwsem_up_read(fl_rwsem_t *s)
{
  return fl_rwsem_raw_up_read(s);
}

static inline int fl_rwsem_down_write(fl_rwsem_t *s)
{
  return fl_rwsem_raw_down_write(s, FL_RWSEM_BLOCK);
}

static inline int fl_rwsem_down_write_trylock(fl_rwsem_t *s)
{
  return fl_rwsem_raw_down_write(s, FL_RWSEM_TRY);
}

static inline int fl_rwsem_up_write(fl_rwsem_t *s)
{
  return fl_rwsem_raw_up_write(s);
}

#endif /* FL_RWSEM_TOOLS */

#ifdef __cplusplus
}
#endif

#endif /* FASTLOCK_BITS_RWSEM_H */
