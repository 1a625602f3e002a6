/* src/spinlock/qspinlock.c: fl_qspinlock_t, a queued spinlock after
 * Linux's kernel/locking/qspinlock.c (the word: include/fastlock/
 * spinlock.h; the nodes: src/spinlock/qspinlock.h).
 *
 * The kernel's three ways in, in order:
 *
 *   uncontended  0 -> locked, the inline fastpath;
 *   pending      the lock is held and nobody waits: set pending, spin on
 *                the word until the holder goes, then pending -> locked.
 *                One waiter needs no queue node;
 *   queued       anything more: swap our node into the tail and link it
 *                behind the old one, spin on our own node until we are the
 *                head, then spin on the word until locked and pending are
 *                clear, take the lock (clearing the tail if we are still
 *                the last), and make our successor the head.
 *
 * What this adds for threads that are not running (the kernel's CPUs always
 * are, unless a hypervisor preempts them, which is what its paravirt
 * qspinlock is for):
 *
 *   - The holder that makes its successor the head checks that the
 *     successor's waiter has shown itself (beat) within fl_spin_patience.
 *     If it has not, the holder marks it GONE, takes it out of the queue,
 *     and tries the next node.  So the head role goes only to running
 *     waiters; the passed-over thread queues again when it runs, whether
 *     it was still waiting in the queue or had been made the head (a head
 *     looks at its node at every look at the word, not only when the
 *     lock is free).
 *   - A head that was running when it was made the head can be preempted
 *     before it takes the lock.  Queued waiters glance at the word now and
 *     then; one that sees it sit unlocked for a patience takes the lock
 *     and leaves the queue, taking the head out with it if the head is
 *     its predecessor and has not shown itself either.
 *   - A pending waiter that does not take a free lock within a patience
 *     loses it, pending bit and all, to the head or a queued waiter; it
 *     starts over when it runs.
 *   - Waiters yield after FL_SPIN_YIELD_AFTER without progress, for a
 *     holder that is not running.
 *
 * Only a thread that holds the lock changes the queue between its head and
 * its tail (granting, passing over, leaving), so those changes never race
 * with each other; the tail itself is also moved by arrivals, always with
 * compare-and-swap, and a link not yet made is waited for.  A node marked
 * GONE is never touched again by anyone but its own thread.
 *
 * Every change that gives the lock to someone is a compare-and-swap on the
 * whole word, so none of this can let two threads in: the queue decides
 * only who tries.  */
#include "config.h"

#include "spinlock/internal.h"
#include "spinlock/qspinlock.h"
#include "sys/cpu.h"

#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <sys/mman.h>

#define FL_QSPIN_TAIL_MASK 0xffff0000u
#define FL_QSPIN_TAIL(v) ((int32_t)((uint32_t)(v) >> FL_QSPIN_TAIL_SHIFT))
#define FL_QSPIN_BUSY (FL_QSPIN_LOCKED_MASK | FL_QSPIN_PENDING)

/* Reads of a word that shows a pending->locked hand-over, which takes a
 * few instructions, before queueing anyway.  */
#define FL_QSPIN_HANDOVER_SPINS 64

/* A waiter refreshes its beat, and looks at the time, once per this many
 * reads of its node.  */
#define FL_QSPIN_BEAT_EVERY 16

/* ------------------------------------------------------------------------
 * The registry of queueing threads.
 * --------------------------------------------------------------------- */

/* Nodes are mapped in chunks of 64 threads' worth (16 KiB).  */
#define FL_QSPIN_CHUNK 64
#define FL_QSPIN_NCHUNKS                                                       \
 ((FL_QSPIN_THREADS + FL_QSPIN_CHUNK - 1) / FL_QSPIN_CHUNK)

struct fl_qslot {
  struct fl_qnode node[FL_QSPIN_NEST];
};

/* Bit i set: index i is some thread's.  Claimed and released with
 * compare-and-swap, so that a thread can get its index in a signal
 * handler.  */
static int32_t fl_qused[(FL_QSPIN_THREADS + 31) / 32];
static struct fl_qslot *fl_qchunks[FL_QSPIN_NCHUNKS];
static pthread_key_t fl_qkey;

/* index1: 1 + the thread's index, 0 for none yet.  nest: nodes in use.  */
static __thread struct {
  int32_t index1;
  int32_t nest;
} fl_qself __attribute__((tls_model("initial-exec")));

