/* src/rwsem/rwsem.c: the reader-writer semaphore's slowpaths.
 *
 * THE COUNT WORD (s->count), bit by bit
 *
 *   bit  31      WAITERS  a waiter is queued (rwait or wwait counts one).
 *                         The sign bit, so that up_write's add_negative
 *                         ("lock sub; js", seed 004) sees it for free.
 *   bits 30..14  readers  read locks held through this word, plus readers
 *                         in flight: down_read adds itself first and looks
 *                         afterwards, and takes itself away again if it
 *                         may not stay.  0..0xffff are real counts;
 *                         0x10000..0x17fff is an add that found the field
 *                         full (that reader gets EAGAIN) and
 *                         0x18000..0x1ffff a subtract that found it empty
 *                         (that up_read gets EPERM); whoever made such a
 *                         value undoes it at once.  Bit 30 is never set
 *                         otherwise, so neither ever reaches WAITERS,
 *                         except an up_read on an empty field whose
 *                         borrow flips it until the undo flips it back
 *                         (the undo then also does the release work a
 *                         writer may have skipped meanwhile: see below).
 *   bits 13..10  zero.
 *   bit  9       RSTOP    PREFER_WRITER with writers queued: readers may
 *                         not pass them, so down_read's fastpath fails.
 *                         (In the other modes readers pass waiters
 *                         except in an episode, which HANDOFF stops.)
 *   bit  8       WTURN    a woken writer lost the lock to one that was not
 *                         queued: the queued writers' turn.  No writer
 *                         that has not waited may take the lock, and the
 *                         next release that leaves it free gives it to a
 *                         queued writer (WGRANT).  A running writer
 *                         passes a sleeping one at most once per wake-up,
 *                         as in the kernel's mutex hand-off.
 *   bit  7       WWOKEN   a queued writer was woken to compete (HANDOFF
 *                         off) and has not come back to qlock yet: until
 *                         it has, a release that finds only writers
 *                         queued need not take qlock to wake another
 *                         (release_needs_handoff).
 *   bit  6       never set.  A thread that does not know its TID yet
 *                expects it (FL_RWSEM_NO_TID) in down_write's cmpxchg, so
 *                that its first down_write fails into the slowpath, which
 *                learns the TID that the fastpath records in owner.
 *   bit  5       BIASED   READ_BIAS is on (bias.c): readers are in the
 *                         table, not here, so a writer that gets WRITER
 *                         must revoke the bias before entering.  Its only
 *                         job here is to make down_write's cmpxchg(0, W)
 *                         fail, so that the inline fastpath need not look
 *                         at the bias itself.
 *   bit  4       WGRANT   hand-off gave the lock to the queued writers:
 *                         WRITER is set on their behalf, and the first of
 *                         them to look (under qlock) takes it over.
 *   bit  3       WWAIT    writers are queued.
 *   bit  2       RWAIT    readers are queued.
 *   bit  1       HANDOFF  a hand-off episode is on (fair mode): the
 *                         queue waited longer than the bound (see mode
 *                         below).  Nobody takes the lock past the queue,
 *                         and each release hands it on, phase by phase,
 *                         until the waiters that were queued when the
 *                         episode began have all had it.
 *   bit  0       WRITER   a writer holds the lock.
 *
 * 0 is an unlocked lock nobody waits for: down_write's one cmpxchg wants
 * exactly that; down_read's one xadd wants none of WRITER, HANDOFF,
 * WAITERS or bits 29-30 (readers >= 0x8000: the slowpath tells "many" from
 * "full"); up_read's one xadd is fine while the old value was >= one
 * reader as a signed number (so neither WAITERS nor an empty field);
 * up_write's one add_negative is fine while the sign stays clear.
 *
 * Who changes what: the fastpaths add and take away READER and WRITER;
 * WAITERS, RWAIT, WWAIT, HANDOFF and the setting of WGRANT (with WRITER
 * and the readers a grant admits) change only under qlock, so a qlock
 * holder knows their values and changes them with plain atomic adds;
 * WGRANT is cleared by the writer that claims it, also under qlock;
 * BIASED is set by a reader that holds the lock through this word (as it
 * turns the bias back on) and cleared by the writer that revokes the bias
 * while holding WRITER.
 *
 * THE OTHER WORDS
 *
 *   rwait   bits 31..16 the grant generation, bits 15..0 the queued
 *           readers.  Queued readers sleep on it.  A grant admits every
 *           queued reader at once: under qlock it adds their READERs to
 *           the count, zeroes the queue and bumps the generation; a
 *           sleeping reader that sees the generation move knows it holds
 *           the lock and goes without touching qlock.  (It would miss
 *           its grant only if exactly 65536 grants came before it looked;
 *           but while it holds the lock no writer phase can come, and
 *           readers are then granted only to join it, once per hand-off
 *           episode.)  The granter wakes them all.  Waking one, who would
 *           wake the rest, would spare a writer that releases to thirty
 *           readers being preempted by thirty wake-ups (and then waiting
 *           tens of milliseconds for a CPU), but the kernel wakes the
 *           sleeper of best priority first, which may be a reader queued
 *           after the grant: then nobody would wake the granted ones.
 *   wwait   bits 31..16 a sequence bumped by every wake of a writer,
 *           bits 15..0 the queued writers.  Queued writers sleep on it.
 *   qlock   a futex lock (0 free, 1 held, 2 held with sleepers) around
 *           every change to the queues and the waiter bits; held for a
 *           few loads and atomics, never across a sleep or a wake.
 *   owner   the write holder's kernel TID, 0 when nobody holds the write
 *           lock: written by the holder only, after taking and before
 *           releasing, so "owner == my TID" means "I hold it" for EDEADLK
 *           and EPERM.  TIDs are unique across processes: FL_PSHARED too.
 *   mode    bits 0 and 11..8 the flags of fl_rwsem_init; bits 31..12
 *           when the next hand-off episode becomes due for the waiters
 *           queued now (start_wait, end_episode); bits 7..2 how many
 *           writer grants the episode in progress still owes, bit 1 that
 *           it still owes the readers queued at its start their grant
 *           (start_episode).  All written under qlock.  Any thread that
 *           comes to a slowpath while waiters are queued checks the due
 *           time (handoff_due), so that an episode starts once the queue
 *           has waited past the bound even when the waiter cannot get a
 *           CPU to start it itself.
 *   bias, bias_id   READ_BIAS: see bias.c.
 *
 * NO LOST WAKE-UPS
 *
 * 1. A waiter queues itself (counts itself in rwait/wwait and sets the
 *    waiter bits) under qlock, then looks at the count once more, and
 *    only then reads the futex word it will sleep on.
 * 2. Whoever leaves the lock free while WAITERS is set (up_write, the last
 *    up_read, a reader backing out, an undone bad up_read) runs the
 *    hand-off under qlock; so does every waiter that finds the lock free
 *    but may not take it, and a waiter that gives up.  The hand-off
 *    changes the futex word of whoever it wakes, under qlock.
 * So either the waiter's last look sees the lock free, or the releaser's
 * atomic came after WAITERS was set, saw it, and its hand-off changes the
 * futex word after the waiter read it: the futex then will not sleep, or
 * is woken.
 *
 * THE HAND-OFF (handoff() below), run under qlock with the lock free or
 * read-held: queued readers are admitted as one batch (a grant); a queued
 * writer is either woken to compete for the lock again (as long as
 * HANDOFF is off: this keeps the lock busy while the writer wakes up) or,
 * with HANDOFF on, given the lock (WGRANT).  Which class goes next: fair,
 * after a writer the readers, after readers a writer; PREFER_READER the
 * readers whenever some wait; PREFER_WRITER a writer whenever one waits.
 * Readers that find a reader phase in progress join it unless a writer
 * must go first (HANDOFF, or PREFER_WRITER with writers queued).
 *
 * HAND-OFF EPISODES (fair mode).  Hand-off costs a sleep and a wake-up per
 * phase, and a thread the episode served comes back at once and queues
 * behind it: an episode that lasted until the queue emptied would, with
 * more threads than CPUs, never end, and the lock would run at the speed
 * of the scheduler.  So an episode owes grants only to the waiters queued
 * when it began (one grant to the readers, one to each writer, up to
 * EPISODE_WRITERS_MAX) and ends when it has paid them; then running
 * threads take the lock past the queue again, and the next episode comes
 * due one bound later if anybody still waits.  A waiter therefore waits
 * at most about two bounds plus the phases ahead of it.
 *
 * Before queueing, a waiter spins a little: at most SPIN_MAX polls, and
 * it gives up early once the count word has stayed the same for
 * SPIN_STALE polls (the holder is not moving: sleeping is cheaper), and
 * at once under HANDOFF.  With 45 threads on 2 cores nothing ever spins
 * for long.  */
