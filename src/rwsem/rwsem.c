/* src/rwsem/rwsem.c: the reader-writer semaphore's slowpaths, a small
 * state machine on one word.
 *
 * The protocol (v2) is model-checked: the Promela model uses the same
 * state and transition names (S0..S4, T1..T12) as the comments here; each
 * transition below names its number.  Layout in the manner of glibc's
 * nptl/pthread_rwlock_common.c: the word, the legal states, the
 * transitions, the invariants, then the code.
 *
 * THE COUNT WORD (s->count)
 *   bit  0      WRITER   a writer holds the lock
 *   bit  1      WPEND    a writer waits: readers arriving now must wait
 *   bit  2      RTURN    readers' turn: a leaving writer admitted the
 *                        waiting readers; no writer may take the lock
 *                        until the readers of the turn have left
 *   bit  3      RWAIT    readers sleep on rseq
 *   bit  4      BIASED   READ_BIAS: the table may hold readers, so a
 *                        writer must revoke the bias before it enters
 *                        (and down_write's fastpath fails)
 *   bit  5      SHARED   FL_PSHARED: always set, so that down_write's
 *                        fastpath fails and the library records the
 *                        owner's PID namespace
 *   bit  6      never set (FL_RWSEM_NO_TID: see <fastlock/bits/rwsem.h>)
 *   bits 7..11  L        late readers: readers that were woken for a
 *                        turn, missed it and wait again (LATE = 1 << 7;
 *                        at most LATE_MAX, later ones are not counted)
 *   bits 12..13 E        the epoch of L: FL_PSHARED only, advanced (mod
 *                        4) by each lease (T9) that clears a non-zero L
 *   bits 14..30 readers  READER = 1 << 14 (17 bits: rwsem-internal.h)
 *   bit  31     SLOW     set exactly when WPEND, RTURN or RWAIT is: the
 *                        release fastpaths look only at the sign
 *
 * STATES (R: the readers field less fastpath adds about to be undone;
 * RWAIT, SLOW and BIASED are orthogonal to them)
 *   S0 FREE        R = 0, no WRITER, no RTURN (with WPEND: woken writers
 *                  are on their way, readers wait for them)
 *   S1 READ        R > 0, no WRITER, no WPEND
 *   S2 WRITE       WRITER, R = 0 (WPEND: writers wait, RWAIT: readers)
 *   S3 READ+WPEND  R > 0, WPEND: newcomers wait, holders drain
 *   S4 TURN        RTURN, R >= 0: the admitted readers enter; writers wait
 *
 * TRANSITIONS (each one atomic on the count word: a fastpath fetch_add or
 * cmpxchg, or a CAS of the whole word; no flag is ever added or
 * subtracted, so no carry can corrupt the word)
 *   T1  reader fast enter     S0/S1/S4 -> S1/S4      fetch_add READER
 *   T2  reader slow enter     CAS R+1 if no WRITER and (no WPEND, or
 *                             PREFER_READER, or RTURN and the reader was
 *                             admitted: it slept on rseq = g and now
 *                             reads rseq != g); a late reader takes its
 *                             one off L in the same CAS
 *   T3  reader waits          CAS set RWAIT|SLOW while WRITER or WPEND
 *                             blocks it, then futex_wait(rseq, g); a
 *                             reader that was admitted and is blocked
 *                             again missed its turn: it adds one to L in
 *                             the same CAS (once: it is late until it
 *                             enters; again if E moved since, a lease
 *                             having cleared its one) and notes E
 *   T4  readers gone          the leaver that makes R = 0 (up_read, or a
 *                             fastpath add undone): a turn (RTURN) with
 *                             L > 0 does not end (the late readers were
 *                             woken for it; the last of them to leave
 *                             ends it), and with WPEND a writer is woken
 *                             to wait for them on its lease.  Else with
 *                             WPEND, CAS clear RTURN, bump wseq and wake
 *                             a writer (the writers' turn: see WAITING
 *                             FLAGS); WPEND stays (a live writer's
 *                             claim).  Without WPEND, CAS clear RTURN and
 *                             RWAIT (RWAIT -> RTURN if L > 0, as T7),
 *                             wake all readers
 *   T5  writer enters         CAS set WRITER if no WRITER, R = 0, no RTURN
 *   T6  writer waits          CAS set WPEND|SLOW while WRITER, R > 0 or
 *                             RTURN, then futex_wait(wseq, g)
 *   T7  writer leaves, readers wait (RWAIT; unless PREFER_WRITER with
 *                             WPEND): CAS RWAIT -> RTURN; bump rseq, wake
 *                             all readers; then with WPEND, wake a
 *                             writer, and CAS WPEND off if none was
 *                             asleep (the leaver's own used-up lease).
 *                             If the wake woke no reader and no late
 *                             reader is counted (L = 0), CAS RTURN off
 *                             again, nobody inside (turn_unused); a turn
 *                             whose woken readers never come ends by its
 *                             lease (T9)
 *   T8  writer leaves, writers wait (WPEND): bump wseq, wake a
 *                             writer; WPEND stays up while any was
 *                             asleep, and goes if none was (as in T7)
 *   T9  lease expiry          a waiter whose sleep ran out (a turn lease:
 *                             a writer facing RTURN with R = 0, a reader
 *                             facing WPEND without WRITER; or an
 *                             FL_PSHARED poll) and that finds the
 *                             very word it went to sleep on, with R = 0
 *                             and no WRITER: CAS clear WPEND, RTURN and
 *                             RWAIT (every lease: it wakes every class),
 *                             and L on an FL_PSHARED lock (a late reader
 *                             may have died; E advances if L was not 0),
 *                             bump both sequences, wake everybody
 *   T10 timed waiter gives up a writer: CAS clear WPEND (and RWAIT
 *                             unless WRITER), bump both sequences, wake
 *                             everybody; a reader: CAS clear RWAIT,
 *                             bump rseq, wake all readers, then T4 (a
 *                             turn T7 made of its RWAIT after its
 *                             deadline passed has nobody inside), and
 *                             its one off L if it is late.  Live
 *                             waiters set their flag again (so
 *                             ETIMEDOUT leaves the word as it was)
 *   T11 downgrade             CAS WRITER -> R+1, and RWAIT -> RTURN as T7;
 *                             with WPEND, wake the writers as T7 does
 *   T12 dead owner taken over (FL_ROBUST) CAS of the owner word from
 *                             a dead thread's state to ours; WRITER
 *                             stays set (robust.c, C3 and C4: the owner
 *                             word's own states and transitions)
 * The fastpath releases are the first half of T4 (fetch_add -READER) and
 * of T7/T8 (add_negative -WRITER: WRITER goes, the flags stay); their
 * second half runs only when SLOW was up.
 *
 * WAITING FLAGS ARE LEASES.  A waiter sets its class's flag; whoever releases
 * the lock into a state that class could use clears the flag and wakes the
 * class (after bumping its sequence word): every reader; for writers, the
 * writers' turn, one writer of a private lock (any one: whoever is woken may
 * take the lock) and every writer of an FL_PSHARED one (wake_writer_turn).
 * Woken waiters that still cannot go set the flag again.  WPEND is the
 * exception where readers leave: whoever set it has not held the lock since
 * (a writer's own release, T7/T8, takes it down if no other writer sleeps),
 * so when the last reader leaves (T4) it is the claim of a live writer,
 * asleep or awake in its slowpath, and it stays up until that writer enters
 * (T5), gives up (T10), or has died and a reader's lease runs out (T9).
 * Taking it down when FUTEX_WAKE woke nobody let arriving readers in ahead of
 * a writer that was awake, again and again (the model's writer-progress
 * counterexample).  Nobody depends on FUTEX_WAKE reaching a particular waiter
 * (the kernel wakes the best priority first, not the oldest), and a waiter
 * that dies (asleep, or woken and killed before it ran) leaves nothing anyone
 * waits for.
 *
 * LATE READERS.  A readers' turn admits the readers asleep when it began,
 * but nothing counts them into it: it ends (T4) when the readers inside
 * have left, and a reader woken for it that had no CPU until then finds
 * the next writer's WPEND or WRITER and waits again.  On a loaded machine
 * the same reader could miss turn after turn while others got in (the
 * model's per-reader counterexample, doc/models.md).  So a reader that
 * missed a turn counts itself in L, and the next turn waits for it: T4
 * leaves a turn with L > 0 alone, and the late reader takes its one off
 * L as it enters, so the last reader of the turn to leave ends it.  And
 * whoever takes RWAIT down with no writer inside and L > 0, so that the
 * sleeping readers may come in (T4 without WPEND, a leaving writer's
 * used-up WPEND in wake_writers), makes a turn of it as T7 does: a
 * writer's fastpath would otherwise come in before the late readers ran,
 * round after round (the model found that cycle).  A reader thus waits
 * at most for the turn it missed and the next one, if it gets a CPU
 * within a lease: T4, leaving a turn to late readers while a writer
 * waits, wakes that writer, which then waits for them on its lease
 * (turn_lease_ns) and goes first when it runs out (T9); the late readers
 * stay counted for the next turn.  Without that wake a writer that slept
 * while readers were inside (no lease) waited for the late readers for as
 * long as they had no CPU, and on 2 oversubscribed CPUs rwsem-xx's
 * writers did a tenth of their writes.  A late reader that never comes
 * (a process killed, or a reader stopped while rseq went round 2^32
 * times) leaves the turn to the same lease; on an FL_PSHARED lock T9
 * also clears L (a dead reader's one would stay for ever) and, if L was
 * not 0, advances E, the epoch of L, in the same CAS.  A late reader
 * notes E as it counts itself (in the word its T3 CAS replaced): its one
 * is in L exactly while E is unchanged, so it takes one off (T2,
 * late_gone) only then, and when it misses a turn after E moved it
 * counts itself again.  Until 2026-12-06 it counted itself again only
 * when it found L empty, and while another late reader's one was in L
 * it waited uncounted: with two readers the model found it starving so,
 * turn after turn (doc/models.md).  E has two bits.  Each T9 wakes every
 * waiter, which looks again and counts itself again if E moved; but a
 * late reader kept off the CPU through four clears takes E for
 * unchanged, may take another late reader's one off L (never below 0:
 * late_counted asks for L > 0), and a late reader may then wait
 * uncounted until the next clear.  A private lock's T9 leaves L and E
 * alone: its late readers are alive and will take their ones off.  The
 * count saturates at LATE_MAX: later late readers are not counted.
 *
 * NO LOST WAKE-UPS.  A waiter reads its sequence word g (acquire) before
 * the CAS that sets its flag, and sleeps only while the word still is g.
 * Whoever clears the flag does so with a CAS that comes after the
 * waiter's in the count word's order, and bumps the sequence (release)
 * after that CAS: so the waiter's futex_wait either sees the bump and
 * returns, or is asleep when the wake comes.
 *
 * INVARIANTS (fl_rwsem_check_invariants, called by the tortures)
 *   I1  WRITER => no reader inside (R counts only adds being undone):
 *       checked by the tortures' own counters
 *   I2  SLOW <=> WPEND|RTURN|RWAIT
 *   I3  RTURN => no WRITER
 *   I4  nobody holds and somebody sleeps => a wake is owed by a running
 *       thread, or a lease/poll timeout is pending (the model checks it)
 *   I5  R never wraps: EAGAIN at FL_RWSEM_READERS_MAX
 *   I6  bit 6 is never set; SHARED exactly on FL_PSHARED locks;
 *       BIASED only on READ_BIAS locks; E only on FL_PSHARED locks
 *   I7  L is at most the readers in their slowpath that counted
 *       themselves (the model checks equality: with E, exactly the late
 *       readers whose noted E is the word's)
 *   I8  FL_PSHARED: WRITER => the owner word names a thread (robust.c,
 *       J2), but on a lost lock; checked by a caller that holds the lock
 *       or sees it quiescent (the owner word is read after c)
 *
 * FL_PSHARED.  Every sleep is bounded by POLL_NS, after which the waiter
 * looks again from scratch (T9 included): this bounds what a process
 * killed between a CAS and its wake can cost the others.  Owners are told
 * apart by TID and PID namespace (owner, owner_ns), so two processes that
 * are each PID 1 in their own namespace are not taken for one another.
 * A writer claims the owner word before its T5 and holds it after, and
 * marks it before its release, so that every state a killed writer
 * leaves names it (robust.c).  Private locks sleep without a bound (a
 * process dies whole), and their holder stores its TID after T5.
 *
 * Spinning: a waiter polls the word at most SPIN_MAX times before it
 * sleeps, and stops early once the word has not changed for SPIN_STALE
 * polls (the holder is not moving: sleeping is cheaper).  */
