/* models/ipc.pml: the IPC objects' fastpath and the region lock (the
 * protocol of src/ipc/fastpath.c, for src/ipc/sem.c, src/ipc/mutex.c,
 * src/ipc/event.c, src/ipc/wait.c, src/ipc/lock.c and
 * src/ipc/supervise.c), as a Promela model for SPIN (doc/models.md;
 * tools/check-model runs it).
 *
 * One object per instance: a semaphore (default; a = count | SLOW, b =
 * the maximum MAX, immutable, initial count INIT) or, with MUTEX, a
 * mutex (a = owner | SLOW, d = abandoned), or, with EVENT, an event (a =
 * 1 if signalled; manual-reset, or auto-reset with AUTO: src/ipc/event.c).
 * NTHREADS threads (2 or 3, default 3) each loop: acquire, hold, release
 * (an event: wait, set, reset or pulse); a thread holding nothing may
 * stop for good (so that a waiter left asleep with the object free is a
 * state where nothing can move: see the monitor).
 *
 * The fastpath is one atomic look-and-change of a (the C's CAS loops
 * re-read the word on failure): acquire and release while SLOW is clear
 * (for the semaphore, a count above 0, and room below MAX).  Anything
 * else goes slow: take the region lock L, hold the object (SLOW set by an
 * atomic or, the C's CAS loop; not logged), then the operation with
 * logged writes, the wake scan after a release or an abandonment, and the
 * unlock: checkpoint (log emptied), clear SLOW if the section held the
 * object, waiters == 0 and (mutex) d == 0, release L.  Each of these is
 * its own step.  A waiter registers (slot WAITING, waiters + 1), unlocks
 * and blocks until its slot leaves WAITING; then it takes L again and
 * confirms the grant there (GRANTED -> FREE): a grant undone by a dead
 * waker's recovery is no grant.  The wake scan grants any satisfiable
 * WAITING slot (acquires on its behalf: slot GRANTED, waiters - 1), each
 * grant followed by a checkpoint; the C takes the oldest ticket first,
 * the model any (a superset of the C's orders; no ticket numbers).
 *
 * The undo log is the C's: the logged words are v[] (a, waiters, d, the
 * wait slots and the ghost words below), and set() appends (word, old
 * value) before the write, skipping a write of the same value as
 * fl_ipc_set does.  A taker of L whose holder is dead undoes the log in
 * reverse order, then cleans up after the dead thread (its WAITING slot
 * freed with waiters - 1, its GRANTED slot freed, the mutex it owns
 * abandoned), then runs the wake scan, as recover() and fl_ipc_cleanup
 * do; the model does that in one atomic step (unlogged in effect: it ends
 * at a checkpoint and nobody dies twice).
 *
 * Death: one thread at most dies (the killer process picks it): the
 * holder of L, at any step of its section (between any two steps of
 * lock, hold, the operation, the wake scan, the unlock), and, with MUTEX,
 * a thread owning the mutex outside any section (its fastpath or slow
 * acquisition done).  A dead thread stops (an unless escape).  A waiter
 * asleep also wakes when L's holder is dead or (MUTEX) the mutex's owner
 * is dead: the C's nap ends every FL_IPC_PROBE_MS and its lock and its
 * reap_owners probe the holder and the owner.  A mutex waiter or
 * acquirer that finds the owner dead abandons it (a = SLOW, d = 1, as
 * fl_ipc_cleanup), runs the wake scan and tries again.  A thread holding
 * nothing may also clean up after a dead owner in a section of its own
 * (the server's fl_ipc_client_died, a process claiming the dead client's
 * slot): so an abandoned mutex may outlive the section that abandoned it
 * (d == 1 with nobody waiting), which the unlock must leave SLOW.
 *
 * The event (EVENT) has no fastpath and no SLOW (fl_ipc_fast_wait sends
 * it to the lock; fl_ipc_hold skips it), so every operation is a section
 * of L: event_op's set (a = 1, logged, then the wake scan), reset (a = 0)
 * and pulse, and wait_objects's wait on it (try_acquire, or register and
 * sleep as above).  The pulse is the C's since it stopped storing
 * "signalled": a = 0 (logged), then fl_ipc_wake_pulse, the wake scan with
 * the event treated as signalled by the pulser's local vp (r->pulse, not
 * in the region: undo cannot bring it back and a death takes it away);
 * an auto-reset event's grant consumes it (wait.c's take()), as taking a
 * set one resets a.  Acquiring a manual-reset event changes nothing.
 *
 * Ghost words: G(i) is, for the semaphore, the units thread i holds (set
 * with the write of a that takes them, logged with it; a dead thread's
 * units stay counted), and, for the mutex, an abandonment thread i
 * acquired and has not yet reported (the wait slot's "abandoned", the
 * acquirer's EOWNERDEAD); NAB counts abandonments, reported the
 * EOWNERDEADs returned.  own[i]: thread i returned owning the mutex.
 *
 * For the event, SETG is 1 if the last set, reset or pulse that took
 * effect (completed, or died past the checkpoint that commits its write
 * of a) was a set, or none has and the event started signalled: logged
 * with that write, so that an undone operation undoes its ghost too.
 * NACQ (AUTO) counts the acquisitions since the last set or pulse, each
 * logged with the write of a that consumes the signal.
 *
 * Properties (the monitor, in every state): semaphore: count <= MAX and
 * count + units held (live and dead threads) + GRANTED slots == INIT;
 * mutex: every live thread that owns it is the owner in a (at most one
 * owner), d => SLOW and no owner, NAB == d + the G(i) + reported (each
 * abandonment reported to exactly one acquirer: the first after it);
 * event: a <= 1, a pulse never leaves the event signalled (a == 1 =>
 * SETG, wherever the region is consistent: L free, or its holder dead
 * with nothing left to undo; inside a live section the order of its
 * writes is its own business), and (AUTO) NACQ <= 1: one acquisition per
 * signal, of a set or a pulse; all: waiters == the WAITING slots;
 * semaphore and mutex: waiters > 0 => SLOW.  When nothing can move (all
 * threads stopped, dead or asleep), no live thread may be WAITING while
 * the object is acquirable: a lost wake-up.  (A waiter asleep for good
 * on a semaphore whose units died with their holder, or on an event
 * nobody sets again, is no error, hence the end label on the sleep.)
 *
 * Simplifications: one object, so no wait-any/wait-all over several
 * (hold, try and the scan take one object); a release gives one unit; no
 * recursion (c) and the owner tag and tid are one number (a, b one
 * word); no timeouts, no cut-off (KILLED) clients, so not the fastpath's
 * re-read of its client state after its CAS; references, tickets and the
 * client slots are left out; a dead thread's clean-up is by the taker of
 * its L (a dead L holder) or by a reaper (a dead owner), not by a
 * process claiming its client slot.  The event: no READ (it changes
 * nothing) and no prev; a thread dies only as L's holder, so a dead
 * waiter's slot is freed by the recovery, never by a waker that probes
 * it (the scan's fl_ipc_wait_leave).  Sequential consistency: the C's
 * barriers (the release stores of the log, the full barrier after the
 * mutex fastpath CAS) are argued in the C.
 *
 * Switches:
 *   MUTEX            the mutex instance (default: the semaphore).
 *   EVENT            the event instance, manual-reset; it starts signalled
 *                    (a reset by the first thread then gives every state
 *                    of an unsignalled start).
 *   AUTO             (EVENT) an auto-reset event.
 *   NTHREADS         2 or 3 (default 3).
 *   INIT, MAX        the semaphore's initial count and maximum (1, 2).
 *   NO_SLOW_INVARIANT  the monitor does not check waiters > 0 => SLOW
 *                    (so that a control shows the consequence of
 *                    breaking it, not the broken invariant itself).
 *   BUG_CLEAR_WITH_WAITERS  negative control: the unlock clears SLOW
 *                    whatever waiters is; a fastpath release then skips
 *                    the wake scan (a lost wake-up).
 *   BUG_NO_HOLD      negative control (semaphore): the slow acquire
 *                    decides to wait before it holds the object (SLOW
 *                    set after its try): a fastpath release between the
 *                    try and the hold is lost (a lost wake-up).
 *   BUG_LOG_SLOW     negative control: the hold logs the word it read
 *                    before its CAS loop, so a death undoes SLOW by
 *                    storing that old word: a fastpath change between
 *                    the read and the CAS is lost (units not conserved).
 *   BUG_RECOVER_NO_SCAN  negative control: the taker of a dead holder's
 *                    L undoes its log and cleans up after it but runs no
 *                    wake scan: a releaser that died after its release
 *                    was checkpointed (the wake scan's first checkpoint)
 *                    and before its grants leaves a waiter asleep with
 *                    the unit free (the C's recover() once scanned only
 *                    through fl_ipc_cleanup; it now always scans).
 *   BUG_CLEAR_ABANDONED  negative control (MUTEX): the unlock clears SLOW
 *                    with d == 1, so a fastpath acquire takes an
 *                    abandoned mutex without EOWNERDEAD.
 *   BUG_PULSE_STORES negative control (EVENT): the pulse before its fix:
 *                    a = 1 (logged), the wake scan (a checkpoint, then
 *                    one after each grant), a = 0; a pulser that dies
 *                    past a checkpoint and before the reset leaves the
 *                    event set for good.  */