#include "config.h"

#include "rwsem/rwsem-internal.h"

#include "sys/annotate.h"
#include "sys/clock.h"
#include "sys/cpu.h"
#include "sys/futex.h"

#include <errno.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#define WRITER FL_RWSEM_WRITER
#define HANDOFF FL_RWSEM_HANDOFF
#define RWAIT FL_RWSEM_RWAIT
#define WWAIT FL_RWSEM_WWAIT
#define WGRANT FL_RWSEM_WGRANT
#define WWOKEN FL_RWSEM_WWOKEN
#define WTURN FL_RWSEM_WTURN
#define RSTOP FL_RWSEM_RSTOP
#define BIASED FL_RWSEM_BIASED
#define READER FL_RWSEM_READER
#define WAITERS FL_RWSEM_WAITERS
#define READERS FL_RWSEM_READERS
#define WAITER_BITS \
  ((uint32_t)WAITERS | RWAIT | WWAIT | HANDOFF | WWOKEN | WTURN | RSTOP)

/* s->mode: the flags of fl_rwsem_init in bits 0 and 8-11, what the
 * episode in progress still owes in bits 1-7 (start_episode), the next
 * episode's due time above (due_after_ns).  */
#define MODE_FLAGS 0xf01u
#define MODE_OWES_READERS 0x2u
#define MODE_OWES_WRITERS 0xfcu
#define MODE_DUE 0xfffff000u
#define EPISODE_WRITER 0x4u
#define EPISODE_WRITERS_MAX 63u
#define DUE_SHIFT 12

#define SPIN_MAX 100
#define SPIN_STALE 20

/* What handoff() asks its caller to do once qlock is released.  */
#define WAKE_READERS 1
#define WAKE_WRITER 2

/* Who left the lock, for the fair mode's choice of the next phase.  */
enum after { AFTER_NONE, AFTER_READERS, AFTER_WRITER };

static int32_t handoff_ns = 1000000;

int fl_rwsem_set_handoff_ns(int32_t ns)
{
  if (ns < 0)
    return EINVAL;
  /* An atomic the Valgrind tools would see racing with the waiters.  */
  FL_VG_HIDE(&handoff_ns, sizeof handoff_ns);
  fl_store_relaxed(&handoff_ns, ns);
  return 0;
}

/* ------------------------------------------------------------------ */
/* The calling thread's TID.                                           */
/* ------------------------------------------------------------------ */

__thread struct fl_rwsem_thread fl_rwsem_thread
  __attribute__((tls_model("initial-exec"))) = { FL_RWSEM_NO_TID, -1, NULL, 0 };

static pthread_once_t self_once = PTHREAD_ONCE_INIT;

/* A child of fork() is a new thread with its parent's cache.  */
static void self_forget(void)
{
  fl_rwsem_thread.tid = -1;
  fl_rwsem_thread.free_count = FL_RWSEM_NO_TID;
}

static void self_setup(void)
{
  pthread_atfork(NULL, NULL, self_forget);
}

int32_t fl_rwsem_self_get(void)
{
  if (fl_rwsem_thread.tid < 0) {
    pthread_once(&self_once, self_setup);
    fl_rwsem_thread.tid = (int32_t)syscall(SYS_gettid);
    fl_rwsem_thread.free_count = 0;
  }
  return fl_rwsem_thread.tid;
}

/* ------------------------------------------------------------------ */
/* Small helpers.                                                      */
/* ------------------------------------------------------------------ */

static int pshared(const fl_rwsem_t *s)
{
  return (fl_load_relaxed(&s->mode) & FL_PSHARED) != 0;
}

static int prefers(const fl_rwsem_t *s, unsigned flag)
{
  return ((unsigned)fl_load_relaxed(&s->mode) & flag) != 0;
}