#include "config.h"

#include "rwsem/rwsem-internal.h"

#include "sys/clock.h"
#include "sys/cpu.h"
#include "sys/futex.h"

#include <errno.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#define WRITER FL_RWSEM_WRITER
#define WPEND FL_RWSEM_WPEND
#define RTURN FL_RWSEM_RTURN
#define RWAIT FL_RWSEM_RWAIT
#define BIASED FL_RWSEM_BIASED
#define SHARED FL_RWSEM_SHARED
#define SLOW FL_RWSEM_SLOW
#define READER FL_RWSEM_READER
#define READERS FL_RWSEM_READERS
#define FLAGS (WPEND | RTURN | RWAIT)
#define LATE FL_RWSEM_LATE
#define LATE_MASK FL_RWSEM_LATE_MASK
#define LATE_MAX (LATE_MASK / LATE)
#define EPOCH FL_RWSEM_EPOCH
#define EPOCH_MASK FL_RWSEM_EPOCH_MASK

#define SPIN_MAX 100
#define SPIN_STALE 20
/* FL_PSHARED waiters look again at least this often.  */
#define POLL_NS 50000000
/* A writer that finds a readers' turn nobody has entered, or a reader
 * that finds WPEND up on a lock nobody holds, waits this long before it
 * takes the flag down itself (T9): only fairness suffers if the others
 * were merely slow.  In microseconds, a variable for the tests
 * (rwsem-internal.h).  */
