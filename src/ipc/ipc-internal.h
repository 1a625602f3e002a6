/* src/ipc/ipc-internal.h: the region's layout, its state and invariants,
 * and the functions the files of src/ipc share.
 *
 * THE DESIGN, chosen to be simple to prove rather than clever.
 *
 * 1. One lock guards everything.  All object, client and wait state of a
 *    region is read and written only while holding the region lock
 *    (hdr.lock, lock.c).  Critical sections are short: a few words per
 *    object touched.  The only accesses outside it are the futex sleeps
 *    on hdr.lock and on a wait slot's state word, and those are hints:
 *    whoever wakes takes the lock and looks again.
 *
 * 2. Writes are undoable.  Every write to region state inside the lock
 *    goes through fl_ipc_set (lock.c), which first appends the word's
 *    offset and old value to the undo log in the region.  A holder that
 *    dies mid-section leaves the log behind; the process that takes the
 *    lock over (lock.c) restores the logged words in reverse order, so
 *    the region is back in the state of the last *checkpoint*.  Sections
 *    checkpoint (empty the log) only where the state is consistent: at
 *    the end, after a waker's own operation, after each grant to a
 *    waiter, after each object a clean-up has finished with.
 *
 * 3. Waiters are served by wakers, as ntsync does it.  A thread that must
 *    wait fills a wait slot (the objects, any or all, its ticket) and
 *    sleeps on the slot's state word.  Whoever changes an object so that
 *    it may be acquired runs fl_ipc_wake_scan (wait.c): in ticket order,
 *    each waiting slot that can now be satisfied is granted (the objects
 *    are acquired on its behalf under the lock, so a wait-all is
 *    all-or-nothing by construction) and woken.  The waiter confirms the
 *    grant under the lock (a rolled-back grant is not a grant).
 *
 * 4. Death is found by file locks.  Each process holds an open file
 *    description lock on one byte of the region's file, its client
 *    slot's byte; the kernel drops it when the process dies, whatever
 *    its PID namespace.  liveness.c explains and bounds it.
 *
 * 5. Semaphores and mutexes have a fastpath (fastpath.c) that bypasses
 *    the region lock: one compare-and-swap on the object's word while its
 *    SLOW bit is clear.  A section of the region lock that touches such an
 *    object first sets SLOW (fl_ipc_hold, lock.c): from then on no
 *    fastpath changes the word, and the section owns it as it owns the
 *    rest of the region (its writes are logged and undoable).  The unlock
 *    clears SLOW again, after the last checkpoint, on every object no one
 *    waits for.  fastpath.c has the protocol's table.
 *
 * Every field is a uint32_t at a fixed offset: the layout is the same in
 * 32- and 64-bit processes and holds no pointers (offsets from the
 * region's start instead).
 *
 * Region layout (offsets in bytes, each part 64-byte aligned):
 *   header             struct fl_ipc_hdr
 *   undo log           FL_IPC_LOG_MAX struct fl_ipc_undo
 *   clients            nclients struct fl_ipc_client
 *   objects            nobjects struct fl_ipc_object
 *   wait slots         nwaits struct fl_ipc_wait (nwaits = 4 * nclients)
 *   references         nclients * nobjects uint32_t: refs[c][o], the
 *                      references client c holds on object o
 */
#ifndef FASTLOCK_IPC_INTERNAL_H
#define FASTLOCK_IPC_INTERNAL_H

#include <fastlock/arch/atomic.h>
#include <fastlock/ipc.h>

#include <stddef.h>
#include <stdint.h>

#define FL_IPC_MAGIC 0x50494c46u /* "FLIP" in a little-endian dump */
#define FL_IPC_VERSION 3u
#define FL_IPC_LOG_MAX 1024u /* > the largest section between checkpoints */
/* abandoned mutexes kept per dead client (part of the region's layout) */
#define FL_IPC_REPORT_MAX ((uint32_t)FL_IPC_DIED_REPORT_MAX)
#define FL_IPC_WAITS_PER_CLIENT 4u
/* What the lock-order checker calls an IPC mutex (its class's kind).  */
#define FL_IPC_LOCKDEP_KIND "fl_ipc mutex"

