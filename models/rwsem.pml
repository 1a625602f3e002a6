/* models/rwsem.pml: the fl_rwsem slowpath protocol (fair default mode), as
 * a Promela model for SPIN.  doc/models.md says what it covers, what it
 * assumes and how to run it; tools/check-model runs it.
 *
 * The state names and transition labels T1..T11 are those of the table at
 * the top of src/rwsem/rwsem.c: each transition of the C is the statement
 * here labelled with its name, and each is one atomic step (d_step) on
 * the count word, as in the C.  SPIN assumes sequential consistency: the
 * barriers are argued in the C, not here.
 *
 * Processes: readers R1, R2 (with TIMED_READER, the last of them is
 * timed: its futex_wait may time out, and then it gives up, a reader's
 * T10); writers
 * W1 (untimed) and W2 (timed: likewise, a writer's T10).  Each loops
 * forever: acquire, hold, release.  Without PSHARED the writers' turn
 * (T4, T7, T8) wakes one writer, any one, as the C's wake_writer_turn.
 *
 * Switches (spin -D...):
 *   PSHARED        one waiter may die at any step of its wait, and every
 *                  sleep is bounded: a poll timeout returns from a sleep
 *                  when nothing else in the system can move.
 *   BIAS           the READ_BIAS table (2 slots, the bias word, BIASED).
 *   NREADERS, NWRITERS  the instance: 1 or 2 of each (default 2 and 2).
 *   CAS_FAIR       a waiter's read of the count and its CAS are one step
 *                  (progress runs: a retried CAS eventually succeeds).
 *   LEASE_ASSUMED  T9 only when no live admitted reader is still on its
 *                  way in (the lease outlasts a reader's wake-to-entry
 *                  time); used by the progress runs.  Without it T9 may
 *                  fire whenever the turn has no reader inside, the
 *                  harsher case for safety.
 *   LEASE_QUIET    with LEASE_ASSUMED, the 2-reader progress run: a
 *                  lease fires only while every other live process is
 *                  asleep or out of its calls (it outlasts whatever a
 *                  running process still owes: a T7 and its bump, a T4,
 *                  a wake), and a writer in its call before its
 *                  fastpath counts as on its way.  Alone it also rules
 *                  out a late reader whose one a lease cleared (no
 *                  recount); LEASE_EARLY lets that in (doc/models.md,
 *                  two readers on an FL_PSHARED lock).
 *   LEASE_EARLY=n  with LEASE_ASSUMED: up to n leases in a run may run
 *                  out early, while a waiter admitted or a writer awake
 *                  is still on its way, or (LEASE_QUIET) another process
 *                  is still running in its call: that process was kept
 *                  off the CPU for longer than a lease (2 ms).  A finite
 *                  number, as SPURIOUS and TIMEOUTS: the progress runs
 *                  then show progress after any n early leases, and the
 *                  state an early lease leaves (on an FL_PSHARED lock, a
 *                  live late reader's one cleared from L) is searched.
 *   NO_WRAP        the 2-reader progress run: a bump of rseq or wseq
 *                  skips the g of a live waiter that read it and has not
 *                  slept (2^32 bumps in such a window do not happen in
 *                  the C; with SEQMOD 4 the wrap is a cycle of its own);
 *                  SEQMOD is then 5 (see HITS).
 *   SPURIOUS=n     how many spurious futex_wait returns in a run (the
 *                  progress runs need a finite number: a waiter woken
 *                  spuriously forever is polled, not starved).
 *   TIMEOUTS=n     how many times a deadline (W2's, and R2's with
 *                  TIMED_READER) may expire in a run (likewise).
 *   DOWNGRADE      W1 may leave by downgrade (T11) and then up_read,
 *                  instead of up_write.
 *   BUG_DOWNGRADE_NO_WAKE  negative control for DOWNGRADE: the downgrade
 *                  admits the waiting readers (RWAIT -> RTURN) but
 *                  neither bumps rseq nor wakes them: a reader asleep
 *                  then stays asleep (reader progress fails).
 *   TIMED_READER   the last reader (R2, or R1 alone) waits with a
 *                  deadline: a reader's T10, and a late
 *                  reader that gives up takes its one off L (late_gone).
 *   BUG_FLAG_ADD   negative control, defect 1: the READ_BIAS restore adds
 *                  BIASED after reading it clear (two restorers carry).
 *   BUG_WAKE_ONE   negative control, defect 2: a releaser grants the lock
 *                  to one waiting writer and FUTEX_WAKE(1)s an arbitrary
 *                  sleeping writer, which may not claim it.
 *   BUG_END_LATE_TURN  negative control for reader progress: T7 ends
 *                  a turn its FUTEX_WAKE found no reader asleep for even
 *                  when a late reader is counted for it (as the C did
 *                  before 2026-12-01 with no late count at all; it hung
 *                  test-rwsem under qemu-mipsel), so a reader on its way
 *                  to sleep loses every turn to a writer that keeps
 *                  coming back.
 *   BUG_KEEP_UNUSED_TURN  negative control for a clean idle word: T7
 *                  keeps a turn its FUTEX_WAKE found no reader asleep for
 *                  (the C before 2026-12-06), so with two writers a
 *                  reader that reads rseq, sets RWAIT after a release's
 *                  T7 and before its bump, takes that bump for its
 *                  admission and enters with its RWAIT up, and the next
 *                  writer's T7 turns it into a turn nobody enters: an
 *                  unused lock keeps RTURN.
 *   BUG_T4_ENDS_WPEND  negative control for writer progress: the last
 *                  reader to leave (T4) takes WPEND down when its
 *                  FUTEX_WAKE woke no writer (the C before 2026-12-01
 *                  afternoon), so a writer awake in its slowpath loses
 *                  its claim to the readers arriving, again and again.
 *   BUG_TIMEOUT_LEAVES_TURN  negative control for the timed reader: its
 *                  T10 does not run T4, so a turn made for it while it
 *                  timed out is left with nobody to enter it (found by
 *                  this model on 2026-12-05: the C's T10 was that).
 *   BUG_TIMEOUT_KEEPS_LATE  negative control for the timed reader: a late
 *                  reader that gives up leaves its one in L (late_gone
 *                  not called), so a lock nobody uses keeps L (the
 *                  idle check; in the C, fl_rwsem_destroy says EBUSY).
 *   BUG_LATE_ONCE  negative control for DOWNGRADE on an FL_PSHARED lock:
 *                  a late reader whose one a lease (T9) cleared does not
 *                  count itself again (the C before 2026-12-06), so a
 *                  writer that downgrades ends each turn as it leaves it,
 *                  before the reader it admitted has run.
 *   BUG_RECOUNT_EMPTY  negative control for each reader's progress on an
 *                  FL_PSHARED lock: no E; a late reader takes one off
 *                  whenever L > 0 and counts itself again only when it
 *                  finds L empty (the C until the evening of
 *                  2026-12-06): with an early lease (LEASE_EARLY) and two
 *                  readers, one whose one a lease cleared waits uncounted
 *                  while the other's is in L, turn after turn.
 *   BUG_EPOCH_KEPT  negative control for E: a T9 that clears L leaves E
 *                  as it was, so a late reader whose one it cleared takes
 *                  it for still there and, with two readers, takes the
 *                  other's one off L (uncount_late's assertion).
 *   BUG_NO_LATE    negative control for each reader's progress: a reader
 *                  that missed a turn does not count itself late (the C
 *                  before 2026-12-05), so with two readers one is woken
 *                  for turn after turn and finds WRITER or WPEND each
 *                  time while the other enters.
 */