int32_t fl_rwsem_turn_lease_us = 2000;

static int64_t turn_lease_ns(void)
{
  return (int64_t)fl_load_relaxed(&fl_rwsem_turn_lease_us) * 1000;
}
/* What wait_on returns when a lease or poll ran out (not the deadline).  */
#define LEASE_EXPIRED (-1)

/* ------------------------------------------------------------------ */
/* Who the calling thread is.                                          */
/* ------------------------------------------------------------------ */

__thread struct fl_rwsem_thread fl_rwsem_thread
    __attribute__((tls_model("initial-exec"))) = { FL_RWSEM_NO_TID, -1,
                                                   NO_ROW };

/* In the child of fork: the TID of the thread that forked (the child's
 * only thread is its copy), which owns the process-private locks it held
 * for writing; 0 otherwise.  */
static __thread int32_t forked_from __attribute__((tls_model("initial-exec")));

static pthread_once_t self_once = PTHREAD_ONCE_INIT;

static void self_forget(void)
{
  forked_from = fl_rwsem_thread.tid > 0 ? fl_rwsem_thread.tid : forked_from;
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
    /* While a tool watches, every down_write comes to the library
     * (<fastlock/bits/rwsem.h>).  */
    fl_rwsem_thread.free_count =
        fl_load_relaxed(&fl_tools_active) ? FL_RWSEM_NO_TID : 0;
  }
  return fl_rwsem_thread.tid;
}

/* ------------------------------------------------------------------ */
/* Small helpers.                                                      */
/* ------------------------------------------------------------------ */

static unsigned mode_of(const fl_rwsem_t *s)
{
  return (unsigned)fl_load_relaxed(&s->mode);
}

static int pshared(const fl_rwsem_t *s)
{
  return (mode_of(s) & FL_PSHARED) != 0;
}

static int prefers(const fl_rwsem_t *s, unsigned flag)
{
  return (mode_of(s) & flag) != 0;
}

/* c with SLOW made to agree with its flags (I2).  */
static int32_t with_slow(int32_t c)
{
  return (c & FLAGS) ? (int32_t)((uint32_t)c | (uint32_t)SLOW)
                     : (c & INT32_MAX);
}

/* want, the word a transition leaves after it took RWAIT down from c
 * with no writer inside, so that every sleeping reader may look: if late
 * readers wait (LATE READERS), it makes a readers' turn of it, as T7
 * does, so that no writer's fastpath comes in before them.  */
static int32_t late_turn(int32_t want, int32_t c)
{
  if ((c & RWAIT) && (c & LATE_MASK))
    want |= RTURN;
  return want;
}

/* A subtract that found the reader field empty is in flight: its undo
 * will carry into the sign bit, so nobody may rewrite the word until it
 * is done (only misuse, an up_read of nothing, makes one).  */
static int underflow(int32_t c)
{
  return READERS(c) >= FL_RWSEM_UNDERFLOW;
}

/* c, or, if c shows such an undo in flight, the word once it is done.  */
static int32_t settled(fl_rwsem_t *s, int32_t c)
{
  while (underflow(c)) {
    fl_cpu_relax();
    c = fl_load_relaxed(&s->count);
  }
  return c;
}

/* CAS the count word from *c to want; on failure *c is what was there.
 * Acquire and release: a transition may admit its caller (T2, T5: the
 * critical section must see the last holder's release) or hand over
 * (T4, T7, T8: what the caller did before stays before it).  */
static int cas(fl_rwsem_t *s, int32_t *c, int32_t want)
{
  int32_t seen = fl_atomic_cmpxchg_acq_rel(&s->count, *c, want);

  if (seen == *c)
    return 1;
  *c = seen;
  return 0;
}

/* Bump a class's sequence word, then wake n of its sleepers.  Release:
 * a waiter that reads the new sequence (acquire) has seen the CAS that
 * cleared its flag.  Returns how many it woke.  */
static int wake(fl_rwsem_t *s, int32_t *seq, int n)
{
  fl_atomic_fetch_add_release(seq, 1);
  return fl_futex_wake((uint32_t *)seq, n, pshared(s));
}

/* Wake a whole class.  Returns how many were asleep.  */
static int wake_all(fl_rwsem_t *s, int32_t *seq)
{
  return wake(s, seq, INT32_MAX);
}

/* Wake both classes: whoever took every flag down (T9, a writer's T10,
 * a fork child's release) or made the lock lost.  */
static void wake_everybody(fl_rwsem_t *s)
{
  wake_all(s, &s->wseq);
  wake_all(s, &s->rseq);
}

