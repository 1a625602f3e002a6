/* <fastlock/rwsem.h>: the reader-writer semaphore.
 *
 * Any number of readers or one writer hold an fl_rwsem_t at a time.  An
 * uncontended down/up pair costs one atomic instruction each way on the
 * lock's count word, inline in the caller; waiting, waking and the checks
 * that catch misuse are in the library.  The inline machinery is in
 * <fastlock/bits/rwsem.h>, which this header includes: not an interface.
 *
 * Conventions: an all-zero object (FL_RWSEM_INITIALIZER) is an unlocked
 * lock in the default mode (fair, process-private); every function
 * returns 0 or a positive errno value; the object holds only 32-bit
 * integers, so it can live in memory shared between 32- and 64-bit
 * processes that map it at different addresses (FL_PSHARED).
 *
 * MEMORY ORDERING.  Every successful acquisition (down_*, *_trylock,
 * *_timed, and downgrade_write for its read side) is an acquire operation
 * and every release (up_*, downgrade_write for its write side) a release
 * operation, in the C11 sense: what a thread did before releasing happens
 * before what a later holder does after acquiring, in every mode and
 * whichever path (fast, slow, READ_BIAS) each side took.  A failed call
 * orders nothing.
 *
 * MODES (flags of fl_rwsem_init):
 *   fair (default)  phase-fair.  A writer that finds readers inside waits
 *                   for those readers only: readers that arrive while a
 *                   writer waits queue behind it.  When a writer leaves
 *                   and readers wait, all the readers waiting then enter
 *                   together (a reader turn) before the next writer.  So
 *                   a waiting writer waits for at most one turn of
 *                   readers, and a waiting reader for at most one writer,
 *                   plus the writers that compete with it.  Nobody
 *                   starves.
 *   FL_RWSEM_PREFER_READER  a reader enters whenever no writer holds the
 *                   lock, writers waiting or not; after a writer, waiting
 *                   readers go first.  Writers starve while readers
 *                   overlap one another without a gap.
 *   FL_RWSEM_PREFER_WRITER  readers wait while a writer waits, and a
 *                   leaving writer hands over to the waiting writers
 *                   before the waiting readers.  Readers starve while
 *                   writers keep queueing.
 *   FL_RWSEM_READ_BIAS  (combinable with a preference; not with
 *                   FL_PSHARED) readers announce themselves in a slot
 *                   of their own thread in a process-wide table, not on
 *                   the lock, so that readers on different CPUs write no
 *                   shared cache line and scale.  A writer that arrives
 *                   turns the bias off and waits for the table's
 *                   readers; readers that come after it use the count
 *                   word and wait their turn.  The bias comes back only
 *                   while nobody waits.
 *   FL_PSHARED      the lock is in memory shared between processes.  A
 *                   process that dies while waiting (in any call, with or
 *                   without a deadline) blocks nobody.  Owners are told
 *                   apart by TID and PID namespace.
 *   FL_ROBUST       (with FL_PSHARED) a write holder that dies is
 *                   detected: see fl_rwsem_consistent.
 *
 * RECURSION.  A thread may hold several read locks on one lock, but a
 * second down_read while a writer waits deadlocks in the fair and
 * PREFER_WRITER modes (the reader waits behind the writer, which waits
 * for the reader).  PREFER_READER allows it; so does READ_BIAS while the
 * first read lock came through the table.  Write locks are not
 * recursive (EDEADLK).
 *
 * FORK.  The child of fork is one thread, a copy of the one that forked.
 * It holds the process-private locks that the forking thread held for
 * writing (the pthread_atfork idiom: lock before fork, unlock in parent
 * and child works).  An FL_PSHARED lock is the same object in parent and
 * child: the parent's hold stays the parent's, and the child gets EPERM
 * for releasing it.  Read locks are counted, not owned (below).
 *
 * LIMITS.  At most FL_RWSEM_READERS_MAX (65535) read locks at once
 * through the count word (EAGAIN beyond; READ_BIAS slots do not count).
 * Waiters are not counted: any number may wait.
 *
 * TOOLS.  Under helgrind, drd or the lock-order checker (the library
 * sets fl_tools_active, <fastlock/common.h>), and in a file compiled with
 * -fsanitize=thread, the inline functions call annotated paths in the
 * library that tell the tool what the lock does.  */
#ifndef FASTLOCK_RWSEM_H
#define FASTLOCK_RWSEM_H

#include <stdint.h>
#include <sys/types.h> /* clockid_t */

#include <fastlock/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct timespec;

/* Eight 32-bit words; what each holds: <fastlock/bits/rwsem.h>.  */
typedef struct fl_rwsem {
  int32_t count;
  int32_t bias;
  int32_t owner;
  int32_t mode;
  int32_t owner_ns;
  int32_t rseq;
  int32_t wseq;
  int32_t bias_id;
} fl_rwsem_t;

#define FL_RWSEM_INITIALIZER                                                   \
 {                                                                             \
  0, 0, 0, 0, 0, 0, 0, 0                                                       \
 }

/* Flags for fl_rwsem_init, besides FL_PSHARED.  */
#define FL_RWSEM_PREFER_READER 0x100u
#define FL_RWSEM_PREFER_WRITER 0x200u
#define FL_RWSEM_READ_BIAS 0x400u
#define FL_ROBUST 0x800u

#define FL_RWSEM_READERS_MAX 0xffff

/* fl_rwsem_init: make s an unlocked lock in the mode flags selects.
 * Needed only for a mode other than the default.  Must not run while any
 * thread uses s; other threads must learn of s through something that
 * orders memory (a lock, thread creation, a release store).
 * Errors: EINVAL for an unknown flag, both preferences at once,
 * FL_RWSEM_READ_BIAS with FL_PSHARED, or FL_ROBUST without FL_PSHARED.  */