/* The count word.  The C puts READER at bit 14 and SLOW at bit 31; the
 * model keeps the same order of fields in fewer bits.  CARRY is the
 * unused bit above BIASED: a carry out of a flag lands there.  */
#define WRITER  1
#define WPEND   2
#define RTURN   4
#define RWAIT   8
#define BIASED  16
#define CARRY   32
#define LATE    64           /* L, late readers: bits 6..7 (T3, T2) */
#define LMASK   192
#define READER  256
#define RMASK   1792         /* readers field: bits 8..10 */
#define SLOW    2048
#define FLAGS   (WPEND|RTURN|RWAIT)

/* What the word of a lock nobody uses may not hold (every process out of
 * its calls): a holder, a waiter's flag, a readers' turn, a late count.  */
#define IDLE_MASK (WRITER|RMASK|FLAGS|SLOW|LMASK)

/* The flags T9 takes down: every lease, since it wakes every class.  */
#define T9_FLAGS (WPEND|RTURN|RWAIT)
#ifdef PSHARED
#define T9_ENDS (T9_FLAGS|LMASK)
#define T9_GHOSTS(c) lcnt[0] = false; lcnt[1] = false T9_AGES(c)
#else
#define T9_ENDS T9_FLAGS
#define T9_GHOSTS(c) skip
#endif

/* A reader that missed a turn counts itself late (T3), and again if an
 * FL_PSHARED lease cleared its one (OWN: E moved, or L is empty).  */
#ifdef BUG_NO_LATE
#define COUNTS_LATE false
#else
#define COUNTS_LATE true
#endif
#ifdef BUG_LATE_ONCE
#define RECOUNTS_LATE(c) false
#else
#define RECOUNTS_LATE(c) (!OWN(c))
#endif

#define NR(c)       (((c) & RMASK) / READER)
#define NL(c)       (((c) & LMASK) / LATE)
/* Every CAS recomputes SLOW from the flags it leaves (I2).  */
#define WITHSLOW(c) (((c) & ~SLOW) | (((c) & FLAGS) != 0) * SLOW)

/* Sequence words wrap modulo SEQMOD so that a wrap bug shows.  */
/* The instance: R1 (and R2), W1 (and W2, the timed one).  */
#ifndef NREADERS
#define NREADERS 2
#endif
#ifndef NWRITERS
#define NWRITERS 2
#endif

#ifndef SEQMOD
#ifdef NO_WRAP
#define SEQMOD 5             /* a free value for next_rseq: see NO_WRAP */
#else
#define SEQMOD 4
#endif
#endif
#ifndef SPURIOUS
#define SPURIOUS 1
#endif
#ifndef TIMEOUTS
#define TIMEOUTS 1
#endif

/* TIMED_READER: the last reader waits with a deadline.  */
#ifdef TIMED_READER
#define READER_TIMED true
#else
#define READER_TIMED false
#endif

/* Process ids for death and the progress formulas.  */
#define R1 1
#define R2 2
#define W1 3
#define W2 4

int  count;
byte rseq, wseq;             /* the futex sequence words */
bool rslp[2], wslp[2];       /* queued on the rseq / wseq futex */
byte spur = SPURIOUS;        /* spurious returns left */
byte tmo = TIMEOUTS;         /* deadline expiries left (W2, R2) */
byte dead;                   /* the process that died (PSHARED), 0 if none */

/* Ghosts: who is inside, each process's phase (0 idle, 1 acquiring,
 * 2 holding), and each reader's wait (rwaiting: between its T3 CAS and
 * its entry; rg: the rseq value it slept on).  */
byte nr, nw;
byte rph[2], wph[2];
bool rwaiting[2];
byte rg[2];
byte wg[2];                  /* each writer's g (NO_WRAP) */
byte rgh[2];                 /* each reader's g, from each read (NO_WRAP) */
/* Each process between the start of its call and the end of its
 * release (its wakes included): while none is, nobody holds or waits,
 * and the word must be idle.  A process that died stays in its call.  */