/* The writers' turn (T4, T7, T8, T11): wake one writer, any one:
 * whichever the kernel picks may take the lock (nothing is granted to a
 * particular writer), and one that cannot go yet sets WPEND again and
 * sleeps until the next turn.  Waking every writer made them a herd that
 * the scheduler sorted, and on an oversubscribed machine the writers
 * that got a CPU first won turn after turn (rwsem-xx: the slowest writer
 * below a tenth of the fastest); Linux queues the sleepers of one
 * priority in order (futex(2) promises no order), so waking one lets the
 * writers take turns.  A process-shared lock wakes them all: a woken
 * waiter may be killed before it runs, and its wake-up would be lost
 * with it.  Returns how many it woke (at least one if any was asleep).  */
static int wake_writer_turn(fl_rwsem_t *s)
{
  return wake(s, &s->wseq, pshared(s) ? INT32_MAX : 1);
}

/* Sleep on seq while it holds g, until woken, until w's deadline
 * (ETIMEDOUT), or until lease_ns (if > 0) passes first (LEASE_EXPIRED).  */
static int wait_on(fl_rwsem_t *s, int32_t *seq, int32_t g,
                   const struct fl_rwsem_wait *w, int64_t lease_ns)
{
  const struct timespec *until = w->abstime;
  struct timespec lease;
  int rc;

  if (lease_ns > 0) {
    lease = fl_deadline_after_ns(w->clock, lease_ns);
    if (until == NULL || fl_rwsem_after(until, &lease))
      until = &lease;
  }
  rc = fl_futex_wait((const uint32_t *)seq, (uint32_t)g, pshared(s), w->clock,
                     until);
  if (rc == ETIMEDOUT)
    return until == w->abstime ? ETIMEDOUT : LEASE_EXPIRED;
  return 0;
}

/* Spin while the word keeps changing (see the top comment).  Returns the
 * word last seen, and whether to keep spinning in *more.  */
static int spin_more(fl_rwsem_t *s, int32_t *c, int *spins, int *stale)
{
  int32_t now;

  if (*spins >= SPIN_MAX || *stale >= SPIN_STALE)
    return 0;
  fl_cpu_relax();
  now = fl_load_relaxed(&s->count);
  *stale = now == *c ? *stale + 1 : 0;
  ++*spins;
  *c = now;
  return 1;
}

/* ------------------------------------------------------------------ */
/* Releases: the transitions that wake.                                */
/* ------------------------------------------------------------------ */

/* The writers' turn after a writer left (T7, T8, T11).  WPEND stays up
 * while any writer was asleep, so that readers arriving now wait behind
 * the woken writer instead of refilling the lock before it can run.  If
 * none was asleep, WPEND was the leaver's own, used up: CAS it off (a
 * writer between its T6 and its sleep sees wseq moved and looks again),
 * and wake the readers that slept behind it, in a turn if late readers
 * are among them (LATE READERS).  */
static void wake_writers(fl_rwsem_t *s)
{
  int32_t c;

  if (wake_writer_turn(s) != 0)
    return;
  c = fl_load_relaxed(&s->count);
  while ((c & WPEND) && !underflow(c)) {
    int32_t want = c & ~WPEND;

    if (!(c & WRITER))
      want = late_turn(want & ~RWAIT, c);
    if (cas(s, &c, with_slow(want))) {
      /* A flag's clearing is followed by its class's bump (NO LOST
       * WAKE-UPS): a writer may have set WPEND again, after our first
       * bump and before this CAS, and gone to sleep on the new wseq.  */
      wake_all(s, &s->wseq);
      if ((c & RWAIT) && !(c & WRITER))
        wake_all(s, &s->rseq);
      return;
    }
  }
}

/* T4: the readers are gone.  Run by whoever made R = 0.  */
static void readers_gone(fl_rwsem_t *s)
{
  int32_t c = fl_load_relaxed(&s->count);

  for (;;) {
    int32_t want;

    c = settled(s, c);
    if (READERS(c) != 0 || (c & WRITER) || !(c & FLAGS))
      return;
    /* A turn that late readers were woken for is theirs to end: the
     * last of them to leave comes here again (LATE READERS).  A writer
     * that slept while readers were inside slept without a lease: wake
     * one, so that it waits for the late readers on a lease (T9) and
     * not for as long as they go without a CPU.  */
    if ((c & RTURN) && (c & LATE_MASK)) {
      if (c & WPEND)
        wake_writer_turn(s);
      return;
    }
    if (c & WPEND) {
      /* The writers go next: end the turn, keep WPEND, the claim of a
       * writer asleep or awake (WAITING FLAGS).  */
      if ((c & RTURN) && !cas(s, &c, with_slow(c & ~RTURN)))
        continue;
      wake_writer_turn(s);
      return;
    }
    /* No writer waits: the readers asleep may all come in, in a turn of
     * their own if late readers are among them (LATE READERS).  */
    want = late_turn(c & ~(RTURN | RWAIT), c);
    if (cas(s, &c, with_slow(want)))
      break;
  }
  if (c & RWAIT)
    wake_all(s, &s->rseq);
}

/* T7's wake found no reader asleep: end the turn (RTURN off) if nobody
 * is inside it and no late reader is counted for it (readers inside, or
 * a late one, end it by T4).  Returns WPEND if the word it left has it
 * (a writer that set it behind the turn is the writers' turn's to wake,
 * as T4 would have woken it), else 0.  */
static int32_t turn_unused(fl_rwsem_t *s)
{
  int32_t c = fl_load_relaxed(&s->count);

  for (;;) {
    c = settled(s, c);
    if (!(c & RTURN) || (c & (WRITER | LATE_MASK)) || READERS(c) != 0)
      return 0;
    if (cas(s, &c, with_slow(c & ~RTURN)))
      return c & WPEND;
  }
}

