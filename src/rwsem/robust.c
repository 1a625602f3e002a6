/* src/rwsem/robust.c: the owner word of a process-shared lock
 * (FL_PSHARED), and dead write holders (FL_ROBUST).
 *
 * The count word says whether a writer is inside (WRITER, rwsem.c); the
 * owner word says who.  The two cannot change in one atomic.  Until
 * 2026-12-07 a writer took WRITER (T5) and then stored its TID in owner,
 * and cleared owner before giving WRITER up: a writer killed between the
 * two left WRITER up and owner empty, a lock write-locked by nobody
 * anyone could find (fastlock-stress rwsem --kill-ms found one about
 * once in 30,000 to 45,000 kills).  Now the owner word of a process-shared lock is
 * a small state machine of its own in which every state a dead thread
 * can leave behind names that thread, and says whose WRITER is up.
 * models/robust.pml checks it (doc/models.md).
 *
 * THE OWNER WORD (s->owner, FL_PSHARED)
 *   bits  0..21  TID       the thread the state is about (PID_MAX_LIMIT
 *                          is 2^22)
 *   bits 22..27  STAMP     FL_ROBUST: which thread of that TID (STAMPS);
 *                          0 where the kernel cannot say
 *   bit  28      PEND      the thread is about to take WRITER (T5)
 *   bit  29      ROB       the thread is taking the lock over
 *   bit  30      OWNER_SLOW  always set: up_write comes to the library
 *   bit  31      REL       the thread is releasing the lock
 *
 * STATES (t: a thread; W: the count word's WRITER)
 *   O0 NONE       0: W is down (or the lock is lost: ENOTRECOVERABLE)
 *   O1 PEND(t)    t claimed the right to try T5: W is down, or t's
 *   O2 HELD(t)    t holds the lock for writing: W is t's; owner_ns is t's
 *                 PID namespace (unless NS_MIXED, below)
 *   O3 REL(t)     t has left its critical section and is releasing: W is
 *                 t's, or already down
 *   O4 ROB(t)     t is taking over from a dead thread: W is the dead
 *                 one's, or down
 *
 * TRANSITIONS (a CAS where threads compete for the word; a thread's
 * moves from its own state are stores, J3)
 *   C1 claim      a writer that finds the count word free (T5 possible):
 *                 CAS NONE -> PEND(me) (with owner_ns recorded if it is
 *                 not ours: NAMESPACES); then T5; then HELD(me), inside.
 *                 If T5 fails, NONE, and it waits as the count word
 *                 says.  Facing PEND, REL or ROB of a live thread it
 *                 waits for that thread (a few instructions, unless it is
 *                 off the CPU), probing it after each poll
 *   C2 leave      the holder: REL(me); the count word's release (T7/T8
 *                 or T11); NONE; then the wake-ups
 *   C3 dead holder  (FL_ROBUST) CAS HELD(x), x dead -> HELD(me): the lock
 *                 is ours with EOWNERDEAD (T12 in rwsem.c)
 *   C4 dead in passing  (FL_ROBUST) CAS PEND(x), REL(x) or ROB(x), x dead
 *                 -> ROB(me); then, if W is up (the dead one's), HELD(me):
 *                 the lock is ours, and nobody died inside it (a dead
 *                 claimant had not got inside; a dead releaser's critical
 *                 section was over), so no EOWNERDEAD; if W is down, NONE
 *
 * INVARIANTS (models/robust.pml checks J1-J3, in one namespace)
 *   J1 at most one live thread is inside for writing, the one HELD
 *      names, and W is up
 *   J2 W is up => the owner word is not NONE (but on a lost lock), and W
 *      is the named thread's, or (ROB) the dead one's it took over
 *   J3 only the named thread moves the word on from its own state, but
 *      C3 and C4, and only when that thread is dead: a probe never finds
 *      a live thread dead.  While NS_MIXED is clear every thread named
 *      in the word is of owner_ns's namespace (J4, and a claimant of
 *      another sets NS_MIXED before its claim), and a prober probes only
 *      from that namespace, where a live thread's TID exists and its
 *      stamp is the one it recorded.  (A dead thread's TID taken by a
 *      new thread makes a dead one look alive, unless their stamps
 *      differ: STAMPS; never the reverse.)  So a thread's moves from its
 *      own state are plain stores
 *   J4 PEND(t), HELD(t), REL(t) or ROB(t) => owner_ns is t's namespace,
 *      or NS_MIXED is set
 *
 * Why no death wedges the lock: every state but NONE names a thread and
 * says whose W is up; a dead thread's state is taken over by C3 or C4
 * about one poll after somebody waits, and C4 ends it with W down or
 * the lock held by a live thread.  C1 waits for NONE (not REL): a claim
 * made while REL(x) is up could meet x's W, fail its T5, and leave NONE
 * beside that W (J2), which a death of x there would leave for good.
 *
 * NAMESPACES.  A TID is unique within its PID namespace only: two
 * processes that are each PID 1 of their own namespace, sharing a lock
 * through /dev/shm, have the same TID.  So a holder is named by its TID
 * and by its PID namespace, owner_ns (the inode number of
 * /proc/self/ns/pid, unique among the namespaces that exist at once; 0
 * where /proc is not mounted, and then namespaces are not told apart),
 * read once per process and again in the child of a fork.  owner_ns and
 * owner cannot change together, and a prober that read the TID of one
 * namespace beside the owner_ns of another would probe the wrong thread.
 * So owner_ns starts as the namespace of the process that initialised
 * the lock, and only a claimant changes it (in PEND, before it is
 * HELD): one of another namespace first sets NS_MIXED in the mode word,
 * for good; a prober probes only while NS_MIXED is clear and owner_ns is
 * its own namespace, and looks at NS_MIXED again after its probe.  A
 * lock that processes of two namespaces have claimed has no probing: a
 * dead holder stays undetected there (documented), as it always was for
 * a holder in another namespace.  (A process without /proc counts as
 * namespace 0, another namespace than that of one with it.)
 *
 * PROBES (FL_ROBUST).  The kernel's robust list is not used: it is
 * glibc's (one list head per thread, set_robust_list), and its entries
 * must be futex words with the owner's TID in their low 30 bits, which
 * the count word is not.  Instead a waiter that has waited one
 * FL_PSHARED poll (50 ms) asks whether the thread the owner word names
 * still exists: kill(tid, 0) failing with ESRCH, which the kernel
 * answers for any thread ID of the caller's PID namespace.  So a death
 * is found about one poll after someone starts to wait, and costs the
 * fastpaths nothing (a process-shared lock's write fastpath already
 * fails into the library).  A TID reused by a new thread before the
 * probe would make the dead thread look alive: STAMPS tell the two
 * apart where the kernel can.
 * fl_rwsem_consistent then marks the data repaired, and an up_write
 * without it leaves the lock ENOTRECOVERABLE for good.
 *
 * STAMPS (FL_ROBUST).  A TID is reused once the kernel's PID counter
 * comes round (pid_max: 32768 unless raised, 4194304 with systemd), and
 * a lock nobody waits for is not probed: a holder that died an hour ago
 * may have a live successor of its TID by the time someone waits.  So a
 * holder's id carries a stamp of the thread itself: the inode number of
 * a pidfd for it (pidfd_open with PIDFD_THREAD; since Linux 6.9 that is
 * the kernel's identity of the thread: on a 64-bit kernel never reused
 * while the system runs, on a 32-bit one after 2^32 threads; the same
 * whichever process or namespace asks), folded
 * into 1..63.  A prober that finds the TID alive opens a pidfd for it
 * in turn: a different stamp means the thread it names is dead.  The
 * stamp is read, never computed from a clock (/proc's start times move
 * with the reader's time namespace), so a live thread's stamp is the
 * one it recorded (J3).  Where pidfd_open refuses (an older kernel; a
 * QEMU whose guest's O_EXCL is not the host's, as on MIPS) the stamp
 * is 0, and a 0 on either side decides nothing: the dead thread looks
 * alive, as before.  Six bits tell a reused TID from the dead thread
 * 62 times in 63 (five, until 2026-12-07: 30 in 31).  Each thread opens
 * its own pidfd once (its first write lock of an FL_ROBUST lock, and
 * again in the child of a fork).
 *
 * DEAD READ HOLDERS.  Read locks are counted in the count word, not
 * named (naming them would cost the read fastpath its single atomic).  A
 * process that dies holding n read locks leaves n in the count; a
 * supervisor that knows it (waitpid, a pidfd) calls fl_rwsem_reader_died
 * n times.  */
