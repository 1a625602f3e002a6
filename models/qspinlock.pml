/* models/qspinlock.pml: fl_qspinlock_t's queue (src/spinlock/qspinlock.c),
 * as a Promela model for SPIN (doc/models.md; tools/check-model runs it).
 *
 * The word is the locked byte, the pending bit and the tail, as in
 * include/fastlock/bits/spinlock.h; each thread has one queue node (one
 * level of nesting), named in the tail by the thread's number 1..N (0:
 * no queue).  A node is state (WAIT, HEAD, GONE), next and prev, as in
 * src/spinlock/qspinlock.h.  Every step on the word is one atomic: the
 * C's compare-and-swap loops re-read the word on failure, so each is one
 * atomic look-and-change of the word as it is; where the C reads the word
 * and something else before its CAS, the model does too (the CAS then
 * fails if the word moved).  Node fields are plain stores and loads, one
 * step each.
 *
 * Patience is not timed: whenever the C asks whether a waiter has not
 * shown itself for a patience (a holder granting the head role, a queued
 * waiter looking at a head that let the lock sit, a head looking at a
 * pending waiter), the model may answer either way: the harshest case.
 * The preempted thread the C guards against is a thread the model does
 * not schedule for a while, which it may do at any point.  A thread that
 * waits for a change (a link not yet made, a held word) blocks until it
 * comes (spinning, in the C).
 *
 * Properties: mutual exclusion; no invalid end state (every thread
 * blocked: a link nobody will make, a head role nobody will grant with
 * the lock free); and, asserted at every store a thread makes into
 * another thread's node, that the node is still queued (its thread has
 * neither taken the lock and left nor started over): "a node marked GONE
 * is never touched again by anyone but its own thread".
 *
 * Not modelled: nesting (a signal handler's second node), the path of a
 * thread that gets no node (it spins on the word, unqueued), trylock, and
 * the hand-over spins and yields (delays only).
 *
 * Switches:
 *   NTHREADS         2 or 3 (default 3).
 *   BUG_IGNORE_GONE  negative control: a head that took the lock does not
 *                    look again whether a holder passed it over meanwhile
 *                    (its word came back to the value it read), and
 *                    grants from a queue that is no longer its own.
 *   BUG_UNLINK_LATE  negative control: a waiter that took the lock and
 *                    leaves the middle of the queue by moving the tail
 *                    back to its predecessor does not clear the
 *                    predecessor's link first, so the link still names
 *                    a node that has left the queue.
 *   PROGRESS         the progress check: the LTL property t1_enters
 *                    (thread 1, waiting, eventually holds the lock)
 *                    under weak fairness, with patience meaning what the
 *                    C's does: a node is passed over, a head's free lock
 *                    taken by a waiter behind it, or a pending waiter's
 *                    bit taken, only while that thread is not running.
 *                    A waiter may be preempted (stalled, until a step of
 *                    its own resumes it) in each of its wait loops,
 *                    STALLS times in a run (default 2), and the head's
 *                    wait for the word to change is a look it may take
 *                    at any time (as in models/ticket.pml).  With two
 *                    threads: with three, a pending waiter's bit taken
 *                    while it was stopped may be set again by another
 *                    thread, and the first one, resumed, cannot tell it
 *                    from its own; it competes for that thread's grant,
 *                    and a schedule that has it look only while the bit
 *                    is up and the lock held starves it (doc/models.md).
 *   BUG_GONE_WHEN_FREE  negative control of PROGRESS: the head looks at
 *                    its node only when the word shows the lock free, as
 *                    the C did until 2026-12-05; passed over while
 *                    stopped, it spins while the other thread keeps the
 *                    lock by the fastpath.
 *   BUG_IMPATIENT    negative control of PROGRESS: patience untimed, as
 *                    in the safety search: a running thread can be passed
 *                    over every time.
 *
 * (The head's look at GONE before its compare-and-swap is fairness, not
 * safety: without it the model finds no error, since the look after the
 * take catches the same case.)  */

#ifndef NTHREADS
#define NTHREADS 3
#endif
#define N1 (NTHREADS + 1)

mtype = { WAIT, HEAD, GONE };

bool locked, pending;
byte tail;                       /* 0, or the node (thread) queued last */
mtype state[N1];
byte next[N1], prev[N1];
bool queued[N1];                 /* ghost: the node is its thread's, in use */
byte holders;                    /* ghost: threads inside */