/* The header.  magic is written last by fl_ipc_format (a release store),
 * so a process that sees it sees a formatted region.  */
struct fl_ipc_hdr {
  uint32_t magic, version;
  uint32_t size;   /* bytes, as formatted */
  uint32_t region; /* this region's identity, in handles */
  uint32_t nobjects, nclients, nwaits;
  uint32_t log_off, clients_off, objects_off, waits_off, refs_off;
  /* The region lock word (lock.c): 0 free, else the holder's client tag
   * (client index + 1 | generation << 16) with FL_IPC_LOCK_WAITERS set
   * when some thread sleeps on it.  */
  uint32_t lock;
  uint32_t log_n;    /* entries in the undo log */
  uint32_t nwaiting; /* wait slots in state WAITING */
  /* The next wait's ticket; also the stamp of the next client clean-up
   * (fl_ipc_client.died): one clock, read as an age (ticket - stamp).  */
  uint32_t ticket;
  uint32_t pad[16];
};

#define FL_IPC_LOCK_WAITERS 0x80000000u
#define FL_IPC_SLOW 0x80000000u

struct fl_ipc_undo {
  uint32_t off; /* of the word, from the region start */
  uint32_t old; /* its value before the write */
};

/* A client slot: one process that has the region open.
 *   FREE  -> LIVE      fl_ipc_open/attach claimed it (and its byte lock)
 *   LIVE  -> FREE      fl_ipc_close
 *   LIVE  -> DEAD      a clean-up found the process dead (liveness.c)
 *   LIVE  -> KILLED    fl_ipc_client_died (the process may still run)
 *   DEAD, KILLED -> REPORTED  fl_ipc_client_died read its report
 *   FREE, DEAD, KILLED, REPORTED -> LIVE  claimed again once its byte
 *                      lock is free, in that order of preference
 *                      (region.c: a DEAD or KILLED slot's report is lost)
 * gen counts claims: a client id is index + 1 | gen << 16, and a stale id
 * (an older gen) is refused.  Invariant: a client that is not LIVE owns
 * no mutex, holds no reference, has no WAITING or GRANTED wait slot.  */
struct fl_ipc_client {
  uint32_t state, gen, pid;
  uint32_t closing;    /* 1 from the start of its clean-up until its slot is
                       claimed again: the mutex fastpath's cue (fastpath.c) */
  uint32_t died;       /* hdr.ticket at its clean-up: the oldest unread
                          report goes first when the region is full */
  uint32_t nabandoned; /* mutexes its clean-up abandoned */
  uint32_t abandoned[FL_IPC_REPORT_MAX]; /* their ids (the first ones) */
};

enum {
  FL_IPC_CLIENT_FREE,
  FL_IPC_CLIENT_LIVE,
  FL_IPC_CLIENT_DEAD,
  FL_IPC_CLIENT_KILLED,
  FL_IPC_CLIENT_REPORTED
};

/* An object slot.  type 0 is free; gen counts frees (an object id is
 * index | gen << 16, so a stale handle is refused).  refs is the sum of
 * refs[c][this] over all clients; the slot is freed when it reaches 0.
 * waiters is the number of WAITING wait slots that name the object.
 *   semaphore:  a = count | SLOW, b = max          (count <= b < SLOW)
 *   mutex:      a = owner client tag (0: none) | SLOW, b = owner's thread
 *               id (0 iff no owner), c = recursion - 1 (0 if no owner),
 *               d = 1 if abandoned since its last owner (then no owner,
 *               and SLOW)
 *   event:      a = 1 if signalled (no fastpath, no SLOW); a pulse never
 *               sets it (fl_ipc_wake_pulse, wait.c)
 * FL_IPC_SLOW in a: a section of the region lock holds the object
 * (fastpath.c); invariant: waiters > 0 implies SLOW.  a and b are one
 * 8-byte-aligned pair, which the mutex fastpath swaps as one word.
 * The name is NUL-padded, compared only while type != 0.  */
