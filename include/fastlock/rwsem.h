/* <fastlock/rwsem.h>: the reader-writer semaphore.
 *
 * Any number of readers or one writer hold an fl_rwsem_t at a time.  The
 * uncontended operations are inline here and cost one atomic instruction
 * on the lock's count word each (seed 004): down_read adds a reader,
 * up_read takes it away again, down_write swaps "unlocked" for "write
 * locked", up_write subtracts the writer with fl_atomic_add_negative_release
 * ("lock xadd" or "lock sub; js" on x86, as configured) and looks only at
 * the sign of the result.  Everything else (waiting, waking, hand-off,
 * misuse checks, READ_BIAS) is out of line in the library, in
 * src/rwsem/rwsem.c, whose top comment documents the count word and the
 * slowpath protocol bit by bit.
 *
 * Conventions (DESIGN.md): an all-zero object (FL_RWSEM_INITIALIZER) is a
 * valid unlocked lock in the default mode (fair, process-private, no
 * READ_BIAS); every function returns 0 or a positive errno value; the
 * object holds only 32-bit integers (no pointers), so it can live in
 * memory shared between 32- and 64-bit processes mapped at different
 * addresses (FL_PSHARED).
 *
 * Memory ordering: every successful acquisition (down_*, *_trylock,
 * *_timed, downgrade_write for its read side) is an acquire operation and
 * every release (up_*, downgrade_write for its write side) is a release
 * operation, in the C11 sense: everything a thread did before releasing
 * the lock happens before everything a later holder does after acquiring
 * it, whatever the mode and whichever path (fast, slow, hand-off,
 * READ_BIAS) each side took.  A failed operation orders nothing.
 *
 * Modes (flags of fl_rwsem_init):
 *   fair (default)  readers and writers compete; once waiters have been
 *                   queued longer than fl_rwsem_set_handoff_ns says
 *                   (1 ms), a hand-off episode serves them: nobody may
 *                   take the lock past the queue until the readers queued
 *                   then have had it (as one batch) and then each writer
 *                   queued then, one after another; then threads compete
 *                   again, and the next episode comes due one bound
 *                   later if anybody still waits.  Whichever thread next
 *                   releases the lock (or asks for it to write) starts
 *                   an overdue episode, so it does not wait for the
 *                   starving waiter to get a CPU.  Nobody starves: a
 *                   waiter waits about two bounds plus the phases ahead
 *                   of it.  Between episodes readers that overlap keep a
 *                   writer out, so a writer under a stream of readers
 *                   gets the lock about once per bound.
 *   FL_RWSEM_PREFER_READER  a reader gets in whenever no writer holds the
 *                   lock, waiting writers or not.  Writers starve as long
 *                   as readers overlap one another without a gap.
 *   FL_RWSEM_PREFER_WRITER  a reader waits while any writer waits.  Readers
 *                   starve as long as writers keep queueing.
 *   FL_RWSEM_READ_BIAS  (fair, and combinable with a preference) readers
 *                   announce themselves in a per-thread slot of a
 *                   process-wide table instead of on the lock, so that
 *                   readers on different CPUs share no written cache line
 *                   and scale; a writer first revokes the bias and waits
 *                   for the readers it can see, and the bias returns only
 *                   after a delay proportional to what revoking cost, and
 *                   only while nobody waits (a writer that queues without
 *                   a deadline closes the table to new readers at once).
 *                   Process-private locks only.  An uncontended read
 *                   pair of a READ_BIAS lock is inline too: two plain
 *                   stores and a fence into the thread's own slot, and
 *                   one plain store out of it; while the bias is off,
 *                   one atomic on the count word each way, as for any
 *                   lock.
 *   FL_PSHARED      the lock is in memory shared between processes.
 *
 * Recursion: a thread may hold several read locks on one fl_rwsem_t, but a
 * recursive down_read can deadlock against a waiting writer unless the
 * lock prefers readers (or, in READ_BIAS mode, the first read lock was
 * taken while the bias was on).  Write locks are not recursive (EDEADLK).
 *
 * Limits: at most FL_RWSEM_READERS_MAX (65535) read locks at once through
 * the count word (EAGAIN beyond; READ_BIAS slots do not count), and at
 * most 65535 waiting readers and 65535 waiting writers (EAGAIN beyond).
 *
 * Tools: when fastlock is configured --enable-annotations, or when the
 * including file is compiled with -fsanitize=thread, the inline functions
 * below call annotated copies in the library instead (fl_rwsem_tool_*),
 * which tell helgrind, drd and ThreadSanitizer what the lock does; the
 * annotation macros (src/sys/annotate.h) thus stay private to the library
 * and need no Valgrind headers where fastlock is installed.  */