#ifndef NTHREADS
#define NTHREADS 3
#endif
#ifndef INIT
#define INIT 1
#endif
#ifndef MAX
#define MAX 2
#endif

#define SLOW 8                   /* bit 31 in the C */
#define LOGMAX 8

/* The logged words.  */
#define A 0                      /* a: count or owner, | SLOW; event: 0, 1 */
#define WAITERS 1                /* waiters(o) */
#ifdef EVENT
#define SETG 2                   /* ghost: the last operation was a set */
#define NACQ 3                   /* ghost (AUTO): acquisitions per signal */
#else
#define D 2                      /* the mutex's abandoned flag */
#define NAB 3                    /* ghost: abandonments */
#endif
#define SLOT(i) v[3 + (i)]       /* thread i's wait slot, i = 1..3 */
#define G(i) v[6 + (i)]          /* ghost: units held / EOWNERDEAD owed */
#define NV 10

#define FREE 0
#define WAITING 1
#define GRANTED 2

byte v[NV];
#define a v[A]
#define VAL (a & (SLOW - 1))     /* count, or the owner thread (0: none) */
#define SLOWSET ((a & SLOW) != 0)

byte logid[LOGMAX], logold[LOGMAX];
byte logn;

byte L;                          /* the region lock: 0, or the holder */
bool dead[4];                    /* dead[0]: nobody, never dead */
bool own[4];                     /* ghost (MUTEX) */
byte reported;                   /* ghost (MUTEX) */