struct fl_ipc_object {
  uint32_t type, gen, refs, waiters;
  uint32_t a, b, c, d;
  fl_rwsem_t rwsem; /* the rwsem object's lock */
  uint32_t name[16];
};

/* A wait slot.  state is also the futex word the waiter sleeps on.
 *   FREE -> WAITING     a waiter registered (nwaiting + 1)
 *   WAITING -> GRANTED  a waker acquired its objects for it (nwaiting - 1)
 *   WAITING -> FREE     the waiter timed out, or its process died
 *   GRANTED -> FREE     the waiter took the result, or its process died
 *   WAITING, GRANTED -> CANCELLED  fl_ipc_client_died on its client
 *   CANCELLED -> FREE   its client slot is claimed again
 * Invariant: nwaiting = the number of WAITING slots; the objects of a
 * GRANTED slot have been acquired for its thread (any: objs[result];
 * all: every one).  */
struct fl_ipc_wait {
  uint32_t state;
  uint32_t client; /* tag of the waiting client */
  uint32_t tid;
  uint32_t ticket;
  uint32_t n, all;
  uint32_t result;               /* any: the index granted; all: bits
                                    32..63 of the abandoned mask */
  uint32_t abandoned;            /* any: 1 if the mutex granted was
                                    abandoned; all: bits 0..31 of the mask */
  uint32_t obj[FL_IPC_WAIT_MAX]; /* object indexes */
};

enum {
  FL_IPC_WAIT_FREE,
  FL_IPC_WAIT_WAITING,
  FL_IPC_WAIT_GRANTED,
  FL_IPC_WAIT_CANCELLED
};

/* One process's view of the region.  */
struct fl_ipc {
  unsigned char *base; /* the mapping */
  size_t map_size;     /* nonzero if this library mapped it */
  int fd;              /* our own open file description */
  uint32_t client;     /* our client index */
  uint32_t tag;        /* index + 1 | gen << 16 */
  /* Futex words to wake after the current section (wait.c): waking
   * under the lock would only make the woken thread sleep on it.  */
  uint32_t nwake;
  uint32_t wake[16];
  /* Objects the current section holds (fl_ipc_hold); past the array's
   * end, nheld counts on and the unlock visits every object.  */
  uint32_t nheld;
  uint32_t held[16];
  /* The event the current section's pulse treats as signalled in its
   * wake scan, index + 1 (0: none): kept here, not in the region, so
   * that the pulser's death leaves nothing of it (fl_ipc_wake_pulse).  */
  uint32_t pulse;
  /* Its place in the process's registry (liveness.c), FL_IPC_LISTED_*:
   * written under the registry's lock.  */
  int listed;
};

#define FL_IPC_TAG_INDEX(tag) (((tag)&0xffffu) - 1u)
#define FL_IPC_ID_INDEX(id) ((id)&0xffffu)
#define FL_IPC_ID_GEN(id) ((id) >> 16)

/* Accessors of the parts (the header says where each starts).  */
static inline struct fl_ipc_hdr *fl_ipc_hdr(const fl_ipc_t *r)
{
  return (struct fl_ipc_hdr *)(void *)r->base;
}
static inline struct fl_ipc_undo *fl_ipc_log(const fl_ipc_t *r)
{
  return (struct fl_ipc_undo *)(void *)(r->base + fl_ipc_hdr(r)->log_off);
}
static inline struct fl_ipc_client *fl_ipc_clients(const fl_ipc_t *r)
{
  return (struct fl_ipc_client *)(void *)(r->base + fl_ipc_hdr(r)->clients_off);
}
static inline struct fl_ipc_object *fl_ipc_objects(const fl_ipc_t *r)
{
  return (struct fl_ipc_object *)(void *)(r->base + fl_ipc_hdr(r)->objects_off);
}
static inline struct fl_ipc_wait *fl_ipc_waits(const fl_ipc_t *r)
{
  return (struct fl_ipc_wait *)(void *)(r->base + fl_ipc_hdr(r)->waits_off);
}
static inline uint32_t *fl_ipc_refs(const fl_ipc_t *r, uint32_t client)
{
  return (uint32_t *)(void *)(r->base + fl_ipc_hdr(r)->refs_off)
         + (size_t)client * fl_ipc_hdr(r)->nobjects;
}