#include "config.h"

#include "rwsem/rwsem-internal.h"

#include "sys/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define TID FL_RWSEM_OWNER_TID
#define PEND FL_RWSEM_OWNER_PEND
#define ROB FL_RWSEM_OWNER_ROB
#define REL FL_RWSEM_OWNER_REL
#define MARKS FL_RWSEM_OWNER_MARKS
#define STAMP FL_RWSEM_OWNER_STAMP
#define STAMP_SHIFT FL_RWSEM_OWNER_STAMP_SHIFT
#define STAMP_READ 1 /* in self_stamp: below STAMP */
#define MIXED ((int32_t)FL_RWSEM_NS_MIXED)

#ifndef PIDFD_THREAD
# define PIDFD_THREAD O_EXCL /* <linux/pidfd.h>, Linux 6.9 */
#endif

static int32_t self_ns = -1; /* -1: not read yet in this process */
/* The thread's stamp (STAMPS) | STAMP_READ, or 0 before it is read.  */
static __thread int32_t self_stamp __attribute__((tls_model("initial-exec")));
static pthread_once_t ns_once = PTHREAD_ONCE_INIT;

/* In the child of fork: a new process, and its thread a new thread.  */
static void ns_forget(void)
{
  self_ns = -1;
  self_stamp = 0;
}

