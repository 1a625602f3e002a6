/* src/ipc/fastpath.c: semaphore and mutex operations without the region
 * lock, while no one waits.
 *
 * Every section of the region lock costs a compare-and-swap to enter and
 * an exchange to leave; an uncontended wait + release pair took two
 * sections, four locked instructions.  Here the pair is two: one
 * compare-and-swap on the object's own word each way.
 *
 * The word is a (ipc-internal.h), and its bit 31 is SLOW:
 *
 *   semaphore   a = count | SLOW          b = max (fixed, < SLOW)
 *   mutex       a = owner tag | SLOW      b = owner's thread id
 *               c = recursion - 1         d = abandoned
 *
 * SLOW clear: the word belongs to the fastpaths; nothing under the region
 * lock has it.  SLOW set: a section of the region lock holds the object
 * (fl_ipc_hold, lock.c): the fastpaths keep off (each compare-and-swap
 * expects SLOW clear) and go to the lock, and the section reads and
 * writes the object like the rest of the region, through the undo log.
 *
 *   state of a            fastpath                     region lock
 *   sem: n, SLOW clear    wait (n > 0): CAS n -> n-1   hold: CAS -> n|SLOW
 *                         release(k <= b-n): CAS n+k
 *   mutex: 0, 0           wait: CAS64 (a,b) (0,0) ->   hold: CAS -> 0|SLOW
 *                         (tag,tid); c is already 0
 *   mutex: tag, tid,      release by tid: CAS64        hold: CAS -> tag|SLOW
 *          c = 0          (tag,tid) -> (0,0)
 *   mutex: c > 0          (to the lock)                hold
 *   anything | SLOW       (to the lock)                already held
 *
 * The unlock clears SLOW (a release store, after the last checkpoint, so
 * that no word a fastpath may change again is in the undo log) on each
 * object it held that no wait slot waits for and that is not an abandoned
 * mutex (the abandonment must reach exactly one acquirer, on the slow
 * way).  Invariant: waiters > 0 implies SLOW.  So a release that could
 * satisfy a waiter always runs under the lock, where the wake scan sees
 * it, and a waiter, which holds its objects before it tries them, never
 * misses a fastpath release: the release came before the hold (the try
 * sees it) or failed on SLOW (and went to the lock).  A holder that dies
 * leaves SLOW set with perhaps no one waiting: the fastpaths go to the
 * lock until a section holds the object and lets go of it.
 *
 * The mutex swaps owner and thread as one 8-byte word, so that no other
 * thread ever sees an owner without its thread (a late store of the
 * thread id could land on a later owner's).  Where the CPU has no
 * lock-free 8-byte compare-and-swap (32-bit PowerPC and MIPS), mutexes
 * always take the lock; the protocol is the same, so processes with and
 * without the fastpath share a region.
 *
 * Death and cut-off.  A fastpath writes one word by one atomic
 * instruction: a process killed anywhere leaves a consistent object.  A
 * semaphore unit taken by a process that dies is gone, as in Win32.  A
 * mutex owned by a dead process is found by its waiters (wait.c) and
 * abandoned.  A process cut off by fl_ipc_client_died while it runs could
 * take a mutex on the fastpath after the clean-up's scan of the mutexes:
 * the clean-up sets its client's closing flag before the scan with a full
 * barrier between, and the fastpath reads the flag after its
 * compare-and-swap (sequentially consistent, so a barrier too); either the
 * scan sees the owner or the fastpath sees closing, gives the mutex back
 * and goes to the lock, which says ENOTCONN.  The give-back fails if a
 * section holds the mutex meanwhile (SLOW), not only if the clean-up
 * abandoned it: the mutex then stays owned by the cut-off client, and
 * its next waiter abandons it (a mutex whose owner's client is not LIVE
 * is abandoned by whoever waits for it, wait.c), so that waiter hears
 * EOWNERDEAD for a lock whose taker was told ENOTCONN: a spurious
 * report, never a lost mutex.  A thread that exits owning a mutex is
 * its own clean-up (liveness.c's hook, supervise.c): it holds each mutex
 * it owns under the lock and abandons it; a thread that takes a mutex
 * on the fastpath makes sure it has the hook, at the cost of one TLS
 * load and test.
 *
 * Under the race tools and the lock-order checker (fl_tools_active, or
 * ThreadSanitizer's runtime in the process, which sees none of this
 * library's atomics) every operation takes the lock, whose sections they
 * understand.  */
#include "config.h"

#include "ipc/ipc-internal.h"
#include "sys/annotate.h"

#include <fastlock/arch/atomic.h>
#include <fastlock/common.h>

#include <errno.h>
#include <stddef.h>

#if defined(__GCC_HAVE_SYNC_COMPARE_AND_SWAP_8)
# define FL_IPC_MUTEX_FASTPATH 1
#else
# define FL_IPC_MUTEX_FASTPATH 0
#endif

/* The object h names, if this process may use the fastpath on it: a live
 * client, no race tool, a valid handle of this type; else NULL.
 * Plain reads without the lock: the handle's checks read our own
 * references, which only our threads change, and the client's state,
 * which fastpaths read again where it matters (mutex_wait).  */
int fl_ipc_lock_only(void)
{
  return fl_load_relaxed(&fl_tools_active) != 0 || FL_TSAN_PRESENT;
}

static struct fl_ipc_object *fast_object(fl_ipc_t *r, fl_ipc_obj_t h,
                                         uint32_t type)
{
  const struct fl_ipc_client *c;
  uint32_t index;

  if (r->fd < 0 || fl_ipc_lock_only())
    return NULL;
  c = &fl_ipc_clients(r)[r->client];
  if (c->state != FL_IPC_CLIENT_LIVE || c->closing != 0
      || (c->gen & 0x7fffu) != r->tag >> 16
      || fl_ipc_object_get(r, h, type, &index) != 0)
    return NULL;
  return &fl_ipc_objects(r)[index];
}