/* T7 or T8, after a writer left (WRITER already gone from the word).  */
static void writer_gone(fl_rwsem_t *s)
{
  int32_t c = fl_load_relaxed(&s->count);

  for (;;) {
    c = settled(s, c);
    if (c & WRITER)
      return; /* a writer took it since: its release does the work */
    if ((c & RWAIT) && !(prefers(s, FL_RWSEM_PREFER_WRITER) && (c & WPEND))) {
      /* T7: the readers' turn.  */
      if (!cas(s, &c, with_slow((c & ~RWAIT) | RTURN)))
        continue;
      /* The readers first: until rseq moves, a reader that sets RWAIT
       * now takes the coming bump for its admission; bumping straight
       * after the CAS keeps that window short.  A turn whose wake found
       * no reader asleep ends at once unless a late reader is counted
       * for it (turn_unused): a reader that set RWAIT and has not slept
       * yet finds rseq moved, finds the turn gone and counts itself
       * late, so the next turn waits for it (LATE READERS).  Kept, such
       * a turn waited for its lease (T9) with nobody to enter it; and a
       * reader that had set RWAIT in that window and entered with it
       * still up left the next writer's T7 a turn nobody entered.  */
      if (wake_all(s, &s->rseq) == 0)
        c |= turn_unused(s);
      /* WPEND may be our own lease, used up: if no writer sleeps behind
       * the turn, it goes (wake_writers).  */
      if (c & WPEND)
        wake_writers(s);
      return;
    }
    if (c & WPEND) {
      /* T8: the writers' turn (WPEND stays while any was asleep).  */
      wake_writers(s);
      return;
    }
    return;
  }
}

/* T9: a waiter's lease ran out on word c, and the word is still c.
 * RWAIT goes too: the lock is free and every class is woken, so the
 * readers asleep may use it, and those still blocked set it again.
 * Left up (until 2026-12-04), a reader got in under its own RWAIT; a
 * writer that came while it was inside kept it (T4 keeps the flags while
 * WPEND is up), and that writer's release (T7) turned it into a readers'
 * turn that no reader entered (since 2026-12-06 T7 ends such a turn at
 * once, turn_unused, and the model finds no harm in a T9 that leaves
 * RWAIT up: it costs that release a CAS and a wake).  L goes on an
 * FL_PSHARED lock only: a late reader there may have died (LATE
 * READERS).  */
static void lease_expired(fl_rwsem_t *s, int32_t c)
{
  int32_t want = with_slow(c & ~FLAGS);

  if (pshared(s) && (c & LATE_MASK))
    want = (want & ~(LATE_MASK | EPOCH_MASK)) | ((c + EPOCH) & EPOCH_MASK);
  if (READERS(c) != 0 || (c & WRITER) || !(c & (WPEND | RTURN))
      || !cas(s, &c, want))
    return;
  wake_everybody(s);
}

/* ------------------------------------------------------------------ */
/* Owners.                                                             */
/* ------------------------------------------------------------------ */

static int robust(const fl_rwsem_t *s)
{
  return (mode_of(s) & FL_ROBUST) != 0;
}

/* Who the caller is to s: its TID, and on an FL_ROBUST lock its stamp
 * (robust.c, STAMPS: a new thread that took a dead holder's TID is not
 * that holder).  */
static inline int32_t self_id(const fl_rwsem_t *s)
{
  int32_t tid = fl_rwsem_self_get();

  return robust(s) ? tid | fl_rwsem_self_stamp() : tid;
}

/* The id the caller records in owner: self_id, with OWNER_SLOW where its
 * up_write must come to the library.  */
static inline int32_t owner_id(const fl_rwsem_t *s)
{
  if (pshared(s) || fl_load_relaxed(&fl_tools_active) != 0)
    return self_id(s) | FL_RWSEM_OWNER_SLOW;
  return self_id(s);
}

/* Does the caller hold s for writing?  Only the holder writes owner and
 * owner_ns while it holds s (robust.c: HELD), so the holder always reads
 * its own values; a process-shared owner word with a mark (PEND, ROB,
 * REL) names nobody inside, and never equals a TID.  A thread that does
 * not hold s reads HELD(t) (acquire) with t's owner_ns (the release of
 * fl_rwsem_owner_hold).  */
int fl_rwsem_write_held_by_me(const fl_rwsem_t *s)
{
  int32_t o = fl_load_acquire(&s->owner) & ~FL_RWSEM_OWNER_SLOW;

  if (!(fl_load_relaxed(&s->count) & WRITER) || o == 0)
    return 0;
  if (pshared(s))
    return o == self_id(s)
           && fl_load_relaxed(&s->owner_ns) == fl_rwsem_self_ns();
  return o == fl_rwsem_self_get() || o == forked_from;
}

/* ------------------------------------------------------------------ */
/* Readers.                                                            */
/* ------------------------------------------------------------------ */

/* May a reader enter on word c?  */
static int read_may_enter(const fl_rwsem_t *s, int32_t c, int admitted)
{
  return !(c & WRITER)
         && (!(c & WPEND) || (admitted && (c & RTURN))
             || prefers(s, FL_RWSEM_PREFER_READER));
}

/* The second half of T4: after a fetch_add of -READER that left old.  */
static void read_left(fl_rwsem_t *s, int32_t old)
{
  if (READERS(old) == 1 && (old & (FLAGS | SLOW)))
    readers_gone(s);
}

/* Whether the one that a late reader put into L is still there.  late:
 * 0, or LATE with the epoch E of the word it counted itself into.  */
static int late_counted(int32_t c, int32_t late)
{
  return late && (c & LATE_MASK) && ((c ^ late) & EPOCH_MASK) == 0;
}

/* A late reader that leaves without entering (its deadline, EAGAIN, a
 * dead writer taken over, ENOTRECOVERABLE) takes its one off L; a turn
 * that waited for it alone ends (T4).  On an FL_PSHARED lock a lease may
 * have cleared its one already (E moved): then there is nothing to take
 * off.  */
static void late_gone(fl_rwsem_t *s, int32_t late)
{
  int32_t c = fl_load_relaxed(&s->count);

  for (c = settled(s, c); late_counted(c, late); c = settled(s, c)) {
    if (cas(s, &c, c - LATE)) {
      readers_gone(s);
      return;
    }
  }
}

/* A reader waits until it may enter, then enters (T2, T3).  *late: 0,
 * or LATE with E as it counted itself in L (late_counted).  */