bool rcall[2], wcall[2];
/* Late readers: lcnt[i] while reader i is counted in the word's L.
 * rdue: a turn's CAS (T7) has been made and its bump of rseq not yet.  */
bool lcnt[2];
bool rdue;

#ifdef BIAS
bool bias;                   /* the bias word's ON */
bool slot[2];                /* each reader's slot in the table */
#endif

/* E, the epoch of L (FL_PSHARED, bits 12..13 of the C's word): a T9
 * that clears a non-zero L advances it, mod 4, in the same CAS; a late
 * reader notes E as it counts itself, and its one is in L while E is
 * the one it noted.  Only that equality is ever asked of E, so the model
 * keeps, in place of E in the word and each reader's note, lage[i]: how
 * many clears behind E reader i's note is, mod 4 (0: its one is still
 * in L), or NO_NOTE while it is not late.  The same relation without
 * E's own value: states that differ only by a turn of every epoch
 * together are one (an exhaustive 1-reader instance with E in the word
 * had 23 million states for 3.35 million without E; with lage, 3.36
 * million).  NOTE_AGE, FORGET_AGE and T9_AGES end the statement before
 * them (nothing without PSHARED).  OWN(c): the one that this late reader
 * put into L is still there (on a private lock: L > 0).  */
#if defined(PSHARED) && !defined(BUG_RECOUNT_EMPTY)
#define NO_NOTE 4
byte lage[2] = NO_NOTE;
#define OWN(c) (((c) & LMASK) && lage[i] == 0)
#define NOTE_AGE ; lage[i] = 0
#define FORGET_AGE ; lage[i] = NO_NOTE
#define AGE(k) if :: lage[k] != NO_NOTE -> lage[k] = (lage[k] + 1) % 4 :: else -> skip fi
#ifdef BUG_EPOCH_KEPT
#define T9_AGES(c)
#else
#define T9_AGES(c) ; if :: ((c) & LMASK) -> AGE(0); AGE(1) :: else -> skip fi
#endif
#else
#define OWN(c) ((c) & LMASK)
#define NOTE_AGE
#define FORGET_AGE
#define T9_AGES(c)
#endif

#ifdef BUG_WAKE_ONE
byte grant;                  /* the writer (1 + index) granted the lock */
#endif

/* A reader is "pending" when it is live, waiting, and rseq has moved
 * since it slept (or a turn's T7 has been made and its bump is owed): it
 * is admitted and on its way in.  A writer is "on its way" when it is
 * live, acquiring and not asleep (LEASE_QUIET: or in its call before
 * its fastpath).  */
#ifdef LEASE_QUIET
#define PENDING(i)  (rwaiting[i] && (rg[i] != rseq || rdue) && dead != R1 + (i))
#define ONWAY(j)    (((wph[j] == 1 && !wslp[j]) || (wcall[j] && wph[j] == 0)) && dead != W1 + (j))
/* Every other live process asleep or out of its calls: the lease
 * outlasts whatever a running process still owes (a T7, a T4, a wake).  */
#define QR(k)       (dead == R1 + (k) || rslp[k] || !rcall[k])
#define QW(k)       (dead == W1 + (k) || wslp[k] || !wcall[k])
#define QUIET       ((id == R1 || QR(0)) && (id == R2 || QR(1)) && (id == W1 || QW(0)) && (id == W2 || QW(1)))
#else
#define PENDING(i)  (rwaiting[i] && rg[i] != rseq && dead != R1 + (i))
#define ONWAY(j)    (wph[j] == 1 && !wslp[j] && dead != W1 + (j))
#define QUIET       true
#endif
/* LEASE_KEPT: the lease outlasts what it waits for (LEASE_ASSUMED);
 * LEASE_OK: it may run out now (kept, or one of LEASE_EARLY's).  */
#ifdef LEASE_ASSUMED
#define LEASE_KEPT  (!PENDING(0) && !PENDING(1) && QUIET)
#define WLEASE_KEPT (!ONWAY(0) && !ONWAY(1) && QUIET)
#else
#define LEASE_KEPT  true
#define WLEASE_KEPT true
#endif
#ifdef LEASE_EARLY
byte early = LEASE_EARLY;    /* early leases left in this run */
#define LEASE_OK    (LEASE_KEPT || early > 0)
#define WLEASE_OK   (WLEASE_KEPT || early > 0)
/* A lease of futex_wait (w as in LEASE_FOR) or a writer's T9 that runs
 * out while not kept spends one (the macro ends its own statement, so
 * that without LEASE_EARLY it adds none).  */
#define SPEND_EARLY(w) if :: !LEASE_KEPT || (w) == 0 && !WLEASE_KEPT -> early-- :: else -> skip fi;
#else
#define LEASE_OK    LEASE_KEPT
#define WLEASE_OK   WLEASE_KEPT
#define SPEND_EARLY(w)
#endif

/* CAS_FAIR (the progress checks): a waiter's read of the count word and
 * the CAS that follows it are one step, i.e. a CAS retried against the
 * same word eventually succeeds; weak fairness alone lets another
 * process change the word between every read and CAS forever.  */
#ifdef CAS_FAIR
#define CAS_FAIR_BEGIN atomic {
#define CAS_FAIR_END   }
#else
#define CAS_FAIR_BEGIN
#define CAS_FAIR_END
#endif

/* The generalised T9 for a reader: after a poll timeout (FL_PSHARED) or
 * its lease (blocked by WPEND without WRITER), the word it finds has
 * leases up, nobody inside and no WRITER.  */
#define T9_READER(c) (polled && ((c) & (WPEND|RTURN)) && !((c) & WRITER) && NR(c) == 0)

#ifdef PSHARED
#define CAN_DIE     (dead == 0)
#else
#define CAN_DIE     false
#endif

/* FUTEX_WAKE(INT_MAX): every sleeper queued now is woken, in no
 * particular order (each runs whenever the scheduler lets it).  n: how
 * many it woke, FUTEX_WAKE's return value.  */