static void fl_qindex_release(int32_t index)
{
  int32_t *w = &fl_qused[index / 32];
  uint32_t bit = 1u << (index % 32), v = (uint32_t)fl_load_relaxed(w), seen;

  while ((seen = (uint32_t)fl_atomic_cmpxchg_relaxed(w, (int32_t)v,
                                                     (int32_t)(v & ~bit)))
         != v)
    v = seen;
}

static int32_t fl_qindex_claim(void)
{
  int32_t i;

  for (i = 0; i < (int32_t)(sizeof fl_qused / sizeof fl_qused[0]); i++) {
    uint32_t v = (uint32_t)fl_load_relaxed(&fl_qused[i]), seen;

    while (v != UINT32_MAX) {
      int32_t bit = __builtin_ctz(~v), index = i * 32 + bit;

      if (index >= FL_QSPIN_THREADS)
        return -1;
      seen = (uint32_t)fl_atomic_cmpxchg_relaxed(&fl_qused[i], (int32_t)v,
                                                 (int32_t)(v | (1u << bit)));
      if (seen == v)
        return index;
      v = seen;
    }
  }
  return -1;
}

/* The chunk for index, mapped by whichever thread needs it first.  The
 * pointer is published with release and read with acquire (a code found
 * in a lock word may name a chunk this thread has not used yet).  */
static struct fl_qslot *fl_qchunk(int32_t index, int create)
{
  struct fl_qslot **p = &fl_qchunks[index / FL_QSPIN_CHUNK];
  struct fl_qslot *chunk = __atomic_load_n(p, __ATOMIC_ACQUIRE), *fresh;
  size_t size = FL_QSPIN_CHUNK * sizeof(struct fl_qslot);

  if (chunk != NULL || !create)
    return chunk;
  fresh = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
               -1, 0);
  if (fresh == MAP_FAILED)
    return NULL;
  /* The nodes are synchronisation the Valgrind tools cannot model.  */
  FL_VG_HIDE(fresh, size);
  if (__atomic_compare_exchange_n(p, &chunk, fresh, 0, __ATOMIC_ACQ_REL,
                                  __ATOMIC_ACQUIRE))
    return fresh;
  munmap(fresh, size);
  return chunk;
}

/* Thread exit: the index goes back.  */
static void fl_qthread_exit(void *unused)
{
  (void)unused;
  if (fl_qself.index1 > 0)
    fl_qindex_release(fl_qself.index1 - 1);
  fl_qself.index1 = 0;
}

/* In the child of a fork only the forking thread is left: every other
 * thread's index is free again.  */
static void fl_qatfork_child(void)
{
  size_t i;

  for (i = 0; i < sizeof fl_qused / sizeof fl_qused[0]; i++)
    fl_store_relaxed(&fl_qused[i], 0);
  if (fl_qself.index1 > 0) {
    int32_t index = fl_qself.index1 - 1;
    fl_store_relaxed(&fl_qused[index / 32], (int32_t)(1u << (index % 32)));
  }
}

__attribute__((constructor)) static void fl_qsetup(void)
{
  FL_VG_HIDE(fl_qused, sizeof fl_qused);
  FL_VG_HIDE(fl_qchunks, sizeof fl_qchunks);
  pthread_key_create(&fl_qkey, fl_qthread_exit);
  pthread_atfork(NULL, NULL, fl_qatfork_child);
}

int32_t fl_qnode_take(struct fl_qnode **node)
{
  int32_t index, level = fl_qself.nest;
  struct fl_qslot *chunk;

  if (level >= FL_QSPIN_NEST)
    return 0;
  if (fl_qself.index1 == 0) {
    index = fl_qindex_claim();
    if (index < 0)
      return 0;
    if (fl_qchunk(index, 1) == NULL) {
      fl_qindex_release(index);
      return 0;
    }
    fl_qself.index1 = index + 1;
    pthread_setspecific(fl_qkey, &fl_qself);
  }
  index = fl_qself.index1 - 1;
  chunk = fl_qchunk(index, 0);
  *node = &chunk[index % FL_QSPIN_CHUNK].node[level];
  fl_qself.nest = level + 1;
  return fl_qself.index1 << 2 | level;
}

void fl_qnode_put(void)
{
  fl_qself.nest--;
}

