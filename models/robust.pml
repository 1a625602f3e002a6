/* models/robust.pml: the owner word of a process-shared fl_rwsem (the
 * protocol of src/rwsem/robust.c: states O0..O4, transitions C1..C4), as
 * a Promela model for SPIN (doc/models.md; tools/check-model runs it).
 *
 * What it abstracts: the count word is W, its WRITER bit, and nothing
 * else (models/rwsem.pml checks the count word's protocol; here T5 is
 * "W 0 -> 1", which may fail, and the count word's write release is
 * "W = 0").  The owner word is one byte, a kind (NONE, PEND, HELD, REL,
 * ROB) and a thread.  One PID namespace (owner_ns and NS_MIXED are
 * argued in robust.c, not modelled).  A probe is exact: dead == x (a TID
 * reused before the probe is not modelled).  Each load, store and CAS of
 * the C is one step here; a CAS is a d_step that compares and sets.
 *
 * Processes: NTHREADS threads (3), each looping for ever: acquire (C1:
 * CAS NONE -> PEND, T5, then HELD, or NONE if T5 failed; or take over by
 * C3 or C4), hold, release (C2: REL, W = 0, NONE).  A waiter that finds
 * the owner word not NONE looks again (the probe after a poll, in the C)
 * and takes over the state of a dead thread (C3: HELD; C4: PEND, REL,
 * ROB).  The killer kills one thread at most, at any step (an unless
 * escape): the thread stops where it is, holding whatever it held.
 *
 * Safety (the monitor, in every state): J1, at most one live thread is
 * inside, it is the one HELD names, and W is up; J2, W up means the
 * owner word is not NONE; and (asserted where a thread stores over its
 * own state) J3, nobody else moved it.  Progress (PROGRESS, LTL under weak fairness):
 * while a live thread waits, some live thread eventually gets in (no
 * death wedges the lock).
 *
 * Negative controls:
 *   BUG_NO_PEND      T5 first, then NONE -> HELD (the C until
 *                    2026-12-07): a writer killed between the two leaves
 *                    W up and NONE for ever (J2, and progress).
 *   BUG_CLEAR_FIRST  the release clears the owner word before W goes (the
 *                    C's order until 2026-12-07): killed between the two,
 *                    W is up with NONE (J2, and progress).
 *   BUG_NO_REL       the release lets W go while HELD still names it,
 *                    then clears the owner word: killed between the two,
 *                    its HELD is taken over (C3) with W down, and a
 *                    second writer comes in beside the taker (J1).
 *   BUG_CLAIM_REL    C1 claims REL(x) as it claims NONE: its T5 fails
 *                    on x's W, and its unclaim leaves NONE beside x's W
 *                    (J2; killed there, x wedges the lock: progress).
 *   BUG_FALSE_DEATH  a probe may take a live thread for dead (what
 *                    NS_MIXED prevents): its state is taken from under it
 *                    (J3, J1).  */

#define NTHREADS 3

#define NONE 0
#define PEND 1
#define HELD 2
#define REL  3
#define ROB  4
#define OW(k, t)  ((k) * 4 + (t))
#define KIND(o)   ((o) / 4)
#define WHO(o)    ((o) % 4)

bit W;                       /* the count word's WRITER */
byte owner;                  /* OW(kind, thread), threads 1..NTHREADS */
byte dead;                   /* the thread killed, 0 if none */
bool inside[NTHREADS + 1];   /* ghost: in the critical section */
bool waiting[NTHREADS + 1];  /* ghost: in acquire */

#define LIVE_IN(i)   (inside[i] && dead != (i))
#define LIVE_WAIT(i) (waiting[i] && dead != (i))

/* J3: a thread's own moves are stores; nobody else moved its state k.
 * Not checked in the negative controls, which must break J1, J2 or
 * progress.  */
#if defined(BUG_NO_PEND) || defined(BUG_CLEAR_FIRST) || defined(BUG_NO_REL) \
    || defined(BUG_CLAIM_REL)
#define MINE(k) skip
#else
#define MINE(k) assert(owner == OW(k, me))
#endif

