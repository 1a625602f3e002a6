/* models/ticket.pml: fl_ticketlock_t's pass-over (src/spinlock/ticket.c),
 * as a Promela model for SPIN (doc/models.md; tools/check-model runs it).
 *
 * The word is owner, PENDING and next, as in include/fastlock/spinlock.h,
 * with tickets modulo TMOD (4: three threads, so that a ticket number
 * comes round again).  Every step on the word is one atomic: the fastpath
 * fetch_add of a ticket, the claim, the pass-over and the unlock are CASes
 * of the whole word.  Patience is not timed: a waiter may pass over an
 * unclaimed grant at any time (the harshest case: the grantee may be
 * running, merely slow).  A waiter that sees nothing to do blocks until
 * the word changes (spinning, in the C).
 *
 * Switch BUG_PASS_NO_PENDING (negative control): the pass-over moves owner
 * on without PENDING, so the next ticket's waiter never sees its grant.  */

#define TMOD 4
#define NTHREADS 3

byte owner, next;            /* tickets modulo TMOD */
bool pending;
byte holders;                /* ghost: threads inside */

#define BUSY   (next != owner)

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

proctype thread()
{
  byte t, vo, vn, ahead;
  bool vp, mine, ok;

  do
  :: d_step {                            /* fastpath: fetch_add of next */
       t = next; next = (next + 1) % TMOD;
       if
       :: t == owner -> holders++; t = 0
       :: else -> ok = true
       fi
     };
     do
     :: !ok -> break
     :: ok ->
        d_step { vo = owner; vn = next; vp = pending; ahead = (t + TMOD - vo) % TMOD };
        if
        :: ahead == 0 && vp ->
           d_step {                      /* claim: CAS clears PENDING */
             if
             :: owner == vo && next == vn && pending ->
                pending = false; holders++; ok = false
             :: else -> skip
             fi
           }
        :: ahead != 0 && ahead >= (vn + TMOD - vo) % TMOD ->
           d_step {                      /* passed over: a new ticket */
             t = next; next = (next + 1) % TMOD;
             if
             :: t == owner -> holders++; ok = false
             :: else -> skip
             fi
           }
        :: !(ahead == 0 && vp) && !(ahead != 0 && ahead >= (vn + TMOD - vo) % TMOD) ->
           if
           :: d_step { owner != vo || next != vn || pending != vp -> skip }
           :: vp ->                      /* patience ran out: pass over */
              d_step {
                mine = ((vo + 1) % TMOD == t);
                if
                :: owner == vo && next == vn && pending ->
#ifdef BUG_PASS_NO_PENDING
                   owner = (owner + 1) % TMOD; pending = false;
#else
                   advance(owner, next, pending);
#endif
                   if
                   :: mine -> pending = false; holders++; ok = false
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
     atomic { holders--; t = 0 };
     /* unlock: the fast case (nothing pending, no ticket waiting) and the
      * slowpath's grant are both "advance" by CAS of the whole word */
     d_step { advance(owner, next, pending) }
  od
}

init
{
  atomic {
    run thread(); run thread(); run thread()
  }
}