struct fl_qnode *fl_qnode_of(int32_t code)
{
  int32_t index = (code >> 2) - 1;

  return &fl_qchunk(index, 0)[index % FL_QSPIN_CHUNK].node[code & 3];
}

uint32_t fl_qnode_enqueue(fl_qspinlock_t *l, struct fl_qnode *node,
                          int32_t code)
{
  uint32_t v, seen, tail = (uint32_t)code << FL_QSPIN_TAIL_SHIFT;

  fl_store_relaxed(&node->next, 0);
  fl_store_relaxed(&node->beat, (int32_t)fl_spin_now());
  /* Release: the node, with the state and prev that the tail it replaces
   * gives it, is initialised before anyone can find it through the tail.
   * Acquire: the old tail's own initialisation (its next = 0) is done
   * before our link below lands in it.  */
  v = (uint32_t)fl_load_relaxed(&l->word);
  for (;;) {
    fl_store_relaxed(&node->state,
                     FL_QSPIN_TAIL(v) != 0 ? FL_QNODE_WAIT : FL_QNODE_HEAD);
    fl_store_relaxed(&node->prev, FL_QSPIN_TAIL(v));
    seen = (uint32_t)fl_atomic_cmpxchg_acq_rel(
        &l->word, (int32_t)v, (int32_t)((v & ~FL_QSPIN_TAIL_MASK) | tail));
    if (seen == v)
      break;
    v = seen;
  }
  /* Release: our node's initialisation is visible to the predecessor
   * that finds it through this link.  */
  if (FL_QSPIN_TAIL(v) != 0)
    fl_store_release(&fl_qnode_of(FL_QSPIN_TAIL(v))->next, code);
  return v;
}

/* ------------------------------------------------------------------------
 * The lock.
 * --------------------------------------------------------------------- */

/* For a thread with no node to queue with: spin on the word and take the
 * lock whenever it is free, ahead of the queue.  Unfair, and rare.  */
static int fl_qspin_lock_unqueued(fl_qspinlock_t *l)
{
  struct fl_spin_watch watch;
  uint32_t v = (uint32_t)fl_load_relaxed(&l->word);

  fl_spin_watch_start(&watch, v);
  for (;;) {
    /* Acquire: the critical section stays after the take.  */
    if (!(v & FL_QSPIN_BUSY)
        && fl_atomic_cmpxchg_acquire(&l->word, (int32_t)v,
                                     (int32_t)(v | FL_QSPIN_LOCKED))
               == (int32_t)v)
      return 0;
    if (fl_spin_watch(&watch, v, fl_spin_now()) > FL_SPIN_YIELD_AFTER)
      sched_yield();
    fl_cpu_relax();
    v = (uint32_t)fl_load_relaxed(&l->word);
  }
}

/* The code of the node behind node, which its waiter links in after it
 * swaps itself into the tail: for a node that is not the tail, at most a
 * few instructions away.  Acquire: that node's initialisation came before
 * the link.  */
static int32_t fl_qnode_wait_link(struct fl_qnode *node)
{
  int32_t code;

  while ((code = fl_load_acquire(&node->next)) == 0)
    fl_cpu_relax();
  return code;
}

/* We hold the lock, and code names the node that is to be the head: make
 * it the head, or, if its waiter is not running, take it out of the queue
 * and try the one after it.  Storing HEAD first brings the node's line
 * here, so that reading its beat costs nothing more.  Our own node, self
 * (0 if we have none in the queue), is never passed over, however long we
 * may have been preempted since we last showed ourselves.  */
static void fl_qspin_grant_from(fl_qspinlock_t *l, int32_t code, int32_t self)
{
  struct fl_qnode *succ;
  int32_t after;
  uint32_t v;

  for (;;) {
    succ = fl_qnode_of(code);
    /* Release: the successor's head loop reads the word after this.  */
    fl_store_release(&succ->state, FL_QNODE_HEAD);
    if (code == self
        || !fl_spin_elapsed((uint32_t)fl_load_relaxed(&succ->beat),
                            fl_spin_now(), fl_load_relaxed(&fl_spin_patience)))
      return;
    v = (uint32_t)fl_load_relaxed(&l->word);
    if (FL_QSPIN_TAIL(v) == code) {
      /* The last node: empty the queue.  Failing, someone queued behind
       * it meanwhile; look again.  */
      if (fl_atomic_cmpxchg_relaxed(&l->word, (int32_t)v,
                                    (int32_t)(v & ~FL_QSPIN_TAIL_MASK))
          == (int32_t)v) {
        fl_store_release(&succ->state, FL_QNODE_GONE);
        return;
      }
      continue;
    }
    /* Release: read the link before the waiter may reuse its node.  */
    after = fl_qnode_wait_link(succ);
    fl_store_release(&succ->state, FL_QNODE_GONE);
    code = after;
  }
}