static int fair(const fl_rwsem_t *s)
{
  return !prefers(s, FL_RWSEM_PREFER_READER | FL_RWSEM_PREFER_WRITER);
}

/* The write holder is the caller.  */
static int writer_is_me(const fl_rwsem_t *s, int32_t c)
{
  return (c & WRITER) && fl_load_relaxed(&s->owner) == fl_rwsem_thread.tid;
}

/* May a reader that is not yet counted come in on count c?  */
static int reader_may_enter(const fl_rwsem_t *s, int32_t c)
{
  return !(c & (WRITER | HANDOFF)) && READERS(c) < FL_RWSEM_READERS_MAX &&
         !(prefers(s, FL_RWSEM_PREFER_WRITER) && (c & WWAIT));
}

/* May a reader whose READER is in c stay?  (Room is checked apart.)  */
static int reader_may_stay(const fl_rwsem_t *s, int32_t c)
{
  return !(c & (WRITER | HANDOFF)) &&
         !(prefers(s, FL_RWSEM_PREFER_WRITER) && (c & WWAIT));
}

/* May a writer take the lock from count c, past the queue if any?  One
 * that has waited in the queue (waited) may in the queued writers' turn.  */
static int writer_may_take(const fl_rwsem_t *s, int32_t c, int waited)
{
  return !(c & (WRITER | HANDOFF)) && READERS(c) == 0 &&
         (waited || !(c & WTURN)) &&
         !(prefers(s, FL_RWSEM_PREFER_READER) && (c & RWAIT));
}

static int lock_free(int32_t c)
{
  return !(c & WRITER) && READERS(c) == 0;
}

/* Is all there is to do on count c to wake a writer while a woken one is
 * on its way (WWOKEN)?  That one takes the lock, or passes it on if it
 * loses.  */
static int writer_on_its_way(int32_t c)
{
  return (c & (WWOKEN | RWAIT | HANDOFF)) == WWOKEN;
}

/* Must a release that left count c run the hand-off (qlock)?  Only if the
 * lock is free with waiters, and a woken writer is not on its way.  */
static int release_needs_handoff(int32_t c)
{
  return lock_free(c) && (c & WAITERS) && !writer_on_its_way(c);
}

/* Wake after a hand-off: the readers granted and one writer.  */
static void wake(fl_rwsem_t *s, int ps, int what)
{
  if (what & WAKE_READERS)
    fl_futex_wake((uint32_t *)&s->rwait, INT32_MAX, ps);
  if (what & WAKE_WRITER)
    fl_futex_wake((uint32_t *)&s->wwait, 1, ps);
}

/* ------------------------------------------------------------------ */
/* qlock: a futex lock (Drepper, "Futexes are tricky", mutex #3).      */
/* ------------------------------------------------------------------ */

static void q_lock(fl_rwsem_t *s, int ps)
{
  int32_t c;
  int i;

  /* Acquire: what the previous holder did to the queues is visible.  */
  c = fl_atomic_cmpxchg_acquire(&s->qlock, 0, 1);
  for (i = 0; c != 0 && i < SPIN_MAX; i++) {
    fl_cpu_relax();
    if (fl_load_relaxed(&s->qlock) == 0)
      c = fl_atomic_cmpxchg_acquire(&s->qlock, 0, 1);
  }
  if (c == 0)
    return;
  /* 2: there may be sleepers, so the unlock must wake one.  */
  if (c != 2)
    c = fl_atomic_xchg_acquire(&s->qlock, 2);
  while (c != 0) {
    fl_futex_wait((uint32_t *)&s->qlock, 2, ps, CLOCK_MONOTONIC, NULL);
    c = fl_atomic_xchg_acquire(&s->qlock, 2);
  }
}

static void q_unlock(fl_rwsem_t *s, int ps)
{
  /* Release: our changes to the queues before the next holder's.  */
  if (fl_atomic_xchg_release(&s->qlock, 0) == 2)
    fl_futex_wake((uint32_t *)&s->qlock, 1, ps);
}

/* ------------------------------------------------------------------ */
/* The queues (qlock held).                                            */
/* ------------------------------------------------------------------ */

/* The waiter bits c should have with nr readers and nw writers queued:
 * HANDOFF stays while anybody is queued and goes with the last, WWOKEN
 * and WTURN with the last writer.  */
static uint32_t waiter_bits(const fl_rwsem_t *s, int32_t c, uint32_t nr,
                            uint32_t nw)
{
  uint32_t bits = 0;

  if (nr != 0)
    bits |= RWAIT;
  if (nw != 0)
    bits |= WWAIT | ((uint32_t)c & (WWOKEN | WTURN));
  if (nw != 0 && prefers(s, FL_RWSEM_PREFER_WRITER))
    bits |= RSTOP;
  if (nr + nw != 0)
    bits |= (uint32_t)WAITERS | ((uint32_t)c & HANDOFF);
  return bits;
}

/* What to add to c for its waiter bits to become want (each bit either
 * set or cleared exactly once, so modulo-2^32 addition does it).  */
static int32_t bits_delta(int32_t c, uint32_t want)
{
  return (int32_t)(want - ((uint32_t)c & WAITER_BITS));
}

/* The lock's hand-off due time, in the top bits of s->mode (the flags
 * keep the low DUE_SHIFT ones): CLOCK_MONOTONIC nanoseconds modulo 2^32,
 * rounded down to 4096 ns.  It wraps every 4.3 s: a due time more than
 * about 2 s old reads as not due yet, and then the waiter's own timer
 * (read_wait, write_wait) is what turns hand-off on.  */
static uint32_t due_after_ns(int64_t ns)
{
  return (uint32_t)((uint64_t)(fl_clock_ns(CLOCK_MONOTONIC) + ns) >> DUE_SHIFT)
         << DUE_SHIFT;
}

/* Nobody is queued any more: the next episode's due time and what an
 * episode still owes go too, so that a lock nobody waits for is as it was
 * before anybody waited (a timed waiter that gives up leaves no trace).  */
static void queue_emptied(fl_rwsem_t *s)
{
  fl_store_relaxed(&s->mode, (int32_t)((uint32_t)fl_load_relaxed(&s->mode) & MODE_FLAGS));
}