static void ns_setup(void)
{
  pthread_atfork(NULL, NULL, ns_forget);
}

int32_t fl_rwsem_self_ns(void)
{
  int32_t ns = fl_load_relaxed(&self_ns);

  if (ns == -1) {
    struct stat st;

    pthread_once(&ns_once, ns_setup);
    ns = stat("/proc/self/ns/pid", &st) == 0 ? (int32_t)(uint32_t)st.st_ino : 0;
    if (ns == -1)
      ns = 1; /* -1 means "not read" */
    fl_store_relaxed(&self_ns, ns);
  }
  return ns;
}

int32_t fl_rwsem_stamp_of(int32_t tid)
{
#ifdef SYS_pidfd_open
  struct stat st;
  int fd = (int)syscall(SYS_pidfd_open, (pid_t)tid, PIDFD_THREAD);
  int ok;

  if (fd < 0)
    return 0;
  ok = fstat(fd, &st) == 0;
  close(fd);
  if (ok)
    return (int32_t)(1 + (uint64_t)st.st_ino % FL_RWSEM_OWNER_STAMPS)
           << STAMP_SHIFT;
#else
  (void)tid;
#endif
  return 0;
}

int32_t fl_rwsem_self_stamp(void)
{
  if (self_stamp == 0) {
    pthread_once(&ns_once, ns_setup);
    /* For good: the thread's id must not change.  */
    self_stamp = fl_rwsem_stamp_of((int32_t)syscall(SYS_gettid)) | STAMP_READ;
  }
  return self_stamp & STAMP;
}

static int mixed(const fl_rwsem_t *s)
{
  return (fl_load_relaxed(&s->mode) & MIXED) != 0;
}

/* Is the thread that owner word o names dead?  Only with the namespace
 * known to be the caller's (NAMESPACES).  Its TID may be gone, or taken
 * by another thread (STAMPS).  */
static int named_dead(const fl_rwsem_t *s, int32_t o)
{
  int32_t tid = o & TID, stamp = o & STAMP, now;

  if (tid == 0 || mixed(s)
      || fl_load_relaxed(&s->owner_ns) != fl_rwsem_self_ns())
    return 0;
  if (kill((pid_t)tid, 0) != 0)
    return errno == ESRCH && !mixed(s);
  if (stamp == 0)
    return 0;
  now = fl_rwsem_stamp_of(tid);
  return now != 0 && now != stamp && !mixed(s);
}

/* C4 after our CAS to ROB(me): keep the lock if W is up.  */
static int settle(fl_rwsem_t *s, int32_t id)
{
  if (fl_rwsem_lost(s)) {
    fl_store_relaxed(&s->owner, 0);
    return ENOTRECOVERABLE;
  }
  /* Nobody else moves W while we are ROB(me) (J2), nor our state (J3).  */
  if (!(fl_load_relaxed(&s->count) & FL_RWSEM_WRITER)) {
    fl_store_release(&s->owner, 0);
    return 0;
  }
  fl_store_relaxed(&s->owner, id);
  return FL_RWSEM_TAKEN_OVER;
}