#define WAKE_ALL(slp, n) \
  d_step { \
    n = 0; \
    if :: slp[0] -> slp[0] = false; n++ :: else -> skip fi; \
    if :: slp[1] -> slp[1] = false; n++ :: else -> skip fi \
  }
inline wake_readers(n) { WAKE_ALL(rslp, n) }

/* FUTEX_WAKE(1): the kernel picks any one sleeper, not the oldest.  */
#define WAKE_ONE(slp, n) \
  d_step { \
    if \
    :: slp[0] -> slp[0] = false; n = 1 \
    :: slp[1] -> slp[1] = false; n = 1 \
    :: else -> n = 0 \
    fi \
  }

inline wake_writers(n)
{
#ifdef BUG_WAKE_ONE
  WAKE_ONE(wslp, n)
#else
  WAKE_ALL(wslp, n)
#endif
}

/* The writers' turn (T4, T7, T8): a private lock wakes one writer, any
 * one (the woken writer may take the lock, whoever it is, so nothing
 * depends on which); a process-shared lock wakes them all, since a
 * woken waiter may die before it runs.  */
inline wake_writer_turn(n)
{
#ifdef PSHARED
  wake_writers(n)
#else
  WAKE_ONE(wslp, n)
#endif
}

/* NO_WRAP (the 2-reader progress check): a bump skips the value g of any
 * other live waiter that read g and has not slept yet, as 2^32 bumps
 * never come round within one waiter's window in the C; with SEQMOD 4
 * that wrap is otherwise a cycle of its own (doc/models.md).  A reader's
 * window opens at each read of rseq (rgh, NOTE_RG: at the top of its
 * wait, after a failed CAS or its T9, on each return from its sleep),
 * and, while it waits (rwaiting), the g it slept on (rg) is kept too:
 * PENDING reads it.  Two values for each of two readers: SEQMOD 5 leaves
 * a free one.  */
#ifdef NO_WRAP
#define HITS(i) (_pid != (i) + 2 && rph[i] == 1 && !rslp[i] && dead != R1 + (i) && \
                 (rgh[i] == rseq || rwaiting[i] && rg[i] == rseq))
#define WHITS(j) (id != W1 + (j) && wph[j] == 1 && !wslp[j] && dead != W1 + (j) && wg[j] == wseq)
#define NOTE_WG(i, g) wg[i] = g
#define NOTE_RG(i, g) rgh[i] = g
#else
#define HITS(i) false
#define WHITS(j) false
#define NOTE_WG(i, g) skip
#define NOTE_RG(i, g) skip
#endif
/* futex_wait's return, however it came: whether seq moved since g, then
 * the new g (noted for a reader: lease 0).  */
#define WOKEN(seq, g, moved, lease) \
  moved = (seq != g); g = seq; if :: (lease) == 0 -> NOTE_RG(i, g) :: else -> skip fi
inline next_rseq() { rseq = (rseq + 1) % SEQMOD; do :: HITS(0) || HITS(1) -> rseq = (rseq + 1) % SEQMOD :: else -> break od }
inline bump_rseq() { atomic { next_rseq() } }
inline bump_wseq() { atomic { wseq = (wseq + 1) % SEQMOD; do :: WHITS(0) || WHITS(1) -> wseq = (wseq + 1) % SEQMOD :: else -> break od } }

/* CAS of the whole count word from the value c read before; ok tells
 * whether it took.  c is dead after it.  */
inline cas(c, nv, ok)
{
  d_step {
    if
    :: count == c -> count = nv; ok = true
    :: else -> ok = false
    fi;
    c = 0
  }
}

/* futex_wait(seq, g) of process id, queued on slp, entered when ok (the
 * CAS before it took; ok is dead after).  It returns on a wake, at once
 * on EAGAIN (seq moved), spuriously (SPURIOUS times a run), on a poll
 * timeout (PSHARED: only when nothing else can move, i.e. the poll
 * period is long against everything else), when lease holds (writers:
 * the timed wait of T9 while a turn has nobody inside), or on W2's
 * deadline (timed: then timedout); polled tells a poll timeout or a
 * lease that ran out.  On return, moved tells whether seq
 * moved since g, and g is seq's value now.  Under PSHARED the process may die between the CAS and the
 * sleep, asleep, or woken before it runs again; a dead sleeper stays
 * queued and a wake counts it.  */
/* The lease of futex_wait: 0 a reader's (blocked by WPEND without
 * WRITER, nobody inside), 1 a writer's (an empty readers' turn).  */
#define LEASE_FOR(w) \
  ((w) == 0 && (count & WPEND) && !(count & WRITER) && NR(count) == 0 && WLEASE_OK && LEASE_OK \
   || (w) == 1 && (count & RTURN) && NR(count) == 0 && LEASE_OK)
inline futex_wait(ok, seq, g, slp, id, lease, timed, timedout, moved, polled)
{
  if
  :: d_step {
       ok -> ok = false;
       if
       :: seq == g -> slp = true
       :: else -> skip
       fi
     }
#ifdef PSHARED
  :: atomic { CAN_DIE -> dead = id; goto died }
#endif
  fi;
  if
  :: d_step { !slp -> WOKEN(seq, g, moved, lease) }
  :: d_step { slp && spur > 0 -> slp = false; spur--; WOKEN(seq, g, moved, lease) }
#ifdef PSHARED
  :: atomic { slp && timeout -> slp = false; polled = true; WOKEN(seq, g, moved, lease) }
  :: atomic { CAN_DIE -> dead = id; goto died }
#endif
  :: d_step { slp && LEASE_FOR(lease) -> slp = false; polled = true; SPEND_EARLY(lease) WOKEN(seq, g, moved, lease) }
  :: d_step { slp && timed && tmo > 0 -> slp = false; tmo--; timedout = true; WOKEN(seq, g, moved, lease) }
  fi
}