#ifdef PROGRESS
#ifndef STALLS
#define STALLS 2
#endif
/* Ghosts: from the fastpath's failure to the hold; holding; preempted;
 * between setting the pending bit and taking the lock or seeing the bit
 * gone.  */
bool waiting[N1], holding[N1], stalled[N1], pends[N1];
byte stalls;                     /* preemptions so far */
/* The ghost flags follow the thread where it takes the lock (ENTERED) or
 * changes state (MIRROR(e): e in the progress check, skip otherwise).  */
#define ENTERED waiting[me] = false; holding[me] = true; pends[me] = false
#define MIRROR(e) e
/* A wait loop's extra choice: be preempted, then resumed.  */
#define STALL :: stalls < STALLS -> d_step { stalls++; stalled[me] = true }; stalled[me] = false
/* Patience ran out: x has not shown itself (GONE_QUIET), no head is
 * running, no pending waiter is running.  */
#ifdef BUG_IMPATIENT
#define GONE_QUIET(x) true
#define NO_RUNNING_HEAD true
#define NO_RUNNING_PENDER true
#else
#define GONE_QUIET(x) stalled[x]
#define RH(i) (queued[i] && state[i] == HEAD && !stalled[i])
#define RP(i) (pends[i] && !stalled[i])
#if NTHREADS == 3
#define NO_RUNNING_HEAD !(RH(1) || RH(2) || RH(3))
#define NO_RUNNING_PENDER !(RP(1) || RP(2) || RP(3))
#else
#define NO_RUNNING_HEAD !(RH(1) || RH(2))
#define NO_RUNNING_PENDER !(RP(1) || RP(2))
#endif
#endif
#else
#define ENTERED skip
#define MIRROR(e) skip
#define GONE_QUIET(x) true
#define NO_RUNNING_HEAD true
#define NO_RUNNING_PENDER true
#endif

active proctype monitor()
{
end:
  atomic { !(holders <= 1) -> assert(false) }
}

/* A store into node x by a thread other than x's.  */
#define OTHERS(x) assert(queued[x])

/* Wait for the link behind node x, then give it in a.  */
inline wait_link(wx, wa)
{
  next[wx] != 0;
  wa = next[wx]
}

/* We hold the lock; gc is to be the head.  gself: our own node in the
 * queue, 0 if none (never passed over).  fl_qspin_grant_from.  */
inline grant_from(gc, gself, ga)
{
  do
  :: OTHERS(gc); state[gc] = HEAD;
     if
     :: gc == gself -> break
     :: true -> break               /* its waiter has shown itself */
     :: gc != gself && GONE_QUIET(gc) -> /* it has not: take it out */
        if
        :: atomic { tail == gc -> tail = 0 };
           OTHERS(gc); state[gc] = GONE; break
        :: atomic { tail != gc -> skip };
           wait_link(gc, ga);
           OTHERS(gc); state[gc] = GONE;
           gc = ga; ga = 0
        fi
     fi
  od
}

/* fl_qspin_head's look at its own node, at every look at the word: taken
 * out of the queue (passed over while it was not running), it queues
 * again at once.  */
#define HEAD_GONE_CHECK \
  if \
  :: atomic { state[me] == GONE -> queued[me] = false; \
              vl = false; vp = false; vt = 0 }; \
     goto restart \
  :: else -> skip \
  fi

/* We hold the lock and are the head: leave the queue.  */
inline head_leaves(hme, ha, htmp)
{
  if
  :: atomic { tail == hme -> tail = 0 }
  :: atomic { tail != hme -> skip };
     wait_link(hme, ha);
     grant_from(ha, 0, htmp)
  fi
}