/* We hold the lock and are the head: leave the queue, emptying it if we
 * are the last, else making our successor the head.  */
static void fl_qspin_head_leaves(fl_qspinlock_t *l, struct fl_qnode *node,
                                 int32_t code)
{
  uint32_t v = (uint32_t)fl_load_relaxed(&l->word);

  while (FL_QSPIN_TAIL(v) == code) {
    uint32_t seen = (uint32_t)fl_atomic_cmpxchg_relaxed(
        &l->word, (int32_t)v, (int32_t)(v & ~FL_QSPIN_TAIL_MASK));
    if (seen == v)
      return;
    v = seen;
  }
  fl_qspin_grant_from(l, fl_qnode_wait_link(node), 0);
}

/* We took the lock while waiting in the queue, because nobody took it for
 * a patience: leave the queue.  Nothing in the queue can change while we
 * hold the lock but its tail (arrivals) and links not yet made, so we
 * may.  From us back to the head every node waits and its prev names the
 * node ahead: only holders take nodes out, and each one they take out
 * either was the head or has its successor's prev changed.  */
static void fl_qspin_waiter_leaves(fl_qspinlock_t *l, struct fl_qnode *node,
                                   int32_t code)
{
  int32_t state = fl_load_acquire(&node->state), prev, head, after;
  struct fl_qnode *h, *p;
  uint32_t v;

  /* Passed over before we took the lock: we are out of the queue.  */
  if (state == FL_QNODE_GONE)
    return;
  if (state == FL_QNODE_WAIT) {
    /* The head let the lock sit, so it has probably stopped running: if
     * it has not shown itself for a patience either, take it out, and
     * make the first running node after it the head (us, at the latest).  */
    head = fl_load_relaxed(&node->prev);
    while (fl_load_acquire(&(h = fl_qnode_of(head))->state) == FL_QNODE_WAIT)
      head = fl_load_relaxed(&h->prev);
    if (fl_spin_elapsed((uint32_t)fl_load_relaxed(&h->beat), fl_spin_now(),
                        fl_load_relaxed(&fl_spin_patience))) {
      after = fl_qnode_wait_link(h);
      /* Release: its thread sees this after the release of the lock.  */
      fl_store_release(&h->state, FL_QNODE_GONE);
      fl_qspin_grant_from(l, after, code);
      state = fl_load_relaxed(&node->state);
    }
  }
  if (state == FL_QNODE_HEAD) {
    fl_qspin_head_leaves(l, node, code);
    return;
  }
  /* A running node is the head ahead of us: unlink ourselves from between
   * prev and our successor.  prev's link is cleared first, so that an
   * arrival that links itself behind prev once the tail is prev again is
   * not overwritten.  */
  prev = fl_load_relaxed(&node->prev);
  p = fl_qnode_of(prev);
  fl_store_relaxed(&p->next, 0);
  v = (uint32_t)fl_load_relaxed(&l->word);
  while (FL_QSPIN_TAIL(v) == code) {
    uint32_t seen = (uint32_t)fl_atomic_cmpxchg_relaxed(
        &l->word, (int32_t)v,
        (int32_t)((v & ~FL_QSPIN_TAIL_MASK)
                  | (uint32_t)prev << FL_QSPIN_TAIL_SHIFT));
    if (seen == v)
      return;
    v = seen;
  }
  after = fl_qnode_wait_link(node);
  fl_store_relaxed(&fl_qnode_of(after)->prev, prev);
  fl_store_release(&p->next, after);
}

/* How a queued waiter's wait ended.  */
enum { FL_QWAIT_HEAD, FL_QWAIT_REQUEUE, FL_QWAIT_TOOK_LOCK };