/* Invariants, checked in every state: the monitor can move only in a
 * state that breaks one.  */
active proctype monitor()
{
end:
  atomic {
    !(nw <= 1 && (nw == 0 || nr == 0)                         /* exclusion */
#ifdef BIAS
      /* I1 (a revoking writer holds WRITER while table readers drain) */
      && ((count & WRITER) == 0 || nr <= slot[0] + slot[1])
#else
      && ((count & WRITER) == 0 || nr == 0)                   /* I1 */
#endif
      && (((count & SLOW) != 0) == ((count & FLAGS) != 0))    /* I2 */
      && ((count & (RTURN|WRITER)) != (RTURN|WRITER))         /* I3 */
      && (count & CARRY) == 0 && NR(count) <= 4               /* I5 */
      && NL(count) == lcnt[0] + lcnt[1]                       /* I7 */
#ifdef BIAS
      && (!bias || (count & BIASED) != 0)                     /* I6 */
#endif
      && (rcall[0] || rcall[1] || wcall[0] || wcall[1]         /* idle */
          || (count & IDLE_MASK) == 0)
     ) -> assert(false)
  }
}

/* After a wake of the writers by a leaving writer (T7, T8) that returned
 * n: if it woke none, WPEND was the leaver's own, used up: CAS it off,
 * with RWAIT unless a writer holds the lock (the readers may use it
 * then), whoever is inside; then bump and wake the writers again (one may
 * have set WPEND again, unchanged, after the first bump and gone to
 * sleep on it) and, if RWAIT went, the readers (wake_writers of the C).  */
inline end_wpend(c, ok, rw, n)
{
  if
  :: n == 0 ->
     do
     :: d_step {
          c = count;
          if
          :: (c & WPEND) -> rw = ((c & RWAIT) && !(c & WRITER))
          :: else -> c = 0
          fi
        };
        if
        :: c == 0 -> break
        :: else ->
           cas(c, WITHSLOW((c & ~(WPEND | (rw -> RWAIT : 0))) | ((rw && (c & LMASK)) -> RTURN : 0)), ok);
           if
           :: ok ->
              ok = false; bump_wseq(); wake_writers(n);
              if
              :: rw -> rw = false; bump_rseq(); wake_readers(n)
              :: else -> skip
              fi;
              break
           :: else -> rw = false
           fi
        fi
     od
  :: else -> skip
  fi;
  n = 0
}

/* T7's wake found no reader asleep: the turn ends (RTURN off) if nobody
 * is inside and no late reader is counted for it (turn_unused of the C);
 * a writer that set WPEND behind it joins the writers' turn (ww; rw
 * holds the ended word's WPEND meanwhile).  */
#ifdef BUG_END_LATE_TURN
#define TURN_KEPT_FOR 0      /* not even a late reader keeps it */
#else
#define TURN_KEPT_FOR LMASK
#endif
#define UNUSED_TURN(c) ((c & RTURN) && !(c & WRITER) && NR(c) == 0 && !(c & TURN_KEPT_FOR))
inline end_unused_turn(c, ok, rw, ww)
{
  do
  :: d_step {
       c = count;
       if
       :: UNUSED_TURN(c) -> rw = ((c & WPEND) != 0)
       :: else -> c = 0
       fi
     };
     if
     :: c == 0 -> break
     :: else ->
        cas(c, WITHSLOW(c & ~RTURN), ok);
        if
        :: ok -> ok = false; ww = ww || rw; rw = false; break
        :: else -> rw = false
        fi
     fi
  od
}

/* With WPEND seen (ww) by a leaving writer's CAS (T7, T11): the writers'
 * turn, and WPEND's end if the wake found no writer (wake_writers of
 * the C).  */
inline writers_turn(c, ok, rw, ww, n)
{
  if
  :: ww -> ww = false; bump_wseq(); wake_writer_turn(n); end_wpend(c, ok, rw, n)
  :: else -> skip
  fi
}

/* T4, run by whoever made R = 0 with SLOW up (readers_gone of the C):
 * the last reader to leave, or a late reader that gave up (late_gone).  */
inline readers_gone(c, ok, rw, n, br)
{
     do
     :: CAS_FAIR_BEGIN
        /* br: 0 nothing owed (or a newcomer owes it); 1 the writers go
         * next: the turn ends (RTURN off), the writers are woken, and
         * WPEND stays up, the claim of a writer asleep or awake (readers
         * arriving meanwhile wait; a dead claimant's WPEND ends by a
         * reader's T9 lease); 2 no writer waits: the leases end, RTURN
         * and RWAIT (RWAIT -> RTURN for late readers, as T7); 3 a turn
         * held for late readers, with a writer waiting: wake it to wait
         * on its lease.  */
        d_step {
          c = count; ok = false;
          if
          :: (c & WRITER) || NR(c) > 0 || !(c & FLAGS) -> br = 0
          :: else ->
             if
             :: (c & RTURN) && (c & LMASK) -> br = ((c & WPEND) -> 3 : 0)
             :: else -> br = ((c & WPEND) -> 1 : 2)
             fi
          fi;
          if
          :: br == 0 || br == 3 -> c = 0
          :: else -> skip
          fi;
          rw = ((c & RWAIT) != 0)
        };
        if
        :: br == 1 ->
T4:        cas(c, WITHSLOW(c & ~RTURN), ok)
        :: br == 2 -> cas(c, WITHSLOW((c & ~(RTURN|RWAIT)) | (((c & LMASK) && (c & RWAIT)) -> RTURN : 0)), ok)
        :: br == 0 || br == 3 -> skip
        fi
        CAS_FAIR_END;
        if
        :: d_step { br == 0 -> rw = false }; break
        :: d_step { br == 3 -> br = 0 }; bump_wseq(); wake_writer_turn(n); n = 0; break
        :: d_step { br == 1 && ok -> ok = false; br = 0; rw = false };
           bump_wseq(); wake_writer_turn(n);
#ifdef BUG_T4_ENDS_WPEND
           end_wpend(c, ok, rw, n);
#endif
           n = 0; break
        :: d_step { br == 2 && ok -> ok = false; br = 0 };
           if
           :: rw -> rw = false; bump_rseq(); wake_readers(n); n = 0
           :: else -> skip
           fi;
           break
        :: d_step { (br == 1 || br == 2) && !ok -> br = 0; rw = false }
        fi
     od
}