#if defined(EVENT)
#define CANACQ (a != 0)
/* can_take: the pulser's virtual signal too (vp: a local of the thread
 * that runs the scan; a taker of L has none, as r->pulse is 0 there).  */
#define CANTAKE (CANACQ || vp)
#elif defined(MUTEX)
#define CANACQ (VAL == 0)
#define CANTAKE CANACQ
#else
#define CANACQ (VAL > 0)
#define CANTAKE CANACQ
#endif

/* A logged write (fl_ipc_set).  */
inline set(id, val)
{
  if
  :: v[id] != (val) ->
     assert(logn < LOGMAX);
     logid[logn] = id; logold[logn] = v[id]; logn++;
     v[id] = val
  :: else -> skip
  fi
}

/* A checkpoint: the log emptied (its stale entries too, for the state
 * count).  */
inline checkpoint()
{
  do
  :: logn > 0 -> logn--; logid[logn] = 0; logold[logn] = 0
  :: else -> break
  od;
  skip
}

/* The recovery: the dead holder's log undone, last first.  */
inline undo()
{
  do
  :: logn > 0 -> logn--; v[logid[logn]] = logold[logn];
     logid[logn] = 0; logold[logn] = 0
  :: else -> break
  od
}

/* Acquire for thread w (the wake scan) or for ourselves (w == me).  */
#if defined(EVENT) && defined(AUTO)
/* take(): the pulse's virtual signal consumed, and fl_ipc_acquire's
 * a = 0 (a no-op after a pulse, whose a is 0 already).  A set or a pulse
 * starts a new signal: NACQ = 0, with its write of a.  */