static int sem_wait(struct fl_ipc_object *o)
{
  int32_t *a = (int32_t *)&o->a;
  uint32_t v = (uint32_t)fl_load_relaxed(a);

  /* Acquire: what the releaser of the unit did is seen after.  */
  while (v != 0 && !(v & FL_IPC_SLOW)) {
    uint32_t seen =
        (uint32_t)fl_atomic_cmpxchg_acquire(a, (int32_t)v, (int32_t)(v - 1));
    if (seen == v)
      return 0;
    v = seen;
  }
  return FL_IPC_SLOWPATH;
}

int fl_ipc_fast_sem_release(fl_ipc_t *r, fl_ipc_obj_t h, uint32_t n,
                            uint32_t *prev)
{
  struct fl_ipc_object *o = fast_object(r, h, FL_IPC_SEM);
  int32_t *a;
  uint32_t v;

  if (o == NULL)
    return FL_IPC_SLOWPATH;
  a = (int32_t *)&o->a;
  v = (uint32_t)fl_load_relaxed(a);
  /* b - v is the room left (v < SLOW here): no overflow.  Release: what
   * the caller did is seen by whoever takes the units.  */
  while (!(v & FL_IPC_SLOW) && n <= o->b - v) {
    uint32_t seen =
        (uint32_t)fl_atomic_cmpxchg_release(a, (int32_t)v, (int32_t)(v + n));
    if (seen == v) {
      if (prev != NULL)
        *prev = v;
      return 0;
    }
    v = seen;
  }
  /* SLOW, or past the maximum: the lock decides (EOVERFLOW there).  */
  return FL_IPC_SLOWPATH;
}

#if FL_IPC_MUTEX_FASTPATH
/* The objects are an array at a 64-byte-aligned offset.  */
_Static_assert(offsetof(struct fl_ipc_object, a) % 8 == 0
                   && offsetof(struct fl_ipc_object, b)
                          == offsetof(struct fl_ipc_object, a) + 4
                   && sizeof(struct fl_ipc_object) % 8 == 0,
               "the mutex's (a, b) is one aligned 8-byte word");

/* (a, b) as the one 8-byte word they are in memory.  */
typedef uint64_t __attribute__((may_alias, aligned(8))) fl_ipc_pair_t;

static uint64_t pair(uint32_t a, uint32_t b)
{
  union {
    uint32_t w[2];
    uint64_t d;
  } u;

  u.w[0] = a;
  u.w[1] = b;
  return u.d;
}

static int pair_cas(struct fl_ipc_object *o, uint64_t old, uint64_t new_value)
{
  return __atomic_compare_exchange_n((fl_ipc_pair_t *)(void *)&o->a, &old,
                                     new_value, 0, __ATOMIC_SEQ_CST,
                                     __ATOMIC_RELAXED);
}

static int mutex_wait(fl_ipc_t *r, struct fl_ipc_object *o)
{
  const struct fl_ipc_client *c = &fl_ipc_clients(r)[r->client];
  uint64_t mine = pair(r->tag, fl_ipc_tid());

  if (!pair_cas(o, pair(0, 0), mine))
    return FL_IPC_SLOWPATH;
  /* Sequentially consistent after the CAS: see the top (cut-off).  */
  if (__atomic_load_n(&c->closing, __ATOMIC_SEQ_CST) != 0) {
    /* Give it back if the clean-up has not abandoned it already; the
     * lock then says what became of this process.  */
    pair_cas(o, mine, pair(0, 0));
    return FL_IPC_SLOWPATH;
  }
  /* The thread-exit hook (liveness.c): one TLS load and test, the
   * fastpath's only cost for it.  */
  fl_ipc_watch_thread();
  return 0;
}

int fl_ipc_fast_mutex_release(fl_ipc_t *r, fl_ipc_obj_t h, uint32_t *prev)
{
  struct fl_ipc_object *o = fast_object(r, h, FL_IPC_MUTEX);

  /* c is 0 at recursion 1, and only the owner changes it (under the
   * lock); SLOW or another owner makes the CAS fail.  Release: the
   * section is seen by the next owner.  */
  if (o == NULL || fl_load_relaxed((const int32_t *)&o->c) != 0
      || !pair_cas(o, pair(r->tag, fl_ipc_tid()), pair(0, 0)))
    return FL_IPC_SLOWPATH;
  if (prev != NULL)
    *prev = 1;
  return 0;
}
#else
static int mutex_wait(fl_ipc_t *r, struct fl_ipc_object *o)
{
  (void)r;
  (void)o;
  return FL_IPC_SLOWPATH;
}

int fl_ipc_fast_mutex_release(fl_ipc_t *r, fl_ipc_obj_t h, uint32_t *prev)
{
  (void)r;
  (void)h;
  (void)prev;
  return FL_IPC_SLOWPATH;
}
#endif

int fl_ipc_fast_wait(fl_ipc_t *r, fl_ipc_obj_t h)
{
  struct fl_ipc_object *o;

  if (r == NULL || (o = fast_object(r, h, FL_IPC_ANY)) == NULL)
    return FL_IPC_SLOWPATH;
  switch (o->type) {
    case FL_IPC_SEM:
      return sem_wait(o);
    case FL_IPC_MUTEX:
      return mutex_wait(r, o);
    default:
      return FL_IPC_SLOWPATH;
  }
}