#ifndef FASTLOCK_RWSEM_H
#define FASTLOCK_RWSEM_H

#include <errno.h>
#include <stdint.h>
#include <time.h>

#include <fastlock/common.h>
#include <fastlock/arch/atomic.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every field is a 32-bit word touched only through the atomic shim or
 * the futex wrapper; their meaning is documented in src/rwsem/rwsem.c.  */
typedef struct fl_rwsem {
  int32_t count;    /* the count word: readers, writer, waiters, flags */
  int32_t bias;     /* READ_BIAS: on/off and when the bias may return */
  int32_t owner;    /* kernel TID of the write holder, 0 if none */
  int32_t mode;     /* the flags given to fl_rwsem_init */
  int32_t qlock;    /* futex lock guarding the wait queues */
  int32_t rwait;    /* readers sleep here: grant generation, waiting readers */
  int32_t wwait;    /* writers sleep here: wake sequence, waiting writers */
  int32_t bias_id;  /* READ_BIAS: the lock's name in the readers' table */
} fl_rwsem_t;

#define FL_RWSEM_INITIALIZER { 0 }

/* Flags for fl_rwsem_init, besides FL_PSHARED.  */
#define FL_RWSEM_PREFER_READER 0x100u
#define FL_RWSEM_PREFER_WRITER 0x200u
#define FL_RWSEM_READ_BIAS 0x400u

#define FL_RWSEM_READERS_MAX 0xffff

/* The count word, as far as the inline fastpaths need it (the whole
 * layout: src/rwsem/rwsem.c).  Not an interface: these may change
 * between versions together with the library.  */
#define FL_RWSEM_WRITER 0x1              /* a writer holds the lock */
#define FL_RWSEM_HANDOFF 0x2             /* phase-fair hand-off is on */
#define FL_RWSEM_READER_SHIFT 14
#define FL_RWSEM_READER (1 << FL_RWSEM_READER_SHIFT)
#define FL_RWSEM_WAITERS INT32_MIN       /* the sign bit: someone waits */
#define FL_RWSEM_RSTOP 0x200             /* readers may not pass waiters */
/* down_read leaves its fastpath when the count word it added to had a
 * writer, hand-off, waiting writers that readers may not pass, or 0x8000
 * readers or more (bits 29 and 30 of the reader field: the slowpath tells
 * a full field from a busy one).  Waiters alone do not stop a reader:
 * between hand-off episodes readers may pass them.  */
#define FL_RWSEM_READ_FAILED \
  (FL_RWSEM_RSTOP | 0x60000000 | FL_RWSEM_HANDOFF | FL_RWSEM_WRITER)

/* How a slowpath may wait.  */
#define FL_RWSEM_BLOCK 0
#define FL_RWSEM_TRY 1

/* ------------------------------------------------------------------ */
/* The API.                                                            */
/* ------------------------------------------------------------------ */

/* fl_rwsem_init: make s an unlocked lock in the mode flags selects
 * (FL_PSHARED, FL_RWSEM_PREFER_READER or FL_RWSEM_PREFER_WRITER,
 * FL_RWSEM_READ_BIAS).  Needed only for a mode other than the default:
 * a zero-filled fl_rwsem_t is already an unlocked, fair, private lock.
 * Must not run while any thread uses s; other threads must learn of s
 * through something that orders memory (a lock, thread creation, a
 * release store), as for pthread_rwlock_init.
 * Errors: EINVAL for an unknown flag, both preferences at once, or
 * FL_RWSEM_READ_BIAS with FL_PSHARED (the readers' table is per process).  */
