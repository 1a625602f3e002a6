/* models/ticket.pml: fl_ticketlock_t's pass-over (src/spinlock/ticket.c),
 * as a Promela model for SPIN (doc/models.md; tools/check-model runs it).
 *
 * The word is owner, PENDING and next, as in include/fastlock/spinlock.h,
 * with tickets modulo TMOD (default 4: three threads, so that a ticket
 * number comes round again).  Every step on the word is one atomic: the fastpath
 * fetch_add of a ticket, the claim, the pass-over and the unlock are CASes
 * of the whole word.  Patience is not timed: a waiter may pass over an
 * unclaimed grant at any time (the harshest case: the grantee may be
 * running, merely slow).  A waiter that sees nothing to do blocks until
 * the word changes (spinning, in the C).
 *
 * Switch BUG_PASS_NO_PENDING (negative control): the pass-over moves owner
 * on without PENDING, so the next ticket's waiter never sees its grant.
 *
 * Switch PROGRESS: the progress check, the LTL property someone_enters
 * (while a thread waits, some thread eventually holds the lock: no
 * livelock), searched under weak fairness.  Per thread it does not hold:
 * a waiter passed over while preempted may look only when its old ticket
 * number has been issued again (doc/models.md).  It needs patience to mean what the C's does: a running
 * grantee claims its grant before a waiter's patience (fl_spin_patience)
 * runs out, so a grant is passed over only while its grantee is not
 * running.  A waiter may be preempted (stalled) at the top of each look,
 * STALLS times in a run (default 2: a finite number, as a thread is not
 * preempted at every grant for ever), and a pass-over happens only while
 * no running waiter holds the granted ticket.  BUG_IMPATIENT (its negative
 * control) passes over whenever it likes, as the safety search does: the
 * threads can then pass one another's grants over in turn for ever, with
 * nobody entering.  */

#ifndef TMOD
#define TMOD 4
#endif
#define NTHREADS 3

byte owner, next;            /* tickets modulo TMOD */
bool pending;
byte holders;                /* ghost: threads inside */

#define BUSY   (next != owner)

#ifdef PROGRESS
#ifndef STALLS
#define STALLS 2
#endif
byte tk[NTHREADS];           /* each thread's ticket, while waiting */
bool waiting[NTHREADS];      /* from its ticket to its hold */
bool holding[NTHREADS];
bool stalled[NTHREADS];      /* preempted: takes no step until resumed */
byte stalls;                 /* preemptions so far */

/* A waiter's patience ran out on a grant to ticket o: no running waiter
 * holds o.  */
#ifdef BUG_IMPATIENT
#define PATIENCE_OUT(o) true
#else
#define RUNNING_GRANTEE(i, o) (waiting[i] && tk[i] == o && !stalled[i])
#define PATIENCE_OUT(o) \
  !(RUNNING_GRANTEE(0, o) || RUNNING_GRANTEE(1, o) || RUNNING_GRANTEE(2, o))
#endif
/* The ghost flags follow the thread in the steps where it takes a ticket
 * or the lock: MIRROR(e) is e in the progress check, skip otherwise.  */
#define MIRROR(e) e
/* Waiting ends as the hold begins, in the same step.  */
#define ENTERED waiting[me] = false; holding[me] = true; tk[me] = 0
#else
#define PATIENCE_OUT(o) true
#define MIRROR(e) skip
#define ENTERED skip
#endif

/* The word moved on by one: PENDING if a ticket waits for the new owner.  */
inline advance(o, n, p)
{
  o = (o + 1) % TMOD;
  p = (o != n)
}

active proctype monitor()
{
end:
  atomic { !(holders <= 1) -> assert(false) }
}

proctype thread(byte me)
{
  byte t, vo, vn, ahead;
  bool vp, mine, ok;

  do
  :: d_step {                            /* fastpath: fetch_add of next */
       t = next; next = (next + 1) % TMOD;
       if
       :: t == owner -> holders++; t = 0; MIRROR(holding[me] = true)
       :: else -> ok = true; MIRROR(tk[me] = t); MIRROR(waiting[me] = true)
       fi
     };
     do
     :: !ok -> break
     :: ok ->
#ifdef PROGRESS
        if
        :: stalls < STALLS ->            /* preempted, then resumed */
           d_step { stalls++; stalled[me] = true };
           stalled[me] = false
        :: true -> skip
        fi;
#endif
        d_step { vo = owner; vn = next; vp = pending; ahead = (t + TMOD - vo) % TMOD };
        if
        :: ahead == 0 && vp ->
           d_step {                      /* claim: CAS clears PENDING */
             if
             :: owner == vo && next == vn && pending ->
                pending = false; holders++; ok = false; ENTERED
             :: else -> skip
             fi
           }
        :: ahead != 0 && ahead >= (vn + TMOD - vo) % TMOD ->
           d_step {                      /* passed over: a new ticket */
             t = next; next = (next + 1) % TMOD;
             MIRROR(tk[me] = t);
             if
             :: t == owner -> holders++; ok = false; ENTERED
             :: else -> skip
             fi
           }
        :: !(ahead == 0 && vp) && !(ahead != 0 && ahead >= (vn + TMOD - vo) % TMOD) ->
           if
#ifdef PROGRESS
           :: skip                       /* look again: a spin never blocks,
                                          * and weak fairness needs the look
                                          * always enabled (a guard on the
                                          * word changing is disabled each
                                          * time the word comes round) */
#else
           :: d_step { owner != vo || next != vn || pending != vp -> skip }
#endif
           :: vp ->                      /* patience ran out: pass over */
              d_step {
                mine = ((vo + 1) % TMOD == t);
                if
                :: owner == vo && next == vn && pending && PATIENCE_OUT(vo) ->
#ifdef BUG_PASS_NO_PENDING
                   owner = (owner + 1) % TMOD; pending = false;
#else
                   advance(owner, next, pending);
#endif
                   if
                   :: mine -> pending = false; holders++; ok = false; ENTERED
                   :: else -> skip
                   fi
                :: else -> skip
                fi;
                mine = false
              }
           fi
        fi;
        d_step { vo = 0; vn = 0; vp = false; ahead = 0 }
     od;
     /* holding */
     atomic { holders--; t = 0; MIRROR(holding[me] = false) };
     /* unlock: the fast case (nothing pending, no ticket waiting) and the
      * slowpath's grant are both "advance" by CAS of the whole word */
     d_step { advance(owner, next, pending) }
  od
}

init
{
  atomic {
    run thread(0); run thread(1); run thread(2)
  }
}

#ifdef PROGRESS
ltl someone_enters {
  [] ((waiting[0] || waiting[1] || waiting[2])
      -> <> (holding[0] || holding[1] || holding[2]))
}
#endif