/* lock.c: the region lock and the undo log.  fl_ipc_lock returns with
 * the lock held and the region consistent (a dead holder's section
 * undone and that holder cleaned up); fl_ipc_unlock checkpoints,
 * releases and wakes what the section queued.  */
void fl_ipc_lock(fl_ipc_t *r);
void fl_ipc_unlock(fl_ipc_t *r);
void fl_ipc_set(fl_ipc_t *r, uint32_t *word, uint32_t value);
void fl_ipc_checkpoint(fl_ipc_t *r);
/* Set SLOW on a semaphore or mutex (no-op for other types) for the rest
 * of the section; the unlock clears it if no one waits.  */
void fl_ipc_hold(fl_ipc_t *r, uint32_t index);
/* Tell the race tools about this view's lock word (once, on joining). */
void fl_ipc_annotate(fl_ipc_t *r);
/* fl_ipc_lock, and then ENOTCONN (lock released) if this process was
 * disconnected.  */
int fl_ipc_enter(fl_ipc_t *r);

/* liveness.c: does the client with this index still run?  Our own
 * client is alive by definition.  */
int fl_ipc_client_alive(fl_ipc_t *r, uint32_t index);
/* Probe intervals slept out in full by this process (a sleep for a mutex
 * or for the region lock that ended by its FL_IPC_PROBE_MS timeout, not
 * by a wake-up or the caller's deadline): tests/test-ipc-death bounds the
 * time to act on a death in these, with no clock.  */
extern int32_t fl_ipc_probe_naps;
static inline void fl_ipc_count_probe_nap(void)
{
  fl_atomic_fetch_add_relaxed(&fl_ipc_probe_naps, 1);
}
int fl_ipc_liveness_claim(fl_ipc_t *r, uint32_t index);
void fl_ipc_liveness_release(fl_ipc_t *r);
/* The process's registry of its regions.  A region is listed for the
 * fork handler (which closes it in the child) from before its client
 * slot is claimed, and for the thread-exit hook too once it is claimed
 * (until then its view is not ready for the hook's sections).  */
enum { FL_IPC_UNLISTED, FL_IPC_LISTED_FORK, FL_IPC_LISTED_ALL };
/* Put r in the registry as listed (an FL_IPC_LISTED_* value): EMFILE
 * beyond 64 regions open at once.  */
int fl_ipc_register(fl_ipc_t *r, int listed);
/* The calling thread's kernel thread id (cached).  */
uint32_t fl_ipc_tid(void);
/* The thread-exit hook: a thread that acquires a mutex calls
 * fl_ipc_watch_thread, so that at its exit every mutex it owns in every
 * region listed is abandoned (fl_ipc_thread_exit).  The test is one
 * initial-exec TLS load (no call, no allocation on first access); the
 * registration, once per thread, allocates nothing either (liveness.c). */
extern __thread int32_t fl_ipc_watched
    __attribute__((tls_model("initial-exec")));
void fl_ipc_watch_slow(void);
static inline void fl_ipc_watch_thread(void)
{
  if (fl_ipc_watched == 0)
    fl_ipc_watch_slow();
}

/* objects.c: the object slot a handle names, checked against this
 * process's references (EBADF) and the wanted type (EINVAL): a type of
 * fl_ipc_obj_type (FL_IPC_EVENT for either kind of event), 0 for any
 * type a wait takes, FL_IPC_ANY for any type.  */
#define FL_IPC_ANY 0xffu
int fl_ipc_object_get(fl_ipc_t *r, fl_ipc_obj_t h, uint32_t type,
                      uint32_t *index);
/* The start of a call on one object: EINVAL for a NULL r, then the
 * region lock (fl_ipc_enter), then fl_ipc_object_get.  0: the lock is
 * held and *index set; else the lock is not held.  */