/* Bring the waiter bits into line with the queues.  Relaxed: the bits are
 * ours (qlock), and the count word's own modification order is all that
 * the no-lost-wake-up argument needs.  */
static void sync_waiter_bits(fl_rwsem_t *s)
{
  int32_t c = fl_load_relaxed(&s->count);
  uint32_t nr = FL_RWSEM_QUEUED(fl_load_relaxed(&s->rwait));
  uint32_t nw = FL_RWSEM_QUEUED(fl_load_relaxed(&s->wwait));
  int32_t d = bits_delta(c, waiter_bits(s, c, nr, nw));

  if (d != 0)
    fl_atomic_fetch_add_relaxed(&s->count, d);
  if (nr + nw == 0)
    queue_emptied(s);
}

/* Admit all nr queued readers on count c (no writer in it).  Returns
 * WAKE_READERS, or 0 if the count changed under us.  */
static int grant_readers(fl_rwsem_t *s, int32_t c, uint32_t nr, uint32_t nw)
{
  int32_t want = (int32_t)((uint32_t)c + nr * (uint32_t)READER) +
                 bits_delta(c, waiter_bits(s, c, 0, nw));
  int32_t rw;

  /* Acquire: the readers we admit must see what the last writer
   * released; release: and our queue changes.  */
  if (fl_atomic_cmpxchg_acq_rel(&s->count, c, want) != c)
    return 0;
  /* Next generation, nobody queued.  Release: a reader that sees the new
   * generation (acquire) holds the lock, with what we saw.  */
  rw = fl_load_relaxed(&s->rwait);
  fl_store_release(&s->rwait, (int32_t)(((uint32_t)rw & 0xffff0000u) + 0x10000u));
  if (nw == 0)
    queue_emptied(s);
  return WAKE_READERS;
}

/* HANDOFF or WTURN: give the free lock c to one of the nw queued
 * writers; that ends the queued writers' turn.  */
static int grant_writer(fl_rwsem_t *s, int32_t c, uint32_t nr, uint32_t nw)
{
  int32_t want = (int32_t)((uint32_t)c + WRITER + WGRANT) +
                 bits_delta(c, waiter_bits(s, c, nr, nw - 1) & ~(uint32_t)WTURN);

  if (fl_atomic_cmpxchg_acq_rel(&s->count, c, want) != c)
    return 0;
  /* One writer fewer queued (the one that will claim WGRANT), and a new
   * sequence, which also tells the queued writers the grant is theirs.
   * Relaxed: they look at both under qlock, which orders them.  */
  fl_atomic_fetch_add_relaxed(&s->wwait, 0x10000 - 1);
  if (nr + nw == 1)
    queue_emptied(s);
  return WAKE_WRITER;
}

/* Does the episode in progress still owe the queued readers a grant?  */
static int owes_readers(const fl_rwsem_t *s)
{
  return ((uint32_t)fl_load_relaxed(&s->mode) & MODE_OWES_READERS) != 0;
}

/* Do the queued readers go next (1) rather than a writer (0), on count c
 * (free or read-held), with writers queued?  Fair: in an episode, once,
 * as the first phase it can be (readers holding the lock are joined at
 * once; then the writers it owes follow one another, with no reader
 * phase between them, since every phase is a sleep and a wake-up);
 * between episodes, after a writer.  */
static int readers_go(const fl_rwsem_t *s, int32_t c, enum after after)
{
  if (prefers(s, FL_RWSEM_PREFER_READER))
    return 1;
  if (prefers(s, FL_RWSEM_PREFER_WRITER))
    return 0;
  if (c & HANDOFF)
    return owes_readers(s);
  return after == AFTER_WRITER || READERS(c) != 0;
}

/* The next phase when the lock is free: readers (1) or a writer (0).  */
static int readers_next(const fl_rwsem_t *s, int32_t c, uint32_t nr,
                        uint32_t nw, enum after after)
{
  if (nr == 0)
    return 0;
  return nw == 0 || readers_go(s, c, after);
}

/* May queued readers join readers that hold the lock (count c)?  */
static int readers_may_join(const fl_rwsem_t *s, int32_t c, uint32_t nw,
                            enum after after)
{
  return nw == 0 || readers_go(s, c, after);
}

/* Begin a hand-off episode (qlock held, HANDOFF off): it owes the readers
 * queued now one grant and each writer queued now one.  */
static void start_episode(fl_rwsem_t *s)
{
  uint32_t nr = FL_RWSEM_QUEUED(fl_load_relaxed(&s->rwait));
  uint32_t nw = FL_RWSEM_QUEUED(fl_load_relaxed(&s->wwait));
  uint32_t m = (uint32_t)fl_load_relaxed(&s->mode) & (MODE_FLAGS | MODE_DUE);

  if (nr != 0)
    m |= MODE_OWES_READERS;
  m |= (nw < EPISODE_WRITERS_MAX ? nw : EPISODE_WRITERS_MAX) * EPISODE_WRITER;
  fl_store_relaxed(&s->mode, (int32_t)m);
  fl_atomic_fetch_add_relaxed(&s->count, HANDOFF);
}

/* Has the episode paid what it owes, as far as anybody it owes is still
 * queued (nr readers, nw writers)?  A waiter that gave up is owed
 * nothing; a later one that takes its grant costs nothing extra.  */
static int episode_paid(const fl_rwsem_t *s, uint32_t nr, uint32_t nw)
{
  uint32_t m = (uint32_t)fl_load_relaxed(&s->mode);

  return (nr == 0 || !(m & MODE_OWES_READERS)) &&
         (nw == 0 || !(m & MODE_OWES_WRITERS));
}

/* End the episode (qlock held, HANDOFF on, somebody still queued): running
 * threads may pass the queue again, and the next episode is due one bound
 * from now.  */
static void end_episode(fl_rwsem_t *s)
{
  uint32_t m = (uint32_t)fl_load_relaxed(&s->mode) & MODE_FLAGS;

  fl_store_relaxed(&s->mode, (int32_t)(m | due_after_ns(fl_load_relaxed(&handoff_ns))));
  fl_atomic_fetch_add_relaxed(&s->count, -HANDOFF);
}