/* up_read through the count word (also the undo of a failed T1): the
 * fastpath fetch_add of -READER and, for the last reader with SLOW
 * set, T4.  */
inline up_read(c, ok, rw, n, br)
{
  atomic {
    ok = ((count & SLOW) != 0 && NR(count) == 1);
    count = count - READER
  };
  if
  :: ok -> readers_gone(c, ok, rw, n, br)
  :: else -> skip
  fi
}

/* The ghost of the one taken off L by reader i (T2, late_gone): its
 * own, always (OWN; until 2026-12-06 an FL_PSHARED reader whose one a
 * lease had cleared took another's), which the assertion checks on an
 * FL_PSHARED lock.  The else is never taken (a private lock's L is never
 * cleared); it stays so that the private verifiers stay as they were:
 * their bitstate searches and controls move with the model's statements
 * (doc/models.md).  */
inline uncount_late()
{
#if defined(PSHARED) && !defined(BUG_RECOUNT_EMPTY)
  assert(lcnt[i]);
#endif
  if
  :: lcnt[i] -> lcnt[i] = false
  :: else -> lcnt[1 - i] = false
  fi
}

/* A late reader that gives up without entering takes its one off L
 * (late_gone of the C), then runs T4: a turn held for it alone ends.
 * On an FL_PSHARED lock a lease may have cleared its one (E moved): then
 * there is nothing to take off.  */
inline late_gone(c, ok, rw, n, br)
{
  do
  :: d_step { c = count; if :: !OWN(c) -> c = 0 :: else -> skip fi };
     if
     :: c == 0 -> break
     :: else ->
        d_step {
          if
          :: count == c ->
             count = c - LATE; ok = true; uncount_late()
          :: else -> ok = false
          fi;
          c = 0
        };
        if
        :: ok -> ok = false; readers_gone(c, ok, rw, n, br); break
        :: else -> skip
        fi
     fi
  od
}

proctype reader(byte i; bool timed)
{
  int c;
  bool ok, rw, ww, admitted, timedout, undo, polled, late;
  bool fresh;                  /* read rseq again: T3's CAS failed, or T9 */
  byte br;
  byte g, n;
#ifdef BIAS
  bool intable;
#endif
  byte id = R1 + i;

next:
  do
  ::
#ifdef BIAS
     if
     :: d_step { rcall[i] = true; rph[i] = 1; slot[i] = true };   /* down_read through the table */
        if
        :: d_step { bias -> intable = true; nr++; rph[i] = 2 }; goto holding
        :: d_step { !bias -> slot[i] = false }
        fi
     :: skip
     fi;
#endif
     atomic {
       rcall[i] = true; rph[i] = 1;
       ok = ((count & (WRITER|WPEND)) == 0);
T1:    count = count + READER;
       if
       :: ok -> ok = false; nr++; rph[i] = 2; goto holding
       :: else -> undo = true; goto leave      /* undo the fastpath add */
       fi
     };
slow:
     atomic { g = rseq; NOTE_RG(i, g) };
     do
     :: CAS_FAIR_BEGIN
        c = count;
        if
        :: atomic {
             !(c & WRITER) && (!(c & WPEND) || (admitted && (c & RTURN))) ->
T2:          if
             :: count == c ->
                if
                :: late && OWN(c) ->
                   count = c + READER - LATE; uncount_late()
                :: else -> count = c + READER
                fi;
                late = false FORGET_AGE; nr++; rph[i] = 2;
                rwaiting[i] = false; rg[i] = 0; admitted = false; g = 0; c = 0;
                polled = false; break
             :: else -> c = 0
             fi
           }
        :: d_step {
             T9_READER(c) ->
T9:          if
             :: count == c -> count = WITHSLOW(c & ~T9_ENDS); ww = true; T9_GHOSTS(c)
             :: else -> skip
             fi;
             c = 0; polled = false; fresh = true
           }
        :: d_step {
             ((c & WRITER) || ((c & WPEND) && !(admitted && (c & RTURN)))) && !T9_READER(c) ->
T3:          if
             :: count == c ->
                if
                :: COUNTS_LATE && admitted && (!late || RECOUNTS_LATE(c)) -> count = WITHSLOW(c | RWAIT) + LATE; late = true; lcnt[i] = true NOTE_AGE
                :: else -> count = WITHSLOW(c | RWAIT)
                fi;
                ok = true; rwaiting[i] = true; rg[i] = g
             :: else -> fresh = true
             fi;
             c = 0; polled = false
           }
        fi
        CAS_FAIR_END;
        if
        :: ww ->                         /* T9 took: wake both classes */
           ww = false; bump_wseq(); bump_rseq(); wake_writers(n); wake_readers(n); n = 0
        :: else -> skip
        fi;
        if
        :: ok ->
           /* "admitted": rseq moved since the reader slept */
           futex_wait(ok, rseq, g, rslp[i], id,
                      0,
                      timed, timedout, admitted, polled)
#ifdef TIMED_READER
           ;
           if
           :: d_step { timedout -> timedout = false; admitted = false; polled = false; g = 0 };
              /* T10 for a reader: my RWAIT may be the only one: clear
               * it (the readers still asleep set it again), wake the
               * readers, and run T4: a turn made for me after I slept
               * (T7's CAS before my deadline) has nobody inside.  A
               * late reader then takes its one off L.  */
              do
              :: d_step { c = count; if :: !(c & RWAIT) -> c = 0 :: else -> skip fi };
                 if
                 :: c == 0 -> break
                 :: else ->
T10:                cas(c, WITHSLOW(c & ~RWAIT), ok);
                    if :: ok -> ok = false; break :: else -> skip fi
                 fi
              od;
              bump_rseq(); wake_readers(n); n = 0;
              d_step { rwaiting[i] = false; rg[i] = 0 };
#ifndef BUG_TIMEOUT_LEAVES_TURN
              readers_gone(c, ok, rw, n, br);
#endif
              if
#ifdef BUG_TIMEOUT_KEEPS_LATE
              :: late -> late = false
#else
              :: late -> late = false; late_gone(c, ok, rw, n, br)
#endif
              :: else -> skip
              fi;
              atomic { rph[i] = 0; rcall[i] = false FORGET_AGE };
              goto next
           :: else -> skip
           fi
#endif
        :: else ->                       /* a CAS failed, or T9: read again */
           if
           :: d_step { fresh -> fresh = false; g = rseq; NOTE_RG(i, g) }   /* the C's outer loop */
           :: else -> skip               /* T2's CAS failed: g stays */
           fi
        fi
     od;
holding:
#ifdef BIAS
     /* restore() of bias.c: a reader holding through the count word
      * turns the bias back on while nobody waits: BIASED first, then the
      * bias word's ON by CAS.  */
     if
     :: d_step { !intable && !bias && !(count & SLOW) -> skip };
#ifdef BUG_FLAG_ADD
        d_step { c = count & BIASED };   /* the old restore: read, then add */
        if
        :: d_step { c == 0 -> count = count + BIASED }
        :: d_step { c != 0 -> c = 0 }
        fi;
#else
        count = count | BIASED;          /* fetch_or */
#endif
        bias = true                      /* CAS off -> on */
     :: true -> skip
     fi;
     if
     :: d_step { intable -> nr--; rph[i] = 0; slot[i] = false; intable = false; rcall[i] = false }
     :: else ->
#endif
        atomic { nr--; rph[i] = 0 };
leave:  up_read(c, ok, rw, n, br);
        if
        :: undo -> undo = false; goto slow
        :: else -> rcall[i] = false
        fi
#ifdef BIAS
     fi
#endif
  od;
died:
  atomic { rph[i] = 0; rwaiting[i] = false; c = 0; g = 0; late = false FORGET_AGE }
}