/* Spin on our own node until our predecessor makes us the head.  Every
 * so often show that we are running, and look at the word: if it stops
 * changing while held, its holder may need our CPU; if it sits unlocked
 * for a patience, the head is not running and we take the lock.  */
static int fl_qspin_wait_in_queue(fl_qspinlock_t *l, struct fl_qnode *node,
                                  int32_t code, uint32_t v)
{
  int32_t state, waited;
  struct fl_spin_watch watch;
  uint32_t now, i;

  fl_spin_watch_start(&watch, v);
  for (i = 1; (state = fl_load_acquire(&node->state)) == FL_QNODE_WAIT; i++) {
    fl_cpu_relax();
    if (i % FL_QSPIN_BEAT_EVERY != 0)
      continue;
    now = fl_spin_now();
    fl_store_relaxed(&node->beat, (int32_t)now);
    v = (uint32_t)fl_load_relaxed(&l->word);
    waited = fl_spin_watch(&watch, v, now);
    /* Acquire: the critical section stays after the take.  A pending
     * waiter that let the lock sit is not running either: it loses its
     * bit, as to the head.  */
    if (!(v & FL_QSPIN_LOCKED_MASK)
        && waited > fl_load_relaxed(&fl_spin_patience)
        && fl_atomic_cmpxchg_acquire(
               &l->word, (int32_t)v,
               (int32_t)((v & ~FL_QSPIN_PENDING) | FL_QSPIN_LOCKED))
               == (int32_t)v) {
      fl_qspin_waiter_leaves(l, node, code);
      return FL_QWAIT_TOOK_LOCK;
    }
    if (waited > FL_SPIN_YIELD_AFTER)
      sched_yield();
  }
  return state == FL_QNODE_GONE ? FL_QWAIT_REQUEUE : FL_QWAIT_HEAD;
}

/* The head: wait for the holder and the pending waiter to go, and take
 * the lock.  A pending waiter that leaves a free lock untaken for a
 * patience is not running: take the lock from it.  Progress here is a
 * change in the locked and pending bits (the tail moves with every
 * arrival).  Returns 0 with the lock taken, or 1 when we were taken out
 * of the queue and must queue again.  */
static int fl_qspin_head(fl_qspinlock_t *l, struct fl_qnode *node, int32_t code)
{
  struct fl_spin_watch watch;
  uint32_t v, now, i, want;
  int32_t waited;

  fl_spin_watch_start(&watch,
                      (uint32_t)fl_load_relaxed(&l->word) & FL_QSPIN_BUSY);
  for (i = 1;; i++) {
    /* Acquire: the state read below sees what the holder that released
     * this word wrote before it.  */
    v = (uint32_t)fl_load_acquire(&l->word);
    /* A holder may have found us not running and taken us out of the
     * queue (it wrote GONE before its release, which our load of v
     * acquired when it is that release's word): queue again, at once.
     * Looking only when the lock shows free, as this did until
     * 2026-12-05, left a head passed over while it was preempted
     * spinning for as long as other threads kept the lock taken, by the
     * fastpath once the queue was empty (models/qspinlock.pml's
     * progress check; its BUG_GONE_WHEN_FREE).  Our own node's line:
     * the look costs no trip between CPUs.  */
    if (fl_load_acquire(&node->state) == FL_QNODE_GONE)
      return 1;
    now = fl_spin_now();
    waited = fl_spin_watch(&watch, v & FL_QSPIN_BUSY, now);
    if (i % FL_QSPIN_BEAT_EVERY == 0)
      fl_store_relaxed(&node->beat, (int32_t)now);
    if (!(v & FL_QSPIN_BUSY)
        || ((v & FL_QSPIN_BUSY) == FL_QSPIN_PENDING
            && waited > fl_load_relaxed(&fl_spin_patience))) {
      want = FL_QSPIN_TAIL(v) == code
                 ? FL_QSPIN_LOCKED
                 : (v & ~FL_QSPIN_PENDING) | FL_QSPIN_LOCKED;
      /* Acquire: the critical section stays after the take.  */
      if (fl_atomic_cmpxchg_acquire(&l->word, (int32_t)v, (int32_t)want)
          == (int32_t)v)
        break;
      continue;
    }
    if (waited > FL_SPIN_YIELD_AFTER)
      sched_yield();
    fl_cpu_relax();
  }
  /* v may be a word we read before we were preempted, taken out of the
   * queue, and the word came back to the same value: then the take above
   * succeeded, and the holder's GONE is visible through it.  We hold the
   * lock, but the queue is no longer ours to touch (our tail code cannot
   * be in v: we were not the last when we were taken out).  */
  if (fl_load_acquire(&node->state) == FL_QNODE_GONE)
    return 0;
  if (FL_QSPIN_TAIL(v) != code)
    fl_qspin_grant_from(l, fl_qnode_wait_link(node), 0);
  return 0;
}