#define NEW_SIGNAL set(NACQ, 0)
inline take(w)
{
  assert(CANTAKE);
  vp = false;
  set(A, 0); set(NACQ, v[NACQ] + 1)
}
#elif defined(EVENT)
/* A manual-reset event stays signalled: fl_ipc_acquire changes nothing
 * (and NACQ is not kept).  */
#define NEW_SIGNAL skip
inline take(w)
{
  assert(CANTAKE)
}
#elif defined(MUTEX)
inline take(w)
{
  assert(SLOWSET && VAL == 0);
  set(6 + w, v[D]); set(D, 0); set(A, SLOW | w)
}
#else
inline take(w)
{
  assert(SLOWSET && VAL > 0);
  set(A, a - 1)
}
#endif

inline grant(w)
{
  take(w);
  set(3 + w, GRANTED);
  set(WAITERS, v[WAITERS] - 1);
#ifndef EVENT
  hd = true                      /* the recovery's scan never called hold() */
#endif
}

/* The wake scan: the caller's own operation done, a checkpoint; then
 * each grant, and a checkpoint after it.  */
inline wake_scan()
{
  d_step { checkpoint() };
  do
  :: atomic { SLOT(1) == WAITING && CANTAKE -> grant(1) }; d_step { checkpoint() }
  :: atomic { SLOT(2) == WAITING && CANTAKE -> grant(2) }; d_step { checkpoint() }
  :: atomic { SLOT(3) == WAITING && CANTAKE -> grant(3) }; d_step { checkpoint() }
  :: else -> break
  od
}

/* The hold: SLOW set by a CAS loop, not logged.  */
inline hold()
{
#ifdef BUG_LOG_SLOW
  d_step { logid[logn] = A; logold[logn] = a; logn++ };
#endif
  atomic { a = a | SLOW; hd = true }
}

/* Abandon the mutex (fl_ipc_cleanup on its dead owner).  */
inline abandon()
{
  set(D, 1); set(NAB, v[NAB] + 1); set(A, SLOW)
}

/* Take L; a dead holder's section is undone, the dead thread cleaned up
 * after, and the wake scan run, in one step.  */
inline lock()
{
  atomic {
    if
    :: L == 0 -> L = me
    :: dead[L] ->
       x = L; L = me;
       undo();
       if
       :: SLOT(x) == WAITING -> set(3 + x, FREE); set(WAITERS, v[WAITERS] - 1)
       :: SLOT(x) == GRANTED -> set(3 + x, FREE);
#ifndef MUTEX
          set(6 + x, G(x) + 1)    /* its unit went with it */
#endif
       :: else -> skip
       fi;
       checkpoint();
#ifdef MUTEX
       if
       :: VAL == x -> abandon(); checkpoint(); hd = true
       :: else -> skip
       fi;
#endif
       do
#ifndef BUG_RECOVER_NO_SCAN
       :: SLOT(1) == WAITING && CANTAKE -> grant(1); checkpoint()
       :: SLOT(2) == WAITING && CANTAKE -> grant(2); checkpoint()
       :: SLOT(3) == WAITING && CANTAKE -> grant(3); checkpoint()
#endif
       :: else -> break
       od;
       x = 0
    fi
  }
}

/* Unlock: checkpoint, clear SLOW, release L (and, ret, return from an
 * acquisition: the mutex's owner, EOWNERDEAD reported).  An event is
 * never held, so let_go never sees it: no SLOW to clear.  */
inline unlock(ret)
{
  d_step { checkpoint() };
#ifndef EVENT
  atomic {
    if
#if defined(BUG_CLEAR_WITH_WAITERS)
    :: hd -> a = a & ~SLOW
#elif defined(BUG_CLEAR_ABANDONED)
    :: hd && v[WAITERS] == 0 -> a = a & ~SLOW
#else
    :: hd && v[WAITERS] == 0 && v[D] == 0 -> a = a & ~SLOW
#endif
    :: else -> skip
    fi;
    hd = false
  };
#endif
  atomic {
    L = 0;
#ifdef MUTEX
    if
    :: ret -> own[me] = true;
       if
       :: G(me) -> reported++; G(me) = 0
       :: else -> skip
       fi
    :: else -> skip
    fi
#endif
  }
}