FL_EXPORT int fl_rwsem_init(fl_rwsem_t *s, unsigned flags);

/* fl_rwsem_destroy: end s's life (it may then be freed or initialised
 * again).  Errors: EBUSY while any thread holds s or waits for it; s is
 * left as it was.  */
FL_EXPORT int fl_rwsem_destroy(fl_rwsem_t *s);

/* fl_rwsem_down_read: take s for reading, sleeping while a writer holds
 * it (and, per the mode, while writers wait).  Acquire.
 * Errors: EDEADLK if the calling thread holds s for writing; EAGAIN if s
 * already has FL_RWSEM_READERS_MAX read locks, or 65535 waiting readers.  */
static inline int fl_rwsem_down_read(fl_rwsem_t *s);

/* fl_rwsem_down_read_trylock: take s for reading if that needs no wait.
 * Acquire on success.  Errors: EBUSY if a writer holds s (the caller
 * included) or the mode makes readers wait now; EAGAIN as down_read.  */
static inline int fl_rwsem_down_read_trylock(fl_rwsem_t *s);

/* fl_rwsem_down_read_timed: down_read, giving up at abstime, an absolute
 * time on clock (CLOCK_MONOTONIC or CLOCK_REALTIME; a REALTIME deadline
 * follows changes to the wall clock).  A lock that is free is taken even
 * if abstime has passed.  Acquire on success.
 * Errors: EINVAL for another clock, a NULL abstime or tv_nsec outside
 * [0, 1e9), checked before anything else, even when s is free;
 * ETIMEDOUT when abstime passed first, s being then exactly as it would
 * have been had the call never been made; EDEADLK, EAGAIN as down_read.  */
FL_EXPORT int fl_rwsem_down_read_timed(fl_rwsem_t *s, clockid_t clock,
                                       const struct timespec *abstime);

/* fl_rwsem_up_read: release one read lock.  Release.  A read lock must be
 * released by the thread that took it (POSIX asks the same; in READ_BIAS
 * mode up_read looks for it in the calling thread's slot).
 * Errors: EPERM if s has no read lock to release (it is then unchanged).
 * Through the count word read locks are counted, not owned: a thread that
 * releases a read lock another reader took is not caught.  */
static inline int fl_rwsem_up_read(fl_rwsem_t *s);

/* fl_rwsem_down_write: take s for writing, sleeping while anyone else
 * holds it.  Acquire.  Errors: EDEADLK if the calling thread holds s for
 * writing, or (READ_BIAS) holds it for reading through the bias;
 * EAGAIN with 65535 writers already waiting.  */
static inline int fl_rwsem_down_write(fl_rwsem_t *s);

/* fl_rwsem_down_write_trylock: take s for writing if that needs no wait.
 * Acquire on success.  Errors: EBUSY if anyone holds s (the caller
 * included), or if hand-off reserves it for the waiters.  */
static inline int fl_rwsem_down_write_trylock(fl_rwsem_t *s);

/* fl_rwsem_down_write_timed: down_write with a deadline, as
 * fl_rwsem_down_read_timed.  Errors: EINVAL, ETIMEDOUT as there;
 * EDEADLK, EAGAIN as down_write.  */
FL_EXPORT int fl_rwsem_down_write_timed(fl_rwsem_t *s, clockid_t clock,
                                        const struct timespec *abstime);

/* fl_rwsem_up_write: release the write lock.  Release.
 * Errors: EPERM if the calling thread does not hold s for writing (s is
 * then unchanged).  */
static inline int fl_rwsem_up_write(fl_rwsem_t *s);

/* fl_rwsem_downgrade_write: turn the caller's write lock into a read lock
 * without letting any writer in between; waiting readers may then join.
 * Release for what was written before, and the caller keeps reading.
 * Errors: EPERM if the calling thread does not hold s for writing.  */