static int read_wait_counted(fl_rwsem_t *s, const struct fl_rwsem_wait *w,
                             int32_t *late)
{
  int admitted = 0, polled = 0, spins = 0, stale = 0;

  for (;;) {
    /* Acquire: see the CAS of whoever bumped it (NO LOST WAKE-UPS).  */
    int32_t g = fl_load_acquire(&s->rseq);
    int32_t c = fl_load_relaxed(&s->count);
    int32_t want;
    int count_in, rc;

    if (fl_rwsem_lost(s))
      return ENOTRECOVERABLE;
    for (;;) {
      c = settled(s, c);
      if (read_may_enter(s, c, admitted)) {
        int32_t mine = late_counted(c, *late) ? LATE : 0;

        if (READERS(c) >= FL_RWSEM_READERS_MAX)
          return EAGAIN;
        if (cas(s, &c, c + READER - mine)) { /* T2 */
          *late = 0;
          return 0;
        }
        continue;
      }
      /* FL_ROBUST: a reader that finds the write holder dead takes the
       * lock over as a writer would (T12), and so holds it for writing;
       * one that took over a transition nobody finished (robust.c, C4)
       * releases it, nobody having died inside, and looks again.  */
      if ((c & WRITER) && (polled || w->how == FL_RWSEM_TRY)) {
        int taken = fl_rwsem_take_over(s, owner_id(s));

        if (taken == FL_RWSEM_TAKEN_OVER) {
          fl_rwsem_unlock_write(s);
          polled = 0;
          c = fl_load_relaxed(&s->count);
          continue;
        }
        if (taken != 0)
          return taken;
      }
      if (w->how == FL_RWSEM_TRY)
        return EBUSY;
      if (!spin_more(s, &c, &spins, &stale))
        break;
    }
    /* T3: the flag (a lease) and then the sleep; the word must still
     * block us as the CAS sets it.  Admitted and blocked again, we missed
     * a turn: count ourselves late, once (LATE READERS), or again if an
     * FL_PSHARED lease (T9) cleared our one (E moved, or L is empty):
     * uncounted we could miss every turn.  */
    count_in = admitted && !late_counted(c, *late)
               && (c & LATE_MASK) / LATE < LATE_MAX;
    want = with_slow(c | RWAIT) + (count_in ? LATE : 0);
    if (!cas(s, &c, want))
      continue;
    if (count_in)
      *late = LATE | (want & EPOCH_MASK);
    c = want;
    /* Blocked by WPEND alone, a reader sleeps on a lease: T4 keeps WPEND
     * up for the writer that claims it, and if none comes (it died) the
     * lease's T9 takes the stale WPEND down.  */
    rc = wait_on(s, &s->rseq, g, w,
                 !(c & WRITER) ? turn_lease_ns()
                 : pshared(s)  ? POLL_NS
                               : 0);
    if (rc == ETIMEDOUT) {
      /* T10 for a reader: our RWAIT may be the only one; clear it, and
       * the readers still asleep set it again.  A writer's release may
       * have made a turn of our RWAIT (T7) after our deadline passed:
       * run T4, or that turn would have nobody to end it but a lease
       * (models/rwsem.pml, TIMED_READER).  */
      c = fl_load_relaxed(&s->count);
      while ((c & RWAIT) && !underflow(c) && !cas(s, &c, with_slow(c & ~RWAIT)))
        ;
      wake_all(s, &s->rseq);
      readers_gone(s);
      return ETIMEDOUT;
    }
    spins = stale = 0;
    admitted = fl_load_acquire(&s->rseq) != g;
    polled = rc == LEASE_EXPIRED;
    if (polled && fl_load_relaxed(&s->count) == c)
      lease_expired(s, c); /* T9 */
  }
}

static int read_wait(fl_rwsem_t *s, const struct fl_rwsem_wait *w)
{
  int32_t late = 0;
  int rc;

  if (fl_rwsem_write_held_by_me(s))
    return w->how == FL_RWSEM_TRY ? EBUSY : EDEADLK;
  rc = read_wait_counted(s, w, &late);
  if (late)
    late_gone(s, late);
  return rc;
}

/* After the fastpath's add (old: the word before it) failed: keep the
 * add if the reader may stay after all, else take it back (the first
 * half of T4 again) and wait.  */
static int read_slow(fl_rwsem_t *s, int32_t old, const struct fl_rwsem_wait *w)
{
  if (READERS(old) < FL_RWSEM_READERS_MAX && !underflow(old)
      && !fl_rwsem_lost(s) && read_may_enter(s, old, 0))
    return 0;
  read_left(s, fl_atomic_fetch_add_release(&s->count, -READER));
  if (READERS(old) >= FL_RWSEM_READERS_MAX && !underflow(old))
    return EAGAIN;
  return read_wait(s, w);
}

int fl_rwsem_down_read_slowpath(fl_rwsem_t *s, int32_t old, int how)
{
  struct fl_rwsem_wait w = FL_RWSEM_NO_DEADLINE(how);
  return read_slow(s, old, &w);
}

int fl_rwsem_count_down_read(fl_rwsem_t *s, const struct fl_rwsem_wait *w)
{
  /* Acquire, as the inline fastpath.  */
  int32_t old = fl_atomic_fetch_add_acquire(&s->count, READER);

  if (!(old & FL_RWSEM_READ_FAILED))
    return 0;
  return read_slow(s, old, w);
}

/* up_read found old < READER: SLOW (the second half of T4), or no reader
 * at all (misuse: undo, EPERM).  */
int fl_rwsem_up_read_slowpath(fl_rwsem_t *s, int32_t old)
{
  if (READERS(old) == 0) {
    fl_atomic_fetch_add_relaxed(&s->count, READER);
    return EPERM;
  }
  read_left(s, old);
  return 0;
}

int fl_rwsem_count_up_read(fl_rwsem_t *s)
{
  return fl_rwsem_count_up_read_fast(s);
}

/* ------------------------------------------------------------------ */
/* Writers.                                                            */
/* ------------------------------------------------------------------ */

/* T10 for a writer: our WPEND may be the only one: clear it and let
 * everybody look again; live writers set it again.  */
static int write_timed_out(fl_rwsem_t *s)
{
  int32_t c = fl_load_relaxed(&s->count);

  while ((c & WPEND) && !underflow(c)
         && !cas(s, &c, with_slow(c & ~(WPEND | ((c & WRITER) ? 0 : RWAIT)))))
    ;
  wake_everybody(s);
  return ETIMEDOUT;
}

/* A writer takes the lock (T5) or waits (T6) until it can.  On a
 * process-shared lock T5 comes between the claim of the owner word and
 * its hold (robust.c, C1): id and ns are what the claim records.  */