/* A CAS of the owner word from o to n; ok tells whether it took.  */
#define CAS(o, n, ok) d_step { if :: owner == (o) -> owner = (n); ok = true \
                                  :: else -> ok = false fi }

proctype monitor()
{
  /* J1, J2 in every state (each assertion is enabled in each).  */
  assert((LIVE_IN(1) + LIVE_IN(2) + LIVE_IN(3)) <= 1);
  assert(!LIVE_IN(1) || (W && owner == OW(HELD, 1)));
  assert(!LIVE_IN(2) || (W && owner == OW(HELD, 2)));
  assert(!LIVE_IN(3) || (W && owner == OW(HELD, 3)));
  assert(!W || owner != NONE)
}

proctype killer()
{
  if
  :: dead = 1
  :: dead = 2
  :: dead = 3
  :: skip                    /* nobody dies */
  fi
}

/* C4's end, after our CAS to ROB(me): keep the lock if W is up.  */
inline settle()
{
  w = W;
  if
  :: w -> MINE(ROB); owner = OW(HELD, me); got = true
  :: else -> MINE(ROB); owner = NONE; got = false
  fi
}

/* The probe: exact, but in BUG_FALSE_DEATH, which takes any thread for
 * dead (a thread probed from the wrong namespace: robust.c, J3).  */
#ifdef BUG_FALSE_DEATH
#define PROBED_DEAD(o) (WHO(o) != me)
#else
#define PROBED_DEAD(o) (dead == WHO(o))
#endif

/* A waiter's look: take over the state of a dead thread (C3, C4).  */
inline look()
{
  o = owner;
  if
  :: KIND(o) == HELD && PROBED_DEAD(o) ->           /* C3 */
     CAS(o, OW(HELD, me), got)
  :: KIND(o) != NONE && KIND(o) != HELD && PROBED_DEAD(o) ->
     CAS(o, OW(ROB, me), ok);                        /* C4 */
     if
     :: ok -> settle()
     :: else -> got = false
     fi
  :: else -> got = false
  fi
}

proctype thread(byte me)
{
  byte o;
  bool ok, w, got;

  {
  do
  :: waiting[me] = true;
     do
#ifdef BUG_NO_PEND
     :: d_step { W == 0 -> W = 1 };                  /* T5, then */
        owner = OW(HELD, me); break
     :: W == 1 -> look();
        if
        :: got -> break
        :: else -> skip
        fi
#else
     :: o = owner;                                   /* C1 */
        if
#ifdef BUG_CLAIM_REL
        :: KIND(o) == NONE || KIND(o) == REL ->
#else
        :: KIND(o) == NONE ->
#endif
           CAS(o, OW(PEND, me), ok);
           if
           :: ok ->
              d_step { if :: W == 0 -> W = 1; w = 1 :: else -> w = 0 fi };  /* T5 */
              if
              :: w -> MINE(PEND); owner = OW(HELD, me); break
              :: else -> MINE(PEND); owner = NONE
              fi
           :: else -> skip
           fi
        :: else -> look();                          /* wait, and probe */
           if
           :: got -> break
           :: else -> skip
           fi
        fi
#endif
     od;
     atomic { waiting[me] = false; inside[me] = true; o = 0; w = 0; ok = false; got = false };
     inside[me] = false;
     /* C2 */
#if defined(BUG_CLEAR_FIRST)
     owner = NONE;
     W = 0;
#elif defined(BUG_NO_REL)
     W = 0;
     owner = NONE;
#else
     MINE(HELD); owner = OW(REL, me);
     W = 0;
     MINE(REL); owner = NONE;
#endif
     ok = false
  od
  } unless { dead == me }
}

init
{
  atomic {
#ifndef PROGRESS
    run monitor();
#endif
    run killer();
    run thread(1); run thread(2); run thread(3)
  }
}

#ifdef PROGRESS
ltl someone_enters {
  [] ((LIVE_WAIT(1) || LIVE_WAIT(2) || LIVE_WAIT(3))
      -> <> (LIVE_IN(1) || LIVE_IN(2) || LIVE_IN(3)))
}
#endif