/* A writer's release: the fastpath (add_negative of -WRITER) and T7/T8.  */
inline up_write(c, ok, rw, ww, n)
{
#ifdef BUG_WAKE_ONE
  /* The old release: with writers asleep, grant the lock to one of them
   * (the first queued: here any one asleep), keeping WRITER, and wake
   * one arbitrary sleeping writer.  */
  atomic {
    nw--; wph[i] = 0; ok = false;
    if
    :: (count & WPEND) && !(count & RWAIT) && (wslp[0] || wslp[1]) -> ok = true
    :: else -> skip
    fi
  };
  if
  :: ok ->
     ok = false;
     if
     :: wslp[0] -> grant = 1
     :: wslp[1] -> grant = 2
     fi;
     bump_wseq(); wake_writers(n); goto released
  :: else -> skip
  fi;
  d_step { count = count - WRITER; ok = ((count & SLOW) != 0) };
#else
  atomic { nw--; wph[i] = 0; count = count - WRITER; ok = ((count & SLOW) != 0) };
#endif
  if
  :: ok ->
     ok = false;
     do
     :: d_step {
          c = count;
          if
          :: (c & WRITER) || !(c & (RWAIT|WPEND)) -> c = 0
          :: else -> skip
          fi
        };
        if
        :: c == 0 -> break               /* nothing owed, or a newcomer owes it */
        :: c & RWAIT ->
           ww = ((c & WPEND) != 0);
T7:        d_step {
             if
             :: count == c -> count = WITHSLOW((c & ~RWAIT) | RTURN); ok = true; rdue = true
             :: else -> ok = false
             fi;
             c = 0
           };
           if
           :: ok ->
              ok = false;
              atomic { next_rseq(); rdue = false }; wake_readers(n);
              /* A turn whose wake found no reader asleep is unused
               * unless a late reader is counted for it: end it now
               * (turn_unused of the C).  A reader between its T3 and its
               * sleep finds rseq moved, is admitted, finds the turn
               * gone and counts itself late for the next one.  */
#ifndef BUG_KEEP_UNUSED_TURN
              if
              :: n == 0 -> end_unused_turn(c, ok, rw, ww)
              :: else -> skip
              fi;
#endif
              n = 0;
              /* With WPEND up, the writers after the readers, as the C's
               * writer_gone: WPEND stays for them unless the wake found
               * none (it may be our own, used up).  */
              writers_turn(c, ok, rw, ww, n);
              break
           :: else -> ww = false
           fi
        :: c != 0 && !(c & RWAIT) ->     /* WPEND alone */
           c = 0;
T8:        bump_wseq(); wake_writer_turn(n); end_wpend(c, ok, rw, n); break
        fi
     od
  :: else -> skip
  fi;
released:
  skip
}

/* T11, downgrade (fl_rwsem_downgrade_raw): WRITER -> one reader in one
 * CAS, RWAIT -> RTURN as T7 (admit); the readers' wake, then with WPEND
 * the writers' turn as T7's (wake_writers of the C, which also takes a
 * used-up WPEND down); the caller then holds a read lock, and leaves by
 * up_read.  */