FL_EXPORT int fl_rwsem_downgrade_write(fl_rwsem_t *s);

/* fl_rwsem_set_handoff_ns: how long waiters in the fair mode wait before
 * phase-fair hand-off is due, in nanoseconds (default 1000000, 1 ms),
 * counted from when the first of them queued or the previous episode
 * ended; 0 makes it due at once.
 * Process-wide; waiters read it as they start to wait (for FL_PSHARED,
 * the bound of the process whose thread queued first applies).
 * Errors: EINVAL if ns < 0.  */
FL_EXPORT int fl_rwsem_set_handoff_ns(int32_t ns);

/* ------------------------------------------------------------------ */
/* What the inline functions call: not for direct use.                 */
/* ------------------------------------------------------------------ */

/* READ_BIAS (src/rwsem/bias.c): each thread that reads a READ_BIAS lock
 * owns a row of FL_RWSEM_BIAS_SLOTS slots in a process-wide table, one
 * cache line that only it writes.  A slot names a lock the thread holds
 * for reading through the table (id: the lock's bias_id, 0 for a free
 * slot; the sign bit is set by a writer that sleeps until it changes) and
 * how many times (depth).  The inline fastpaths use only the lock's home
 * slot, bias_id modulo FL_RWSEM_BIAS_SLOTS, and only at depth 1; the
 * library also uses the others.  */
struct fl_rwsem_bias_slot {
  int32_t id;
  int32_t depth;
};
#define FL_RWSEM_BIAS_SLOTS 8
/* The bias word: bit 0, readers may use the table now (the rest of it:
 * bias.c).  */
#define FL_RWSEM_BIAS_ON 0x1

/* What the fastpaths know of the calling thread, in one TLS block.
 * tid: its kernel TID, -1 until first needed; down_write records it in
 * s->owner and up_write checks it there.  free_count: what down_write's
 * cmpxchg expects in the count word of a free lock: 0 once tid is known,
 * FL_RWSEM_NO_TID (a bit no count word ever has) until then, so that a
 * thread's first down_write goes to the slowpath, which learns the TID.
 * bias_row: the thread's row of READ_BIAS slots, NULL until its first
 * read of a READ_BIAS lock (which then goes to the library).
 * bias_spill: how many of the row's slots hold a lock that is not in its
 * home slot (the library puts it elsewhere when the home slot is busy);
 * while 0, a lock this thread holds through the table is in its home
 * slot, which is all the inline fastpaths look at.  */
struct fl_rwsem_thread {
  int32_t free_count;
  int32_t tid;
  struct fl_rwsem_bias_slot *bias_row;
  int32_t bias_spill;
};
FL_EXPORT extern __thread struct fl_rwsem_thread fl_rwsem_thread
  __attribute__((tls_model("initial-exec")));
#define FL_RWSEM_NO_TID 0x40

/* old: the count word before the fastpath's atomic.  */
FL_EXPORT int fl_rwsem_down_read_slowpath(fl_rwsem_t *s, int32_t old, int how);
FL_EXPORT int fl_rwsem_up_read_slowpath(fl_rwsem_t *s, int32_t old);
FL_EXPORT int fl_rwsem_down_write_slowpath(fl_rwsem_t *s, int how);
FL_EXPORT int fl_rwsem_up_write_slowpath(fl_rwsem_t *s);
FL_EXPORT int fl_rwsem_biased_down_read(fl_rwsem_t *s, int how);
FL_EXPORT int fl_rwsem_biased_retreat(fl_rwsem_t *s, int how);
FL_EXPORT int fl_rwsem_biased_up_read(fl_rwsem_t *s);
FL_EXPORT void fl_rwsem_biased_restore(fl_rwsem_t *s);

/* The lock named id's home slot in a row: the one slot the inline
 * fastpaths use.  */
static inline struct fl_rwsem_bias_slot *
fl_rwsem_bias_home(struct fl_rwsem_bias_slot *row, int32_t id)
{
  return &row[id & (FL_RWSEM_BIAS_SLOTS - 1)];
}