#define SUM(x) (x(1) + x(2) + x(3))
#define GR(i) (SLOT(i) == GRANTED)
#define WT(i) (SLOT(i) == WAITING)
#define LIVE_WT(i) (WT(i) && !dead[i])
#define OWN_OK(i) (!own[i] || dead[i] || VAL == i)

#if defined(NO_SLOW_INVARIANT) || defined(EVENT)
#define INV_SLOW true
#else
#define INV_SLOW (v[WAITERS] == 0 || SLOWSET)
#endif

#if defined(EVENT)
/* The region consistent: no live section, nothing left to undo.  */
#define AT_REST (L == 0 || (dead[L] && logn == 0))
#define INV1 (a <= 1)
#define INV2 (!AT_REST || a == 0 || v[SETG])
#ifdef AUTO
#define INV3 (v[NACQ] <= 1)
#else
#define INV3 true
#endif
#elif defined(MUTEX)
#define INV1 (OWN_OK(1) && OWN_OK(2) && OWN_OK(3))
#define INV2 (v[D] == 0 || (SLOWSET && VAL == 0))
#define INV3 (v[NAB] == v[D] + SUM(G) + reported)
#else
#define INV1 (VAL <= MAX)
#define INV2 (VAL + SUM(G) + SUM(GR) == INIT)
#define INV3 true
#endif
#define INV4 (v[WAITERS] == SUM(WT))
#define LOST ((LIVE_WT(1) || LIVE_WT(2) || LIVE_WT(3)) && CANACQ)

proctype monitor()
{
end:
  if
  :: atomic { !(INV1 && INV2 && INV3 && INV4 && INV_SLOW) ->
       assert(INV1); assert(INV2); assert(INV3); assert(INV4); assert(INV_SLOW) }
  :: timeout -> assert(!LOST)
  fi
}

/* One death at most: L's holder inside its section, or (MUTEX) the
 * mutex's owner outside any section.  */
proctype killer()
{
end:
  if
  :: atomic { L != 0 && !dead[L] -> dead[L] = true }
#ifdef MUTEX
  :: atomic { VAL != 0 && own[VAL] && !dead[VAL] && L != VAL -> dead[VAL] = true }
#endif
  fi
}