proctype thread(byte me)
{
  bool vl, vp;
  byte vt, a, h, p, c2;
  mtype st;

  do
  :: /* the inline fastpath: 0 -> locked */
     if
     :: atomic { !locked && !pending && tail == 0 -> locked = true; holders++; MIRROR(holding[me] = true) };
        goto inside
     :: atomic { !(!locked && !pending && tail == 0) -> MIRROR(waiting[me] = true) }
     fi;
restart:
     /* No pending waiter and no queue: take a free lock or become the
      * pending waiter of a held one.  */
     if
     :: atomic { !pending && tail == 0 && !locked -> locked = true; holders++; ENTERED };
        goto inside
     :: atomic { !pending && tail == 0 && locked -> pending = true; MIRROR(pends[me] = true) };
        goto pend
     :: atomic { pending || tail != 0 -> skip };
        goto queue
     fi;
pend:
     do
#ifdef PROGRESS
     STALL
#endif
     :: atomic { !pending -> MIRROR(pends[me] = false) }; goto restart   /* taken from us */
     :: atomic { pending && !locked -> pending = false; locked = true; holders++; ENTERED };
        goto inside
     od;
queue:
     skip;
     d_step {
       if
       :: tail != 0 -> state[me] = WAIT
       :: else -> state[me] = HEAD
       fi;
       prev[me] = tail; next[me] = 0; queued[me] = true;
       vt = tail; tail = me
     };
     if
     :: vt != 0 -> OTHERS(vt); next[vt] = me; vt = 0;
        /* fl_qspin_wait_in_queue */
        do
#ifdef PROGRESS
        STALL
#endif
        :: atomic { state[me] == GONE -> queued[me] = false }; goto restart
        :: state[me] == HEAD -> break
        :: atomic { state[me] == WAIT && !locked && NO_RUNNING_HEAD && (!pending || NO_RUNNING_PENDER) ->
                    /* the head let the free lock sit for a patience */
                    pending = false; locked = true; holders++; ENTERED };
           goto waiter_leaves
        od
     :: else -> skip
     fi;
     /* fl_qspin_head */
     do
#ifdef PROGRESS
     STALL
#endif
     :: d_step { vl = locked; vp = pending; vt = tail };
#ifndef BUG_GONE_WHEN_FREE
        HEAD_GONE_CHECK;
#endif
        if
        :: !vl ->     /* free, or a pending waiter let it sit a patience */
#ifdef BUG_GONE_WHEN_FREE
           HEAD_GONE_CHECK;
#endif
           if
           :: atomic { locked == vl && pending == vp && tail == vt && (!vp || NO_RUNNING_PENDER) ->
                       locked = true; pending = false; ENTERED;
                       if
                       :: tail == me -> tail = 0
                       :: else -> skip
                       fi;
                       holders++ };
              break
           :: else -> skip
           fi
#ifdef PROGRESS
        :: vl -> skip
#else
        :: vl -> locked == false || pending != vp || tail != vt || state[me] == GONE
#endif
        fi;
        vl = false; vp = false; vt = 0
     od;
     if
#ifndef BUG_IGNORE_GONE
     :: state[me] == GONE -> skip     /* passed over meanwhile: not ours */
     :: state[me] != GONE && vt == me -> skip
     :: state[me] != GONE && vt != me -> wait_link(me, a); grant_from(a, 0, c2)
#else
     :: vt == me -> skip
     :: vt != me -> wait_link(me, a); grant_from(a, 0, c2)
#endif
     fi;
     atomic { queued[me] = false; vl = false; vp = false; vt = 0; a = 0; c2 = 0 };
     goto inside;

waiter_leaves:
     /* fl_qspin_waiter_leaves: we hold the lock, queued as WAIT or since
      * made the head or passed over.  */
     st = state[me];
     if
     :: st == GONE -> goto left
     :: st == WAIT ->
        h = prev[me];
        do
        :: state[h] == WAIT -> h = prev[h]
        :: else -> break
        od;
        if
        :: true ->                    /* h has shown itself: leave it be */
        :: GONE_QUIET(h) ->           /* it has not: take it out */
           wait_link(h, a);
           OTHERS(h); state[h] = GONE;
           grant_from(a, me, c2);
           st = state[me]
        fi
     :: else -> skip
     fi;
     if
     :: st == HEAD -> head_leaves(me, a, c2); goto left
     :: else -> skip
     fi;
     /* A running head is ahead of us: unlink ourselves.  */
     p = prev[me];
#ifndef BUG_UNLINK_LATE
     OTHERS(p); next[p] = 0;
#endif
     if
     :: atomic { tail == me -> tail = p }
     :: atomic { tail != me -> skip };
        wait_link(me, a);
        OTHERS(a); prev[a] = p;
        OTHERS(p); next[p] = a
     fi;
left:
     atomic { queued[me] = false; st = WAIT; h = 0; p = 0; a = 0; c2 = 0 };

inside:
     /* holding; then fl_qspin_release clears the locked byte */
     atomic { holders--; locked = false; MIRROR(holding[me] = false) }
  od
}

#ifdef PROGRESS
ltl t1_enters { [] (waiting[1] -> <> holding[1]) }
#endif

init
{
  atomic {
    byte i = 1;
    do
    :: i <= NTHREADS -> run thread(i); i++
    :: else -> break
    od
  }
}