static int write_wait(fl_rwsem_t *s, const struct fl_rwsem_wait *w, int32_t id,
                      int32_t ns)
{
  int polled = 0, spins = 0, stale = 0;

  for (;;) {
    int32_t g = fl_load_acquire(&s->wseq);
    int32_t c = fl_load_relaxed(&s->count);
    int64_t lease;
    int rc;

    if (fl_rwsem_lost(s))
      return ENOTRECOVERABLE;
    for (;;) {
      c = settled(s, c);
      if (!(c & (WRITER | RTURN)) && READERS(c) == 0) {
        if (pshared(s)) {
          int claimed = fl_rwsem_owner_claim(s, id, ns, w);

          if (claimed == EAGAIN) {
            c = fl_load_relaxed(&s->count); /* a writer holds it */
            continue;
          }
          if (claimed == ETIMEDOUT)
            return write_timed_out(s);
          if (claimed != 0)
            return claimed;
        }
        if (cas(s, &c, c | WRITER)) /* T5 */
          return 0;
        if (pshared(s))
          fl_rwsem_owner_unclaim(s);
        continue;
      }
      /* FL_ROBUST: probe the holder once per poll, not per spin.  */
      if ((c & WRITER) && (polled || w->how == FL_RWSEM_TRY)) {
        int taken = fl_rwsem_take_over(s, id);

        if (taken != 0)
          return taken;
      }
      if (w->how == FL_RWSEM_TRY)
        return EBUSY;
      if (!spin_more(s, &c, &spins, &stale))
        break;
    }
    if (fl_load_relaxed(&s->bias) & FL_RWSEM_BIAS_MODE)
      fl_rwsem_bias_close(s);
    /* T6.  */
    if (!cas(s, &c, with_slow(c | WPEND)))
      continue;
    c = with_slow(c | WPEND);
    lease = (c & RTURN) && READERS(c) == 0 ? turn_lease_ns()
            : pshared(s)                   ? POLL_NS
                                           : 0;
    rc = wait_on(s, &s->wseq, g, w, lease);
    if (rc == ETIMEDOUT)
      return write_timed_out(s); /* T10 */
    spins = stale = 0;
    polled = rc == LEASE_EXPIRED;
    if (polled && fl_load_relaxed(&s->count) == c)
      lease_expired(s, c); /* T9 */
  }
}

/* Release the write lock the caller holds (owner already cleared, or
 * REL: robust.c, C2): the fastpath's atomic, then T7/T8 if SLOW.  */
static int write_release(fl_rwsem_t *s)
{
  /* Release: the critical section stays before it.  */
  if (fl_atomic_add_negative_release(&s->count, -WRITER))
    writer_gone(s);
  return 0;
}

/* T5 done, the owner word next.  A private lock's holder stores its id
 * (nobody else writes owner while WRITER is up).  A process-shared
 * lock's writer claimed the owner word before its T5 and now holds it
 * (robust.c, C1).  */
int fl_rwsem_lock_write(fl_rwsem_t *s, const struct fl_rwsem_wait *w)
{
  int32_t id = owner_id(s), ns = pshared(s) ? fl_rwsem_self_ns() : 0;
  int rc;

  if (fl_rwsem_write_held_by_me(s))
    return w->how == FL_RWSEM_TRY ? EBUSY : EDEADLK;
  if (robust(s) && fl_rwsem_lost(s))
    return ENOTRECOVERABLE;
  rc = write_wait(s, w, id, ns);
  if (rc == FL_RWSEM_TAKEN_OVER)
    return 0; /* robust.c, C4: owner is ours already */
  if (rc != 0)
    return rc; /* EOWNERDEAD (C3) included */
  if (pshared(s)) {
    fl_rwsem_owner_hold(s, id);
    return 0;
  }
  if (fl_load_relaxed(&s->count) & BIASED) {
    rc = fl_rwsem_bias_revoke(s, w);
    if (rc != 0) {
      write_release(s);
      return rc;
    }
  }
  fl_store_relaxed(&s->owner, id);
  return 0;
}

int fl_rwsem_down_write_slowpath(fl_rwsem_t *s, int how)
{
  struct fl_rwsem_wait w = FL_RWSEM_NO_DEADLINE(how);

  if (fl_load_relaxed(&fl_tools_active) != 0)
    return fl_rwsem_tool_down_write(s, how);
  return fl_rwsem_lock_write(s, &w);
}

int fl_rwsem_up_write_slowpath(fl_rwsem_t *s)
{
  writer_gone(s);
  return 0;
}

/* In the child of fork, the forking thread's copy releases a private
 * lock that the forking thread held: the parent's other threads, whose
 * waiting flags and late count (LATE READERS) the word may carry, do not
 * exist here.  Take those out, as a lease would (T9), and wake whoever
 * the child has started since; they set their flags again.  A late count
 * left behind, which nobody here would take off, would hold every
 * readers' turn open until a writer's lease ran out.  */
static void forget_the_parents_waiters(fl_rwsem_t *s)
{
  int32_t c = fl_load_relaxed(&s->count);

  while (!cas(s, &c, with_slow(c & ~(FLAGS | LATE_MASK))))
    ;
  wake_everybody(s);
}

/* up_write of a lock the caller holds, after the checks.  FL_ROBUST: a
 * lock taken with EOWNERDEAD and not made consistent is lost for good:
 * it stays write-locked by nobody (LOST before the owner word goes, so
 * that a waiter that takes over from us, should we die between the two,
 * finds it lost: robust.c, C3), and everybody is woken to learn it.  A
 * process-shared holder leaves by C2 (robust.c).  */
int fl_rwsem_unlock_write(fl_rwsem_t *s)
{
  int32_t m = fl_load_relaxed(&s->mode);
  int32_t id;
  int slow;

  if (forked_from != 0 && !pshared(s)
      && fl_load_relaxed(&s->owner) == forked_from)
    forget_the_parents_waiters(s);
  if (m & (int32_t)FL_RWSEM_ROBUST_DEAD) {
    fl_atomic_fetch_or_release(&s->mode, (int32_t)FL_RWSEM_ROBUST_LOST);
    fl_atomic_fetch_and_relaxed(&s->mode, ~(int32_t)FL_RWSEM_ROBUST_DEAD);
    fl_store_release(&s->owner, 0);
    wake_everybody(s);
    return 0;
  }
  if (!pshared(s)) {
    fl_store_relaxed(&s->owner, 0);
    return write_release(s);
  }
  /* C2 (robust.c): the owner word is NONE again before the wake-ups,
   * so that a woken writer finds it free.  */
  id = owner_id(s);
  fl_rwsem_owner_leaving(s, id);
  slow = fl_atomic_add_negative_release(&s->count, -WRITER);
  fl_rwsem_owner_left(s);
  if (slow)
    writer_gone(s);
  return 0;
}