FL_EXPORT int fl_rwsem_init(fl_rwsem_t *s, unsigned flags);

/* fl_rwsem_destroy: end s's life (it may then be freed or initialised
 * again).  Errors: EBUSY while anyone holds s or a waiter's flag is up
 * (a readers' turn that no reader entered is neither, nor, FL_PSHARED,
 * the count of late readers that died waiting); s is left as it was.  */
FL_EXPORT int fl_rwsem_destroy(fl_rwsem_t *s);

/* fl_rwsem_down_read: take s for reading, waiting while a writer holds it
 * (and, per the mode, while a writer waits).  Acquire.
 * Errors: EDEADLK if the calling thread holds s for writing; EAGAIN with
 * FL_RWSEM_READERS_MAX read locks already held.  */
static inline int fl_rwsem_down_read(fl_rwsem_t *s);

/* fl_rwsem_down_read_trylock: down_read if that needs no wait.
 * Errors: EBUSY if a writer holds s (the caller included) or the mode
 * makes readers wait now; EAGAIN as down_read.  */
static inline int fl_rwsem_down_read_trylock(fl_rwsem_t *s);

/* fl_rwsem_down_read_timed: down_read, giving up at abstime, an absolute
 * time on clock (CLOCK_MONOTONIC or CLOCK_REALTIME; a REALTIME deadline
 * follows changes to the wall clock).  A lock that is free is taken even
 * if abstime has passed.  The deadline holds whatever other threads or
 * processes do (stopped or killed ones included).
 * Errors: EINVAL for another clock, a NULL abstime or tv_nsec outside
 * [0, 1e9), checked first; ETIMEDOUT when abstime passed, the lock being
 * then as if the call had never been made; EDEADLK, EAGAIN as down_read. */
FL_EXPORT int fl_rwsem_down_read_timed(fl_rwsem_t *s, clockid_t clock,
                                       const struct timespec *abstime);

/* fl_rwsem_up_read: release one read lock.  Release.  The thread that
 * took it must release it (in READ_BIAS mode up_read looks for it in the
 * calling thread's slot).  Errors: EPERM if s has no read lock to release
 * (s is then unchanged).  Through the count word read locks are counted,
 * not owned: a thread that releases another reader's lock is not caught. */
static inline int fl_rwsem_up_read(fl_rwsem_t *s);

/* fl_rwsem_down_write: take s for writing, waiting while anyone else
 * holds it.  Acquire.  Errors: EDEADLK if the calling thread holds s for
 * writing, or (READ_BIAS) for reading through the table; FL_ROBUST:
 * EOWNERDEAD (the lock is held, see fl_rwsem_consistent),
 * ENOTRECOVERABLE.  */
static inline int fl_rwsem_down_write(fl_rwsem_t *s);

/* fl_rwsem_down_write_trylock: down_write if that needs no wait.
 * Errors: EBUSY if anyone holds s (the caller included) or readers have
 * their turn; FL_ROBUST: EOWNERDEAD, ENOTRECOVERABLE as down_write.  */
static inline int fl_rwsem_down_write_trylock(fl_rwsem_t *s);

/* fl_rwsem_down_write_timed: down_write with a deadline, as
 * fl_rwsem_down_read_timed.  Errors: EINVAL, ETIMEDOUT as there; the
 * errors of down_write.  */
FL_EXPORT int fl_rwsem_down_write_timed(fl_rwsem_t *s, clockid_t clock,
                                        const struct timespec *abstime);

/* fl_rwsem_up_write: release the write lock.  Release.  Errors: EPERM if
 * the calling thread does not hold s for writing (s is then unchanged).
 * FL_ROBUST: a lock taken with EOWNERDEAD and released without
 * fl_rwsem_consistent becomes unusable: every later down_write and
 * down_read returns ENOTRECOVERABLE.  */
static inline int fl_rwsem_up_write(fl_rwsem_t *s);

/* fl_rwsem_downgrade_write: turn the caller's write lock into a read lock
 * without letting any writer in between; the readers waiting then join.
 * Release for what was written before.  Errors: EPERM as up_write.  */
FL_EXPORT int fl_rwsem_downgrade_write(fl_rwsem_t *s);

/* fl_rwsem_consistent (FL_ROBUST): the caller took s with EOWNERDEAD
 * (a write holder died: the data may be half-written) and has repaired
 * the data; s is usable again after this caller's up_write.
 * Errors: EINVAL if s is not robust or the caller did not take it with
 * EOWNERDEAD.
 *
 * How a dead holder is found: a robust write holder records its TID and
 * PID namespace in s; a writer that has waited FL_RWSEM_ROBUST_POLL_MS
 * (50 ms) for a writer-held lock asks the kernel whether that process
 * still exists (kill(pid, 0) from the same namespace; /proc otherwise),
 * so a death is found within about that time once someone waits.
 * Readers are counted, not named: a process that dies holding a read
 * lock keeps its count in s for ever.  A supervisor that knows (for
 * instance from waitpid) that a process died holding n read locks calls
 * fl_rwsem_reader_died(s, n) once per lost lock; the readers' count,
 * not their identity, is all it repairs.  */
FL_EXPORT int fl_rwsem_consistent(fl_rwsem_t *s);

/* fl_rwsem_reader_died (FL_PSHARED): release one read lock on behalf of
 * a process known to have died holding it.  Errors: EPERM as up_read.  */
FL_EXPORT int fl_rwsem_reader_died(fl_rwsem_t *s);

#define FL_RWSEM_ROBUST_POLL_MS 50

#ifdef __cplusplus
}
#endif

#include <fastlock/bits/rwsem.h>

#endif /* FASTLOCK_RWSEM_H */