proctype thread(byte me)
{
  byte x;                        /* the dead holder, in lock() */
#ifdef EVENT
  bool vp;                       /* the pulse's virtual signal (r->pulse) */
#else
  bool hd;                       /* this section holds the object */
#endif
#ifdef BUG_NO_HOLD
  bool nohold;                   /* decided to wait before its hold */
#define NOHOLD nohold
#define NOHOLD_CLEAR nohold = false
#else
#define NOHOLD false
#define NOHOLD_CLEAR skip
#endif

  {
  do
#ifdef EVENT
  :: /* wait_objects on the event alone: no fastpath (fl_ipc_fast_wait
      * returns FL_IPC_SLOWPATH), nothing to hold; try_acquire, else a
      * wait slot, then nap and look again under L until GRANTED.  */
     lock();
     if
     :: CANTAKE -> d_step { take(me) }; unlock(false)
     :: else ->
        d_step { set(3 + me, WAITING); set(WAITERS, v[WAITERS] + 1) };
        unlock(false);
end_wait: do
        :: atomic { SLOT(me) != WAITING || dead[L] -> skip };
           lock();
           if
           :: SLOT(me) == GRANTED ->  /* finish */
              d_step { set(3 + me, FREE) }; unlock(false); break
           :: else -> unlock(false)
           fi
        od
     fi
  :: /* event_op SET: a = 1, the wake scan */
     lock();
     d_step { set(A, 1); set(SETG, 1); NEW_SIGNAL };
     wake_scan();
     unlock(false)
  :: /* event_op RESET */
     lock();
     d_step { set(A, 0); set(SETG, 0) };
     unlock(false)
  :: /* event_op PULSE */
     lock();
#ifdef BUG_PULSE_STORES
     d_step { set(A, 1); set(SETG, 0); NEW_SIGNAL };
     wake_scan();
     atomic { set(A, 0) };        /* atomic: spin refuses the scan's break
                                   * into a d_step opening with set()'s if */
#else
     /* a = 0 (logged), then fl_ipc_wake_pulse: r->pulse set (local, so
      * in the same step), the scan, r->pulse cleared.  */
     d_step { set(A, 0); set(SETG, 0); NEW_SIGNAL; vp = true };
     wake_scan();
     vp = false;
#endif
     unlock(false)
#else
  :: /* acquire */
#ifdef MUTEX
     if
     :: atomic { a == 0 -> a = me; own[me] = true }
     :: atomic { a != 0 -> skip };
        lock(); hold();
        do
        :: VAL == 0 -> d_step { take(me) }; unlock(true); break
        :: VAL != 0 && dead[VAL] -> d_step { abandon() }; wake_scan()
        :: VAL != 0 && !dead[VAL] ->
           d_step { set(3 + me, WAITING); set(WAITERS, v[WAITERS] + 1) };
           unlock(false);
end_wait:  do
           :: atomic { SLOT(me) != WAITING || dead[L] || dead[VAL] -> skip };
              lock();
              if
              :: SLOT(me) == WAITING && VAL != 0 && dead[VAL] ->
                 hold(); d_step { abandon() }; wake_scan()
              :: else -> skip
              fi;
              if
              :: SLOT(me) == GRANTED -> d_step { set(3 + me, FREE) };
                 unlock(true); break
              :: else -> unlock(false)
              fi
           od;
           break
        od
     fi;
     /* holding; release */
     if
     :: atomic { a == me -> a = 0; own[me] = false }
     :: atomic { a != me -> own[me] = false };
        lock(); hold();
        assert(VAL == me);
        d_step { set(A, SLOW) };
        wake_scan();
        unlock(false)
     fi
#else
     if
     :: atomic { !SLOWSET && VAL > 0 -> a--; G(me) = 1 }
     :: atomic { !(!SLOWSET && VAL > 0) -> skip };
        lock();
#ifdef BUG_NO_HOLD
        if
        :: atomic { VAL > 0 -> skip }; hold()
        :: atomic { VAL == 0 -> nohold = true }; hold()
        fi;
#else
        hold();
#endif
        if
        :: !NOHOLD && VAL > 0 -> d_step { take(me); set(6 + me, 1) }; unlock(false)
        :: else ->
           d_step { set(3 + me, WAITING); set(WAITERS, v[WAITERS] + 1); NOHOLD_CLEAR };
           unlock(false);
end_wait:  do
           :: atomic { SLOT(me) != WAITING || dead[L] -> skip };
              lock();
              if
              :: SLOT(me) == GRANTED ->
                 d_step { set(3 + me, FREE); set(6 + me, 1) };
                 unlock(false); break
              :: else -> unlock(false)
              fi
           od
        fi
     fi;
     /* holding; release one unit */
     if
     :: atomic { !SLOWSET && VAL < MAX -> a++; G(me) = 0 }
     :: atomic { !(!SLOWSET && VAL < MAX) -> skip };
        lock(); hold();
        assert(VAL < MAX);       /* else EOVERFLOW: not with INIT <= MAX */
        d_step { set(A, a + 1); set(6 + me, 0) };
        wake_scan();
        unlock(false)
     fi
#endif
#endif
#ifdef MUTEX
  :: /* a clean-up by a thread holding nothing (the server's
      * fl_ipc_client_died, a process claiming the dead client's slot) */
     atomic { VAL != 0 && dead[VAL] -> skip };
     lock();
     if
     :: VAL != 0 && dead[VAL] -> hold(); d_step { abandon() }; wake_scan()
     :: else -> skip
     fi;
     unlock(false)
#endif
  :: break                       /* holding nothing: stop */
  od
  } unless { dead[me] }          /* died: stops where it is */
}

init
{
  atomic {
#if defined(EVENT)
    a = 1; v[SETG] = 1;
#elif !defined(MUTEX)
    a = INIT;
#endif
    run monitor(); run killer();
    run thread(1); run thread(2);
    if
    :: NTHREADS > 2 -> run thread(3)
    :: else -> skip
    fi
  }
}