/* Owner not the caller's plain TID: FL_PSHARED, a tool, the child of a
 * fork, or misuse.  */
int fl_rwsem_up_write_checked(fl_rwsem_t *s)
{
  if (fl_load_relaxed(&s->owner) & FL_RWSEM_OWNER_SLOW
      && fl_load_relaxed(&fl_tools_active) != 0)
    return fl_rwsem_tool_up_write(s);
  if (!fl_rwsem_write_held_by_me(s))
    return EPERM;
  return fl_rwsem_unlock_write(s);
}

/* T11: the write holder becomes a reader in one CAS, so no writer comes
 * between; the readers waiting join it (T7's turn).  */
int fl_rwsem_downgrade_raw(fl_rwsem_t *s)
{
  int32_t c, want;
  int admit;

  if (!fl_rwsem_write_held_by_me(s))
    return EPERM;
  if (fl_load_relaxed(&s->mode) & (int32_t)FL_RWSEM_ROBUST_DEAD)
    return EPERM; /* consistent first: a reader cannot repair */
  if (pshared(s))
    fl_rwsem_owner_leaving(s, owner_id(s)); /* robust.c, C2 */
  else
    fl_store_relaxed(&s->owner, 0);
  c = fl_load_relaxed(&s->count);
  do {
    c = settled(s, c);
    admit = (c & RWAIT) && !(prefers(s, FL_RWSEM_PREFER_WRITER) && (c & WPEND));
    want = c - WRITER + READER;
    if (admit)
      want = (want & ~RWAIT) | RTURN;
  } while (!cas(s, &c, with_slow(want)));
  if (pshared(s))
    fl_rwsem_owner_left(s);
  /* The readers first, then the writers, as in T7.  WPEND may be our
   * own, used up: T4 would keep it.  */
  if (admit)
    wake_all(s, &s->rseq);
  if (want & WPEND)
    wake_writers(s);
  return 0;
}

/* ------------------------------------------------------------------ */
/* Life cycle and checks.                                              */
/* ------------------------------------------------------------------ */

int fl_rwsem_init_raw(fl_rwsem_t *s, unsigned flags)
{
  const unsigned known = FL_PSHARED | FL_RWSEM_PREFER_READER
                         | FL_RWSEM_PREFER_WRITER | FL_RWSEM_READ_BIAS
                         | FL_ROBUST;

  if ((flags & ~known) != 0
      || ((flags & FL_RWSEM_PREFER_READER) && (flags & FL_RWSEM_PREFER_WRITER))
      || ((flags & FL_RWSEM_READ_BIAS) && (flags & FL_PSHARED))
      || ((flags & FL_ROBUST) && !(flags & FL_PSHARED)))
    return EINVAL;
  /* A process-shared lock's owner_ns starts as the namespace of the
   * process that makes it (robust.c, NAMESPACES).  */
  fl_store_relaxed(&s->owner, 0);
  fl_store_relaxed(&s->owner_ns, (flags & FL_PSHARED) ? fl_rwsem_self_ns() : 0);
  fl_store_relaxed(&s->mode, (int32_t)flags);
  fl_store_relaxed(&s->rseq, 0);
  fl_store_relaxed(&s->wseq, 0);
  if (flags & FL_RWSEM_READ_BIAS) {
    /* The bias starts on: readers scale from the first.  */
    fl_store_relaxed(&s->bias_id, fl_rwsem_bias_new_id());
    fl_store_relaxed(&s->count, BIASED);
    fl_store_relaxed(&s->bias, FL_RWSEM_BIAS_MODE | FL_RWSEM_BIAS_ON);
  } else {
    fl_store_relaxed(&s->bias_id, FL_RWSEM_BIAS_NO_ID);
    fl_store_relaxed(&s->count, (flags & FL_PSHARED) ? SHARED : 0);
    fl_store_relaxed(&s->bias, 0);
  }
  return 0;
}

/* Busy: held, or a waiter's flag (WPEND, RWAIT) up.  A readers' turn
 * with nobody inside is neither: it outlives the readers it was given to
 * when they die before entering (FL_PSHARED), and it ends by the next
 * waiter's lease (T9) or reader.  E is a count of leases, not a state.
 * Nor, on an FL_PSHARED lock, is L: a live late reader is inside a call
 * (asleep with RWAIT up, or awake in its slowpath), so with no flag up L
 * counts late readers that died, until the next lease clears it (T9).  */
int fl_rwsem_destroy_raw(fl_rwsem_t *s)
{
  int32_t free_bits = BIASED | SHARED | RTURN | SLOW | EPOCH_MASK
                      | (pshared(s) ? LATE_MASK : 0);

  if (fl_rwsem_lost(s))
    return 0;
  if ((fl_load_relaxed(&s->count) & ~free_bits) != 0
      || ((fl_load_relaxed(&s->bias) & FL_RWSEM_BIAS_MODE)
          && fl_rwsem_bias_readers(s)))
    return EBUSY;
  return 0;
}

int fl_rwsem_check_invariants(const fl_rwsem_t *s, int32_t c)
{
  unsigned m = mode_of(s);

  if (underflow(c))
    return 0; /* an undo in flight (misuse) */
  if (((c & SLOW) != 0) != ((c & FLAGS) != 0))
    return 2;
  if ((c & RTURN) && (c & WRITER))
    return 3;
  if (READERS(c) > FL_RWSEM_READERS_MAX + 0x8000u)
    return 5;
  if ((c & FL_RWSEM_NO_TID) != 0
      || ((c & SHARED) != 0) != ((m & FL_PSHARED) != 0)
      || ((c & EPOCH_MASK) && !(m & FL_PSHARED))
      || ((c & BIASED) && !(m & FL_RWSEM_READ_BIAS)))
    return 6;
  if ((m & FL_PSHARED) && (c & WRITER) && !(m & FL_RWSEM_ROBUST_LOST)
      && fl_load_relaxed(&s->owner) == 0)
    return 8;
  return 0;
}