/* A grant under HANDOFF (granted: WAKE_READERS or WAKE_WRITER) pays the
 * episode; once it has paid all it owes, it ends.  If the grant emptied
 * the queue, the episode is gone already (HANDOFF went with the last
 * waiter, and the mode word was reset).  */
static void episode_pay(fl_rwsem_t *s, int granted)
{
  uint32_t m = (uint32_t)fl_load_relaxed(&s->mode);

  if (!(fl_load_relaxed(&s->count) & HANDOFF))
    return;
  if (granted == WAKE_READERS)
    m &= ~MODE_OWES_READERS;
  else if (m & MODE_OWES_WRITERS)
    m -= EPISODE_WRITER;
  fl_store_relaxed(&s->mode, (int32_t)m);
  if (episode_paid(s, FL_RWSEM_QUEUED(fl_load_relaxed(&s->rwait)),
                   FL_RWSEM_QUEUED(fl_load_relaxed(&s->wwait))))
    end_episode(s);
}

/* Wake one queued writer to compete (qlock held, HANDOFF off): whoever
 * gets there first may keep the lock busy meanwhile.  It stays queued
 * until it wins, and if it loses, the queued writers' turn comes
 * (WTURN).  One at a time: while WWOKEN says one is on its way, it will
 * be the one to pass the lock on if it loses.  Relaxed: the new sequence
 * only makes a sleeper look again, and WWOKEN is ours (qlock).  */
static int wake_competitor(fl_rwsem_t *s, int32_t c)
{
  if (c & WWOKEN)
    return 0;
  fl_atomic_fetch_add_relaxed(&s->count, WWOKEN);
  fl_atomic_fetch_add_relaxed(&s->wwait, 0x10000);
  return WAKE_WRITER;
}

/* Pass the lock on to the queue if it is free, or let queued readers join
 * a reader phase.  qlock held.  Returns what to wake after unlocking.  */
static int handoff(fl_rwsem_t *s, enum after after)
{
  for (;;) {
    int32_t c = fl_load_relaxed(&s->count);
    uint32_t nr = FL_RWSEM_QUEUED(fl_load_relaxed(&s->rwait));
    uint32_t nw = FL_RWSEM_QUEUED(fl_load_relaxed(&s->wwait));
    uint32_t readers = READERS(c);
    int woken;

    if (nr + nw == 0 || (c & WRITER))
      return 0;   /* the writer's release will come back here */
    if ((c & HANDOFF) && episode_paid(s, nr, nw)) {
      end_episode(s);
      continue;
    }
    if (readers != 0) {
      /* Held by readers (or readers in flight, who come back here if
       * they leave it free).  */
      if (nr == 0 || readers + nr > FL_RWSEM_READERS_MAX ||
          !readers_may_join(s, c, nw, after))
        return 0;
      woken = grant_readers(s, c, nr, nw);
    } else if (readers_next(s, c, nr, nw, after)) {
      woken = grant_readers(s, c, nr, nw);
    } else if (c & (HANDOFF | WTURN)) {
      woken = grant_writer(s, c, nr, nw);
    } else {
      return wake_competitor(s, c);
    }
    if (woken) {
      if (c & HANDOFF)
        episode_pay(s, woken);
      else if (woken == WAKE_READERS && nw != 0 && after == AFTER_WRITER)
        woken |= wake_competitor(s, c);
      return woken;
    }
  }
}

/* A waiter queues (qlock held); first: the queue was empty.  The first
 * waiter of an episode records when hand-off becomes due, so that any
 * thread that comes to the slowpath later can see it is overdue (the
 * waiter itself may be runnable but not running: 30 readers on 2 CPUs
 * keep it off the CPU for tens of milliseconds).  Returns when the
 * waiter's first sleep ends: its own bound, abstime if that comes first,
 * or abstime alone.  */
static const struct timespec *start_wait(fl_rwsem_t *s, int first,
                                         const struct fl_rwsem_wait *w,
                                         struct timespec *bound)
{
  int32_t ns = fl_load_relaxed(&handoff_ns);

  /* During an episode the waiter needs no bound of its own: the next
   * episode comes due one bound after this one ends, and every thread
   * that comes to the lock meanwhile looks (handoff_due); a timer would
   * let it wake and claim a writer's grant (write_wait) before the
   * longer-waiting writer that the grant woke gets a CPU.  */
  if (!fair(s) || (fl_load_relaxed(&s->count) & HANDOFF))
    return w->abstime;
  if (first)
    fl_store_relaxed(&s->mode, (int32_t)(((uint32_t)fl_load_relaxed(&s->mode) &
                                          MODE_FLAGS) | due_after_ns(ns)));
  *bound = fl_deadline_after_ns(w->clock, ns);
  if (w->abstime != NULL && !fl_rwsem_after(w->abstime, bound))
    return w->abstime;
  return bound;
}

/* May an episode start on count c: fair mode, waiters queued, none on?  */
static int episode_may_start(const fl_rwsem_t *s, int32_t c)
{
  return (c & (WAITERS | HANDOFF)) == WAITERS && fair(s);
}

/* Has the next episode's due time passed (it reads the clock)?  */
static int due_passed(const fl_rwsem_t *s)
{
  uint32_t m = (uint32_t)fl_load_relaxed(&s->mode);

  return (int32_t)(due_after_ns(0) - (m & MODE_DUE)) >= 0;
}

/* Is a hand-off episode overdue on count c: fair mode, waiters queued
 * past the due time, no episode on?  Without qlock the mode word read may
 * be an older episode's: an episode then starts early or late, which is
 * harmless (the waiters' own timers bound "late"), and pass_on
 * looks again under qlock.  */
static int handoff_due(const fl_rwsem_t *s, int32_t c)
{
  return episode_may_start(s, c) && due_passed(s);
}

/* handoff_due for a thread that has just released the lock, as every
 * release does while waiters are queued: it reads the clock on one visit
 * in FL_RWSEM_CLOCK_EVERY of this thread.  Under kvm-clock a clock
 * read costs 26-45 ns, more than the lock itself, and an episode that
 * starts a few releases late is still on time.  A thread that seldom
 * comes here is seldom what keeps the waiters out.  */
static __thread unsigned leave_visits __attribute__((tls_model("initial-exec")));