static int fl_qspin_wait(fl_qspinlock_t *l, int32_t old)
{
  struct fl_qnode *node;
  struct fl_spin_watch watch;
  uint32_t v, seen;
  int32_t code, i;

  (void)old;
restart:
  v = (uint32_t)fl_load_relaxed(&l->word);
  for (i = 0; v == FL_QSPIN_PENDING && i < FL_QSPIN_HANDOVER_SPINS; i++) {
    fl_cpu_relax();
    v = (uint32_t)fl_load_relaxed(&l->word);
  }

  /* No pending waiter and no queue: take a free lock, or become the
   * pending waiter of a held one.  Acquire: for the take, the critical
   * section stays after it; for pending, our reads of the word below do.  */
  while (!(v & ~FL_QSPIN_LOCKED_MASK)) {
    uint32_t want = v == 0 ? FL_QSPIN_LOCKED : v | FL_QSPIN_PENDING;

    seen = (uint32_t)fl_atomic_cmpxchg_acquire(&l->word, (int32_t)v,
                                               (int32_t)want);
    if (seen == v) {
      if (v == 0)
        return 0;
      goto pending;
    }
    v = seen;
  }
  goto queue;

pending:
  fl_spin_watch_start(&watch, v);
  for (;;) {
    v = (uint32_t)fl_load_acquire(&l->word);
    if (!(v & FL_QSPIN_PENDING))
      goto restart; /* taken from us while we were away */
    if (!(v & FL_QSPIN_LOCKED_MASK)) {
      /* Acquire: the critical section stays after the take.  */
      if (fl_atomic_cmpxchg_acquire(
              &l->word, (int32_t)v,
              (int32_t)((v & ~FL_QSPIN_PENDING) | FL_QSPIN_LOCKED))
          == (int32_t)v)
        return 0;
      continue;
    }
    if (fl_spin_watch(&watch, v & FL_QSPIN_BUSY, fl_spin_now())
        > FL_SPIN_YIELD_AFTER)
      sched_yield();
    fl_cpu_relax();
  }

queue:
  code = fl_qnode_take(&node);
  if (code == 0)
    return fl_qspin_lock_unqueued(l);
  v = fl_qnode_enqueue(l, node, code);
  if (FL_QSPIN_TAIL(v) != 0) {
    switch (fl_qspin_wait_in_queue(l, node, code, v)) {
      case FL_QWAIT_REQUEUE:
        fl_qnode_put();
        goto restart;
      case FL_QWAIT_TOOK_LOCK:
        fl_qnode_put();
        return 0;
    }
  }
  if (fl_qspin_head(l, node, code) != 0) {
    fl_qnode_put();
    goto restart;
  }
  fl_qnode_put();
  return 0;
}

/* Busy with a holder, a pending waiter or a queue; held with the locked
 * byte set.  */
static int fl_qspin_busy(uint32_t v)
{
  return v != 0;
}

static int fl_qspin_held(uint32_t v)
{
  return (v & FL_QSPIN_LOCKED_MASK) != 0;
}

static int fl_qspin_release(fl_qspinlock_t *l)
{
  uint32_t v = (uint32_t)fl_load_relaxed(&l->word), seen;

  for (;;) {
    if (!fl_qspin_held(v))
      return EPERM;
    /* Release: the critical section is done before the word reads
     * unlocked.  */
    seen = (uint32_t)fl_atomic_cmpxchg_release(
        &l->word, (int32_t)v, (int32_t)(v & ~FL_QSPIN_LOCKED_MASK));
    if (seen == v)
      return 0;
    v = seen;
  }
}

FL_SPIN_DEFINE_API(qspin, fl_qspinlock_t, 0, fl_qspin_busy, fl_qspin_held,
                   fl_spin_was_free, fl_qspin_wait, fl_qspin_attempt,
                   fl_spin_try_failed, fl_qspin_release)