int fl_rwsem_take_over(fl_rwsem_t *s, int32_t id)
{
  /* Acquire: the count word read after the CAS below is no older.  */
  int32_t o = fl_load_acquire(&s->owner);

  if (!(fl_load_relaxed(&s->mode) & FL_ROBUST) || o == 0 || !named_dead(s, o))
    return 0;
  if (!(o & MARKS)) {
    /* C3.  */
    if (fl_atomic_cmpxchg_acquire(&s->owner, o, id) != o)
      return 0;
    if (fl_rwsem_lost(s))
      return ENOTRECOVERABLE;
    fl_atomic_fetch_or_relaxed(&s->mode, (int32_t)FL_RWSEM_ROBUST_DEAD);
    return EOWNERDEAD;
  }
  /* C4.  */
  if (fl_atomic_cmpxchg_acquire(&s->owner, o, id | ROB) != o)
    return 0;
  return settle(s, id);
}

/* C1's first CAS, NONE -> PEND(id), and owner_ns made ns.  A claimant
 * whose namespace owner_ns is not sets NS_MIXED first (the CAS is a
 * release: a prober that reads our PEND or HELD sees NS_MIXED).
 * owner_ns can move between our look and our CAS only by another
 * namespace's claim and release, which set NS_MIXED: so we look again
 * after it.  */
static int pend(fl_rwsem_t *s, int32_t id, int32_t ns)
{
  if (fl_load_relaxed(&s->owner_ns) != ns)
    fl_atomic_fetch_or_release(&s->mode, MIXED);
  if (fl_atomic_cmpxchg_acq_rel(&s->owner, 0, id | PEND) != 0)
    return 0;
  if (fl_load_relaxed(&s->owner_ns) != ns)
    fl_store_relaxed(&s->owner_ns, ns);
  return 1;
}

int fl_rwsem_owner_claim(fl_rwsem_t *s, int32_t id, int32_t ns,
                         const struct fl_rwsem_wait *w)
{
  static const struct timespec nap = { 0, 1000000 };
  int spins = 0, naps = 0;

  for (;;) {
    int32_t o = fl_load_acquire(&s->owner);

    if (o == 0) {
      if (pend(s, id, ns))
        return 0;
      continue;
    }
    if (!(o & MARKS))
      return EAGAIN; /* HELD: the count word's wait */
    if (w->how == FL_RWSEM_TRY) {
      int rc = fl_rwsem_take_over(s, id); /* as a trylock facing WRITER */

      return rc != 0 ? rc : EBUSY;
    }
    /* PEND, REL or ROB of another: a few instructions, if it runs.  */
    if (spins < 100) {
      spins++;
      fl_cpu_relax();
      continue;
    }
    if (w->abstime != NULL) {
      struct timespec now = fl_deadline_after_ns(w->clock, 0);

      if (!fl_rwsem_after(w->abstime, &now))
        return ETIMEDOUT;
    }
    if (++naps % 50 == 0) {
      int rc = fl_rwsem_take_over(s, id);

      if (rc != 0)
        return rc;
    }
    nanosleep(&nap, NULL);
  }
}

/* The holder's own moves are stores (J3: nobody else moves a live
 * thread's state).  */
void fl_rwsem_owner_hold(fl_rwsem_t *s, int32_t id)
{
  /* Release: whoever reads HELD(id) (acquire) reads our owner_ns.  */
  fl_store_release(&s->owner, id);
}

void fl_rwsem_owner_unclaim(fl_rwsem_t *s)
{
  fl_store_release(&s->owner, 0);
}

void fl_rwsem_owner_leaving(fl_rwsem_t *s, int32_t id)
{
  /* The count word's release that follows keeps this store before it.  */
  fl_store_relaxed(&s->owner, id | REL);
}

void fl_rwsem_owner_left(fl_rwsem_t *s)
{
  /* Release: after the count word's release, before the wake-ups.  */
  fl_store_release(&s->owner, 0);
}

int fl_rwsem_consistent(fl_rwsem_t *s)
{
  int32_t m = fl_load_relaxed(&s->mode);

  if (!(m & (int32_t)FL_ROBUST) || !(m & (int32_t)FL_RWSEM_ROBUST_DEAD)
      || !fl_rwsem_write_held_by_me(s))
    return EINVAL;
  fl_atomic_fetch_and_relaxed(&s->mode, ~(int32_t)FL_RWSEM_ROBUST_DEAD);
  return 0;
}

int fl_rwsem_reader_died(fl_rwsem_t *s)
{
  return fl_rwsem_count_up_read(s);
}