int fl_ipc_enter_object(fl_ipc_t *r, fl_ipc_obj_t h, uint32_t type,
                        uint32_t *index);
fl_ipc_obj_t fl_ipc_handle(const fl_ipc_t *r, uint32_t index);
/* A new object of type with fields a..d = v (the caller's reference). */
int fl_ipc_object_create(fl_ipc_t *r, const char *name, uint32_t type,
                         const uint32_t v[4], fl_ipc_obj_t *out);
/* One more reference of client on object index; n fewer (freeing the
 * object at 0).  Under the lock.  */
void fl_ipc_ref(fl_ipc_t *r, uint32_t client, uint32_t index);
void fl_ipc_unref(fl_ipc_t *r, uint32_t client, uint32_t index, uint32_t n);
/* Drop every reference client holds (under the lock, checkpointing). */
void fl_ipc_drop_refs(fl_ipc_t *r, uint32_t client);

/* sem.c, mutex.c, event.c: can the thread (tag, tid) acquire object o
 * now, and acquire it (returns 1 if it was an abandoned mutex).  */
int fl_ipc_can_acquire(const struct fl_ipc_object *o, uint32_t tag,
                       uint32_t tid);
int fl_ipc_acquire(fl_ipc_t *r, struct fl_ipc_object *o, uint32_t tag,
                   uint32_t tid);

/* wait.c: grant every waiter that can now be satisfied; the same with
 * event index treated as signalled for this scan only (a pulse).  */
void fl_ipc_wake_scan(fl_ipc_t *r);
void fl_ipc_wake_pulse(fl_ipc_t *r, uint32_t index);
/* A test's hook, NULL outside tests: the wake scan calls it after each
 * grant's checkpoint, where a waker's death leaves the most behind
 * (tests/test-ipc-death.c dies there).  The scan is the slow path only:
 * a waiter already sleeps, and one load beside the grant's writes and
 * system calls costs nothing.  */
extern void (*fl_ipc_grant_hook)(void);
/* A WAITING slot leaves that state for state (GRANTED or FREE, or
 * CANCELLED): nwaiting and its objects' waiters go down.  */
void fl_ipc_wait_leave(fl_ipc_t *r, struct fl_ipc_wait *w, uint32_t state);
/* Queue a futex word for waking at unlock.  */
void fl_ipc_wake_later(fl_ipc_t *r, uint32_t *word);

/* supervise.c: clean up after client index (under the lock): abandon
 * its mutexes, end its waits (state: FREE if it is dead, CANCELLED if it
 * may still run), drop its references, set its state.  */
void fl_ipc_cleanup(fl_ipc_t *r, uint32_t index, uint32_t state);
/* Abandon mutex index (held, under the lock): no owner, abandoned; and
 * reported in the list of client report, the one cleaned up (NULL: no
 * report, for a thread's exit).  */
void fl_ipc_abandon(fl_ipc_t *r, uint32_t index, struct fl_ipc_client *report);
/* The calling thread tid of this process exits: abandon the mutexes it
 * owns in r and grant what that frees (takes and leaves the lock).  */
void fl_ipc_thread_exit(fl_ipc_t *r, uint32_t tid);

/* fastpath.c: the operations without the region lock.  Each returns
 * FL_IPC_SLOWPATH when it cannot decide (the caller takes the lock).  */
#define FL_IPC_SLOWPATH (-1)
int fl_ipc_fast_wait(fl_ipc_t *r, fl_ipc_obj_t h);
int fl_ipc_fast_sem_release(fl_ipc_t *r, fl_ipc_obj_t h, uint32_t n,
                            uint32_t *prev);
int fl_ipc_fast_mutex_release(fl_ipc_t *r, fl_ipc_obj_t h, uint32_t *prev);
/* Nonzero while a race tool watches the process (fl_tools_active, or a
 * ThreadSanitizer runtime): then every access to region state is made
 * under the region lock, which the tools are told of, so that they see
 * no race: no fastpath, and no unlocked look ahead of a section.  */
int fl_ipc_lock_only(void);

#endif /* FASTLOCK_IPC_INTERNAL_H */