/* The fastpaths themselves.  */

/* down_read and up_read through the count word: one atomic each.  */
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
  /* Release: the critical section's loads and stores stay before it.
   * old < READER (signed) catches both "waiters" (the sign bit) and "no
   * reader to release" (an empty reader field): the slowpath tells them
   * apart and undoes the second.  */
  int32_t old = fl_atomic_fetch_add_release(&s->count, -FL_RWSEM_READER);

  if (__builtin_expect(old < FL_RWSEM_READER, 0))
    return fl_rwsem_up_read_slowpath(s, old);
  return 0;
}

/* May the calling thread hold s (named id, home slot e of its row) through
 * the table?  Then a read of s must go to the library, which finds the
 * slot.  */
static inline int fl_rwsem_bias_may_hold(const struct fl_rwsem_bias_slot *e,
                                         int32_t id)
{
  return (fl_load_relaxed(&e->id) & INT32_MAX) == id ||
         fl_rwsem_thread.bias_spill != 0;
}

/* down_read of a READ_BIAS lock (s->bias != 0), BRAVO-style: announce
 * the read lock in our own slot, then check that the bias is still on.
 * This is half of a Dekker handshake with the writer, which turns the
 * bias off, fences, and then scans every row for the lock's id:
 *   reader: store slot = id;  smp_mb;  load bias  (on: we hold the lock)
 *   writer: store bias = off; smp_mb;  load slots (id: wait for it)
 * With a full fence on each side between the store and the load, at least
 * one of the two loads sees the other's store: either we see "off" and
 * retreat to the count word, or the writer sees our slot and waits until
 * we clear it.  The fence is the only locked instruction of the pair on
 * x86 (a "lock add" to the stack); the slot's line is written by nobody
 * but us.  Anything else (no row yet, the home slot busy, a recursive
 * read, the bias off) goes to the library.  */
static inline int fl_rwsem_bias_down_read(fl_rwsem_t *s, int32_t bias, int how)
{
  struct fl_rwsem_bias_slot *row = fl_rwsem_thread.bias_row;
  int32_t id = fl_load_relaxed(&s->bias_id);
  struct fl_rwsem_bias_slot *e;
  int rc;

  if (row == NULL)
    return fl_rwsem_biased_down_read(s, how);
  e = fl_rwsem_bias_home(row, id);
  if (!(bias & FL_RWSEM_BIAS_ON)) {
    /* Off (a writer revoked it, or waits): the count word, inline, as
     * for any lock, unless this thread may hold s through the table
     * already.  A reader that got in may turn the bias back on (the
     * library looks whether nobody waits and its time has come).  */
    if (fl_rwsem_bias_may_hold(e, id))
      return fl_rwsem_biased_down_read(s, how);
    rc = fl_rwsem_count_down_read_fast(s, how);
    if (rc == 0)
      fl_rwsem_biased_restore(s);
    return rc;
  }
  if (fl_load_relaxed(&e->id) != 0)
    return fl_rwsem_biased_down_read(s, how);
  fl_store_relaxed(&e->depth, 1);
  /* Release: a writer that finds this slot holding our id, after the
   * slot held another lock, has seen that lock's release (entry_wait in
   * bias.c reads the slot with acquire).  */
  fl_store_release(&e->id, id);
  /* Store->load: the slot before the look at the bias (above).  */
  fl_smp_mb();
  /* Acquire: the critical section sees what the writers before the bias
   * came back on released (the restorer's release of the bias word).  */
  if (__builtin_expect((fl_load_acquire(&s->bias) & FL_RWSEM_BIAS_ON) != 0, 1))
    return 0;
  return fl_rwsem_biased_retreat(s, how);
}

/* up_read of a READ_BIAS lock: a plain release store empties the home
 * slot when it holds the lock once and no writer sleeps on it (the sign
 * bit); the library does the rest (depth, other slots, the count word,
 * waking a writer).  Release: the critical section stays before the
 * store, and a writer that sees the slot empty (acquire) sees it all.  A
 * writer that marks the slot between our load and our store is not
 * woken by us: it polls (bias.c), so it waits a little longer, never
 * for ever.  */