static int due_on_leaving(const fl_rwsem_t *s, int32_t c)
{
  return episode_may_start(s, c) &&
         ++leave_visits % FL_RWSEM_CLOCK_EVERY == 0 && due_passed(s);
}

/* A waiter waited past the bound: begin an episode unless one is on
 * (qlock held), and pass the lock on, since nobody may now take it past
 * the queue.  */
static int starving(fl_rwsem_t *s)
{
  if (!(fl_load_relaxed(&s->count) & HANDOFF))
    start_episode(s);
  return handoff(s, AFTER_NONE);
}

/* A thread that is not queued found an episode overdue (due) or left the
 * lock in need of a hand-off: begin the episode if it is still due, and
 * pass the lock on (after: who left it, if anybody).  */
static void pass_on(fl_rwsem_t *s, int due, enum after after)
{
  int ps = pshared(s);
  int w;

  q_lock(s, ps);
  if (due && handoff_due(s, fl_load_relaxed(&s->count)))
    start_episode(s);
  w = handoff(s, after);
  q_unlock(s, ps);
  wake(s, ps, w);
}

/* ------------------------------------------------------------------ */
/* Readers.                                                            */
/* ------------------------------------------------------------------ */

/* Take back a READER this thread added but may not keep.  Relaxed: it
 * released nothing.  If that leaves the lock free with waiters, the
 * release work is ours (qlock is taken here unless the caller holds it).  */
static int read_back_out(fl_rwsem_t *s, int locked)
{
  int32_t c = fl_atomic_fetch_add_relaxed(&s->count, -READER) - READER;

  if (!release_needs_handoff(c))
    return 0;
  if (locked)
    return handoff(s, AFTER_READERS);
  pass_on(s, 0, AFTER_READERS);
  return 0;
}

#define READ_WAIT (-1)   /* read_settle: not an errno */

/* This thread's READER is in c: keep it (0), or take it back out and say
 * why (an errno, or READ_WAIT).  */
static int read_settle(fl_rwsem_t *s, int32_t c, int how)
{
  uint32_t readers = READERS(c);

  if (readers > FL_RWSEM_READERS_MAX) {
    read_back_out(s, 0);
    /* Our add met a full field: EAGAIN.  Beyond that, someone's undone
     * up_read on an empty field is in flight: just try again later.  */
    return readers < FL_RWSEM_UNDERFLOW ? EAGAIN : READ_WAIT;
  }
  if (writer_is_me(s, c)) {
    read_back_out(s, 0);
    return how == FL_RWSEM_TRY ? EBUSY : EDEADLK;
  }
  /* Even past an overdue waiter: the due time is looked at on the way
   * out (fl_rwsem_up_read_slowpath), since reading the clock here would
   * lengthen every read hold while waiters are queued, and with readers
   * overlapping on every CPU the lock would never come free for a writer
   * between episodes.  */
  if (reader_may_stay(s, c))
    return 0;
  read_back_out(s, 0);
  return READ_WAIT;
}

static int read_spin(fl_rwsem_t *s)
{
  int32_t last = 0;
  int i, stale = 0, rc;

  for (i = 0; i < SPIN_MAX && stale < SPIN_STALE; i++) {
    int32_t c = fl_load_relaxed(&s->count);

    if (c & HANDOFF)
      break;
    if (reader_may_enter(s, c)) {
      rc = read_settle(s, fl_atomic_fetch_add_acquire(&s->count, READER) + READER,
                       FL_RWSEM_TRY);
      if (rc != READ_WAIT && rc != EBUSY)
        return rc;
    }
    if (c == last) {
      stale++;
    } else {
      stale = 0;
      last = c;
    }
    fl_cpu_relax();
  }
  return READ_WAIT;
}

static int read_wait(fl_rwsem_t *s, const struct fl_rwsem_wait *w)
{
  int ps = pshared(s);
  struct timespec bound;
  const struct timespec *until;
  uint32_t gen;
  int32_t rw, c;
  int woken = 0, expired = 0, bound_passed = 0, tried = 0, handed = 0, rc;

  q_lock(s, ps);
  if (FL_RWSEM_QUEUED(fl_load_relaxed(&s->rwait)) == FL_RWSEM_QUEUED_MAX) {
    q_unlock(s, ps);
    return EAGAIN;
  }
  gen = FL_RWSEM_SEQ(fl_atomic_fetch_add_relaxed(&s->rwait, 1));
  until = start_wait(s, !(fl_load_relaxed(&s->count) & WAITERS), w, &bound);
  sync_waiter_bits(s);
  for (;;) {
    /* qlock held.  Granted?  Every hand-off may grant us, our own
     * included: so this comes first, and we come back here after each.  */
    if (FL_RWSEM_SEQ(fl_load_relaxed(&s->rwait)) != gen)
      break;
    if (bound_passed) {
      woken |= starving(s);
      bound_passed = 0;
      continue;
    }
    /* Our WAITERS bit is up: whoever releases the lock after this will
     * find us; if it let us in before that, we come in ourselves.  */
    c = fl_load_relaxed(&s->count);
    if (!tried && reader_may_enter(s, c)) {
      tried = 1;
      c = fl_atomic_fetch_add_acquire(&s->count, READER) + READER;
      if (reader_may_stay(s, c) && READERS(c) <= FL_RWSEM_READERS_MAX) {
        fl_atomic_fetch_add_relaxed(&s->rwait, -1);
        sync_waiter_bits(s);
        break;
      }
      woken |= read_back_out(s, 1);
      continue;
    }
    if (!handed) {
      woken |= handoff(s, AFTER_NONE);
      handed = 1;
      continue;
    }
    if (expired) {
      fl_atomic_fetch_add_relaxed(&s->rwait, -1);
      sync_waiter_bits(s);
      woken |= handoff(s, AFTER_NONE);
      q_unlock(s, ps);
      wake(s, ps, woken);
      return ETIMEDOUT;
    }
    q_unlock(s, ps);
    wake(s, ps, woken);
    woken = 0;

    /* Sleep until granted, without qlock: the grant needs nothing of us. */
    for (;;) {
      rw = fl_load_acquire(&s->rwait);
      if (FL_RWSEM_SEQ(rw) != gen)
        return 0;
      rc = fl_futex_wait((uint32_t *)&s->rwait, (uint32_t)rw, ps, w->clock, until);
      if (rc == ETIMEDOUT)
        break;
    }
    q_lock(s, ps);
    tried = handed = 0;
    if (until == w->abstime) {
      expired = 1;
    } else {
      bound_passed = 1;
      until = w->abstime;
    }
  }
  q_unlock(s, ps);
  wake(s, ps, woken);
  return 0;
}