inline downgrade(c, ok, rw, ww, n, br, admit)
{
  do
  :: d_step {
       c = count;
       admit = ((c & RWAIT) != 0);
       ww = ((c & WPEND) != 0)
     };
T11: d_step {
       if
       :: count == c ->
          count = WITHSLOW(((c - WRITER + READER) & ~(admit -> RWAIT : 0)) | (admit -> RTURN : 0));
          ok = true; nw--; wph[i] = 0; nr++; rdue = admit
       :: else -> ok = false
       fi;
       c = 0
     };
     if
     :: ok -> ok = false; break
     :: else -> admit = false; ww = false
     fi
  od;
  if
#ifdef BUG_DOWNGRADE_NO_WAKE
  :: admit -> admit = false; rdue = false
#else
  :: admit -> admit = false; atomic { next_rseq(); rdue = false }; wake_readers(n); n = 0
#endif
  :: else -> skip
  fi;
  writers_turn(c, ok, rw, ww, n);
  atomic { nr-- };
  up_read(c, ok, rw, n, br)
}

proctype writer(byte i; bool timed)
{
  int c;
  bool ok, rw, ww, timedout, moved, polled;
#ifdef DOWNGRADE
  bool admit;
  byte br;
#endif
  byte g, n;
  byte id = W1 + i;

  do
  :: d_step {                            /* fastpath: cmpxchg 0 -> WRITER */
       wcall[i] = true;
       if
       :: count == 0 -> count = WRITER; nw++; wph[i] = 2
       :: else -> wph[i] = 1
       fi
     };
     do
     :: atomic { wph[i] == 2 -> break }
     :: atomic { wph[i] != 2 -> g = wseq; NOTE_WG(i, g) };
        CAS_FAIR_BEGIN
        c = count;
        if
        :: d_step {
             !(c & (WRITER|RTURN)) && NR(c) == 0 ->
T5:          if
             :: count == c && (c & BIASED) -> count = c | WRITER; ok = true
             :: count == c && !(c & BIASED) -> count = c | WRITER; nw++; wph[i] = 2
#ifdef BUG_WAKE_ONE
                ; grant = 0
#endif
             :: else -> skip
             fi;
             c = 0; g = 0
           };
#ifdef BIAS
           /* BIASED was in the word: revoke before entering (bias.c's
            * fl_rwsem_bias_revoke): bias off, BIASED off (fetch_and),
            * then wait for the readers the slots show.  */
           if
           :: ok ->
              bias = false;
              count = count & ~BIASED;
              (!slot[0]);
              (!slot[1]);
              d_step { ok = false; nw++; wph[i] = 2 }
           :: else -> skip
           fi
#else
           skip
#endif
        :: d_step {
             (c & RTURN) && !(c & WRITER) && NR(c) == 0 && LEASE_OK ->
             SPEND_EARLY(1)
T9:          if
             :: count == c -> count = WITHSLOW(c & ~T9_ENDS); moved = true; T9_GHOSTS(c)
             :: else -> skip
             fi;
             c = 0; g = 0; polled = false
           };
           if
           :: moved ->
              moved = false; bump_wseq(); bump_rseq(); wake_writers(n); wake_readers(n); n = 0
           :: else -> skip
           fi
        :: d_step {
             ((c & WRITER) || NR(c) > 0 || ((c & RTURN) && !LEASE_KEPT)) ->
T6:          if
             :: count == c -> count = WITHSLOW(c | WPEND); ok = true
             :: else -> g = 0
             fi;
             c = 0
           }
        fi
        CAS_FAIR_END;
        if
        :: ok ->
#ifdef BIAS
           /* Close the table before sleeping (bias off; BIASED stays):
            * after T6, so that SLOW keeps a restore from reopening it.  */
           bias = false;
#endif
           futex_wait(ok, wseq, g, wslp[i], id,
                      1,
                      timed, timedout, moved, polled);
#ifdef BUG_WAKE_ONE
           if
           :: d_step { grant == i + 1 -> grant = 0; nw++; wph[i] = 2 }
           :: else -> skip
           fi;
#endif
           if
           :: d_step { timedout -> moved = false; g = 0 };
              /* T10: my WPEND may be the only one: clear it, and
               * RWAIT unless a writer holds (as the C), wake both
               * classes (live waiters set their flag again).  */
              do
              :: d_step { c = count; if :: !(c & WPEND) -> c = 0 :: else -> skip fi };
                 if
                 :: c == 0 -> break
                 :: else ->
T10:                   cas(c, WITHSLOW(c & ~(WPEND | ((c & WRITER) -> 0 : RWAIT))), ok);
                    if :: ok -> ok = false; break :: else -> skip fi
                 fi
              od;
              bump_wseq(); bump_rseq();
              wake_writers(n); wake_readers(n);
              d_step { n = 0; timedout = false; wph[i] = 0 };
              goto next
           :: d_step { !timedout -> moved = false; g = 0 }
           fi
        :: else -> skip
        fi
     od;
#ifdef DOWNGRADE
     if
     :: i == 0 -> downgrade(c, ok, rw, ww, n, br, admit)
     :: true -> up_write(c, ok, rw, ww, n)
     fi;
#else
     up_write(c, ok, rw, ww, n);
#endif
next:
     wcall[i] = false
  od;
died:
  atomic { wph[i] = 0; c = 0; g = 0 }
}

init
{
  atomic {
#if NREADERS > 1
    run reader(0, false);
    run reader(1, READER_TIMED);
#else
    run reader(0, READER_TIMED);
#endif
    run writer(0, false)
#if NWRITERS > 1
    ; run writer(1, true)
#endif
  }
}

/* Progress of the live untimed waiters (spin -a; pan -a -f -N name).  */
ltl w1_enters { [] ((wph[0] == 1) -> <> (wph[0] == 2 || dead == W1)) }
ltl r1_enters { [] ((rph[0] == 1) -> <> (rph[0] == 2 || dead == R1)) }