static inline int fl_rwsem_bias_up_read(fl_rwsem_t *s)
{
  struct fl_rwsem_bias_slot *row = fl_rwsem_thread.bias_row;
  int32_t id = fl_load_relaxed(&s->bias_id);
  struct fl_rwsem_bias_slot *e;

  if (row == NULL)
    return fl_rwsem_count_up_read_fast(s);   /* no row, no slot */
  e = fl_rwsem_bias_home(row, id);
  if (fl_load_relaxed(&e->id) == id && fl_load_relaxed(&e->depth) == 1) {
    fl_store_release(&e->id, 0);
    return 0;
  }
  if (fl_rwsem_bias_may_hold(e, id))
    return fl_rwsem_biased_up_read(s);
  return fl_rwsem_count_up_read_fast(s);
}

static inline int fl_rwsem_raw_down_read(fl_rwsem_t *s, int how)
{
  int32_t bias = fl_load_relaxed(&s->bias);

  /* Non-zero only for a READ_BIAS lock, whose readers must not write the
   * count word's line.  A relaxed load: the bias path orders itself.  */
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
  /* Acquire, for the same reason as down_read.  Any count but a free
   * lock's (readers, a writer, waiters, flags, a READ_BIAS to revoke)
   * fails here and goes to the slowpath; so does every count while the
   * thread does not know its TID (free_count is FL_RWSEM_NO_TID then).
   * free_count is read twice rather than kept in a register: that saves
   * a copy, and only this thread ever writes it.  */
  if (__builtin_expect(fl_atomic_cmpxchg_acquire(&s->count,
                                                 fl_rwsem_thread.free_count,
                                                 FL_RWSEM_WRITER) !=
                       fl_rwsem_thread.free_count, 0))
    return fl_rwsem_down_write_slowpath(s, how);
  /* Only the holder writes owner; others read it only to check their own
   * TID against it, so a plain store does.  */
  fl_store_relaxed(&s->owner, fl_rwsem_thread.tid);
  return 0;
}

static inline int fl_rwsem_raw_up_write(fl_rwsem_t *s)
{
  /* owner == our TID only while we hold the write lock: we set it after
   * taking the lock and clear it before releasing it, and nobody else
   * writes our TID there.  A thread that never took a write lock has -1,
   * which no owner ever is.  */
  if (__builtin_expect(fl_load_relaxed(&s->owner) != fl_rwsem_thread.tid, 0))
    return EPERM;
  fl_store_relaxed(&s->owner, 0);
  /* Release (it also keeps the owner store above before the unlock).  The
   * sign is the waiters bit: negative means someone must be woken.  */
  if (__builtin_expect(fl_atomic_add_negative_release(&s->count,
                                                      -FL_RWSEM_WRITER), 0))
    return fl_rwsem_up_write_slowpath(s);
  return 0;
}

#if FL_ANNOTATIONS
# define FL_RWSEM_TOOLS 1
#elif defined(__SANITIZE_THREAD__)
# define FL_RWSEM_TOOLS 1
#elif defined(__has_feature)
# if __has_feature(thread_sanitizer)
#  define FL_RWSEM_TOOLS 1
# endif
#endif
#ifndef FL_RWSEM_TOOLS
# define FL_RWSEM_TOOLS 0
#endif

/* The same with the tool annotations (src/rwsem/api.c); always in the
 * library, so that a program built with -fsanitize=thread links against
 * any build of it.  */
FL_EXPORT int fl_rwsem_tool_down_read(fl_rwsem_t *s, int how);
FL_EXPORT int fl_rwsem_tool_up_read(fl_rwsem_t *s);
FL_EXPORT int fl_rwsem_tool_down_write(fl_rwsem_t *s, int how);
FL_EXPORT int fl_rwsem_tool_up_write(fl_rwsem_t *s);

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

#endif /* FASTLOCK_RWSEM_H */