/* old: the count before this thread's READER went in.  */
static int read_slow(fl_rwsem_t *s, int32_t old, const struct fl_rwsem_wait *w)
{
  int rc = read_settle(s, old + READER, w->how);

  if (rc != READ_WAIT)
    return rc;
  if (w->how == FL_RWSEM_TRY)
    return EBUSY;
  rc = read_spin(s);
  if (rc != READ_WAIT)
    return rc;
  return read_wait(s, w);
}

int fl_rwsem_down_read_slowpath(fl_rwsem_t *s, int32_t old, int how)
{
  struct fl_rwsem_wait w = { how, CLOCK_MONOTONIC, NULL };
  return read_slow(s, old, &w);
}

int fl_rwsem_count_down_read(fl_rwsem_t *s, const struct fl_rwsem_wait *w)
{
  int32_t old = fl_atomic_fetch_add_acquire(&s->count, READER);

  if ((old & FL_RWSEM_READ_FAILED) == 0)
    return 0;
  return read_slow(s, old, w);
}

int fl_rwsem_up_read_slowpath(fl_rwsem_t *s, int32_t old)
{
  uint32_t readers = READERS(old);
  int32_t c;
  int due;

  if (readers == 0 || readers >= FL_RWSEM_UNDERFLOW) {
    /* There was no read lock to release: undo.  If a writer released
     * meanwhile while our borrow hid WAITERS, its wake-up is ours.  */
    c = fl_atomic_fetch_add_relaxed(&s->count, READER) + READER;
    if (lock_free(c) && (c & WAITERS))
      pass_on(s, 0, AFTER_NONE);
    return EPERM;
  }
  c = old - READER;
  due = due_on_leaving(s, c);
  if (due || release_needs_handoff(c))
    pass_on(s, due, AFTER_READERS);
  return 0;
}

int fl_rwsem_count_up_read(fl_rwsem_t *s)
{
  int32_t old = fl_atomic_fetch_add_release(&s->count, -READER);

  if (old < READER)
    return fl_rwsem_up_read_slowpath(s, old);
  return 0;
}

/* ------------------------------------------------------------------ */
/* Writers.                                                            */
/* ------------------------------------------------------------------ */

/* Take WRITER past the queue if the lock lets us (1), else 0; waited: as
 * writer_may_take.  */
static int write_grab(fl_rwsem_t *s, int32_t c, int waited)
{
  while (writer_may_take(s, c, waited)) {
    int32_t seen = fl_atomic_cmpxchg_acquire(&s->count, c, c | WRITER);
    if (seen == c)
      return 1;
    c = seen;
  }
  return 0;
}

static int write_spin(fl_rwsem_t *s, int waited)
{
  int32_t last = 0;
  int i, stale = 0;

  for (i = 0; i < SPIN_MAX && stale < SPIN_STALE; i++) {
    int32_t c = fl_load_relaxed(&s->count);

    if (c & HANDOFF)
      break;
    if (write_grab(s, c, waited))
      return 1;
    if (c == last) {
      stale++;
    } else {
      stale = 0;
      last = c;
    }
    fl_cpu_relax();
  }
  return 0;
}

/* A queued writer took the lock (qlock held): off the queue, and the
 * queued writers' turn is over.  */
static void writer_leaves_queue(fl_rwsem_t *s)
{
  fl_atomic_fetch_add_relaxed(&s->wwait, -1);
  if (fl_load_relaxed(&s->count) & WTURN)
    fl_atomic_fetch_add_relaxed(&s->count, -WTURN);
  sync_waiter_bits(s);
}

static int write_wait(fl_rwsem_t *s, const struct fl_rwsem_wait *w)
{
  int ps = pshared(s);
  struct timespec bound;
  const struct timespec *until;
  uint32_t seq;
  int32_t ww;
  int woken = 0, expired = 0, bound_passed = 0, handed = 0, slept = 0;
  int spun, rc;

  q_lock(s, ps);
  if (FL_RWSEM_QUEUED(fl_load_relaxed(&s->wwait)) == FL_RWSEM_QUEUED_MAX) {
    q_unlock(s, ps);
    return EAGAIN;
  }
  seq = FL_RWSEM_SEQ(fl_atomic_fetch_add_relaxed(&s->wwait, 1));
  until = start_wait(s, !(fl_load_relaxed(&s->count) & WAITERS), w, &bound);
  sync_waiter_bits(s);
  /* A writer that will not give up revokes the bias anyway once it has
   * the lock: close the table to new readers now (bias.c).  Not a timed
   * one, which may leave without a trace.  After WAITERS, which keeps
   * readers from turning the bias back on.  */
  if (w->abstime == NULL && (fl_load_relaxed(&s->bias) & FL_RWSEM_BIAS_ON))
    fl_rwsem_bias_close(s);
  for (;;) {
    int32_t c = fl_load_relaxed(&s->count);

    /* qlock held.  A grant is ours to claim if it came after we queued
     * (the sequence moved): one made before is some older writer's.  The
     * granter already took us off the queue.  */
    if ((c & WGRANT) && FL_RWSEM_SEQ(fl_load_relaxed(&s->wwait)) != seq) {
      fl_atomic_fetch_add_acquire(&s->count, -WGRANT);
      break;
    }
    if (!(c & HANDOFF) && write_grab(s, c, slept)) {
      writer_leaves_queue(s);
      break;
    }
    if (bound_passed) {
      /* Still queued past the bound: hand-off from now on.  */
      woken |= starving(s);
      bound_passed = 0;
      continue;
    }
    if (!handed) {
      /* The lock may be free and ours to pass on (a release that saw our
       * WAITERS comes here too, but perhaps before we queued).  */
      woken |= handoff(s, AFTER_NONE);
      handed = 1;
      continue;
    }
    if (expired) {
      fl_atomic_fetch_add_relaxed(&s->wwait, -1);
      sync_waiter_bits(s);
      woken |= handoff(s, AFTER_NONE);
      q_unlock(s, ps);
      wake(s, ps, woken);
      return ETIMEDOUT;
    }
    ww = fl_load_relaxed(&s->wwait);
    q_unlock(s, ps);
    wake(s, ps, woken);
    woken = 0;
    rc = fl_futex_wait((uint32_t *)&s->wwait, (uint32_t)ww, ps, w->clock, until);
    slept = 1;
    /* Woken to compete: spin for the lock as a newcomer would, still
     * queued, with WWOKEN up so that releases meanwhile leave qlock
     * alone.  */
    spun = rc == 0 && write_spin(s, 1);
    q_lock(s, ps);
    /* Back under qlock (woken or not: any writer back here will do), the
     * one on its way has arrived: from now on releases wake again.  Our
     * load of the count after this comes later in its modification order,
     * so it sees every release that relied on WWOKEN.  */
    if (fl_load_relaxed(&s->count) & WWOKEN)
      fl_atomic_fetch_add_relaxed(&s->count, -WWOKEN);
    if (spun) {
      writer_leaves_queue(s);
      break;
    }
    /* Woken, and the lock went to somebody else: a writer that did not
     * wait, or readers.  The queued writers' turn comes next.  */
    if (rc == 0 && !(fl_load_relaxed(&s->count) & (WTURN | HANDOFF | WGRANT)))
      fl_atomic_fetch_add_relaxed(&s->count, WTURN);
    if (rc == ETIMEDOUT) {
      if (until == w->abstime) {
        expired = 1;
      } else {
        bound_passed = 1;
        until = w->abstime;
      }
    }
    handed = 0;
  }
  q_unlock(s, ps);
  wake(s, ps, woken);
  return 0;
}

/* Release a write lock this thread took inside the library.  */
static void write_release(fl_rwsem_t *s)
{
  if (fl_atomic_add_negative_release(&s->count, -WRITER))
    fl_rwsem_up_write_slowpath(s);
}

int fl_rwsem_lock_write(fl_rwsem_t *s, const struct fl_rwsem_wait *w)
{
  int32_t self = fl_rwsem_self_get();
  int32_t c = fl_load_relaxed(&s->count);
  int rc = 0;

  if (writer_is_me(s, c))
    return w->how == FL_RWSEM_TRY ? EBUSY : EDEADLK;
  if (handoff_due(s, c)) {
    pass_on(s, 1, AFTER_NONE);
    c = fl_load_relaxed(&s->count);
  }
  if (!write_grab(s, c, 0)) {
    if (w->how == FL_RWSEM_TRY)
      return EBUSY;
    if (!write_spin(s, 0))
      rc = write_wait(s, w);
    if (rc != 0)
      return rc;
  }
  if (fl_load_relaxed(&s->count) & BIASED) {
    rc = fl_rwsem_bias_revoke(s, w);
    if (rc != 0) {
      write_release(s);
      return rc;
    }
  }
  fl_store_relaxed(&s->owner, self);
  return 0;
}

int fl_rwsem_down_write_slowpath(fl_rwsem_t *s, int how)
{
  struct fl_rwsem_wait w = { how, CLOCK_MONOTONIC, NULL };
  return fl_rwsem_lock_write(s, &w);
}

int fl_rwsem_up_write_slowpath(fl_rwsem_t *s)
{
  /* A later count than our release left: if it still asks for nothing
   * but a writer's wake-up while one is on its way, that one saw (or will
   * see) our release.  */
  int32_t c = fl_load_relaxed(&s->count);
  int due = due_on_leaving(s, c);

  if (due || !writer_on_its_way(c))
    pass_on(s, due, AFTER_WRITER);
  return 0;
}

/* The write holder becomes a reader: one atomic, so no writer can come
 * between; then queued readers may join (AFTER_WRITER: it is their turn
 * even under hand-off).  */
int fl_rwsem_downgrade_raw(fl_rwsem_t *s)
{
  if (fl_load_relaxed(&s->owner) != fl_rwsem_thread.tid)
    return EPERM;
  fl_store_relaxed(&s->owner, 0);
  /* Release: what we wrote is visible to the readers that join.  */
  if (fl_atomic_fetch_add_release(&s->count, READER - WRITER) & WAITERS)
    pass_on(s, 0, AFTER_WRITER);
  return 0;
}

/* ------------------------------------------------------------------ */
/* Life cycle.                                                         */
/* ------------------------------------------------------------------ */

int fl_rwsem_init_raw(fl_rwsem_t *s, unsigned flags)
{
  const unsigned known = FL_PSHARED | FL_RWSEM_PREFER_READER |
                         FL_RWSEM_PREFER_WRITER | FL_RWSEM_READ_BIAS;

  if ((flags & ~known) != 0 ||
      ((flags & FL_RWSEM_PREFER_READER) && (flags & FL_RWSEM_PREFER_WRITER)) ||
      ((flags & FL_RWSEM_READ_BIAS) && (flags & FL_PSHARED)))
    return EINVAL;
  fl_store_relaxed(&s->owner, 0);
  fl_store_relaxed(&s->mode, (int32_t)flags);
  fl_store_relaxed(&s->qlock, 0);
  fl_store_relaxed(&s->rwait, 0);
  fl_store_relaxed(&s->wwait, 0);
  if (flags & FL_RWSEM_READ_BIAS) {
    /* The bias starts on: readers scale from the first.  */
    fl_store_relaxed(&s->bias_id, fl_rwsem_bias_new_id());
    fl_store_relaxed(&s->count, BIASED);
    fl_store_relaxed(&s->bias, FL_RWSEM_BIAS_MODE | FL_RWSEM_BIAS_ON);
  } else {
    fl_store_relaxed(&s->bias_id, 0);
    fl_store_relaxed(&s->count, 0);
    fl_store_relaxed(&s->bias, 0);
  }
  return 0;
}

int fl_rwsem_destroy_raw(fl_rwsem_t *s)
{
  if ((fl_load_relaxed(&s->count) & ~BIASED) != 0 ||
      fl_load_relaxed(&s->qlock) != 0 ||
      ((fl_load_relaxed(&s->bias) & FL_RWSEM_BIAS_MODE) && fl_rwsem_bias_readers(s)))
    return EBUSY;
  return 0;
}
